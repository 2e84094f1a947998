"""The CLI through a real HTTP proxy (tinyproxy, tests/proxy_support.py), configured as boto3 and
the AWS CLI are: `https_proxy` for an https endpoint (a CONNECT tunnel, TLS inside it),
`http_proxy` for an http one (requests sent to the proxy, whole URL as target), `no_proxy` for
the hosts that go direct. The proxy's log shows which way each request went; the routes the
environment picks are compared with botocore's on the same settings."""

import json
import os
import subprocess
import sys

import pytest

from proxy_support import proxy, proxy_with_password, without_proxies  # noqa: F401  (fixtures)
from support import cli_env, recording_server, run_cli

TLS = os.environ.get("SLIPSTREAM_TEST_TLS_ENDPOINT", "")
CA = os.environ.get("SLIPSTREAM_TEST_CA", "")


def env_with(server, **proxies) -> dict:
    return dict(without_proxies(cli_env(server)), **proxies)


def host_port(endpoint: str) -> str:
    return endpoint.split("://", 1)[1].rstrip("/")


def test_an_https_endpoint_is_reached_through_a_connect_tunnel(slipstream_bin, server, proxy, tmp_path):
    env = env_with(server, HTTPS_PROXY=proxy.url, AWS_CA_BUNDLE=CA)
    at = ["--endpoint-url", TLS, "--path-style"]
    data = os.urandom(13 << 20)
    (tmp_path / "up").write_bytes(data)
    run_cli(slipstream_bin, "mb", "s3://proxied-tls", *at, env=env)
    # Multipart (three parts of 5 MiB) up, parallel ranges down: every connection tunnelled.
    run_cli(slipstream_bin, "cp", str(tmp_path / "up"), "s3://proxied-tls/k", "--part-size", "5MiB", *at, env=env)
    run_cli(slipstream_bin, "cp", "s3://proxied-tls/k", str(tmp_path / "down"), "--part-size", "5MiB", *at, env=env)
    assert (tmp_path / "down").read_bytes() == data
    asked = proxy.requests()
    assert asked and set(asked) == {f"CONNECT {host_port(TLS)}"}, asked
    # Without the proxy setting the same command goes direct: the log stays empty.
    proxy.clear()
    run_cli(slipstream_bin, "ls", "s3://proxied-tls", *at, env=env_with(server, AWS_CA_BUNDLE=CA))
    assert proxy.requests() == []


def test_an_http_endpoint_has_its_requests_sent_to_the_proxy(slipstream_bin, server, proxy, tmp_path):
    env = env_with(server, HTTP_PROXY=proxy.url)
    at = ["--endpoint-url", server["endpoint"], "--path-style"]
    (tmp_path / "f").write_bytes(b"through the proxy")
    run_cli(slipstream_bin, "mb", "s3://proxied-http", *at, env=env)
    run_cli(slipstream_bin, "cp", str(tmp_path / "f"), "s3://proxied-http/a b.txt", *at, env=env)
    got = run_cli(slipstream_bin, "cat", "s3://proxied-http/a b.txt", *at, env=env)
    assert got.stdout == b"through the proxy"
    run_cli(slipstream_bin, "rm", "s3://proxied-http/a b.txt", *at, env=env)
    origin = server["endpoint"].rstrip("/")
    asked = proxy.requests()
    assert f"PUT {origin}/proxied-http/a%20b.txt" in asked, asked
    assert f"GET {origin}/proxied-http/a%20b.txt" in asked, asked
    assert f"DELETE {origin}/proxied-http/a%20b.txt" in asked, asked
    assert not any(a.startswith("CONNECT") for a in asked), asked


def test_no_proxy_names_the_hosts_that_go_direct(slipstream_bin, server, proxy):
    at = ["--endpoint-url", server["endpoint"], "--path-style"]
    port = host_port(server["endpoint"]).rsplit(":", 1)[1]
    for no_proxy in ["127.0.0.1", f"127.0.0.1:{port}", "*", "example.com, 127.0.0.0/8"]:
        run_cli(slipstream_bin, "ls", *at, env=env_with(server, HTTP_PROXY=proxy.url, NO_PROXY=no_proxy))
        assert proxy.requests() == [], no_proxy
    run_cli(slipstream_bin, "ls", *at, env=env_with(server, http_proxy=proxy.url, NO_PROXY="example.com"))
    assert proxy.requests() == [f"GET {server['endpoint'].rstrip('/')}/"]


def test_a_proxy_that_wants_credentials_gets_them_from_its_url(slipstream_bin, server, proxy_with_password, tmp_path):
    p = proxy_with_password
    at_tls = ["--endpoint-url", TLS, "--path-style"]
    at_http = ["--endpoint-url", server["endpoint"], "--path-style"]
    # None given: S3's commands fail at once (a refusal is not retried) saying what is wanted.
    refused = run_cli(slipstream_bin, "ls", *at_tls, env=env_with(server, HTTPS_PROXY=p.url, AWS_CA_BUNDLE=CA),
                      check=False)
    assert refused.returncode != 0
    assert b"407" in refused.stderr and b"wants credentials" in refused.stderr, refused.stderr
    assert len(p.requests()) == 1, p.requests()
    with_password = p.url.replace("http://", "http://ann:s3cret@")
    for at, env in [(at_tls, env_with(server, HTTPS_PROXY=with_password, AWS_CA_BUNDLE=CA)),
                    (at_http, env_with(server, HTTP_PROXY=with_password))]:
        done = run_cli(slipstream_bin, "ls", *at, env=env)
        assert b"s3cret" not in done.stdout + done.stderr
    wrong = p.url.replace("http://", "http://ann:wrong@")
    refused = run_cli(slipstream_bin, "ls", *at_tls, env=env_with(server, HTTPS_PROXY=wrong, AWS_CA_BUNDLE=CA),
                      check=False)
    assert b"refused the credentials" in refused.stderr and b"wrong" not in refused.stderr, refused.stderr


def test_a_proxy_url_that_cannot_be_used_fails_what_connects_and_not_presign(slipstream_bin, server):
    at = ["--endpoint-url", server["endpoint"], "--path-style"]
    env = env_with(server, HTTP_PROXY="socks5://ann:pw@127.0.0.1:1080")
    failed = run_cli(slipstream_bin, "ls", *at, env=env, check=False)
    assert failed.returncode != 0
    assert b"the http proxy socks5://127.0.0.1:1080: socks5 proxies are not supported" in failed.stderr, failed.stderr
    assert b"pw" not in failed.stderr
    # Presigning connects nowhere: it is not held up by the setting.
    run_cli(slipstream_bin, "presign", "s3://b/k", *at, env=env)


BOTO3_LS = """
import sys, boto3
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=sys.argv[1], config=Config(s3={"addressing_style": "path"},
                  retries={"max_attempts": 1}))
s3.list_buckets()
"""


@pytest.mark.parametrize("settings", [
    {"HTTP_PROXY": "{p}"},
    {"HTTPS_PROXY": "{p}"},
    {"http_proxy": "{p}", "HTTP_PROXY": "http://127.0.0.1:1"},
    {"HTTP_PROXY": "{p}", "http_proxy": ""},
    {"HTTP_PROXY": "{p}", "NO_PROXY": "127.0.0.1"},
    {"HTTP_PROXY": "{p}", "no_proxy": "127.0.0.1:{port}"},
    {"HTTP_PROXY": "{p}", "NO_PROXY": "127.0.0.1:1"},
    {"HTTP_PROXY": "{p}", "NO_PROXY": ".example.com, localhost"},
    {"HTTP_PROXY": "{p}", "NO_PROXY": "*"},
    {"HTTP_PROXY": "{p}", "REQUEST_METHOD": "GET"},
])
def test_the_environment_routes_requests_as_it_routes_botocores(slipstream_bin, server, proxy, settings):
    port = host_port(server["endpoint"]).rsplit(":", 1)[1]
    env = env_with(server, **{k: v.format(p=proxy.url, port=port) for k, v in settings.items()})
    subprocess.run([sys.executable, "-c", BOTO3_LS, server["endpoint"]], env=env, check=True,
                   capture_output=True, timeout=60)
    botocore_went = proxy.requests()
    proxy.clear()
    run_cli(slipstream_bin, "ls", "--endpoint-url", server["endpoint"], "--path-style", env=env)
    ours = proxy.requests()
    assert bool(ours) == bool(botocore_went), (settings, botocore_went, ours)


def instance_metadata(path: str) -> bytes:
    """What EC2 instance metadata (IMDSv2) answers at `path`: a token, a role, its credentials;
    a recorder answering so is a forwarding proxy that can reach instance metadata."""
    if path.endswith("/api/token"):
        return b"TOKEN"
    if path.endswith("/security-credentials/"):
        return b"the-role"
    return json.dumps({"Code": "Success", "AccessKeyId": "AKIDVIAPROXY", "SecretAccessKey": "s",
                       "Token": "t", "Expiration": "2099-01-01T00:00:00Z"}).encode()


def test_presign_fetches_credentials_through_the_proxy_as_botocore_does(slipstream_bin):
    # Instance metadata at an address nothing answers on here: only the proxy can reach it,
    # and botocore reads it through http_proxy too.
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and "proxy" not in k.lower()}
    env.update(HOME="/nonexistent", AWS_REGION="us-east-1", AWS_EC2_METADATA_SERVICE_ENDPOINT="http://169.254.169.254")
    with recording_server(instance_metadata) as (url, seen):
        env["http_proxy"] = url
        botocore = subprocess.run([sys.executable, "-c", "import boto3; print(boto3.Session().get_credentials().access_key)"],
                                  env=env, capture_output=True, timeout=60)
        assert botocore.stdout.strip() == b"AKIDVIAPROXY", botocore.stderr
        theirs = [r["path"] for r in seen]
        seen.clear()
        out = run_cli(slipstream_bin, "presign", "s3://b/k", env=env).stdout
        assert b"X-Amz-Credential=AKIDVIAPROXY%2F" in out, out
        ours = [r["path"] for r in seen]
        assert ours and all(p.startswith("http://169.254.169.254/") for p in ours), (ours, theirs)


def test_container_credentials_are_fetched_directly_as_botocore_fetches_them(slipstream_bin, server):
    # The task's own endpoint: botocore never sends it to a proxy, and neither do we (a proxy
    # outside the task cannot reach 169.254.170.2). The proxy here refuses everything.
    creds = json.dumps({"AccessKeyId": server["access_key"], "SecretAccessKey": server["secret_key"],
                        "Token": "t", "Expiration": "2099-01-01T00:00:00Z"}).encode()
    with recording_server(creds) as (container, _), recording_server(status=403) as (proxy, refused):
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and "proxy" not in k.lower()}
        env.update(HOME="/nonexistent", AWS_REGION=server["region"], http_proxy=proxy,
                   AWS_CONTAINER_CREDENTIALS_FULL_URI=container + "/creds")
        botocore = subprocess.run([sys.executable, "-c", "import boto3; print(boto3.Session().get_credentials().access_key)"],
                                  env=env, capture_output=True, timeout=60)
        assert botocore.stdout.strip() == server["access_key"].encode(), botocore.stderr
        out = run_cli(slipstream_bin, "presign", "s3://b/k", env=env).stdout
        assert f"X-Amz-Credential={server['access_key']}%2F".encode() in out
        # A client's own fetch too (its requests to the plain server go through the proxy,
        # which refuses them: the credentials were fetched, the listing is what failed).
        listed = run_cli(slipstream_bin, "ls", "--endpoint-url", server["endpoint"], "--path-style", env=env, check=False)
        assert b"403" in listed.stderr and b"credential" not in listed.stderr.lower(), listed.stderr
        assert all(r["path"] != "/creds" and not r["path"].endswith("/creds") for r in refused), refused
