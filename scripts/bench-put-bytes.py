"""A Python `bytes` stored as one object: slipstream's `put_bytes` against boto3's `put_object`
(one request) and `upload_fileobj(BytesIO(data))` (boto3's multipart, 8 MiB parts, 10
threads). With OLD_PACKAGE (a directory holding another build's `slipstream` package), that
build's `put_bytes` runs as a row too (before 127edae: one PutObject whatever the size).

Every row runs in a process of its own, the rows in turn within each round; each prints the
seconds of its calls alone (not the import, the client's set-up or making the data), REPEAT
calls a process (default 2), the first left out when there are more. Printed: every row's
median and range, and the ratios of the medians to `put_bytes`'.

    scripts/with-s3-server.sh .venv/bin/python scripts/bench-put-bytes.py [SIZE_MIB] [ROUNDS] [OLD_PACKAGE]
"""

from __future__ import annotations

import os
import sys

import process_rows

SIZE_MIB = int(sys.argv[1]) if len(sys.argv) > 1 else 256
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
OLD_PACKAGE = sys.argv[3] if len(sys.argv) > 3 else None
BUCKET = "bench-put-bytes"
ENDPOINT = os.environ["SLIPSTREAM_TEST_ENDPOINT"]
REGION = os.environ.get("SLIPSTREAM_TEST_REGION", "us-east-1")
REPEAT = int(os.environ.get("REPEAT", "2"))

SETUP = f"""
import io, os
data = os.urandom(1 << 20) * {SIZE_MIB}
"""
SLIPSTREAM = SETUP + f"""
import slipstream
c = slipstream.Client(region={REGION!r}, endpoint_url={ENDPOINT!r})
call = lambda i: c.put_bytes({BUCKET!r}, f"k{{i}}", data)
"""
BOTO3 = SETUP + f"""
import boto3
c = boto3.client('s3', region_name={REGION!r}, endpoint_url={ENDPOINT!r})
"""
ROWS = {
    "slipstream put_bytes": SLIPSTREAM,
    "boto3 put_object": BOTO3
    + f"call = lambda i: c.put_object(Bucket={BUCKET!r}, Key=f'k{{i}}', Body=data)\n",
    "boto3 upload_fileobj(BytesIO)": BOTO3
    + f"call = lambda i: c.upload_fileobj(io.BytesIO(data), {BUCKET!r}, f'k{{i}}')\n",
}
TIMED = process_rows.timed(REPEAT)


def main() -> None:
    s3 = process_rows.bucket(BUCKET, REGION, ENDPOINT)
    rows = dict(ROWS)
    if OLD_PACKAGE:
        rows["old build put_bytes"] = ROWS["slipstream put_bytes"]
    with_paths = {name: (code + TIMED, OLD_PACKAGE if name.startswith("old") else None)
                  for name, code in rows.items()}
    times = process_rows.rounds(with_paths, ROUNDS, REPEAT)
    title = f"{SIZE_MIB} MiB from a bytes, {ROUNDS} rounds, {REPEAT} call(s) a process:"
    process_rows.report(title, times, "slipstream put_bytes")
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        for o in page.get("Contents", []):
            s3.delete_object(Bucket=BUCKET, Key=o["Key"])
    s3.delete_bucket(Bucket=BUCKET)


if __name__ == "__main__":
    main()
