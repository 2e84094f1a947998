"""Python-presigned URLs against the local versitygw with a plain HTTP client."""

import os

from test_presign_server import AWKWARD_KEYS, _tampered, http

from support import run_cli
from slipstream import Credentials, Presigner


def presigner(server, bucket, **kw):
    creds = Credentials(server["access_key"], server["secret_key"])
    return Presigner(bucket, region=server["region"], credentials=creds, endpoint_url=server["endpoint"], **kw)


def test_put_get_and_tampering(server, bucket):
    p = presigner(server, bucket)
    for key in AWKWARD_KEYS:
        assert http("PUT", p.presign_put(key), data=key.encode())[0] == 200
    for key, url in zip(AWKWARD_KEYS, p.presign_many(AWKWARD_KEYS)):
        assert http("GET", url) == (200, key.encode())
        for bad in _tampered(url, "X-Amz-Signature"):
            assert http("GET", bad)[0] == 403
    assert http("HEAD", p.presign("HEAD", AWKWARD_KEYS[0]))[0] == 200
    assert http("DELETE", p.presign("DELETE", AWKWARD_KEYS[0]))[0] == 204


def test_signed_content_type(server, bucket):
    url = presigner(server, bucket).presign_put("t.json", content_type="application/json")
    assert http("PUT", url, data=b"{}", headers={"Content-Type": "application/json"})[0] == 200
    assert http("PUT", url, data=b"{}", headers={"Content-Type": "text/plain"})[0] == 403


def test_sigv4a_urls_pass_our_verifier(server, bucket, slipstream_bin):
    url = presigner(server, bucket, signature="v4a", region_set="*").presign_get("k")
    out = run_cli(slipstream_bin, "verify-url", "--endpoint-url", server["endpoint"], url, env=dict(os.environ), check=False)
    assert out.returncode == 0, out.stdout
