#!/usr/bin/env bash
# Time to first byte of fresh and pooled clients: direct to a far origin, through
# `slipstream gateway`, and through nginx (the anchor: a TLS-terminating proxy with upstream
# keep-alive, configured as well as it allows), all in one run on the emulated link.
#
#   scripts/bench-edge.sh [RTT_MS] [COUNT] [SIZE]
#
# Layout (scripts/wan has two namespaces): the client, the gateway and nginx in slipstream-c,
# versitygw over HTTPS in slipstream-s, RTT_MS away. So c (client to edge) is loopback, about
# 0, and o (edge to origin) = d (client to origin) = RTT_MS: the physical floor through the
# edge is o + s, direct fresh TLS 1.3 costs 3d + s. A three-site layout (c = 10 ms, o = 150 ms)
# needs a third namespace that scripts/wan does not make yet.
# Needs root (namespaces), nginx (apt-get install nginx), openssl.
set -euo pipefail
cd "$(dirname "$0")/.."
RTT=${1:-150}
COUNT=${2:-40}
SIZE=${3:-4KiB}

if [ "${BENCH_EDGE_INNER:-}" != 1 ]; then
  command -v nginx >/dev/null || { echo "bench-edge: needs nginx (apt-get install nginx)" >&2; exit 2; }
  make --no-print-directory build >/dev/null
  scripts/wan up --rtt "${RTT}ms" --rate 1gbit
  trap 'scripts/wan down >/dev/null' EXIT
  scripts/wan check
  BENCH_EDGE_INNER=1 SLIPSTREAM_S3_NETNS=slipstream-s scripts/with-s3-server.sh "$0" "$RTT" "$COUNT" "$SIZE"
  exit
fi

BIN=$PWD/target/release/slipstream
C=(scripts/wan exec client)
WORK=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# The edge's certificate (a DNS name: nginx matches no IP addresses), from its own CA.
scripts/test-cert.sh "$WORK" edge DNS:localhost
cat "$WORK/ca.pem" "$SLIPSTREAM_TEST_CA" > "$WORK/both.pem"
ORIGIN=$SLIPSTREAM_TEST_TLS_ENDPOINT
ORIGIN_HOSTPORT=${ORIGIN#https://}

"${C[@]}" "$BIN" gateway --listen 127.0.0.1:18443 --tls-cert "$WORK/edge.pem" --tls-key "$WORK/edge.key" \
  --origin "$ORIGIN" --origin-ca-bundle "$SLIPSTREAM_TEST_CA" --upstream-min-idle 16 \
  --metrics-listen 127.0.0.1:19464 2>"$WORK/gateway.err" &
pids+=($!)

cat > "$WORK/nginx.conf" <<NGINX
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  upstream origin { server $ORIGIN_HOSTPORT; keepalive 32; keepalive_timeout 15s; }
  server {
    listen 127.0.0.1:28443 ssl;
    http2 on;
    ssl_certificate $WORK/edge.pem;
    ssl_certificate_key $WORK/edge.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    client_max_body_size 0;
    location / {
      proxy_pass https://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_ssl_server_name on;
      proxy_ssl_name localhost;
      proxy_ssl_verify on;
      proxy_ssl_trusted_certificate $SLIPSTREAM_TEST_CA;
      proxy_ssl_session_reuse on;
    }
  }
}
NGINX
"${C[@]}" nginx -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log"
sleep 1

BUCKET=edge-$RANDOM$RANDOM
run() { # NAME URL CONNECTIONS
  "${C[@]}" env AWS_CA_BUNDLE="$WORK/both.pem" "$BIN" bench get --bucket "$BUCKET" --size "$SIZE" \
    --count "$COUNT" --concurrency 1 --connections "$3" --endpoint-url "$2" --json "$WORK/$1-$3.json" >/dev/null
  python3 - "$WORK/$1-$3.json" "$1" "$3" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["ttfb_ms"]
cpu = r.get("cpu", {})
print(f"| {sys.argv[2]:<7} | {sys.argv[3]:<6} | {t['count']:>5} | {t['p50']:>8.1f} | {t['p99']:>8.1f} |")
PY
}
echo
echo "### GET $SIZE, time to first byte (ms), RTT $RTT ms, $COUNT requests each, sequential"
echo
echo "| path    | conns  | count |      p50 |      p99 |"
echo "|---------|--------|------:|---------:|---------:|"
for conn in pooled fresh; do
  run direct "$ORIGIN" "$conn"
  run edge "https://localhost:18443" "$conn"
  run nginx "https://localhost:28443" "$conn"
done
echo
echo "Gateway upstream counters:"
"${C[@]}" curl -s http://127.0.0.1:19464/metrics | grep -E '^gateway_upstream_(dials|reuses|waits|stale_retries|keepalives)_total' || true
