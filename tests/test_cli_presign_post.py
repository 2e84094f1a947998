"""`slipstream presign --post`: the JSON form equals botocore's generate_presigned_post (fields in
the same order, the same policy and signature), and bad flags are usage errors (exit 2)."""

import json
from unittest import mock

import pytest
from support import run_cli
from test_differential_botocore import AT, AT_TEXT, TOKEN, botocore_client, cli_env


def botocore_post(client, bucket, key, fields, conditions, expires):
    with mock.patch("botocore.signers.get_current_datetime", return_value=AT), mock.patch("botocore.auth.get_current_datetime", return_value=AT):
        return client.generate_presigned_post(bucket, key, Fields=fields, Conditions=conditions, ExpiresIn=expires)


@pytest.mark.parametrize("token", [None, TOKEN])
@pytest.mark.parametrize("style", ["auto", "path"])
def test_the_form_is_botocores(slipstream_bin, style, token):
    args = ["presign", "--post", "--at", AT_TEXT, "--region", "eu-west-1", "--addressing-style", style, "--expires-in", "900"]
    rules = ["--content-type", "image/png", "--field", "acl=private", "--field", "x-amz-meta-who=ü b", "--condition", '["content-length-range", 1, 1048576]', "--condition", '["starts-with", "$key", "up/"]']
    out = run_cli(slipstream_bin, *args, *rules, "s3://forms-bucket/up/${filename}", env=cli_env(token))
    got = json.loads(out.stdout)
    fields = {"Content-Type": "image/png", "acl": "private", "x-amz-meta-who": "ü b"}
    conditions = [{"Content-Type": "image/png"}, {"acl": "private"}, {"x-amz-meta-who": "ü b"}, ["content-length-range", 1, 1048576], ["starts-with", "$key", "up/"]]
    want = botocore_post(botocore_client("eu-west-1", token, style=style), "forms-bucket", "up/${filename}", fields, conditions, 900)
    assert got == want
    assert list(got["fields"]) == list(want["fields"])
    # The same with --bucket and a plain key.
    again = run_cli(slipstream_bin, *args, *rules, "--bucket", "forms-bucket", "up/${filename}", env=cli_env(token))
    assert json.loads(again.stdout) == got


@pytest.mark.parametrize(
    "extra, says",
    [
        (["s3://b/one", "s3://b/two"], "one key"),
        (["--condition", "not json", "s3://b/k"], "is not JSON"),
        (["--condition", '"a string"', "s3://b/k"], "list or object"),
        (["--condition", '["content-length-range", 0, 1.5]', "s3://b/k"], "integers"),
        (["--field", "novalue", "s3://b/k"], "NAME=VALUE"),
        (["--expires-in", "604801", "s3://b/k"], "604800"),
        (["k"], "no --bucket"),
    ],
)
def test_bad_flags_are_usage_errors(slipstream_bin, extra, says):
    out = run_cli(slipstream_bin, "presign", "--post", "--region", "us-east-1", *extra, env=cli_env(), check=False)
    assert out.returncode == 2, out
    assert says in out.stderr.decode()


def test_form_flags_need_post(slipstream_bin):
    out = run_cli(slipstream_bin, "presign", "--field", "acl=private", "s3://b/k", env=cli_env(), check=False)
    assert out.returncode == 2
