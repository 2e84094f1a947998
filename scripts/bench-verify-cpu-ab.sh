#!/usr/bin/env bash
# A/B of the verifying edge's CPU per request on loopback: for two `slipstream` binaries, a
# pass-through gateway and a verifying one (keys file) each, in front of versitygw;
# 4 KiB GETs (COUNT a run, 4 kept-alive connections, CONCURRENCY=N for others; KIND=header, the default: header-signed by
# `slipstream bench get`; KIND=sigv4a: the same, the verifying rows' requests signed with SigV4A
# for the edge's region (AWS_SIGV4A_SIGNING_REGION_SET; pass-through rows stay SigV4, which the
# origin verifies); KIND=presigned: SigV4 URLs from the Python package, fetched by
# scripts/presigned-gets.py, which needs `make python`) through each of the four in
# turn (the order reversed every other round), ROUNDS times; prints each gateway's CPU time
# (all threads) per request, and the medians and
# verify - pass-through per binary (and the median of each round's own difference: a round's
# two rows run back to back, so the machine's drift between rounds cancels); then the same for
# user-mode CPU alone, and the gateway's context switches per request (its threads' wake-ups).
# The client is target/release/slipstream for every row.
# Build the old binary with `git worktree add /tmp/old REV && CARGO_TARGET_DIR=/tmp/old-target
# cargo build --release`. With PERF_DIR=DIR, afterwards `perf record`s B's pass-through and
# verifying gateways for 10 s of header-signed GETs each (KIND=presigned: COUNT presigned
# GETs) into DIR/pass.data and DIR/verify.data, the request counts in DIR/pass.ops and
# DIR/verify.ops (PERF_FLAGS replaces `-F 4000`, e.g. with `-F 1000 --call-graph dwarf`):
# compare samples per request, symbol by symbol.
# INTERLEAVE=1: each round sends COUNT GETs (KIND=presigned or header, signed by botocore for
# this mode) through all four gateways at once,
# request by request in turn (scripts/presigned-gets-interleaved.py), so the four rows of a
# round see the same machine at every moment instead of one after another.
# GATEWAY_CPUS=1 pins the gateways to core 1; run the rest elsewhere to keep them apart, e.g.
# `GATEWAY_CPUS=1 taskset -c 0 scripts/with-s3-server.sh ...` (versitygw and the client on
# core 0): a round then varies less with where the scheduler put the three.
#   scripts/with-s3-server.sh scripts/bench-verify-cpu-ab.sh BIN_A BIN_B [COUNT] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1 B=$2 COUNT=${3:-20000} ROUNDS=${4:-4} KIND=${KIND:-header} CONCURRENCY=${CONCURRENCY:-4}
PY=$PWD/.venv/bin/python
CLIENT=$PWD/target/release/slipstream
W=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT
cat > "$W/keys.toml" <<K
[[keys]]
access_key_id = "AKIDEDGE"
secret_access_key = "edge-secret"
policy = { Statement = [{ Effect = "Allow", Action = "s3:*", Resource = "*" }] }
K
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
. scripts/proc-stats.sh
ROWS=(a-pass a-verify b-pass b-verify)
PIN=()
[ -n "${GATEWAY_CPUS:-}" ] && PIN=(taskset -c "$GATEWAY_CPUS")
start_gateways() { # a gateway per row, fresh each round: its port in $W/ROW.port, its pid in $W/ROW.pid
  local row bin mode p
  for row in "${ROWS[@]}"; do
    if [ -f "$W/$row.pid" ]; then kill "$(cat "$W/$row.pid")" 2>/dev/null || true; wait "$(cat "$W/$row.pid")" 2>/dev/null || true; fi
    bin=$A; [ "${row%%-*}" = b ] && bin=$B
    mode=(); [ "${row#*-}" = verify ] && mode=(--mode verify --keys "$W/keys.toml" --region eu-edge-1 --origin-region "$SLIPSTREAM_TEST_REGION")
    p=$(port)
    "${PIN[@]}" "$bin" gateway --listen "127.0.0.1:$p" --origin "$SLIPSTREAM_TEST_ENDPOINT" "${mode[@]}" 2>"$W/$row.err" &
    pids+=($!)
    echo $! > "$W/$row.pid"; echo "$p" > "$W/$row.port"
  done
  for row in "${ROWS[@]}"; do
    for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$(cat "$W/$row.port")/" && break; sleep 0.05; done
  done
}
BUCKET=verify-cpu-$RANDOM$RANDOM
"$CLIENT" mb "s3://$BUCKET" --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" >/dev/null
head -c 4096 /dev/urandom > "$W/4k"
for i in $(seq 0 9); do "$CLIENT" cp "$W/4k" "s3://$BUCKET/cpu/o$i" --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --quiet; done
as_client() { # ROW COMMAND...: with the edge's key for verifying rows
  local row=$1; shift
  case $row in
    *verify)
      local v4a=()
      [ "$KIND" = sigv4a ] && v4a=(AWS_SIGV4A_SIGNING_REGION_SET=eu-edge-1)
      env AWS_ACCESS_KEY_ID=AKIDEDGE AWS_SECRET_ACCESS_KEY=edge-secret AWS_REGION=eu-edge-1 "${v4a[@]}" "$@" ;;
    *) "$@" ;;
  esac
}
get() { # ROW JSON [bench get flags...]: header-signed GETs
  local row=$1 json=$2; shift 2
  as_client "$row" "$CLIENT" bench get --bucket "$BUCKET" --objects 10 --size 4KiB --concurrency "$CONCURRENCY" \
    --endpoint-url "http://127.0.0.1:$(cat "$W/$row.port")" --path-style --quiet --json "$json" "$@" >/dev/null
}
gets() { # ROW N: N GETs of KIND through ROW's gateway; prints the requests made
  local row=$1 n=$2 region=$SLIPSTREAM_TEST_REGION
  case $row in *verify) region=eu-edge-1 ;; esac
  if [ "$KIND" = presigned ]; then
    as_client "$row" env GET_CONNECTIONS="$CONCURRENCY" "$PY" scripts/presigned-gets.py "http://127.0.0.1:$(cat "$W/$row.port")" "$BUCKET" "$region" v4 "$n"
  else
    get "$row" "$W/run.json" --count "$n"
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ops"])' "$W/run.json"
  fi
}
mark() { # ROW: the CPU so far of ROW's gateway, "all_ns user_ticks switches", for record
  local pid
  pid=$(cat "$W/$1.pid")
  echo "$(cpu_ns "$pid") $(user_ticks "$pid") $(switches "$pid" | awk '{ print $1 + $2 }')"
}
record() { # ROW MARK N: appends ns per request since MARK to $W/ROW, user-mode to $W/ROW.user,
  # context switches per 1,000 requests to $W/ROW.switches
  local row=$1 n=$3 now then
  read -r -a now <<< "$(mark "$row")"
  read -r -a then <<< "$2"
  echo $(( (now[0] - then[0]) / n )) >> "$W/$row"
  echo $(( (now[1] - then[1]) * 1000000000 / $(getconf CLK_TCK) / n )) >> "$W/$row.user"
  echo $(( (now[2] - then[2]) * 1000 / n )) >> "$W/$row.switches"
}
run() { # ROUND ROW: COUNT GETs through ROW's gateway alone, recorded
  local row=$2 before
  before=$(mark "$row")
  record "$row" "$before" "$(gets "$row" "$COUNT")"
}
# Even rounds run the rows in reverse: with one order, the last row (B's verifying gateway)
# came out ~5 us higher whichever build was B. Each round starts fresh gateways: two
# processes of one build differed by up to 6 us per request for a whole run (where their
# threads and connections landed), so one process per row would bias the whole comparison.
interleaved() { # N: N GETs of KIND through each of the four gateways at once (INTERLEAVE=1)
  local targets=() row region who
  for row in "${ROWS[@]}"; do
    region=$SLIPSTREAM_TEST_REGION who=origin
    case $row in *verify) region=eu-edge-1 who=edge ;; esac
    targets+=("http://127.0.0.1:$(cat "$W/$row.port"),$region,$who")
  done
  KIND=$KIND EDGE_ACCESS_KEY_ID=AKIDEDGE EDGE_SECRET_ACCESS_KEY=edge-secret \
    "$PY" scripts/presigned-gets-interleaved.py "$BUCKET" "$1" "${targets[@]}" >/dev/null
}
run_interleaved() { # as run, for the four rows measured over the same interleaved requests
  local row marks=()
  for row in "${ROWS[@]}"; do marks+=("$(mark "$row")"); done
  interleaved "$COUNT"
  local i=0
  for row in "${ROWS[@]}"; do record "$row" "${marks[i]}" "$COUNT"; i=$(( i + 1 )); done
}
for r in $(seq 1 "$ROUNDS"); do
  start_gateways
  if [ -n "${INTERLEAVE:-}" ]; then
    interleaved 2000
    run_interleaved
    continue
  fi
  for row in "${ROWS[@]}"; do gets "$row" 2000 >/dev/null; done
  order=("${ROWS[@]}")
  [ $(( r % 2 )) = 0 ] && order=(b-verify b-pass a-verify a-pass)
  for row in "${order[@]}"; do run "$r" "$row"; done
done
# The table's label, not KIND itself: the perf runs below still need KIND as given.
LABEL=$KIND
[ -n "${INTERLEAVE:-}" ] && LABEL="$LABEL (interleaved)"
[ "$CONCURRENCY" != 4 ] && LABEL="$LABEL ($CONCURRENCY connections)"
python3 - "$W" "$A" "$B" "$COUNT" "$ROUNDS" "$LABEL" <<'PY'
import pathlib, statistics, sys
w, a, b, count, rounds, load = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
rows = ["a-pass", "a-verify", "b-pass", "b-verify"]
for kind, suffix, what in [("all", "", "CPU (user + kernel)"), ("user", ".user", "user-mode CPU (the kernel's share, ~2/3, is the same work in both modes and its noise)")]:
    us = {row: [int(x) / 1000 for x in (w / f"{row}{suffix}").read_text().split()] for row in rows}
    print(f"\nGateway {what} per request, {load} 4 KiB GETs, {count} a run, {rounds} rounds (runs; median):\n")
    print("| binary | pass-through | verify | verify - pass-through | median of each round's difference |")
    print("|---|---|---|---:|---:|")
    for x, path in [("a", a), ("b", b)]:
        p, v = us[f"{x}-pass"], us[f"{x}-verify"]
        mp, mv = statistics.median(p), statistics.median(v)
        runs = lambda l: " / ".join(f"{t:.1f}" for t in l)
        paired = statistics.median(b - a for a, b in zip(p, v))
        print(f"| {x}: {path} | {runs(p)}; **{mp:.1f} us** | {runs(v)}; **{mv:.1f} us** | +{mv - mp:.1f} us | {paired:+.1f} us |")
# Wake-ups: a thread that parks and is woken costs two switches and the kernel's work around
# them, which grows with how often the gateway's threads run out of work between requests.
sw = {row: [int(x) / 1000 for x in (w / f"{row}.switches").read_text().split()] for row in rows}
print("\nGateway context switches per request (all threads, voluntary and not; runs; median):\n")
print("| binary | pass-through | verify |")
print("|---|---|---|")
for x, path in [("a", a), ("b", b)]:
    p, v = sw[f"{x}-pass"], sw[f"{x}-verify"]
    runs = lambda l: " / ".join(f"{t:.2f}" for t in l)
    print(f"| {x}: {path} | {runs(p)}; **{statistics.median(p):.2f}** | {runs(v)}; **{statistics.median(v):.2f}** |")
PY
if [ -n "${PERF_DIR:-}" ]; then
  for row in b-pass b-verify; do
    name=${row#b-}
    perf record ${PERF_FLAGS:--F 4000} -o "$PERF_DIR/$name.data" -p "$(cat "$W/$row.pid")" 2>/dev/null &
    rec=$!
    sleep 0.5
    if [ "$KIND" = presigned ]; then
      gets "$row" "$COUNT" > "$PERF_DIR/$name.ops"
    else
      get "$row" "$PERF_DIR/$name.json" --duration 10s
      python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ops"])' "$PERF_DIR/$name.json" > "$PERF_DIR/$name.ops"
    fi
    kill -INT "$rec"; wait "$rec" || true
  done
fi
