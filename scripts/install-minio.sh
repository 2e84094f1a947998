#!/usr/bin/env bash
# Builds MinIO once into .tools/bin (about 3 minutes on this 2-core machine; instant afterwards).
# Only the long-link benchmark uses it (scripts/bench-wan.sh), for the upload rows: versitygw's
# CompleteMultipartUpload copies every part into the object (1.5-3.5 s per GiB here, whatever the
# client), while MinIO, like S3, completes an upload without moving the data (20 ms for 1 GiB).
# The tests never need it. Pinned to the module version this was measured with.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
BIN=.tools/bin/minio
STAMP=.tools/minio.version
if [ -x "$BIN" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$VERSION" ]; then
  exit 0
fi
echo "building MinIO $VERSION into .tools/bin (first run only, a few minutes)..." >&2
mkdir -p .tools/bin
GOBIN="$PWD/.tools/bin" go install "github.com/minio/minio@$VERSION"
echo "$VERSION" > "$STAMP"
