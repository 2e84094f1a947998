"""`--debug`, as the AWS CLI's helps find why a command fails: where requests go (the source of
the credentials, never their values) and a line per attempt with its method, URL, status or
error, time and retry, on standard error; nothing that could sign a request (secret, signature,
SSE-C key) ever printed. Against versitygw, and a port where nothing listens for the retries."""

import os
import re
import uuid

from support import cli_env, run_cli

KEY = "0123456789abcdef0123456789abcdef"


def test_each_attempt_is_a_line_and_no_secret_is_printed(slipstream_bin, server, tmp_path):
    at = ["--endpoint-url", server["endpoint"], "--path-style"]
    env = cli_env(server)
    bucket = f"dbg-{uuid.uuid4().hex[:16]}"
    made = run_cli(slipstream_bin, "mb", f"s3://{bucket}", *at, "--debug", env=env)
    lines = made.stderr.decode().splitlines()
    assert lines[0].startswith("slipstream: debug: credentials from environment variables; region "), lines
    assert lines[0].endswith(f"; endpoint {server['endpoint']}; addressing path; up to 5 attempts a request"), lines
    assert re.fullmatch(rf"slipstream: debug: PUT {server['endpoint']}/{bucket} -> 200 in [0-9.]+ ms "
                        r"\(attempt 1 of 5\)", lines[1]), lines
    src = tmp_path / "twelve"
    src.write_bytes(os.urandom(12 << 20))
    up = run_cli(slipstream_bin, "cp", str(src), f"s3://{bucket}/k", *at, "--part-size", "5MiB", "--debug",
                 "--sse-c", "--sse-c-key", KEY, env=env)
    err = up.stderr.decode()
    attempts = [line for line in err.splitlines() if " -> " in line]
    assert any("POST " in line and "?uploads" in line for line in attempts), err
    assert sum("partNumber=" in line for line in attempts) == 3, err
    for secret in [server["secret_key"], KEY, "Signature=", "Credential=", "authorization"]:
        assert secret not in err, secret
    quiet = run_cli(slipstream_bin, "cp", f"s3://{bucket}/k", "-", *at, "--sse-c", "--sse-c-key", KEY, env=env)
    assert b"debug" not in quiet.stderr


def test_a_retried_request_says_when_it_goes_again(slipstream_bin, server):
    env = dict(cli_env(server), AWS_MAX_ATTEMPTS="2")
    failed = run_cli(slipstream_bin, "ls", "s3://b/", "--endpoint-url", "http://127.0.0.1:9", "--debug",
                     env=env, check=False)
    assert failed.returncode == 1
    lines = [line for line in failed.stderr.decode().splitlines() if " -> " in line]
    assert len(lines) == 2, lines
    assert "(attempt 1 of 2); again in " in lines[0] and "refused" in lines[0], lines
    assert lines[1].endswith("(attempt 2 of 2)"), lines
