# Shell functions the benchmark scripts share; sourced, not run.

# median: the median of the numbers on standard input (separated by spaces or lines; the upper
# middle one of an even count).
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# The copy workloads of bench-sse-c.sh, bench-profile.sh and bench-flag.sh: one large object
# and a directory of small files, each uploaded and downloaded by several contenders in turn.

# make_workloads DIR SIZE_MIB FILES: DIR/big (SIZE_MIB MiB) and DIR/small/ (FILES files of
# 16 KiB), random bytes.
make_workloads() {
  head -c $(( $2 << 20 )) /dev/urandom > "$1/big"
  mkdir -p "$1/small"
  for i in $(seq 1 "$3"); do head -c 16384 /dev/urandom > "$1/small/f$i"; done
}

# workload_paths DIR BUCKET NAME LOAD WAY: sets SRC and DST for one copy (LOAD big or small, WAY
# up or down; NAME keeps each contender's objects apart, DIR/down is where downloads land) and
# RECURSIVE (--recursive for the directory).
workload_paths() {
  case "$4/$5" in
    big/up) SRC=$1/big DST=s3://$2/$3/big ;;
    big/down) SRC=s3://$2/$3/big DST=$1/down ;;
    small/up) SRC=$1/small DST=s3://$2/$3/small/ ;;
    small/down) SRC=s3://$2/$3/small/ DST=$1/down/ ;;
  esac
  RECURSIVE=()
  if [ "$4" = small ]; then RECURSIVE=(--recursive); fi
}

# timed_copy DIR LOAD WAY COMMAND...: runs COMMAND (a copy of workload_paths' SRC to DST) and
# prints the seconds it took; a download is compared with its source first, and a difference
# fails it, as the command failing does.
timed_copy() {
  local dir=$1 load=$2 way=$3 t0 t1
  shift 3
  rm -rf "$dir/down"
  t0=$(date +%s.%N)
  "$@" || return 1
  t1=$(date +%s.%N)
  if [ "$way" = down ]; then
    if [ "$load" = big ]; then cmp -s "$dir/big" "$dir/down"; else diff -rq "$dir/small" "$dir/down" >/dev/null; fi \
      || { echo "the $load download differs from the source: $*" >&2; return 1; }
  fi
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

# alternate ROUNDS "CONTENDERS" ONCE: ROUNDS rounds of every load, way and contender in turn
# (the contenders' order reversed every other round, so that going first or second, on a
# machine still busy with the last run, favours none), each `ONCE CONTENDER LOAD WAY` printing
# its seconds; they gather in the caller's associative array TIMES[LOAD/WAY/CONTENDER],
# space-separated. Stops at the first that fails.
alternate() {
  local round load way who out order
  out=$(mktemp)
  for round in $(seq 1 "$1"); do
    order=$2
    if [ $(( round % 2 )) = 0 ]; then order=$(echo "$2" | tr ' ' '\n' | tac | tr '\n' ' '); fi
    for load in big small; do
      for way in up down; do
        for who in $order; do
          # Not in a subshell: ONCE may keep what it saw in the caller's variables.
          "$3" "$who" "$load" "$way" > "$out" || { rm -f "$out"; return 1; }
          TIMES[$load/$way/$who]+="$(cat "$out") "
        done
      done
    done
    echo "round $round done" >&2
  done
  rm -f "$out"
}

# bench_bucket NAME: the set-up of a benchmark on the server with-s3-server.sh started: BIN
# (this build), AT (its endpoint flags), S5 (s5cmd at the same server), WORK (a directory on
# /dev/shm, removed at exit) and BUCKET (a new bucket, NAME and a random number).
bench_bucket() {
  BIN=$PWD/target/release/slipstream
  AT=(--endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style)
  S5=(.venv/bin/s5cmd --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT")
  WORK=$(mktemp -d -p /dev/shm)
  trap 'rm -rf "$WORK"' EXIT
  BUCKET=$1-$RANDOM$RANDOM
  "$BIN" mb "s3://$BUCKET" "${AT[@]}" >/dev/null
}

# ours_and_s5cmd ROUNDS ONCE: ROUNDS rounds of `ONCE ours ROUND` and `ONCE s5cmd ROUND`, the
# order reversed every other round (ONCE keeps its seconds in the caller's TIMES).
ours_and_s5cmd() {
  local round order who
  for round in $(seq 1 "$1"); do
    order="ours s5cmd"
    if [ $(( round % 2 )) = 0 ]; then order="s5cmd ours"; fi
    for who in $order; do "$2" "$who" "$round"; done
    echo "round $round done" >&2
  done
}

# ratio_row LABEL WHAT: a table row of the medians of TIMES[ours/WHAT] and TIMES[s5cmd/WHAT]
# and s5cmd's over ours.
ratio_row() {
  local o t
  o=$(echo "${TIMES[ours/$2]}" | median)
  t=$(echo "${TIMES[s5cmd/$2]}" | median)
  echo "| $1 | $o s | $t s | $(awk -v o="$o" -v t="$t" 'BEGIN { printf "%.2fx", t / o }') |"
}
