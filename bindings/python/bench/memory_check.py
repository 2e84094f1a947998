"""Resident memory over 10 million presigns (issue 4: "no memory growth over 10 million calls").

    .venv/bin/python bindings/python/bench/memory_check.py

5,000,000 single calls (`presign_get`, and `presign` with params and headers) and 5,000,000 URLs
through `presign_many` (batches of 50,000, so the chunked pipeline and its buffers are used),
after a warm-up round; prints resident memory before and after. The test suite runs a shorter version
(1.5 million URLs) on every `make test`.
"""

import time

import slipstream


def rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


def main() -> None:
    creds = slipstream.Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "token")
    p = slipstream.Presigner("examplebucket", region="us-east-1", credentials=creds)
    keys = [f"m/{i}" for i in range(50_000)]

    def one_round() -> int:
        for k in keys:
            p.presign_get(k)
            p.presign("PUT", k, params={"partNumber": 1}, headers={"content-type": "x/y"})
        for _ in range(2):
            p.presign_many(keys)
        return 4 * len(keys)

    # One round first: allocator pools and presign_many's chunk buffers reach their size.
    one_round()
    before = rss_kib()
    start = time.perf_counter()
    calls = sum(one_round() for _ in range(50))
    after = rss_kib()
    print(f"{calls:,} URLs in {time.perf_counter() - start:.0f} s; RSS {before:,} KiB before, "
          f"{after:,} KiB after ({after - before:+,} KiB)")


if __name__ == "__main__":
    main()
