"""slipstream.Client against the local versitygw: round trips, errors, boto3 settings."""

import asyncio
import base64
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
import zlib

import awscrt.checksums
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


def test_pipes_are_streamed_both_ways(server, s3, tmp_path):
    """`download` into a FIFO (or /dev/null) writes into it in order, never renaming a file over
    it; `upload` from one reads it to its end, where its size of 0 made an empty object."""
    c = make_client(server, part_size=5 << 20)
    bucket = new_bucket(s3)
    data = os.urandom(11 * 1024 * 1024 + 5)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(data), daemon=True)
    writer.start()
    assert c.upload(fifo, bucket, "k") == len(data)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert c.download(bucket, "k", fifo) == len(data)
    reader.join(timeout=60)
    assert got == [data] and not fifo.is_file() and os.listdir(tmp_path) == ["pipe"]


def test_get_bytes_fills_a_new_bytes_each_call(server, s3):
    """From 1 MiB the `bytes` is made lazily zeroed and filled in place (fresh_bytes.rs): each
    call's object is its own, whole, and hashes as one made by Python. Ranges too."""
    c = make_client(server, part_size=5 << 20, concurrency=4)
    bucket = new_bucket(s3)
    for size in [(1 << 20) - 1, 1 << 20, (1 << 20) + 1, (10 << 20) + 3]:
        data = os.urandom(size)
        c.put_bytes(bucket, "k", data)
        first, second = c.get_bytes(bucket, "k"), c.get_bytes(bucket, "k")
        assert first == data and second == data
        assert first is not second and type(first) is bytes
        assert hash(first) == hash(data) and {data: 1}[second] == 1
        # A range's body goes into its `bytes` the same way, sized by the answer: one that
        # runs past the end comes back cut short, as S3 sends it.
        for start, end in [(0, size), (1, size - 1), (size // 3, size + 5000), (7, 9)]:
            assert c.get_bytes(bucket, "k", range=(start, end)) == data[start:end]
        with pytest.raises(slipstream.S3Error) as refused:
            c.get_bytes(bucket, "k", range=(size + 1, size + 10))
        assert refused.value.code == "InvalidRange" and refused.value.status == 416
        with pytest.raises(ValueError, match="empty range"):
            c.get_bytes(bucket, "k", range=(5, 5))
        c.put_bytes(bucket, "k", b"\0" * size)
        assert c.get_bytes(bucket, "k") == b"\0" * size
        assert first == data, "a later call wrote into an earlier result"


def test_put_bytes_goes_multipart_from_the_part_size(server, s3):
    """Below the part size one PutObject; from it a parallel multipart upload of slices of the
    `bytes` (one stream cannot fill a long link, one PutObject stops at 5 GiB): the same
    object, its headers and whole-object checksum kept, the ETag returned being S3's."""
    c = make_client(server, part_size=5 << 20, concurrency=4)
    bucket = new_bucket(s3)
    for size, parts in [((5 << 20) - 1, 0), (5 << 20, 1), ((17 << 20) + 3, 4)]:
        data = os.urandom(size)
        etag = c.put_bytes(bucket, "k", data, checksum_algorithm="CRC64NVME",
                           extra_args={"ContentType": "application/x-test", "Metadata": {"m": "1"}})
        head = s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
        assert etag == head["ETag"]
        assert etag.strip('"').endswith(f"-{parts}") == (parts > 0), etag
        assert head["ContentType"] == "application/x-test" and head["Metadata"] == {"m": "1"}
        assert "ChecksumCRC64NVME" in head
        assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == data

    async def put_async():
        return await c.put_bytes_async(bucket, "a", data)

    data = os.urandom(11 << 20)
    assert asyncio.run(put_async()) == s3.head_object(Bucket=bucket, Key="a")["ETag"]
    assert c.get_bytes(bucket, "a") == data
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads") is None


def b64(value: int, width: int) -> str:
    return base64.b64encode(value.to_bytes(width, "big")).decode()


def test_checksum_algorithms_reach_s3_as_botocore_and_awscrt_compute_them(server, s3, tmp_path):
    c = make_client(server, part_size=5 << 20, concurrency=3, checksum_algorithm="CRC64NVME")
    bucket = new_bucket(s3)
    data = os.urandom((10 << 20) + 7)
    src = tmp_path / "src"
    src.write_bytes(data)
    # Multipart with CRC64NVME: S3 keeps a checksum of the whole object (awscrt's CRC64NVME, an
    # independent implementation, agrees), and downloads check it.
    c.upload(src, bucket, "multi")
    head = s3.head_object(Bucket=bucket, Key="multi", ChecksumMode="ENABLED")
    assert head["ChecksumType"] == "FULL_OBJECT"
    assert head["ChecksumCRC64NVME"] == b64(awscrt.checksums.crc64nvme(data), 8)
    assert c.download(bucket, "multi", tmp_path / "back") == len(data)
    assert (tmp_path / "back").read_bytes() == data
    # Per call: CRC32 (zlib's) for one object, CRC32C for another.
    c.put_bytes(bucket, "crc32", b"hello", checksum_algorithm="crc32")
    head = s3.head_object(Bucket=bucket, Key="crc32", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == b64(zlib.crc32(b"hello"), 4)
    c.upload(src, bucket, "composite", checksum_algorithm="CRC32C")
    head = s3.head_object(Bucket=bucket, Key="composite", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32C"].endswith("-3") and "ChecksumCRC64NVME" not in head
    with pytest.raises(ValueError, match="CRC64NVME"):
        c.put_bytes(bucket, "k", b"x", checksum_algorithm="SHA256")
    with pytest.raises(ValueError, match="unknown checksum algorithm"):
        make_client(server, checksum_algorithm="MD5")


def test_errors_are_typed_and_leave_no_file(server, s3, tmp_path):
    c = make_client(server)
    bucket = new_bucket(s3)
    with pytest.raises(slipstream.S3Error) as e:
        c.get_bytes(bucket, "missing")
    # A whole-object read sends its first GET with the HEAD, so S3's own code comes back.
    assert e.value.code == "NoSuchKey" and e.value.status == 404
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
        c.put_bytes(bucket, "k", {"not": "bytes"})


def connections_to(endpoint: str) -> list[str]:
    """`ss -ti`'s lines for the established TCP connections to `endpoint`'s port."""
    port = endpoint.rsplit(":", 1)[1].rstrip("/")
    out = subprocess.run(
        ["ss", "-tinH", "state", "established", f"( dport = :{port} )"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out.splitlines()


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("ss") is None, reason="Linux, with ss"
)
def test_tcp_congestion_reaches_the_connections_and_a_bad_name_fails_at_once(
    server, s3, tmp_path
):
    # One that is not this host's default, so the connections show it was applied: reno (built
    # into Linux, allowed without privileges) unless the default is reno, then cubic.
    proc = pathlib.Path("/proc/sys/net/ipv4")
    default = (proc / "tcp_congestion_control").read_text().strip()
    usable = "tcp_available_congestion_control" if os.geteuid() == 0 else "tcp_allowed_congestion_control"
    choices = (proc / usable).read_text().split()
    cc = next((name for name in ("reno", "cubic") if name != default and name in choices), None)
    if cc is None:
        pytest.skip(f"no congestion control besides the default ({default}) is usable here: {choices}")
    c = make_client(server, part_size=5 << 20, concurrency=3, tcp_congestion=cc)
    bucket = new_bucket(s3)
    data = os.urandom((12 << 20) + 1)
    src = tmp_path / "src"
    src.write_bytes(data)
    assert c.upload(src, bucket, "k") == len(data)
    assert c.get_bytes(bucket, "k") == data
    # The client's pooled connections stay open (idle) for 15 s: they run the chosen one.
    assert any(f" {cc} " in f" {line} " for line in connections_to(server["endpoint"]))
    with pytest.raises(ValueError, match='"no-such-cc" refused: this host does not have it'):
        make_client(server, tcp_congestion="no-such-cc")


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


def test_from_boto3_follows_botocore_refreshes(server, s3):
    """Credentials that botocore refreshes reach the engine before they expire: with two minutes
    left (inside both refresh windows) every request asks again, so a rotated key is used at once."""
    import datetime

    import botocore.session
    from botocore.config import Config
    from botocore.credentials import RefreshableCredentials

    secret = {"value": server["secret_key"]}
    calls = []

    def refresh():
        calls.append(1)
        expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=2)
        return {"access_key": server["access_key"], "secret_key": secret["value"], "token": None, "expiry_time": expiry.isoformat()}

    bucket = new_bucket(s3)
    b = botocore.session.get_session().create_client(
        "s3",
        region_name=server["region"],
        endpoint_url=server["endpoint"],
        aws_access_key_id="unused",
        aws_secret_access_key="unused",
        config=Config(s3={"addressing_style": "path"}),
    )
    # What an assumed role or SSO profile gives botocore: credentials it refreshes itself.
    b._request_signer._credentials = RefreshableCredentials.create_from_metadata(refresh(), refresh, "test")
    c = slipstream.Client.from_boto3(b)
    c.put_bytes(bucket, "k", b"v")
    assert c.get_bytes(bucket, "k") == b"v"
    assert len(calls) >= 3, "botocore was asked again for expiring credentials"
    # The next refresh hands out a wrong secret: the engine signs with it, and S3 says so.
    secret["value"] = "0" * 40
    with pytest.raises(slipstream.S3Error) as e:
        c.put_bytes(bucket, "k2", b"v")
    assert e.value.code == "SignatureDoesNotMatch"


def test_credentials_callable(server, s3):
    bucket = new_bucket(s3)
    asked = []

    def fixed():
        asked.append(1)
        return slipstream.Credentials(server["access_key"], server["secret_key"]), None

    c = slipstream.Client(region=server["region"], credentials=fixed, endpoint_url=server["endpoint"], addressing="path")
    c.put_bytes(bucket, "k", b"v")
    assert c.get_bytes(bucket, "k") == b"v"
    assert asked == [1], "credentials without an expiry are fetched once"

    def broken():
        raise RuntimeError("vault is sealed")

    bad = slipstream.Client(region=server["region"], credentials=broken, endpoint_url=server["endpoint"], addressing="path")
    with pytest.raises(OSError, match="vault is sealed"):
        bad.get_bytes(bucket, "k")
    wrong = slipstream.Client(region=server["region"], credentials=lambda: "nope", endpoint_url=server["endpoint"], addressing="path")
    with pytest.raises(OSError, match=r"must return \(Credentials"):
        wrong.get_bytes(bucket, "k")
    with pytest.raises(ValueError, match="Credentials or a callable"):
        slipstream.Client(region=server["region"], credentials="AKID:secret")


def test_reprs_hide_secrets(server):
    creds = slipstream.Credentials("AKIDREPR", "SECRETREPRVALUE", "TOKENREPRVALUE")
    shown = [
        creds,
        slipstream.Presigner("b", region="us-east-1", credentials=creds),
        slipstream.Presigner("b", region="us-east-1", credentials=creds, signature="v4a"),
        slipstream.Client(region="us-east-1", credentials=creds, endpoint_url=server["endpoint"]),
        slipstream.Client(region="us-east-1", credentials=lambda: (creds, None)),
    ]
    for obj in shown:
        text = repr(obj) + str(obj)
        assert "SECRETREPRVALUE" not in text and "TOKENREPRVALUE" not in text, text


def _in_thread(fn):
    """Runs `fn` in a thread; returns a function that joins it and returns or raises its result."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 (handed to the caller)
            box["error"] = e

    t = threading.Thread(target=run)
    t.start()

    def join(timeout):
        t.join(timeout)
        assert not t.is_alive(), "the call did not end"
        if "error" in box:
            raise box["error"]
        return box["value"]

    return join


def test_a_frozen_path_raises_timeout_error_and_leaves_nothing(server, s3, tmp_path):
    from relay import Relay
    from support import wait_for

    bucket = new_bucket(s3)
    data = os.urandom(20 << 20)
    make_client(server).put_bytes(bucket, "k", data)
    out = tmp_path / "out"
    out.mkdir()
    src = tmp_path / "src"
    src.write_bytes(data)
    calls = {
        "get_bytes": lambda c: c.get_bytes(bucket, "k"),
        "get_bytes of a range": lambda c: c.get_bytes(bucket, "k", range=(1, 20 << 20)),
        "download": lambda c: c.download(bucket, "k", out / "k"),
        "upload": lambda c: c.upload(src, bucket, "up"),
    }
    for name, call in calls.items():
        with Relay(server["endpoint"], rate=4 << 20, rate_up=4 << 20) as relay:
            c = slipstream.Client(
                region=server["region"],
                credentials=slipstream.Credentials(server["access_key"], server["secret_key"]),
                endpoint_url=relay.endpoint,
                addressing="path",
                part_size=5 << 20,
                concurrency=2,
                stall_timeout=2,
            )
            join = _in_thread(lambda: call(c))
            if name == "upload":
                wait_for(lambda: s3.list_multipart_uploads(Bucket=bucket).get("Uploads"), 20, "the upload")
            else:
                wait_for(lambda: relay.relayed_down > (1 << 20), 20, f"{name} to start")
            relay.freeze()
            with pytest.raises(TimeoutError, match="the server stopped"):
                join(40)
    assert list(out.iterdir()) == [], "a file was left behind"
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket, Prefix="up")


CHILD = """
import sys, slipstream
bucket, endpoint, dest, op = sys.argv[1:5]
c = slipstream.Client(region="{region}", credentials=slipstream.Credentials("{ak}", "{sk}"),
                      endpoint_url=endpoint, addressing="path", part_size=5 << 20, concurrency=2)
try:
    if op == "download":
        c.download(bucket, "big", dest)
    else:
        c.upload(dest, bucket, "up")
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
    sys.exit(7)
print("finished", flush=True)
"""


@pytest.mark.parametrize("op", ["download", "upload"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_while_python_waits_cleans_up(server, s3, tmp_path, sig, op):
    """Ctrl-C raises KeyboardInterrupt; SIGTERM and SIGHUP (no handler of the program's own) end
    the process by that signal, as without the client. Either way the transfer was cancelled
    first: no temporary file, no open multipart upload."""
    from relay import Relay
    from support import wait_for

    bucket = new_bucket(s3)
    data = os.urandom(24 << 20)
    out = tmp_path / "out"
    out.mkdir()
    src = tmp_path / "src"
    src.write_bytes(data)
    if op == "download":
        make_client(server).put_bytes(bucket, "big", data)
    child = CHILD.format(region=server["region"], ak=server["access_key"], sk=server["secret_key"])
    with Relay(server["endpoint"], rate=4 << 20, rate_up=4 << 20) as relay:
        dest = str(out / "big") if op == "download" else str(src)
        proc = subprocess.Popen([sys.executable, "-c", child, bucket, relay.endpoint, dest, op],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if op == "download":
            wait_for(lambda: relay.relayed_down > (1 << 20) and any(out.iterdir()), 30, "the download")
        else:
            wait_for(lambda: s3.list_multipart_uploads(Bucket=bucket).get("Uploads"), 30, "the upload")
            time.sleep(0.3)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=30)
    if sig == signal.SIGINT:
        assert proc.returncode == 7 and b"KeyboardInterrupt" in stdout, (proc.returncode, stdout, stderr)
    else:
        assert proc.returncode == -sig, (proc.returncode, stdout, stderr)
    assert b"finished" not in stdout
    assert list(out.iterdir()) == [], "a file was left behind"
    assert not s3.list_multipart_uploads(Bucket=bucket).get("Uploads"), "the multipart upload was left open"


def test_request_payer_is_signed_into_every_request(server, s3, tmp_path):
    """``request_payer=True``: versitygw checks signatures that include the header (upload,
    read, list), and a recording server sees it on the request and among the signed ones."""
    from support import recording_server
    c = make_client(server, request_payer=True)
    bucket = new_bucket(s3)
    c.put_bytes(bucket, "k", b"paid")
    assert c.get_bytes(bucket, "k") == b"paid"
    assert [o["Key"] for o in c.list(bucket)] == ["k"]
    with recording_server(b"data", {"ETag": '"x"'}) as (endpoint, requests):
        for payer in (True, False):
            make_client(dict(server, endpoint=endpoint), request_payer=payer).head("b", "k")
    seen = [r["headers"] for r in requests]
    assert [h.get("x-amz-request-payer") for h in seen] == ["requester", None]
    assert "x-amz-request-payer" in seen[0]["authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")


def test_put_bytes_takes_what_boto3_s_body_takes(server, s3):
    """bytes, bytearray, str (UTF-8), memoryview (strided too), array.array, NumPy: the object
    holds the same bytes boto3 reads back; a buffer changed after the call returned does not
    change the object; an int is refused rather than read as a length."""
    import array
    import asyncio
    c = make_client(server, part_size=5 << 20, concurrency=3)
    bucket = new_bucket(s3)
    raw = os.urandom((5 << 20) + 3)  # multipart at 5 MiB parts
    doubles = array.array("d", [1.5, -2.25, 3.0])
    cases = {
        "bytes": (raw, raw),
        "bytearray": (bytearray(raw), raw),
        "str": ("zoë ✓", "zoë ✓".encode()),
        "memoryview": (memoryview(raw)[7:], raw[7:]),
        "strided": (memoryview(raw)[::2], raw[::2]),
        "array": (doubles, doubles.tobytes()),
    }
    try:
        import numpy
        grid = numpy.arange(12, dtype=numpy.int32).reshape(3, 4)
        cases["numpy"] = (grid, grid.tobytes())
        cases["numpy-column"] = (grid[:, 1], grid[:, 1].tobytes())  # not contiguous
    except ImportError:
        pass
    for name, (data, want) in cases.items():
        c.put_bytes(bucket, name, data)
        assert s3.get_object(Bucket=bucket, Key=name)["Body"].read() == want, name
    changing = bytearray(b"before")

    async def put_then_change():
        pending = c.put_bytes_async(bucket, "async", changing)
        changing[:] = b"after!"  # the call took its bytes already
        await pending

    asyncio.run(put_then_change())
    assert s3.get_object(Bucket=bucket, Key="async")["Body"].read() == b"before"
    for bad in (5, [1, 2], None):
        with pytest.raises(TypeError, match="buffer protocol, not"):
            c.put_bytes(bucket, "bad", bad)
    with pytest.raises(UnicodeEncodeError):
        c.put_bytes(bucket, "bad", "\udcff")
    assert "bad" not in [o["Key"] for o in c.list(bucket)]


def test_unsigned_clients_read_public_buckets_without_credentials(server, s3, monkeypatch, tmp_path):
    """signature="unsigned" (and from_boto3 of a boto3 client with UNSIGNED): no credentials
    looked for (none exist here), a public bucket read, a private one refused with the note."""
    import json
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config
    public, private = new_bucket(s3), new_bucket(s3)
    for b in (public, private):
        s3.put_object(Bucket=b, Key="d/a.txt", Body=b"open data")
    s3.put_bucket_policy(Bucket=public, Policy=json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": "*", "Action": ["s3:GetObject", "s3:ListBucket"],
        "Resource": [f"arn:aws:s3:::{public}", f"arn:aws:s3:::{public}/*"]}]}))
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    boto_unsigned = boto3.client("s3", endpoint_url=server["endpoint"], region_name=server["region"],
                                 config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}))
    clients = [slipstream.Client(region=server["region"], endpoint_url=server["endpoint"], addressing="path",
                                 signature="unsigned"),
               slipstream.Client.from_boto3(boto_unsigned)]
    for c in clients:
        assert c.get_bytes(public, "d/a.txt") == b"open data"
        assert [o["Key"] for o in c.list(public)] == ["d/a.txt"]
        with pytest.raises(slipstream.S3Error, match="went unsigned") as e:
            c.get_bytes(private, "d/a.txt")
        assert e.value.code == "AccessDenied"
    with pytest.raises(ValueError, match="unsigned"):
        slipstream.Client(signature="unsigned", credentials=slipstream.Credentials("AK", "SK"))
    with pytest.raises(ValueError, match="'v4', 'v4a' or 'unsigned'"):
        slipstream.Client(signature="v2")


def test_max_bandwidth_caps_what_the_client_moves(server, s3):
    """`max_bandwidth` (boto3's TransferConfig name, bytes per second): 4 MiB each way at
    2 MiB/s take at least the 2 s the cap allows (milliseconds without it) and arrive whole."""
    bucket = new_bucket(s3)
    c = make_client(server, max_bandwidth=2 << 20)
    data = os.urandom(4 << 20)
    started = time.monotonic()
    c.put_bytes(bucket, "k", data)
    assert time.monotonic() - started >= 1.6
    started = time.monotonic()
    assert c.get_bytes(bucket, "k") == data
    assert time.monotonic() - started >= 1.6
    for bad in [0, 1000]:
        with pytest.raises(ValueError, match="max_bandwidth"):
            make_client(server, max_bandwidth=bad)


def test_verify_false_reaches_a_server_no_bundle_trusts(server):
    """boto3's verify=False: the throwaway CA's TLS server is refused without ca_bundle, reached
    with verify=False, which warns as urllib3 warns."""
    kw = dict(region=server["region"], credentials=slipstream.Credentials(server["access_key"], server["secret_key"]),
              endpoint_url=os.environ["SLIPSTREAM_TEST_TLS_ENDPOINT"], addressing="path")
    import boto3

    bucket = f"py-{uuid.uuid4().hex[:16]}"
    boto3.client("s3", region_name=server["region"], endpoint_url=kw["endpoint_url"], aws_access_key_id=server["access_key"],
                 aws_secret_access_key=server["secret_key"], verify=os.environ["SLIPSTREAM_TEST_CA"]).create_bucket(Bucket=bucket)
    with pytest.raises(OSError, match="certificate"):
        slipstream.Client(**kw).list_buckets()
    with pytest.warns(UserWarning, match="not checked"):
        c = slipstream.Client(**kw, verify=False)
    assert bucket in [b["Name"] for b in c.list_buckets()]
    c.put_bytes(bucket, "k", b"hello")
    assert c.get_bytes(bucket, "k") == b"hello"


def test_from_boto3_carries_the_clients_certificate_checks(server):
    """A boto3 client's `verify=False` and `verify=CA bundle` reach the TLS server through
    `Client.from_boto3` as they reach it through boto3; arguments given to from_boto3 win."""
    import boto3

    ca, endpoint = os.environ["SLIPSTREAM_TEST_CA"], os.environ["SLIPSTREAM_TEST_TLS_ENDPOINT"]

    def boto3_client(verify):
        return boto3.client("s3", region_name=server["region"], endpoint_url=endpoint, aws_access_key_id=server["access_key"],
                            aws_secret_access_key=server["secret_key"], verify=verify,
                            config=__import__("botocore.config").config.Config(s3={"addressing_style": "path"}))

    bucket = f"py-{uuid.uuid4().hex[:16]}"
    boto3_client(ca).create_bucket(Bucket=bucket)
    slipstream.Client.from_boto3(boto3_client(ca)).put_bytes(bucket, "k", b"checked")
    with pytest.warns(UserWarning, match="not checked"):
        unchecked = slipstream.Client.from_boto3(boto3_client(False))
    assert unchecked.get_bytes(bucket, "k") == b"checked"
    # The caller's own argument beats the boto3 client's: no bundle, and no check skipped.
    strict = slipstream.Client.from_boto3(boto3_client(ca), ca_bundle=None)
    with pytest.raises(OSError, match="certificate"):
        strict.get_bytes(bucket, "k")
