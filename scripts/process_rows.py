"""The rows of a Python benchmark, each run in a process of its own (fresh memory, the builds
side by side through PYTHONPATH), the rows in turn within each round, the medians compared:
shared by scripts/bench-get-bytes.py and scripts/bench-put-bytes.py.

A row is Python code that defines `call(i)`, the call timed (`i` counts the calls of the
process); `timed` adds the loop that times it.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys


def timed(repeat: int, check: str = "") -> str:
    """The loop a row's code ends with: `call(i)` `repeat` times, each call's seconds printed,
    `check` (code about `result`) after each. The process ends with `os._exit`: builds
    before 07c040f could abort at exit after an awaited call (exit.rs), and the figures are
    printed by then."""
    return f"""
import os as _os, sys as _sys, time as _time
for i in range({repeat}):
    t = _time.perf_counter(); result = call(i); t = _time.perf_counter() - t
    {check or "pass"}
    print(t)
    del result
_sys.stdout.flush()
_os._exit(0)
"""


def bucket(name: str, region: str, endpoint: str):
    """A boto3 client, and the bucket `name` made if it is not there."""
    import boto3

    s3 = boto3.client("s3", region_name=region, endpoint_url=endpoint)
    try:
        s3.create_bucket(Bucket=name)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass
    return s3


def run(code: str, pythonpath: str | None, repeat: int) -> list[float]:
    """Runs `code` in a new interpreter; its seconds, the first left out when there are
    several (the client and its connections warm, as a long-running service's calls)."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"a row failed ({out.returncode}):\n{out.stderr}")
    seconds = [float(line) for line in out.stdout.split()]
    return seconds[1:] if repeat > 1 else seconds


def rounds(rows: dict[str, tuple[str, str | None]], count: int, repeat: int) -> dict[str, list[float]]:
    """`count` rounds of every row (`name: (code, PYTHONPATH or None)`), in turn."""
    times: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(count):
        for name, (code, pythonpath) in rows.items():
            times[name] += run(code, pythonpath, repeat)
    return times


def report(title: str, times: dict[str, list[float]], base: str) -> None:
    """Every row's median and range, then each median's ratio to `base`'s."""
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    print(title)
    for name, ts in times.items():
        print(f"  {name:45} median {medians[name]:.4f} s  ({min(ts):.4f}-{max(ts):.4f})")
    for name, m in medians.items():
        if name != base:
            print(f"  {name} / {base}: {m / medians[base]:.2f}x")
