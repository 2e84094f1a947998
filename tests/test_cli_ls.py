"""`slipstream ls` against `aws s3 ls` (awscli from PyPI in .tools/awscli-venv, `make setup`) on
the same bucket of the local versitygw: the same lines, byte for byte, and the same exit code.
Both print local times: TZ=UTC for most cases, and zones away from UTC for the times alone."""

import subprocess
from pathlib import Path

import pytest

from support import ROOT, cli_at, cli_env, run_cli, s5cmd_at

AWS = ROOT / ".tools" / "awscli-venv" / "bin" / "aws"

NAMES = {
    "top.txt": b"22",
    "a b/ü ñ.txt": b"unicode and spaces",
    "dir/x": b"1",
    "dir/sub/y": b"12345",
    "dir-a/z": b"",
    "dir.a/z": b"z",
    "kib": b"k" * 1536,
}


def both(bin_path, server, *args, tz="UTC"):
    env = dict(cli_env(server), TZ=tz, AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent")
    aws = subprocess.run([str(AWS), "s3", "ls", *args, "--endpoint-url", server["endpoint"]], env=env,
                         capture_output=True, timeout=120)
    ours = subprocess.run([bin_path, "ls", *args,
                           "--endpoint-url", server["endpoint"], "--path-style"], env=env, capture_output=True,
                          timeout=120)
    return aws, ours


@pytest.fixture(scope="module")
def listed(slipstream_bin, server, s3, tmp_path_factory):
    assert AWS.exists(), "the AWS CLI is missing: `make setup` installs it in .tools/awscli-venv"
    bucket = "ls-differential"
    s3.create_bucket(Bucket=bucket)
    for name, body in NAMES.items():
        s3.put_object(Bucket=bucket, Key=name, Body=body)
    # More than a page under one prefix, so both follow continuation tokens.
    many = tmp_path_factory.mktemp("many")
    for i in range(1005):
        (many / f"o{i:04}").write_bytes(b"x" * (i % 7))
    run_cli(slipstream_bin, "cp", "--recursive", str(many), f"s3://{bucket}/many/", "--quiet",
            "--endpoint-url", server["endpoint"], "--path-style", env=cli_env(server))
    return bucket


@pytest.mark.parametrize("args", [
    [], ["s3://"], ["s3://{b}"], ["s3://{b}/"], ["s3://{b}/dir"], ["s3://{b}/dir/"], ["s3://{b}/di"],
    ["s3://{b}/dir/sub/y"], ["s3://{b}/a b/"], ["--recursive", "s3://{b}/"], ["--recursive", "s3://{b}/dir"],
    ["s3://{b}/many/"], ["--summarize", "--human-readable", "s3://{b}/"],
    ["--summarize", "--recursive", "s3://{b}/dir/"],
    # Nothing there: the AWS CLI exits 1 silently (`ls s3://b/key` tests for an object).
    ["s3://{b}/nothing"], ["--recursive", "s3://{b}/nothing/"],
    # Buckets chosen by ListBuckets' prefix and region.
    ["--bucket-name-prefix", "ls-diff"], ["--bucket-name-prefix", "{b}", "--bucket-region", "{r}"],
])
def test_ls_prints_what_aws_s3_ls_prints(slipstream_bin, server, listed, args):
    args = [a.format(b=listed, r=server["region"]) for a in args]
    aws, ours = both(slipstream_bin, server, *args)
    assert ours.stdout.decode() == aws.stdout.decode(), (args, ours.stderr)
    assert ours.returncode == aws.returncode, (args, ours.stderr, aws.stderr)
    if aws.returncode == 0:
        assert aws.stdout, "a listing that printed nothing compares nothing"


# A POSIX rule half an hour off the hour (needs no tz database, so the AWS CLI's Python and
# slipstream read it alike) and a named zone with summer time.
@pytest.mark.parametrize("tz", ["XST-5:30", "ZZZ11:45", "America/New_York"])
@pytest.mark.parametrize("args", [[], ["--recursive", "s3://{b}/dir/"]])
def test_ls_prints_times_in_the_local_zone_as_aws_s3_ls(slipstream_bin, server, listed, tz, args):
    if "/" in tz and not (Path("/usr/share/zoneinfo") / tz).exists():
        pytest.skip(f"no tz database entry for {tz} on this machine")
    args = [a.format(b=listed) for a in args]
    aws, ours = both(slipstream_bin, server, *args, tz=tz)
    utc, _ = both(slipstream_bin, server, *args)
    assert ours.returncode == aws.returncode == 0, (ours.stderr, aws.stderr)
    assert ours.stdout.decode() == aws.stdout.decode(), (tz, args)
    assert ours.stdout != utc.stdout, "the zone moved no time: this compares nothing"


def test_ls_wildcards_match_whole_keys_and_a_miss_is_an_error(slipstream_bin, server, listed):
    out = run_cli(slipstream_bin, "ls", f"s3://{listed}/d*/*", "--endpoint-url", server["endpoint"], "--path-style",
                  env=cli_env(server)).stdout.decode()
    assert [line.split(maxsplit=3)[3] for line in out.splitlines()] == ["dir-a/z", "dir.a/z", "dir/sub/y", "dir/x"]
    miss = run_cli(slipstream_bin, "ls", f"s3://{listed}/*.zip", "--endpoint-url", server["endpoint"],
                   "--path-style", env=cli_env(server), check=False)
    assert miss.returncode == 1 and f"no object matches s3://{listed}/*.zip".encode() in miss.stderr


S5CMD = ROOT / ".venv" / "bin" / "s5cmd"


@pytest.mark.parametrize("args", [
    ["s3://{b}/"], ["s3://{b}/dir/"], ["s3://{b}/many/"], ["s3://{b}/*"], ["s3://{b}/d*/*"], ["s3://{b}/a b/*"],
])
def test_ls_json_says_what_s5cmd_json_ls_says(slipstream_bin, server, listed, args):
    """The same objects and "directories" with the same fields and values as `s5cmd --json ls`,
    compared whole; s5cmd leaves out a size of 0 (Go's omitempty), which ours prints."""
    import json
    assert S5CMD.exists(), "s5cmd is missing: `make setup` installs it (requirements-dev.txt)"
    args = [a.format(b=listed) for a in args]
    env = cli_env(server)
    theirs = subprocess.run([str(S5CMD), "--endpoint-url", server["endpoint"], "--json", "ls", *args], env=env,
                            capture_output=True, timeout=120)
    ours = run_cli(slipstream_bin, "ls", *args, "--json", "--endpoint-url", server["endpoint"], "--path-style",
                   env=env)
    assert theirs.returncode == 0, theirs.stderr

    def lines(out, sizes=False):
        entries = [json.loads(line) for line in out.decode().splitlines()]
        for e in entries:
            if sizes and e["type"] == "file":
                e.setdefault("size", 0)
        return sorted(entries, key=lambda d: d["key"])

    assert lines(ours.stdout) == lines(theirs.stdout, sizes=True) != []


def test_bucket_choices_name_no_path_and_a_region_elsewhere_lists_none(slipstream_bin, server, listed):
    conn = ["--endpoint-url", server["endpoint"], "--path-style"]
    mixed = run_cli(slipstream_bin, "ls", f"s3://{listed}/", "--bucket-name-prefix", "ls", *conn,
                    env=cli_env(server), check=False)
    assert mixed.returncode == 2 and b"give no s3:// path" in mixed.stderr, mixed.stderr
    elsewhere = run_cli(slipstream_bin, "ls", "--bucket-name-prefix", listed, "--bucket-region", "eu-north-1",
                        *conn, env=cli_env(server))
    assert elsewhere.stdout == b"", elsewhere.stdout


def test_ls_json_buckets_and_totals(slipstream_bin, server, listed):
    import json
    env = cli_env(server)
    conn = ["--endpoint-url", server["endpoint"], "--path-style"]
    theirs = subprocess.run([str(S5CMD), "--endpoint-url", server["endpoint"], "--json", "ls"], env=env,
                            capture_output=True, timeout=120)
    ours = run_cli(slipstream_bin, "ls", "--json", *conn, env=env)
    buckets = [json.loads(line) for line in ours.stdout.decode().splitlines()]
    assert buckets == [json.loads(line) for line in theirs.stdout.decode().splitlines()]
    assert any(b["name"] == listed for b in buckets)
    out = run_cli(slipstream_bin, "ls", "--recursive", "--summarize", "--json", f"s3://{listed}/dir/", *conn, env=env)
    *objects, total = [json.loads(line) for line in out.stdout.decode().splitlines()]
    assert [o["key"] for o in objects] == [f"s3://{listed}/dir/sub/y", f"s3://{listed}/dir/x"]
    assert total == {"total_objects": 2, "total_size": 6}


@pytest.mark.parametrize("args", [
    ["s3://{b}/"], ["s3://{b}/dir/"], ["s3://{b}/*"], ["s3://{b}/d*/*"],
    ["--exclude", "*.txt", "s3://{b}/*"], ["--exclude", "sub/*", "s3://{b}/dir/*"],
    ["--exclude", "x", "s3://{b}/dir/"],
    # "Directories" are filtered too.
    ["--exclude", "sub*", "s3://{b}/dir/"], ["--exclude", "dir*", "--exclude", "many*", "s3://{b}/"],
])
def test_ls_show_fullpath_and_exclude_list_what_s5cmd_lists(slipstream_bin, server, listed, args):
    """s5cmd's `ls --show-fullpath` and `--exclude`: the same whole names, with the patterns
    matched relative to the listed "directory" or the wildcard's literal part, as s5cmd's."""
    args = [a.format(b=listed) for a in args]
    theirs = s5cmd_at(server, "ls", "--show-fullpath", *args)
    ours = cli_at(slipstream_bin, server, "ls", "--show-fullpath", *args)
    assert sorted(ours.stdout.splitlines()) == sorted(theirs.stdout.splitlines()) != []
    assert all(line.startswith(f"s3://{listed}/".encode()) for line in ours.stdout.splitlines())


def test_ls_storage_class_and_etag_columns_hold_what_s5cmd_shows(slipstream_bin, server, listed):
    """`-s` and `-e` add s5cmd's columns, in its order, before the AWS CLI's size: the same
    class and ETag for each key; the rest of the line stays the AWS CLI's."""
    target = f"s3://{listed}/d*/*"

    def columns(out):
        return sorted(tuple(line.split(maxsplit=5)[2:4]) + (line.split(maxsplit=5)[5],)
                      for line in out.decode().splitlines())

    theirs = columns(s5cmd_at(server, "ls", "-s", "-e", target).stdout)
    ours = columns(cli_at(slipstream_bin, server, "ls", "-s", "-e", target).stdout)
    assert ours == theirs and len(ours) == 4, (ours, theirs)
    assert ours[0][0] == "STANDARD" and len(ours[0][1]) == 32
    plain = cli_at(slipstream_bin, server, "ls", "-H", "--etag", f"s3://{listed}/dir/").stdout.decode()
    etag_of_x = next(etag for _, etag, name in ours if name == "dir/x")
    assert "PRE sub/" in plain and plain.rstrip().endswith(f"{etag_of_x}     1 Byte x"), plain


def test_ls_exits_1_for_an_empty_prefix_not_for_one_the_filters_emptied(slipstream_bin, server, listed):
    """A prefix that lists nothing answers "not there" (exit 1, as the AWS CLI); one whose
    entries --exclude all left out says nothing and exits 0, as s5cmd's ls; a wildcard that
    matches nothing is an error, as `cp` and `rm` say it."""
    emptied = cli_at(slipstream_bin, server, "ls", "--exclude", "*", f"s3://{listed}/dir/")
    assert emptied.stdout == b"" and s5cmd_at(server, "ls", "--exclude", "*", f"s3://{listed}/dir/").stdout == b""
    empty = cli_at(slipstream_bin, server, "ls", f"s3://{listed}/nothing/", check=False)
    assert (empty.returncode, empty.stdout) == (1, b"")
    none = cli_at(slipstream_bin, server, "ls", "--exclude", "*", f"s3://{listed}/d*", check=False)
    assert none.returncode == 1 and b"no object matches" in none.stderr, none.stderr


def test_options_before_the_command_as_s5cmd_writes_them(slipstream_bin, server, listed):
    """An s5cmd command line as it is (`--endpoint-url URL --json ls TARGET`, the options before
    the command): the same JSON lines as s5cmd's for it."""
    import json
    line = ["--endpoint-url", server["endpoint"], "--json", "ls", f"s3://{listed}/dir/*"]
    theirs = subprocess.run([str(S5CMD), *line], env=cli_env(server), capture_output=True, timeout=120)
    ours = subprocess.run([slipstream_bin, *line], env=cli_env(server), capture_output=True, timeout=120)
    assert ours.returncode == theirs.returncode == 0, ours.stderr

    def entries(out):
        return sorted((json.loads(x)["key"], json.loads(x).get("size", 0)) for x in out.decode().splitlines())

    assert entries(ours.stdout) == entries(theirs.stdout) != []
