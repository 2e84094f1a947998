"""`Client.download_fileobj` and `Client.upload_fileobj` against boto3's calls of the same names,
each with its defaults, on the server `scripts/with-s3-server.sh` starts (loopback, or the far
side of scripts/wan with CLIENT="scripts/wan exec client" in front of the command).

    scripts/with-s3-server.sh .venv/bin/python bindings/python/bench/fileobj_bench.py [SIZE_MIB] [ROUNDS]

Rows: a download into a file opened "wb", a download into a writer that drops the bytes (the
transfer alone), the object read as a stream (`Client.open` against `get_object()["Body"]`) in
1 MiB reads and by lines (`for line in f` against botocore's `iter_lines()`; random bytes hold
a newline every 256 bytes or so), an upload from a file opened "rb". Every measurement runs in a fresh process
(the call alone is timed, imports and the client's construction not) under GNU time, so that
its peak RSS is its own (a child forked from this process would start with this one's); the tools alternate within each round, so both see the machine alike. Prints a
Markdown table of medians, the ratio (boto3's time / slipstream's) and the largest peak RSS."""

import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

ENDPOINT = os.environ["SLIPSTREAM_TEST_ENDPOINT"]
REGION = os.environ["SLIPSTREAM_TEST_REGION"]


class Drop:
    """A writer that keeps nothing: what a download costs without a disk behind it."""

    def write(self, data):
        return len(data)


def client(tool):
    if tool == "slipstream":
        import slipstream

        creds = slipstream.Credentials(os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"])
        return slipstream.Client(region=REGION, endpoint_url=ENDPOINT, addressing="path", credentials=creds)
    import boto3
    from botocore.config import Config

    return boto3.client("s3", endpoint_url=ENDPOINT, region_name=REGION, config=Config(s3={"addressing_style": "path"}))


def one(tool, op, bucket, key, path):
    """Runs one call in this process; prints its seconds."""
    c = client(tool)
    slip = tool == "slipstream"
    started = time.perf_counter()
    if op == "download to a file":
        with open(path, "wb") as f:
            c.download_fileobj(bucket, key, f) if slip else c.download_fileobj(Bucket=bucket, Key=key, Fileobj=f)
    elif op == "download, bytes dropped":
        c.download_fileobj(bucket, key, Drop()) if slip else c.download_fileobj(Bucket=bucket, Key=key, Fileobj=Drop())
    elif op == "read in 1 MiB reads":
        f = c.open(bucket, key) if slip else c.get_object(Bucket=bucket, Key=key)["Body"]
        while f.read(1 << 20):
            pass
    elif op == "read by lines":
        if slip:
            for _ in c.open(bucket, key):
                pass
        else:
            for _ in c.get_object(Bucket=bucket, Key=key)["Body"].iter_lines():
                pass
    else:
        with open(path, "rb") as f:
            c.upload_fileobj(f, bucket, key) if slip else c.upload_fileobj(Fileobj=f, Bucket=bucket, Key=key)
    seconds = time.perf_counter() - started
    print(seconds)


def main():
    size_mib = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    import boto3

    s3 = client("boto3")
    bucket = f"fileobj-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    work = tempfile.mkdtemp()
    src = os.path.join(work, "src")
    with open(src, "wb") as f:
        f.write(os.urandom(size_mib << 20))
    s3.upload_file(src, bucket, "object")
    ops = ["download to a file", "download, bytes dropped", "read in 1 MiB reads", "read by lines", "upload from a file"]
    tools = ["slipstream", "boto3"]
    times = {(o, t): [] for o in ops for t in tools}
    rss = {(o, t): 0.0 for o in ops for t in tools}
    for r in range(rounds):
        for op in ops:
            for tool in tools if r % 2 == 0 else reversed(tools):
                key = f"up-{tool}" if op.startswith("upload") else "object"
                dst = os.path.join(work, "dst")
                subprocess.run(["sync"], check=True)
                peak = os.path.join(work, "rss")
                out = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", peak, sys.executable, __file__, "--one",
                                      tool, op, bucket, key, src if key != "object" else dst],
                                     check=True, capture_output=True, text=True).stdout
                times[(op, tool)].append(float(out))
                with open(peak) as f:
                    rss[(op, tool)] = max(rss[(op, tool)], int(f.read().split()[-1]) / 1024)
                if op == "download to a file" and os.path.getsize(dst) != size_mib << 20:
                    raise SystemExit(f"{tool}: the file has {os.path.getsize(dst)} bytes")
                if key != "object":
                    assert s3.head_object(Bucket=bucket, Key=key)["ContentLength"] == size_mib << 20
    print(f"| {size_mib} MiB, median of {rounds} | slipstream | boto3 | boto3 / slipstream | peak RSS (slipstream / boto3) |")
    print("|---|---:|---:|---:|---:|")
    for op in ops:
        a, b = statistics.median(times[(op, "slipstream")]), statistics.median(times[(op, "boto3")])
        print(f"| {op} | {a:.2f} s | {b:.2f} s | **{b / a:.1f}x** | "
              f"{rss[(op, 'slipstream')]:.0f} / {rss[(op, 'boto3')]:.0f} MiB |")
    print(f"(boto3 {boto3.__version__})")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        one(*sys.argv[2:7])
    else:
        main()
