#!/usr/bin/env bash
# A sync whose source is a wildcard (s5cmd's `sync 's3://b/logs/m1-*/*' dir/`): slipstream against
# s5cmd, on versitygw over loopback. The prefix holds MONTHS directories of PER_MONTH objects
# of 16 KiB; the wildcard matches one month. Each round: the first sync into an empty
# directory (PER_MONTH downloads), then the same sync again (nothing to do: the two listings
# and the comparison), each tool in turn, the order reversed every other round. Printed:
# medians and ratios.
#
#   scripts/bench-sync-wildcard.sh [MONTHS] [PER_MONTH] [ROUNDS]    (defaults 10 1000 5)
#
# Needs make build and make setup (versitygw, s5cmd).
set -euo pipefail
cd "$(dirname "$0")/.."
MONTHS=${1:-10}
PER_MONTH=${2:-1000}
ROUNDS=${3:-5}
if [ "${BENCH_SW_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  BENCH_SW_INNER=1 exec scripts/with-s3-server.sh "$0" "$@"
fi
. scripts/bench-lib.sh
BIN=$PWD/target/release/slipstream
AT=(--endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style)
S5=(.venv/bin/s5cmd --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT")
WORK=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$WORK"' EXIT
BUCKET=sync-wildcard-$RANDOM$RANDOM
"$BIN" mb "s3://$BUCKET" "${AT[@]}" >/dev/null
for m in $(seq 1 "$MONTHS"); do
  mkdir -p "$WORK/tree/m$m-data"
  for i in $(seq 1 "$PER_MONTH"); do head -c 16384 /dev/urandom > "$WORK/tree/m$m-data/f$i"; done
done
"$BIN" cp --recursive --quiet "$WORK/tree" "s3://$BUCKET/logs/" "${AT[@]}"
rm -rf "$WORK/tree"
SOURCE="s3://$BUCKET/logs/m1-*/*"

# once WHO: the first sync and the second, in seconds, into TIMES[WHO/first] and [WHO/again].
once() {
  local who=$1 t0 t1 t2 cmd
  rm -rf "$WORK/$who"
  case $who in
    ours) cmd=("$BIN" sync "$SOURCE" "$WORK/$who/" "${AT[@]}" --quiet) ;;
    s5cmd) cmd=("${S5[@]}" sync "$SOURCE" "$WORK/$who/") ;;
  esac
  t0=$(date +%s.%N)
  "${cmd[@]}" > /dev/null
  t1=$(date +%s.%N)
  "${cmd[@]}" > /dev/null
  t2=$(date +%s.%N)
  [ "$(find "$WORK/$who" -type f | wc -l)" = "$PER_MONTH" ] || { echo "$who wrote the wrong files" >&2; exit 1; }
  TIMES[$who/first]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') "
  TIMES[$who/again]+="$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.3f", b - a }') "
}

declare -A TIMES
for round in $(seq 1 "$ROUNDS"); do
  order="ours s5cmd"
  if [ $(( round % 2 )) = 0 ]; then order="s5cmd ours"; fi
  for who in $order; do once "$who"; done
  echo "round $round done" >&2
done
echo "| sync 's3://b/logs/m1-*/*' dir/ ($PER_MONTH of $(( MONTHS * PER_MONTH )) objects of 16 KiB), median of $ROUNDS | slipstream | s5cmd | s5cmd / slipstream |"
echo "|---|---:|---:|---:|"
for what in first again; do
  o=$(echo "${TIMES[ours/$what]}" | median)
  t=$(echo "${TIMES[s5cmd/$what]}" | median)
  echo "| $what | $o s | $t s | $(awk -v o="$o" -v t="$t" 'BEGIN { printf "%.2fx", t / o }') |"
done
echo "(all runs, s: $(for k in "${!TIMES[@]}"; do printf '%s: %s; ' "$k" "${TIMES[$k]}"; done))"
