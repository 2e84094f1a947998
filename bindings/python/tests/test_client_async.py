"""slipstream.Client's asyncio twins (`*_async`) against the local versitygw: the same answers
as the blocking calls, many calls in flight on one event loop, errors raised at the await,
cancellation that leaves nothing half-written. Issue 19."""

import asyncio
import hashlib
import os
import time
import uuid

import pytest

import slipstream
from test_client import make_client


@pytest.fixture()
def bucket_name(s3):
    name = f"pa-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=name)
    return name


def test_every_call_has_an_async_twin_with_the_same_answer(server, s3, bucket_name, tmp_path):
    c = make_client(server)
    b = bucket_name
    src = tmp_path / "big.bin"
    src.write_bytes(os.urandom(11 << 20))  # two parts

    async def main():
        assert await c.put_bytes_async(b, "small", b"hello") == c.head(b, "small")["ETag"]
        assert await c.get_bytes_async(b, "small") == b"hello"
        assert await c.get_bytes_async(b, "small", (1, 3)) == b"el"
        assert await c.upload_async(src, b, "big", checksum_algorithm="CRC64NVME") == 11 << 20
        assert await c.download_async(b, "big", tmp_path / "back.bin") == 11 << 20
        assert await c.get_bytes_async(b, "big") == src.read_bytes()
        # In place from 1 MiB (the whole object above, these ranges), copied below it.
        for start, end in [(5, 3 << 20), ((11 << 20) - 10, (11 << 20) + 99), (1 << 20, (1 << 20) + 1)]:
            assert await c.get_bytes_async(b, "big", (start, end)) == src.read_bytes()[start:end]
        head = await c.head_async(b, "big")
        assert head == c.head(b, "big") and head["ContentLength"] == 11 << 20
        assert await c.copy_async(b, "small", b, "copied") == 5
        keys = [o["Key"] async for o in c.list_async(b)]
        assert keys == ["big", "copied", "small"] == [o["Key"] for o in c.list(b)]
        assert await c.delete_async(b, "copied") is None
        assert await c.delete_many_async(b, ["small", "not-there"]) == []
        return [o["Key"] async for o in c.list_async(b)]

    assert asyncio.run(main()) == ["big"]
    assert (tmp_path / "back.bin").read_bytes() == src.read_bytes()


def test_many_calls_in_flight_on_one_loop_and_a_paged_async_listing(server, s3, bucket_name):
    c = make_client(server)
    b = bucket_name
    bodies = {f"k/{i:05}": hashlib.sha256(b"%d" % i).digest() * (i % 7) for i in range(1200)}

    async def main():
        await asyncio.gather(*(c.put_bytes_async(b, k, v) for k, v in bodies.items()))
        got = await asyncio.gather(*(c.get_bytes_async(b, k) for k in bodies))
        assert dict(zip(bodies, got)) == bodies
        listed = [o async for o in c.list_async(b, "k/")]
        assert [o["Key"] for o in listed] == sorted(bodies), "two pages, in key order"
        assert listed[3]["Size"] == len(bodies["k/00003"])
        assert [o async for o in c.list_async(b, "none/")] == []
        # The loop stays free while calls are in flight: a ticker keeps ticking.
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        t = asyncio.create_task(ticker())
        await asyncio.gather(*(c.head_async(b, k) for k in list(bodies)[:200]))
        t.cancel()
        return ticks

    assert asyncio.run(main()) > 1


def test_errors_raise_at_the_await_as_the_blocking_calls_raise(server, bucket_name, tmp_path):
    c = make_client(server)

    async def main():
        with pytest.raises(slipstream.S3Error) as e:
            await c.head_async(bucket_name, "missing")
        assert e.value.status == 404
        with pytest.raises(slipstream.S3Error) as e:
            await c.get_bytes_async(bucket_name, "missing")
        assert e.value.code == "NoSuchKey"
        with pytest.raises(FileNotFoundError):
            await c.upload_async(tmp_path / "nope", bucket_name, "k")
        with pytest.raises(ValueError):
            await c.put_bytes_async(bucket_name, "k", b"x", checksum_algorithm="MD4")
        with pytest.raises(ValueError):
            await c.sync_async("s3://b/p/", str(tmp_path), size_only=True, exact_timestamps=True)

    asyncio.run(main())
    # Made before any loop runs, a call starts when awaited, in the loop that awaits it.
    c.put_bytes(bucket_name, "k", b"hello")
    assert asyncio.run(c.head_async(bucket_name, "k"))["ContentLength"] == 5
    assert asyncio.run(c.get_bytes_async(bucket_name, "k")) == b"hello"
    with pytest.raises(slipstream.S3Error):
        asyncio.run(c.get_bytes_async(bucket_name, "missing"))
    never = c.delete_async(bucket_name, "k")
    never.close()  # never awaited: nothing starts
    assert asyncio.run(c.get_bytes_async(bucket_name, "k")) == b"hello"


def test_sync_async_plans_as_sync_does(server, s3, bucket_name, tmp_path):
    c = make_client(server)
    d = tmp_path / "tree"
    (d / "sub").mkdir(parents=True)
    for name in ("a.txt", "sub/b.txt", "skip.log"):
        (d / name).write_bytes(name.encode())
        # Older than the upload: S3's second-granular time would otherwise look older.
        os.utime(d / name, (time.time() - 3600,) * 2)

    async def main():
        done = await c.sync_async(str(d), f"s3://{bucket_name}/t/", filters=[("exclude", "*.log")])
        assert (done["copied"], done["deleted"]) == (2, 0)
        assert sorted(a["destination"] for a in done["actions"]) == [
            f"s3://{bucket_name}/t/a.txt", f"s3://{bucket_name}/t/sub/b.txt"]
        again = await c.sync_async(str(d), f"s3://{bucket_name}/t/", filters=[("exclude", "*.log")])
        assert (again["copied"], again["unchanged"]) == (0, 2)

    asyncio.run(main())


def test_a_cancelled_download_leaves_no_file_and_the_loop_goes_on(server, s3, bucket_name, tmp_path):
    # A slow link would make this certain; a large object over loopback is enough that the
    # cancel lands mid-transfer on this machine, and either way no partial file may remain.
    c = make_client(server, concurrency=2)
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(96 << 20))
    c.upload(big, bucket_name, "big")
    dest = tmp_path / "out" / "big.bin"
    dest.parent.mkdir()

    async def main():
        task = asyncio.create_task(c.download_async(bucket_name, "big", dest))
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The client still works after the cancel.
        return await c.get_bytes_async(bucket_name, "big", (0, 4))

    assert asyncio.run(main()) == big.read_bytes()[:4]
    deadline = time.monotonic() + 5
    while list(dest.parent.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)  # the aborted task's temporary file goes as the task is dropped
    assert list(dest.parent.iterdir()) in ([], [dest])
    if dest.exists():
        assert dest.read_bytes() == big.read_bytes(), "a file that exists is complete"


def test_a_client_dropped_with_a_call_in_flight_fails_the_call_and_does_not_hang(tmp_path):
    """Dropping a Client (with the GIL held, as Python does) shuts its runtime down; a call still
    in flight then fails its future, which takes the GIL: the runtime is dropped with the GIL
    released, else the two wait for each other forever. In a child process, so that a
    regression fails this test instead of hanging the suite."""
    import subprocess
    import sys

    script = tmp_path / "drop.py"
    script.write_text('''
import asyncio, gc, socket
import slipstream

silent = socket.socket()
silent.bind(("127.0.0.1", 0))
silent.listen()  # accepts, never answers: the call stays in flight
c = slipstream.Client(region="us-east-1", credentials=slipstream.Credentials("AKID", "secret"),
                      endpoint_url=f"http://127.0.0.1:{silent.getsockname()[1]}", addressing="path")
loop = asyncio.new_event_loop()

async def start():
    task = asyncio.ensure_future(c.get_bytes_async("b", "k"))
    await asyncio.sleep(0.3)
    return task

task = loop.run_until_complete(start())
del c
gc.collect()
loop.run_until_complete(asyncio.sleep(0.1))
assert task.done(), "the call's future was left pending"
print(type(task.exception()).__name__, task.exception())
''')
    p = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    assert p.stdout.decode().startswith("RuntimeError the call was stopped: its Client was closed")


EXIT_CHILD = """
import asyncio, sys, slipstream
bucket, endpoint, region, ak, sk = sys.argv[1:6]
c = slipstream.Client(region=region, credentials=slipstream.Credentials(ak, sk),
                      endpoint_url=endpoint, addressing="path")

async def get():
    global data
    data = await c.get_bytes_async(bucket, "k")

for _ in range(2):
    asyncio.run(get())
    del data
"""


def test_the_interpreter_exits_cleanly_right_after_an_awaited_call(server, s3, bucket_name):
    """An awaited call's last step (handing the result to the event loop) runs Python on a
    runtime thread; when the script ends at once, Python's exit began while that thread still
    held or wanted the GIL, and CPython killed it mid-step: "Fatal Python error:
    PyGILState_Release" and SIGABRT about one exit in fifteen. exit.rs waits for such steps at
    `atexit` and lets no new one start."""
    import subprocess
    import sys

    s3.put_object(Bucket=bucket_name, Key="k", Body=os.urandom(64 << 20))
    args = [bucket_name, server["endpoint"], server["region"], server["access_key"], server["secret_key"]]
    failures = []
    for _ in range(40):
        run = subprocess.run([sys.executable, "-c", EXIT_CHILD, *args], capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            failures.append((run.returncode, run.stderr[-300:]))
    assert failures == [], f"{len(failures)} of 40 exits failed, the first: {failures[0]}"
