"""`--case-conflict`, as the AWS CLI's: a download of many objects whose file names differ only
by case (`A.txt`, `a.txt`), which a case-insensitive file system writes to one file. This Linux
file system keeps both, so what is checked is what each mode does with the later name: nothing
(ignore), a warning (warn), a warning and no download (skip, and `mv` leaves that source), or
the command's failure (error: before any byte for `cp --recursive`). Against versitygw."""

import uuid

import pytest

from support import cli_env, run_cli


@pytest.fixture()
def cased(slipstream_bin, server, s3):
    bucket = f"case-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    for key, body in [("d/A.txt", b"upper"), ("d/a.txt", b"lower"), ("d/b.txt", b"other")]:
        s3.put_object(Bucket=bucket, Key=key, Body=body)
    return bucket


def run(bin_path, server, *args):
    return run_cli(bin_path, *args, "--endpoint-url", server["endpoint"], "--path-style", env=cli_env(server),
                   check=False)


@pytest.mark.parametrize("command", ["cp", "sync"])
def test_each_mode_does_what_the_aws_cli_does_with_the_later_name(slipstream_bin, server, cased, tmp_path, command):
    recursive = ["--recursive"] if command == "cp" else []
    for mode, files, said in [("ignore", ["A.txt", "a.txt", "b.txt"], None),
                              ("warn", ["A.txt", "a.txt", "b.txt"], "warning: Downloading s3://{b}/d/a.txt"),
                              ("skip", ["A.txt", "b.txt"], "warning: Skipping s3://{b}/d/a.txt")]:
        dest = tmp_path / f"{command}-{mode}"
        r = run(slipstream_bin, server, command, *recursive, f"s3://{cased}/d/", f"{dest}/", "--case-conflict", mode)
        assert r.returncode == 0, r.stderr
        assert sorted(p.name for p in dest.iterdir()) == files, mode
        err = r.stderr.decode()
        if said:
            assert said.format(b=cased) in err and "differs only by case" in err, err
        else:
            assert "differs only by case" not in err, err
    dest = tmp_path / f"{command}-error"
    r = run(slipstream_bin, server, command, *recursive, f"s3://{cased}/d/", f"{dest}/", "--case-conflict", "error")
    assert r.returncode == 1 and b"Failed to download" in r.stderr and b"--case-conflict error" in r.stderr
    if command == "cp":
        assert not dest.exists() or list(dest.iterdir()) == [], "nothing moved before the check"


def test_mv_leaves_the_source_it_skipped(slipstream_bin, server, cased, s3, tmp_path):
    r = run(slipstream_bin, server, "mv", "--recursive", f"s3://{cased}/d/", f"{tmp_path}/m/", "--case-conflict", "skip")
    assert r.returncode == 0, r.stderr
    left = [o["Key"] for o in s3.list_objects_v2(Bucket=cased).get("Contents", [])]
    assert left == ["d/a.txt"], left
    assert (tmp_path / "m" / "A.txt").read_bytes() == b"upper"
