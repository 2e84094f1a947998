#!/usr/bin/env bash
# Builds versitygw once into .tools/bin (about 75 s on a fresh machine; instant afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=v1.8.0
BIN=.tools/bin/versitygw
STAMP=.tools/versitygw.version
# `go install` builds report no version of their own, so a stamp file records what was built.
if [ -x "$BIN" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$VERSION" ]; then
  exit 0
fi
echo "building versitygw $VERSION into .tools/bin (first run only)..." >&2
mkdir -p .tools/bin
GOBIN="$PWD/.tools/bin" go install "github.com/versity/versitygw/cmd/versitygw@$VERSION"
echo "$VERSION" > "$STAMP"
