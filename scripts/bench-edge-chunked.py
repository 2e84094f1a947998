"""boto3's chunked uploads through two gateway binaries, alternating: what not reusing the
connection a chunked upload went out on costs (pool.rs). boto3 over HTTPS sends every PUT
aws-chunked with HTTP chunked framing; the gateway now closes that upstream connection after
the answer and its keeper dials a new one in the background.

Rows: 1 KiB PUTs one after another (COUNT), and from 8 threads (COUNT each round in all);
each a PUT followed by a GET of the same key, on the same boto3 client. The gateway forwards
to the origin over HTTPS where there is one (SLIPSTREAM_TEST_TLS_ENDPOINT: a dial is then a TCP
and a TLS handshake), else over HTTP (scripts/with-minio.sh: MinIO reads a chunked body to its
end, so there the old binary reuses the connection and the new one dials). Printed: the median seconds per round for each binary, the gateway's CPU time per pair
(its process's user and system time over the round), the requests that failed, and the
gateway's dials and waits (requests that found no warm connection).

    scripts/with-s3-server.sh .venv/bin/python scripts/bench-edge-chunked.py OLD_BIN NEW_BIN [ROUNDS] [COUNT]
    scripts/with-minio.sh .venv/bin/python scripts/bench-edge-chunked.py OLD_BIN NEW_BIN [ROUNDS] [COUNT]

With SLIPSTREAM_S3_NETNS set (scripts/wan up), run it as `scripts/wan exec client ...`: the
origin is then across the emulated link and the gateway beside the client.
"""

from __future__ import annotations

import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import boto3
from botocore.config import Config

ROOT = pathlib.Path(__file__).resolve().parent.parent
# versitygw's HTTPS server under scripts/with-s3-server.sh; the plain one elsewhere (MinIO).
ORIGIN = os.environ.get("SLIPSTREAM_TEST_TLS_ENDPOINT") or os.environ["SLIPSTREAM_TEST_ENDPOINT"]


def gateway(binary: str, work: pathlib.Path, port: int) -> subprocess.Popen:
    err = work / f"gw-{port}.err"
    origin = ["--origin", ORIGIN] + (["--origin-ca-bundle", os.environ["SLIPSTREAM_TEST_CA"]] if ORIGIN.startswith("https:") else [])
    p = subprocess.Popen([binary, "gateway", "--listen", f"127.0.0.1:{port}", "--metrics-listen", f"127.0.0.1:{port + 1}",
                          *origin, "--tls-cert", str(work / "edge.pem"), "--tls-key", str(work / "edge.key")],
                         stderr=open(err, "wb"))
    while "listening on" not in err.read_text():
        if p.poll() is not None:
            sys.exit(f"the gateway exited: {err.read_text()}")
        time.sleep(0.02)
    return p


def metrics(port: int) -> dict[str, float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port + 1}/metrics", timeout=5).read().decode()
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^(gateway_upstream_\w+_total) (\S+)$", text, re.M)}


def cpu_seconds(pid: int) -> float:
    """The process's user and system CPU time so far."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def client(port: int, ca: str):
    return boto3.client("s3", endpoint_url=f"https://localhost:{port}", region_name=os.environ["SLIPSTREAM_TEST_REGION"],
                        verify=ca, config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1},
                                                 max_pool_connections=8))


def run(c, bucket: str, keys: range, threads: int) -> int:
    body = os.urandom(1024)
    failed = 0
    lock = threading.Lock()

    def one(i: int) -> None:
        nonlocal failed
        try:
            c.put_object(Bucket=bucket, Key=f"k{i}", Body=body)
            assert c.get_object(Bucket=bucket, Key=f"k{i}")["Body"].read() == body
        except Exception:  # noqa: BLE001  (counted: a failure is the figure)
            with lock:
                failed += 1

    if threads == 1:
        for i in keys:
            one(i)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, keys))
    return failed


def main() -> None:
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 300
    work = pathlib.Path(tempfile.mkdtemp())
    subprocess.run([str(ROOT / "scripts" / "test-cert.sh"), str(work), "edge", "DNS:localhost,IP:127.0.0.1"], check=True)
    direct = boto3.client("s3", endpoint_url=ORIGIN, verify=os.environ.get("SLIPSTREAM_TEST_CA", True),
                          region_name=os.environ["SLIPSTREAM_TEST_REGION"])
    if "edge-chunked" not in [b["Name"] for b in direct.list_buckets()["Buckets"]]:
        direct.create_bucket(Bucket="edge-chunked")
    times: dict[tuple[str, int], list[float]] = {}
    totals: dict[tuple[str, int], list[float]] = {}
    cpus: dict[tuple[str, int], list[float]] = {}
    port = 18300
    for r in range(rounds):
        for name, binary in (("old", old), ("new", new)) if r % 2 == 0 else (("new", new), ("old", old)):
            for threads in (1, 8):
                port += 2
                g = gateway(binary, work, port)
                try:
                    c = client(port, str(work / "ca.pem"))
                    run(c, "edge-chunked", range(8), 1)  # the client's own connections and TLS
                    before = metrics(port)
                    cpu = cpu_seconds(g.pid)
                    started = time.perf_counter()
                    failed = run(c, "edge-chunked", range(count), threads)
                    took = time.perf_counter() - started
                    cpu = cpu_seconds(g.pid) - cpu
                    after = metrics(port)
                finally:
                    g.terminate()
                    g.wait()
                times.setdefault((name, threads), []).append(took)
                cpus.setdefault((name, threads), []).append(cpu / count)
                d = {k: after.get(k, 0) - before.get(k, 0) for k in after}
                row = totals.setdefault((name, threads), [0, 0, 0, 0])
                row[0] += failed
                row[1] += d.get("gateway_upstream_dials_total", 0)
                row[2] += d.get("gateway_upstream_waits_total", 0)
                row[3] += d.get("gateway_upstream_not_reused_total", 0)
                print(f"round {r + 1} {name} threads={threads}: {took:.3f} s, failed {failed}, "
                      f"dials {d.get('gateway_upstream_dials_total', 0):.0f}, waits {d.get('gateway_upstream_waits_total', 0):.0f}",
                      flush=True)
    print(f"\n{count} PUT+GET pairs of 1 KiB a round, medians of {rounds} rounds")
    print("| | old | new | new/old | gateway CPU a pair old / new | failed old/new | dials old/new | waits old/new |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for threads in (1, 8):
        o, n = statistics.median(times[("old", threads)]), statistics.median(times[("new", threads)])
        co, cn = statistics.median(cpus[("old", threads)]) * 1e6, statistics.median(cpus[("new", threads)]) * 1e6
        to, tn = totals[("old", threads)], totals[("new", threads)]
        print(f"| {'sequential' if threads == 1 else '8 threads'} | {o:.3f} s | {n:.3f} s | {n / o:.2f} | {co:.0f} / {cn:.0f} us | "
              f"{to[0]:.0f} / {tn[0]:.0f} | {to[1]:.0f} / {tn[1]:.0f} | {to[2]:.0f} / {tn[2]:.0f} |")


if __name__ == "__main__":
    main()
