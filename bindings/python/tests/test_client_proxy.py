"""`Client` through a real HTTP proxy (tinyproxy, tests/proxy_support.py): `proxies=` as boto3's
`Config(proxies=...)` takes it, the environment's `https_proxy`/`http_proxy`/`no_proxy` when it
is left out, and `from_boto3` carrying a boto3 client's. The proxy's log says which way each
request went."""

import os

import boto3
import pytest
from botocore.config import Config

import slipstream
from proxy_support import PROXY_VARS, proxy  # noqa: F401  (fixture)

TLS = os.environ.get("SLIPSTREAM_TEST_TLS_ENDPOINT", "")
CA = os.environ.get("SLIPSTREAM_TEST_CA", "")


@pytest.fixture(autouse=True)
def no_outer_proxies(monkeypatch):
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)


def client(server, endpoint=None, **kw):
    return slipstream.Client(region=server["region"], endpoint_url=endpoint or server["endpoint"],
                             addressing="path", ca_bundle=CA if endpoint == TLS else None,
                             credentials=slipstream.Credentials(server["access_key"], server["secret_key"]), **kw)


def test_proxies_given_send_an_http_endpoints_requests_to_the_proxy(server, s3, bucket, proxy):
    c = client(server, proxies={"http": proxy.url})
    c.put_bytes(bucket, "k", b"via the proxy")
    assert c.get_bytes(bucket, "k") == b"via the proxy"
    origin = server["endpoint"].rstrip("/")
    asked = proxy.requests()
    assert f"PUT {origin}/{bucket}/k" in asked and f"GET {origin}/{bucket}/k" in asked, asked
    # The same client without `proxies=` goes direct.
    proxy.clear()
    assert client(server).get_bytes(bucket, "k") == b"via the proxy"
    assert proxy.requests() == []


def test_an_https_endpoint_is_tunnelled_and_the_environment_is_read_when_none_are_given(server, proxy, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    c = client(server, TLS)
    boto = boto3.client("s3", endpoint_url=TLS, region_name=server["region"], verify=CA,
                        aws_access_key_id=server["access_key"], aws_secret_access_key=server["secret_key"],
                        config=Config(s3={"addressing_style": "path"}))
    boto.create_bucket(Bucket="proxied-python")
    proxy.clear()
    data = os.urandom(3 << 20)
    c.put_bytes("proxied-python", "k", data)
    assert c.get_bytes("proxied-python", "k") == data
    hostport = TLS.split("://", 1)[1].rstrip("/")
    asked = proxy.requests()
    assert asked and set(asked) == {f"CONNECT {hostport}"}, asked
    # no_proxy takes the endpoint's host out.
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    proxy.clear()
    assert client(server, TLS).get_bytes("proxied-python", "k") == data
    assert proxy.requests() == []


def test_from_boto3_carries_the_boto3_clients_proxies(server, bucket, proxy):
    boto = boto3.client("s3", endpoint_url=server["endpoint"], region_name=server["region"],
                        aws_access_key_id=server["access_key"], aws_secret_access_key=server["secret_key"],
                        config=Config(s3={"addressing_style": "path"}, proxies={"http": proxy.url}))
    boto.put_object(Bucket=bucket, Key="k", Body=b"both")
    proxy.clear()
    assert slipstream.Client.from_boto3(boto).get_bytes(bucket, "k") == b"both"
    assert f"GET {server['endpoint'].rstrip('/')}/{bucket}/k" in proxy.requests()


@pytest.mark.parametrize("proxies, says", [
    ({"https": "socks5://ann:pw@127.0.0.1:1080"}, "socks5 proxies are not supported"),
    ({"https": "https://127.0.0.1:3128"}, "a proxy reached over TLS is not supported"),
    ({"ftp": "http://127.0.0.1:3128"}, "is not a scheme"),
])
def test_proxies_that_cannot_be_used_raise_value_error(server, proxies, says):
    with pytest.raises(ValueError, match=says) as e:
        client(server, proxies=proxies)
    assert "pw" not in str(e.value)


def test_an_unusable_proxy_in_the_environment_raises_when_the_client_is_made(server, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "socks5://127.0.0.1:1080")
    with pytest.raises(ValueError, match="the http proxy socks5://127.0.0.1:1080"):
        client(server)
    # Given proxies replace the environment's, as in boto3.
    client(server, proxies={"http": "http://127.0.0.1:3128"})
