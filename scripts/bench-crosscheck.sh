#!/usr/bin/env bash
# Checks `slipstream bench` against an independent instrument: curl's time_starttransfer for the
# same workload (GET of one 4 KiB object, one request at a time, one kept-alive connection) on the
# same server, alternating the two tools ROUNDS times. Prints P50 and P99 of time to first byte
# for each and their ratio.
#   scripts/with-s3-server.sh scripts/bench-crosscheck.sh [COUNT] [ROUNDS]
# Over the emulated long link (scripts/wan up first):
#   SLIPSTREAM_S3_NETNS=slipstream-s scripts/with-s3-server.sh \
#     env CLIENT="scripts/wan exec client" scripts/bench-crosscheck.sh 300 3
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${1:-2000}
ROUNDS=${2:-3}
BIN=target/release/slipstream
read -r -a WRAP <<< "${CLIENT:-}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
BUCKET=xcheck-$RANDOM$RANDOM
S3ARGS=(--endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style --region "$SLIPSTREAM_TEST_REGION")
"${WRAP[@]}" "$BIN" mb "s3://$BUCKET" "${S3ARGS[@]}"
head -c 4096 /dev/urandom > "$WORK/obj"
"${WRAP[@]}" "$BIN" cp "$WORK/obj" "s3://$BUCKET/obj" "${S3ARGS[@]}" --quiet

# pct FILE Q: nearest-rank percentile of the numbers in FILE (one per line).
pct() { sort -g "$1" | awk -v q="$2" '{ v[NR] = $1 } END { r = int(q * NR); if (r < q * NR) r++; if (r < 1) r = 1; print v[r] }'; }

for round in $(seq "$ROUNDS"); do
  # slipstream: its own objects (same size) under its own prefix; keep-alive, one worker.
  "${WRAP[@]}" "$BIN" bench get --bucket "$BUCKET" "${S3ARGS[@]}" --size 4KiB --objects 1 \
    --count "$COUNT" --concurrency 1 --warmup 10 --quiet --json "$WORK/s.json"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['ttfb_ms']; print(d['p50'], d['p99'])" \
    "$WORK/s.json" >> "$WORK/ours"
  # curl: the same GET through one presigned URL, COUNT+10 times on one connection (the first
  # 10 dropped as warm-up, as ours); time_starttransfer is from the transfer's start to the
  # first response byte.
  url=$("$BIN" presign "s3://$BUCKET/obj" "${S3ARGS[@]}")
  : > "$WORK/curl.cfg"
  for _ in $(seq $((COUNT + 10))); do
    printf 'url = "%s"\noutput = /dev/null\n' "$url" >> "$WORK/curl.cfg"
  done
  "${WRAP[@]}" curl -s -K "$WORK/curl.cfg" -w '%{time_starttransfer}\n' | tail -n +11 \
    | awk '{ print $1 * 1000 }' > "$WORK/curl.ms"
  echo "$(pct "$WORK/curl.ms" 0.5) $(pct "$WORK/curl.ms" 0.99)" >> "$WORK/theirs"
done
"$BIN" rm "s3://$BUCKET/obj" "${S3ARGS[@]}" >/dev/null 2>&1 || true

echo "| round | slipstream bench TTFB P50 | curl P50 | ratio | slipstream P99 | curl P99 | ratio |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
paste -d' ' "$WORK/ours" "$WORK/theirs" | awk '{
  printf "| %d | %.3f ms | %.3f ms | %.2f | %.3f ms | %.3f ms | %.2f |\n", NR, $1, $3, $1 / $3, $2, $4, $2 / $4 }'
