#!/usr/bin/env python3
"""boto3 with a thread pool, the anchor scripts/bench-many.sh measures beside s5cmd and the AWS
CLI: what a Python user writes to move many small objects without a transfer tool.

    boto3-many.py up DIR s3://BUCKET/PREFIX/       every file under DIR, PutObject each
    boto3-many.py down s3://BUCKET/PREFIX/ DIR     every listed object, GetObject each
    boto3-many.py copy s3://BUCKET/PREFIX/ s3://BUCKET/OTHER/   CopyObject each
    boto3-many.py rm s3://BUCKET/PREFIX/           DeleteObjects, a batch per listing page

WORKERS threads (default 64) share one client with as many pooled connections (boto3's
default pool of 10 would cap them); objects start while the listing goes on, a page at a time.
The endpoint is $AWS_ENDPOINT_URL or $SLIPSTREAM_TEST_ENDPOINT, path-style; credentials and
region from the environment.
"""

import concurrent.futures
import os
import sys

import boto3
import botocore.config

WORKERS = int(os.environ.get("WORKERS", "64"))
ENDPOINT = os.environ.get("AWS_ENDPOINT_URL") or os.environ["SLIPSTREAM_TEST_ENDPOINT"]
s3 = boto3.client(
    "s3",
    endpoint_url=ENDPOINT,
    config=botocore.config.Config(
        max_pool_connections=WORKERS, s3={"addressing_style": "path"}, retries={"mode": "standard"}
    ),
)


def split(url: str) -> tuple[str, str]:
    bucket, _, key = url.removeprefix("s3://").partition("/")
    return bucket, key


def pages(bucket: str, prefix: str):
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        yield [o["Key"] for o in page.get("Contents", [])]


def upload(root: str, bucket: str, prefix: str, path: str) -> None:
    key = prefix + os.path.relpath(path, root).replace(os.sep, "/")
    with open(path, "rb") as f:
        s3.put_object(Bucket=bucket, Key=key, Body=f.read())


def download(bucket: str, prefix: str, key: str, root: str) -> None:
    path = os.path.join(root, key[len(prefix):])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    body = s3.get_object(Bucket=bucket, Key=key)["Body"]
    with open(path, "wb") as f:
        for chunk in body.iter_chunks(1 << 20):
            f.write(chunk)


def main() -> None:
    op, args = sys.argv[1], sys.argv[2:]
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        jobs = []
        if op == "up":
            root, (bucket, prefix) = args[0], split(args[1])
            for d, _, files in os.walk(root):
                jobs += [pool.submit(upload, root, bucket, prefix, os.path.join(d, f)) for f in files]
        elif op == "down":
            (bucket, prefix), root = split(args[0]), args[1]
            for keys in pages(bucket, prefix):
                jobs += [pool.submit(download, bucket, prefix, k, root) for k in keys]
        elif op == "copy":
            (bucket, prefix), (to_bucket, to_prefix) = split(args[0]), split(args[1])
            for keys in pages(bucket, prefix):
                jobs += [
                    pool.submit(
                        s3.copy_object,
                        Bucket=to_bucket,
                        Key=to_prefix + k[len(prefix):],
                        CopySource={"Bucket": bucket, "Key": k},
                    )
                    for k in keys
                ]
        elif op == "rm":
            bucket, prefix = split(args[0])
            for keys in pages(bucket, prefix):
                if keys:
                    batch = {"Objects": [{"Key": k} for k in keys], "Quiet": True}
                    jobs.append(pool.submit(s3.delete_objects, Bucket=bucket, Delete=batch))
        else:
            sys.exit(f"boto3-many.py: unknown operation {op!r} (up, down, copy, rm)")
        for job in jobs:
            answer = job.result()
            if op == "rm" and answer.get("Errors"):
                sys.exit(f"boto3-many.py: {len(answer['Errors'])} keys not deleted")


if __name__ == "__main__":
    main()
