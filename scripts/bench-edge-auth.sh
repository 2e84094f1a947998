#!/usr/bin/env bash
# What authenticating at the edge costs and buys: the S3 on Outposts experiment on an emulated
# link, and the edge's own CPU per request, verify mode against pass-through, in one run.
#
#   scripts/bench-edge-auth.sh [AUTHORITY_RTT_MS] [COUNT] [ROUNDS] [CPU_COUNT]   (defaults 40 5000 3 20000)
#
# Layout (scripts/wan up --edge 1ms --rtt AUTHORITY_RTT_MS): the client in slipstream-c, 1 ms
# from the edge site slipstream-e, where versitygw (the origin, plain HTTP) and three gateways
# run; `slipstream authority serve` (SQLite, TLS) in slipstream-s, AUTHORITY_RTT_MS from the
# edge. As on an Outpost: the client and the storage are near each other, the key service far.
#
# Part 1, latency: the Outposts workload (`slipstream bench outposts`: PUT 4 KiB then HEAD it,
# 5 workers, pooled connections), COUNT requests per row per round, ROUNDS rounds with the rows
# alternating; figures are the medians over rounds. Rows:
#   origin      the client signs for versitygw, which verifies
#   passthrough the edge forwards, versitygw verifies
#   verify      the edge verifies with keys from the authority through its cache (defaults)
#   nocache     the edge verifies and asks the authority for every request's key
#               (--key-cache-soft-ttl 0 --key-cache-hard-ttl 0; concurrent requests share a fetch)
# with the edge's key cache hit ratio and the authority's answers during the measured run.
#
# Part 2, CPU: from inside the edge site (no emulated link), 4 KiB GETs on kept-alive
# connections, CPU_COUNT each, through the pass-through and the verifying gateway, alternating
# over ROUNDS rounds: SigV4 header-signed (slipstream bench get), presigned SigV4 and presigned
# SigV4A (URLs made beforehand with the Python package, fetched over 4 kept-alive connections).
# The edge's CPU per request is its process CPU time over the run (every thread, from
# /proc/PID/task/*/schedstat) divided by the requests.
#
# Part 3, timing: presigned GETs signed with an unknown key id and with the known id and a wrong
# secret, alternating on one connection through the verifying edge (5,000 each): both must be
# refused in the same time.
#
# PARTS="2" (any of 1 2 3) runs only those parts: part 2 alone takes about 4 minutes.
# Needs root (namespaces), curl, openssl.
set -euo pipefail
[ -n "${BENCH_TRACE:-}" ] && set -x
cd "$(dirname "$0")/.."
A=${1:-40}
COUNT=${2:-5000}
ROUNDS=${3:-3}
CPU_COUNT=${4:-20000}
EDGE_IP=10.77.0.3
AUTH_IP=10.77.0.2

if [ "${BENCH_EDGE_AUTH_INNER:-}" != 1 ]; then
  make --no-print-directory build python >/dev/null
  scripts/wan up --rtt "${A}ms" --edge 1ms --rate 1gbit
  trap 'scripts/wan down >/dev/null' EXIT
  scripts/wan check
  BENCH_EDGE_AUTH_INNER=1 SLIPSTREAM_S3_NETNS=slipstream-e SLIPSTREAM_S3_HOST=$EDGE_IP \
    scripts/with-s3-server.sh "$0" "$A" "$COUNT" "$ROUNDS" "$CPU_COUNT"
  exit
fi

BIN=$PWD/target/release/slipstream
PY=$PWD/.venv/bin/python
CLIENT=(scripts/wan exec client)
EDGE=(scripts/wan exec edge)
SERVER=(scripts/wan exec server)
REGION=eu-edge-1
WORK=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
ORIGIN=$SLIPSTREAM_TEST_ENDPOINT
ORIGIN_KEY=$AWS_ACCESS_KEY_ID
ORIGIN_SECRET=$AWS_SECRET_ACCESS_KEY

# The authority, far away: a key for the clients of the verifying edges.
scripts/test-cert.sh "$WORK" authority "IP:$AUTH_IP,DNS:authority.test"
"$BIN" authority master-key "$WORK/master.key" 2>/dev/null
STORE=(--database "$WORK/authority.db" --master-key-file "$WORK/master.key")
"$BIN" authority key create "${STORE[@]}" \
  --policy '{"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}' > "$WORK/key.json"
KEY_ID=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["AccessKey"]["AccessKeyId"])' "$WORK/key.json")
KEY_SECRET=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["AccessKey"]["SecretAccessKey"])' "$WORK/key.json")
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$WORK/edge-token"
"${SERVER[@]}" "$BIN" authority serve "${STORE[@]}" --edge-token-file "$WORK/edge-token" \
  --listen "$AUTH_IP:9470" --tls-cert "$WORK/authority.pem" --tls-key "$WORK/authority.key" \
  2>"$WORK/authority.err" &
pids+=($!)

# gateway NAME PORT METRICS_PORT ARGS...: a gateway in the edge site; its pid in $WORK/NAME.pid.
gateway() {
  local name=$1 port=$2 metrics=$3
  shift 3
  "${EDGE[@]}" env AWS_ACCESS_KEY_ID="$ORIGIN_KEY" AWS_SECRET_ACCESS_KEY="$ORIGIN_SECRET" \
    "$BIN" gateway --listen "$EDGE_IP:$port" --origin "$ORIGIN" --metrics-listen "127.0.0.1:$metrics" \
    "$@" 2>"$WORK/$name.err" &
  pids+=($!)
  echo $! > "$WORK/$name.pid"
}
VERIFY=(--mode verify --region "$REGION" --origin-region "$SLIPSTREAM_TEST_REGION"
        --authority "https://$AUTH_IP:9470" --authority-token-file "$WORK/edge-token"
        --authority-ca-bundle "$WORK/ca.pem")
gateway passthrough 18001 19001
gateway verify 18002 19002 "${VERIFY[@]}"
gateway nocache 18003 19003 "${VERIFY[@]}" --key-cache-soft-ttl 0s --key-cache-hard-ttl 0s
for port in 18001 18002 18003; do
  for _ in $(seq 1 100); do
    "${CLIENT[@]}" curl -s -o /dev/null "http://$EDGE_IP:$port/" && break
    sleep 0.1
  done
done
"${SERVER[@]}" curl -sf --cacert "$WORK/ca.pem" "https://$AUTH_IP:9470/healthz" >/dev/null

# Per row: the endpoint, and the credentials and region the client signs with.
url_of() { case "$1" in origin) echo "$ORIGIN" ;; passthrough) echo "http://$EDGE_IP:18001" ;;
  verify) echo "http://$EDGE_IP:18002" ;; nocache) echo "http://$EDGE_IP:18003" ;; esac; }
as_client() { # ROW COMMAND...
  local row=$1
  shift
  case "$row" in
    origin|passthrough) env AWS_ACCESS_KEY_ID="$ORIGIN_KEY" AWS_SECRET_ACCESS_KEY="$ORIGIN_SECRET" \
      AWS_REGION="$SLIPSTREAM_TEST_REGION" "$@" ;;
    *) env AWS_ACCESS_KEY_ID="$KEY_ID" AWS_SECRET_ACCESS_KEY="$KEY_SECRET" AWS_REGION="$REGION" "$@" ;;
  esac
}
. scripts/proc-stats.sh
metric() { # METRICS_PORT NAME: one counter of a gateway
  "${EDGE[@]}" curl -s "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1 == n { v = $2 } END { print v + 0 }'
}
authority_answers() {
  "${SERVER[@]}" curl -s --cacert "$WORK/ca.pem" "https://$AUTH_IP:9470/metrics" \
    | awk '$1 == "authority_key_answers_total" { v = $2 } END { print v + 0 }'
}
metrics_port() { case "$1" in passthrough) echo 19001 ;; verify) echo 19002 ;; nocache) echo 19003 ;; esac; }

BUCKET=auth-$RANDOM$RANDOM
as_client origin "${CLIENT[@]}" "$BIN" mb "s3://$BUCKET" --endpoint-url "$ORIGIN" >/dev/null

# part N: whether part N runs (PARTS="1 2 3" by default).
part() { case " ${PARTS:-1 2 3} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# Warm: each verifying edge learns the key once (a cold start is not the steady state).
for row in verify nocache; do
  as_client "$row" "${CLIENT[@]}" "$BIN" ls "s3://$BUCKET" --endpoint-url "$(url_of "$row")" >/dev/null
done

# Part 1: the Outposts workload.
ROWS=(origin passthrough verify nocache)
part 1 || ROUNDS_1=0
for round in $(seq 1 "${ROUNDS_1:-$ROUNDS}"); do
  for row in "${ROWS[@]}"; do
    name="outposts-$row-$round"
    before_hits=0 before_misses=0 before_answers=$(authority_answers)
    if [ "$row" = verify ] || [ "$row" = nocache ]; then
      m=$(metrics_port "$row")
      before_hits=$(metric "$m" gateway_key_cache_hits_total)
      before_misses=$(metric "$m" gateway_key_cache_misses_total)
    fi
    as_client "$row" "${CLIENT[@]}" "$BIN" bench outposts --bucket "$BUCKET" --count "$COUNT" \
      --endpoint-url "$(url_of "$row")" --path-style --quiet --json "$WORK/$name.json" >/dev/null
    hits=0 misses=0
    if [ "$row" = verify ] || [ "$row" = nocache ]; then
      hits=$(( $(metric "$m" gateway_key_cache_hits_total) - before_hits ))
      misses=$(( $(metric "$m" gateway_key_cache_misses_total) - before_misses ))
    fi
    echo "$hits $misses $(( $(authority_answers) - before_answers ))" > "$WORK/$name.cache"
  done
done

# Part 2: the edge's CPU per request. Objects for the GETs, then URLs presigned beforehand.
head -c 4096 /dev/urandom > "$WORK/4k"
for i in $(seq 0 9); do
  as_client origin "${EDGE[@]}" "$BIN" cp "$WORK/4k" "s3://$BUCKET/cpu/o$i" --endpoint-url "$ORIGIN" >/dev/null
done
# cpu RUN ROW KIND: one run of CPU_COUNT requests of KIND through ROW's gateway; writes
# "requests cpu_ns" to $WORK/cpu-KIND-ROW-RUN.
cpu() {
  local run=$1 row=$2 kind=$3 pid before after ops
  pid=$(cat "$WORK/$row.pid")
  local region=$SLIPSTREAM_TEST_REGION
  [ "$row" = verify ] && region=$REGION
  before=$(cpu_ns "$pid")
  case "$kind" in
    header)
      as_client "$row" "${EDGE[@]}" "$BIN" bench get --bucket "$BUCKET" --objects 10 --size 4KiB \
        --count "$CPU_COUNT" --concurrency 4 --endpoint-url "$(url_of "$row")" --path-style --quiet \
        --json "$WORK/cpu-$kind-$row-$run.json" >/dev/null
      ops=$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["ops"])' "$WORK/cpu-$kind-$row-$run.json") ;;
    presigned) ops=$(as_client "$row" "${EDGE[@]}" "$PY" "$PWD/scripts/presigned-gets.py" "$(url_of "$row")" "$BUCKET" "$region" v4 "$CPU_COUNT") ;;
    presigned-v4a) ops=$(as_client "$row" "${EDGE[@]}" "$PY" "$PWD/scripts/presigned-gets.py" "$(url_of "$row")" "$BUCKET" "$region" v4a "$CPU_COUNT") ;;
  esac
  after=$(cpu_ns "$pid")
  echo "$ops $(( after - before ))" > "$WORK/cpu-$kind-$row-$run"
}
part 2 || ROUNDS_2=0
for round in $(seq 1 "${ROUNDS_2:-$ROUNDS}"); do
  for kind in header presigned; do
    for row in passthrough verify; do cpu "$round" "$row" "$kind"; done
  done
  cpu "$round" verify presigned-v4a
done

# Part 3: does timing tell an unknown key from a known key with a wrong signature? Presigned
# GETs through the verifying edge (both refused 403 there, both answered from its cache: the
# unknown id from the negative cache), alternating on one kept-alive connection, each timed by
# the client.
cat > "$WORK/timing.py" <<'PY'
"""Alternates presigned GETs signed with (a) the known key id and a wrong secret and (b) an
unknown key id; prints the client-side times in microseconds as JSON {wrong: [...], unknown: [...]}."""
import http.client, json, sys, time, urllib.parse
import slipstream

endpoint, bucket, region, key_id, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
def urls(access_key_id):
    p = slipstream.Presigner(bucket, region=region, credentials=slipstream.Credentials(access_key_id, "w" * 40),
                             endpoint_url=endpoint, addressing="path")
    return [p.presign_get(f"cpu/o{i % 10}", expires_in=3600) for i in range(n)]
wrong, unknown = urls(key_id), urls("SLIPUNKNOWNKEY000000")
c = http.client.HTTPConnection(urllib.parse.urlsplit(endpoint).netloc, timeout=30)
times = {"wrong": [], "unknown": []}
def get(u):
    s = urllib.parse.urlsplit(u)
    t = time.perf_counter_ns()
    c.request("GET", s.path + "?" + s.query)
    r = c.getresponse()
    body = r.read()
    assert r.status == 403, (r.status, body[:200])
    return (time.perf_counter_ns() - t) / 1000, body
for i in range(n):
    for name, u in (("wrong", wrong[i]), ("unknown", unknown[i])) if i % 2 else (("unknown", unknown[i]), ("wrong", wrong[i])):
        us, body = get(u)
        if i >= 100:  # warm-up: the negative cache fills, the connection warms
            times[name].append(us)
json.dump(times, sys.stdout)
PY
if part 3; then
  as_client verify "${EDGE[@]}" "$PY" "$WORK/timing.py" "$(url_of verify)" "$BUCKET" "$REGION" "$KEY_ID" 5000 > "$WORK/timing.json"
fi

part 1 && "$PY" - "$WORK" "$A" "$COUNT" "$ROUNDS" "$CPU_COUNT" <<'PY'
import json, pathlib, statistics, sys
work, a, count, rounds, cpu_count = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rows = ["origin", "passthrough", "verify", "nocache"]
label = {"origin": "origin verifying (direct)", "passthrough": "edge, pass-through (origin verifies)",
         "verify": "edge verifying, cached keys", "nocache": "edge verifying, no cache (every request waits on an authority answer)"}
pcts = ["p25", "p50", "p75", "p99", "p999"]
print(f"\nOutposts workload (PUT 4 KiB then HEAD, 5 workers, pooled), client 1 ms from the edge and origin,"
      f" authority {a} ms away; {count} requests per row per round, median of {rounds} rounds; latency in ms:\n")
print("| row | " + " | ".join(p.upper().replace("P999", "P99.9") for p in pcts) + " | P99/P50 | key cache hits | authority answers | errors |")
print("|---|" + "---:|" * (len(pcts) + 4))
med = {}
for row in rows:
    runs = [json.loads((work / f"outposts-{row}-{r}.json").read_text()) for r in range(1, rounds + 1)]
    errors = sum(r["errors"] for r in runs)
    med[row] = {p: statistics.median(r["latency_ms"][p] for r in runs) for p in pcts}
    cache = [list(map(int, (work / f"outposts-{row}-{r}.cache").read_text().split())) for r in range(1, rounds + 1)]
    hits, misses, answers = (sum(c[i] for c in cache) for i in range(3))
    ratio = f"{100 * hits / (hits + misses):.3f}% ({misses} waited)" if row in ("verify", "nocache") else ""
    print(f"| {label[row]} | " + " | ".join(f"{med[row][p]:.2f}" for p in pcts)
          + f" | {med[row]['p99'] / med[row]['p50']:.2f} | {ratio} | {answers if row in ('verify', 'nocache') else ''} | {errors} |")
d = med["verify"]["p99"] - med["passthrough"]["p99"]
print(f"\nVerifying at the edge (cached) vs pass-through: P99 {d:+.2f} ms, P50 {med['verify']['p50'] - med['passthrough']['p50']:+.2f} ms;"
      f" vs the origin verifying directly: P50 {med['verify']['p50'] / med['origin']['p50']:.2f}x, P99 {med['verify']['p99'] / med['origin']['p99']:.2f}x")
PY
part 2 && "$PY" - "$WORK" "$A" "$COUNT" "$ROUNDS" "$CPU_COUNT" <<'PY'
import json, pathlib, statistics, sys
work, a, count, rounds, cpu_count = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
print(f"\nThe edge's CPU per request (4 KiB GET, 4 kept-alive connections, {cpu_count} requests per run, median of {rounds} runs):\n")
print("| request | pass-through | verify | verify - pass-through |")
print("|---|---:|---:|---:|")
def per(kind, row):
    vals = []
    for r in range(1, rounds + 1):
        f = work / f"cpu-{kind}-{row}-{r}"
        if f.exists():
            ops, ns = map(int, f.read_text().split())
            vals.append(ns / ops / 1000)
    return statistics.median(vals) if vals else None
for kind, name in [("header", "SigV4, header-signed"), ("presigned", "SigV4, presigned"), ("presigned-v4a", "SigV4A, presigned")]:
    p, v = per(kind, "passthrough"), per(kind, "verify")
    if p is None:
        pv = per("presigned", "passthrough")
        print(f"| {name} | (origin cannot verify it) | {v:.1f} us | {v - pv:+.1f} us vs SigV4 presigned pass-through |")
    else:
        print(f"| {name} | {p:.1f} us | {v:.1f} us | {v - p:+.1f} us |")
PY
part 3 && "$PY" - "$WORK" "$A" "$COUNT" "$ROUNDS" "$CPU_COUNT" <<'PY'
import json, pathlib, statistics, sys
work, a, count, rounds, cpu_count = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
t = json.loads((work / "timing.json").read_text())
q = lambda xs, f: sorted(xs)[int(f * (len(xs) - 1))]
print(f"\nUnknown key vs known key with a wrong signature, presigned GETs refused by the verifying edge,"
      f" alternating on one connection ({len(t['wrong'])} each), client-side microseconds:\n")
print("| request | P25 | P50 | P75 | P99 |")
print("|---|---:|---:|---:|---:|")
for name in ["wrong", "unknown"]:
    print(f"| {'known key, wrong signature' if name == 'wrong' else 'unknown key'} | " + " | ".join(f"{q(t[name], f):.0f}" for f in (0.25, 0.5, 0.75, 0.99)) + " |")
diffs = sorted(u - w for u, w in zip(t["unknown"], t["wrong"]))
print(f"\nPaired difference (unknown - wrong) median {diffs[len(diffs) // 2]:+.1f} us;"
      f" medians' ratio {q(t['unknown'], 0.5) / q(t['wrong'], 0.5):.3f}")
PY
echo
echo "Verifying gateway's key cache:"
"${EDGE[@]}" curl -s http://127.0.0.1:19002/metrics | grep -E '^gateway_key_(cache|fetch)_[a-z_]*(total|count|sum) ' || true
