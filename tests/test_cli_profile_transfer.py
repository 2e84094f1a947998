"""The AWS CLI's transfer settings in the profile's `s3` section (`multipart_chunksize`,
`multipart_threshold`, `max_concurrent_requests`) tune `cp`, `mv`, `sync` and `run` as they tune
`aws s3 cp`; a flag beats each, and a value the AWS CLI would refuse fails before any request.
How the settings map onto parts and requests in flight is unit-tested in crates/cli/src/tuning.rs;
here the parts an upload is cut into show it end to end, against versitygw."""

import json
import os
import uuid

from support import run_cli

MiB = 1 << 20


def env_for(server, tmp_path, s3_section):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    config = tmp_path / "config"
    config.write_text("[default]\ns3 =\n" + "".join(f"  {line}\n" for line in s3_section))
    env.update(HOME="/nonexistent", AWS_CONFIG_FILE=str(config), AWS_ACCESS_KEY_ID=server["access_key"],
               AWS_SECRET_ACCESS_KEY=server["secret_key"], AWS_REGION=server["region"])
    return env


def parts_of_upload(bin_path, src, dest, at, env, *flags):
    """Parts of an upload of `src`, a file or bytes sent on standard input. A stream is cut into
    parts as asked; a file's parts are twice as long when CreateMultipartUpload took 20 ms or
    more (the far cut, README), which a server busy with the rest of the run can take."""
    stdin = src if isinstance(src, bytes) else b""
    source = "-" if stdin else str(src)
    done = run_cli(bin_path, "cp", source, dest, *at, "--json", *flags, stdin=stdin, env=env)
    return json.loads(done.stdout)["parts"]


def test_the_profile_cuts_uploads_and_a_flag_beats_it(slipstream_bin, server, tmp_path):
    at = ["--endpoint-url", server["endpoint"], "--path-style"]
    env = env_for(server, tmp_path, ["multipart_chunksize = 5MB", "multipart_threshold = 5MB",
                                     "max_concurrent_requests = 3"])
    bucket = f"pt-{uuid.uuid4().hex[:16]}"
    run_cli(slipstream_bin, "mb", f"s3://{bucket}", *at, env=env)
    data = os.urandom(12 * MiB)
    src = tmp_path / "twelve.bin"
    src.write_bytes(data)
    assert parts_of_upload(slipstream_bin, data, f"s3://{bucket}/a", at, env) == 3
    assert parts_of_upload(slipstream_bin, data, f"s3://{bucket}/b", at, env, "--part-size", "8MiB") == 2
    assert parts_of_upload(slipstream_bin, src, f"s3://{bucket}/f", at, env) in (3, 2)
    run_cli(slipstream_bin, "cp", f"s3://{bucket}/a", str(tmp_path / "back"), *at, env=env)
    assert (tmp_path / "back").read_bytes() == data
    # Below the profile's threshold an upload is one PUT, as `aws s3 cp` sends it.
    env = env_for(server, tmp_path, ["multipart_chunksize = 5MB", "multipart_threshold = 64MiB"])
    single = parts_of_upload(slipstream_bin, src, f"s3://{bucket}/c", at, env)
    big = tmp_path / "big.bin"
    big.write_bytes(data * 6)
    assert parts_of_upload(slipstream_bin, big, f"s3://{bucket}/d", at, env) in (15, 8)
    assert single == 0, single
    # sync and run lines read the same profile.
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "x.bin").write_bytes(data)
    run_cli(slipstream_bin, "sync", str(tree), f"s3://{bucket}/tree/", *at, env=env)
    run_cli(slipstream_bin, "run", *at, stdin=f"cp {src} s3://{bucket}/e\n".encode(), env=env)
    for key in ["tree/x.bin", "e"]:
        out = run_cli(slipstream_bin, "cat", f"s3://{bucket}/{key}", *at, env=env).stdout
        assert out == data, key


def test_settings_the_aws_cli_would_refuse_fail_before_any_request(slipstream_bin, server, tmp_path):
    at = ["--endpoint-url", "http://127.0.0.1:9", "--path-style"]
    for setting in ["multipart_chunksize = lots", "multipart_threshold = 0", "max_concurrent_requests = ten",
                    "max_concurrent_requests = -4"]:
        env = env_for(server, tmp_path, [setting])
        failed = run_cli(slipstream_bin, "cp", "s3://b/k", "-", *at, env=env, check=False)
        name = setting.split(" ")[0]
        assert failed.returncode == 2 and f"s3.{name} = ".encode() in failed.stderr, (setting, failed.stderr)
