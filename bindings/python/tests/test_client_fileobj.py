"""slipstream.Client's download_fileobj and upload_fileobj (boto3's calls of the same names)
against the local versitygw: objects streamed into and out of Python file objects, in order,
with parts in parallel; errors of the file object raised as they were, and nothing half-made."""

import asyncio
import gzip
import hashlib
import io
import os
import time
import uuid

import pytest
from test_client import make_client

import slipstream

MiB = 1 << 20


@pytest.fixture()
def bucket(s3):
    name = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=name)
    return name


def keys(s3, bucket):
    return [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]


@pytest.mark.parametrize("size", [0, 1, 5 * MiB + 3, 21 * MiB + 7])
def test_round_trip_through_file_objects(server, s3, bucket, size):
    # 5 MiB parts: the larger sizes go as multipart uploads and come back as several ranged GETs.
    c = make_client(server, part_size=5 * MiB, concurrency=4)
    data = os.urandom(size)
    assert c.upload_fileobj(io.BytesIO(data), bucket, "k") == size
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == data
    out = io.BytesIO()
    assert c.download_fileobj(bucket, "k", out) == size
    assert out.getvalue() == data


def test_real_files_a_gzip_stream_and_extra_args(server, s3, bucket, tmp_path):
    c = make_client(server, part_size=5 * MiB)
    data = os.urandom(12 * MiB)
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    with open(src, "rb") as f:
        assert c.upload_fileobj(f, bucket, "file", extra_args={"ContentType": "application/x-test",
                                                                  "Metadata": {"from": "fileobj"}}) == len(data)
    head = s3.head_object(Bucket=bucket, Key="file")
    assert (head["ContentType"], head["Metadata"]) == ("application/x-test", {"from": "fileobj"})
    with open(tmp_path / "dst.bin", "wb") as f:
        c.download_fileobj(bucket, "file", f)
    assert (tmp_path / "dst.bin").read_bytes() == data
    # A stream that is neither a file nor in memory: compressed on the way out, then back.
    packed = io.BytesIO()
    with gzip.GzipFile(fileobj=packed, mode="wb") as z:
        c.download_fileobj(bucket, "file", z)
    packed.seek(0)
    with gzip.GzipFile(fileobj=packed, mode="rb") as z:
        assert c.upload_fileobj(z, bucket, "unpacked") == len(data)
    assert hashlib.sha256(s3.get_object(Bucket=bucket, Key="unpacked")["Body"].read()).digest() == \
        hashlib.sha256(data).digest()


class Partial(io.RawIOBase):
    """A raw writer that takes at most 1,000 bytes a call, as a raw file or socket may."""

    def __init__(self):
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, b):
        n = min(len(b), 1000)
        self.data += bytes(b[:n])
        return n


def test_a_writer_that_takes_part_of_each_write_gets_the_rest(server, s3, bucket):
    c = make_client(server)
    data = os.urandom(50_000)
    s3.put_object(Bucket=bucket, Key="k", Body=data)
    out = Partial()
    assert c.download_fileobj(bucket, "k", out) == len(data)
    assert bytes(out.data) == data


class Breaks:
    """read() gives `good` bytes, then raises, as a dropped network stream would."""

    def __init__(self, good):
        self.left = good

    def read(self, n=-1):
        if self.left <= 0:
            raise ConnectionResetError("the source went away")
        n = min(n if n >= 0 else self.left, self.left)
        self.left -= n
        return b"x" * n


@pytest.mark.parametrize("good", [100, 12 * MiB])
def test_a_read_that_raises_fails_the_upload_and_makes_no_object(server, s3, bucket, good):
    c = make_client(server, part_size=5 * MiB)
    with pytest.raises(ConnectionResetError, match="the source went away"):
        c.upload_fileobj(Breaks(good), bucket, "k")
    assert keys(s3, bucket) == []
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == [], "the multipart upload was aborted"


def test_wrong_file_objects_are_told_why(server, s3, bucket, tmp_path):
    c = make_client(server)
    s3.put_object(Bucket=bucket, Key="k", Body=b"data")
    (tmp_path / "t.txt").write_text("text")
    with open(tmp_path / "t.txt") as text, pytest.raises(TypeError, match=r"returned str.*binary mode"):
        c.upload_fileobj(text, bucket, "k2")
    with open(tmp_path / "out.txt", "w") as text, pytest.raises(TypeError):
        c.download_fileobj(bucket, "k", text)
    with pytest.raises(TypeError, match="write"):
        c.download_fileobj(bucket, "k", "not a file")
    with pytest.raises(TypeError, match="read"):
        c.upload_fileobj(b"bytes, not a file", bucket, "k2")
    assert keys(s3, bucket) == ["k"]
    with pytest.raises(slipstream.S3Error) as e:
        c.download_fileobj(bucket, "missing", io.BytesIO())
    assert e.value.code == "NoSuchKey"


def test_async_twins(server, s3, bucket):
    c = make_client(server, part_size=5 * MiB)
    data = os.urandom(11 * MiB)

    async def both():
        size = await c.upload_fileobj_async(io.BytesIO(data), bucket, "k")
        out = io.BytesIO()
        got = await c.download_fileobj_async(bucket, "k", out)
        return size, got, out.getvalue()

    assert asyncio.run(both()) == (len(data), len(data), data)


def test_callback_is_told_every_byte_as_boto3s_callback(server, s3, bucket, tmp_path):
    """`callback=` on download, upload and the file-object calls: called on the calling thread
    with the bytes since its last call, summing to the size; a raise stops the transfer."""
    import threading

    c = make_client(server, part_size=5 * MiB, concurrency=2)
    data = os.urandom(23 * MiB)
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    me = threading.get_ident()

    def counter():
        seen = []

        def callback(n):
            assert threading.get_ident() == me, "called on the calling thread"
            seen.append(n)
        return seen, callback

    seen, cb = counter()
    assert c.upload(src, bucket, "k", callback=cb) == len(data)
    assert sum(seen) == len(data) and all(n > 0 for n in seen), seen
    seen, cb = counter()
    c.download(bucket, "k", tmp_path / "dst.bin", callback=cb)
    assert sum(seen) == len(data) and (tmp_path / "dst.bin").read_bytes() == data
    seen, cb = counter()
    c.upload_fileobj(io.BytesIO(data), bucket, "k2", callback=cb)
    assert sum(seen) == len(data)
    seen, cb = counter()
    out = io.BytesIO()
    c.download_fileobj(bucket, "k2", out, callback=cb)
    assert sum(seen) == len(data) and out.getvalue() == data

    class Stop(Exception):
        pass

    def stop(n):
        raise Stop(n)

    # Slow file objects keep the transfers going past the callback's first call (every 0.1 s).
    class SlowWriter(io.BytesIO):
        def write(self, b):
            time.sleep(0.02)
            return super().write(b)

    class SlowReader(io.BytesIO):
        def read(self, n=-1):
            time.sleep(0.02)
            return super().read(min(n, MiB) if n >= 0 else MiB)

    with pytest.raises(Stop):
        c.download_fileobj(bucket, "k", SlowWriter(), callback=stop)
    with pytest.raises(Stop):
        c.upload_fileobj(SlowReader(data), bucket, "stopped", callback=stop)
    assert "stopped" not in keys(s3, bucket)
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == [], "the multipart upload was aborted"
    with pytest.raises(TypeError, match="callback must be callable"):
        c.download(bucket, "k", tmp_path / "x", callback=42)


def test_sync_tells_its_callback_the_bytes_of_every_object(server, s3, bucket, tmp_path):
    c = make_client(server)
    tree = tmp_path / "tree"
    tree.mkdir()
    sizes = [0, 1, 70_000, 6 * MiB]
    for i, n in enumerate(sizes):
        (tree / f"f{i}").write_bytes(os.urandom(n))
    seen = []
    done = c.sync(str(tree), f"s3://{bucket}/t/", callback=seen.append)
    assert done["copied"] == len(sizes) and sum(seen) == sum(sizes), seen
    seen.clear()
    c.sync(f"s3://{bucket}/t/", str(tmp_path / "back"), callback=seen.append)
    assert sum(seen) == sum(sizes)
