#!/usr/bin/env bash
# What a flag of `cp` costs (`--debug`, `--case-conflict error`...): a directory of small files
# and one large object, each uploaded and downloaded by slipstream with and without FLAGS (what
# they print on standard error written to a file in /dev/shm), against versitygw on loopback;
# rounds alternate the two. Printed: median seconds, the ratio, and the lines written to
# standard error per run with FLAGS.
#
#   scripts/bench-flag.sh "FLAGS" [FILES] [SIZE_MIB] [ROUNDS]    (defaults 1000 256 5; small files 16 KiB)
#   scripts/bench-flag.sh --debug 1000 256 5
#
# Needs make build and make setup (versitygw).
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a FLAGS <<< "${1:?give the flags to measure, e.g. --debug}"
FILES=${2:-1000}
SIZE_MIB=${3:-256}
ROUNDS=${4:-5}
if [ "${BENCH_FLAG_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  BENCH_FLAG_INNER=1 exec scripts/with-s3-server.sh "$0" "$@"
fi
BIN=$PWD/target/release/slipstream
AT=(--endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style --quiet)
WORK=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$WORK"' EXIT
BUCKET=flag-bench-$RANDOM$RANDOM
"$BIN" mb "s3://$BUCKET" "${AT[@]:0:3}" >/dev/null
. scripts/bench-lib.sh
make_workloads "$WORK" "$SIZE_MIB" "$FILES"

# once MODE WORKLOAD WAY: seconds taken; the lines written to standard error kept in LINES.
once() {
  local mode=$1 load=$2 way=$3 flags=()
  [ "$mode" = flagged ] && flags=("${FLAGS[@]}")
  workload_paths "$WORK" "$BUCKET" "$mode" "$load" "$way"
  timed_copy "$WORK" "$load" "$way" "$BIN" cp "${RECURSIVE[@]}" "$SRC" "$DST" "${AT[@]}" "${flags[@]}" 2>"$WORK/stderr" || return 1
  LINES[$load/$way/$mode]=$(wc -l < "$WORK/stderr")
}

declare -A TIMES LINES
alternate "$ROUNDS" "plain flagged" once || exit 1

echo "flags: ${FLAGS[*]}"
echo "| workload | way | without (s) | with (s) | with / without | lines on stderr |"
echo "|---|---|---:|---:|---:|---:|"
for load in small big; do
  case $load in
    big) what="1 x $SIZE_MIB MiB" ;;
    small) what="$FILES x 16 KiB" ;;
  esac
  for way in up down; do
    p=$(echo "${TIMES[$load/$way/plain]}" | median)
    d=$(echo "${TIMES[$load/$way/flagged]}" | median)
    echo "| $what | $way | $p | $d | $(awk -v p="$p" -v d="$d" 'BEGIN { printf "%.2f", d / p }') | ${LINES[$load/$way/flagged]} |"
  done
done
echo "(all runs, s: $(for k in "${!TIMES[@]}"; do printf '%s: %s; ' "$k" "${TIMES[$k]}"; done))"
