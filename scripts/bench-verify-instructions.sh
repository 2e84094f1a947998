#!/usr/bin/env bash
# The verifying edge's user-mode instructions per request, against pass-through, counted by
# valgrind's callgrind: deterministic where CPU time is not. On this shared 2-core machine two
# processes of one build differ by up to 6 us per request in CPU time, more than most single
# changes to the verify path save; instruction counts differ by well under 1% between runs,
# so they show what a change removed (then bench-verify-cpu-ab.sh / bench-edge-auth.sh say what
# that is worth in time).
#
#   scripts/with-s3-server.sh scripts/bench-verify-instructions.sh [BIN] [COUNT] [KIND] [TOP]
#
# BIN (default target/release/slipstream) runs under callgrind twice, as a pass-through and as
# a verifying gateway (keys file) in front of versitygw; KIND header (default: header-signed
# GETs from `slipstream bench get`) or presigned (SigV4 URLs from the Python package, fetched
# over 4 kept-alive connections). 300 requests warm each up, the counters are zeroed, COUNT
# (default 1000) 4 KiB GETs are counted. Prints instructions per request for both modes, then
# the TOP (default 30) functions by self cost difference (verify - pass-through).
# Under valgrind SHA-256 runs in software (no SHA-NI), so `compress256` looks ~20x its native
# cost: read it as a block count (about 3,200 instructions a block).
# CALLGRIND_ARGS adds options to valgrind (e.g. `--dump-instr=yes`, which scripts/code-lines.py
# reads). KEEP=DIR copies both callgrind files there (pass.cg, verify.cg) for callgrind_annotate
# --inclusive=yes, which shows what a verify step costs with its callees.
# Needs valgrind (Debian: apt-get install valgrind) and, for presigned, `make python`.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-$PWD/target/release/slipstream} COUNT=${2:-1000} KIND=${3:-header} TOP=${4:-30}
CLIENT=$PWD/target/release/slipstream
PY=$PWD/.venv/bin/python
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
W=$(mktemp -d)
vpid=""
trap '[ -n "$vpid" ] && kill "$vpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT
cat > "$W/keys.toml" <<K
[[keys]]
access_key_id = "AKIDEDGE"
secret_access_key = "edge-secret"
policy = { Statement = [{ Effect = "Allow", Action = "s3:*", Resource = "*" }] }
K
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
BUCKET=instructions-$RANDOM$RANDOM
"$CLIENT" mb "s3://$BUCKET" --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" >/dev/null
head -c 4096 /dev/urandom > "$W/4k"
for i in $(seq 0 9); do "$CLIENT" cp "$W/4k" "s3://$BUCKET/cpu/o$i" --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --quiet; done
get() { # MODE PORT N: N GETs of KIND through the gateway on PORT
  local mode=$1 url=http://127.0.0.1:$2 n=$3 id=$AWS_ACCESS_KEY_ID secret=$AWS_SECRET_ACCESS_KEY region=$SLIPSTREAM_TEST_REGION
  [ "$mode" = verify ] && id=AKIDEDGE secret=edge-secret region=eu-edge-1
  if [ "$KIND" = presigned ]; then
    env AWS_ACCESS_KEY_ID=$id AWS_SECRET_ACCESS_KEY=$secret "$PY" scripts/presigned-gets.py "$url" "$BUCKET" "$region" v4 "$n" >/dev/null
  else
    env AWS_ACCESS_KEY_ID=$id AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=$region "$CLIENT" bench get \
      --bucket "$BUCKET" --objects 10 --size 4KiB --count "$n" --concurrency 4 --endpoint-url "$url" \
      --path-style --quiet --json "$W/get.json" >/dev/null
  fi
}
for mode in pass verify; do
  args=(); [ "$mode" = verify ] && args=(--mode verify --keys "$W/keys.toml" --region eu-edge-1 --origin-region "$SLIPSTREAM_TEST_REGION")
  p=$(port)
  valgrind --tool=callgrind --callgrind-out-file="$W/$mode.cg" ${CALLGRIND_ARGS:-} \
    "$BIN" gateway --listen "127.0.0.1:$p" --origin "$SLIPSTREAM_TEST_ENDPOINT" "${args[@]}" 2>"$W/$mode.err" &
  vpid=$!
  for _ in $(seq 1 300); do curl -s -o /dev/null "http://127.0.0.1:$p/" && break; sleep 0.1; done
  get "$mode" "$p" 300
  callgrind_control -z "$vpid" >/dev/null
  get "$mode" "$p" "$COUNT"
  callgrind_control -d "$vpid" >/dev/null
  kill "$vpid"; wait "$vpid" 2>/dev/null || true
  vpid=""
done
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP"; cp "$W/pass.cg.1" "$KEEP/pass.cg"; cp "$W/verify.cg.1" "$KEEP/verify.cg"; fi
python3 - "$W/pass.cg.1" "$W/verify.cg.1" "$COUNT" "$TOP" "$KIND" <<'PY'
# Self cost per function from callgrind's file format: cost lines under `fn=`, except the line
# after `calls=` (that is the callee's inclusive cost).
import collections, re, sys
def self_costs(path):
    names, costs, fn, after_call = {}, collections.Counter(), None, False
    for line in open(path, errors="replace"):
        m = re.match(r"(fn|cfn|fl|fi|fe|cfi|cfl|ob|cob)=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
        if m:
            kind, index, name = m.groups()
            if kind in ("fn", "cfn") and name:
                names[index] = name
            if kind == "fn":
                fn = names[index]
            continue
        if line.startswith("calls="):
            after_call = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            if not after_call and fn:
                costs[fn] += int(line.split()[-1])  # the one event, Ir, is last
            after_call = False
    return costs
p, v, n, top, kind = self_costs(sys.argv[1]), self_costs(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
tp, tv = sum(p.values()) / n, sum(v.values()) / n
sha = (v.get("sha2::sha256::compress256", 0) - p.get("sha2::sha256::compress256", 0)) / n
print(f"\nInstructions per request, {kind} 4 KiB GETs, {n} counted (callgrind):\n")
print("| pass-through | verify | verify - pass-through | of which SHA-256 in software |")
print("|---:|---:|---:|---:|")
print(f"| {tp:,.0f} | {tv:,.0f} | +{tv - tp:,.0f} | {sha:,.0f} (~{sha / 3200:.0f} blocks) |")
print(f"\nLargest differences (self instructions per request: verify - pass-through, pass-through, verify):\n")
for f in sorted(set(p) | set(v), key=lambda f: p.get(f, 0) - v.get(f, 0))[:top]:
    print(f"{(v.get(f, 0) - p.get(f, 0)) / n:+9,.0f} {p.get(f, 0) / n:9,.0f} {v.get(f, 0) / n:9,.0f}  {f[:110]}")
PY
