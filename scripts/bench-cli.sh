#!/usr/bin/env bash
# `slipstream presign` writing 1,000,000 URLs to /dev/null (median of RUNS runs, one thread and
# all cores), and boto3's generate_presigned_url on the same machine in the same run as anchor.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-7}"
bin=target/release/slipstream
py=.venv/bin/python
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY HOME="$work"
seq -f 'photos/2026/11/21/img-%07g.jpg' 1 1000000 > "$work/keys.txt"

median_rate() { # median URLs/s of RUNS runs of: slipstream presign ARGS < keys > /dev/null
  for _ in $(seq "$RUNS"); do
    start=$(date +%s%N)
    "$bin" presign --bucket examplebucket --region us-east-1 "$@" < "$work/keys.txt" > /dev/null
    end=$(date +%s%N)
    echo $(( 1000000 * 1000000000 / (end - start) ))
  done | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

one=$(median_rate --threads 1)
all=$(median_rate)
boto=$("$py" - <<'PY'
import time, statistics, botocore.session
from botocore.config import Config
c = botocore.session.get_session().create_client("s3", region_name="us-east-1", config=Config(signature_version="s3v4"))
keys = [f"photos/2026/11/21/img-{i:07d}.jpg" for i in range(20000)]
rates = []
for _ in range(3):
    t = time.perf_counter()
    for k in keys:
        c.generate_presigned_url("get_object", Params={"Bucket": "examplebucket", "Key": k}, ExpiresIn=3600)
    rates.append(len(keys) / (time.perf_counter() - t))
print(int(statistics.median(rates)))
PY
)
awk -v one="$one" -v all="$all" -v boto="$boto" 'BEGIN {
  printf "slipstream presign, 1 thread : %8d URLs/s  (%.0fx boto3)\n", one, one / boto
  printf "slipstream presign, all cores: %8d URLs/s  (%.0fx boto3)\n", all, all / boto
  printf "boto3 generate_presigned_url : %8d URLs/s  (anchor, one Python thread)\n", boto
}'
