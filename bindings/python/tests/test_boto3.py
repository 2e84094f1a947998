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
    # SSE-C: the algorithm, the key and its MD5 signed as headers (a str key taken as UTF-8).
    ("get_object", {"Bucket": "my-bucket", "Key": "k", "SSECustomerAlgorithm": "AES256", "SSECustomerKey": b"0123456789abcdef0123456789abcdef"}),
    ("head_object", {"Bucket": "my-bucket", "Key": "k", "SSECustomerAlgorithm": "AES256", "SSECustomerKey": "ü" * 16}),
    ("put_object", {"Bucket": "my-bucket", "Key": "k", "ContentType": "a/b", "SSECustomerAlgorithm": "AES256", "SSECustomerKey": b"\xff" * 32}),
    ("upload_part", {"Bucket": "my-bucket", "Key": "k", "UploadId": "u", "PartNumber": 1, "SSECustomerAlgorithm": "AES256", "SSECustomerKey": b"k" * 32}),
    ("get_object", {"Bucket": "my-bucket", "Key": "k", "SSECustomerAlgorithm": "AES256", "SSECustomerKey": "a2trCg==", "SSECustomerKeyMD5": "given"}),
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
    with pytest.raises(ValueError, match="RequestPayer"):
        generate_presigned_url(c, "get_object", Params={"Bucket": "b", "Key": "k", "RequestPayer": "requester"})
    with pytest.raises(ValueError, match="SSECustomerKey"):
        generate_presigned_url(c, "delete_object", Params={"Bucket": "b", "Key": "k", "SSECustomerKey": b"k" * 32})
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


# boto3 clients on AWS's other endpoints (FIPS, dual-stack, acceleration, us-east-1 regional).
VARIANT_CONFIGS = [
    {"region": "us-east-1", "config": {"use_fips_endpoint": True}},
    {"region": "us-west-2", "config": {"use_fips_endpoint": True, "s3": {"addressing_style": "path"}}},
    {"region": "eu-west-1", "config": {"use_dualstack_endpoint": True}},
    {"region": "us-east-1", "config": {"s3": {"use_dualstack_endpoint": True, "addressing_style": "virtual"}}},
    {"region": "eu-west-1", "config": {"s3": {"use_accelerate_endpoint": True}}},
    {"region": "us-east-1", "config": {"s3": {"use_accelerate_endpoint": True, "use_dualstack_endpoint": True}}},
    {"region": "us-east-1", "config": {"s3": {"us_east_1_regional_endpoint": "regional"}}},
    {"region": "us-gov-west-1-fips"},
]


@pytest.mark.parametrize("setup", VARIANT_CONFIGS, ids=str)
def test_boto3_clients_on_other_endpoints_presign_the_same_urls(setup):
    c = client(setup["region"], **{k: v for k, v in setup.items() if k != "region"})
    params = {"Bucket": "my-bucket", "Key": "a b/ü+?#"}
    ours, theirs = same_second(
        lambda: generate_presigned_url(c, "get_object", Params=params, ExpiresIn=900),
        lambda: c.generate_presigned_url("get_object", Params=params, ExpiresIn=900),
    )
    assert ours == theirs
    p = Presigner.from_boto3(c, "my-bucket")
    ours, theirs = same_second(
        lambda: p.presign_get("k", expires_in=900),
        lambda: c.generate_presigned_url("get_object", Params={"Bucket": "my-bucket", "Key": "k"}, ExpiresIn=900),
    )
    assert ours == theirs


def test_presigners_and_clients_take_the_endpoint_settings_as_arguments():
    from slipstream import Client, Credentials

    creds = Credentials(ACCESS_KEY, SECRET_KEY)
    p = Presigner("my-bucket", region="us-east-1", credentials=creds, use_fips_endpoint=True, use_dualstack_endpoint=True)
    assert p.presign_get("k").startswith("https://my-bucket.s3-fips.dualstack.us-east-1.amazonaws.com/k?")
    p = Presigner("my-bucket", region="us-east-1", credentials=creds, us_east_1_regional_endpoint="regional")
    assert p.presign_get("k").startswith("https://my-bucket.s3.us-east-1.amazonaws.com/k?")
    c = Client(region="eu-west-1", credentials=creds, use_accelerate_endpoint=True)
    assert c.presigner("my-bucket").presign_get("k").startswith("https://my-bucket.s3-accelerate.amazonaws.com/k?")
    # What AWS has no endpoint for is refused before any request, with the setting to change.
    with pytest.raises(ValueError, match="custom endpoint cannot be combined"):
        Client(credentials=creds, endpoint_url="http://127.0.0.1:9", use_accelerate_endpoint=True)
    with pytest.raises(ValueError, match="cannot be used with FIPS"):
        Presigner("b", credentials=creds, use_accelerate_endpoint=True, use_fips_endpoint=True)
    with pytest.raises(ValueError, match="without dots"):
        Presigner("my.bucket", credentials=creds, use_accelerate_endpoint=True)
    with pytest.raises(ValueError, match="'regional' or 'legacy'"):
        Presigner("b", credentials=creds, us_east_1_regional_endpoint="global")


def test_a_pickled_presigner_keeps_its_endpoint_settings(monkeypatch):
    import pickle

    from slipstream import Credentials

    monkeypatch.setenv("AWS_USE_FIPS_ENDPOINT", "true")
    p = Presigner("my-bucket", region="us-east-1", credentials=Credentials(ACCESS_KEY, SECRET_KEY))
    monkeypatch.delenv("AWS_USE_FIPS_ENDPOINT")
    copy = pickle.loads(pickle.dumps(p))
    assert copy.presign_get("k", at="20260314T150926Z") == p.presign_get("k", at="20260314T150926Z")
    assert "s3-fips.us-east-1" in copy.presign_get("k")
