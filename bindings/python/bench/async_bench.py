"""Many small objects from asyncio (issue 19): PUT then GET of COUNT objects of SIZE bytes,
`IN_FLIGHT` at a time, against the local S3 server, with slipstream's `*_async` calls beside
obstore's (the anchor for asyncio object stores), boto3 in a thread pool (what most Python code
does today) and slipstream's blocking calls in the same thread pool. Median of RUNS runs; the
ratio is each anchor's time over slipstream async's, measured in the same run.

    scripts/with-s3-server.sh .venv/bin/python bindings/python/bench/async_bench.py [COUNT] [SIZE_KIB] [RUNS]

Needs `make python` and `pip install -r bindings/python/bench/requirements.txt` (obstore,
boto3); a missing anchor's rows are left out.
"""

import asyncio
import os
import statistics
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import boto3
import slipstream

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
SIZE = (int(sys.argv[2]) if len(sys.argv) > 2 else 16) * 1024
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
IN_FLIGHT = int(os.environ.get("IN_FLIGHT", "64"))

ENDPOINT = os.environ["SLIPSTREAM_TEST_ENDPOINT"]
REGION = os.environ.get("SLIPSTREAM_TEST_REGION", "us-east-1")
KEY, SECRET = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
BUCKET = f"abench-{uuid.uuid4().hex[:12]}"
BODY = os.urandom(SIZE)
KEYS = [f"o/{i:07}" for i in range(COUNT)]


async def bounded(calls):
    """Runs the coroutine factories in `calls`, IN_FLIGHT at a time."""
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(call):
        async with gate:
            return await call()

    return await asyncio.gather(*(one(c) for c in calls))


def slipstream_async(client):
    async def put():
        await bounded([lambda k=k: client.put_bytes_async(BUCKET, k, BODY) for k in KEYS])

    async def get():
        got = await bounded([lambda k=k: client.get_bytes_async(BUCKET, k) for k in KEYS])
        assert all(len(g) == SIZE for g in got)

    return lambda: asyncio.run(put()), lambda: asyncio.run(get())


def obstore_async():
    import obstore
    from obstore.store import S3Store

    store = S3Store(BUCKET, endpoint=ENDPOINT, access_key_id=KEY, secret_access_key=SECRET,
                    region=REGION, virtual_hosted_style_request=False, client_options={"allow_http": True})

    async def put():
        await bounded([lambda k=k: obstore.put_async(store, k, BODY) for k in KEYS])

    async def get():
        async def one(k):
            r = await obstore.get_async(store, k)
            return await r.bytes_async()

        got = await bounded([lambda k=k: one(k) for k in KEYS])
        assert all(len(g) == SIZE for g in got)

    return lambda: asyncio.run(put()), lambda: asyncio.run(get())


def threads(put_one, get_one):
    def put():
        with ThreadPoolExecutor(IN_FLIGHT) as pool:
            list(pool.map(put_one, KEYS))

    def get():
        with ThreadPoolExecutor(IN_FLIGHT) as pool:
            assert all(n == SIZE for n in pool.map(get_one, KEYS))

    return put, get


def boto3_threads():
    from botocore.config import Config

    s3 = boto3.client("s3", endpoint_url=ENDPOINT, region_name=REGION, aws_access_key_id=KEY,
                      aws_secret_access_key=SECRET, config=Config(max_pool_connections=IN_FLIGHT))
    return threads(lambda k: s3.put_object(Bucket=BUCKET, Key=k, Body=BODY),
                   lambda k: len(s3.get_object(Bucket=BUCKET, Key=k)["Body"].read()))


def slipstream_threads(client):
    return threads(lambda k: client.put_bytes(BUCKET, k, BODY), lambda k: len(client.get_bytes(BUCKET, k)))


def median_seconds(work):
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    os.environ.setdefault("BOTO_DISABLE_CRT", "1")
    client = slipstream.Client(region=REGION, credentials=slipstream.Credentials(KEY, SECRET),
                               endpoint_url=ENDPOINT, addressing="path")
    boto3.client("s3", endpoint_url=ENDPOINT, region_name=REGION, aws_access_key_id=KEY,
                 aws_secret_access_key=SECRET).create_bucket(Bucket=BUCKET)
    contenders = [("slipstream `*_async` (asyncio)", lambda: slipstream_async(client))]
    try:
        import obstore  # noqa: F401

        contenders.append(("obstore `*_async` 0.12 (asyncio)", obstore_async))
    except ImportError:
        pass
    contenders += [("boto3 in a thread pool", boto3_threads),
                   ("slipstream blocking calls in a thread pool", lambda: slipstream_threads(client))]
    rows = []
    for name, make in contenders:
        put, get = make()
        rows.append((name, median_seconds(put), median_seconds(get)))
    base_put, base_get = rows[0][1], rows[0][2]
    print(f"| {COUNT} objects of {SIZE // 1024} KiB, {IN_FLIGHT} in flight, median of {RUNS} "
          f"| PUT all | objects/s | vs slipstream async | GET all | objects/s | vs slipstream async |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, p, g in rows:
        print(f"| {name} | {p:.2f} s | {COUNT / p:,.0f} | {p / base_put:.2f}x "
              f"| {g:.2f} s | {COUNT / g:,.0f} | {g / base_get:.2f}x |")
    client.delete_many(BUCKET, KEYS)


if __name__ == "__main__":
    main()
