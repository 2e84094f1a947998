#!/usr/bin/env bash
# The pure tier (slipstream-sign, slipstream-s3) must not pull in a runtime, an HTTP stack or a
# URL type: they take bytes and the clock as arguments. This fails if one sneaks in.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for crate in slipstream-sign slipstream-s3; do
  deps="$(cargo tree -p "$crate" -e normal --prefix none --format '{p}' | awk '{print $1}' | sort -u)"
  for banned in tokio hyper http reqwest url mio async-std futures; do
    if grep -qx "$banned" <<<"$deps"; then
      echo "$crate depends on $banned: the pure crates do no I/O" >&2
      status=1
    fi
  done
done
exit $status
