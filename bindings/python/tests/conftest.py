"""The package's tests reuse the repository's black-box helpers (tests/support.py): the botocore
reference, the awkward-key alphabet, the local server fixtures."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "tests"))

from support import (  # noqa: E402,F401  (pytest fixtures)
    bucket, private_server, s3, server, slipstream_bin, versioned_bucket, versioned_server,
)
