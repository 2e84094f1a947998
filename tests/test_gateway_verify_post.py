"""Browser POST uploads (presigned POST forms) through `slipstream gateway --mode verify`: the
edge verifies the form's policy with its own keys, authorizes the upload against the key's
policy, and forwards the form signed again with the gateway's credentials (the origin has never
heard of the edge's keys). A refused form never reaches the origin; a file outside the policy's
size range is refused by the origin, which the edge's own policy binds to the same range."""

from __future__ import annotations

import json
import os
import ssl
import urllib.error
import urllib.request
import uuid

import pytest

from gateway_support import log_lines
from test_gateway_verify import ADMIN, OFF, READER, TEMP, client, edge, pki  # noqa: F401 (fixtures)


def multipart(fields: dict, filename: str, content: bytes, after: bytes = b"") -> tuple[bytes, str]:
    """A browser's body: the fields, the file last (S3 ignores anything after it), `after` past the end."""
    boundary = "----edgeform" + uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{n}"\r\n\r\n'.encode() + v.encode() + b"\r\n" for n, v in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + content + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode() + after)
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def post(url: str, ca: str, fields: dict, filename: str, content: bytes, after: bytes = b"") -> tuple[int, bytes, object]:
    body, content_type = multipart(fields, filename, content, after)
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": content_type})
    context = ssl.create_default_context(cafile=ca)
    try:
        with urllib.request.urlopen(req, timeout=60, context=context) as resp:
            return resp.status, resp.read(), resp.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers


def form(edge, ca: str, bucket: str, key: str, who: tuple = ADMIN, fields: dict | None = None,
         conditions: list | None = None, expires: int = 300) -> dict:
    """A presigned POST made by botocore with an edge key, for the edge's URL."""
    c = client(edge.url, who, ca)
    return c.generate_presigned_post(bucket, key, Fields=fields, Conditions=conditions, ExpiresIn=expires)


def code(body: bytes) -> str:
    text = body.decode(errors="replace")
    return text.split("<Code>", 1)[1].split("</Code>", 1)[0] if "<Code>" in text else text


def test_a_form_signed_with_an_edge_key_uploads_through_the_edge(edge, pki, bucket, s3):
    ca = pki["ca"]
    content = os.urandom(3 * 1024 * 1024 + 17)  # several frames: the file streams through
    f = form(edge, ca, bucket, "uploads/${filename}",
             fields={"Content-Type": "image/png", "x-amz-meta-note": "café", "success_action_status": "201"},
             conditions=[{"Content-Type": "image/png"}, {"x-amz-meta-note": "café"}, {"success_action_status": "201"},
                         ["content-length-range", 1, 8 << 20]])
    status, body, _ = post(f["url"], ca, f["fields"], "cat.png", content, after=b"ignored epilogue")
    assert status == 201, body
    assert b"<Key>uploads/cat.png</Key>" in body
    # The edge replaced ${filename} as S3 does (versitygw alone stores it literally).
    got = s3.get_object(Bucket=bucket, Key="uploads/cat.png")
    assert got["Body"].read() == content
    assert got["ContentType"] == "image/png"
    # The UTF-8 bytes as sent (botocore reads header bytes as Latin-1).
    assert got["Metadata"]["note"].encode("latin-1").decode() == "café"

    # Tokens: a form signed with session credentials carries its token, which the edge checks.
    t = form(edge, ca, bucket, "temp.bin", who=TEMP)
    status, _, headers = post(t["url"], ca, t["fields"], "t", b"temporary")
    assert status == 204
    # The object's URL names the edge, not the origin the edge signed for.
    assert headers["Location"] == f"{edge.url}/{bucket}/temp.bin"
    assert s3.get_object(Bucket=bucket, Key="temp.bin")["Body"].read() == b"temporary"
    forwarded = [l for l in log_lines(edge) if l["method"] == "POST"]
    assert len(forwarded) == 2 and all(l["upstream_reused"] is not None for l in forwarded)


def test_forms_that_fail_verification_or_policy_never_reach_the_origin(edge, pki, bucket, s3):
    ca = pki["ca"]
    f = form(edge, ca, bucket, "k.txt", fields={"Content-Type": "text/plain"},
             conditions=[["starts-with", "$Content-Type", "text/"]])
    fields = f["fields"]
    expired = form(edge, ca, bucket, "k.txt", expires=-5)
    reader = form(edge, ca, bucket, "k.txt", who=READER)
    disabled = form(edge, ca, bucket, "k.txt", who=OFF)
    unknown = form(edge, ca, bucket, "k.txt", who=("EDGENOSUCHKEY", "nope-nope-nope"))
    other_bucket = form(edge, ca, bucket + "-other", "k.txt")
    cases = [
        ({**fields, "x-amz-signature": "0" * 64}, "SignatureDoesNotMatch"),
        ({**fields, "key": "elsewhere.txt"}, "AccessDenied"),  # the policy's key condition
        ({**fields, "Content-Type": "image/png"}, "AccessDenied"),  # starts-with
        ({**fields, "x-amz-meta-extra": "1"}, "AccessDenied"),  # a field no condition names
        ({k: v for k, v in fields.items() if k != "policy"}, "InvalidArgument"),  # S3: a field is missing
        ({k: v for k, v in fields.items() if k not in ("policy", "x-amz-signature")}, "AccessDenied"),  # anonymous
        (expired["fields"], "AccessDenied"),
        (reader["fields"], "AccessDenied"),  # the key's policy has no s3:PutObject
        (disabled["fields"], "InvalidAccessKeyId"),
        (unknown["fields"], "InvalidAccessKeyId"),
        ({**other_bucket["fields"]}, "AccessDenied"),  # the bucket condition names another bucket
    ]
    for sent, want in cases:
        status, body, _ = post(f["url"], ca, sent, "k.txt", b"text")
        assert status in (400, 403) and code(body) == want, (sent.keys(), status, body)
    # Not a form the edge can read: no file, no boundary, fields past the edge's limit.
    body, content_type = multipart(fields, "k.txt", b"x")
    no_file = body.split(b'name="file"')[0].rsplit(b"\r\n", 1)[0] + b"--\r\n"
    padded, padded_type = multipart({**fields, "x-ignore-pad": "p" * 70_000}, "k.txt", b"x")
    # And what is not a form to a bucket, as S3 answers it (no authentication to check).
    for url, data, ctype, status, want in [
        (f["url"], no_file, content_type, 400, "InvalidArgument"),
        (f["url"], body, "multipart/form-data", 400, "MalformedPOSTRequest"),
        (f["url"], padded, padded_type, 400, "MaxPostPreDataLengthExceeded"),
        (f["url"], b"{}", "application/json", 412, "PreconditionFailed"),
        (f["url"] + "/k.txt", body, content_type, 405, "MethodNotAllowed"),
    ]:
        req = urllib.request.Request(url, data=data, method="POST", headers={"Content-Type": ctype})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=30, context=ssl.create_default_context(cafile=ca))
        assert refused.value.code == status and code(refused.value.read()) == want
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)
    posts = [l for l in log_lines(edge) if l["method"] == "POST"]
    assert len(posts) == len(cases) + 5
    assert all(l["upstream_reused"] is None for l in posts), "a refused form reached the origin"


def test_the_policys_size_range_binds_the_origin(edge, pki, bucket, s3):
    ca = pki["ca"]
    f = form(edge, ca, bucket, "sized.bin", conditions=[["content-length-range", 10, 100]])
    for size, want in [(9, "EntityTooSmall"), (101, "EntityTooLarge")]:
        status, body, _ = post(f["url"], ca, f["fields"], "s", b"x" * size)
        assert status == 400 and code(body) == want, body
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)
    assert post(f["url"], ca, f["fields"], "s", b"x" * 100)[0] == 204
    assert s3.head_object(Bucket=bucket, Key="sized.bin")["ContentLength"] == 100


def test_the_forwarded_form_carries_no_client_secret(edge, pki, bucket):
    """The edge's form is signed by the gateway's credentials: the client's signature, policy
    and credential never leave the edge, and none appears in its log."""
    ca = pki["ca"]
    f = form(edge, ca, bucket, "logged.txt")
    assert post(f["url"], ca, f["fields"], "l", b"log me")[0] == 204
    log = json.dumps(log_lines(edge)) + edge.stderr()
    for secret in (f["fields"]["x-amz-signature"], f["fields"]["policy"], ADMIN[1]):
        assert secret not in log
