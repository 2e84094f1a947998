"""How often the CLI tries a request S3 answers with a retryable error: `AWS_MAX_ATTEMPTS`, else
the profile's `max_attempts`, else 5, the first attempt counted, as the AWS CLI counts them.
The endpoint is a local recorder answering every request 503 SlowDown and counting them (no
signature is checked there; none is under test)."""

import pytest

from support import cli_env, recording_server, run_cli

SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
             b"<Message>Please reduce your request rate.</Message></Error>")


@pytest.mark.parametrize("settings, profile, attempts", [
    ({}, None, 5),
    ({"AWS_MAX_ATTEMPTS": "2"}, None, 2),
    ({"AWS_MAX_ATTEMPTS": "1"}, "max_attempts = 4", 1),
    ({}, "max_attempts = 3", 3),
])
def test_a_slow_down_is_tried_as_often_as_the_settings_say(slipstream_bin, server, tmp_path, settings, profile,
                                                          attempts):
    env = dict(cli_env(server), **settings)
    if profile:
        (tmp_path / "config").write_text(f"[default]\n{profile}\n")
        env["AWS_CONFIG_FILE"] = str(tmp_path / "config")
    with recording_server(SLOW_DOWN, {"Content-Type": "application/xml"}, status=503) as (endpoint, requests):
        failed = run_cli(slipstream_bin, "ls", "s3://some-bucket/", "--endpoint-url", endpoint, "--path-style",
                         env=env, check=False)
    assert failed.returncode == 1, failed.stderr
    assert b"SlowDown" in failed.stderr
    assert len(requests) == attempts, [r["method"] for r in requests]


def test_a_max_attempts_that_is_not_a_count_is_refused_before_any_request(slipstream_bin, server):
    env = dict(cli_env(server), AWS_MAX_ATTEMPTS="0")
    with recording_server() as (endpoint, requests):
        refused = run_cli(slipstream_bin, "ls", "s3://some-bucket/", "--endpoint-url", endpoint, "--path-style",
                          env=env, check=False)
    assert refused.returncode == 2
    assert b'AWS_MAX_ATTEMPTS = "0": give a whole number of attempts, at least 1' in refused.stderr, refused.stderr
    assert requests == []


def test_the_aws_cli_timeout_options_bound_each_attempt(slipstream_bin, server):
    """`--cli-read-timeout` (the AWS CLI's option): a server that takes the request and never
    answers costs each attempt that long, not the default 60 s; `0` and `--cli-connect-timeout`
    are taken as the AWS CLI takes them, and what is not a number of seconds is refused."""
    import socket
    import time

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    try:
        at = ["--endpoint-url", "http://127.0.0.1:%d" % silent.getsockname()[1], "--path-style"]
        env = dict(cli_env(server), AWS_MAX_ATTEMPTS="2")
        started = time.monotonic()
        failed = run_cli(slipstream_bin, "ls", "s3://some-bucket/", *at, "--cli-read-timeout", "1",
                         "--cli-connect-timeout", "0", env=env, check=False)
        assert failed.returncode == 1, failed.stderr
        # Two attempts of 1 s and a backoff; the default would take two minutes.
        assert time.monotonic() - started < 30
    finally:
        silent.close()
    for bad in ["-1", "soon"]:
        refused = run_cli(slipstream_bin, "ls", "s3://b/", *at, f"--cli-read-timeout={bad}", env=env, check=False)
        assert refused.returncode == 2 and b"seconds" in refused.stderr, refused.stderr
