#!/usr/bin/env bash
# Runs a command with a local MinIO (single drive, temporary directory) started for it, and
# always stops it afterwards. For the SSE-C tests (over TLS) and the long-link upload figures
# (scripts/bench-wan.sh): MinIO completes a multipart upload without copying the parts, as S3 does, where versitygw's
# posix backend copies them (see scripts/install-minio.sh). The command sees the same variables
# as under scripts/with-s3-server.sh: SLIPSTREAM_TEST_ENDPOINT, SLIPSTREAM_TEST_REGION,
# AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY. SLIPSTREAM_S3_NETNS and SLIPSTREAM_S3_HOST work as there.
# With SLIPSTREAM_MINIO_TLS=1 it serves HTTPS instead, with a certificate from a throwaway CA
# (scripts/test-cert.sh), and the command also sees SLIPSTREAM_TEST_TLS_ENDPOINT (the same
# server) and SLIPSTREAM_TEST_CA.
# Usage: scripts/with-minio.sh COMMAND [ARGS...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/install-minio.sh"
bin="$here/../.tools/bin/minio"

data="$(mktemp -d)"
host=127.0.0.1
in_ns=()
if [ -n "${SLIPSTREAM_S3_NETNS:-}" ]; then
  host="${SLIPSTREAM_S3_HOST:-10.77.0.2}"
  in_ns=(ip netns exec "$SLIPSTREAM_S3_NETNS")
fi
pid=""
curl_tls=()
stop() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$data"
}
trap stop EXIT
trap 'exit 130' INT TERM

# shellcheck source=test-credentials.sh
. "$here/test-credentials.sh"
port="$(free_port)"
console="$(free_port)"
scheme=http
tls=()
if [ "${SLIPSTREAM_MINIO_TLS:-}" = 1 ]; then
  "$here/test-cert.sh" "$data/certs" public "DNS:localhost,IP:$host"
  mv "$data/certs/public.pem" "$data/certs/public.crt"
  mv "$data/certs/public.key" "$data/certs/private.key"
  scheme=https
  tls=(--certs-dir "$data/certs")
  curl_tls=(--cacert "$data/certs/ca.pem")
fi
MINIO_ROOT_USER="$AWS_ACCESS_KEY_ID" MINIO_ROOT_PASSWORD="$AWS_SECRET_ACCESS_KEY" MINIO_BROWSER=off \
  MINIO_REGION="$SLIPSTREAM_TEST_REGION" \
  "${in_ns[@]}" "$bin" server "$data/drive" --address "$host:$port" --console-address "$host:$console" \
  --quiet "${tls[@]}" >"$data/log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  if "${in_ns[@]}" curl -sf "${curl_tls[@]}" -o /dev/null "$scheme://$host:$port/minio/health/ready"; then break; fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
"${in_ns[@]}" curl -sf "${curl_tls[@]}" -o /dev/null "$scheme://$host:$port/minio/health/ready" \
  || { echo "MinIO did not start:" >&2; cat "$data/log" >&2; exit 1; }
export SLIPSTREAM_TEST_ENDPOINT="$scheme://$host:$port"
if [ "$scheme" = https ]; then
  export SLIPSTREAM_TEST_TLS_ENDPOINT="$SLIPSTREAM_TEST_ENDPOINT" SLIPSTREAM_TEST_CA="$data/certs/ca.pem"
fi
echo "MinIO on $SLIPSTREAM_TEST_ENDPOINT (pid $pid)" >&2
set +e
"$@"
status=$?
set -e
exit "$status"
