"""SSE-C (objects encrypted with a key the caller keeps) against MinIO over TLS, which checks
the key on every request: S3 and MinIO take SSE-C over HTTPS only, and versitygw does not
implement it. `make test` runs this directory under `SLIPSTREAM_MINIO_TLS=1
scripts/with-minio.sh`; the CLI, the Python `Client` and boto3 (the reference) each write and
read what the others wrote, with the right key, the wrong key and none."""

import base64
import hashlib
import json
import os
import urllib.request
import uuid

import pytest

from support import cli_env, run_cli

KEY = b"0123456789abcdef0123456789abcdef"
OTHER = b"fedcba9876543210fedcba9876543210"
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def minio() -> dict:
    endpoint = os.environ.get("SLIPSTREAM_TEST_TLS_ENDPOINT")
    assert endpoint, "no MinIO over TLS: run through `make test` (SLIPSTREAM_MINIO_TLS=1 scripts/with-minio.sh)"
    return {
        "endpoint": endpoint,
        "ca": os.environ["SLIPSTREAM_TEST_CA"],
        "region": os.environ["SLIPSTREAM_TEST_REGION"],
        "access_key": os.environ["AWS_ACCESS_KEY_ID"],
        "secret_key": os.environ["AWS_SECRET_ACCESS_KEY"],
    }


@pytest.fixture(scope="module")
def boto(minio):
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        region_name=minio["region"],
        endpoint_url=minio["endpoint"],
        aws_access_key_id=minio["access_key"],
        aws_secret_access_key=minio["secret_key"],
        verify=minio["ca"],
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
    )


@pytest.fixture()
def bucket(boto) -> str:
    name = f"ssec-{uuid.uuid4().hex[:16]}"
    boto.create_bucket(Bucket=name)
    return name


def cli(bin_path, minio, *args, check=True):
    env = {**cli_env(minio), "AWS_CA_BUNDLE": minio["ca"]}
    return run_cli(bin_path, *args, "--endpoint-url", minio["endpoint"], "--path-style", env=env, check=check)


def sse(key: bytes = KEY) -> list:
    return ["--sse-c", "--sse-c-key", key.decode()]


def boto_sse(key: bytes = KEY) -> dict:
    return {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": key}


@pytest.mark.parametrize("size", [0, 100, 11 * MIB + 3])
def test_cp_up_and_down_with_the_key_and_refused_without_it(slipstream_bin, minio, boto, bucket, tmp_path, size):
    data = os.urandom(size)
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    url = f"s3://{bucket}/enc.bin"
    cli(slipstream_bin, minio, "cp", str(src), url, "--part-size", "5MiB", *sse())
    # boto3 reads it with the key: what we sent is what botocore would send.
    assert boto.get_object(Bucket=bucket, Key="enc.bin", **boto_sse())["Body"].read() == data
    head = boto.head_object(Bucket=bucket, Key="enc.bin", **boto_sse())
    assert head["SSECustomerKeyMD5"] == base64.b64encode(hashlib.md5(KEY).digest()).decode()
    out = tmp_path / "out.bin"
    cli(slipstream_bin, minio, "cp", url, str(out), *sse())
    assert out.read_bytes() == data
    for refused in ([], sse(OTHER)):
        lost = tmp_path / "refused.bin"
        proc = cli(slipstream_bin, minio, "cp", url, str(lost), *refused, check=False)
        assert proc.returncode == 1, proc.stderr
        assert not lost.exists(), "a refused download left a file"
        assert list(tmp_path.glob("refused.bin*")) == [], "a refused download left a temporary file"
    listing = boto.list_objects_v2(Bucket=bucket)["Contents"]
    assert [o["Size"] for o in listing] == [size]


def test_objects_boto3_wrote_are_read_by_cp_cat_and_head(slipstream_bin, minio, boto, bucket, tmp_path):
    data = os.urandom(300_000)
    boto.put_object(Bucket=bucket, Key="by-boto3", Body=data, **boto_sse())
    assert cli(slipstream_bin, minio, "cat", f"s3://{bucket}/by-boto3", *sse()).stdout == data
    head = json.loads(cli(slipstream_bin, minio, "head", f"s3://{bucket}/by-boto3", *sse()).stdout)
    assert head["size"] == len(data)
    assert head["server_side_encryption_customer_algorithm"] == "AES256"
    assert head["server_side_encryption_customer_key_md5"] == base64.b64encode(hashlib.md5(KEY).digest()).decode()
    proc = cli(slipstream_bin, minio, "head", f"s3://{bucket}/by-boto3", check=False)
    assert proc.returncode == 1
    out = tmp_path / "by-boto3"
    cli(slipstream_bin, minio, "cp", f"s3://{bucket}/by-boto3", str(out), *sse())
    assert out.read_bytes() == data


@pytest.mark.parametrize("size", [100, 11 * MIB])
def test_a_server_side_copy_reencrypts_with_another_key(slipstream_bin, minio, boto, bucket, size):
    data = os.urandom(size)
    boto.put_object(Bucket=bucket, Key="src", Body=data, **boto_sse())
    cli(
        slipstream_bin, minio, "cp", f"s3://{bucket}/src", f"s3://{bucket}/dst",
        "--sse-c-copy-source", "--sse-c-copy-source-key", KEY.decode(), *sse(OTHER),
    )
    assert boto.get_object(Bucket=bucket, Key="dst", **boto_sse(OTHER))["Body"].read() == data
    # The copy is not readable with the source's key: it was encrypted anew.
    with pytest.raises(Exception):
        boto.get_object(Bucket=bucket, Key="dst", **boto_sse(KEY))
    # Decrypted on the way: a copy without --sse-c is plain.
    cli(slipstream_bin, minio, "mv", f"s3://{bucket}/dst", f"s3://{bucket}/plain",
        "--sse-c-copy-source", "--sse-c-copy-source-key", OTHER.decode())
    assert boto.get_object(Bucket=bucket, Key="plain")["Body"].read() == data
    keys = [o["Key"] for o in boto.list_objects_v2(Bucket=bucket)["Contents"]]
    assert keys == ["plain", "src"], "mv kept its source"


def test_a_copy_without_the_source_key_fails_and_keeps_the_source(slipstream_bin, minio, boto, bucket):
    boto.put_object(Bucket=bucket, Key="src", Body=b"secret", **boto_sse())
    proc = cli(slipstream_bin, minio, "mv", f"s3://{bucket}/src", f"s3://{bucket}/dst", check=False)
    assert proc.returncode == 1, proc.stderr
    keys = [o["Key"] for o in boto.list_objects_v2(Bucket=bucket)["Contents"]]
    assert keys == ["src"]


def test_sync_up_and_down_with_the_key(slipstream_bin, minio, boto, bucket, tmp_path):
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    files = {"top.txt": b"top", "a/one.bin": os.urandom(70_000), "a/b/big.bin": os.urandom(9 * MIB), "a/empty": b""}
    for name, data in files.items():
        (tree / name).write_bytes(data)
    cli(slipstream_bin, minio, "sync", str(tree), f"s3://{bucket}/t/", "--part-size", "5MiB", *sse())
    for name, data in files.items():
        assert boto.get_object(Bucket=bucket, Key=f"t/{name}", **boto_sse())["Body"].read() == data
    back = tmp_path / "back"
    cli(slipstream_bin, minio, "sync", f"s3://{bucket}/t/", str(back), *sse())
    for name, data in files.items():
        assert (back / name).read_bytes() == data
    again = cli(slipstream_bin, minio, "sync", f"s3://{bucket}/t/", str(back), *sse())
    assert b"download" not in again.stdout
    # Without the key the plain objects' listing still works, and the download is refused.
    fresh = tmp_path / "fresh"
    proc = cli(slipstream_bin, minio, "sync", f"s3://{bucket}/t/", str(fresh), check=False)
    assert proc.returncode == 1
    # A recursive copy between prefixes takes the source's key and the copy's.
    cli(slipstream_bin, minio, "cp", "--recursive", f"s3://{bucket}/t/", f"s3://{bucket}/u/",
        "--sse-c-copy-source", "--sse-c-copy-source-key", KEY.decode(), *sse(OTHER))
    for name, data in files.items():
        assert boto.get_object(Bucket=bucket, Key=f"u/{name}", **boto_sse(OTHER))["Body"].read() == data


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sse-c"], "--sse-c-key"),
        (["--sse-c-key", KEY.decode()], "--sse-c"),
        (["--sse", "AES256", "--sse-c", "--sse-c-key", KEY.decode()], "--sse"),
        (["--sse-c", "--sse-c-key", "hunter2"], "32 bytes"),
        (["--sse-c-copy-source", "--sse-c-copy-source-key", KEY.decode()], "--sse-c-copy-source"),
    ],
)
def test_flags_that_cannot_work_are_refused_before_any_request(slipstream_bin, minio, tmp_path, args, message):
    src = tmp_path / "f"
    src.write_bytes(b"x")
    proc = cli(slipstream_bin, minio, "cp", str(src), "s3://nowhere-bucket/k", *args, check=False)
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.decode()
    assert message in err, err
    assert "hunter2" not in err, "a rejected key was echoed"


def test_a_key_from_a_file(slipstream_bin, minio, boto, bucket, tmp_path):
    key_file = tmp_path / "key.bin"
    binary = bytes(range(200, 232))  # not text: only fileb:// can give it
    key_file.write_bytes(binary)
    src = tmp_path / "f"
    src.write_bytes(b"binary key")
    cli(slipstream_bin, minio, "cp", str(src), f"s3://{bucket}/k", "--sse-c", "AES256", "--sse-c-key", f"fileb://{key_file}")
    assert boto.get_object(Bucket=bucket, Key="k", **boto_sse(binary))["Body"].read() == b"binary key"


def python_client(minio):
    import slipstream

    return slipstream.Client(
        endpoint_url=minio["endpoint"], region=minio["region"], addressing="path", ca_bundle=minio["ca"],
        credentials=slipstream.Credentials(minio["access_key"], minio["secret_key"]), part_size=5 * MIB,
    )


def test_the_python_client_takes_boto3s_extra_args_and_a_key_on_every_read(minio, boto, bucket, tmp_path):
    import slipstream

    c = python_client(minio)
    data = os.urandom(12 * MIB + 1)
    extra = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": KEY}
    c.put_bytes(bucket, "big", data, extra_args=extra)
    assert boto.get_object(Bucket=bucket, Key="big", **boto_sse())["Body"].read() == data
    assert c.get_bytes(bucket, "big", sse_customer_key=KEY) == data
    assert c.get_bytes(bucket, "big", (5, 20), sse_customer_key=KEY.decode()) == data[5:20]
    head = c.head(bucket, "big", sse_customer_key=KEY)
    theirs = boto.head_object(Bucket=bucket, Key="big", **boto_sse())
    assert head["ContentLength"] == len(data)
    for name in ("SSECustomerAlgorithm", "SSECustomerKeyMD5"):
        assert head[name] == theirs[name], name
    with c.open(bucket, "big", sse_customer_key=KEY) as f:
        assert f.read() == data
    path = tmp_path / "down"
    c.download(bucket, "big", path, sse_customer_key=KEY)
    assert path.read_bytes() == data
    with pytest.raises(slipstream.S3Error):
        c.get_bytes(bucket, "big")
    with pytest.raises(slipstream.S3Error):
        c.get_bytes(bucket, "big", sse_customer_key=OTHER)
    # boto3's other spelling: the key in base64 with its MD5.
    b64 = {
        "SSECustomerAlgorithm": "AES256",
        "SSECustomerKey": base64.b64encode(OTHER).decode(),
        "SSECustomerKeyMD5": base64.b64encode(hashlib.md5(OTHER).digest()).decode(),
    }
    src = tmp_path / "up"
    src.write_bytes(b"up")
    c.upload(src, bucket, "small", extra_args=b64)
    assert boto.get_object(Bucket=bucket, Key="small", **boto_sse(OTHER))["Body"].read() == b"up"
    assert c.copy(bucket, "small", bucket, "copied", src_sse_customer_key=OTHER, sse_customer_key=KEY) == 2
    assert boto.get_object(Bucket=bucket, Key="copied", **boto_sse(KEY))["Body"].read() == b"up"


def test_streams_and_async_calls_carry_the_key(minio, boto, bucket):
    import asyncio
    import io

    c = python_client(minio)
    data = os.urandom(11 * MIB + 7)
    extra = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": KEY}
    with c.open(bucket, "written", "wb", extra_args=extra) as f:
        for i in range(0, len(data), MIB):
            f.write(data[i:i + MIB])
    c.upload_fileobj(io.BytesIO(data), bucket, "from-fileobj", extra_args=extra)
    for key in ("written", "from-fileobj"):
        assert boto.get_object(Bucket=bucket, Key=key, **boto_sse())["Body"].read() == data, key
        out = io.BytesIO()
        c.download_fileobj(bucket, key, out, sse_customer_key=KEY)
        assert out.getvalue() == data, key

    async def reads():
        whole = await c.get_bytes_async(bucket, "written", sse_customer_key=KEY)
        head = await c.head_async(bucket, "written", sse_customer_key=KEY)
        reader = await c.open_async(bucket, "written", sse_customer_key=KEY)
        first = await reader.read(100)
        reader.close()
        return whole, head, first

    whole, head, first = asyncio.run(reads())
    assert whole == data and head["ContentLength"] == len(data) and first == data[:100]
    with pytest.raises(ValueError, match="extra_args"):
        c.open(bucket, "k", "wb", sse_customer_key=KEY)


def test_the_python_client_refuses_a_key_s3_would_refuse(minio, bucket):
    c = python_client(minio)
    with pytest.raises(ValueError, match="32 bytes"):
        c.get_bytes(bucket, "k", sse_customer_key=b"short")
    with pytest.raises(ValueError, match="AES256"):
        c.put_bytes(bucket, "k", b"x", extra_args={"SSECustomerAlgorithm": "aws:kms", "SSECustomerKey": KEY})
    with pytest.raises(ValueError, match="together"):
        c.put_bytes(bucket, "k", b"x", extra_args={"SSECustomerKey": KEY})
    with pytest.raises(ValueError, match="MD5"):
        c.put_bytes(bucket, "k", b"x", extra_args={**boto_sse(), "SSECustomerKey": base64.b64encode(KEY).decode(), "SSECustomerKeyMD5": "AAAA"})


def test_a_presigned_get_with_sse_c_is_boto3s_and_opens_the_object(minio, boto, bucket):
    import slipstream

    data = b"presigned and encrypted"
    boto.put_object(Bucket=bucket, Key="p", Body=data, **boto_sse())
    params = {"Bucket": bucket, "Key": "p", **boto_sse()}
    ours = slipstream.generate_presigned_url(boto, "get_object", Params=params, ExpiresIn=600)
    theirs = boto.generate_presigned_url("get_object", Params=params, ExpiresIn=600)
    # Signed a second apart at most: compare without the date and signature, then use ours.
    strip = lambda u: "&".join(p for p in u.split("&") if not p.startswith(("X-Amz-Date", "X-Amz-Signature")))  # noqa: E731
    assert strip(ours) == strip(theirs)
    assert "x-amz-server-side-encryption-customer-key" in ours
    headers = {
        "x-amz-server-side-encryption-customer-algorithm": "AES256",
        "x-amz-server-side-encryption-customer-key": base64.b64encode(KEY).decode(),
        "x-amz-server-side-encryption-customer-key-MD5": base64.b64encode(hashlib.md5(KEY).digest()).decode(),
    }
    import ssl

    context = ssl.create_default_context(cafile=minio["ca"])
    with urllib.request.urlopen(urllib.request.Request(ours, headers=headers), context=context) as r:
        assert r.read() == data


def test_the_key_never_reaches_the_output(slipstream_bin, minio, bucket, tmp_path):
    src = tmp_path / "f"
    src.write_bytes(b"x")
    up = cli(slipstream_bin, minio, "cp", str(src), f"s3://{bucket}/k", "--json", *sse())
    refused = cli(slipstream_bin, minio, "cp", f"s3://{bucket}/k", str(tmp_path / "o"), *sse(OTHER), check=False)
    b64 = base64.b64encode(KEY)
    for proc in (up, refused):
        for stream in (proc.stdout, proc.stderr):
            assert KEY not in stream and b64 not in stream and OTHER not in stream


def test_the_object_that_fails_a_transfer_of_many_is_named(slipstream_bin, minio, boto, bucket, tmp_path):
    import slipstream

    for name in ("p/a", "p/b"):
        boto.put_object(Bucket=bucket, Key=name, Body=b"plain")
    boto.put_object(Bucket=bucket, Key="p/secret", Body=b"hidden", **boto_sse())
    # As the AWS CLI and s5cmd: the others move, the failure is named, and the exit code is 1.
    for args in (["cp", "--recursive"], ["sync"]):
        out = tmp_path / args[0]
        proc = cli(slipstream_bin, minio, *args, f"s3://{bucket}/p/", str(out), check=False)
        assert proc.returncode == 1, proc.stderr
        err = proc.stderr.decode()
        assert f"download failed: s3://{bucket}/p/secret" in err and "HTTP 400" in err, err
        assert "1 of 3 objects failed" in err, err
        assert sorted(p.name for p in out.iterdir()) == ["a", "b"]
    # Run again: the others are in sync, the failure is still named, and --json gives it a line.
    again = cli(slipstream_bin, minio, "sync", "--json", f"s3://{bucket}/p/", str(tmp_path / "sync"), check=False)
    assert again.returncode == 1
    lines = [json.loads(line) for line in again.stdout.decode().splitlines()]
    assert lines == [{"action": "download", "source": f"s3://{bucket}/p/secret -> {tmp_path / 'sync' / 'secret'}",
                      "error": lines[0]["error"]}], lines
    # A copy of the prefix: the encrypted one named with both ends, the others copied.
    proc = cli(slipstream_bin, minio, "cp", "--recursive", f"s3://{bucket}/p/", f"s3://{bucket}/q/", check=False)
    assert proc.returncode == 1
    assert f"copy failed: s3://{bucket}/p/secret -> s3://{bucket}/q/secret: " in proc.stderr.decode()
    assert sorted(o["Key"] for o in boto.list_objects_v2(Bucket=bucket, Prefix="q/")["Contents"]) == ["q/a", "q/b"]
    # mv deletes only the sources it copied.
    proc = cli(slipstream_bin, minio, "mv", "--recursive", f"s3://{bucket}/p/", f"s3://{bucket}/m/", check=False)
    assert proc.returncode == 1
    assert [o["Key"] for o in boto.list_objects_v2(Bucket=bucket, Prefix="p/")["Contents"]] == ["p/secret"]
    with pytest.raises(slipstream.S3Error) as raised:
        python_client(minio).sync(f"s3://{bucket}/p/", str(tmp_path / "py"))
    assert f"s3://{bucket}/p/secret" in str(raised.value) and raised.value.status == 400
