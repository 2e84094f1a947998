"""Random access through a file object: Parquet and ZIP read from S3 with slipstream's seekable
`Client.open` against pyarrow's own `S3FileSystem` (the AWS C++ SDK), obstore's `open_reader`
and boto3 (which has no seekable reader: the object downloaded whole into `io.BytesIO`, as is
done without s3fs), each with its defaults, on the server `scripts/with-s3-server.sh` starts
(loopback, or the far side of scripts/wan with CLIENT="scripts/wan exec client" in front).
One process; each row's median of RUNS runs, the tools alternating within each run; the
ratio is each tool's time over slipstream's for the same work.

    scripts/with-s3-server.sh .venv/bin/python bindings/python/bench/seek_bench.py [SIZE_MIB] [RUNS]

Work: a Parquet table of about SIZE_MIB (8 row groups, three columns) read whole, and one
column of one row group read from it (the footer, then one column chunk); a ZIP of 256
members of 64 KiB with 16 of them read. Needs `make python` (pyarrow and NumPy come with
requirements-dev.txt) and `pip install -r bindings/python/bench/requirements.txt` (obstore).
"""

import io
import os
import random
import statistics
import sys
import time
import uuid
import zipfile

import boto3
import numpy as np
import obstore
import pyarrow as pa
import pyarrow.parquet as pq
from botocore.config import Config
from obstore.store import S3Store
from pyarrow import fs

import slipstream

SIZE = (int(sys.argv[1]) if len(sys.argv) > 1 else 64) << 20
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
ENDPOINT = os.environ["SLIPSTREAM_TEST_ENDPOINT"]
REGION = os.environ.get("SLIPSTREAM_TEST_REGION", "us-east-1")
KEY, SECRET = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
MIB = 1 << 20
TOOLS = ["slipstream open", "pyarrow S3FileSystem", "obstore open_reader", "boto3 whole, BytesIO"]


def table(size):
    """About `size` bytes of Parquet: ids, floats and 24-byte strings that do not compress."""
    rows = size // 48
    rng = np.random.default_rng(7)
    strings = [os.urandom(12).hex() for _ in range(rows)]
    return pa.table({"id": np.arange(rows), "x": rng.random(rows), "s": strings}), rows


class WithClosed:
    """obstore's ReadableFile has no `closed`, `seekable` or `readable`, which pyarrow's
    Python-file wrapper asks for: those added, and reads as `bytes` (a copy)."""

    def __init__(self, f):
        self._f, self.closed = f, False
        self.seek, self.tell = f.seek, f.tell

    def read(self, n=-1):
        return bytes(self._f.read(None if n is None or n < 0 else n))  # `bytes`, not obstore's Bytes

    def seekable(self):
        return True

    def readable(self):
        return True

    def close(self):
        self._f.close()
        self.closed = True


def main():
    s3 = boto3.client("s3", endpoint_url=ENDPOINT, region_name=REGION, config=Config(s3={"addressing_style": "path"}))
    bucket = f"seek-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    c = slipstream.Client(region=REGION, endpoint_url=ENDPOINT, addressing="path", credentials=slipstream.Credentials(KEY, SECRET))
    t, rows = table(SIZE)
    sink = io.BytesIO()
    pq.write_table(t, sink, row_group_size=rows // 8 + 1)
    c.put_bytes(bucket, "table.parquet", sink.getvalue())
    members = {f"m/{i:03d}.bin": os.urandom(64 << 10) for i in range(256)}
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_STORED) as z:
        for name, body in members.items():
            z.writestr(name, body)
    c.put_bytes(bucket, "members.zip", zipped.getvalue())
    picked = random.Random(3).sample(sorted(members), 16)
    scheme, host = ENDPOINT.split("://")
    arrow = fs.S3FileSystem(access_key=KEY, secret_key=SECRET, region=REGION, endpoint_override=host, scheme=scheme)
    store = S3Store(bucket, endpoint=ENDPOINT, region=REGION, access_key_id=KEY, secret_access_key=SECRET,
                    virtual_hosted_style_request=False, client_options={"allow_http": True})

    def opener(key):
        return {
            "slipstream open": lambda: c.open(bucket, key),
            "pyarrow S3FileSystem": lambda: arrow.open_input_file(f"{bucket}/{key}"),
            "obstore open_reader": lambda: WithClosed(obstore.open_reader(store, key)),
            "boto3 whole, BytesIO": lambda: io.BytesIO(s3.get_object(Bucket=bucket, Key=key)["Body"].read()),
        }

    def whole(f):
        assert pq.read_table(f).num_rows == rows

    def one_chunk(f):
        got = pq.ParquetFile(f).read_row_group(5, columns=["x"]).column("x")
        assert len(got) > 0

    def some_members(f):
        with zipfile.ZipFile(f) as z:
            for name in picked:
                assert z.read(name) == members[name]

    work = {
        "Parquet, whole table": ("table.parquet", whole),
        "Parquet, one column of one row group": ("table.parquet", one_chunk),
        "ZIP, 16 of 256 members": ("members.zip", some_members),
    }
    times = {(w, tool): [] for w in work for tool in TOOLS}
    for r in range(RUNS):
        for w, (key, do) in work.items():
            opens = opener(key)
            for tool in TOOLS if r % 2 == 0 else reversed(TOOLS):
                start = time.perf_counter()
                f = opens[tool]()
                do(f)
                f.close()
                times[(w, tool)].append(time.perf_counter() - start)
    sizes = {k: s3.head_object(Bucket=bucket, Key=k)["ContentLength"] for k in ("table.parquet", "members.zip")}
    print(f"Parquet {sizes['table.parquet'] / MIB:.1f} MiB, ZIP {sizes['members.zip'] / MIB:.1f} MiB; median of {RUNS}")
    print("| work | reader | time | vs slipstream |")
    print("|---|---|---:|---:|")
    for (w, tool), ts in times.items():
        m, base = statistics.median(ts), statistics.median(times[(w, TOOLS[0])])
        print(f"| {w} | {tool} | {m * 1000:,.0f} ms | {m / base:.2f}x |")
    print(f"(pyarrow {pa.__version__}, obstore {obstore.__version__}, boto3 {boto3.__version__})")


if __name__ == "__main__":
    main()
