"""The fixtures live in support.py, shared with the Python package's tests."""

from support import (  # noqa: F401  (pytest fixtures)
    bucket, private_server, s3, server, slipstream_bin, versioned_bucket, versioned_server,
)
