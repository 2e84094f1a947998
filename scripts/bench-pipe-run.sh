#!/usr/bin/env bash
# Two of s5cmd's forms, slipstream against s5cmd on versitygw over loopback: `pipe s3://b/k`
# of SIZE_MIB MiB from standard input (a file on /dev/shm), and `run` of LINES `sync` lines,
# each a directory of FILES files of 16 KiB to a prefix of its own (into an empty bucket
# prefix each round). Rounds alternate the two tools (the order reversed every other round).
# Printed: medians and ratios.
#
#   scripts/bench-pipe-run.sh [SIZE_MIB] [LINES] [FILES] [ROUNDS]    (defaults 1024 20 100 5)
#
# Needs make build and make setup (versitygw, s5cmd).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MIB=${1:-1024}
LINES=${2:-20}
FILES=${3:-100}
ROUNDS=${4:-5}
if [ "${BENCH_PIPE_RUN_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  BENCH_PIPE_RUN_INNER=1 exec scripts/with-s3-server.sh "$0" "$@"
fi
. scripts/bench-lib.sh
bench_bucket pipe-run
head -c $(( SIZE_MIB << 20 )) /dev/urandom > "$WORK/big"
for l in $(seq 1 "$LINES"); do
  mkdir -p "$WORK/dirs/d$l"
  for i in $(seq 1 "$FILES"); do head -c 16384 /dev/urandom > "$WORK/dirs/d$l/f$i"; done
done

# once WHO ROUND: the pipe and the run, in seconds, into TIMES[WHO/pipe] and [WHO/run].
once() {
  local who=$1 t0 t1 t2 l
  : > "$WORK/lines"
  for l in $(seq 1 "$LINES"); do
    echo "sync $WORK/dirs/d$l/ s3://$BUCKET/run-$who-$2/d$l/" >> "$WORK/lines"
  done
  t0=$(date +%s.%N)
  case $who in
    ours) "$BIN" pipe "s3://$BUCKET/pipe-$who" "${AT[@]}" < "$WORK/big"
          t1=$(date +%s.%N)
          "$BIN" run "$WORK/lines" "${AT[@]}" --quiet ;;
    s5cmd) "${S5[@]}" pipe "s3://$BUCKET/pipe-$who" < "$WORK/big" > /dev/null
           t1=$(date +%s.%N)
           "${S5[@]}" run "$WORK/lines" > /dev/null ;;
  esac
  t2=$(date +%s.%N)
  [ "$("$BIN" ls --recursive "s3://$BUCKET/run-$who-$2/" "${AT[@]}" | wc -l)" = $(( LINES * FILES )) ] \
    || { echo "$who's run made the wrong objects" >&2; exit 1; }
  TIMES[$who/pipe]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') "
  TIMES[$who/run]+="$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.3f", b - a }') "
}

declare -A TIMES
ours_and_s5cmd "$ROUNDS" once
echo "| median of $ROUNDS | slipstream | s5cmd | s5cmd / slipstream |"
echo "|---|---:|---:|---:|"
ratio_row "pipe s3://b/k < $SIZE_MIB MiB" pipe
ratio_row "run: $LINES sync lines of $FILES x 16 KiB" run
echo "(all runs, s: $(for k in "${!TIMES[@]}"; do printf '%s: %s; ' "$k" "${TIMES[$k]}"; done))"
