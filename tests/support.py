"""Helpers and fixtures shared by the black-box tests (here and in bindings/python/tests):
the built CLI and the local S3 server.

The server is started by scripts/with-s3-server.sh (make test). Tests that need it fail, not
skip, when it is missing: a signing test that silently skips proves nothing.
"""

import datetime
import os

# The reference is pure-Python botocore. With awscrt installed (the SigV4A cross-check needs it),
# botocore would switch to the CRT signer, which orders query parameters differently and reads
# the clock itself. This must be set before botocore is first imported.
os.environ["BOTO_DISABLE_CRT"] = "true"
import pathlib
import subprocess
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def slipstream_bin() -> str:
    path = os.environ.get("SLIPSTREAM_BIN", str(ROOT / "target" / "release" / "slipstream"))
    assert os.access(path, os.X_OK), f"{path} is missing: run `make build` (or `make test`)"
    return path


@pytest.fixture(scope="session")
def server() -> dict:
    endpoint = os.environ.get("SLIPSTREAM_TEST_ENDPOINT")
    assert endpoint, "no local S3 server: run the tests through `make test` (scripts/with-s3-server.sh)"
    return {
        "endpoint": endpoint,
        "region": os.environ["SLIPSTREAM_TEST_REGION"],
        "access_key": os.environ["AWS_ACCESS_KEY_ID"],
        "secret_key": os.environ["AWS_SECRET_ACCESS_KEY"],
    }


@pytest.fixture(scope="session")
def s3(server):
    """A botocore client for set-up only (creating buckets); never used to check our signatures."""
    import botocore.session
    from botocore.config import Config

    session = botocore.session.get_session()
    return session.create_client(
        "s3",
        region_name=server["region"],
        endpoint_url=server["endpoint"],
        aws_access_key_id=server["access_key"],
        aws_secret_access_key=server["secret_key"],
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
    )


@pytest.fixture()
def bucket(s3) -> str:
    name = f"t-{uuid.uuid4().hex[:20]}"
    s3.create_bucket(Bucket=name)
    return name


def run_cli(bin_path: str, *args: str, stdin: bytes = b"", env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([bin_path, *args], input=stdin, capture_output=True, env=env, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"slipstream {' '.join(args)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')}")
    return proc


def amz(t: datetime.datetime) -> str:
    return t.strftime("%Y%m%dT%H%M%SZ")
