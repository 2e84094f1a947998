#!/usr/bin/env bash
# The main job, end to end, against the local server started by with-s3-server.sh:
# create a bucket, upload a file through a presigned PUT, presign 1,000,000 GET URLs and print
# the rate, then download the file with curl through a presigned GET and check it matches;
# finally move 1 GiB up and down with `slipstream cp` (parallel parts, progress bar on a terminal).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${SLIPSTREAM_TEST_ENDPOINT:?run through scripts/with-s3-server.sh}"
bin=target/release/slipstream
export AWS_ENDPOINT_URL="$SLIPSTREAM_TEST_ENDPOINT" AWS_REGION="$SLIPSTREAM_TEST_REGION"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1. Create the bucket 'demo' on $SLIPSTREAM_TEST_ENDPOINT (curl's own SigV4)"
curl -sS --fail-with-body -X PUT --aws-sigv4 "aws:amz:$AWS_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
  -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
  "$SLIPSTREAM_TEST_ENDPOINT/demo" -o /dev/null
echo "created"

step "2. Upload 4 MiB through a presigned PUT"
head -c 4194304 /dev/urandom > "$work/report 2026.bin"
key='reports/report 2026 (final)+v2.bin'
put_url="$("$bin" presign --method PUT --expires-in 600 "s3://demo/$key")"
echo "$put_url" | cut -c1-120 | sed 's/$/.../'
curl -sS --fail-with-body -X PUT --data-binary @"$work/report 2026.bin" "$put_url" -o /dev/null
echo "uploaded as s3://demo/$key"

step "3. Presign 1,000,000 GET URLs with slipstream presign (all cores)"
seq -f 'photos/2026/img-%07g.jpg' 1 1000000 > "$work/keys.txt"
# Counted through a pipe: writing the 300 MB of URLs to disk would measure the disk instead.
start=$(date +%s%N)
lines=$("$bin" presign --bucket demo < "$work/keys.txt" | wc -l)
end=$(date +%s%N)
awk -v n="$lines" -v ns="$((end - start))" 'BEGIN { printf "%d URLs in %.3f s: %.2f million URLs/s\n", n, ns / 1e9, n / (ns / 1e9) / 1e6 }'
head -1 "$work/keys.txt" | "$bin" presign --bucket demo

step "4. Download through a presigned GET with curl and compare"
get_url="$("$bin" presign "s3://demo/$key")"
curl -sS --fail-with-body "$get_url" -o "$work/downloaded.bin"
if cmp -s "$work/report 2026.bin" "$work/downloaded.bin"; then
  echo "downloaded $(wc -c < "$work/downloaded.bin") bytes: identical (sha256 $(sha256sum "$work/downloaded.bin" | cut -c1-16)...)"
else
  echo "MISMATCH: the downloaded file differs" >&2
  exit 1
fi

step "5. A tampered URL is refused"
# Another hex digit in place of the last one (replacing it with a fixed "0" left one URL in 16
# unchanged: those whose signature already ended in 0).
last=${get_url: -1}
other=0; [ "$last" = 0 ] && other=1
code=$(curl -s -o /dev/null -w '%{http_code}' "${get_url%?}$other")
echo "changing the last signature character gives HTTP $code"
[ "$code" = 403 ]
step "6. Upload and download 1 GiB with slipstream cp (16 parts of 8 MiB in flight)"
head -c $((1024 << 20)) /dev/urandom > "$work/big.bin"
"$bin" cp "$work/big.bin" s3://demo/big.bin
"$bin" cp s3://demo/big.bin "$work/big.back"
cmp "$work/big.bin" "$work/big.back" && echo "1 GiB round trip: identical"
rm -f "$work/big.bin" "$work/big.back"

step "7. Measure: time to first byte of 4 KiB GETs, kept connections vs a new TLS connection each"
tls=(--endpoint-url "$SLIPSTREAM_TEST_TLS_ENDPOINT" --ca-bundle "$SLIPSTREAM_TEST_CA")
"$bin" bench get --bucket demo --count 2000 --concurrency 4 "${tls[@]}" --json "$work/pooled.json"
"$bin" bench get --bucket demo --count 500 --concurrency 4 --connections fresh "${tls[@]}" \
  --json "$work/fresh.json" --html "$work/fresh.html"
"$bin" bench compare "$work/pooled.json" "$work/fresh.json" | grep -E '^(A|B):|throughput|p50|p99 '

step "8. The edge: slipstream gateway in front of the TLS server, an object fetched through it"
scripts/test-cert.sh "$work/edge" edge DNS:localhost
edge_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" gateway --listen "127.0.0.1:$edge_port" --tls-cert "$work/edge/edge.pem" --tls-key "$work/edge/edge.key" \
  --origin "$SLIPSTREAM_TEST_TLS_ENDPOINT" --origin-ca-bundle "$SLIPSTREAM_TEST_CA" 2>"$work/edge.err" &
edge_pid=$!
trap 'kill $edge_pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do grep -q "listening on" "$work/edge.err" && break; sleep 0.05; done
edge=(--endpoint-url "https://localhost:$edge_port" --ca-bundle "$work/edge/ca.pem")
# The TLS server keeps its own data (step 7 made its bucket): up and down through the edge.
"$bin" cp "$work/report 2026.bin" "s3://demo/through the edge.bin" "${edge[@]}"
"$bin" cp "s3://demo/through the edge.bin" "$work/through-edge.bin" "${edge[@]}"
cmp -s "$work/report 2026.bin" "$work/through-edge.bin" && echo "up and down through the edge: identical"
echo "fresh-connection time to first byte, direct vs through the edge (loopback: the edge adds a"
echo "hop here; over a long link it saves two round trips: scripts/bench-edge.sh, docs/BENCHMARKS.md)"
"$bin" bench get --bucket demo --count 200 --concurrency 1 --connections fresh "${tls[@]}" --json "$work/direct.json" >/dev/null
"$bin" bench get --bucket demo --count 200 --concurrency 1 --connections fresh "${edge[@]}" --json "$work/edge.json" >/dev/null
"$bin" bench compare "$work/direct.json" "$work/edge.json" | grep -E '^(A|B):|p50|p99 '
kill $edge_pid; wait $edge_pid 2>/dev/null || true
echo
echo "Demo done; the local server is stopped next."
