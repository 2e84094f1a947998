"""The boto3 bridges: `generate_presigned_url` is byte-identical to boto3's, and `from_boto3`
follows the client's configuration and refreshing credentials."""

import datetime

import boto3
import pytest
from botocore.config import Config
from botocore.credentials import RefreshableCredentials
from test_differential_botocore import ACCESS_KEY, SECRET_KEY, TOKEN

from slipstream import Presigner, generate_presigned_url

OPERATIONS = [
    ("get_object", {"Bucket": "my-bucket", "Key": "a b/ü+?#"}),
    ("get_object", {"Bucket": "my-bucket", "Key": "k", "VersionId": "v/1", "ResponseContentType": "text/plain", "ResponseContentDisposition": "attachment"}),
    ("get_object", {"Bucket": "my-bucket", "Key": "k", "ResponseContentType": "text/plain", "VersionId": "v/1"}),
    ("head_object", {"Bucket": "my-bucket", "Key": "a//b/./c"}),
    ("put_object", {"Bucket": "my-bucket", "Key": "up/cat.png", "ContentType": "image/png"}),
    ("delete_object", {"Bucket": "My_Legacy.Bucket", "Key": "k"}),
    ("upload_part", {"Bucket": "my-bucket", "Key": "big", "UploadId": "VXBsb2Fk+/=", "PartNumber": 3}),
]


def client(region="us-east-1", token=None, **kw):
    return boto3.client("s3", region_name=region, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY, aws_session_token=token,
                        config=Config(signature_version="s3v4", **kw.pop("config", {})), **kw)


def same_second(make_a, make_b):
    """Both URLs signed in the same second (the clock is read by each), retrying a boundary."""
    for _ in range(5):
        a, b = make_a(), make_b()
        date = lambda u: u.split("X-Amz-Date=")[1][:16]  # noqa: E731
        if date(a) == date(b):
            return a, b
    raise AssertionError("could not sign twice within one second")


@pytest.mark.parametrize("method,params", OPERATIONS)
@pytest.mark.parametrize("setup", [{}, {"region": "eu-west-1", "token": TOKEN}, {"endpoint_url": "http://127.0.0.1:7070"}, {"config": {"s3": {"addressing_style": "path"}}}])
def test_generate_presigned_url_equals_boto3(method, params, setup):
    c = client(**setup)
    ours, theirs = same_second(
        lambda: generate_presigned_url(c, method, Params=params, ExpiresIn=900),
        lambda: c.generate_presigned_url(method, Params=params, ExpiresIn=900),
    )
    assert ours == theirs


def test_unsupported_calls_are_refused():
    c = client()
    with pytest.raises(ValueError, match="list_objects_v2"):
        generate_presigned_url(c, "list_objects_v2", Params={"Bucket": "b"})
    with pytest.raises(ValueError, match="SSECustomerAlgorithm"):
        generate_presigned_url(c, "get_object", Params={"Bucket": "b", "Key": "k", "SSECustomerAlgorithm": "AES256"})
    with pytest.raises(ValueError, match="Key"):
        generate_presigned_url(c, "get_object", Params={"Bucket": "b"})


def test_from_boto3_follows_refreshing_credentials():
    c = client("eu-west-1")
    issued = iter(["FIRSTKEY", "SECONDKEY"])

    def refresh():
        expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
        return {"access_key": next(issued), "secret_key": "s", "token": "t", "expiry_time": expiry.isoformat()}

    creds = RefreshableCredentials.create_from_metadata(refresh(), refresh, "test")
    c._request_signer._credentials = creds
    p = Presigner.from_boto3(c, "my-bucket")
    first = p.presign_get("k")
    assert "FIRSTKEY%2F" in first and "eu-west-1" in first and first.startswith("https://my-bucket.s3.amazonaws.com/")
    # The credentials expire (as an assumed role's do): botocore refreshes them on next use, and
    # the next presign must sign with the new ones.
    creds._expiry_time = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=1)
    second = p.presign_get("k")
    assert "SECONDKEY%2F" in second, second
    assert len(p.presign_many(["a", "b"])) == 2


def test_from_boto3_uses_endpoint_and_addressing():
    c = client(endpoint_url="http://127.0.0.1:7070", config={"s3": {"addressing_style": "path"}})
    url = Presigner.from_boto3(c, "bkt").presign_put("k", content_type="text/plain")
    assert url.startswith("http://127.0.0.1:7070/bkt/k?") and "content-type%3Bhost" in url
