#!/usr/bin/env bash
# Installs Debian packages for the tests (PostgreSQL, tinyproxy) without starting any service
# they carry (Debian's policy-rc.d convention, restored afterwards), updating the package lists
# only when the first try finds nothing. Output goes to standard error. Needs root and apt-get.
# Usage: scripts/apt-install.sh PACKAGE...
set -euo pipefail
had_policy=false
[ -e /usr/sbin/policy-rc.d ] && had_policy=true
$had_policy || { printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; }
restore() { $had_policy || rm -f /usr/sbin/policy-rc.d; }
trap restore EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends "$@" >&2 ||
  { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends "$@" >&2; }
