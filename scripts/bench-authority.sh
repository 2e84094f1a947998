#!/usr/bin/env bash
# The authority under load: many edges asking for keys at once (a fleet's cold start, or its
# steady refreshes: edges x active keys / the 5 min soft TTL). `ab` (apache2-utils; installed
# with apt-get when missing) sends REQUESTS key answers (`GET /v1/keys/ID?region=...` with an
# edge's token, kept-alive TLS connections, CONCURRENCY at once, over KEYS keys in turn) to one
# `slipstream authority serve` on SQLite and one on PostgreSQL (the cluster of
# with-postgres.sh, over TLS as `sslmode=prefer` gives it), in ROUNDS rounds alternating the
# stores; medians of answers/s, of the mean latency and of P99 (ab's whole milliseconds).
#
#   scripts/with-postgres.sh scripts/bench-authority.sh [REQUESTS] [CONCURRENCY...]
#       (defaults 20000, concurrency "1 8 32"; ROUNDS=3 KEYS=100; BIN=slipstream binary)
#
# DB_DELAY_MS=N puts the database N ms away each way (scripts/delay-relay.py between the
# authority and PostgreSQL; its management commands go direct): a database on another machine.
#
# REPLICAS=N (N >= 2) adds a row: N authorities serving the one PostgreSQL database (each with
# its own connection, as a fleet's replicas), N ab at once, CONCURRENCY/N each (REQUESTS/N
# each); answers/s of them all (every answer over the longest run), the mean latency averaged,
# the worst P99.
#
# Needs make build. The authority, ab and PostgreSQL share this machine's cores: the figures
# are relative (one store against the other, one build against another), not a capacity.
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${1:-20000}
shift || true
read -r -a CONCURRENCY <<< "${*:-1 8 32}"
ROUNDS=${ROUNDS:-3}
KEYS=${KEYS:-100}
BIN=${BIN:-$PWD/target/release/slipstream}
[ -n "${SLIPSTREAM_TEST_POSTGRES:-}" ] || { echo "run under scripts/with-postgres.sh" >&2; exit 2; }
command -v ab >/dev/null || apt-get install -y apache2-utils >/dev/null
WORK=$(mktemp -d)
# The authorities are this script's only background jobs.
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$WORK"' EXIT

scripts/test-cert.sh "$WORK" authority "IP:127.0.0.1,DNS:localhost"
"$BIN" authority master-key "$WORK/master.key" 2>/dev/null
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$WORK/edge-token"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
POLICY='{"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}'

# start NAME DATABASE SERVED ARGS...: KEYS keys in DATABASE, an authority serving it through
# SERVED (the same database, maybe reached another way); its port in $WORK/NAME.port.
start() {
  local name=$1 database=$2 served=$3
  shift 3
  for i in $(seq 1 "$KEYS"); do
    "$BIN" authority key create --database "$database" --master-key-file "$WORK/master.key" "$@" \
      --policy "$POLICY" --access-key-id "$(printf 'BENCH%s%011d' "${name^^}" "$i")" >/dev/null
  done
  serve "$name" "$served" "$@"
}
# serve NAME SERVED ARGS...: an authority serving the database SERVED; its port in $WORK/NAME.port.
serve() {
  local name=$1 served=$2
  shift 2
  local store=(--master-key-file "$WORK/master.key" "$@")
  local port
  port=$(free_port)
  "$BIN" authority serve --database "$served" "${store[@]}" --edge-token-file "$WORK/edge-token" \
    --listen "127.0.0.1:$port" --tls-cert "$WORK/authority.pem" --tls-key "$WORK/authority.key" \
    2>"$WORK/$name.err" &
  for _ in $(seq 1 100); do
    curl -s -o /dev/null --cacert "$WORK/ca.pem" "https://127.0.0.1:$port/healthz" && break
    sleep 0.05
  done
  echo "$port" > "$WORK/$name.port"
}
start sqlite "$WORK/authority.db" "$WORK/authority.db"
database=$SLIPSTREAM_TEST_POSTGRES
if [ -n "${DB_DELAY_MS:-}" ]; then
  upstream=${database#*@}; upstream=${upstream%%/*}
  python3 scripts/delay-relay.py "$upstream" "$DB_DELAY_MS" > "$WORK/relay.port" &
  for _ in $(seq 1 100); do [ -s "$WORK/relay.port" ] && break; sleep 0.05; done
  database=${database/@$upstream/@127.0.0.1:$(cat "$WORK/relay.port")}
fi
start postgres "$SLIPSTREAM_TEST_POSTGRES" "$database" --database-ca-bundle "$SLIPSTREAM_TEST_POSTGRES_CA"
REPLICAS=${REPLICAS:-1}
for i in $(seq 2 "$REPLICAS"); do
  serve "postgres-$i" "$database" --database-ca-bundle "$SLIPSTREAM_TEST_POSTGRES_CA"
done

# ask NAME PORT N C OUT: one ab run of N requests, C at once, to the authority on PORT for one
# of NAME's keys (ab takes one URL: drawn from the KEYS at random); "answers/s mean_ms p99_ms"
# into OUT.
ask() {
  local name=$1 port=$2 n=$3 c=$4 out=$5 key
  key=$(printf 'BENCH%s%011d' "${name^^}" $(( (RANDOM % KEYS) + 1 )))
  ab -k -q -n "$n" -c "$c" -H "Authorization: Bearer $(cat "$WORK/edge-token")" \
    "https://127.0.0.1:$port/v1/keys/$key?region=eu-bench-1" > "$out.ab" 2>&1 || {
    cat "$out.ab" >&2; return 1; }
  grep -q "^Non-2xx responses" "$out.ab" && { echo "$name: refused answers" >&2; cat "$out.ab" >&2; return 1; }
  awk '/^Failed requests:/ { if ($3 != 0) { print "failed: " $3 > "/dev/stderr"; exit 1 } }
       /^Requests per second:/ { rps = $4 }
       /^Time per request:.*\(mean\)$/ { mean = $4 } /^  99%/ { p99 = $2 }
       END { print rps, mean, p99 }' "$out.ab" > "$out"
}
# load NAME CONCURRENCY: one run; appends "answers/s mean_ms p99_ms" to $WORK/NAME.CONCURRENCY.
load() {
  local name=$1 c=$2
  ask "$name" "$(cat "$WORK/$name.port")" "$REQUESTS" "$c" "$WORK/one" || exit 1
  cat "$WORK/one" >> "$WORK/$name.$c"
}
# load_replicas CONCURRENCY: every PostgreSQL replica asked at once, CONCURRENCY/REPLICAS each;
# appends the answers a second of them all (every answer over the longest run's time), the mean
# of means and the worst P99 to $WORK/replicas.CONCURRENCY.
load_replicas() {
  local c=$1 each=$(( $1 / REPLICAS )) asks=() i replica
  [ "$each" -ge 1 ] || each=1
  for i in $(seq 1 "$REPLICAS"); do
    replica=postgres; [ "$i" = 1 ] || replica=postgres-$i
    ask postgres "$(cat "$WORK/$replica.port")" $(( REQUESTS / REPLICAS )) "$each" "$WORK/part$i" & asks+=($!)
  done
  for i in "${asks[@]}"; do wait "$i" || exit 1; done
  for i in $(seq 1 "$REPLICAS"); do cat "$WORK/part$i"; done | awk -v n=$(( REQUESTS / REPLICAS )) '
    { t = n / $1; if (t > longest) longest = t; mean += $2; if ($3 > p99) p99 = $3 }
    END { print n * NR / longest, mean / NR, p99 }' >> "$WORK/replicas.$c"
}
NAMES=(sqlite postgres)
[ "$REPLICAS" -ge 2 ] && NAMES+=(replicas)
for r in $(seq 1 "$ROUNDS"); do
  for c in "${CONCURRENCY[@]}"; do
    for name in "${NAMES[@]}"; do
      if [ "$name" = replicas ]; then load_replicas "$c"; else load "$name" "$c"; fi
    done
  done
done
echo "authority answers, $REQUESTS requests a run, median of $ROUNDS rounds ($(git rev-parse --short HEAD))${DB_DELAY_MS:+, the database $DB_DELAY_MS ms away each way}"
echo "| store | concurrency | answers/s | mean | P99 |"
echo "|---|---:|---:|---:|---:|"
for c in "${CONCURRENCY[@]}"; do
  for name in "${NAMES[@]}"; do
    label=$name; [ "$name" = replicas ] && label="postgres, $REPLICAS replicas"
    python3 - "$WORK/$name.$c" "$label" "$c" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
med = [statistics.median(col) for col in zip(*rows)]
runs = " / ".join(f"{r[0]:.0f}" for r in rows)
print(f"| {sys.argv[2]} | {sys.argv[3]} | {med[0]:,.0f} ({runs}) | {med[1]:.2f} ms | {med[2]:.0f} ms |")
PY
  done
done
