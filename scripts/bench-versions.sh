#!/usr/bin/env bash
# Versioned buckets: every version under a prefix listed (`ls --all-versions --recursive`) and
# deleted for good (`rm --all-versions --recursive`), against s5cmd's `--all-versions` and a
# boto3 script (every list_object_versions page, then delete_objects of 1,000 versions at a
# time, one request after another). COUNT keys of 1 KiB with two
# versions and a delete marker each (3 x COUNT entries); median wall time of RUNS runs, each
# deletion from a fresh prefix made untimed, and a check that nothing is left.
#   SLIPSTREAM_S3_VERSIONING=1 scripts/with-s3-server.sh scripts/bench-versions.sh [COUNT] [RUNS]
# Over the emulated long link, every client command runs in the client's namespace:
#   scripts/wan up --rtt 100ms --rate 500mbit
#   SLIPSTREAM_S3_VERSIONING=1 SLIPSTREAM_S3_NETNS=slipstream-s CLIENT="scripts/wan exec client" \
#     scripts/with-s3-server.sh scripts/bench-versions.sh 3000 3
#   scripts/wan down
# Needs: make build; s5cmd and boto3 in .venv (requirements-dev.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${1:-3000}
RUNS=${2:-3}
read -r -a WRAP <<< "${CLIENT:-}"
BIN=(${WRAP[@]+"${WRAP[@]}"} "${BIN:-target/release/slipstream}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
BUCKET=versions-$RANDOM$RANDOM
export AWS_REGION=$SLIPSTREAM_TEST_REGION
E=$SLIPSTREAM_TEST_ENDPOINT
S3ARGS=(--endpoint-url "$E" --path-style)
S5=(${WRAP[@]+"${WRAP[@]}"} .venv/bin/s5cmd --endpoint-url "$E")
PY=(${WRAP[@]+"${WRAP[@]}"} .venv/bin/python)

mkdir -p "$WORK/src"
python3 scripts/make-tree.py "$WORK/src" "$COUNT" 1
"${BIN[@]}" mb "s3://$BUCKET" "${S3ARGS[@]}"
"${PY[@]}" - "$E" "$BUCKET" <<'EOF'
import sys, boto3
boto3.client("s3", endpoint_url=sys.argv[1]).put_bucket_versioning(
    Bucket=sys.argv[2], VersioningConfiguration={"Status": "Enabled"})
EOF

# A prefix whose every key has two versions and a delete marker.
fill() {
  "${BIN[@]}" cp --recursive "$WORK/src" "s3://$BUCKET/$1/" "${S3ARGS[@]}" --objects 256 --quiet
  "${BIN[@]}" cp --recursive "$WORK/src" "s3://$BUCKET/$1/" "${S3ARGS[@]}" --objects 256 --quiet
  "${BIN[@]}" rm --recursive "s3://$BUCKET/$1/" "${S3ARGS[@]}" --quiet
}

# Entries (versions and markers) under a prefix, each once.
entries() {
  "${PY[@]}" - "$E" "$BUCKET" "$1" <<'EOF'
import sys, boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1])
seen = set()
for page in s3.get_paginator("list_object_versions").paginate(Bucket=sys.argv[2], Prefix=sys.argv[3]):
    for v in page.get("Versions", []) + page.get("DeleteMarkers", []):
        seen.add((v["Key"], v["VersionId"]))
print(len(seen))
EOF
}

# Every page listed first, then deleted 1,000 at a time: deleting while paging loses entries
# on versitygw, whose next page starts from the marker's entry, gone by then.
BOTO3_RM='
import sys, boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1])
objects = {}
for page in s3.get_paginator("list_object_versions").paginate(Bucket=sys.argv[2], Prefix=sys.argv[3]):
    for v in page.get("Versions", []) + page.get("DeleteMarkers", []):
        objects[(v["Key"], v["VersionId"])] = {"Key": v["Key"], "VersionId": v["VersionId"]}
objects = list(objects.values())
for i in range(0, len(objects), 1000):
    s3.delete_objects(Bucket=sys.argv[2], Delete={"Objects": objects[i:i + 1000], "Quiet": True})
'

# seconds COMMAND...: wall time of one run, in seconds.
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.3f}')"
}

median() { python3 -c 'import statistics,sys; print(f"{statistics.median(map(float, sys.argv[1:])):.3f}")' "$@"; }

echo "$COUNT keys x (2 versions + 1 delete marker), $RUNS runs, medians" >&2
fill seed
[ "$(entries seed/)" = $((3 * COUNT)) ] || { echo "the seed prefix is not as made" >&2; exit 1; }

declare -A list_times rm_times
for run in $(seq "$RUNS"); do
  list_times[slipstream]+=" $(seconds "${BIN[@]}" ls --all-versions --recursive "s3://$BUCKET/seed/" "${S3ARGS[@]}")"
  list_times[s5cmd]+=" $(seconds "${S5[@]}" ls --all-versions "s3://$BUCKET/seed/*")"
  list_times[boto3]+=" $(seconds "${PY[@]}" -c '
import sys, boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1])
for page in s3.get_paginator("list_object_versions").paginate(Bucket=sys.argv[2], Prefix=sys.argv[3]):
    pass' "$E" "$BUCKET" seed/)"
  for tool in slipstream s5cmd boto3; do
    prefix="r$run-$tool"
    fill "$prefix"
    case $tool in
      slipstream) t=$(seconds "${BIN[@]}" rm --all-versions --recursive "s3://$BUCKET/$prefix/" "${S3ARGS[@]}" --quiet) ;;
      s5cmd) t=$(seconds "${S5[@]}" rm --all-versions "s3://$BUCKET/$prefix/*") ;;
      boto3) t=$(seconds "${PY[@]}" -c "$BOTO3_RM" "$E" "$BUCKET" "$prefix/") ;;
    esac
    left=$(entries "$prefix/")
    [ "$left" = 0 ] || echo "warning: $tool left $left of $((3 * COUNT)) entries under $prefix/" >&2
    rm_times[$tool]+=" $t"
  done
done

printf '| %s | %s | %s | %s |\n' "row" "slipstream" "s5cmd" "boto3 (list, then delete)"
printf '|---|---:|---:|---:|\n'
printf '| list %s entries | %s s | %s s | %s s |\n' $((3 * COUNT)) \
  "$(median ${list_times[slipstream]})" "$(median ${list_times[s5cmd]})" "$(median ${list_times[boto3]})"
printf '| delete %s entries | %s s | %s s | %s s |\n' $((3 * COUNT)) \
  "$(median ${rm_times[slipstream]})" "$(median ${rm_times[s5cmd]})" "$(median ${rm_times[boto3]})"
echo "runs: list ${list_times[*]} / rm slipstream${rm_times[slipstream]} s5cmd${rm_times[s5cmd]} boto3${rm_times[boto3]}" >&2
