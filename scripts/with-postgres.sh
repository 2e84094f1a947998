#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster made for it, and always stops and removes
# the cluster afterwards, whether the command passes, fails or is interrupted.
#
# initdb and pg_ctl run as the postgres user when this runs as root (PostgreSQL refuses root).
# The cluster listens on a free port of 127.0.0.1 only (and a Unix socket in its own folder),
# with TLS (a certificate from the test CA, for localhost and 127.0.0.1) and SCRAM passwords.
# fsync is off: nothing in it outlives the run. The command sees:
#   SLIPSTREAM_TEST_POSTGRES     postgres://slipstream:PASSWORD@127.0.0.1:PORT/postgres
#                                (a superuser: tests create a database each)
#   SLIPSTREAM_TEST_POSTGRES_CA  the PEM of the CA that signed the server's certificate
# Usage: scripts/with-postgres.sh COMMAND [ARGS...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bindir="$("$here/install-postgres.sh")"

dir="$(mktemp -d -p "${TMPDIR:-/tmp}")"
as_owner=()
if [ "$(id -u)" = 0 ]; then
  chown postgres: "$dir"
  as_owner=(runuser -u postgres --)
fi
started=false
stop() {
  if $started; then
    "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate -s stop || true
  fi
  rm -rf "$dir"
}
trap stop EXIT
trap 'exit 130' INT TERM

# Not test-credentials.sh: that would replace the S3 server's credentials of an enclosing
# with-s3-server.sh.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
password="$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$password" > "$dir/password"
"$here/test-cert.sh" "$dir/tls" server "DNS:localhost,IP:127.0.0.1" >/dev/null
chmod 600 "$dir/tls/server.key"
[ "$(id -u)" = 0 ] && chown -R postgres: "$dir"

"${as_owner[@]}" "$bindir/initdb" -D "$dir/data" -U slipstream --pwfile="$dir/password" \
  --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }

for attempt in 1 2 3; do
  port="$(free_port)"
  if "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -s -t 30 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
        -c ssl=on -c ssl_cert_file=$dir/tls/server.pem -c ssl_key_file=$dir/tls/server.key" start; then
    started=true
    break
  fi
  echo "PostgreSQL did not start on port $port (attempt $attempt):" >&2
  cat "$dir/server.log" >&2 || true
done
$started || { echo "could not start PostgreSQL" >&2; exit 1; }

export SLIPSTREAM_TEST_POSTGRES="postgres://slipstream:$password@127.0.0.1:$port/postgres"
export SLIPSTREAM_TEST_POSTGRES_CA="$dir/tls/ca.pem"
echo "PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port" >&2
"$@"
