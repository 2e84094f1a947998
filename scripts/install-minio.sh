#!/usr/bin/env bash
# Builds MinIO once into .tools/bin (about 3 minutes on this 2-core machine; instant afterwards).
# Only the long-link benchmark uses it (scripts/bench-wan.sh), for the upload rows: versitygw's
# CompleteMultipartUpload copies every part into the object (1.5-3.5 s per GiB here, whatever the
# client), while MinIO, like S3, completes an upload without moving the data (20 ms for 1 GiB).
# The tests never need it. Pinned to the module version this was measured with.
exec "$(dirname "$0")/go-tool.sh" minio github.com/minio/minio v0.0.0-20260212201848-7aac2a2c5b7c
