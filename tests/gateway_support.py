"""Starting `slipstream gateway` for a test: certificates from a throwaway CA (a DNS name and
127.0.0.1, since nginx and some clients do not match IP addresses), a free port, the access
log in the test's directory, and a clean stop (SIGTERM, then the exit code checked)."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent


def make_cert(directory: pathlib.Path, name: str, dns: list[str], rsa: bool = False) -> tuple[pathlib.Path, pathlib.Path]:
    """A certificate for `dns` (and 127.0.0.1) signed by the CA in `directory` (made on first
    use: `directory / "ca.pem"`), by scripts/test-cert.sh."""
    sans = ",".join([f"DNS:{d}" for d in dns] + ["IP:127.0.0.1"])
    subprocess.run([str(ROOT / "scripts" / "test-cert.sh"), str(directory), name, sans, *(["rsa"] if rsa else [])],
                   check=True, capture_output=True)
    return directory / f"{name}.pem", directory / f"{name}.key"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Edge:
    """A running gateway: `url` (https://localhost:PORT, or http://127.0.0.1:PORT when plain),
    `metrics_url`, `log` (the access log's path), `proc`."""

    def __init__(self, binary: str, origin: str, directory: pathlib.Path, tls: list[tuple] | None,
                 extra: list[str]) -> None:
        # A free port can be taken between `free_port` and the gateway's bind (another test's
        # outgoing connection, once in CI): then new ports, up to three times.
        for attempt in range(3):
            if self._start(binary, origin, directory, tls, extra) or attempt == 2:
                break
            self._stderr.close()
        started = "listening on" in self.stderr()
        assert started or self.proc.poll() is None, f"the gateway exited {self.proc.returncode}: {self.stderr()}"
        assert started, f"the gateway did not start: {self.stderr()}"

    def _start(self, binary: str, origin: str, directory: pathlib.Path, tls: list[tuple] | None,
               extra: list[str]) -> bool:
        """Starts the gateway on new free ports and waits (20 s at most) until it listens or
        exits: False if its ports were taken before it bound them."""
        self.port = free_port()
        self.metrics_port = free_port()
        self.log = directory / f"access-{self.port}.log"
        args = [binary, "gateway", "--listen", f"127.0.0.1:{self.port}", "--origin", origin,
                "--metrics-listen", f"127.0.0.1:{self.metrics_port}", "--access-log", str(self.log), *extra]
        for cert, key in tls or []:
            args += ["--tls-cert", str(cert), "--tls-key", str(key)]
        self.url = f"https://localhost:{self.port}" if tls else f"http://127.0.0.1:{self.port}"
        self.metrics_url = f"http://127.0.0.1:{self.metrics_port}"
        self.stderr_path = directory / f"gateway-{self.port}.err"
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self._stderr)
        deadline = time.time() + 20
        while "listening on" not in self.stderr() and self.proc.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        return not (self.proc.poll() is not None and "Address already in use" in self.stderr())

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def metrics(self) -> dict[str, float]:
        """The metrics' samples without labels (and the labelled ones under their full name)."""
        text = urllib.request.urlopen(self.metrics_url + "/metrics", timeout=5).read().decode()
        out = {}
        for line in text.splitlines():
            m = re.match(r"^([a-zA-Z_:][^ ]*) ([0-9.eE+-]+|NaN)$", line)
            if m:
                out[m.group(1)] = float(m.group(2))
        return out

    def stop(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()
        return self.proc.returncode


@contextlib.contextmanager
def running(binary: str, origin: str, directory: pathlib.Path, tls: list[tuple] | None = None, extra: list[str] = ()):
    edge = Edge(binary, origin, directory, tls, list(extra))
    try:
        yield edge
    finally:
        code = edge.stop()
        assert code == 0, f"the gateway exited {code}: {edge.stderr()}"


def log_lines(edge: Edge) -> list[dict]:
    """The access log's records so far (waiting for the first one), in the order the requests
    started: each worker thread writes its lines in batches, so the file is in order per worker
    only (log_writer.rs)."""
    deadline = time.time() + 5
    while not (edge.log.exists() and edge.log.stat().st_size > 0):
        assert time.time() < deadline, "no access log line"
        time.sleep(0.02)
    time.sleep(0.2)
    lines = [json.loads(line) for line in edge.log.read_text().splitlines()]
    return sorted(lines, key=lambda l: l["time"])


def conformance_failures(server: dict, endpoint: str, cwd: pathlib.Path) -> set[str]:
    """The tests `versitygw test full-flow` fails against `endpoint` (over 500 must run)."""
    env = {k: v for k, v in os.environ.items() if k != "AWS_CA_BUNDLE"}
    p = subprocess.run([str(ROOT / ".tools" / "bin" / "versitygw"), "test", "-a", server["access_key"], "-s", server["secret_key"],
                        "-e", endpoint, "full-flow", "--parallel"], capture_output=True, env=env, timeout=600, cwd=cwd)
    out = re.sub(r"\x1b\[[0-9;]*m", "", p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace"))
    ran = re.search(r"RAN: (\d+) PASS: (\d+) FAIL: (\d+)", out)
    assert ran and int(ran.group(1)) > 500, out[-2000:]
    return set(re.findall(r"^FAIL\s+(\S+?):", out, re.M))


def run_signing_suite(endpoint: str) -> str:
    """crates/client's versitygw_signing tests against `endpoint` (the same selection as
    `make test`'s cargo test, so nothing is rebuilt); their output, after checking they passed."""
    env = dict(os.environ, SLIPSTREAM_TEST_ENDPOINT=endpoint)
    p = subprocess.run(["cargo", "test", "--locked", "--workspace", "--exclude", "slipstream-sign-bench",
                        "--exclude", "slipstream-python", "--test", "versitygw_signing"],
                       capture_output=True, env=env, cwd=ROOT, timeout=1200)
    out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
    assert p.returncode == 0, out[-3000:]
    return out
