"""One large object read into a Python `bytes`: slipstream's `get_bytes` against boto3's
`get_object()['Body'].read()`, and against `download_fileobj` into a writer that keeps nothing
(the transfer without the `bytes`: what filling the result adds), and `get_bytes_async` in
`asyncio.run`. With OLD_PACKAGE (a directory holding another build's `slipstream` package),
that build's `get_bytes` and `get_bytes_async` run as rows too.

Every row runs in a process of its own, the rows in turn within each round (scripts/process_rows.py);
each prints the seconds of its call alone (not the import or the client's set-up). With REPEAT=N a process
makes the call N times and its first is left out (a long-running service's calls, its client
and connections warm; each result freed before the next). Printed: every row's median and
range, and the ratios of the medians.

    scripts/with-s3-server.sh .venv/bin/python scripts/bench-get-bytes.py [SIZE_MIB] [ROUNDS] [OLD_PACKAGE]
"""

from __future__ import annotations

import os
import sys

import process_rows

SIZE_MIB = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
OLD_PACKAGE = sys.argv[3] if len(sys.argv) > 3 else None
BUCKET, KEY = "bench-get-bytes", "object"
ENDPOINT = os.environ["SLIPSTREAM_TEST_ENDPOINT"]
REGION = os.environ.get("SLIPSTREAM_TEST_REGION", "us-east-1")
REPEAT = int(os.environ.get("REPEAT", "1"))
# RANGE_MIB=N: every row reads the object's first N MiB with a range (one GET in each tool;
# download_fileobj has no range, so its row is left out). The object is then SIZE_MIB + 1 MiB.
RANGE_MIB = int(os.environ.get("RANGE_MIB", "0"))
READ_MIB = RANGE_MIB or SIZE_MIB
OBJECT_MIB = SIZE_MIB + 1 if RANGE_MIB else SIZE_MIB
SLIP_RANGE = f", range=(0, {READ_MIB << 20})" if RANGE_MIB else ""
SLIP_RANGE_ASYNC = f", (0, {READ_MIB << 20})" if RANGE_MIB else ""
BOTO3_RANGE = f", Range='bytes=0-{(READ_MIB << 20) - 1}'" if RANGE_MIB else ""

SLIPSTREAM_CLIENT = f"""
import slipstream
c = slipstream.Client(region={REGION!r}, endpoint_url={ENDPOINT!r})
"""
BOTO3_CLIENT = f"""
import boto3
c = boto3.client('s3', region_name={REGION!r}, endpoint_url={ENDPOINT!r})
"""
ROWS = {
    "slipstream get_bytes": SLIPSTREAM_CLIENT + f"""
call = lambda i: c.get_bytes({BUCKET!r}, {KEY!r}{SLIP_RANGE})
""",
    "slipstream get_bytes_async": SLIPSTREAM_CLIENT + f"""
import asyncio
# Kept beside, not returned: asyncio.run would take the repr of a returned 1 GiB (CPython
# issue 112559, Python 3.11 to 3.12.1), which costs seconds.
async def get():
    global data
    data = await c.get_bytes_async({BUCKET!r}, {KEY!r}{SLIP_RANGE_ASYNC})
def call(i):
    global data
    asyncio.run(get())
    got, data = data, None
    return got
""",
    "slipstream download_fileobj, kept nothing": SLIPSTREAM_CLIENT + f"""
class Drop:
    n = 0
    def __len__(self):
        return self.n
    def write(self, b):
        self.n += len(b)
        return len(b)
def call(i):
    sink = Drop()
    c.download_fileobj({BUCKET!r}, {KEY!r}, sink)
    return sink
""",
    "boto3 get_object().read()": BOTO3_CLIENT + f"""
call = lambda i: c.get_object(Bucket={BUCKET!r}, Key={KEY!r}{BOTO3_RANGE})['Body'].read()
""",
}
TIMED = process_rows.timed(REPEAT, f"assert len(result) == {READ_MIB << 20}, len(result)")


def main() -> None:
    s3 = process_rows.bucket(BUCKET, REGION, ENDPOINT)
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=os.urandom(1 << 20) * OBJECT_MIB)
    rows = dict(ROWS)
    if RANGE_MIB:
        del rows["slipstream download_fileobj, kept nothing"]
    if OLD_PACKAGE:
        rows["old build get_bytes"] = ROWS["slipstream get_bytes"]
        rows["old build get_bytes_async"] = ROWS["slipstream get_bytes_async"]
    with_paths = {name: (code + TIMED, OLD_PACKAGE if name.startswith("old") else None)
                  for name, code in rows.items()}
    times = process_rows.rounds(with_paths, ROUNDS, REPEAT)
    what = f"the first {READ_MIB} MiB of {OBJECT_MIB} MiB (a range)" if RANGE_MIB else f"{SIZE_MIB} MiB"
    title = f"{what} into a bytes, {ROUNDS} rounds, {REPEAT} call(s) a process:"
    process_rows.report(title, times, "slipstream get_bytes")
    s3.delete_object(Bucket=BUCKET, Key=KEY)
    s3.delete_bucket(Bucket=BUCKET)


if __name__ == "__main__":
    main()
