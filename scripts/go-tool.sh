#!/usr/bin/env bash
# Builds a Go program once into .tools/bin and records the version built (`go install` builds
# report no version of their own); instant when that version is already there.
#   scripts/go-tool.sh NAME PACKAGE VERSION
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=$1 PACKAGE=$2 VERSION=$3
BIN=.tools/bin/$NAME
STAMP=.tools/$NAME.version
if [ -x "$BIN" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$VERSION" ]; then
  exit 0
fi
echo "building $NAME $VERSION into .tools/bin (first run only)..." >&2
mkdir -p .tools/bin
GOBIN="$PWD/.tools/bin" go install "$PACKAGE@$VERSION"
echo "$VERSION" > "$STAMP"
