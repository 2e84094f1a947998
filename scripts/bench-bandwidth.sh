#!/usr/bin/env bash
# How closely a bandwidth cap is kept: one object of SECONDS x the cap, downloaded and uploaded
# under each cap, by slipstream (`cp --max-bandwidth`) and the AWS CLI (its profile's
# `s3.max_bandwidth`, the same rate in the same units), each in its own process, over plain
# HTTP to the local versitygw. Rounds alternate the tools and the two ways. Printed: the median
# rate reached, and that rate over the cap (1.00 keeps it exactly; over 1 exceeds it).
#
#   scripts/bench-bandwidth.sh [CAPS_MIB] [SECONDS] [ROUNDS]    (defaults "10 50 200" 6 3)
#
# Needs make build and make setup (the AWS CLI). Server data and files on /dev/shm.
set -euo pipefail
cd "$(dirname "$0")/.."
CAPS=${1:-10 50 200}
SECONDS_EACH=${2:-6}
ROUNDS=${3:-3}
if [ "${BENCH_BW_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  BENCH_BW_INNER=1 SLIPSTREAM_S3_DATA=/dev/shm exec scripts/with-s3-server.sh "$0" "$CAPS" "$SECONDS_EACH" "$ROUNDS"
fi
BIN=$PWD/target/release/slipstream AWS=$PWD/.tools/awscli-venv/bin/aws
END=$SLIPSTREAM_TEST_ENDPOINT
export AWS_REGION=$SLIPSTREAM_TEST_REGION
# As in bench-proxy.sh: versitygw 1.8.0 refuses botocore's aws-chunked UploadPart now and then.
export AWS_REQUEST_CHECKSUM_CALCULATION=when_required
WORK=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$WORK"' EXIT
BUCKET=bw-bench-$RANDOM$RANDOM
"$BIN" mb "s3://$BUCKET" --endpoint-url "$END" --path-style >/dev/null

# once TOOL DIRECTION CAP_MIB: the rate reached, MiB/s.
once() {
  local tool=$1 dir=$2 cap=$3 size=$(( $3 * SECONDS_EACH )) t0 t1
  rm -f "$WORK/down"
  printf '[default]\ns3 =\n  max_bandwidth = %sMB/s\n' "$cap" > "$WORK/aws-config"
  t0=$(date +%s.%N)
  case "$tool/$dir" in
    slipstream/down) "$BIN" cp "s3://$BUCKET/$cap" "$WORK/down" --endpoint-url "$END" --path-style --quiet --max-bandwidth "${cap}MB/s" ;;
    slipstream/up) "$BIN" cp "$WORK/src-$cap" "s3://$BUCKET/up" --endpoint-url "$END" --path-style --quiet --max-bandwidth "${cap}MB/s" ;;
    aws/down) AWS_CONFIG_FILE=$WORK/aws-config "$AWS" s3 cp "s3://$BUCKET/$cap" "$WORK/down" --endpoint-url "$END" --only-show-errors ;;
    aws/up) AWS_CONFIG_FILE=$WORK/aws-config "$AWS" s3 cp "$WORK/src-$cap" "s3://$BUCKET/up" --endpoint-url "$END" --only-show-errors ;;
  esac || return 1
  t1=$(date +%s.%N)
  if [ "$dir" = down ] && ! cmp -s "$WORK/src-$cap" "$WORK/down"; then
    echo "bench-bandwidth: $tool's download differs from the object" >&2
    return 1
  fi
  awk -v a="$t0" -v b="$t1" -v s="$size" 'BEGIN { printf "%.2f\n", s / (b - a) }'
}

for cap in $CAPS; do
  head -c $(( cap * SECONDS_EACH << 20 )) /dev/urandom > "$WORK/src-$cap"
  "$BIN" cp "$WORK/src-$cap" "s3://$BUCKET/$cap" --endpoint-url "$END" --path-style --quiet
done

declare -A RATES
for round in $(seq 1 "$ROUNDS"); do
  for cap in $CAPS; do
    for dir in down up; do
      for tool in slipstream aws; do
        r=$(once "$tool" "$dir" "$cap") || exit 1
        RATES[$cap/$dir/$tool]+="$r "
      done
    done
  done
  echo "round $round done" >&2
done

. scripts/bench-lib.sh
echo "| cap | way | slipstream MiB/s | / cap | AWS CLI MiB/s | / cap |"
echo "|---:|---|---:|---:|---:|---:|"
for cap in $CAPS; do
  for dir in down up; do
    s=$(echo "${RATES[$cap/$dir/slipstream]}" | median)
    a=$(echo "${RATES[$cap/$dir/aws]}" | median)
    echo "| ${cap} MiB/s | $dir | $s | $(awk -v r="$s" -v c="$cap" 'BEGIN { printf "%.2f", r / c }') | $a | $(awk -v r="$a" -v c="$cap" 'BEGIN { printf "%.2f", r / c }') |"
  done
done
echo "(all runs, MiB/s: $(for k in "${!RATES[@]}"; do printf '%s: %s; ' "$k" "${RATES[$k]}"; done))"
