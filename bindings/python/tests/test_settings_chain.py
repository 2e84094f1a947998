"""slipstream.Client and Presigner without region or credentials: found where boto3 and the AWS CLI find them
(the environment, then the profile in the shared files), against the local versitygw. Each test
points AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE at files of its own, so the machine's
~/.aws is never read."""

import pickle
import urllib.request
import uuid

import pytest

import slipstream
from support import recording_server

# Everything the chain reads that the test server's environment may have set.
CHAIN_VARS = [
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
    "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_CA_BUNDLE",
    "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_SIGV4A_SIGNING_REGION_SET", "AWS_MAX_ATTEMPTS",
]


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No AWS_* setting but empty shared files, and no instance metadata to wait for."""
    for name in CHAIN_VARS:
        monkeypatch.delenv(name, raising=False)
    config, credentials = tmp_path / "config", tmp_path / "credentials"
    config.write_text("")
    credentials.write_text("")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return config, credentials


def round_trip(client, s3):
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    client.put_bytes(bucket, "k", b"found by the chain")
    assert client.get_bytes(bucket, "k") == b"found by the chain"


def test_everything_from_the_environment(server, s3, clean_env, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", server["access_key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", server["secret_key"])
    monkeypatch.setenv("AWS_REGION", server["region"])
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", server["endpoint"])
    round_trip(slipstream.Client(), s3)


def edge_profile(clean_env, server):
    """A profile named "edge" in the test's own shared files, for the local server."""
    config, credentials = clean_env
    credentials.write_text(f"[edge]\naws_access_key_id = {server['access_key']}\n"
                           f"aws_secret_access_key = {server['secret_key']}\n")
    config.write_text(f"[profile edge]\nregion = {server['region']}\nendpoint_url = {server['endpoint']}\n"
                      "s3 =\n  addressing_style = path\n")


def test_a_profile_by_name_or_by_aws_profile(server, s3, clean_env, monkeypatch):
    edge_profile(clean_env, server)
    round_trip(slipstream.Client(profile="edge"), s3)
    monkeypatch.setenv("AWS_PROFILE", "edge")
    round_trip(slipstream.Client(), s3)
    # A profile named in code wins over keys in the environment, as in boto3's Session(profile_name=).
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDNOTTHEONE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    round_trip(slipstream.Client(profile="edge"), s3)
    with pytest.raises(slipstream.S3Error, match="(?i)access key"):
        round_trip(slipstream.Client(), s3)  # AWS_PROFILE yields to the environment's keys


def test_credentials_given_in_code_with_the_rest_from_the_environment(server, s3, clean_env, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDNOTTHEONE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", server["region"])
    monkeypatch.setenv("AWS_ENDPOINT_URL", server["endpoint"])
    given = slipstream.Credentials(server["access_key"], server["secret_key"])
    round_trip(slipstream.Client(credentials=given), s3)
    # Arguments win over the environment: a region the server does not serve is refused.
    wrong_region = "ap-southeast-7" if server["region"] != "ap-southeast-7" else "eu-north-1"
    with pytest.raises(slipstream.S3Error):
        round_trip(slipstream.Client(credentials=given, region=wrong_region), s3)


def test_no_credentials_anywhere_says_where_it_looked(clean_env):
    with pytest.raises(ValueError, match="no AWS credentials found") as e:
        slipstream.Client(region="us-east-1")
    assert "AWS_ACCESS_KEY_ID" in str(e.value) and "profile" in str(e.value)


def test_a_profile_that_is_not_there_is_named(clean_env):
    with pytest.raises(ValueError, match='"nowhere"'):
        slipstream.Client(profile="nowhere")


def test_bad_settings_are_value_errors(clean_env, server):
    config, _ = clean_env
    config.write_text("[default]\ns3 =\n  addressing_style = sideways\n")
    given = slipstream.Credentials(server["access_key"], server["secret_key"])
    with pytest.raises(ValueError, match="addressing_style"):
        slipstream.Client(credentials=given)
    with pytest.raises(ValueError, match="addressing"):
        slipstream.Client(credentials=given, addressing="sideways")


def fetch(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read()


def test_a_presigner_from_the_environment_and_its_pickle(server, s3, clean_env, monkeypatch):
    edge_profile(clean_env, server)
    config, credentials = clean_env
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="a b.txt", Body=b"presigned from the profile")
    p = slipstream.Presigner(bucket, profile="edge")
    assert p.region == server["region"]
    assert fetch(p.presign_get("a b.txt")) == b"presigned from the profile"  # versitygw verifies it
    # The pickle holds what was found: it presigns where the profile is not there.
    carried = pickle.dumps(p)
    config.write_text("")
    credentials.write_text("")
    assert fetch(pickle.loads(carried).presign_get("a b.txt")) == b"presigned from the profile"
    # And the environment alone, as a container gets it.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", server["access_key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", server["secret_key"])
    monkeypatch.setenv("AWS_REGION", server["region"])
    monkeypatch.setenv("AWS_ENDPOINT_URL", server["endpoint"])
    assert fetch(slipstream.Presigner(bucket, addressing="path").presign_get("a b.txt")) == \
        b"presigned from the profile"


def test_a_presigner_refuses_credentials_that_are_refreshed(clean_env, monkeypatch):
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:1/creds")
    with pytest.raises(ValueError, match="refreshed.*from_boto3"):
        slipstream.Presigner("b", region="us-east-1")
    # The Client follows them (asked at its first request).
    slipstream.Client(region="us-east-1")


def test_no_credentials_for_a_presigner_says_where_it_looked(clean_env):
    with pytest.raises(ValueError, match="no AWS credentials found"):
        slipstream.Presigner("b")


def test_attempts_per_request_from_aws_max_attempts_then_the_profile(server, clean_env, monkeypatch):
    """A 503 SlowDown is tried as often as boto3 would: AWS_MAX_ATTEMPTS, else the profile's
    max_attempts, else 5 (a local recorder answers every request so, and counts them)."""
    config, _ = clean_env
    slow_down = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
    creds = slipstream.Credentials(server["access_key"], server["secret_key"])
    for env_value, profile, attempts in [(None, None, 5), ("2", "max_attempts = 4", 2), (None, "max_attempts = 3", 3)]:
        if env_value:
            monkeypatch.setenv("AWS_MAX_ATTEMPTS", env_value)
        else:
            monkeypatch.delenv("AWS_MAX_ATTEMPTS", raising=False)
        config.write_text(f"[default]\n{profile}\n" if profile else "")
        with recording_server(slow_down, {"Content-Type": "application/xml"}, status=503) as (endpoint, requests):
            c = slipstream.Client(region="us-east-1", endpoint_url=endpoint, addressing="path", credentials=creds)
            with pytest.raises(slipstream.S3Error, match="SlowDown"):
                c.get_bytes("some-bucket", "k", range=(0, 10))
        assert len(requests) == attempts, (env_value, profile, [r["method"] for r in requests])
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "three")
    with pytest.raises(ValueError, match="AWS_MAX_ATTEMPTS"):
        slipstream.Client(region="us-east-1", credentials=creds)


def test_attempts_and_timeouts_given_in_code_or_carried_from_boto3(server, clean_env, monkeypatch):
    """`max_attempts=` beats AWS_MAX_ATTEMPTS; `from_boto3` carries the boto3 client's retries
    (total_max_attempts, the legacy retry count, a mode's default) and a read timeout that makes a
    silent server's attempt give up in time to be retried."""
    import socket
    import time

    import boto3
    from botocore.config import Config

    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "4")
    slow_down = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
    creds = slipstream.Credentials(server["access_key"], server["secret_key"])
    with recording_server(slow_down, {"Content-Type": "application/xml"}, status=503) as (endpoint, requests):
        def boto3_client(**config):
            return boto3.client("s3", region_name="us-east-1", endpoint_url=endpoint, aws_access_key_id=server["access_key"],
                                aws_secret_access_key=server["secret_key"], config=Config(s3={"addressing_style": "path"}, **config))

        for client, attempts in [
            (slipstream.Client(region="us-east-1", endpoint_url=endpoint, addressing="path", credentials=creds, max_attempts=2), 2),
            (slipstream.Client.from_boto3(boto3_client(retries={"total_max_attempts": 3})), 3),
            (slipstream.Client.from_boto3(boto3_client(retries={"max_attempts": 1})), 2),  # one retry
            (slipstream.Client.from_boto3(boto3_client(retries={"mode": "standard"})), 4),  # AWS_MAX_ATTEMPTS, as boto3
        ]:
            requests.clear()
            with pytest.raises(slipstream.S3Error, match="SlowDown"):
                client.get_bytes("some-bucket", "k", range=(0, 10))
            assert len(requests) == attempts, attempts
    monkeypatch.delenv("AWS_MAX_ATTEMPTS")
    with recording_server(slow_down, {"Content-Type": "application/xml"}, status=503) as (endpoint, requests):
        c = slipstream.Client.from_boto3(boto3.client("s3", region_name="us-east-1", endpoint_url=endpoint, aws_access_key_id="a",
                                                      aws_secret_access_key="b", config=Config(retries={"mode": "standard"})))
        with pytest.raises(slipstream.S3Error):
            c.get_bytes("some-bucket", "k", range=(0, 10))
        assert len(requests) == 3  # standard mode's default
    # A server that takes the request and never answers: each attempt gives up after the read
    # timeout (0.3 s, not the default 60 s), and all of them are made.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    try:
        endpoint = "http://127.0.0.1:%d" % silent.getsockname()[1]
        c = slipstream.Client(region="us-east-1", endpoint_url=endpoint, addressing="path", credentials=creds,
                              max_attempts=2, read_timeout=0.3, stall_timeout=None)
        started = time.monotonic()
        with pytest.raises(OSError):
            c.get_bytes("some-bucket", "k", range=(0, 10))
        # Two attempts of 0.3 s and a backoff; the default timeout would take two minutes.
        assert time.monotonic() - started < 30
    finally:
        silent.close()
    for bad in [{"max_attempts": 0}, {"read_timeout": 0}, {"connect_timeout": -1.0}]:
        with pytest.raises(ValueError):
            slipstream.Client(region="us-east-1", credentials=creds, **bad)
