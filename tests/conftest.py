"""The fixtures live in support.py, shared with the Python package's tests."""

from support import bucket, private_server, s3, server, slipstream_bin  # noqa: F401  (pytest fixtures)
