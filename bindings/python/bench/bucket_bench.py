"""Emptying and removing a bucket of COUNT small objects from Python: slipstream's
`delete_bucket(bucket, force=True)` beside what boto3 users write for it (the resource API's
`bucket.objects.all().delete()` then `bucket.delete()`: a page listed, then its one
`DeleteObjects`, page after page) and the AWS CLI's `aws s3 rb --force` when it is installed
(`.tools/awscli-venv`, as `make setup` puts it). Each round fills one bucket per contender with
the same objects (not timed), then times each contender, the order reversed every other round;
medians of ROUNDS, and each anchor's time over slipstream's.

    scripts/with-s3-server.sh .venv/bin/python bindings/python/bench/bucket_bench.py [COUNT] [ROUNDS]
"""

import asyncio
import os
import pathlib
import statistics
import subprocess
import sys
import time
import uuid

import boto3
import slipstream

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 5

ENDPOINT = os.environ["SLIPSTREAM_TEST_ENDPOINT"]
REGION = os.environ.get("SLIPSTREAM_TEST_REGION", "us-east-1")
KEY, SECRET = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
AWS = pathlib.Path(__file__).resolve().parents[3] / ".tools/awscli-venv/bin/aws"

client = slipstream.Client(
    region=REGION, credentials=slipstream.Credentials(KEY, SECRET), endpoint_url=ENDPOINT, addressing="path"
)
s3 = boto3.resource(
    "s3", region_name=REGION, endpoint_url=ENDPOINT, aws_access_key_id=KEY, aws_secret_access_key=SECRET
)


async def fill(bucket: str) -> None:
    """COUNT objects of 1 KiB under a few prefixes, 64 PUTs in flight."""
    await client.create_bucket_async(bucket)
    gate, body = asyncio.Semaphore(64), os.urandom(1024)

    async def put(i: int) -> None:
        async with gate:
            await client.put_bytes_async(bucket, f"d{i % 10}/o{i:07}", body)

    await asyncio.gather(*(put(i) for i in range(COUNT)))


def with_slipstream(bucket: str) -> None:
    client.delete_bucket(bucket, force=True)


def with_boto3(bucket: str) -> None:
    b = s3.Bucket(bucket)
    b.objects.all().delete()
    b.delete()


def with_aws_cli(bucket: str) -> None:
    env = dict(os.environ, AWS_ENDPOINT_URL=ENDPOINT, AWS_REGION=REGION)
    subprocess.run([str(AWS), "s3", "rb", "--force", f"s3://{bucket}"], env=env, check=True,
                   stdout=subprocess.DEVNULL)


def main() -> None:
    contenders = {"slipstream delete_bucket(force=True)": with_slipstream,
                  "boto3 objects.all().delete()": with_boto3}
    if AWS.exists():
        contenders["aws s3 rb --force"] = with_aws_cli
    times = {name: [] for name in contenders}
    for r in range(ROUNDS):
        order = list(contenders.items())
        if r % 2:
            order.reverse()
        buckets = {name: f"rb-{uuid.uuid4().hex[:12]}" for name in contenders}
        for bucket in buckets.values():
            asyncio.run(fill(bucket))
        for name, remove in order:
            start = time.perf_counter()
            remove(buckets[name])
            times[name].append(time.perf_counter() - start)
        gone = {b["Name"] for b in boto3.client("s3", region_name=REGION, endpoint_url=ENDPOINT,
                                                  aws_access_key_id=KEY, aws_secret_access_key=SECRET)
                .list_buckets()["Buckets"]}
        assert not gone & set(buckets.values()), "every contender removed its bucket"
    ours = statistics.median(times["slipstream delete_bucket(force=True)"])
    print(f"{COUNT} objects of 1 KiB, {ROUNDS} rounds, medians (range):")
    for name, t in times.items():
        med = statistics.median(t)
        print(f"  {name:40} {med:7.3f} s ({min(t):.3f}-{max(t):.3f})  {med / ours:5.2f}x slipstream's time")


if __name__ == "__main__":
    main()
