"""slipstream.Client against the local versitygw: round trips, errors, boto3 settings."""

import os
import threading
import uuid

import pytest

import slipstream


def make_client(server, **kw):
    return slipstream.Client(
        region=server["region"],
        credentials=slipstream.Credentials(server["access_key"], server["secret_key"]),
        endpoint_url=server["endpoint"],
        addressing="path",
        **kw,
    )


def new_bucket(s3) -> str:
    name = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=name)
    return name


def test_round_trips_through_files_and_memory(server, s3, tmp_path):
    c = make_client(server, part_size=5 << 20, concurrency=4)
    bucket = new_bucket(s3)
    for size in [0, 1, (5 << 20) - 1, (5 << 20) + 1, 12 << 20]:
        data = os.urandom(size)
        src = tmp_path / "src"
        src.write_bytes(data)
        key = f"k/ü {size}"
        assert c.upload(str(src), bucket, key) == size
        assert s3.head_object(Bucket=bucket, Key=key)["ContentLength"] == size
        dest = tmp_path / "dest"
        assert c.download(bucket, key, dest) == size
        assert dest.read_bytes() == data
        assert c.get_bytes(bucket, key) == data
        if size > 10:
            assert c.get_bytes(bucket, key, range=(3, 10)) == data[3:10]
    etag = c.put_bytes(bucket, "mem", b"hello")
    assert etag and s3.get_object(Bucket=bucket, Key="mem")["Body"].read() == b"hello"


def test_errors_are_typed_and_leave_no_file(server, s3, tmp_path):
    c = make_client(server)
    bucket = new_bucket(s3)
    with pytest.raises(slipstream.S3Error) as e:
        c.get_bytes(bucket, "missing")
    # A whole-object read starts with HEAD, whose 404 has no body (so no NoSuchKey); a range is a GET.
    assert e.value.code == "NotFound" and e.value.status == 404
    with pytest.raises(slipstream.S3Error) as e:
        c.get_bytes(bucket, "missing", range=(0, 10))
    assert e.value.code == "NoSuchKey" and e.value.status == 404
    with pytest.raises(slipstream.S3Error):
        c.download(bucket, "missing", tmp_path / "x")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(OSError):
        c.upload(str(tmp_path / "absent"), bucket, "k")
    with pytest.raises(ValueError, match="5 MiB"):
        make_client(server, part_size=1024)
    with pytest.raises(TypeError):
        c.put_bytes(bucket, "k", "not bytes")


def test_from_boto3_and_the_gil(server, s3):
    c = slipstream.Client.from_boto3(s3)
    bucket = new_bucket(s3)
    c.put_bytes(bucket, "big", os.urandom(20 << 20))
    ticks = 0
    done = threading.Event()

    def count():
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    t = threading.Thread(target=count)
    t.start()
    try:
        before = ticks
        assert len(c.get_bytes(bucket, "big")) == 20 << 20
        during = ticks - before
    finally:
        done.set()
        t.join()
    assert during > 1000, "another Python thread ran while the download did"
