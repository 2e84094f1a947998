"""A real HTTP proxy for the proxy tests: Debian's tinyproxy (`scripts/install-tinyproxy.sh`,
run by `make setup`), started on a free port of 127.0.0.1 with a configuration of its own and
stopped afterwards. Its log names every request it is asked: `CONNECT host:port` for a tunnel,
`GET http://host:port/path` for a request it forwards, which is how the tests see which way a
client went."""

import os
import pathlib
import re
import shutil
import socket
import subprocess
import time

import pytest

from gateway_support import free_port

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROXY_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY",
              "all_proxy", "ALL_PROXY", "REQUEST_METHOD")


def tinyproxy_path() -> str:
    found = shutil.which("tinyproxy") or ("/usr/bin/tinyproxy" if os.path.exists("/usr/bin/tinyproxy") else None)
    assert found, "tinyproxy is missing: `make setup` installs it (scripts/install-tinyproxy.sh)"
    return found


class Proxy:
    """tinyproxy on 127.0.0.1; with `user`/`password`, it asks for Basic credentials."""

    def __init__(self, directory: pathlib.Path, user: str | None = None, password: str | None = None):
        self.dir = directory
        self.log_file = directory / "tinyproxy.log"
        self.proc = None
        for _ in range(3):
            self.port = free_port()
            lines = [f"Port {self.port}", "Listen 127.0.0.1", "Timeout 600", "LogLevel Connect",
                     f'LogFile "{self.log_file}"', "MaxClients 512", "Allow 127.0.0.1",
                     "DisableViaHeader Yes"]
            if user:
                lines.append(f"BasicAuth {user} {password}")
            conf = directory / "tinyproxy.conf"
            conf.write_text("\n".join(lines) + "\n")
            self.log_file.write_text("")
            self.proc = subprocess.Popen([tinyproxy_path(), "-d", "-c", str(conf)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.time() + 5
            while time.time() < deadline and self.proc.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    self.clear()  # that connection's line
                    return
                except OSError:
                    time.sleep(0.02)
            self.stop()
        raise AssertionError(f"tinyproxy did not start: {self.log_file.read_text(errors='replace')}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def requests(self) -> list[str]:
        """What the proxy was asked since the last `clear`: `CONNECT h:p` or `GET http://...`."""
        text = self.log_file.read_text(errors="replace")
        return re.findall(r"Request \(file descriptor \d+\): (\S+ \S+) HTTP/1\.[01]", text)

    def clear(self) -> None:
        self.log_file.write_text("")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def without_proxies(env: dict) -> dict:
    """`env` without any proxy setting the outer environment had."""
    return {k: v for k, v in env.items() if k not in PROXY_VARS}


@pytest.fixture()
def proxy(tmp_path):
    p = Proxy(tmp_path)
    yield p
    p.stop()


@pytest.fixture()
def proxy_with_password(tmp_path):
    p = Proxy(tmp_path, user="ann", password="s3cret")
    yield p
    p.stop()
