"""Presigned POST: byte-identical to botocore's generate_presigned_post (URL, fields, policy bytes,
signature) over many keys, fields and conditions; clear errors; and real browser-style
multipart/form-data uploads that versitygw (which checks POST policies) accepts or refuses."""

import base64
import datetime
import json
import random
import urllib.error
import urllib.request
import uuid
from unittest import mock

import pytest
from test_differential_botocore import ACCESS_KEY, AT, AT_TEXT, SECRET_KEY, TOKEN, botocore_client, random_key
from test_presigner import presigner

import slipstream
from slipstream import Credentials, Presigner


def botocore_post(client, bucket, key, fields, conditions, expires):
    with mock.patch("botocore.signers.get_current_datetime", return_value=AT), mock.patch("botocore.auth.get_current_datetime", return_value=AT):
        # botocore appends to the caller's conditions: hand it a copy.
        return client.generate_presigned_post(bucket, key, Fields=dict(fields or {}), Conditions=list(conditions or []), ExpiresIn=expires)


def random_rules(rng):
    """Fields and the conditions that name them, as a form author would write them."""
    fields, conditions = {}, []
    for _ in range(rng.randint(0, 4)):
        kind = rng.choice(["eq", "eq-list", "starts-with", "range", "meta", "nested"])
        if kind == "eq":
            fields["acl"] = rng.choice(["private", "public-read"])
            conditions.append({"acl": fields["acl"]})
        elif kind == "eq-list":
            fields["success_action_status"] = "201"
            conditions.append(["eq", "$success_action_status", "201"])
        elif kind == "starts-with":
            conditions.append(["starts-with", "$Content-Type", rng.choice(["image/", "", "text/ü"])])
        elif kind == "range":
            conditions.append(["content-length-range", rng.randint(0, 10), rng.randint(10, 2**40)])
        elif kind == "meta":
            value = random_key(rng)
            fields["x-amz-meta-note"] = value
            conditions.append({"x-amz-meta-note": value})
        else:
            conditions.append({"x-amz-meta-flags": "a\"b\\c\td\u00e9\U0001f600"})
    return fields, conditions


@pytest.mark.parametrize("token", [None, TOKEN])
@pytest.mark.parametrize("addressing", ["auto", "path", "virtual"])
def test_byte_identical_to_botocore(addressing, token):
    rng = random.Random(f"post/{addressing}/{token}")
    region = "eu-west-1" if token else "us-east-1"
    client = botocore_client(region, token, style=addressing)
    p = presigner(region, token, addressing)
    for i in range(300):
        key = random_key(rng) + ("${filename}" if i % 5 == 0 else "")
        fields, conditions = random_rules(rng)
        expires = rng.choice([1, 600, 3600, 604800])
        want = botocore_post(client, "diff-bucket", key, fields, conditions, expires)
        got = p.presign_post(key, fields=fields, conditions=conditions, expires_in=expires, at=AT_TEXT)
        assert got["url"] == want["url"], key
        assert list(got["fields"].items()) == list(want["fields"].items()), (key, conditions)


def test_custom_endpoints_and_the_boto3_shaped_function():
    for style in ["path", "virtual"]:
        client = botocore_client("us-east-1", style=style, endpoint="http://127.0.0.1:7070")
        rules = {"Fields": {"acl": "private"}, "Conditions": [{"acl": "private"}, ["content-length-range", 1, 99]]}
        got = slipstream.generate_presigned_post(client, "forms", "a/b c.txt", ExpiresIn=900, **rules)
        # Signed now: botocore signs at the same second for the comparison.
        now = datetime.datetime.strptime(got["fields"]["x-amz-date"], "%Y%m%dT%H%M%SZ")
        with mock.patch("botocore.signers.get_current_datetime", return_value=now), mock.patch("botocore.auth.get_current_datetime", return_value=now):
            want = client.generate_presigned_post("forms", "a/b c.txt", Fields=dict(rules["Fields"]), Conditions=list(rules["Conditions"]), ExpiresIn=900)
        assert got == want
        assert list(got["fields"]) == list(want["fields"])
        assert rules["Conditions"] == [{"acl": "private"}, ["content-length-range", 1, 99]], "the caller's list is left alone"


def test_the_policy_is_what_it_says():
    form = presigner().presign_post("up/${filename}", conditions=[["content-length-range", 0, 5]], expires_in=60, at=AT_TEXT)
    policy = json.loads(base64.b64decode(form["fields"]["policy"]))
    assert policy["expiration"] == "2026-03-14T15:10:26Z"
    assert policy["conditions"][:3] == [["content-length-range", 0, 5], {"bucket": "diff-bucket"}, ["starts-with", "$key", "up/"]]
    assert form["fields"]["key"] == "up/${filename}"


def test_bad_input_is_a_clear_error():
    p = presigner()
    with pytest.raises(ValueError, match="integers"):
        p.presign_post("k", conditions=[["content-length-range", 0, 1.5]])
    with pytest.raises(ValueError, match="604800"):
        p.presign_post("k", expires_in=604801)
    with pytest.raises(ValueError, match="empty"):
        p.presign_post("")
    with pytest.raises(TypeError, match="mapping of str to str"):
        p.presign_post("k", fields={"acl": 1})
    with pytest.raises(TypeError, match="list of conditions"):
        p.presign_post("k", conditions={"acl": "private"})
    with pytest.raises(TypeError, match="cannot hold set"):
        p.presign_post("k", conditions=[{"a": {1}}])
    with pytest.raises(ValueError, match="SigV4 only"):
        presigner(signature="v4a", region_set="*").presign_post("k")


def multipart(fields, filename, content, content_type="application/octet-stream"):
    """A browser's multipart/form-data body: the fields, then the file (S3 wants it last)."""
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{n}"\r\n\r\n{v}\r\n'.encode() for n, v in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\nContent-Type: {content_type}\r\n\r\n'.encode() + content + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def post(form, extra, filename, content):
    body, content_type = multipart({**form["fields"], **extra}, filename, content)
    req = urllib.request.Request(form["url"], data=body, method="POST", headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_a_browser_upload_to_a_local_server(server, bucket, s3):
    p = Presigner(bucket, region=server["region"], credentials=Credentials(server["access_key"], server["secret_key"]), endpoint_url=server["endpoint"], addressing="path")
    # A fixed key: versitygw 1.8 stores `${filename}` literally where S3 puts the file's name.
    form = p.presign_post(
        "uploads/hello.txt",
        fields={"Content-Type": "text/plain"},
        conditions=[["starts-with", "$Content-Type", "text/"], ["content-length-range", 1, 64]],
        expires_in=300,
    )
    status, body = post(form, {}, "hello.txt", b"hello from a form")
    assert status in (200, 204), body
    got = s3.get_object(Bucket=bucket, Key="uploads/hello.txt")
    assert got["Body"].read() == b"hello from a form"

    s3.delete_object(Bucket=bucket, Key="uploads/hello.txt")
    # Each broken rule is refused by the server, and nothing is written.
    refused = [
        ({}, "big.txt", b"x" * 65),  # content-length-range
        ({"Content-Type": "image/png"}, "png.txt", b"x"),  # starts-with $Content-Type
        ({"x-amz-meta-extra": "1"}, "extra.txt", b"x"),  # a field no condition names
        ({"x-amz-signature": "0" * 64}, "forged.txt", b"x"),  # a signature of something else
    ]
    for extra, name, content in refused:
        status, body = post(form, extra, name, content)
        assert status in (400, 403), (extra, status, body)
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket), "a refused upload wrote nothing"
