#!/usr/bin/env bash
# What `--debug` costs: a directory of small files and one large object, each uploaded and
# downloaded by slipstream with and without --debug (its lines written to a file in /dev/shm),
# against versitygw on loopback; rounds alternate the two. Printed: median seconds, the ratio,
# and the lines --debug wrote per run.
#
#   scripts/bench-debug.sh [FILES] [SIZE_MIB] [ROUNDS]    (defaults 1000 256 5; small files 16 KiB)
#
# Needs make build and make setup (versitygw).
set -euo pipefail
cd "$(dirname "$0")/.."
FILES=${1:-1000}
SIZE_MIB=${2:-256}
ROUNDS=${3:-5}
if [ "${BENCH_DEBUG_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  BENCH_DEBUG_INNER=1 exec scripts/with-s3-server.sh "$0" "$@"
fi
BIN=$PWD/target/release/slipstream
AT=(--endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style --quiet)
WORK=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$WORK"' EXIT
BUCKET=debug-bench-$RANDOM$RANDOM
"$BIN" mb "s3://$BUCKET" "${AT[@]:0:3}" >/dev/null
head -c $(( SIZE_MIB << 20 )) /dev/urandom > "$WORK/big"
mkdir -p "$WORK/small"
for i in $(seq 1 "$FILES"); do head -c 16384 /dev/urandom > "$WORK/small/f$i"; done

# once MODE WORKLOAD WAY: seconds taken.
once() {
  local mode=$1 load=$2 way=$3 t0 t1 src dst flags=()
  [ "$mode" = debug ] && flags=(--debug)
  rm -rf "$WORK/down"
  case "$load/$way" in
    big/up) src=$WORK/big dst=s3://$BUCKET/$mode/big ;;
    big/down) src=s3://$BUCKET/$mode/big dst=$WORK/down ;;
    small/up) src=$WORK/small dst=s3://$BUCKET/$mode/small/ ;;
    small/down) src=s3://$BUCKET/$mode/small/ dst=$WORK/down/ ;;
  esac
  local recursive=()
  [ "$load" = small ] && recursive=(--recursive)
  t0=$(date +%s.%N)
  "$BIN" cp "${recursive[@]}" "$src" "$dst" "${AT[@]}" "${flags[@]}" 2>"$WORK/stderr"
  t1=$(date +%s.%N)
  LINES[$load/$way/$mode]=$(wc -l < "$WORK/stderr")
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

declare -A TIMES LINES
for round in $(seq 1 "$ROUNDS"); do
  for load in small big; do
    for way in up down; do
      for mode in plain debug; do
        once "$mode" "$load" "$way" > "$WORK/t"
        TIMES[$load/$way/$mode]+="$(cat "$WORK/t") "
      done
    done
  done
  echo "round $round done" >&2
done

. scripts/bench-lib.sh
echo "| workload | way | without --debug (s) | with --debug (s) | with / without | lines written |"
echo "|---|---|---:|---:|---:|---:|"
for load in small big; do
  case $load in
    big) what="1 x $SIZE_MIB MiB" ;;
    small) what="$FILES x 16 KiB" ;;
  esac
  for way in up down; do
    p=$(echo "${TIMES[$load/$way/plain]}" | median)
    d=$(echo "${TIMES[$load/$way/debug]}" | median)
    echo "| $what | $way | $p | $d | $(awk -v p="$p" -v d="$d" 'BEGIN { printf "%.2f", d / p }') | ${LINES[$load/$way/debug]} |"
  done
done
echo "(all runs, s: $(for k in "${!TIMES[@]}"; do printf '%s: %s; ' "$k" "${TIMES[$k]}"; done))"
