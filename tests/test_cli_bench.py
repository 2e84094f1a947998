"""`slipstream bench` against the local versitygw: a smoke run of every workload, the report's
schema, connection modes, the open loop's schedule, the HTML report, `compare`, and errors.

Speed is not asserted here (benchmarks measure it); counts, fields and clean-up are."""

import json
import os
import time
import uuid

import pytest

from support import run_cli

REQUIRED = {"ops_per_s", "mb_per_s", "errors", "latency_ms", "ttfb_ms"}
PERCENTILES = {"p25", "p50", "p75", "p90", "p99", "p999", "max"}


def env_for(server, secret=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        HOME="/nonexistent",
        AWS_ACCESS_KEY_ID=server["access_key"],
        AWS_SECRET_ACCESS_KEY=secret or server["secret_key"],
        AWS_REGION=server["region"],
    )
    return env


def bench(bin_path, server, *args, endpoint=None, check=True, secret=None):
    return run_cli(
        bin_path,
        "bench",
        *args,
        "--endpoint-url",
        endpoint or server["endpoint"],
        "--path-style",
        env=env_for(server, secret),
        check=check,
    )


def report(bin_path, server, tmp_path, *args, **kw):
    out = tmp_path / f"{uuid.uuid4().hex}.json"
    r = bench(bin_path, server, *args, "--json", str(out), **kw)
    data = json.loads(out.read_text())
    return r, data


def leftovers(bin_path, server, bucket):
    r = run_cli(bin_path, "ls", "--recursive", f"s3://{bucket}/", "--endpoint-url", server["endpoint"],
                "--path-style", env=env_for(server))
    return r.stdout.decode().strip()


@pytest.mark.parametrize(
    "workload, extra, kinds",
    [
        ("put", ["--count", "40"], {"put": 40}),
        ("get", ["--count", "40", "--objects", "5"], {"get": 40}),
        ("head", ["--count", "40", "--objects", "5"], {"head": 40}),
        ("delete", ["--count", "40"], {"delete": 40}),
        ("list", ["--count", "10", "--objects", "30"], {"list": 10}),
        ("put-head", ["--count", "20", "--prefixes", "3"], {"put": 20, "head": 20}),
        ("outposts", ["--count", "20"], {"put": 20, "head": 20}),
    ],
)
def test_every_workload_reports_and_cleans_up(slipstream_bin, server, tmp_path, workload, extra, kinds):
    bucket = f"bench-{uuid.uuid4().hex[:16]}"
    r, data = report(slipstream_bin, server, tmp_path, workload, "--bucket", bucket, "--size", "1KiB", *extra)
    assert REQUIRED <= data.keys()
    assert data["schema"] == 1 and data["errors"] == 0, data["error_kinds"]
    assert {k: v["count"] for k, v in data["operations"].items()} == kinds
    assert data["ops"] == sum(kinds.values())
    for name in ("latency_ms", "ttfb_ms"):
        s = data[name]
        assert PERCENTILES <= s.keys()
        values = [s[p] for p in ("p25", "p50", "p75", "p90", "p99", "p999", "max")]
        assert values == sorted(values) and values[0] > 0, (name, s)
    # Time to first byte cannot exceed the whole request.
    assert data["ttfb_ms"]["p50"] <= data["latency_ms"]["p50"]
    if "get" in kinds:
        assert data["mb_per_s"] > 0 and data["bytes"] == 40 * 1024
    assert sum(p["ops"] for p in data["timeline"]) == data["ops"]
    assert b"p99.9" in r.stdout
    assert leftovers(slipstream_bin, server, bucket) == "", "the run's objects are deleted"


def test_mixed_follows_the_weights_and_keep_leaves_objects(slipstream_bin, server, tmp_path):
    bucket = f"bench-{uuid.uuid4().hex[:16]}"
    _, data = report(slipstream_bin, server, tmp_path, "mixed", "--bucket", bucket, "--count", "300",
                     "--mix", "get=2,put=1", "--objects", "4", "--keep", "--prefix", "mine/", "--warmup", "0")
    assert data["errors"] == 0 and data["config"]["mix"] == "get=2,put=1"
    ops = {k: v["count"] for k, v in data["operations"].items()}
    assert set(ops) == {"get", "put"} and sum(ops.values()) == 300
    assert 150 <= ops["get"] <= 250, ops
    listing = leftovers(slipstream_bin, server, bucket)
    assert listing.count("mine/") == 4 + ops["put"], "the objects read and the ones written stay"
    _, data = report(slipstream_bin, server, tmp_path, "mixed", "--bucket", bucket, "--count", "200",
                     "--mix", "put=1,delete=1")
    assert data["errors"] == 0, "deletes take only keys the worker wrote"


def test_open_loop_schedules_rate_times_duration(slipstream_bin, server, tmp_path):
    bucket = f"bench-{uuid.uuid4().hex[:16]}"
    _, data = report(slipstream_bin, server, tmp_path, "head", "--bucket", bucket, "--rate", "200",
                     "--duration", "1s", "--concurrency", "4", "--objects", "3")
    assert data["ops"] == 200 and data["errors"] == 0
    assert data["config"]["rate"] == 200 and data["config"]["duration_s"] == 1


def test_idle_waits_between_the_set_up_and_the_measured_run(slipstream_bin, server, tmp_path):
    bucket = f"bench-{uuid.uuid4().hex[:16]}"
    started = time.monotonic()
    _, data = report(slipstream_bin, server, tmp_path, "get", "--bucket", bucket, "--count", "4",
                     "--concurrency", "4", "--warmup", "0", "--objects", "4", "--idle", "1500ms")
    assert time.monotonic() - started >= 1.5
    assert data["ops"] == 4 and data["errors"] == 0
    assert data["config"]["idle_s"] == 1.5
    # The quiet period is not part of the measured run.
    assert data["elapsed_s"] < time.monotonic() - started - 1.5
    _, plain = report(slipstream_bin, server, tmp_path, "head", "--bucket", bucket, "--count", "1",
                      "--objects", "1")
    assert "idle_s" not in plain["config"]


def test_fresh_https_ttfb_is_the_responses_first_byte_not_a_session_ticket(slipstream_bin, tmp_path):
    """OpenSSL (so nginx) and rustls (so the gateway) send TLS 1.3 session tickets after the
    handshake: they arrive just after the request goes out. The clock must skip them and stop at
    the response. A server that answers HEAD 0.4 s late: time to first byte is at least that.
    (Not S3 behaviour, a TLS one: a few lines of server suffice.)"""
    import http.server
    import ssl
    import threading

    from gateway_support import make_cert

    cert, key = make_cert(tmp_path, "late", ["localhost"])

    class Late(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self):
            self.send_response(200)
            self.send_header("ETag", '"0"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_PUT(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.answer()

        def do_HEAD(self):
            time.sleep(0.4)
            self.answer()

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Late)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(cert, key)
    assert ctx.num_tickets > 0
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        server = {"access_key": "AKIDEXAMPLE", "secret_key": "secret", "region": "us-east-1"}
        env = dict(env_for(server), AWS_CA_BUNDLE=str(tmp_path / "ca.pem"))
        out = tmp_path / "late.json"
        run_cli(slipstream_bin, "bench", "head", "--bucket", "b", "--count", "3", "--concurrency", "1", "--warmup", "0",
                "--objects", "1", "--size", "1KiB", "--connections", "fresh", "--keep", "--json", str(out),
                "--endpoint-url", f"https://localhost:{httpd.server_address[1]}", "--path-style", env=env)
        data = json.loads(out.read_text())
        assert data["ops"] == 3 and data["errors"] == 0
        assert data["ttfb_ms"]["p25"] >= 400, data["ttfb_ms"]
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("tls", ["1.2", "1.3"])
def test_fresh_https_connections_time_every_handshake(slipstream_bin, server, tmp_path, tls):
    bucket = f"bench-{uuid.uuid4().hex[:16]}"
    endpoint = os.environ["SLIPSTREAM_TEST_TLS_ENDPOINT"]
    ca = os.environ["SLIPSTREAM_TEST_CA"]
    _, fresh = report(slipstream_bin, server, tmp_path, "head", "--bucket", bucket, "--count", "30",
                      "--objects", "2", "--connections", "fresh", "--tls", tls, "--ca-bundle", ca,
                      endpoint=endpoint)
    phases = fresh["operations"]["head"]["phases_ms"]
    assert phases["connect"]["count"] == 30 and phases["tls"]["count"] == 30
    assert fresh["config"]["tls"] == tls and fresh["config"]["connection"] == "fresh"
    _, pooled = report(slipstream_bin, server, tmp_path, "head", "--bucket", bucket, "--count", "30",
                       "--objects", "2", "--tls", tls, "--ca-bundle", ca, endpoint=endpoint)
    assert "tls" not in pooled["operations"]["head"]["phases_ms"], "warm-up opened the connections"
    r = bench(slipstream_bin, server, "head", "--bucket", bucket, "--count", "3", endpoint=endpoint, check=False)
    assert r.returncode == 1 and b"certificate" in r.stderr


def test_html_report_is_self_contained(slipstream_bin, server, tmp_path):
    bucket = f"bench-{uuid.uuid4().hex[:16]}"
    page = tmp_path / "r.html"
    bench(slipstream_bin, server, "get", "--bucket", bucket, "--count", "50", "--objects", "2",
          "--html", str(page), "--quiet")
    html = page.read_text()
    assert html.startswith("<!doctype html>") and html.count("<svg") >= 4
    for fetching in ("<script", "src=", "href=", "@import", "url("):
        assert fetching not in html
    import xml.dom.minidom
    for svg in html.split("<svg")[1:]:
        xml.dom.minidom.parseString("<svg" + svg.split("</svg>")[0] + "</svg>")


def test_compare_prints_ratios(slipstream_bin, server, tmp_path):
    bucket = f"bench-{uuid.uuid4().hex[:16]}"
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    bench(slipstream_bin, server, "head", "--bucket", bucket, "--count", "50", "--json", str(a), "--quiet")
    bench(slipstream_bin, server, "head", "--bucket", bucket, "--count", "50", "--connections", "fresh",
          "--json", str(b), "--quiet")
    page = tmp_path / "c.html"
    r = run_cli(slipstream_bin, "bench", "compare", str(a), str(a), "--html", str(page))
    assert "head latency p50" in r.stdout.decode() and "1.00x" in r.stdout.decode()
    assert page.read_text().count("<polyline") == 4
    r = run_cli(slipstream_bin, "bench", "compare", str(a), str(b))
    lines = [l for l in r.stdout.decode().splitlines() if l.startswith("head latency p50")]
    assert len(lines) == 1, r.stdout.decode()
    # The row shows each run's p50 (as its report has it, to 3 decimals) and B/A of them.
    a_ms, b_ms, ratio = lines[0].removeprefix("head latency p50").split()
    want_a = json.loads(a.read_text())["operations"]["head"]["latency_ms"]["p50"]
    want_b = json.loads(b.read_text())["operations"]["head"]["latency_ms"]["p50"]
    assert float(a_ms) == pytest.approx(want_a, abs=0.0005), (lines[0], want_a)
    assert float(b_ms) == pytest.approx(want_b, abs=0.0005), (lines[0], want_b)
    assert ratio.endswith("x") and float(ratio[:-1]) == pytest.approx(want_b / want_a, abs=0.006)
    r = run_cli(slipstream_bin, "bench", "compare", str(a), str(page), check=False)
    assert r.returncode == 2 and b"not a bench --json report" in r.stderr


def test_presign_needs_no_server(slipstream_bin, tmp_path):
    out = tmp_path / "p.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME="/nonexistent", AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="s" * 40,
               AWS_REGION="us-east-1")
    run_cli(slipstream_bin, "bench", "presign", "--count", "20000", "--concurrency", "2", "--json", str(out),
            env=env)
    data = json.loads(out.read_text())
    assert data["ops"] == 20000 and data["operations"]["presign"]["latency_ms"]["p50"] > 0
    assert "s" * 40 not in out.read_text()


def test_bad_input_gets_clear_errors(slipstream_bin, server, tmp_path):
    r = bench(slipstream_bin, server, "get", "--count", "5", check=False)
    assert r.returncode == 2 and b"--bucket is required" in r.stderr
    bucket = f"bench-{uuid.uuid4().hex[:16]}"
    r = bench(slipstream_bin, server, "delete", "--bucket", bucket, "--duration", "1s", check=False)
    assert r.returncode == 2 and b"delete needs --count" in r.stderr, (r.returncode, r.stderr)
    r = bench(slipstream_bin, server, "mixed", "--bucket", bucket, "--mix", "copy=1", check=False)
    assert r.returncode == 2 and b"copy" in r.stderr
    r = bench(slipstream_bin, server, "get", "--bucket", bucket, "--rate", "0", check=False)
    assert r.returncode == 2
    # Zero operations measure nothing: refused rather than an empty table.
    r = bench(slipstream_bin, server, "head", "--bucket", bucket, "--count", "0", check=False)
    assert r.returncode == 2 and b"--count" in r.stderr
    secret = "x" * 40
    r = bench(slipstream_bin, server, "put", "--bucket", bucket, "--count", "3", secret=secret, check=False)
    assert r.returncode == 1 and b"SignatureDoesNotMatch" in r.stderr
    assert secret.encode() not in r.stderr + r.stdout
