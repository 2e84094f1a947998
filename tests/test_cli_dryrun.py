"""`slipstream cp/mv --dryrun` of one object against `aws s3 cp/mv --dryrun` (awscli from PyPI in
.tools/awscli-venv): the same line, with the AWS CLI's word (upload, download, copy, move) and the
destination resolved (`s3://b/dir/` given, `s3://b/dir/f.txt` printed), and nothing done. Local
paths are compared as the files they name: the AWS CLI prints them relative to the working
directory (`./f.txt`), slipstream as given, as s5cmd does."""

import os
import subprocess

import pytest

from support import cli_env
from test_cli_ls import AWS


@pytest.mark.parametrize("command", ["cp", "mv"])
@pytest.mark.parametrize("source, destination", [
    ("{d}/f.txt", "s3://{b}"),
    ("{d}/f.txt", "s3://{b}/dir/"),
    ("{d}/f.txt", "s3://{b}/named"),
    ("s3://{b}/f.txt", "."),
    ("s3://{b}/f.txt", "new/dir/"),
    ("s3://{b}/f.txt", "{d}/renamed.txt"),
    ("s3://{b}/f.txt", "s3://{b}/copies/"),
])
def test_one_objects_dryrun_says_what_aws_says(slipstream_bin, server, s3, bucket, tmp_path, command,
                                                source, destination):
    assert AWS.exists(), "the AWS CLI is missing: `make setup` installs it in .tools/awscli-venv"
    (tmp_path / "f.txt").write_bytes(b"hello")
    s3.put_object(Bucket=bucket, Key="f.txt", Body=b"hello")
    args = [command, source.format(d=tmp_path, b=bucket), destination.format(d=tmp_path, b=bucket), "--dryrun"]
    aws, ours = both(slipstream_bin, server, args, tmp_path)
    assert said(ours.stdout, tmp_path) == said(aws.stdout, tmp_path) != []
    # Nothing moved, nothing made.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]
    listed = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    assert [o["Key"] for o in listed] == ["f.txt"]


def both(slipstream_bin, server, args, cwd):
    """`aws s3 ARGS` and `slipstream ARGS` in `cwd` against `server`; both must succeed."""
    env = dict(cli_env(server), AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent")
    aws = subprocess.run([str(AWS), "s3", *args, "--endpoint-url", server["endpoint"]], env=env, cwd=cwd,
                         capture_output=True, timeout=120)
    ours = subprocess.run([slipstream_bin, *args, "--endpoint-url", server["endpoint"], "--path-style"], env=env,
                          cwd=cwd, capture_output=True, timeout=120)
    assert aws.returncode == ours.returncode == 0, (aws.stderr, ours.stderr)
    return aws, ours


def said(stdout: bytes, cwd) -> list:
    """Each line's word and both sides, a local side as the absolute path it names."""
    out = []
    for line in stdout.decode().splitlines():
        word, sides = line.split(": ", 1)
        out.append((word, *(x if x.startswith("s3://") else os.path.normpath(os.path.join(cwd, x))
                             for x in sides.split(" to "))))
    return out


@pytest.mark.parametrize("command", ["cp", "mv"])
@pytest.mark.parametrize("source, destination", [
    ("s3://{b}/src/", "out/"),
    ("s3://{b}/src/", "s3://{b}/copies/"),
    ("{d}/tree", "s3://{b}/up/"),
])
def test_many_objects_dryrun_says_what_aws_says(slipstream_bin, server, s3, bucket, tmp_path, command,
                                                 source, destination):
    """The same with --recursive: a line per object, the AWS CLI's word for each (a prefix
    downloaded is `download`, not `copy`), in whatever order each lists them."""
    assert AWS.exists(), "the AWS CLI is missing: `make setup` installs it in .tools/awscli-venv"
    for name in ["a.txt", "sub/b.txt"]:
        (tmp_path / "tree" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tree" / name).write_bytes(b"hello")
        s3.put_object(Bucket=bucket, Key=f"src/{name}", Body=b"hello")
    args = [command, "--recursive", source.format(d=tmp_path, b=bucket), destination.format(d=tmp_path, b=bucket),
            "--dryrun"]
    aws, ours = both(slipstream_bin, server, args, tmp_path)
    assert sorted(said(ours.stdout, tmp_path)) == sorted(said(aws.stdout, tmp_path)) != []
    # No file made (the AWS CLI makes the empty destination directory even in a dry run).
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == \
        ["tree/a.txt", "tree/sub/b.txt"]
    listed = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    assert sorted(o["Key"] for o in listed) == ["src/a.txt", "src/sub/b.txt"], "nothing moved"
