#!/usr/bin/env bash
# A profile's transfer settings (`s3 =` multipart_chunksize, multipart_threshold,
# max_concurrent_requests), read by the AWS CLI and by slipstream: the same profile file for
# both, one large object and a directory of small files each uploaded and downloaded, against
# versitygw on loopback. Three contenders: the AWS CLI with the profile, slipstream with the
# profile, and slipstream with an empty profile (its own choices by the path's length). Every
# tool in its own process; rounds alternate them. Printed: median seconds, slipstream's speed-up
# over the AWS CLI under the same settings, and what obeying the profile costs or gains
# slipstream against its own defaults.
#
#   scripts/bench-profile.sh [SIZE_MIB] [FILES] [ROUNDS] [REQUESTS] [CHUNK]
#       (defaults 256 1000 3 20 16MB; small files 16 KiB)
#
# Needs make build and make setup (the AWS CLI, versitygw).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MIB=${1:-256}
FILES=${2:-1000}
ROUNDS=${3:-3}
REQUESTS=${4:-20}
CHUNK=${5:-16MB}
if [ "${BENCH_PROFILE_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  BENCH_PROFILE_INNER=1 exec scripts/with-s3-server.sh "$0" "$@"
fi
BIN=$PWD/target/release/slipstream AWS=$PWD/.tools/awscli-venv/bin/aws
END=$SLIPSTREAM_TEST_ENDPOINT
export AWS_REGION=$SLIPSTREAM_TEST_REGION
WORK=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$WORK"' EXIT
printf '[default]\ns3 =\n  multipart_chunksize = %s\n  multipart_threshold = %s\n  max_concurrent_requests = %s\n' \
  "$CHUNK" "$CHUNK" "$REQUESTS" > "$WORK/tuned"
printf '[default]\n' > "$WORK/empty"
unset AWS_PROFILE AWS_DEFAULT_PROFILE
BUCKET=profile-bench-$RANDOM$RANDOM
AWS_CONFIG_FILE=$WORK/empty "$BIN" mb "s3://$BUCKET" --endpoint-url "$END" --path-style >/dev/null
. scripts/bench-lib.sh
make_workloads "$WORK" "$SIZE_MIB" "$FILES"

# once TOOL WORKLOAD WAY: seconds taken (the download checked against the source).
once() {
  local tool=$1 load=$2 way=$3 config=$WORK/tuned
  [ "$tool" = slipstream-own ] && config=$WORK/empty
  workload_paths "$WORK" "$BUCKET" "$tool" "$load" "$way"
  case $tool in
    slipstream*) timed_copy "$WORK" "$load" "$way" env AWS_CONFIG_FILE="$config" "$BIN" cp "${RECURSIVE[@]}" "$SRC" "$DST" --endpoint-url "$END" --path-style --quiet ;;
    aws) timed_copy "$WORK" "$load" "$way" env AWS_CONFIG_FILE="$config" "$AWS" s3 cp "${RECURSIVE[@]}" "$SRC" "$DST" --endpoint-url "$END" --only-show-errors ;;
  esac
}

declare -A TIMES
alternate "$ROUNDS" "slipstream slipstream-own aws" once || exit 1

echo "profile: multipart_chunksize = multipart_threshold = $CHUNK, max_concurrent_requests = $REQUESTS"
echo "| workload | way | AWS CLI, profile (s) | slipstream, profile (s) | slipstream, own choices (s) | profile: slipstream / AWS CLI speed | slipstream: profile / own time |"
echo "|---|---|---:|---:|---:|---:|---:|"
for load in big small; do
  case $load in
    big) what="1 x $SIZE_MIB MiB" ;;
    small) what="$FILES x 16 KiB" ;;
  esac
  for way in up down; do
    a=$(echo "${TIMES[$load/$way/aws]}" | median)
    s=$(echo "${TIMES[$load/$way/slipstream]}" | median)
    o=$(echo "${TIMES[$load/$way/slipstream-own]}" | median)
    echo "| $what | $way | $a | $s | $o | $(awk -v s="$s" -v a="$a" 'BEGIN { printf "%.1fx", a / s }') | $(awk -v s="$s" -v o="$o" 'BEGIN { printf "%.2f", s / o }') |"
  done
done
echo "(all runs, s: $(for k in "${!TIMES[@]}"; do printf '%s: %s; ' "$k" "${TIMES[$k]}"; done))"
