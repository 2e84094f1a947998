#!/usr/bin/env bash
# What SSE-C costs and how it compares: one large object, and a directory of small ones, each
# uploaded and downloaded with a customer key by slipstream (`--sse-c --sse-c-key`) and the AWS
# CLI (the same flags), and by slipstream without a key, against MinIO over TLS on loopback
# (S3 and MinIO take SSE-C over HTTPS only; versitygw ignores it). Every tool in its own
# process; rounds alternate the tools. Printed: median seconds, slipstream's SSE-C speed-up
# over the AWS CLI's, and SSE-C's cost to slipstream (its time with the key over without).
#
#   scripts/bench-sse-c.sh [SIZE_MIB] [FILES] [ROUNDS]    (defaults 256 500 3; small files 16 KiB)
#
# Needs make build and make setup (the AWS CLI, MinIO).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MIB=${1:-256}
FILES=${2:-500}
ROUNDS=${3:-3}
if [ "${BENCH_SSEC_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  BENCH_SSEC_INNER=1 SLIPSTREAM_MINIO_TLS=1 exec scripts/with-minio.sh "$0" "$SIZE_MIB" "$FILES" "$ROUNDS"
fi
BIN=$PWD/target/release/slipstream AWS=$PWD/.tools/awscli-venv/bin/aws
END=$SLIPSTREAM_TEST_ENDPOINT
export AWS_REGION=$SLIPSTREAM_TEST_REGION AWS_CA_BUNDLE=$SLIPSTREAM_TEST_CA
KEY=0123456789abcdef0123456789abcdef
WORK=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$WORK"' EXIT
BUCKET=ssec-bench-$RANDOM$RANDOM
"$BIN" mb "s3://$BUCKET" --endpoint-url "$END" >/dev/null
. scripts/bench-lib.sh
make_workloads "$WORK" "$SIZE_MIB" "$FILES"

# once TOOL WORKLOAD WAY: seconds taken (the download checked against the source).
once() {
  local tool=$1 load=$2 way=$3 key=()
  case $tool in
    slipstream-sse-c | aws-sse-c) key=(--sse-c AES256 --sse-c-key "$KEY") ;;
  esac
  workload_paths "$WORK" "$BUCKET" "$tool" "$load" "$way"
  case $tool in
    slipstream*) timed_copy "$WORK" "$load" "$way" "$BIN" cp "${RECURSIVE[@]}" "$SRC" "$DST" --endpoint-url "$END" --quiet "${key[@]}" ;;
    aws*) timed_copy "$WORK" "$load" "$way" "$AWS" s3 cp "${RECURSIVE[@]}" "$SRC" "$DST" --endpoint-url "$END" --only-show-errors "${key[@]}" ;;
  esac
}

declare -A TIMES
alternate "$ROUNDS" "slipstream slipstream-sse-c aws-sse-c" once || exit 1

echo "| workload | way | slipstream, no key (s) | slipstream SSE-C (s) | AWS CLI SSE-C (s) | SSE-C: slipstream / AWS CLI speed | SSE-C's cost to slipstream |"
echo "|---|---|---:|---:|---:|---:|---:|"
for load in big small; do
  case $load in
    big) what="1 x $SIZE_MIB MiB" ;;
    small) what="$FILES x 16 KiB" ;;
  esac
  for way in up down; do
    p=$(echo "${TIMES[$load/$way/slipstream]}" | median)
    s=$(echo "${TIMES[$load/$way/slipstream-sse-c]}" | median)
    a=$(echo "${TIMES[$load/$way/aws-sse-c]}" | median)
    echo "| $what | $way | $p | $s | $a | $(awk -v s="$s" -v a="$a" 'BEGIN { printf "%.1fx", a / s }') | $(awk -v s="$s" -v p="$p" 'BEGIN { printf "%.2fx", s / p }') |"
  done
done
echo "(all runs, s: $(for k in "${!TIMES[@]}"; do printf '%s: %s; ' "$k" "${TIMES[$k]}"; done))"
