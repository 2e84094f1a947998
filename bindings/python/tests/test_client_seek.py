"""`Client.open`'s readers seek as files do: against a copy in memory for every kind of
move, under the libraries that need a seekable file (zipfile, tarfile, pyarrow.parquet), with
the bytes they fetch counted through a relay, and against an object replaced since the open."""

import asyncio
import io
import os
import random
import tarfile
import time
import zipfile

import pytest
from relay import Relay
from test_client import make_client, new_bucket

PART = 5 << 20
WINDOW = 1 << 20  # what a read after a far seek fetches at least (object_stream.rs)


@pytest.fixture(scope="module")
def bucket(s3):
    return new_bucket(s3)


def test_every_kind_of_seek_reads_what_a_file_would(server, bucket):
    c = make_client(server, part_size=PART, concurrency=2)
    data = os.urandom(3 * PART + 4321)
    c.put_bytes(bucket, "seek", data)
    want, f = io.BytesIO(data), c.open(bucket, "seek")
    assert f.seekable() and f.size == len(data)
    rng = random.Random(7)
    for step in range(300):
        whence = rng.choice([io.SEEK_SET, io.SEEK_CUR, io.SEEK_END])
        # Near moves (within what is held, behind or a part ahead) and far ones.
        span = rng.choice([16, 4096, WINDOW, PART + 7, len(data)])
        offset = {
            io.SEEK_SET: rng.randrange(0, len(data) + 10),
            io.SEEK_CUR: rng.randrange(-span, span),
            io.SEEK_END: -rng.randrange(0, len(data)),
        }[whence]
        if want.tell() + offset < 0 and whence == io.SEEK_CUR:
            offset = -want.tell()
        assert f.seek(offset, whence) == want.seek(offset, whence), step
        n = rng.choice([0, 1, 100, 65536, WINDOW + 3, PART + 1])
        read = rng.choice([f.read, f.read1, lambda n: f.readline(n)])
        got = read(n)
        assert got == data[want.tell():want.tell() + len(got)], step
        assert len(got) == max(0, min(n, len(data) - want.tell())) or read is not f.read, step
        want.seek(len(got), io.SEEK_CUR)
        assert f.tell() == want.tell(), step
    f.seek(-(PART + 99), io.SEEK_END)
    assert f.read() == data[-(PART + 99):], "in order to the end after a seek"
    assert f.seek(10, io.SEEK_END) == len(data) + 10 and f.read() == b"" and f.read1(5) == b""
    with pytest.raises(ValueError, match="negative seek position"):
        f.seek(-1)
    with pytest.raises(ValueError, match="whence"):
        f.seek(0, 3)
    assert f.seek(5) == 5 and f.readline(3) == data[5:8]
    f.close()
    with pytest.raises(ValueError, match="closed"):
        f.seek(0)


def test_zip_tar_and_parquet_read_from_the_reader(server, bucket):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    c = make_client(server, part_size=PART, concurrency=2)
    members = {f"dir/m{i}.bin": os.urandom(i * 700_000 + 5) for i in range(12)}
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_STORED) as z:
        for name, body in members.items():
            z.writestr(name, body)
    c.put_bytes(bucket, "a.zip", zipped.getvalue())
    with zipfile.ZipFile(c.open(bucket, "a.zip")) as z:
        assert z.testzip() is None
        for name in reversed(z.namelist()):  # out of order: each member a seek back
            assert z.read(name) == members[name], name

    tarred = io.BytesIO()
    with tarfile.open(fileobj=tarred, mode="w") as t:
        for name, body in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            t.addfile(info, io.BytesIO(body))
    c.put_bytes(bucket, "a.tar", tarred.getvalue())
    with tarfile.open(fileobj=c.open(bucket, "a.tar")) as t:  # random access, not "r|"
        names = t.getnames()
        assert t.extractfile(names[3]).read() == members[names[3]]
        assert t.extractfile(names[0]).read() == members[names[0]]

    table = pa.table({"n": list(range(200_000)), "s": [f"row {i}" for i in range(200_000)]})
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=50_000)
    c.put_bytes(bucket, "t.parquet", sink.getvalue())
    with c.open(bucket, "t.parquet") as f:
        assert pq.read_table(f).equals(table)
    with c.open(bucket, "t.parquet") as f:
        assert pq.ParquetFile(f).read_row_group(2, columns=["s"]).column("s")[0].as_py() == "row 100000"


def test_what_seeks_fetch(server, bucket):
    """A seek within what is held fetches nothing; a far one fetches the window from there,
    not the object; a read that runs past the window goes on to the end."""
    data = os.urandom(4 * PART)
    make_client(server).put_bytes(bucket, "counted", data)
    with Relay(server["endpoint"]) as relay:
        c = make_client(dict(server, endpoint=relay.endpoint), part_size=PART, concurrency=2)

        def fetched(do):
            """What crossed the network for `do`, once the downloads it started are over."""
            before = relay.relayed_down
            do()
            last = None
            while last != relay.relayed_down:
                last = relay.relayed_down
                time.sleep(0.3)
            return last - before

        f = c.open(bucket, "counted")
        assert f.read() == data
        assert fetched(lambda: f.seek(-WINDOW, io.SEEK_END)) == 0
        assert fetched(lambda: f.read(100)) == 0, "the last MiB read is kept"
        grown = fetched(lambda: (f.seek(PART), f.read(16)))
        assert WINDOW <= grown < WINDOW + 8192, grown
        assert fetched(lambda: (f.seek(PART + 8), f.read(8), f.seek(PART), f.read(1000))) == 0
        grown = fetched(lambda: (f.seek(0), f.read(3 * WINDOW)))
        assert 3 * WINDOW <= grown < 3 * WINDOW + 8192, "a read's size, not the window"
        # Read on past the window: the rest comes as the first download did.
        assert f.read() == data[3 * WINDOW:]
        f.close()


def test_a_first_move_far_away_fetches_no_window(server, bucket):
    """Parts after the first are asked for only once the reader reads from the start: a reader
    whose first move is a seek to the end (Parquet's footer, a ZIP's directory) costs the
    first request and its own, not a window of parts."""
    data = os.urandom(16 * PART)
    make_client(server).put_bytes(bucket, "far", data)
    with Relay(server["endpoint"]) as relay:
        c = make_client(dict(server, endpoint=relay.endpoint), part_size=PART, concurrency=4)
        for _ in range(3):
            f = c.open(bucket, "far")
            f.seek(-100, io.SEEK_END)
            assert f.read() == data[-100:]
            f.close()
        # Each open's first GET and HEAD, and the read's GET on the HEAD's connection: had the
        # window of 4 parts gone, its 3 other parts would each have opened a connection too
        # (and been cut off, as the first GET is, by the seek).
        assert relay.accepted <= 2 + 2 * 1, relay.accepted
        with c.open(bucket, "far") as f:
            assert f.read(10) == data[:10] and f.read() == data[10:], "read from the start: all of it"


def test_a_replaced_object_fails_a_far_seek_and_a_range_seeks_in_itself(server, bucket):
    c = make_client(server, part_size=PART, concurrency=2)
    data = os.urandom(6 * PART)
    c.put_bytes(bucket, "replaced", data)
    f = c.open(bucket, "replaced")
    assert f.read(10) == data[:10]
    c.put_bytes(bucket, "replaced", os.urandom(6 * PART))
    f.seek(-100, io.SEEK_END)  # past what the first download holds or fetches
    with pytest.raises(OSError, match="changed during the download"):
        f.read(10)
    with pytest.raises(OSError, match="changed"):
        f.read(10)  # and again, not an end that looks complete
    a, b = PART - 10, 2 * PART + 7
    c.put_bytes(bucket, "replaced", data)
    with c.open(bucket, "replaced", range=(a, b)) as f:
        assert f.size == b - a
        assert f.seek(-5, io.SEEK_END) == b - a - 5 and f.read() == data[b - 5:b]
        assert f.seek(3) == 3 and f.read(4) == data[a + 3:a + 7]


def test_the_asyncio_reader_seeks(server, bucket):
    c = make_client(server, part_size=PART, concurrency=2)
    data = os.urandom(2 * PART + 77)
    c.put_bytes(bucket, "aseek", data)

    async def go():
        r = await c.open_async(bucket, "aseek")
        assert r.size == len(data)
        got = [await r.read(5)]
        assert r.seek(-10, io.SEEK_END) == len(data) - 10
        got.append(await r.read())
        r.seek(PART - 2)
        got.append(await r.read(4))
        read = asyncio.ensure_future(r.read(1))
        await asyncio.sleep(0)
        if not read.done():
            with pytest.raises(RuntimeError, match="under way"):
                r.seek(0)
        got.append(await read)
        r.close()
        return got

    assert asyncio.run(go()) == [data[:5], data[-10:], data[PART - 2:PART + 2], data[PART + 2:PART + 3]]
