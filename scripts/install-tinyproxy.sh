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
# tinyproxy-bin is the program alone (Debian 12 on); older releases have only tinyproxy.
"$(dirname "$0")/apt-install.sh" tinyproxy-bin 2>/dev/null || "$(dirname "$0")/apt-install.sh" tinyproxy
[ -x /usr/bin/tinyproxy ] || { echo "install-tinyproxy: installed, but /usr/bin/tinyproxy is missing" >&2; exit 1; }
echo /usr/bin/tinyproxy
