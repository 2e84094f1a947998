#!/usr/bin/env bash
# Runs a command with a local versitygw S3 server (posix backend) started for it, and always
# stops the server afterwards, whether the command passes, fails or is interrupted.
#
# The server listens on a free port of 127.0.0.1 only, with credentials generated for this run
# and a temporary data directory, and keeps connections alive between requests as S3 does
# (versitygw closes every connection after one response unless --keep-alive is given). The command sees:
#   SLIPSTREAM_TEST_ENDPOINT   http://127.0.0.1:PORT
#   SLIPSTREAM_TEST_REGION     us-east-1
#   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY  the generated credentials
#   SLIPSTREAM_TEST_TLS_ENDPOINT  https://127.0.0.1:PORT, a second server (own data) over TLS
#   SLIPSTREAM_TEST_CA         the PEM of the test CA that signed its certificate (made here)
# With SLIPSTREAM_S3_NETNS=slipstream-s (after `scripts/wan up`), both servers run in that network
# namespace on SLIPSTREAM_S3_HOST (default 10.77.0.2), on the far side of the emulated link.
# SLIPSTREAM_S3_DATA=DIR keeps the servers' data under DIR (e.g. /dev/shm, a tmpfs) instead of $TMPDIR.
# SLIPSTREAM_S3_VERSIONING=1 lets buckets of the plain server be versioned (--versioning-dir).
# Usage: scripts/with-s3-server.sh COMMAND [ARGS...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/install-versitygw.sh"
bin="$here/../.tools/bin/versitygw"

data="$(mktemp -d -p "${SLIPSTREAM_S3_DATA:-${TMPDIR:-/tmp}}")"
host=127.0.0.1
in_ns=()
if [ -n "${SLIPSTREAM_S3_NETNS:-}" ]; then
  host="${SLIPSTREAM_S3_HOST:-10.77.0.2}"
  in_ns=(ip netns exec "$SLIPSTREAM_S3_NETNS")
fi
tls="$(mktemp -d -p "${SLIPSTREAM_S3_DATA:-${TMPDIR:-/tmp}}")"
pid=""
tls_pid=""
versions=()
if [ -n "${SLIPSTREAM_S3_VERSIONING:-}" ]; then
  versions=(--versioning-dir "$data.versions")
  mkdir "$data.versions"
fi
stop() {
  for p in $pid $tls_pid; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$data" "$tls" "$data.versions"
}
trap stop EXIT
trap 'exit 130' INT TERM

# shellcheck source=test-credentials.sh
. "$here/test-credentials.sh"

for attempt in 1 2 3; do
  port="$(free_port)"
  ROOT_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" ROOT_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
    "${in_ns[@]}" "$bin" --port "$host:$port" --region "$SLIPSTREAM_TEST_REGION" --quiet --keep-alive posix "${versions[@]}" "$data" \
    >"$data.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    if "${in_ns[@]}" curl -s -o /dev/null "http://$host:$port/"; then break 2; fi
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.05
  done
  echo "versitygw did not start on port $port (attempt $attempt):" >&2
  cat "$data.log" >&2 || true
  kill "$pid" 2>/dev/null || true
  pid=""
done
rm -f "$data.log"
[ -n "$pid" ] || { echo "could not start versitygw" >&2; exit 1; }

export SLIPSTREAM_TEST_ENDPOINT="http://$host:$port"
echo "versitygw on $SLIPSTREAM_TEST_ENDPOINT (pid $pid)" >&2

# The TLS server: a throwaway CA signs a certificate for 127.0.0.1, so clients can be tested
# with --ca-bundle (trusted) and without it (refused).
"$here/test-cert.sh" "$tls" server "IP:$host,DNS:localhost"
mkdir "$tls/data"
tls_port="$(free_port)"
ROOT_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" ROOT_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
  "${in_ns[@]}" "$bin" --port "$host:$tls_port" --region "$SLIPSTREAM_TEST_REGION" --quiet --keep-alive \
  --cert "$tls/server.pem" --key "$tls/server.key" posix "$tls/data" >"$tls/log" 2>&1 &
tls_pid=$!
for _ in $(seq 1 100); do
  if "${in_ns[@]}" curl -s -o /dev/null --cacert "$tls/ca.pem" "https://$host:$tls_port/"; then break; fi
  sleep 0.05
done
"${in_ns[@]}" curl -s -o /dev/null --cacert "$tls/ca.pem" "https://$host:$tls_port/" \
  || { echo "the TLS versitygw did not start:" >&2; cat "$tls/log" >&2; exit 1; }
export SLIPSTREAM_TEST_TLS_ENDPOINT="https://$host:$tls_port" SLIPSTREAM_TEST_CA="$tls/ca.pem"
set +e
"$@"
status=$?
set -e
exit "$status"
