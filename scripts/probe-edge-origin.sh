#!/usr/bin/env bash
# Where the origin's extra CPU goes when it sends a 1 GiB TLS download to the gateway rather
# than to a client: versitygw's CPU time, write calls and context switches (voluntary: it
# waited; involuntary: it was preempted) over each download, from /proc. Three readers, in
# turn, ROUNDS rounds: `direct` (the client on core 0, beside versitygw, as PIN=1 in
# bench-edge-bulk.sh), `direct1` (the client on core 1), `edge` (the client on core 0 through
# a TLS gateway on core 1). Nothing is traced: /proc's counters cost the server nothing.
#
#   SLIPSTREAM_S3_DATA=/dev/shm taskset -c 0 scripts/with-s3-server.sh scripts/probe-edge-origin.sh [ROUNDS]
#
# Needs make build.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
BIN=$PWD/target/release/slipstream
WORK=$(mktemp -d -p /dev/shm)
export AWS_REGION=$SLIPSTREAM_TEST_REGION
scripts/test-cert.sh "$WORK" edge "IP:127.0.0.1,DNS:localhost" >/dev/null 2>&1
cat "$WORK/ca.pem" "$SLIPSTREAM_TEST_CA" > "$WORK/both.pem"
export AWS_CA_BUNDLE=$WORK/both.pem
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
taskset -c 1 "$BIN" gateway --listen "127.0.0.1:$port" --tls-cert "$WORK/edge.pem" --tls-key "$WORK/edge.key" \
  --origin "$SLIPSTREAM_TEST_TLS_ENDPOINT" --origin-ca-bundle "$SLIPSTREAM_TEST_CA" 2>"$WORK/gateway.err" &
gateway=$!
trap 'kill $gateway; rm -rf "$WORK"' EXIT
for _ in $(seq 1 100); do curl -s -o /dev/null --cacert "$WORK/ca.pem" "https://127.0.0.1:$port/" && break; sleep 0.05; done
origin=$(pgrep -f "versitygw.*--cert" | head -1)
. scripts/proc-stats.sh
writes() { awk '/^syscw/ { print $2 }' /proc/"$1"/io; }
BUCKET=probe-$RANDOM$RANDOM
"$BIN" mb "s3://$BUCKET" --endpoint-url "$SLIPSTREAM_TEST_TLS_ENDPOINT" >/dev/null
head -c 1G /dev/urandom > "$WORK/src"
"$BIN" cp "$WORK/src" "s3://$BUCKET/o" --endpoint-url "$SLIPSTREAM_TEST_TLS_ENDPOINT" --quiet
rm "$WORK/src"
for _ in $(seq 1 "$ROUNDS"); do
  for reader in direct direct1 edge; do
    endpoint=$SLIPSTREAM_TEST_TLS_ENDPOINT core=0
    [ "$reader" = edge ] && endpoint=https://127.0.0.1:$port
    [ "$reader" = direct1 ] && core=1
    c0=$(cpu_ns "$origin"); w0=$(writes "$origin"); read -r v0 n0 < <(switches "$origin"); t0=$(date +%s.%N)
    taskset -c "$core" "$BIN" cp "s3://$BUCKET/o" "$WORK/dst" --endpoint-url "$endpoint" --quiet
    t1=$(date +%s.%N); c1=$(cpu_ns "$origin"); w1=$(writes "$origin"); read -r v1 n1 < <(switches "$origin")
    echo "$reader $t0 $t1 $c0 $c1 $w0 $w1 $v0 $v1 $n0 $n1" | awk '{ printf "%-8s %.2f s, versitygw CPU %.2f s, %d writes, %d voluntary and %d involuntary switches\n", $1, $3 - $2, ($5 - $4) / 1e9, $7 - $6, $9 - $8, $11 - $10 }'
    rm -f "$WORK/dst"
  done
done
