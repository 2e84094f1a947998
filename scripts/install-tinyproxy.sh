#!/usr/bin/env bash
# Prints the path of tinyproxy, the HTTP proxy the proxy tests send the client through
# (tests/test_proxy.py), installing Debian's package first where it is missing (root and
# apt-get needed then). The package's own service is not started: each test starts its own
# tinyproxy on a free port of 127.0.0.1 with a configuration of its own, and stops it.
set -euo pipefail

if command -v tinyproxy >/dev/null; then command -v tinyproxy; exit 0; fi
[ -x /usr/bin/tinyproxy ] && { echo /usr/bin/tinyproxy; exit 0; }

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-tinyproxy: tinyproxy is missing; install it (apt-get install tinyproxy)" >&2
  exit 1
fi
echo "install-tinyproxy: installing Debian's tinyproxy (its service is not started)" >&2
# Services may not start while the package installs (Debian's policy-rc.d convention).
had_policy=false
[ -e /usr/sbin/policy-rc.d ] && had_policy=true
$had_policy || { printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; }
restore() { $had_policy || rm -f /usr/sbin/policy-rc.d; }
trap restore EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends tinyproxy-bin >&2 ||
  apt-get install -y -q --no-install-recommends tinyproxy >&2 ||
  { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends tinyproxy >&2; }
[ -x /usr/bin/tinyproxy ] || { echo "install-tinyproxy: installed, but /usr/bin/tinyproxy is missing" >&2; exit 1; }
echo /usr/bin/tinyproxy
