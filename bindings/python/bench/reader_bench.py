"""An object read as a stream, to its end: slipstream's `Client.open` / `open_async` against
obstore's `open_reader` / `open_reader_async` (each with its defaults) and boto3's
`get_object()["Body"]`, in 1 MiB reads and by lines, on the server `scripts/with-s3-server.sh`
starts (loopback, or the far side of scripts/wan with CLIENT="scripts/wan exec client" in
front of the command). One process; each row's median of RUNS runs, the rows alternating
within each run; the ratio is each row's time over slipstream's for the same reading.

    scripts/with-s3-server.sh .venv/bin/python bindings/python/bench/reader_bench.py [SIZE_MIB] [RUNS]

The object is ASCII lines of 40 to 200 bytes (obstore's `readline` refuses bytes that are not
UTF-8). Needs `make python` and
`pip install -r bindings/python/bench/requirements.txt` (obstore, boto3).
"""

import asyncio
import os
import statistics
import sys
import time
import uuid

import boto3
import obstore
from botocore.config import Config
from obstore.store import S3Store

import slipstream

SIZE = (int(sys.argv[1]) if len(sys.argv) > 1 else 128) << 20
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
ENDPOINT = os.environ["SLIPSTREAM_TEST_ENDPOINT"]
REGION = os.environ.get("SLIPSTREAM_TEST_REGION", "us-east-1")
KEY, SECRET = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
MIB = 1 << 20


def text(size):
    """ASCII lines of 40 to 200 bytes (obstore's readline needs UTF-8), cut to `size`."""
    rows = [b"%08d,%s\n" % (i, b"abcdefghij" * (3 + i % 17)) for i in range(size // 40)]
    return b"".join(rows)[:size]


def reads(read):
    n = 0
    while chunk := read(MIB):
        n += len(chunk)
    return n


def lines(readline):
    n = 0
    while line := readline():
        n += len(line)
    return n


async def reads_async(read):
    n = 0
    while chunk := await read(MIB):
        n += len(chunk)
    return n


async def lines_async(readline):
    n = 0
    while line := await readline():
        n += len(line)
    return n


def main():
    s3 = boto3.client("s3", endpoint_url=ENDPOINT, region_name=REGION, config=Config(s3={"addressing_style": "path"}))
    bucket = f"reader-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    c = slipstream.Client(region=REGION, endpoint_url=ENDPOINT, addressing="path", credentials=slipstream.Credentials(KEY, SECRET))
    c.put_bytes(bucket, "object", text(SIZE))
    store = S3Store(bucket, endpoint=ENDPOINT, region=REGION, access_key_id=KEY, secret_access_key=SECRET,
                    virtual_hosted_style_request=False, client_options={"allow_http": True})
    body = lambda: s3.get_object(Bucket=bucket, Key="object")["Body"]  # noqa: E731

    def slip_async(how):
        async def go():
            r = await c.open_async(bucket, "object")
            return await how(r.read if how is reads_async else r.readline)
        return lambda: asyncio.run(go())

    def obstore_async(how):
        async def go():
            r = await obstore.open_reader_async(store, "object")
            return await how(r.read if how is reads_async else r.readline)
        return lambda: asyncio.run(go())

    rows = {
        ("1 MiB reads", "slipstream open"): lambda: reads(c.open(bucket, "object").read),
        ("1 MiB reads", "obstore open_reader"): lambda: reads(obstore.open_reader(store, "object").read),
        ("1 MiB reads", "boto3 get_object Body"): lambda: reads(body().read),
        ("1 MiB reads", "slipstream open_async"): slip_async(reads_async),
        ("1 MiB reads", "obstore open_reader_async"): obstore_async(reads_async),
        ("lines", "slipstream open"): lambda: lines(c.open(bucket, "object").readline),
        ("lines", "obstore open_reader"): lambda: lines(obstore.open_reader(store, "object").readline),
        ("lines", "boto3 get_object Body (iter_lines)"): lambda: sum(len(x) + 1 for x in body().iter_lines()),
        ("lines", "slipstream open_async"): slip_async(lines_async),
        ("lines", "obstore open_reader_async"): obstore_async(lines_async),
    }
    times = {row: [] for row in rows}
    for r in range(RUNS):
        for row in rows if r % 2 == 0 else reversed(list(rows)):
            start = time.perf_counter()
            n = rows[row]()
            times[row].append(time.perf_counter() - start)
            # iter_lines drops the newlines (and a last one), hence the tolerance.
            assert abs(n - SIZE) <= 1, (row, n)
    print(f"| {SIZE >> 20} MiB to its end, median of {RUNS} | reader | time | MiB/s | vs slipstream |")
    print("|---|---|---:|---:|---:|")
    for (how, who), t in times.items():
        base = statistics.median(times[(how, "slipstream open_async" if "async" in who else "slipstream open")])
        m = statistics.median(t)
        print(f"| {how} | {who} | {m:.2f} s | {SIZE / MIB / m:,.0f} | {m / base:.2f}x |")
    print(f"(obstore {obstore.__version__}, boto3 {boto3.__version__})")


if __name__ == "__main__":
    main()
