#!/usr/bin/env bash
# The long-link figures of docs/BENCHMARKS.md, in one run: brings the emulated link up
# (scripts/wan), starts versitygw (HTTP and HTTPS) on its far side, and measures
#   1. time to first byte of a 4 KiB GET: pooled vs fresh connections, HTTP, HTTPS TLS 1.3, 1.2;
#   2. the Outposts-style table (PUT then HEAD of 4 KiB, 5 workers): pooled vs fresh HTTPS;
#   3. a SIZE_MIB object down and up: one stream (curl), slipstream, s5cmd, boto3, the AWS CLI
#      (scripts/bench-transfer.sh), each as a share of the line rate;
#   4. the uploads again against MinIO (scripts/with-minio.sh), which completes a multipart
#      upload without copying the parts, as S3 does (versitygw copies them: seconds per GiB).
# Takes the link down at the end.
#   scripts/bench-wan.sh [RTT_MS] [RATE_MBIT] [SIZE_MIB] [RUNS] [OUTPOSTS_COUNT]
set -euo pipefail
cd "$(dirname "$0")/.."
RTT=${1:-100}
RATE=${2:-500}
SIZE_MIB=${3:-1024}
RUNS=${4:-3}
OUTPOSTS=${5:-500}

if [ "${BENCH_WAN_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  scripts/wan up --rtt "${RTT}ms" --rate "${RATE}mbit"
  trap 'scripts/wan down >/dev/null' EXIT
  scripts/wan check
  BENCH_WAN_INNER=1 SLIPSTREAM_S3_NETNS=slipstream-s \
    scripts/with-s3-server.sh "$0" "$RTT" "$RATE" "$SIZE_MIB" "$RUNS" "$OUTPOSTS"
  echo
  echo "### $SIZE_MIB MiB up at ${RTT} ms RTT and $RATE Mbit/s, to MinIO"
  echo
  SLIPSTREAM_S3_NETNS=slipstream-s CLIENT="scripts/wan exec client" ROWS=upload \
    LINK_MB_S=$(awk -v r="$RATE" 'BEGIN { print r / 8 }') \
    scripts/with-minio.sh scripts/bench-transfer.sh "$SIZE_MIB" "$RUNS"
  exit
fi

BIN=target/release/slipstream
C=(scripts/wan exec client)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
BUCKET=wan-$RANDOM$RANDOM
HTTP=(--endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style)
HTTPS=(--endpoint-url "$SLIPSTREAM_TEST_TLS_ENDPOINT" --path-style --ca-bundle "$SLIPSTREAM_TEST_CA")

# field FILE EXPR: a number from a report, EXPR in Python over `r` (the JSON).
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

echo "### Time to first byte, 4 KiB GET, one request at a time, ${RTT} ms RTT"
echo
echo "| connection | TTFB P50 | in RTTs | P99 | connect (mean) | TLS (mean) | wait (mean) |"
echo "|---|---:|---:|---:|---:|---:|---:|"
ttfb_row() {
  local name=$1; shift
  "${C[@]}" "$BIN" bench get --bucket "$BUCKET" --count 40 --concurrency 1 --objects 1 --quiet \
    --json "$WORK/t.json" "$@"
  local phase="lambda p: r['operations']['get']['phases_ms'].get(p, {}).get('mean', 0)"
  field "$WORK/t.json" "'| $name | %.1f ms | %.2f | %.1f ms | %.1f ms | %.1f ms | %.1f ms |' % (
    r['ttfb_ms']['p50'], r['ttfb_ms']['p50'] / $RTT, r['ttfb_ms']['p99'],
    ($phase)('connect'), ($phase)('tls'), ($phase)('wait'))"
}
ttfb_row "pooled, HTTP" "${HTTP[@]}"
ttfb_row "fresh, HTTP" "${HTTP[@]}" --connections fresh
ttfb_row "pooled, HTTPS" "${HTTPS[@]}"
ttfb_row "fresh, HTTPS TLS 1.3" "${HTTPS[@]}" --connections fresh --tls 1.3
ttfb_row "fresh, HTTPS TLS 1.2" "${HTTPS[@]}" --connections fresh --tls 1.2

echo
echo "### Outposts-style: PUT then HEAD of 4 KiB, 5 workers, $OUTPOSTS objects, HTTPS, ${RTT} ms RTT"
echo
echo "| connections | op | P25 | P50 | P75 | P99 | ops/s |"
echo "|---|---|---:|---:|---:|---:|---:|"
for mode in pooled fresh; do
  "${C[@]}" "$BIN" bench outposts --bucket "$BUCKET" --count "$OUTPOSTS" --quiet \
    --json "$WORK/o-$mode.json" --connections "$mode" "${HTTPS[@]}"
  for op in put head; do
    field "$WORK/o-$mode.json" "'| $mode | $op | %.1f | %.1f | %.1f | %.1f | %.0f |' % tuple(
      [r['operations']['$op']['latency_ms'][p] for p in ('p25', 'p50', 'p75', 'p99')]
      + [r['operations']['$op']['ops_per_s']])"
  done
done
echo
echo "(latency in ms; reports: \`bench compare\` of the two JSON files gives every percentile)"
"$BIN" bench compare "$WORK/o-pooled.json" "$WORK/o-fresh.json" | sed 's/^/    /'

echo
echo "### $SIZE_MIB MiB at ${RTT} ms RTT and $RATE Mbit/s"
echo
CLIENT="${C[*]}" LINK_MB_S=$(awk -v r="$RATE" 'BEGIN { print r / 8 }') \
  scripts/bench-transfer.sh "$SIZE_MIB" "$RUNS"
