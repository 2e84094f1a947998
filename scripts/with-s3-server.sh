#!/usr/bin/env bash
# Runs a command with a local versitygw S3 server (posix backend) started for it, and always
# stops the server afterwards, whether the command passes, fails or is interrupted.
#
# The server listens on a free port of 127.0.0.1 only, with credentials generated for this run
# and a temporary data directory. The command sees:
#   SLIPSTREAM_TEST_ENDPOINT   http://127.0.0.1:PORT
#   SLIPSTREAM_TEST_REGION     us-east-1
#   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY  the generated credentials
# Usage: scripts/with-s3-server.sh COMMAND [ARGS...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/install-versitygw.sh"
bin="$here/../.tools/bin/versitygw"

data="$(mktemp -d)"
pid=""
stop() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$data"
}
trap stop EXIT
trap 'exit 130' INT TERM

rand() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' | cut -c1-"$1"; }
export AWS_ACCESS_KEY_ID="SLIP$(rand 16 | tr a-f A-F)"
export AWS_SECRET_ACCESS_KEY="$(rand 40)"
export SLIPSTREAM_TEST_REGION=us-east-1
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 || true

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

for attempt in 1 2 3; do
  port="$(free_port)"
  ROOT_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" ROOT_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
    "$bin" --port "127.0.0.1:$port" --region "$SLIPSTREAM_TEST_REGION" --quiet posix "$data" \
    >"$data.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    if curl -s -o /dev/null "http://127.0.0.1:$port/"; then break 2; fi
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

export SLIPSTREAM_TEST_ENDPOINT="http://127.0.0.1:$port"
echo "versitygw on $SLIPSTREAM_TEST_ENDPOINT (pid $pid)" >&2
set +e
"$@"
status=$?
set -e
exit "$status"
