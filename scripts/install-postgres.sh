#!/usr/bin/env bash
# Prints the folder of PostgreSQL's server programs (initdb, pg_ctl, postgres), installing
# Debian's package first where they are missing (root and apt-get needed then). The package's
# own cluster is neither created nor started: the tests make a throwaway one per run
# (scripts/with-postgres.sh), and nothing is left running.
set -euo pipefail

find_bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null && command -v pg_ctl >/dev/null &&
    { dirname "$(readlink -f "$(command -v initdb)")"; return 0; }
  return 1
}

if find_bindir; then exit 0; fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-postgres: PostgreSQL's server is missing; install it (apt-get install postgresql)" >&2
  exit 1
fi
echo "install-postgres: installing Debian's postgresql (no cluster is created or started)" >&2
mkdir -p /etc/postgresql-common/createcluster.d
echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.d/slipstream-no-main.conf
"$(dirname "$0")/apt-install.sh" postgresql
find_bindir || { echo "install-postgres: installed, but initdb and pg_ctl are not found" >&2; exit 1; }
