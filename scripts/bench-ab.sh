#!/usr/bin/env bash
# A/B of two `slipstream` binaries against the running local server (scripts/with-s3-server.sh),
# alternated so that the shared machine's drift falls on both: 1 GiB upload, download to a file
# (`sync` before each, compared with `cmp`) and to stdout, ROUNDS times; then `slipstream bench`
# HEAD and 4 KiB GET latency, 3 times. Prints the median of each for each binary.
# Build the old binary from another checkout, e.g.:
#   git worktree add /tmp/old REV && (cd /tmp/old && CARGO_TARGET_DIR=/tmp/old-target cargo build --release -p slipstream-cli)
# Usage: scripts/with-s3-server.sh scripts/bench-ab.sh OLD_BIN NEW_BIN [ROUNDS]
# (SLIPSTREAM_S3_DATA=/dev/shm keeps the server's data off the disk, whose state moves uploads.)
set -euo pipefail
old=$1 new=$2 rounds=${3:-5}
conn=(--endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style)
bucket="ab-$(date +%s)-$RANDOM"
"$new" mb "s3://$bucket" "${conn[@]}" >/dev/null
dir=$(mktemp -d -p "${SLIPSTREAM_S3_DATA:-/var/tmp}")
trap 'rm -rf "$dir"' EXIT
head -c 1G /dev/urandom >"$dir/src"
"$new" cp "$dir/src" "s3://$bucket/obj" "${conn[@]}" --quiet
log="$dir/log"
timed() { local s e; s=$(date +%s.%N); "$@"; e=$(date +%s.%N); echo "$e - $s" | bc; }
for _ in $(seq 1 "$rounds"); do
  for who in old new; do
    bin=$old; [ "$who" = new ] && bin=$new
    sync
    echo "upload $who $(timed "$bin" cp "$dir/src" "s3://$bucket/up-$who" "${conn[@]}" --quiet)" >>"$log"
    rm -f "$dir/dl"; sync
    echo "download $who $(timed "$bin" cp "s3://$bucket/obj" "$dir/dl" "${conn[@]}" --quiet)" >>"$log"
    cmp -s "$dir/src" "$dir/dl" || { echo "$who: the downloaded file differs" >&2; exit 1; }
    echo "stdout $who $(timed sh -c "\"$bin\" cp s3://$bucket/obj - --endpoint-url $SLIPSTREAM_TEST_ENDPOINT --path-style --quiet >/dev/null")" >>"$log"
  done
done
for _ in 1 2 3; do
  for who in old new; do
    bin=$old; [ "$who" = new ] && bin=$new
    "$bin" bench head --bucket "$bucket" --count 2000 --objects 5 --concurrency 1 --quiet --json "$dir/h.json" "${conn[@]}" >/dev/null
    "$bin" bench get --bucket "$bucket" --size 4KiB --count 2000 --objects 5 --concurrency 4 --quiet --json "$dir/g.json" "${conn[@]}" >/dev/null
    python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); g=json.load(open(sys.argv[2])); print("bench-head-p50-ms", sys.argv[3], h["operations"]["head"]["latency_ms"]["p50"]); print("bench-get-p50-ms", sys.argv[3], g["operations"]["get"]["latency_ms"]["p50"])' "$dir/h.json" "$dir/g.json" "$who" >>"$log"
  done
done
python3 - "$log" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    what, who, value = line.split()
    runs[(what, who)].append(float(value))
for (what, who), values in sorted(runs.items()):
    print(f"{what:20} {who:4} median {statistics.median(values):8.3f}  ({' '.join(f'{v:.3f}' for v in values)})")
PY
