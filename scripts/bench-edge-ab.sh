#!/usr/bin/env bash
# A/B of the gateway's request path on loopback: pooled 4 KiB GETs (3,000, concurrency 4)
# through a plain-HTTP gateway in front of versitygw, the gateways of two `slipstream` binaries
# alternating, measured by the same client (target/release/slipstream). Build the old binary
# with `git worktree add /tmp/old REV && CARGO_TARGET_DIR=/tmp/old-target cargo build --release`.
#   scripts/with-s3-server.sh scripts/bench-edge-ab.sh OLD_BIN NEW_BIN [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=$1 NEW=$2 ROUNDS=${3:-3}
B=target/release/slipstream
W=$(mktemp -d)
g=""
trap '[ -n "$g" ] && kill $g 2>/dev/null; rm -rf "$W"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
"$B" mb s3://edge-ab --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" >/dev/null 2>&1 || true
for r in $(seq 1 "$ROUNDS"); do
  for which in old new; do
    bin=$OLD; [ "$which" = new ] && bin=$NEW
    p=$(port)
    "$bin" gateway --listen "127.0.0.1:$p" --origin "$SLIPSTREAM_TEST_ENDPOINT" 2>"$W/$which.err" &
    g=$!
    until grep -q listening "$W/$which.err"; do sleep 0.05; done
    "$B" bench get --bucket edge-ab --count 3000 --concurrency 4 --endpoint-url "http://127.0.0.1:$p" \
      --json "$W/$which-$r.json" >"$W/bench.log" 2>&1 || { cat "$W/bench.log"; exit 1; }
    kill "$g"; wait "$g" 2>/dev/null || true; g=""
    python3 - "$W/$which-$r.json" "$which" "$r" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); t = r["ttfb_ms"]; l = r["latency_ms"]
print(f"{sys.argv[2]} round {sys.argv[3]}: ttfb p50 {t['p50']:.3f} p99 {t['p99']:.3f}  latency p50 {l['p50']:.3f} p99 {l['p99']:.3f}")
PY
  done
done
