#!/usr/bin/env bash
# Listing many keys: `slipstream ls` in the AWS CLI's form and with s5cmd's flags
# (`--show-fullpath`, `-s -e`, `--exclude`) against `s5cmd ls` with the same flags and
# `aws s3 ls --recursive`, on versitygw over loopback. OBJECTS keys of 1 byte under one
# prefix (uploaded once), every command's output to /dev/null, rounds alternating the
# contenders (the order reversed every other round). Printed: median seconds and each row's
# ratio to s5cmd's (or the AWS CLI's) same listing.
#
#   scripts/bench-ls.sh [OBJECTS] [ROUNDS]    (defaults 10000 5)
#
# Needs make build and make setup (versitygw, s5cmd, the AWS CLI in .tools/awscli-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
OBJECTS=${1:-10000}
ROUNDS=${2:-5}
if [ "${BENCH_LS_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  BENCH_LS_INNER=1 exec scripts/with-s3-server.sh "$0" "$@"
fi
. scripts/bench-lib.sh
bench_bucket ls-bench
AWS=(.tools/awscli-venv/bin/aws --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" s3)
mkdir "$WORK/keys"
for i in $(seq -w 1 "$OBJECTS"); do printf x > "$WORK/keys/k$i.dat"; done
"$BIN" cp --recursive --quiet "$WORK/keys" "s3://$BUCKET/p/" "${AT[@]}"
ALL="s3://$BUCKET/p/*"

# The rows: a name, then the command. Each slipstream row has an s5cmd row of the same flags.
declare -A ROW=(
  [ours-recursive]="$BIN ls --recursive s3://$BUCKET/p/ ${AT[*]}"
  [aws-recursive]="${AWS[*]} ls --recursive s3://$BUCKET/p/"
  [ours-wildcard]="$BIN ls $ALL ${AT[*]}"
  [s5cmd-wildcard]="${S5[*]} ls $ALL"
  [ours-fullpath]="$BIN ls --show-fullpath $ALL ${AT[*]}"
  [s5cmd-fullpath]="${S5[*]} ls --show-fullpath $ALL"
  [ours-columns]="$BIN ls -s -e $ALL ${AT[*]}"
  [s5cmd-columns]="${S5[*]} ls -s -e $ALL"
  [ours-exclude]="$BIN ls --exclude *1.dat $ALL ${AT[*]}"
  [s5cmd-exclude]="${S5[*]} ls --exclude *1.dat $ALL"
)
ORDER="ours-recursive aws-recursive ours-wildcard s5cmd-wildcard ours-fullpath s5cmd-fullpath ours-columns s5cmd-columns ours-exclude s5cmd-exclude"
declare -A TIMES
for round in $(seq 1 "$ROUNDS"); do
  order=$ORDER
  if [ $(( round % 2 )) = 0 ]; then order=$(echo "$ORDER" | tr ' ' '\n' | tac | tr '\n' ' '); fi
  for row in $order; do
    read -r -a cmd <<< "${ROW[$row]}"
    t0=$(date +%s.%N)
    # set -f: the wildcard goes to the command, not the shell.
    (set -f; "${cmd[@]}") > "$WORK/out"
    t1=$(date +%s.%N)
    lines=$(wc -l < "$WORK/out")
    want=$OBJECTS
    [ "$row" = "${row%-exclude}" ] || want=$(( OBJECTS - OBJECTS / 10 ))
    [ "$lines" = "$want" ] || { echo "$row printed $lines lines, not $want" >&2; exit 1; }
    TIMES[$row]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') "
  done
  echo "round $round done" >&2
done

echo "| $OBJECTS keys, median of $ROUNDS | slipstream | anchor | anchor / slipstream |"
echo "|---|---:|---:|---:|"
for pair in "recursive aws" "wildcard s5cmd" "fullpath s5cmd" "columns s5cmd" "exclude s5cmd"; do
  read -r what anchor <<< "$pair"
  ours=$(echo "${TIMES[ours-$what]}" | median)
  theirs=$(echo "${TIMES[$anchor-$what]}" | median)
  echo "| ${ROW[ours-$what]#"$BIN "} | $ours s | $theirs s ($anchor) | $(awk -v o="$ours" -v t="$theirs" 'BEGIN { printf "%.2fx", t / o }') |" \
    | sed "s| ${AT[*]}||; s|$BUCKET|b|g"
done
echo "(all runs, s: $(for k in "${!TIMES[@]}"; do printf '%s: %s; ' "$k" "${TIMES[$k]}"; done))"
