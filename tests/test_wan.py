"""scripts/wan: the emulated long link comes up (idempotently), achieves its RTT, carries S3
traffic between the namespaces, and goes down (idempotently). Needs root and /dev/net/tun, as
on the project's machines and CI; skipped elsewhere."""

import json
import os
import subprocess

import pytest

from support import ROOT

WAN = str(ROOT / "scripts" / "wan")

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/dev/net/tun"),
    reason="network namespaces and TUN devices need root",
)


def wan(*args, check=True):
    return subprocess.run([WAN, *args], capture_output=True, text=True, check=check, timeout=300)


@pytest.fixture()
def link():
    # A short RTT keeps the test quick; the figures in docs/BENCHMARKS.md use 100 ms.
    wan("up", "--rtt", "30ms", "--rate", "200mbit")
    yield
    wan("down")


def test_up_check_traffic_down(link, slipstream_bin):
    again = wan("up", "--rtt", "30ms", "--rate", "200mbit")
    assert "already up" in again.stdout
    check = wan("check")
    assert "RTT median" in check.stdout and "30 ms" in check.stdout
    assert "up (rtt=30ms rate=200mbit" in wan("status").stdout

    # S3 across the link: versitygw in the server namespace, slipstream bench in the client's.
    script = (
        f"{WAN} exec client {slipstream_bin} bench head --bucket wan-test --count 10 --concurrency 1 "
        '--objects 1 --quiet --json - --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style'
    )
    env = dict(os.environ, SLIPSTREAM_S3_NETNS="slipstream-s")
    r = subprocess.run([str(ROOT / "scripts" / "with-s3-server.sh"), "bash", "-c", script],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["errors"] == 0 and report["ops"] == 10
    assert report["endpoint"].startswith("http://10.77.0.2:")
    # One request on a kept connection is one round trip, so the link's delay shows.
    assert report["ttfb_ms"]["p50"] >= 30

    # Changing a parameter rebuilds the link.
    assert "up (rtt=40ms" in wan("up", "--rtt", "40ms").stdout


def test_three_sites_route_through_the_edge(slipstream_bin):
    # --edge puts a third namespace on the path: client - edge (5 ms) - server (20 ms).
    try:
        up = wan("up", "--rtt", "20ms", "--edge", "5ms")
        assert "edge slipstream-e 10.77.0.3/10.77.0.4" in up.stdout
        check = wan("check").stdout
        for label, target in [("client to edge", 5), ("edge to server", 20), ("client to server", 25)]:
            assert f"{label} RTT median" in check and f"target of {target} ms" in check
        script = (
            f"{WAN} exec client {slipstream_bin} bench head --bucket wan-edge --count 5 --concurrency 1 "
            '--objects 1 --quiet --json - --endpoint-url "$SLIPSTREAM_TEST_ENDPOINT" --path-style'
            f' && {WAN} exec edge curl -s -o /dev/null -w "%{{http_code}}" "$SLIPSTREAM_TEST_ENDPOINT/"'
        )
        env = dict(os.environ, SLIPSTREAM_S3_NETNS="slipstream-s")
        r = subprocess.run([str(ROOT / "scripts" / "with-s3-server.sh"), "bash", "-c", script],
                           capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        report, edge_status = r.stdout.rsplit("\n", 1)
        report = json.loads(report)
        assert report["errors"] == 0 and report["ops"] == 5
        # The client's round trip to the server crosses both links.
        assert report["ttfb_ms"]["p50"] >= 25
        # The edge reaches the server itself (an unauthenticated request: refused, but answered).
        assert edge_status == "403"
        # Without an edge, exec edge says how to get one.
        wan("up", "--rtt", "20ms")
        r = wan("exec", "edge", "true", check=False)
        assert r.returncode == 2 and "--edge" in r.stderr
    finally:
        wan("down")


def test_down_is_idempotent_and_bad_input_is_refused():
    wan("down")
    assert "down" in wan("down").stdout
    assert wan("status", check=False).returncode == 1
    r = wan("up", "--rate", "fast", check=False)
    assert r.returncode == 2 and "mbit" in r.stderr
    r = wan("up", "--edge", "near", check=False)
    assert r.returncode == 2 and "10ms" in r.stderr
    r = wan("check", check=False)
    assert r.returncode == 2 and "not up" in r.stderr
