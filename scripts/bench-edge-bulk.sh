#!/usr/bin/env bash
# Large objects through `slipstream gateway` on loopback: upload and download throughput direct
# to versitygw and through the gateway in front of it, over TLS (both hops) and over plain HTTP
# (what the proxying itself costs, without a second encryption and decryption of every byte),
# the gateway's CPU per GiB, and its resident memory while a BIG_GIB object goes up and comes
# back down.
#
# With PIN=1 the client and the server share core 0 and the gateway has core 1, as an edge box
# has cores of its own: on two shared cores every CPU-second the gateway spends is taken from
# the client and the server, and the direct run already keeps both cores busy.
#
#   scripts/bench-edge-bulk.sh [SIZE_MIB] [ROUNDS] [BIG_GIB]          (defaults 1024 5 5)
#
# `slipstream cp` moves the objects (parallel multipart up, parallel ranged GETs down); the
# server keeps its data on /dev/shm and the files live there too, so the disk is not measured.
# Rounds alternate direct, the gateway and nginx; medians are quoted. GATEWAY_BIN=PATH runs
# another build as the gateway (an A/B of gateway changes with the same client); GATEWAY_ARGS adds flags to
# both gateways (e.g. GATEWAY_ARGS="--no-upstream-h2"). Memory: the gateway's peak
# RSS is reset (/proc/PID/clear_refs) before the big transfer and read after it. The server's
# and the client's CPU per GiB are reported too (with PIN=1 they share core 0, so their sum is
# what bounds the transfer).
# The anchor: nginx (where installed; NGINX=0 leaves it out) in front of the same origin as a
# TLS-terminating and a plain proxy set up for bulk, as bench-edge.sh sets it up (upstream
# keep-alive, no buffering either way), one worker per core, pinned with the gateway under PIN=1.
# Needs openssl and /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MIB=${1:-1024}
ROUNDS=${2:-5}
BIG_GIB=${3:-5}

if [ "${BENCH_EDGE_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  pin=()
  [ "${PIN:-}" = 1 ] && pin=(taskset -c 0)
  BENCH_EDGE_INNER=1 SLIPSTREAM_S3_DATA=/dev/shm "${pin[@]}" scripts/with-s3-server.sh "$0" "$SIZE_MIB" "$ROUNDS" "$BIG_GIB"
  exit
fi

BIN=$PWD/target/release/slipstream
GW=("${GATEWAY_BIN:-$BIN}")
[ "${PIN:-}" = 1 ] && GW=(taskset -c 1 "${GW[0]}")
WORK=$(mktemp -d -p /dev/shm)
gateway_pid=""
plain_pid=""
stop() {
  kill $gateway_pid $plain_pid 2>/dev/null || true
  if [ -f "$WORK/nginx.pid" ]; then kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap stop EXIT
export AWS_REGION=$SLIPSTREAM_TEST_REGION

scripts/test-cert.sh "$WORK" edge "IP:127.0.0.1,DNS:localhost"
cat "$WORK/ca.pem" "$SLIPSTREAM_TEST_CA" > "$WORK/both.pem"
export AWS_CA_BUNDLE=$WORK/both.pem
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
"${GW[@]}" gateway --listen "127.0.0.1:$port" --tls-cert "$WORK/edge.pem" --tls-key "$WORK/edge.key" \
  --origin "$SLIPSTREAM_TEST_TLS_ENDPOINT" --origin-ca-bundle "$SLIPSTREAM_TEST_CA" ${GATEWAY_ARGS:-} 2>"$WORK/gateway.err" &
gateway_pid=$!
plain_port=$(free_port)
"${GW[@]}" gateway --listen "127.0.0.1:$plain_port" --origin "$SLIPSTREAM_TEST_ENDPOINT" ${GATEWAY_ARGS:-} 2>"$WORK/plain.err" &
plain_pid=$!
for _ in $(seq 1 100); do curl -s -o /dev/null --cacert "$WORK/ca.pem" "https://127.0.0.1:$port/" && break; sleep 0.05; done
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$plain_port/" && break; sleep 0.05; done

ANCHOR=()
if [ "${NGINX:-1}" != 0 ] && command -v nginx >/dev/null; then
  ANCHOR=(nginx)
  nginx_tls_port=$(free_port)
  nginx_plain_port=$(free_port)
  NGINX_CPU=()
  [ "${PIN:-}" = 1 ] && NGINX_CPU=(taskset -c 1)
  cat > "$WORK/nginx.conf" <<NGINX
worker_processes auto;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  upstream origin_tls { server ${SLIPSTREAM_TEST_TLS_ENDPOINT#https://}; keepalive 32; }
  upstream origin_plain { server ${SLIPSTREAM_TEST_ENDPOINT#http://}; keepalive 32; }
  client_max_body_size 0;
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_set_header Host \$http_host;
  proxy_buffering off;
  proxy_request_buffering off;
  # Unbuffered, nginx relays through one buffer of this size (a page by default): 128 KiB, the
  # gateway's own read buffer towards the origin.
  proxy_buffer_size 128k;
  proxy_buffers 4 128k;           # unused unbuffered; nginx checks them against the size above
  server {
    listen 127.0.0.1:$nginx_tls_port ssl;
    ssl_certificate $WORK/edge.pem;
    ssl_certificate_key $WORK/edge.key;
    location / {
      proxy_pass https://origin_tls;
      proxy_ssl_server_name on;
      proxy_ssl_name localhost;
      proxy_ssl_verify on;
      proxy_ssl_trusted_certificate $SLIPSTREAM_TEST_CA;
      proxy_ssl_session_reuse on;
    }
  }
  server {
    listen 127.0.0.1:$nginx_plain_port;
    location / { proxy_pass http://origin_plain; }
  }
}
NGINX
  "${NGINX_CPU[@]}" nginx -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log"
  for _ in $(seq 1 100); do curl -s -o /dev/null --cacert "$WORK/ca.pem" "https://127.0.0.1:$nginx_tls_port/" && break; sleep 0.05; done
fi

. scripts/proc-stats.sh
# url PATH: the endpoint of direct-tls, edge-tls, nginx-tls, direct-plain, edge-plain or nginx-plain.
url() {
  case "$1" in
    direct-tls) echo "$SLIPSTREAM_TEST_TLS_ENDPOINT" ;;
    edge-tls) echo "https://127.0.0.1:$port" ;;
    nginx-tls) echo "https://127.0.0.1:$nginx_tls_port" ;;
    direct-plain) echo "$SLIPSTREAM_TEST_ENDPOINT" ;;
    edge-plain) echo "http://127.0.0.1:$plain_port" ;;
    nginx-plain) echo "http://127.0.0.1:$nginx_plain_port" ;;
  esac
}
# proxy_ns PATH: CPU time so far of the proxy on PATH (nginx: its master and workers; 0 direct).
proxy_ns() {
  local pids=""
  case "$1" in
    edge-tls) pids=$gateway_pid ;;
    edge-plain) pids=$plain_pid ;;
    nginx-*) pids=$(nginx_pids "$WORK/nginx.pid") ;;
  esac
  # shellcheck disable=SC2086 # a list of pids
  cpu_ns $pids
}
# servers_ns: CPU time so far of both versitygw processes (plain and TLS), in nanoseconds.
servers_ns() {
  # shellcheck disable=SC2046 # a list of pids
  cpu_ns $(pgrep -x versitygw)
}
# timed NAME PATH COMMAND...: one run, appended to $WORK/NAME as "seconds proxy_cpu_seconds",
# and to $WORK/NAME.cpu as "server_cpu_seconds client_cpu_seconds".
timed() {
  local name=$1 path=$2 t0 c0 t1 c1 s0 s1
  shift 2
  s0=$(servers_ns); c0=$(proxy_ns "$path"); t0=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$WORK/client.time" "$BIN" "$@" --endpoint-url "$(url "$path")" --path-style --quiet >/dev/null
  t1=$(date +%s.%N); c1=$(proxy_ns "$path"); s1=$(servers_ns)
  echo "$t0 $t1 $c0 $c1" | awk '{ printf "%.4f %.4f\n", $2 - $1, ($4 - $3) / 1e9 }' >> "$WORK/$name"
  echo "$s0 $s1 $(cat "$WORK/client.time")" | awk '{ printf "%.4f %.4f\n", ($2 - $1) / 1e9, $3 + $4 }' >> "$WORK/$name.cpu"
}

BUCKET=edge-bulk-$RANDOM$RANDOM
head -c $((SIZE_MIB << 20)) /dev/urandom > "$WORK/src"
PATHS=(direct-tls edge-tls direct-plain edge-plain)
[ ${#ANCHOR[@]} = 1 ] && PATHS=(direct-tls edge-tls nginx-tls direct-plain edge-plain nginx-plain)
for path in direct-tls direct-plain; do "$BIN" mb "s3://$BUCKET" --endpoint-url "$(url "$path")" --path-style >/dev/null 2>&1 || true; done
for r in $(seq 1 "$ROUNDS"); do
  for path in "${PATHS[@]}"; do
    timed "put-$path" "$path" cp "$WORK/src" "s3://$BUCKET/o-$path"
    rm -f "$WORK/dst"
    timed "get-$path" "$path" cp "s3://$BUCKET/o-$path" "$WORK/dst"
    if [ "$r" = 1 ]; then cmp "$WORK/src" "$WORK/dst"; fi
  done
done
rm -f "$WORK/dst"

# The big transfer: from a pipe up, to a pipe down, so no file of that size is needed.
# The peak over the rounds first: RSS "before" depends on what the allocator has given back
# since, so the peak is the steadier figure of the two.
rss_rounds=$(awk '/^VmHWM/ { print $2 }' "/proc/$gateway_pid/status")
echo 5 > "/proc/$gateway_pid/clear_refs"
rss_before=$(awk '/^VmRSS/ { print $2 }' "/proc/$gateway_pid/status")
head -c $((BIG_GIB << 30)) /dev/zero | "$BIN" cp - "s3://$BUCKET/big" --endpoint-url "$(url edge-tls)" --path-style --quiet
got=$("$BIN" cp "s3://$BUCKET/big" - --endpoint-url "$(url edge-tls)" --path-style --quiet | wc -c)
[ "$got" = $((BIG_GIB << 30)) ] || { echo "bench-edge-bulk: the big object came back with $got bytes" >&2; exit 1; }
rss_peak=$(awk '/^VmHWM/ { print $2 }' "/proc/$gateway_pid/status")
"$BIN" rm "s3://$BUCKET/big" --endpoint-url "$(url edge-tls)" --path-style >/dev/null

python3 - "$WORK" "$SIZE_MIB" "$ROUNDS" "$BIG_GIB" "$rss_before" "$rss_peak" "$rss_rounds" "${ANCHOR[@]}" <<'PY'
import pathlib, statistics, sys
work, mib, rounds, big = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
before, peak, rounds_peak = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
anchor = len(sys.argv) > 8
def runs(name):
    vals = [float(x) for x in (work / name).read_text().split()]
    return vals[0::2], vals[1::2]
gib = mib / 1024
rate = lambda t: f"{t:.2f} s ({mib * 1.048576 / t:.0f} MB/s)"
head = "| direct | through the gateway | gateway vs direct | gateway CPU per GiB |"
rule = "|---|---:|---:|---:|---:|"
if anchor:
    head += " through nginx | nginx vs direct | nginx CPU per GiB |"
    rule += "---:|---:|---:|"
print(f"\n| {mib} MiB, median of {rounds} {head}")
print(rule)
for scheme in ["tls", "plain"]:
    for op, label in [("put", "upload (`cp FILE s3://`)"), ("get", "download (`cp s3:// FILE`)")]:
        d, _ = runs(f"{op}-direct-{scheme}")
        md = statistics.median(d)
        what = "TLS both hops" if scheme == "tls" else "plain HTTP"
        row = f"| {label}, {what} | {rate(md)} |"
        for proxy in ["edge", "nginx"] if anchor else ["edge"]:
            e, cpu = runs(f"{op}-{proxy}-{scheme}")
            me = statistics.median(e)
            row += f" {rate(me)} | {md / me * 100:.0f}% | {statistics.median(cpu) / gib:.2f} s |"
        print(row)
print(f"\nCPU per GiB of the server (versitygw) and the client (`slipstream cp`), medians:\n")
print("| transfer | server direct | server via gateway | client direct | client via gateway |")
print("|---|---:|---:|---:|---:|")
for scheme in ["tls", "plain"]:
    for op in ["put", "get"]:
        cpu = {}
        for path in ["direct", "edge"]:
            vals = [float(x) for x in (work / f"{op}-{path}-{scheme}.cpu").read_text().split()]
            cpu[path] = (statistics.median(vals[0::2]) / gib, statistics.median(vals[1::2]) / gib)
        print(f"| {op} {scheme} | {cpu['direct'][0]:.2f} s | {cpu['edge'][0]:.2f} s | {cpu['direct'][1]:.2f} s | {cpu['edge'][1]:.2f} s |")
print(f"\nThe gateway's RSS: {before / 1024:.1f} MiB before a {big} GiB upload and download through it, "
      f"peak {peak / 1024:.1f} MiB during them (+{(peak - before) / 1024:.1f} MiB); its peak over the "
      f"{mib} MiB rounds before them: {rounds_peak / 1024:.1f} MiB.")
PY
