#!/usr/bin/env bash
# Time to first byte of fresh and pooled clients on an emulated long link: direct to a far
# origin, through `slipstream gateway`, and through nginx (the anchor: a TLS-terminating proxy
# with upstream keep-alive, configured as well as it allows), all in one run, with the CPU each
# proxy spends per request.
#
#   scripts/bench-edge.sh [ORIGIN_RTT_MS] [EDGE_RTT_MS] [COUNT] [BURSTS]     (defaults 150 10 40 3)
#
# Layout (scripts/wan up --edge): the client in slipstream-c; the gateway and nginx in
# slipstream-e, EDGE_RTT_MS (c) from the client; versitygw over HTTPS in slipstream-s,
# ORIGIN_RTT_MS (o) from the edge. The direct path crosses both links: d = c + o. The floor of
# a fresh request through the edge is 3c + o + s (TCP, TLS 1.3 and the request to the edge,
# one round trip from edge to origin, and s, the origin's own time, measured in the origin's
# namespace); direct fresh TLS 1.3 costs 3d + s.
#
# Rows: 4 KiB and 1 MiB GETs, sequential, fresh and pooled connections (COUNT each); bursts of
# 16 fresh clients after 25 s of quiet (longer than S3's 20 s idle timeout; BURSTS of them);
# a page of 20 objects (4 KiB) fetched by a fresh client with 6 connections, as a browser
# does (5 pages). Needs root (namespaces), nginx (apt-get install nginx), openssl, curl.
set -euo pipefail
cd "$(dirname "$0")/.."
O=${1:-150}
E=${2:-10}
COUNT=${3:-40}
BURSTS=${4:-3}

if [ "${BENCH_EDGE_INNER:-}" != 1 ]; then
  command -v nginx >/dev/null || { echo "bench-edge: needs nginx (apt-get install nginx)" >&2; exit 2; }
  make --no-print-directory build >/dev/null
  scripts/wan up --rtt "${O}ms" --edge "${E}ms" --rate 1gbit
  trap 'scripts/wan down >/dev/null' EXIT
  scripts/wan check
  BENCH_EDGE_INNER=1 SLIPSTREAM_S3_NETNS=slipstream-s scripts/with-s3-server.sh "$0" "$O" "$E" "$COUNT" "$BURSTS"
  exit
fi

BIN=$PWD/target/release/slipstream
CLIENT=(scripts/wan exec client)
EDGE=(scripts/wan exec edge)
SERVER=(scripts/wan exec server)
EDGE_IP=10.77.0.3
WORK=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# The edge's certificate, from its own CA: the client reaches it by address; nginx's upstream
# check needs a DNS name on the origin's (which with-s3-server.sh gives it: localhost).
scripts/test-cert.sh "$WORK" edge "IP:$EDGE_IP,DNS:edge.test"
cat "$WORK/ca.pem" "$SLIPSTREAM_TEST_CA" > "$WORK/both.pem"
ORIGIN=$SLIPSTREAM_TEST_TLS_ENDPOINT
ORIGIN_HOSTPORT=${ORIGIN#https://}

# The gateway holds 16 warm connections (the bursts' size; the default follows the observed
# peak, which the fixture uploads would set to 8).
"${EDGE[@]}" "$BIN" gateway --listen "$EDGE_IP:18443" --tls-cert "$WORK/edge.pem" --tls-key "$WORK/edge.key" \
  --origin "$ORIGIN" --origin-ca-bundle "$SLIPSTREAM_TEST_CA" --upstream-min-idle 16 \
  --metrics-listen 127.0.0.1:19464 2>"$WORK/gateway.err" &
gateway_pid=$!
pids+=("$gateway_pid")

# nginx as well as it allows: HTTP/1.1 upstream keep-alive with a cache of 32 idle
# connections, TLS session reuse to the origin, no buffering either way. Its upstream idle
# timeout is 15 s, under S3's 20 s (versitygw itself never closes idle connections, so without
# it nginx would keep connections S3 closes); the gateway's keep-alive interval is the same 15 s.
cat > "$WORK/nginx.conf" <<NGINX
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  upstream origin { server $ORIGIN_HOSTPORT; keepalive 32; keepalive_timeout 15s; }
  server {
    listen $EDGE_IP:28443 ssl http2;
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
"${EDGE[@]}" nginx -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log"
for _ in $(seq 1 100); do
  "${CLIENT[@]}" curl -s -o /dev/null --cacert "$WORK/ca.pem" "https://$EDGE_IP:18443/" \
    && "${CLIENT[@]}" curl -s -o /dev/null --cacert "$WORK/ca.pem" "https://$EDGE_IP:28443/" && break
  sleep 0.1
done

. scripts/proc-stats.sh
proxy_pids() { # PATH
  case "$1" in
    edge) echo "$gateway_pid" ;;
    nginx) nginx_pids "$WORK/nginx.pid" ;;
    *) echo "" ;;
  esac
}
url_of() {
  case "$1" in
    direct) echo "$ORIGIN" ;;
    edge) echo "https://$EDGE_IP:18443" ;;
    nginx) echo "https://$EDGE_IP:28443" ;;
  esac
}

BUCKET=edge-$RANDOM$RANDOM
# bench NAME PATH ARGS...: one `slipstream bench get` from the client, its JSON in
# $WORK/NAME.json and the proxy's CPU per measured request in $WORK/NAME.cpu. The CPU window
# includes the fixture uploads, which are the same for every path; they are few next to COUNT.
bench() {
  local name=$1 path=$2 before after pids
  shift 2
  pids=$(proxy_pids "$path")
  # shellcheck disable=SC2086
  before=$(cpu_ns $pids)
  "${CLIENT[@]}" env AWS_CA_BUNDLE="$WORK/both.pem" "$BIN" bench get --bucket "$BUCKET" \
    --endpoint-url "$(url_of "$path")" --quiet --json "$WORK/$name.json" "$@" >/dev/null
  # shellcheck disable=SC2086
  after=$(cpu_ns $pids)
  echo $(( after - before )) > "$WORK/$name.cpu"
}

# s: the origin's own time to first byte for a 4 KiB GET on a warm connection, in its namespace.
"${SERVER[@]}" env AWS_CA_BUNDLE="$SLIPSTREAM_TEST_CA" "$BIN" bench get --bucket "$BUCKET" --size 4KiB \
  --count 200 --concurrency 1 --endpoint-url "$ORIGIN" --quiet --json "$WORK/origin.json" >/dev/null

PATHS=(direct edge nginx)
for size in 4KiB 1MiB; do
  for conn in fresh pooled; do
    # Alternate the paths within a row so that drift on the shared machine spreads evenly.
    for path in "${PATHS[@]}"; do
      bench "$size-$conn-$path" "$path" --size "$size" --count "$COUNT" --concurrency 1 \
        --connections "$conn" --objects 10
    done
  done
done
for b in $(seq 1 "$BURSTS"); do
  for path in "${PATHS[@]}"; do
    bench "burst$b-$path" "$path" --size 4KiB --count 16 --concurrency 16 --warmup 0 \
      --connections fresh --objects 16 --idle 25s
  done
done
for p in $(seq 1 5); do
  for path in "${PATHS[@]}"; do
    bench "page$p-$path" "$path" --size 4KiB --count 20 --concurrency 6 --warmup 0 \
      --connections pooled --objects 20
  done
done

python3 - "$WORK" "$O" "$E" "$COUNT" "$BURSTS" <<'PY'
import json, pathlib, statistics, sys
work, o, e, count, bursts = pathlib.Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], int(sys.argv[5])
load = lambda name: json.loads((work / f"{name}.json").read_text())
cpu = lambda name: int((work / f"{name}.cpu").read_text())
s = load("origin")["ttfb_ms"]["p50"]
floor = 3 * e + o + s
print(f"\nc = {e:g} ms, o = {o:g} ms, d = {e + o:g} ms; s (origin, warm, in its namespace) = {s:.2f} ms;"
      f" floor through the edge 3c + o + s = {floor:.1f} ms; direct fresh TLS 1.3 floor 3d + s = {3 * (e + o) + s:.1f} ms\n")
print("| GET | connections | path | TTFB p50 | TTFB p99 | p50 vs floor | p99 vs floor | total p50 | proxy CPU per request |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|")
for size in ["4KiB", "1MiB"]:
    for conn in ["fresh", "pooled"]:
        for path in ["direct", "edge", "nginx"]:
            name = f"{size}-{conn}-{path}"
            r = load(name)
            t, l = r["ttfb_ms"], r["latency_ms"]
            assert r["errors"] == 0, (name, r["error_kinds"])
            per = f"{cpu(name) / r['ops'] / 1e3:.0f} us" if path != "direct" else ""
            ratio = lambda v: f"{v / floor:.2f}x" if conn == "fresh" else ""
            print(f"| {size} | {conn} | {path} | {t['p50']:.1f} | {t['p99']:.1f} | {ratio(t['p50'])} | {ratio(t['p99'])} | {l['p50']:.1f} | {per} |")
print(f"\nBursts of 16 fresh clients after 25 s of quiet ({bursts} bursts, {16 * bursts} requests per path); TTFB in ms:\n")
print("| path | p50 (median of bursts) | p99 (slowest burst) | max | p99 vs sequential fresh p50 | proxy CPU per request |")
print("|---|---:|---:|---:|---:|---:|")
for path in ["direct", "edge", "nginx"]:
    ops, spent = 0, 0
    for b in range(1, bursts + 1):
        r = load(f"burst{b}-{path}")
        assert r["errors"] == 0, (path, r["error_kinds"])
        ops += r["ops"]
        spent += cpu(f"burst{b}-{path}")
    # 16 samples a burst: its p99 is its slowest; the row's p99 is the slowest burst's.
    ps = [load(f"burst{b}-{path}")["ttfb_ms"] for b in range(1, bursts + 1)]
    p50 = statistics.median(p["p50"] for p in ps)
    p99 = max(p["p99"] for p in ps)
    mx = max(p["max"] for p in ps)
    seq = load(f"4KiB-fresh-{path}")["ttfb_ms"]["p50"]
    per = f"{spent / ops / 1e3:.0f} us" if path != "direct" else ""
    print(f"| {path} | {p50:.1f} | {p99:.1f} | {mx:.1f} | {p99 / seq:.2f}x | {per} |")
print("\nA page of 20 objects (4 KiB) by a fresh client with 6 connections (5 pages), ms from the first request to the last byte:\n")
print("| path | median | min | max |")
print("|---|---:|---:|---:|")
for path in ["direct", "edge", "nginx"]:
    pages = [load(f"page{p}-{path}")["elapsed_s"] * 1000 for p in range(1, 6)]
    print(f"| {path} | {statistics.median(pages):.0f} | {min(pages):.0f} | {max(pages):.0f} |")
PY
echo
echo "Gateway upstream counters:"
"${EDGE[@]}" curl -s http://127.0.0.1:19464/metrics \
  | grep -E '^gateway_upstream_(dials|reuses|waits|stale_retries|keepalives)_total' || true
