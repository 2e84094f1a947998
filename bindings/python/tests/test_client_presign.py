"""`Client.generate_presigned_url`, `generate_presigned_post` and `presigner`: byte-identical to
a boto3 client's calls, signed with the client's own (refreshed) credentials, for the endpoint
and addressing style its requests go to, and accepted by a real server."""

import datetime
import time
from unittest import mock

import boto3
import pytest
from botocore import UNSIGNED
from botocore.config import Config
from test_boto3 import OPERATIONS, client, same_second
from test_presign_post import post
from test_presign_server import http
from test_differential_botocore import ACCESS_KEY, SECRET_KEY, TOKEN

from slipstream import Client, Credentials, S3Error, generate_presigned_url

SETUPS = [{}, {"region": "eu-west-1", "token": TOKEN}, {"endpoint_url": "http://127.0.0.1:7070"}, {"config": {"s3": {"addressing_style": "path"}}}]


def same_client(setup):
    """A boto3 client and a `Client` made with the same settings, both ways: `from_boto3`
    (credentials followed as botocore refreshes them) and the constructor (fixed ones)."""
    c = client(**setup)
    style = setup.get("config", {}).get("s3", {}).get("addressing_style", "auto")
    made = Client(region=setup.get("region", "us-east-1"), credentials=Credentials(ACCESS_KEY, SECRET_KEY, setup.get("token")),
                  endpoint_url=setup.get("endpoint_url"), addressing=style)
    return c, [Client.from_boto3(c), made]


@pytest.mark.parametrize("method,params", OPERATIONS)
@pytest.mark.parametrize("setup", SETUPS)
def test_urls_equal_boto3s(method, params, setup):
    c, ours = same_client(setup)
    for mine in ours:
        got, want = same_second(
            lambda: mine.generate_presigned_url(method, Params=params, ExpiresIn=900),
            lambda: c.generate_presigned_url(method, Params=params, ExpiresIn=900),
        )
        assert got == want


def test_http_method_replaces_the_operations():
    c, ours = same_client({"region": "eu-west-1"})
    params = {"Bucket": "my-bucket", "Key": "k", "VersionId": "v1"}
    for make in [lambda: ours[1].generate_presigned_url("get_object", Params=params, HttpMethod="HEAD"),
                 lambda: generate_presigned_url(c, "get_object", Params=params, HttpMethod="HEAD")]:
        got, want = same_second(make, lambda: c.generate_presigned_url("get_object", Params=params, HttpMethod="HEAD"))
        assert got == want


@pytest.mark.parametrize("setup", SETUPS)
def test_posts_equal_boto3s(setup):
    c, ours = same_client(setup)
    rules = {"Fields": {"acl": "private"}, "Conditions": [{"acl": "private"}, ["content-length-range", 1, 99]]}
    for mine in ours:
        got = mine.generate_presigned_post("forms", "a/b c.txt", ExpiresIn=900, **rules)
        now = datetime.datetime.strptime(got["fields"]["x-amz-date"], "%Y%m%dT%H%M%SZ")
        with mock.patch("botocore.signers.get_current_datetime", return_value=now), mock.patch("botocore.auth.get_current_datetime", return_value=now):
            want = c.generate_presigned_post("forms", "a/b c.txt", Fields=dict(rules["Fields"]), Conditions=list(rules["Conditions"]), ExpiresIn=900)
        assert got == want
        assert list(got["fields"]) == list(want["fields"])


def test_refreshed_credentials_sign_the_next_url():
    issued = iter(["FIRSTKEY", "SECONDKEY", "THIRDKEY"])

    def credentials():
        # Four minutes left: within the client's five-minute margin, so due again at every call.
        return Credentials(next(issued), "secret"), time.time() + 240

    c = Client(region="eu-west-1", credentials=credentials)
    p = c.presigner("my-bucket")
    assert "FIRSTKEY%2F" in p.presign_get("k")
    assert "SECONDKEY%2F" in c.generate_presigned_url("get_object", Params={"Bucket": "my-bucket", "Key": "k"})
    assert "THIRDKEY/" in c.generate_presigned_post("my-bucket", "k")["fields"]["x-amz-credential"]


def test_fixed_credentials_keep_one_presigner_per_bucket():
    c = Client(region="eu-west-1", credentials=Credentials("AKID", "secret"))
    assert c._presigner("a") is c._presigner("a")
    assert c._presigner("a") is not c._presigner("b")
    p = c.presigner("b")
    assert (p.bucket, p.region) == ("b", "eu-west-1")
    assert len(p.presign_many(["x", "y"])) == 2


def test_sigv4a_clients_presign_with_sigv4a():
    c = Client(region="eu-west-1", credentials=Credentials("AKID", "secret"), signature="v4a", region_set="eu-*")
    url = c.generate_presigned_url("get_object", Params={"Bucket": "my-bucket", "Key": "k"})
    assert "X-Amz-Algorithm=AWS4-ECDSA-P256-SHA256&" in url and "X-Amz-Region-Set=eu-%2A&" in url, url


@pytest.mark.parametrize("method,params", OPERATIONS)
@pytest.mark.parametrize("setup", [{}, {"region": "eu-west-1"}, {"endpoint_url": "http://127.0.0.1:7070"}, {"addressing": "path"}])
def test_an_unsigned_client_gives_plain_urls_as_boto3s(method, params, setup):
    """boto3 with ``signature_version=UNSIGNED`` hands out the object's URL without a signature
    (a public object's link); so does a ``signature="unsigned"`` Client, made either way."""
    region, endpoint, style = setup.get("region", "us-east-1"), setup.get("endpoint_url"), setup.get("addressing", "auto")
    s3_config = {"addressing_style": style} if "addressing" in setup else None
    theirs = boto3.client("s3", region_name=region, endpoint_url=endpoint, config=Config(signature_version=UNSIGNED, s3=s3_config))
    for ours in [Client(region=region, signature="unsigned", endpoint_url=endpoint, addressing=style), Client.from_boto3(theirs)]:
        assert ours.generate_presigned_url(method, Params=params) == theirs.generate_presigned_url(method, Params=params)


def test_bad_calls_are_clear_errors():
    unsigned = Client(region="eu-west-1", signature="unsigned")
    with pytest.raises(ValueError, match="unsigned"):
        unsigned.generate_presigned_post("b", "k")
    with pytest.raises(ValueError, match="unsigned"):
        unsigned.presigner("b").presign_get("k")
    c = Client(region="eu-west-1", credentials=Credentials("AKID", "secret"))
    with pytest.raises(ValueError, match="list_objects_v2"):
        c.generate_presigned_url("list_objects_v2", Params={"Bucket": "b"})
    with pytest.raises(ValueError, match="604800"):
        c.generate_presigned_url("get_object", Params={"Bucket": "b", "Key": "k"}, ExpiresIn=604801)
    with pytest.raises(ValueError, match="bucket"):
        c.presigner("not a bucket").presign_get("k")


def test_urls_of_a_client_work_on_its_server(server, bucket, s3):
    c = Client(region=server["region"], credentials=Credentials(server["access_key"], server["secret_key"]), endpoint_url=server["endpoint"])
    put = c.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "a b/ü.txt", "ContentType": "text/plain"})
    assert http("PUT", put, data=b"hello", headers={"Content-Type": "text/plain"})[0] == 200
    get = c.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "a b/ü.txt"}, ExpiresIn=60)
    assert http("GET", get) == (200, b"hello")
    assert http("GET", get.replace("X-Amz-Expires=60", "X-Amz-Expires=61"))[0] == 403
    form = c.generate_presigned_post(bucket, "form.txt", Conditions=[["content-length-range", 1, 64]])
    status, body = post(form, {}, "form.txt", b"from a form")
    assert status in (200, 204), body
    assert c.get_bytes(bucket, "form.txt") == b"from a form"
    assert http("DELETE", c.presigner(bucket).presign("DELETE", "form.txt"))[0] == 204
    with pytest.raises(S3Error):
        c.head(bucket, "form.txt")
