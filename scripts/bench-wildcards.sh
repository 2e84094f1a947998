#!/usr/bin/env bash
# Wildcards as s5cmd users write them, slipstream against s5cmd on versitygw over loopback: a
# sync whose source is an S3 wildcard (`sync 's3://b/logs/m1-*/*' dir/`), and a cp whose
# source is a local glob (`cp 'tree/m1-*/*' s3://b/up/`), and a cat of the S3 wildcard's
# matches (`cat 's3://b/logs/m1-*/*'`, its bytes counted). The prefix and the directory hold
# MONTHS directories of PER_MONTH files of 16 KiB; the wildcard matches one month. Each round:
# the first sync into an empty directory (PER_MONTH downloads), the same sync again (nothing
# to do: the two listings and the comparison), the glob's upload to a new prefix, the cat; each
# tool in turn, the order reversed every other round. Printed: medians and ratios.
#
#   scripts/bench-wildcards.sh [MONTHS] [PER_MONTH] [ROUNDS]    (defaults 10 1000 5)
#
# Needs make build and make setup (versitygw, s5cmd).
set -euo pipefail
cd "$(dirname "$0")/.."
MONTHS=${1:-10}
PER_MONTH=${2:-1000}
ROUNDS=${3:-5}
if [ "${BENCH_WILDCARDS_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  BENCH_WILDCARDS_INNER=1 exec scripts/with-s3-server.sh "$0" "$@"
fi
. scripts/bench-lib.sh
bench_bucket wildcards
for m in $(seq 1 "$MONTHS"); do
  mkdir -p "$WORK/tree/m$m-data"
  for i in $(seq 1 "$PER_MONTH"); do head -c 16384 /dev/urandom > "$WORK/tree/m$m-data/f$i"; done
done
"$BIN" cp --recursive --quiet "$WORK/tree" "s3://$BUCKET/logs/" "${AT[@]}"
SOURCE="s3://$BUCKET/logs/m1-*/*"
GLOB="$WORK/tree/m1-*/*"

# once WHO ROUND: the first sync, the second, the glob's upload and the cat, in seconds, into
# TIMES[WHO/first], [WHO/again], [WHO/up] and [WHO/cat].
once() {
  local who=$1 t0 t1 t2 t3 t4 sync up cat bytes
  rm -rf "$WORK/$who"
  case $who in
    ours) sync=("$BIN" sync "$SOURCE" "$WORK/$who/" "${AT[@]}" --quiet)
          up=("$BIN" cp "$GLOB" "s3://$BUCKET/up-$who-$2/" "${AT[@]}" --quiet)
          cat=("$BIN" cat "$SOURCE" "${AT[@]}") ;;
    s5cmd) sync=("${S5[@]}" sync "$SOURCE" "$WORK/$who/")
           up=("${S5[@]}" cp "$GLOB" "s3://$BUCKET/up-$who-$2/")
           cat=("${S5[@]}" cat "$SOURCE") ;;
  esac
  t0=$(date +%s.%N)
  "${sync[@]}" > /dev/null
  t1=$(date +%s.%N)
  "${sync[@]}" > /dev/null
  t2=$(date +%s.%N)
  "${up[@]}" > /dev/null
  t3=$(date +%s.%N)
  bytes=$("${cat[@]}" | wc -c)
  t4=$(date +%s.%N)
  [ "$bytes" = $(( PER_MONTH * 16384 )) ] || { echo "$who's cat wrote $bytes bytes" >&2; exit 1; }
  [ "$(find "$WORK/$who" -type f | wc -l)" = "$PER_MONTH" ] || { echo "$who wrote the wrong files" >&2; exit 1; }
  [ "$("$BIN" ls --recursive "s3://$BUCKET/up-$who-$2/" "${AT[@]}" | wc -l)" = "$PER_MONTH" ] \
    || { echo "$who uploaded the wrong objects" >&2; exit 1; }
  TIMES[$who/first]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') "
  TIMES[$who/again]+="$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.3f", b - a }') "
  TIMES[$who/up]+="$(awk -v a="$t2" -v b="$t3" 'BEGIN { printf "%.3f", b - a }') "
  TIMES[$who/cat]+="$(awk -v a="$t3" -v b="$t4" 'BEGIN { printf "%.3f", b - a }') "
}

declare -A TIMES
ours_and_s5cmd "$ROUNDS" once
echo "| $PER_MONTH of $(( MONTHS * PER_MONTH )) objects or files of 16 KiB, median of $ROUNDS | slipstream | s5cmd | s5cmd / slipstream |"
echo "|---|---:|---:|---:|"
for what in first again up cat; do ratio_row "$what" "$what"; done
echo "(all runs, s: $(for k in "${!TIMES[@]}"; do printf '%s: %s; ' "$k" "${TIMES[$k]}"; done))"
