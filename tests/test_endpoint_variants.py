"""Which AWS host requests go to under the endpoint settings (FIPS, dual-stack, Transfer
Acceleration, us-east-1's regional host, a `-fips` region), compared with botocore's on the
same settings. No request leaves the machine: ours are caught at a local proxy's `CONNECT`
(`https_proxy`), which refuses them; botocore's at its `before-send` event, in a subprocess
that sees the same environment and profile.

Presigned URLs under the same settings are compared in test_differential_botocore.py."""

import json
import os
import subprocess
import sys

import pytest

from support import recording_server, run_cli

# botocore's request URLs for GetObject of mybucket/k and for ListBuckets, printed as JSON.
BOTOCORE_ROUTE = """
import json, boto3
s3 = boto3.client("s3")
seen = []
class Caught(Exception):
    pass
def catch(request, **kwargs):
    seen.append(request.url.split("?")[0])
    raise Caught()
s3.meta.events.register("before-send.s3", catch)
for call in (lambda: s3.get_object(Bucket="mybucket", Key="k"), s3.list_buckets):
    try:
        call()
    except Caught:
        pass
print(json.dumps(seen))
"""

SETTINGS = [
    ("us-east-1", {"AWS_USE_FIPS_ENDPOINT": "true"}, ""),
    ("us-west-2", {"AWS_USE_FIPS_ENDPOINT": "TRUE"}, ""),
    ("us-east-1", {"AWS_USE_DUALSTACK_ENDPOINT": "true"}, ""),
    ("eu-west-1", {}, "use_dualstack_endpoint = true\n"),
    ("eu-west-1", {"AWS_USE_DUALSTACK_ENDPOINT": "false"}, "s3 =\n  use_dualstack_endpoint = true\n"),
    ("us-east-1", {"AWS_USE_FIPS_ENDPOINT": "true", "AWS_USE_DUALSTACK_ENDPOINT": "true"}, ""),
    ("us-gov-west-1", {}, "use_fips_endpoint = true\n"),
    ("us-west-2-fips", {}, ""),
    ("us-east-1", {}, "s3 =\n  use_accelerate_endpoint = true\n"),
    ("eu-west-1", {}, "s3 =\n  use_accelerate_endpoint = true\n  use_dualstack_endpoint = true\n"),
    ("us-east-1", {"AWS_S3_US_EAST_1_REGIONAL_ENDPOINT": "regional"}, ""),
    ("us-east-1", {}, "s3_us_east_1_regional_endpoint = regional\n"),
]


def settings_env(tmp_path, region, variables, profile, proxy=None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and "proxy" not in k.lower()}
    config = tmp_path / "config"
    config.write_text("[default]\n" + profile)
    env.update(HOME=str(tmp_path), AWS_CONFIG_FILE=str(config), AWS_ACCESS_KEY_ID="AKIDEXAMPLE",
               AWS_SECRET_ACCESS_KEY="secret", AWS_REGION=region, AWS_DEFAULT_REGION=region, AWS_MAX_ATTEMPTS="1",
               AWS_EC2_METADATA_DISABLED="true", **variables)
    if proxy:
        env["https_proxy"] = proxy
    return env


def hosts(urls) -> list:
    return [u.split("://", 1)[1].split("/", 1)[0] for u in urls]


@pytest.mark.parametrize("region,variables,profile", SETTINGS, ids=lambda v: str(v))
def test_requests_go_to_the_host_botocore_sends_them_to(slipstream_bin, tmp_path, region, variables, profile):
    env = settings_env(tmp_path, region, variables, profile)
    botocore = subprocess.run([sys.executable, "-c", BOTOCORE_ROUTE], env=env, capture_output=True, timeout=60)
    assert botocore.returncode == 0, botocore.stderr.decode()
    want = hosts(json.loads(botocore.stdout))
    with recording_server(status=403) as (proxy, requests):
        env = settings_env(tmp_path, region, variables, profile, proxy)
        for command in (["cp", "s3://mybucket/k", "-"], ["ls"]):
            failed = run_cli(slipstream_bin, *command, env=env, check=False)
            assert failed.returncode != 0 and b"403" in failed.stderr, failed.stderr
        ours = [r["path"].rsplit(":", 1)[0] for r in requests if r["method"] == "CONNECT"]
    assert [ours[0], ours[-1]] == want, (ours, want)


@pytest.mark.parametrize("region,variables,profile,endpoint,message", [
    ("us-east-1", {}, "s3 =\n  use_accelerate_endpoint = true\n", "http://127.0.0.1:9", "custom endpoint cannot be combined"),
    ("us-east-1", {"AWS_USE_FIPS_ENDPOINT": "true"}, "s3 =\n  use_accelerate_endpoint = true\n", None, "cannot be used with FIPS"),
    ("cn-north-1", {"AWS_USE_FIPS_ENDPOINT": "true"}, "", None, "no FIPS endpoints"),
    ("us-east-1", {"AWS_USE_FIPS_ENDPOINT": "1"}, "", None, 'AWS_USE_FIPS_ENDPOINT = "1": give true or false'),
    ("us-east-1", {}, "s3 =\n  use_accelerate_endpoint = yes\n", None, 's3.use_accelerate_endpoint in'),
    ("us-east-1", {"AWS_S3_US_EAST_1_REGIONAL_ENDPOINT": "regionl"}, "", None, "give regional or legacy"),
])
def test_settings_aws_has_no_endpoint_for_fail_before_any_request(slipstream_bin, tmp_path, region, variables, profile, endpoint, message):
    with recording_server(status=403) as (proxy, requests):
        env = settings_env(tmp_path, region, variables, profile, proxy)
        at = ["--endpoint-url", endpoint] if endpoint else []
        for command in (["ls", *at], ["presign", "s3://mybucket/k", *at]):
            failed = run_cli(slipstream_bin, *command, env=env, check=False)
            assert failed.returncode == 2 and message.encode() in failed.stderr, (command, failed.stderr)
        assert requests == []


def test_fips_and_dual_stack_do_not_apply_to_a_custom_endpoint(slipstream_bin, tmp_path):
    # As botocore: a MinIO or versitygw has no FIPS host; the settings are for AWS only.
    env = settings_env(tmp_path, "us-east-1", {"AWS_USE_FIPS_ENDPOINT": "true", "AWS_USE_DUALSTACK_ENDPOINT": "true"}, "")
    url = run_cli(slipstream_bin, "presign", "s3://mybucket/k", "--endpoint-url", "http://127.0.0.1:9", env=env).stdout
    assert url.startswith(b"http://127.0.0.1:9/mybucket/k?"), url


def test_accelerate_refuses_a_bucket_it_cannot_name(slipstream_bin, tmp_path):
    env = settings_env(tmp_path, "us-east-1", {}, "s3 =\n  use_accelerate_endpoint = true\n")
    failed = run_cli(slipstream_bin, "presign", "s3://my.bucket/k", env=env, check=False)
    assert failed.returncode == 2 and b"without dots" in failed.stderr, failed.stderr
