"""`--max-bandwidth` and the profile's `s3.max_bandwidth`: transfers over plain HTTP and TLS take
at least as long as the cap allows (on loopback they would take a few milliseconds without
it), arrive whole, and bad rates fail before any request. How close to the cap they run, against
the AWS CLI's own `max_bandwidth`, is in docs/BENCHMARKS.md (scripts/bench-bandwidth.sh)."""

import os
import time
import uuid

import pytest

from support import run_cli

MiB = 1 << 20


def env_for(server, tmp_path, profile=""):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    config = tmp_path / "config"
    config.write_text("[default]\n" + profile)
    env.update(HOME="/nonexistent", AWS_CONFIG_FILE=str(config), AWS_ACCESS_KEY_ID=server["access_key"],
               AWS_SECRET_ACCESS_KEY=server["secret_key"], AWS_REGION=server["region"])
    return env


def timed(bin_path, *args, env):
    started = time.monotonic()
    run_cli(bin_path, *args, env=env)
    return time.monotonic() - started


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
def test_uploads_and_downloads_keep_under_the_cap(slipstream_bin, server, tmp_path, tls):
    endpoint = os.environ["SLIPSTREAM_TEST_TLS_ENDPOINT"] if tls else server["endpoint"]
    env = env_for(server, tmp_path)
    if tls:
        env["AWS_CA_BUNDLE"] = os.environ["SLIPSTREAM_TEST_CA"]
    at = ["--endpoint-url", endpoint, "--path-style"]
    bucket = f"bw-{uuid.uuid4().hex[:16]}"
    run_cli(slipstream_bin, "mb", f"s3://{bucket}", *at, env=env)
    data = os.urandom(6 * MiB)
    src = tmp_path / "six.bin"
    src.write_bytes(data)
    cap = ["--max-bandwidth", "2MB/s"]
    # 6 MiB at 2 MiB/s is 3 s; a tenth of a second may be saved up and one read overdrawn.
    up = timed(slipstream_bin, "cp", str(src), f"s3://{bucket}/six.bin", *at, *cap, "--part-size", "5MiB", env=env)
    assert up >= 2.5, up
    down = timed(slipstream_bin, "cp", f"s3://{bucket}/six.bin", str(tmp_path / "back.bin"), *at, *cap, env=env)
    assert down >= 2.5, down
    assert (tmp_path / "back.bin").read_bytes() == data


def test_the_profile_sets_the_cap_and_the_flag_beats_it(slipstream_bin, server, tmp_path):
    at = ["--endpoint-url", server["endpoint"], "--path-style"]
    env = env_for(server, tmp_path, "s3 =\n  max_bandwidth = 1MB/s\n")
    bucket = f"bw-{uuid.uuid4().hex[:16]}"
    run_cli(slipstream_bin, "mb", f"s3://{bucket}", *at, env=env)
    data = os.urandom(3 * MiB)
    src = tmp_path / "three.bin"
    src.write_bytes(data)
    assert timed(slipstream_bin, "cp", str(src), f"s3://{bucket}/a", *at, env=env) >= 2.4
    # The flag beats the profile: 3 MiB at 100 MiB/s is well under a second of cap.
    quick = timed(slipstream_bin, "cp", f"s3://{bucket}/a", "-", *at, "--max-bandwidth", "100MB/s", env=env)
    assert quick < 2.4, quick


def test_rates_that_cannot_be_used_fail_before_any_request(slipstream_bin, server, tmp_path):
    at = ["--endpoint-url", "http://127.0.0.1:9", "--path-style"]
    env = env_for(server, tmp_path)
    for rate, message in [("50MB", b"not a rate"), ("1.5MB/s", b"not a rate"), ("1KB/s", b"below the least")]:
        failed = run_cli(slipstream_bin, "cp", "s3://b/k", "-", *at, "--max-bandwidth", rate, env=env, check=False)
        assert failed.returncode == 2 and message in failed.stderr, (rate, failed.stderr)
    env = env_for(server, tmp_path, "s3 =\n  max_bandwidth = fast\n")
    failed = run_cli(slipstream_bin, "ls", "s3://b/", *at, env=env, check=False)
    assert failed.returncode == 2 and b"s3.max_bandwidth in" in failed.stderr, failed.stderr
    # `run` takes the cap for all its lines, not per line.
    failed = run_cli(slipstream_bin, "run", *at, stdin=b"cp s3://b/k - --max-bandwidth 1MB/s\n", env=env_for(server, tmp_path), check=False)
    assert failed.returncode != 0 and b"belong to `run`" in failed.stderr, failed.stderr
