#!/usr/bin/env bash
# One object of SIZE_MIB downloaded and uploaded over HTTPS, directly and through an HTTP proxy
# (Debian's tinyproxy, started here beside the client: `https_proxy` set, so every connection
# is a CONNECT tunnel with TLS to the server inside it), by slipstream (`cp`), the AWS CLI
# (`aws s3 cp`) and boto3 (`download_file`/`upload_file` with its defaults), each in its own
# process. s5cmd is not an anchor here: Go's proxy rule never proxies a loopback address, and
# the servers are on 127.0.0.1. Rounds alternate the tools and the two ways; medians printed.
#
#   scripts/bench-proxy.sh [SIZE_MIB] [ROUNDS]          (defaults 256 3)
#
# A proxy near the client and the server far (the proxy in the client's namespace, where its
# 127.0.0.1 is the client's):
#   scripts/wan up --rtt 100ms --rate 500mbit
#   SLIPSTREAM_S3_NETNS=slipstream-s CLIENT="scripts/wan exec client" scripts/bench-proxy.sh 256 3
#   scripts/wan down
# Needs make build and make setup (the AWS CLI, tinyproxy). Servers' data and files on /dev/shm.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-256}
ROUNDS=${2:-3}
if [ "${BENCH_PROXY_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  scripts/install-tinyproxy.sh >/dev/null
  BENCH_PROXY_INNER=1 SLIPSTREAM_S3_DATA=/dev/shm exec scripts/with-s3-server.sh "$0" "$SIZE" "$ROUNDS"
fi
BIN=$PWD/target/release/slipstream AWS=$PWD/.tools/awscli-venv/bin/aws PY=$PWD/.venv/bin/python
read -r -a WRAP <<< "${CLIENT:-}"
END=$SLIPSTREAM_TEST_TLS_ENDPOINT
export AWS_REGION=$SLIPSTREAM_TEST_REGION AWS_CA_BUNDLE=$SLIPSTREAM_TEST_CA
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY no_proxy NO_PROXY all_proxy ALL_PROXY
WORK=$(mktemp -d -p /dev/shm)
PROXY_PID=""
stop() {
  [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null && wait "$PROXY_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap stop EXIT
PORT=$(( 20000 + RANDOM % 20000 ))
cat > "$WORK/tinyproxy.conf" <<EOF
Port $PORT
Listen 127.0.0.1
Timeout 600
LogLevel Warning
MaxClients 512
Allow 127.0.0.1
DisableViaHeader Yes
EOF
"${WRAP[@]}" "$(scripts/install-tinyproxy.sh)" -d -c "$WORK/tinyproxy.conf" >/dev/null 2>&1 &
PROXY_PID=$!
sleep 0.5
PROXY=http://127.0.0.1:$PORT

BUCKET=proxy-bench-$RANDOM$RANDOM
"${WRAP[@]}" "$BIN" mb "s3://$BUCKET" --endpoint-url "$END" --path-style >/dev/null
head -c $((SIZE << 20)) /dev/urandom > "$WORK/src"
"${WRAP[@]}" "$BIN" cp "$WORK/src" "s3://$BUCKET/obj" --endpoint-url "$END" --path-style --quiet

BOTO3='
import sys, boto3
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=sys.argv[1], config=Config(s3={"addressing_style": "path"}))
if sys.argv[2] == "down":
    s3.download_file(sys.argv[3], "obj", sys.argv[4])
else:
    s3.upload_file(sys.argv[4], sys.argv[3], "up")
'

# The anchors' parts go with a Content-Length and no checksum trailer: versitygw 1.8.0 answers
# botocore's aws-chunked UploadPart with a 400 BadRequest now and then on loopback and nearly
# always over the emulated link, direct or not ("An error occurred when parsing the HTTP
# request"). slipstream sends its parts' CRC32C as a header, with a Content-Length.
export AWS_REQUEST_CHECKSUM_CALCULATION=when_required

# run TOOL DIRECTION WAY: the seconds one command took; a command that fails is run once more,
# and a second failure stops the benchmark.
run() {
  once "$@" 2>"$WORK/err" || { echo "bench-proxy: $1 $2 ($3) failed once, again: $(tail -1 "$WORK/err")" >&2; once "$@"; }
}

once() {
  local tool=$1 dir=$2 way=$3 env=(env) t0 t1
  [ "$way" = proxy ] && env=(env "HTTPS_PROXY=$PROXY")
  rm -f "$WORK/down"
  t0=$(date +%s.%N)
  case "$tool/$dir" in
    slipstream/down) "${WRAP[@]}" "${env[@]}" "$BIN" cp "s3://$BUCKET/obj" "$WORK/down" --endpoint-url "$END" --path-style --quiet ;;
    slipstream/up) "${WRAP[@]}" "${env[@]}" "$BIN" cp "$WORK/src" "s3://$BUCKET/up" --endpoint-url "$END" --path-style --quiet ;;
    aws/down) "${WRAP[@]}" "${env[@]}" "$AWS" s3 cp "s3://$BUCKET/obj" "$WORK/down" --endpoint-url "$END" --only-show-errors ;;
    aws/up) "${WRAP[@]}" "${env[@]}" "$AWS" s3 cp "$WORK/src" "s3://$BUCKET/up" --endpoint-url "$END" --only-show-errors ;;
    boto3/*) "${WRAP[@]}" "${env[@]}" "$PY" -c "$BOTO3" "$END" "$dir" "$BUCKET" "$WORK/$( [ "$dir" = down ] && echo down || echo src )" ;;
  esac || return 1
  t1=$(date +%s.%N)
  if [ "$dir" = down ] && ! cmp -s "$WORK/src" "$WORK/down"; then
    echo "bench-proxy: $tool's download through $way differs from the object" >&2
    return 1
  fi
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

declare -A TIMES
for round in $(seq 1 "$ROUNDS"); do
  for dir in down up; do
    for tool in slipstream aws boto3; do
      for way in direct proxy; do
        t=$(run "$tool" "$dir" "$way") || exit 1
        TIMES[$dir/$tool/$way]+="$t "
      done
    done
  done
  echo "round $round done" >&2
done

. scripts/bench-lib.sh
echo "| $SIZE MiB over HTTPS | direct | through tinyproxy (CONNECT) | proxy / direct |"
echo "|---|---:|---:|---:|"
for dir in down up; do
  for tool in slipstream aws boto3; do
    d=$(echo "${TIMES[$dir/$tool/direct]}" | median)
    p=$(echo "${TIMES[$dir/$tool/proxy]}" | median)
    echo "| $tool $dir | $d s | $p s | $(awk -v d="$d" -v p="$p" 'BEGIN { printf "%.2f", p / d }') |"
  done
done
echo "(all runs, seconds: $(for k in "${!TIMES[@]}"; do printf '%s: %s; ' "$k" "${TIMES[$k]}"; done))"
