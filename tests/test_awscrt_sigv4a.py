"""SigV4A cross-checked with an independent implementation: awscrt (the AWS Common Runtime).

awscrt signs S3 presigned URLs for awkward keys; our verifier must accept every one. ECDSA
verifies over the string to sign we compute, with the public key we derive, so acceptance means
both equal awscrt's. Our URL for the same key and second must equal awscrt's in every parameter
but the (random) signature. awscrt's Python API has no verifier, so our signatures are checked
by our verifier and by the AWS suite's public key (tests in crates/sign).
"""

import datetime
import os
import random

from awscrt.auth import (
    AwsCredentialsProvider,
    AwsSignatureType,
    AwsSignedBodyValue,
    AwsSigningAlgorithm,
    AwsSigningConfig,
    aws_sign_request,
)
from awscrt.http import HttpHeaders, HttpRequest

from support import run_cli
from test_differential_botocore import ACCESS_KEY, SECRET_KEY, random_key

HOST = "examplebucket.s3.amazonaws.com"
AT = datetime.datetime(2026, 3, 14, 15, 9, 26, tzinfo=datetime.timezone.utc)
AT_TEXT = "20260314T150926Z"


def encode_path(key: str) -> str:
    safe = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~/")
    return "".join(chr(b) if b in safe else f"%{b:02X}" for b in key.encode())


def awscrt_url(key: str, region_set: str, token=None) -> str:
    provider = AwsCredentialsProvider.new_static(ACCESS_KEY, SECRET_KEY, token)
    config = AwsSigningConfig(
        algorithm=AwsSigningAlgorithm.V4_ASYMMETRIC,
        signature_type=AwsSignatureType.HTTP_REQUEST_QUERY_PARAMS,
        credentials_provider=provider,
        region=region_set,
        service="s3",
        date=AT,
        use_double_uri_encode=False,
        should_normalize_uri_path=False,
        signed_body_value=AwsSignedBodyValue.UNSIGNED_PAYLOAD,
        expiration_in_seconds=3600,
    )
    request = HttpRequest("GET", "/" + encode_path(key), HttpHeaders([("host", HOST)]))
    signed = aws_sign_request(request, config).result(timeout=10)
    return f"https://{HOST}{signed.path}"


def env(token=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    e.update(AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY, HOME="/nonexistent")
    if token:
        e["AWS_SESSION_TOKEN"] = token
    return e


def params(url: str) -> set[str]:
    return {p for p in url.split("?", 1)[1].split("&") if not p.startswith("X-Amz-Signature=")}


def test_awscrt_urls_verify_and_match_ours(slipstream_bin):
    rng = random.Random(3)
    keys = [random_key(rng) for _ in range(60)] + ["a b/c+d", "ሴ/😀", "a//b/./c/../d/"]
    for i, key in enumerate(keys):
        region_set = ["*", "us-east-1", "us-east-1,eu-west-1", "us-*"][i % 4]
        token = "SESSION/TOKEN+=" if i % 3 == 0 else None
        theirs = awscrt_url(key, region_set, token)
        check = run_cli(slipstream_bin, "verify-url", "--at", AT_TEXT, "--region", "us-east-1", theirs, env=env(token), check=False)
        assert check.returncode == 0, (key, theirs, check.stdout.decode())
        ours = run_cli(slipstream_bin, "presign", "--at", AT_TEXT, "--bucket", "examplebucket", "--region-set", region_set, "--", key,
                       env=env(token)).stdout.decode().strip()
        assert ours.split("?")[0] == theirs.split("?")[0], key
        assert params(ours) == params(theirs), (key, ours, theirs)
        # Our own URL passes our verifier too, and a changed signature does not.
        assert run_cli(slipstream_bin, "verify-url", "--at", AT_TEXT, "--region", "us-east-1", ours, env=env(token), check=False).returncode == 0
        # The last hex digit changed (ECDSA signatures are random: "00" was already there 1 time in 256).
        tampered = theirs[:-1] + ("1" if theirs[-1] != "1" else "2")
        assert run_cli(slipstream_bin, "verify-url", "--at", AT_TEXT, "--region", "us-east-1", tampered, env=env(token), check=False).returncode == 1
