"""Server-side copies that change what an object carries, from Python: slipstream's
`copy(..., extra_args={"ContentType": ..., "Metadata": ...})` beside boto3's
`copy(CopySource, Bucket, Key, ExtraArgs={..., "MetadataDirective": "REPLACE"})` (its managed
copy: a HeadObject, then CopyObject) and boto3's bare `copy_object(...,
MetadataDirective="REPLACE")`, each COUNT objects of 4 KiB one after another (the per-call
cost), then the same COUNT from a thread pool of 16 (slipstream: `copy_async` gathered, 16 at
once). Medians of ROUNDS, the contenders' order reversed every other round, and each anchor's
time over slipstream's.

    scripts/with-s3-server.sh .venv/bin/python bindings/python/bench/copy_bench.py [COUNT] [ROUNDS]
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

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 500
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 5

ENDPOINT = os.environ["SLIPSTREAM_TEST_ENDPOINT"]
REGION = os.environ.get("SLIPSTREAM_TEST_REGION", "us-east-1")
KEY, SECRET = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
EXTRA = {"ContentType": "text/csv", "Metadata": {"stage": "clean"}}

client = slipstream.Client(
    region=REGION, credentials=slipstream.Credentials(KEY, SECRET), endpoint_url=ENDPOINT, addressing="path"
)
s3 = boto3.client(
    "s3", region_name=REGION, endpoint_url=ENDPOINT, aws_access_key_id=KEY, aws_secret_access_key=SECRET
)
BUCKET = f"copy-bench-{uuid.uuid4().hex[:12]}"


def ours(prefix: str) -> None:
    for i in range(COUNT):
        client.copy(BUCKET, f"src/{i}", BUCKET, f"{prefix}/{i}", extra_args=EXTRA)


def ours_parallel(prefix: str) -> None:
    async def all_copies() -> None:
        gate = asyncio.Semaphore(16)

        async def one(i: int) -> None:
            async with gate:
                await client.copy_async(BUCKET, f"src/{i}", BUCKET, f"{prefix}/{i}", extra_args=EXTRA)

        await asyncio.gather(*(one(i) for i in range(COUNT)))

    asyncio.run(all_copies())


def boto3_managed(i: int, prefix: str) -> None:
    s3.copy({"Bucket": BUCKET, "Key": f"src/{i}"}, BUCKET, f"{prefix}/{i}",
            ExtraArgs={**EXTRA, "MetadataDirective": "REPLACE"})


def boto3_plain(i: int, prefix: str) -> None:
    s3.copy_object(CopySource={"Bucket": BUCKET, "Key": f"src/{i}"}, Bucket=BUCKET, Key=f"{prefix}/{i}",
                   MetadataDirective="REPLACE", **EXTRA)


def in_turn(call):
    return lambda prefix: [call(i, prefix) for i in range(COUNT)]


def pooled(call):
    def run(prefix: str) -> None:
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda i: call(i, prefix), range(COUNT)))
    return run


def main() -> None:
    client.create_bucket(BUCKET)
    body = os.urandom(4096)
    for i in range(COUNT):
        client.put_bytes(BUCKET, f"src/{i}", body)
    contenders = {
        "slipstream copy(extra_args=), one at a time": ours,
        "boto3 copy(ExtraArgs=), one at a time": in_turn(boto3_managed),
        "boto3 copy_object(MetadataDirective=REPLACE), one at a time": in_turn(boto3_plain),
        "slipstream copy_async, 16 at once": ours_parallel,
        "boto3 copy(ExtraArgs=), 16 threads": pooled(boto3_managed),
        "boto3 copy_object, 16 threads": pooled(boto3_plain),
    }
    times = {name: [] for name in contenders}
    for r in range(ROUNDS):
        order = list(contenders.items())
        if r % 2:
            order.reverse()
        for n, (name, run) in enumerate(order):
            prefix = f"r{r}-{n}"
            t0 = time.perf_counter()
            run(prefix)
            times[name].append(time.perf_counter() - t0)
            head = s3.head_object(Bucket=BUCKET, Key=f"{prefix}/{COUNT - 1}")
            assert (head["ContentType"], head["Metadata"]) == ("text/csv", {"stage": "clean"}), (name, head)
        print(f"round {r + 1} done", file=sys.stderr)
    client.delete_bucket(BUCKET, force=True)
    print(f"| {COUNT} copies of 4 KiB, median of {ROUNDS} | seconds | per copy | / slipstream's |")
    print("|---|---:|---:|---:|")
    base = {"one": statistics.median(times["slipstream copy(extra_args=), one at a time"]),
            "16": statistics.median(times["slipstream copy_async, 16 at once"])}
    for name, ts in times.items():
        m = statistics.median(ts)
        ref = base["one"] if "one at a time" in name else base["16"]
        print(f"| {name} | {m:.3f} | {m / COUNT * 1e3:.2f} ms | {m / ref:.2f}x |")


if __name__ == "__main__":
    main()
