"""`Client.open`: an object read as a file object (boto3's `get_object()["Body"]`), its parts
fetched in parallel ahead of the reads, against versitygw (through a relay where the network
must misbehave)."""

import asyncio
import csv
import gzip
import io
import os
import time

import pytest
from relay import Relay
from support import wait_for
from test_client import make_client, new_bucket

from slipstream import ObjectReader, ObjectWriter, S3Error

PART = 5 << 20


@pytest.fixture(scope="module")
def bucket(s3):
    return new_bucket(s3)


def lines(n):
    return b"".join(b"%d,row %d,%s\n" % (i, i, b"x" * (i % 97)) for i in range(n))


def test_lines_text_and_gzip_read_as_from_a_file(server, bucket):
    c = make_client(server, part_size=PART, concurrency=3)
    data = lines(400_000)  # 19 MiB: four parts, lines across every boundary
    c.put_bytes(bucket, "rows.csv", data)
    with c.open(bucket, "rows.csv") as f:
        assert isinstance(f, ObjectReader) and isinstance(f, io.BufferedIOBase)
        assert f.readable() and f.seekable()
        assert list(f) == data.splitlines(keepends=True)
        assert f.tell() == len(data) and f.read() == b""
    assert f.closed
    rows = list(csv.reader(io.TextIOWrapper(c.open(bucket, "rows.csv"), encoding="utf-8", newline="")))
    assert len(rows) == 400_000 and rows[-1][:2] == ["399999", "row 399999"]
    c.put_bytes(bucket, "rows.csv.gz", gzip.compress(data, compresslevel=1))
    with gzip.GzipFile(fileobj=c.open(bucket, "rows.csv.gz")) as g:
        assert g.read() == data


def test_reads_of_every_size_across_parts(server, bucket):
    c = make_client(server, part_size=PART, concurrency=2)
    data = os.urandom(3 * PART + 12345)
    c.put_bytes(bucket, "blob", data)
    f = c.open(bucket, "blob")
    got, sizes = [], [1, 7, PART - 3, PART + 10, 0, 4096]
    for n in sizes:
        got.append(f.read(n))
    assert [len(g) for g in got] == sizes
    one = f.read1(10 * PART)
    assert 0 < len(one) <= PART, "read1 takes from one part at most"
    buf = bytearray(1000)
    assert f.readinto(buf) == 1000
    assert f.tell() == sum(sizes) + len(one) + 1000
    rest = f.read()
    assert b"".join(got) + one + bytes(buf) + rest == data
    assert f.read(5) == b"" and f.read1() == b"" and f.readline() == b""
    # A line longer than a part comes back whole, from as many parts as it spans; a limit cuts it.
    long_line = b"a" * (2 * PART + 5) + b"\n"
    c.put_bytes(bucket, "long", long_line + b"rest")
    f = c.open(bucket, "long")
    assert f.readline() == long_line and f.readline() == b"rest" and f.readline() == b""
    f = c.open(bucket, "long")
    assert f.readline(PART + 1) == b"a" * (PART + 1) and f.tell() == PART + 1


def test_missing_empty_closed_and_one_expression(server, bucket):
    c = make_client(server)
    with pytest.raises(S3Error) as e:
        c.open(bucket, "no such key")
    assert e.value.code == "NoSuchKey"
    c.put_bytes(bucket, "empty", b"")
    assert c.open(bucket, "empty").read() == b""
    c.put_bytes(bucket, "small", b"hello\nworld")
    assert c.open(bucket, "small").read() == b"hello\nworld"  # the reader goes before its read runs
    f = c.open(bucket, "small")
    f.close()
    with pytest.raises(ValueError, match="closed"):
        f.read()
    with pytest.raises(ValueError, match="closed"):
        next(iter(f))


def test_a_reader_that_stops_stops_the_download(server, bucket):
    """Nothing is fetched for nobody: with the reader paused, what crossed the network is the
    window ahead of it, not the object."""
    data = os.urandom(64 << 20)
    make_client(server).put_bytes(bucket, "paused", data)
    with Relay(server["endpoint"]) as relay:
        c = make_client(dict(server, endpoint=relay.endpoint), part_size=PART, concurrency=2)
        f = c.open(bucket, "paused")
        head = f.read(10)
        time.sleep(1.0)
        ahead = relay.relayed_down
        # The window (2 parts), the chunks handed over (2), the one being handed and the first.
        assert ahead < 7 * PART, ahead
        assert head + f.read() == data
        f.close()


def test_resets_are_retried_and_a_frozen_server_times_out(server, bucket):
    data = os.urandom(24 << 20)
    make_client(server).put_bytes(bucket, "flaky", data)
    with Relay(server["endpoint"], rate=8 << 20) as relay:
        c = make_client(dict(server, endpoint=relay.endpoint), part_size=PART, concurrency=2, stall_timeout=1.5)
        f = c.open(bucket, "flaky")
        first = f.read(PART)
        relay.reset()  # every connection: the parts in flight are fetched again
        assert first + f.read() == data
        # A pause of the reader longer than stall_timeout is not a stall...
        f = c.open(bucket, "flaky")
        first = f.read(1)
        time.sleep(2.0)
        second = f.read(PART)
        # ...a server that sends nothing while the reader waits is.
        relay.freeze()
        with pytest.raises(TimeoutError):
            f.read()
        with pytest.raises(OSError, match="nothing moved|no byte|stall"):
            f.read(1)  # and the reader says so again, rather than ending as if complete
        relay.thaw()
    assert len(first + second) == PART + 1


def test_the_asyncio_reader(server, bucket):
    c = make_client(server, part_size=PART, concurrency=2)
    data = lines(300_000)  # 14 MiB: three parts
    c.put_bytes(bucket, "async.csv", data)

    async def read_all():
        async with await c.open_async(bucket, "async.csv") as r:
            got = [line async for line in r]
            assert r.tell() == len(data) and await r.read() == b""
        with pytest.raises(ValueError, match="closed"):
            await r.read(1)
        r = await c.open_async(bucket, "async.csv")
        head = await r.read(10) + await r.read1(5) + await r.readline()
        rest = await r.read()
        return got, head + rest

    got, whole = asyncio.run(read_all())
    assert got == data.splitlines(keepends=True) and whole == data

    async def missing():
        with pytest.raises(S3Error) as e:
            await c.open_async(bucket, "no such key")
        return e.value.code

    assert asyncio.run(missing()) == "NoSuchKey"
    # Made before any loop runs: starts when awaited, in the loop that awaits it.
    r = asyncio.run(c.open_async(bucket, "async.csv"))
    assert r.tell() == 0
    r.close()


def test_a_cancelled_read_loses_nothing(server, bucket):
    """A read waiting for parts, cancelled (a timeout): the next read starts where the
    cancelled one would have, with every byte."""
    data = os.urandom(16 << 20)
    make_client(server).put_bytes(bucket, "slow", data)
    with Relay(server["endpoint"], rate=4 << 20) as relay:
        c = make_client(dict(server, endpoint=relay.endpoint), part_size=PART, concurrency=2)

        async def go():
            r = await c.open_async(bucket, "slow")
            first = await r.read(3)
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(r.read(), timeout=0.5)
            rest = await r.read()
            return first + rest

        assert asyncio.run(go()) == data


def test_a_range_is_read_as_a_stream_of_its_own(server, bucket):
    c = make_client(server, part_size=PART, concurrency=2)
    data = os.urandom(3 * PART + 999)
    c.put_bytes(bucket, "ranged", data)
    a, b = PART - 10, 2 * PART + 7  # parts of its own, cut across the object's
    with c.open(bucket, "ranged", range=(a, b)) as f:
        assert f.read(5) == data[a:a + 5] and f.read() == data[a + 5:b] and f.tell() == b - a
    # Past the end it is cut short, as S3 cuts it; starting past the end is S3's InvalidRange.
    assert c.open(bucket, "ranged", range=(len(data) - 5, len(data) + 100)).read() == data[-5:]
    with pytest.raises(S3Error) as e:
        c.open(bucket, "ranged", range=(len(data) + 1, len(data) + 10))
    assert e.value.code == "InvalidRange"
    with pytest.raises(ValueError):
        c.open(bucket, "ranged", range=(10, 10))

    async def ranged():
        r = await c.open_async(bucket, "ranged", range=(a, b))
        return await r.read()

    assert asyncio.run(ranged()) == data[a:b]


def test_a_writer_uploads_as_it_is_written(server, s3, bucket):
    c = make_client(server, part_size=PART, concurrency=2)
    with c.open(bucket, "small", "wb") as f:
        assert isinstance(f, ObjectWriter) and f.writable() and not f.readable()
        f.write(b"hello ")
        f.write(bytearray(b"wide "))
        f.write(memoryview(b"world"))
        assert f.tell() == 16
    assert c.get_bytes(bucket, "small") == b"hello wide world"
    data = os.urandom(3 * PART + 77)  # a multipart upload, parts sent while the rest is written
    with c.open(bucket, "big", "wb", checksum_algorithm="CRC64NVME") as f:
        for i in range(0, len(data), 100_000):
            f.write(data[i:i + 100_000])
    assert c.get_bytes(bucket, "big") == data
    assert c.head(bucket, "big").get("ChecksumCRC64NVME")
    with c.open(bucket, "one-write", "wb") as f:  # one large write goes a chunk at a time
        assert f.write(data) == len(data)
    assert c.get_bytes(bucket, "one-write") == data
    # Layers of file objects on top, as a program writes a compressed CSV.
    with c.open(bucket, "rows.csv.gz", "wb", extra_args={"ContentType": "application/gzip"}) as f:
        with gzip.GzipFile(fileobj=f, mode="wb") as g, io.TextIOWrapper(g, encoding="utf-8", newline="") as t:
            csv.writer(t).writerows([i, "row", i * 2] for i in range(50_000))
    rows = list(csv.reader(io.TextIOWrapper(gzip.GzipFile(fileobj=c.open(bucket, "rows.csv.gz")), encoding="utf-8")))
    assert len(rows) == 50_000 and rows[-1] == ["49999", "row", "99998"]
    assert s3.head_object(Bucket=bucket, Key="rows.csv.gz")["ContentType"] == "application/gzip"


def test_only_close_completes_an_object(server, s3, bucket):
    c = make_client(server, part_size=PART, concurrency=2)
    data = os.urandom(2 * PART + 1)
    with pytest.raises(RuntimeError, match="the program failed"):
        with c.open(bucket, "raised", "wb") as f:
            f.write(data)
            raise RuntimeError("the program failed")
    f = c.open(bucket, "dropped", "wb")
    f.write(data)
    del f
    f = c.open(bucket, "aborted", "wb")
    f.write(b"x")
    f.abort()
    with pytest.raises(ValueError, match="closed"):
        f.write(b"y")

    def nothing_left():
        listed = s3.list_objects_v2(Bucket=bucket, Prefix="")
        names = {o["Key"] for o in listed.get("Contents", [])}
        return not names & {"raised", "dropped", "aborted"} and not s3.list_multipart_uploads(Bucket=bucket).get("Uploads")

    deadline = time.monotonic() + 10
    while not nothing_left() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert nothing_left(), "an abandoned writer made an object or left its upload open"
    with pytest.raises(ValueError, match="mode"):
        c.open(bucket, "k", "ab")
    with pytest.raises(ValueError, match="version_id and range"):
        c.open(bucket, "k", "wb", range=(0, 1))


def test_a_writer_through_resets(server, bucket):
    data = os.urandom(3 * PART)
    with Relay(server["endpoint"], rate_up=8 << 20) as relay:
        c = make_client(dict(server, endpoint=relay.endpoint), part_size=PART, concurrency=2)
        with c.open(bucket, "through-resets", "wb") as f:
            f.write(data[:PART + 5])
            time.sleep(0.3)
            relay.reset()  # parts in flight are sent again
            f.write(data[PART + 5:])
    assert make_client(server).get_bytes(bucket, "through-resets") == data


def test_a_frozen_server_fails_the_writer_and_makes_nothing(server, s3, bucket):
    """Frozen with a part still to send: the write or the close that waits on it times out,
    the upload is aborted once the server answers again, and no object appears. (Frozen after
    the completion was sent, the server may still complete the whole object: its answer is what
    was lost, as for any client.)"""
    data = os.urandom(2 * PART)
    with Relay(server["endpoint"]) as relay:
        c = make_client(dict(server, endpoint=relay.endpoint), part_size=PART, concurrency=2, stall_timeout=1.5)
        f = c.open(bucket, "frozen", "wb")
        f.write(data[:PART + 1])
        # Frozen once the multipart upload exists: frozen while it is being made, its ID would
        # never reach the client (a race no client can close), and nothing could abort it.
        wait_for(lambda: s3.list_multipart_uploads(Bucket=bucket).get("Uploads"), 20, "the upload")
        relay.freeze()
        with pytest.raises(TimeoutError):
            f.write(data[PART + 1:])
            f.close()
        relay.thaw()
        deadline = time.monotonic() + 15
        while s3.list_multipart_uploads(Bucket=bucket).get("Uploads") and time.monotonic() < deadline:
            time.sleep(0.1)
    assert not s3.list_multipart_uploads(Bucket=bucket).get("Uploads"), "the upload was left open"
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket, Prefix="frozen")
