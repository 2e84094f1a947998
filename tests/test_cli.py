"""`slipstream presign` as a user meets it: inputs, configuration, errors and exit codes."""

import os
import subprocess

from support import run_cli

AT = "20150830T123600Z"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"


def env(**extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    e.update(HOME="/nonexistent", AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY=SECRET)
    e.update(extra)
    return {k: v for k, v in e.items() if v is not None}


def presign(bin_path, *args, stdin=b"", **env_extra):
    return run_cli(bin_path, "presign", "--at", AT, *args, stdin=stdin, env=env(**env_extra), check=False)


def test_arguments_stdin_and_dash_agree(slipstream_bin):
    a = presign(slipstream_bin, "-b", "bkt", "x", "y z")
    b = presign(slipstream_bin, "-b", "bkt", stdin=b"x\ny z\n")
    c = presign(slipstream_bin, "-b", "bkt", "-", stdin=b"x\r\ny z")
    assert a.returncode == b.returncode == c.returncode == 0
    assert a.stdout == b.stdout == c.stdout
    assert a.stdout.count(b"\n") == 2


def test_order_is_kept_across_batches_and_threads(slipstream_bin):
    keys = [f"k{i}" for i in range(70_000)]
    out = presign(slipstream_bin, "-b", "bkt", "--threads", "2", stdin="\n".join(keys).encode())
    assert out.returncode == 0
    lines = out.stdout.decode().splitlines()
    assert len(lines) == len(keys)
    assert all(line.startswith(f"https://bkt.s3.amazonaws.com/{k}?") for k, line in zip(keys, lines))


def test_bad_line_stops_with_its_number_after_writing_the_lines_before(slipstream_bin):
    out = presign(slipstream_bin, "-b", "bkt", stdin=b"good\n\xff\xfe\nnever\n")
    assert out.returncode == 1
    assert out.stdout.count(b"\n") == 1
    assert b"line 2 is not valid UTF-8" in out.stderr
    out = presign(slipstream_bin, "-b", "bkt", stdin=b"a\n\nb\n")
    assert out.returncode == 1 and b"line 2" in out.stderr and b"empty" in out.stderr
    assert out.stdout.count(b"\n") == 1


def test_expiry_limits(slipstream_bin):
    assert presign(slipstream_bin, "-b", "bkt", "--expires-in", "604800", "k").returncode == 0
    for bad in ["0", "604801"]:
        out = presign(slipstream_bin, "-b", "bkt", "--expires-in", bad, "k")
        assert out.returncode == 2 and b"604800" in out.stderr and out.stdout == b""
    out = presign(slipstream_bin, "-b", "bkt", "--expires-in", "-5", "k")
    assert out.returncode == 2


def test_missing_credentials_say_what_to_do(slipstream_bin):
    out = presign(slipstream_bin, "-b", "bkt", "k", AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None)
    assert out.returncode == 2
    assert b"no AWS credentials found" in out.stderr and b"AWS_ACCESS_KEY_ID" in out.stderr
    assert b"panicked" not in out.stderr


def test_profiles_from_shared_files(slipstream_bin, tmp_path):
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("[dev]\naws_access_key_id = DEVKEY\naws_secret_access_key = devsecret\n")
    (tmp_path / ".aws" / "config").write_text("[profile dev]\nregion = eu-west-1\ns3 =\n  addressing_style = path\n")
    e = dict(HOME=str(tmp_path), AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None)
    out = presign(slipstream_bin, "--profile", "dev", "-b", "bkt", "k", **e)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(b"https://s3.eu-west-1.amazonaws.com/bkt/k?")
    assert b"DEVKEY%2F20150830%2Feu-west-1" in out.stdout
    out = presign(slipstream_bin, "-b", "bkt", "k", AWS_PROFILE="dev", **e)
    assert b"DEVKEY" in out.stdout
    out = presign(slipstream_bin, "--profile", "nope", "-b", "bkt", "k", **e)
    assert out.returncode == 2 and b'"nope"' in out.stderr


def test_region_and_endpoint_from_environment(slipstream_bin):
    out = presign(slipstream_bin, "s3://bkt/k", AWS_REGION="ap-south-1", AWS_ENDPOINT_URL="http://127.0.0.1:9999")
    assert out.stdout.startswith(b"http://127.0.0.1:9999/bkt/k?") and b"ap-south-1" in out.stdout
    out = presign(slipstream_bin, "s3://bkt/k", AWS_DEFAULT_REGION="sa-east-1")
    assert b"sa-east-1" in out.stdout


def test_key_without_bucket_and_bad_endpoint_are_usage_errors(slipstream_bin):
    out = presign(slipstream_bin, "k")
    assert out.returncode == 2 and b"--bucket" in out.stderr
    out = presign(slipstream_bin, "--endpoint-url", "127.0.0.1:9000", "s3://bkt/k")
    assert out.returncode == 2 and b"http" in out.stderr
    out = run_cli(slipstream_bin, "presign", "--at", "yesterday", "s3://bkt/k", env=env(), check=False)
    assert out.returncode == 2 and b"YYYYMMDDTHHMMSSZ" in out.stderr
    out = presign(slipstream_bin, "--param", "novalue", "s3://bkt/k")
    assert out.returncode == 2 and b"NAME=VALUE" in out.stderr


def test_secrets_never_printed(slipstream_bin):
    out = presign(slipstream_bin, "-b", "bkt", "", AWS_SESSION_TOKEN="SESSIONTOKEN")
    assert out.returncode == 1
    assert SECRET.encode() not in out.stderr and b"SESSIONTOKEN" not in out.stderr


def test_broken_pipe_is_not_an_error(slipstream_bin, tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("\n".join(f"k{i}" for i in range(200_000)))
    with keys.open("rb") as stdin:
        proc = subprocess.Popen([slipstream_bin, "presign", "-b", "bkt"], stdin=stdin, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env())
    proc.stdout.readline()
    proc.stdout.close()
    assert proc.wait(timeout=60) == 0
    assert proc.stderr.read() == b""


def test_help_has_examples(slipstream_bin):
    out = run_cli(slipstream_bin, "presign", "--help")
    assert b"Examples:" in out.stdout and b"s3://" in out.stdout and b"Exit codes" in out.stdout
