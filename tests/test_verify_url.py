"""`slipstream verify-url`, and agreement with a real verifier: for a set of valid and mutated
presigned URLs, versitygw accepts exactly the URLs our verifier accepts.

Keys with `.`/`..` segments are left out: versitygw normalizes the path before verifying (S3
does not), so for those keys the two disagree by design.
"""

import datetime

from support import amz, run_cli
from test_presign_server import AWKWARD_KEYS, _tampered, http, presign


def verify_url(bin_path, server, url, *extra):
    out = run_cli(bin_path, "verify-url", "--endpoint-url", server["endpoint"], *extra, url, check=False)
    assert out.returncode in (0, 1), out.stderr
    return out.returncode == 0, out.stdout.decode()


def test_agrees_with_versitygw_on_valid_and_mutated_urls(slipstream_bin, server, bucket):
    urls = []
    for key in AWKWARD_KEYS:
        http("PUT", presign(slipstream_bin, server, bucket, key, "--method", "PUT"), data=b"x")
        url = presign(slipstream_bin, server, bucket, key)
        urls.append(url)
        for param in ["X-Amz-Signature", "key", "X-Amz-Expires", "X-Amz-Credential", "X-Amz-Date"]:
            urls.extend(_tampered(url, param))
    an_hour_ago = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
    urls.append(presign(slipstream_bin, server, bucket, AWKWARD_KEYS[0], "--at", amz(an_hour_ago), "--expires-in", "60"))
    urls.append(presign(slipstream_bin, server, bucket, AWKWARD_KEYS[0], "--at", amz(an_hour_ago), "--expires-in", "7200"))
    accepted = 0
    for url in urls:
        ours, text = verify_url(slipstream_bin, server, url)
        status, body = http("GET", url)
        assert ours == (status == 200), (url, text, status, body[:200])
        accepted += ours
    assert accepted == len(AWKWARD_KEYS) + 1, "every untouched URL, and the still-valid old one, verifies"
    assert len(urls) - accepted > 100


def test_explains_a_mismatch(slipstream_bin, server, bucket):
    url = presign(slipstream_bin, server, bucket, "k")
    ok, text = verify_url(slipstream_bin, server, url, "--method", "PUT")
    assert not ok
    assert "SignatureDoesNotMatch" in text and "canonical request computed here:\nPUT\n" in text and "string to sign:" in text
    ok, text = verify_url(slipstream_bin, server, url)
    assert ok and text.startswith("valid: GET") and "expires at" in text


def test_put_with_signed_content_type(slipstream_bin, server, bucket):
    url = presign(slipstream_bin, server, bucket, "t.json", "--method", "PUT", "--content-type", "application/json")
    assert verify_url(slipstream_bin, server, url, "--method", "PUT", "--header", "content-type:application/json")[0]
    assert not verify_url(slipstream_bin, server, url, "--method", "PUT", "--header", "content-type:text/plain")[0]


def test_sigv4a_urls_verify(slipstream_bin, server, bucket):
    url = presign(slipstream_bin, server, bucket, "k", "--region-set", "*")
    assert "AWS4-ECDSA-P256-SHA256" in url
    ok, text = verify_url(slipstream_bin, server, url)
    assert ok, text
    ok, text = verify_url(slipstream_bin, server, url.replace("X-Amz-Region-Set=%2A", "X-Amz-Region-Set=us-%2A"))
    assert not ok and "SignatureDoesNotMatch" in text
