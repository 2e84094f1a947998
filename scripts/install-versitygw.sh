#!/usr/bin/env bash
# Builds versitygw once into .tools/bin (about 75 s on a fresh machine; instant afterwards).
exec "$(dirname "$0")/go-tool.sh" versitygw github.com/versity/versitygw/cmd/versitygw v1.8.0
