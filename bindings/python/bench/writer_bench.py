"""An object written as a stream, in 1 MiB writes: slipstream's `Client.open(bucket, key, "wb")`
against obstore's `open_writer` (each with its defaults), and boto3's `upload_fileobj` of the
same bytes from an `io.BytesIO` (boto3 has no writer; this is its nearest call, and it reads
from memory it already holds), on the server `scripts/with-s3-server.sh` starts (loopback, or
the far side of scripts/wan with CLIENT="scripts/wan exec client" in front of the command).
One process; each row's median of RUNS runs, the rows alternating within each run.

    scripts/with-s3-server.sh .venv/bin/python bindings/python/bench/writer_bench.py [SIZE_MIB] [RUNS]

Needs `make python` and `pip install -r bindings/python/bench/requirements.txt`.
"""

import io
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

SIZE = (int(sys.argv[1]) if len(sys.argv) > 1 else 256) << 20
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
ENDPOINT = os.environ["SLIPSTREAM_TEST_ENDPOINT"]
REGION = os.environ.get("SLIPSTREAM_TEST_REGION", "us-east-1")
KEY, SECRET = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
MIB = 1 << 20


def main():
    s3 = boto3.client("s3", endpoint_url=ENDPOINT, region_name=REGION, config=Config(s3={"addressing_style": "path"}))
    bucket = f"writer-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    c = slipstream.Client(region=REGION, endpoint_url=ENDPOINT, addressing="path", credentials=slipstream.Credentials(KEY, SECRET))
    store = S3Store(bucket, endpoint=ENDPOINT, region=REGION, access_key_id=KEY, secret_access_key=SECRET,
                    virtual_hosted_style_request=False, client_options={"allow_http": True})
    data = os.urandom(SIZE)
    chunks = [memoryview(data)[i:i + MIB] for i in range(0, SIZE, MIB)]

    def slip():
        with c.open(bucket, "slipstream", "wb") as f:
            for chunk in chunks:
                f.write(chunk)

    def obs():
        with obstore.open_writer(store, "obstore") as f:
            for chunk in chunks:
                f.write(chunk)

    def boto():
        s3.upload_fileobj(io.BytesIO(data), bucket, "boto3")

    rows = {"slipstream open(..., \"wb\")": slip, "obstore open_writer": obs, "boto3 upload_fileobj(BytesIO)": boto}
    times = {row: [] for row in rows}
    for r in range(RUNS):
        for row in rows if r % 2 == 0 else reversed(list(rows)):
            start = time.perf_counter()
            rows[row]()
            times[row].append(time.perf_counter() - start)
    for key in ["slipstream", "obstore", "boto3"]:
        assert s3.head_object(Bucket=bucket, Key=key)["ContentLength"] == SIZE, key
    base = statistics.median(times["slipstream open(..., \"wb\")"])
    print(f"| {SIZE >> 20} MiB in 1 MiB writes, median of {RUNS} | time | MiB/s | vs slipstream |")
    print("|---|---:|---:|---:|")
    for row, t in times.items():
        m = statistics.median(t)
        print(f"| {row} | {m:.2f} s | {SIZE / MIB / m:,.0f} | {m / base:.2f}x |")
    print(f"(obstore {obstore.__version__}, boto3 {boto3.__version__})")


if __name__ == "__main__":
    main()
