#!/usr/bin/env bash
# Builds MinIO once into .tools/bin (about 3 minutes on this 2-core machine; instant afterwards).
# The SSE-C tests run against it over TLS (`make test`: versitygw does not implement SSE-C), and
# the long-link benchmark uses it for the upload rows (scripts/bench-wan.sh): versitygw's
# CompleteMultipartUpload copies every part into the object (1.5-3.5 s per GiB here, whatever the
# client), while MinIO, like S3, completes an upload without moving the data (20 ms for 1 GiB).
# Pinned to the module version this was measured with.
exec "$(dirname "$0")/go-tool.sh" minio github.com/minio/minio v0.0.0-20260212201848-7aac2a2c5b7c
