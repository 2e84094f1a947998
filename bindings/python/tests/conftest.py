"""The package's tests reuse the repository's black-box helpers (tests/support.py): the botocore
reference, the awkward-key alphabet, the local server fixtures."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "tests"))

from support import bucket, private_server, s3, server, slipstream_bin  # noqa: E402,F401  (pytest fixtures)
