"""`slipstream sync` against the local versitygw, and against what the AWS CLI plans on the same
trees (`aws s3 sync --dryrun`, awscli from PyPI in .tools/awscli-venv, installed by `make
setup`). Issue 19."""

import json
import os
import pathlib
import subprocess
import time

import pytest

from support import ROOT, cli_env

AWS = ROOT / ".tools" / "awscli-venv" / "bin" / "aws"

# Names that sort in surprising ways ("dir-a" < "dir.a" < "dir/" in byte order) or need
# encoding, an empty file, and folders several levels deep.
TREE = {
    "a b.txt": b"spaces",
    "ü/ñ.txt": b"unicode",
    "plus+sign.txt": b"plus",
    "pct%41.txt": b"percent",
    "eq=amp&.txt": b"query characters",
    "empty.txt": b"",
    "deep/x/y/z.txt": b"deep",
    "dir-a/x": b"1",
    "dir.a/x": b"2",
    "dir/x": b"3",
    "same.txt": b"same",
    "changed-size.txt": b"before",
    "changed-time.txt": b"time",
    "gone.txt": b"deleted locally later",
    "skip.log": b"excluded",
}

HOUR_AGO = time.time() - 3600


def make_tree(root: pathlib.Path, files: dict, mtime: float = HOUR_AGO) -> None:
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
        os.utime(path, (mtime, mtime))


def sync(bin_path, server, cwd, *args, check=True):
    """Runs `slipstream sync` in `cwd`; returns (stdout lines, stderr text, exit code)."""
    proc = subprocess.run([bin_path, "sync", *args, "--endpoint-url", server["endpoint"], "--path-style"],
                          cwd=cwd, env=cli_env(server), capture_output=True, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"sync {args} exited {proc.returncode}: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode().splitlines(), proc.stderr.decode(), proc.returncode


def aws_sync_plan(server, cwd, *args):
    """What `aws s3 sync --dryrun` would do, as a set of lines."""
    assert AWS.exists(), "the AWS CLI is missing: `make setup` installs it in .tools/awscli-venv"
    env = cli_env(server)
    env.update(AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent")
    proc = subprocess.run([str(AWS), "s3", "sync", *args, "--dryrun", "--endpoint-url", server["endpoint"]],
                          cwd=cwd, env=env, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return set(proc.stdout.decode().splitlines())


def keys(s3, bucket, prefix=""):
    out, token = {}, None
    while True:
        kw = {"Bucket": bucket, "Prefix": prefix}
        if token:
            kw["ContinuationToken"] = token
        page = s3.list_objects_v2(**kw)
        out.update({o["Key"][len(prefix):]: o for o in page.get("Contents", [])})
        token = page.get("NextContinuationToken")
        if not token:
            return out


def files(root: pathlib.Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_sync_up_moves_only_what_changed_and_a_second_sync_does_nothing(slipstream_bin, server, s3, bucket, tmp_path):
    tree = tmp_path / "tree"
    make_tree(tree, TREE)
    lines, _, _ = sync(slipstream_bin, server, tmp_path, "tree", f"s3://{bucket}/site")
    assert sorted(lines) == sorted(f"upload: tree/{n} to s3://{bucket}/site/{n}" for n in TREE)
    assert {k: s3.get_object(Bucket=bucket, Key=f"site/{k}")["Body"].read() for k in keys(s3, bucket, "site/")} == TREE

    lines, err, _ = sync(slipstream_bin, server, tmp_path, "tree", f"s3://{bucket}/site")
    assert lines == [] and "nothing to do" in err and f"{len(TREE)} already in sync" in err

    # A changed size, a newer time with the same size, a new file, a file deleted locally.
    (tree / "changed-size.txt").write_bytes(b"after, longer")
    os.utime(tree / "changed-size.txt", (HOUR_AGO, HOUR_AGO))
    later = time.time() + 120
    os.utime(tree / "changed-time.txt", (later, later))
    make_tree(tree, {"new/file.txt": b"new"})
    (tree / "gone.txt").unlink()
    lines, _, _ = sync(slipstream_bin, server, tmp_path, "tree", f"s3://{bucket}/site", "--exclude", "*.log")
    assert sorted(lines) == [f"upload: tree/{n} to s3://{bucket}/site/{n}"
                             for n in ["changed-size.txt", "changed-time.txt", "new/file.txt"]]
    assert "gone.txt" in keys(s3, bucket, "site/"), "without --delete nothing is deleted"
    # A file newer than its object keeps moving (the AWS CLI's rule): put the time back.
    os.utime(tree / "changed-time.txt", (HOUR_AGO, HOUR_AGO))

    lines, _, _ = sync(slipstream_bin, server, tmp_path, "tree", f"s3://{bucket}/site", "--delete",
                       "--exclude", "*.log", "--json")
    assert [json.loads(line) for line in lines] == [{"action": "delete", "source": f"s3://{bucket}/site/gone.txt"}]
    (tree / "skip.log").unlink()
    after = keys(s3, bucket, "site/")
    assert "gone.txt" not in after and "skip.log" in after, "an excluded name is neither copied nor deleted"
    assert s3.get_object(Bucket=bucket, Key="site/changed-size.txt")["Body"].read() == b"after, longer"


def test_sync_down_sets_the_objects_times_and_follows_the_aws_cli_rules(slipstream_bin, server, s3, bucket, tmp_path):
    for name, body in TREE.items():
        s3.put_object(Bucket=bucket, Key=f"src/{name}", Body=body)
    s3.put_object(Bucket=bucket, Key="src/folder-marker/", Body=b"")
    lines, _, _ = sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/src/", "down")
    assert sorted(lines) == sorted(f"download: s3://{bucket}/src/{n} to down/{n}" for n in TREE)
    assert files(tmp_path / "down") == TREE
    listed = keys(s3, bucket, "src/")
    for name in TREE:
        assert os.stat(tmp_path / "down" / name).st_mtime == listed[name]["LastModified"].timestamp(), name
    lines, err, _ = sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/src/", "down")
    assert lines == [] and "nothing to do" in err

    down = tmp_path / "down"
    later = time.time() + 120
    os.utime(down / "changed-time.txt", (later, later))  # newer locally: the object wins
    os.utime(down / "same.txt", (HOUR_AGO - 3600, HOUR_AGO - 3600))  # older locally: kept
    (down / "changed-size.txt").write_bytes(b"local edit")
    make_tree(down, {"extra.txt": b"only here"})
    lines, _, _ = sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/src/", "down", "--delete")
    assert sorted(lines) == sorted([f"download: s3://{bucket}/src/changed-size.txt to down/changed-size.txt",
                                    f"download: s3://{bucket}/src/changed-time.txt to down/changed-time.txt",
                                    "delete: down/extra.txt"])
    assert files(down) == TREE
    # Exact timestamps: the older local same.txt moves too.
    lines, _, _ = sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/src/", "down", "--exact-timestamps")
    assert lines == [f"download: s3://{bucket}/src/same.txt to down/same.txt"]
    # Sizes only: a newer local file of the same size stays.
    os.utime(down / "same.txt", (later, later))
    lines, err, _ = sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/src/", "down", "--size-only")
    assert lines == [] and "nothing to do" in err


def test_cp_gives_downloads_their_objects_times_so_a_sync_after_it_does_nothing(slipstream_bin, server, s3, bucket, tmp_path):
    """As the AWS CLI's cp and mv: a downloaded file's modification time is its object's (the
    listing's, to the millisecond, for many; Last-Modified, to the second, for one), so a sync
    after a cp moves nothing in either direction, ours or the AWS CLI's."""
    for name, body in TREE.items():
        s3.put_object(Bucket=bucket, Key=f"src/{name}", Body=body)
    run = lambda *a: subprocess.run([slipstream_bin, *a, "--endpoint-url", server["endpoint"], "--path-style", "-q"],
                                    cwd=tmp_path, env=cli_env(server), check=True, timeout=120)
    run("cp", "--recursive", f"s3://{bucket}/src/", "many")
    run("cp", f"s3://{bucket}/src/same.txt", "one.txt")
    s3.put_object(Bucket=bucket, Key="moved.txt", Body=b"moved")
    moved_at = s3.head_object(Bucket=bucket, Key="moved.txt")["LastModified"].timestamp()
    run("mv", f"s3://{bucket}/moved.txt", "moved.txt")
    listed = keys(s3, bucket, "src/")
    for name in TREE:
        assert os.stat(tmp_path / "many" / name).st_mtime == listed[name]["LastModified"].timestamp(), name
    assert os.stat(tmp_path / "one.txt").st_mtime == int(listed["same.txt"]["LastModified"].timestamp())
    assert os.stat(tmp_path / "moved.txt").st_mtime == moved_at
    for args in [(f"s3://{bucket}/src/", "many"), ("many", f"s3://{bucket}/src/")]:
        lines, err, _ = sync(slipstream_bin, server, tmp_path, *args, "--dryrun")
        assert lines == [] and "nothing to do" in err, (args, lines)
        assert aws_sync_plan(server, tmp_path, *args) == set(), args


def test_sync_between_prefixes_runs_on_the_server(slipstream_bin, server, s3, bucket, tmp_path):
    for name, body in TREE.items():
        s3.put_object(Bucket=bucket, Key=f"a/{name}", Body=body)
    lines, _, _ = sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/a/", f"s3://{bucket}/b/")
    assert sorted(lines) == sorted(f"copy: s3://{bucket}/a/{n} to s3://{bucket}/b/{n}" for n in TREE)
    assert {k: s3.get_object(Bucket=bucket, Key=f"b/{k}")["Body"].read() for k in keys(s3, bucket, "b/")} == TREE
    lines, err, _ = sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/a/", f"s3://{bucket}/b/")
    assert lines == [] and "nothing to do" in err
    time.sleep(1.1)  # S3's times are whole seconds: the source must be newer than the copy.
    s3.put_object(Bucket=bucket, Key="a/same.txt", Body=b"SAME")
    s3.delete_object(Bucket=bucket, Key="a/gone.txt")
    lines, _, _ = sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/a/", f"s3://{bucket}/b/", "--delete")
    assert sorted(lines) == [f"copy: s3://{bucket}/a/same.txt to s3://{bucket}/b/same.txt",
                             f"delete: s3://{bucket}/b/gone.txt"]
    assert s3.get_object(Bucket=bucket, Key="b/same.txt")["Body"].read() == b"SAME"
    # Overlapping prefixes of one bucket would list their own copies: refused.
    _, err, rc = sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/a/", f"s3://{bucket}/a/sub/", check=False)
    assert rc == 1 and "overlap" in err


def test_bad_arguments_are_refused_clearly(slipstream_bin, server, bucket, tmp_path):
    _, err, rc = sync(slipstream_bin, server, tmp_path, "missing-dir", f"s3://{bucket}/x/", check=False)
    assert rc == 2 and "not a directory" in err
    (tmp_path / "f").write_bytes(b"x")
    _, err, rc = sync(slipstream_bin, server, tmp_path, "f", f"s3://{bucket}/x/", check=False)
    assert rc == 2 and "not a directory" in err
    _, err, rc = sync(slipstream_bin, server, tmp_path, ".", "elsewhere", check=False)
    assert rc == 2 and "s3://" in err
    _, err, rc = sync(slipstream_bin, server, tmp_path, ".", "s3://no-such-bucket-here/x/", check=False)
    assert rc == 1 and "NoSuchBucket" in err


@pytest.mark.parametrize("direction", ["up", "down", "across"])
def test_the_plan_matches_the_aws_clis(slipstream_bin, server, s3, bucket, tmp_path, direction):
    """The same trees, the same changes: `slipstream sync --dryrun` plans the actions `aws s3
    sync --dryrun` plans, with --delete and a filter."""
    tree = tmp_path / "tree"
    make_tree(tree, TREE)
    sync(slipstream_bin, server, tmp_path, "tree", f"s3://{bucket}/p/")
    sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/p/", "down")
    sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/p/", f"s3://{bucket}/q/")
    time.sleep(1.1)
    later = time.time() + 120
    if direction == "up":
        (tree / "changed-size.txt").write_bytes(b"after, longer")
        os.utime(tree / "changed-time.txt", (later, later))
        os.utime(tree / "same.txt", (HOUR_AGO - 3600, HOUR_AGO - 3600))
        (tree / "gone.txt").unlink()
        make_tree(tree, {"new/file.txt": b"new", "dir-b": b"between"})
        args = ["tree", f"s3://{bucket}/p/"]
    elif direction == "down":
        down = tmp_path / "down"
        os.utime(down / "changed-time.txt", (later, later))
        os.utime(down / "same.txt", (HOUR_AGO - 3600, HOUR_AGO - 3600))
        (down / "changed-size.txt").write_bytes(b"local edit")
        make_tree(down, {"extra.txt": b"only here", "ü/extra": b"x"})
        s3.put_object(Bucket=bucket, Key="p/new/object", Body=b"n")
        args = [f"s3://{bucket}/p/", "down"]
    else:
        s3.put_object(Bucket=bucket, Key="p/same.txt", Body=b"SAME")
        s3.put_object(Bucket=bucket, Key="p/changed-size.txt", Body=b"a different size")
        s3.delete_object(Bucket=bucket, Key="p/gone.txt")
        s3.put_object(Bucket=bucket, Key="q/extra", Body=b"x")
        args = [f"s3://{bucket}/p/", f"s3://{bucket}/q/"]
    for extra in ([], ["--delete", "--exclude", "*.log"], ["--size-only", "--delete"]):
        ours, _, _ = sync(slipstream_bin, server, tmp_path, *args, *extra, "--dryrun")
        theirs = aws_sync_plan(server, tmp_path, *args, *extra)
        assert set(ours) == theirs, (extra, sorted(set(ours) ^ theirs))
        assert len(ours) == len(theirs) and theirs, extra


@pytest.mark.parametrize("direction", ["up", "down"])
def test_a_large_tree_with_keys_the_local_side_lacks_plans_as_the_aws_cli(slipstream_bin, server, s3, bucket, tmp_path, direction):
    """A tree of 700 files beside keys the local side lacks (before the first, between and
    around others, after the last): the plan is the AWS CLI's. Far away the S3 side of such a
    sync is listed in ranges cut at the local names (crates/transfer/src/ranges.rs, whose
    listing crates/transfer/tests/many_objects.rs checks against the plain one); here, on
    loopback, it is one listing."""
    tree = tmp_path / "tree"
    bulk = {f"bulk/f{i:04}": b"%d" % i for i in range(700)}
    make_tree(tree, {**TREE, **bulk})
    sync(slipstream_bin, server, tmp_path, "tree", f"s3://{bucket}/p/", "--objects", "64")
    sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/p/", "down", "--objects", "64")
    for key in ("0-first", "bulk/f0124", "bulk/f0124x", "bulk/f0125a", "bulk/f0399~", "bulk/f0699z", "zzz-last"):
        s3.put_object(Bucket=bucket, Key=f"p/{key}", Body=b"only in S3")
    time.sleep(1.1)
    if direction == "up":
        (tree / "bulk" / "f0300").write_bytes(b"a new size")
        (tree / "bulk" / "f0500").unlink()
        args = ["tree", f"s3://{bucket}/p/"]
    else:
        (tmp_path / "down" / "bulk" / "f0600").write_bytes(b"a local size")
        make_tree(tmp_path / "down", {"bulk/f0250b": b"only here"})
        args = [f"s3://{bucket}/p/", "down"]
    for extra in ([], ["--delete"]):
        ours, _, _ = sync(slipstream_bin, server, tmp_path, *args, *extra, "--dryrun")
        theirs = aws_sync_plan(server, tmp_path, *args, *extra)
        assert set(ours) == theirs, (extra, sorted(set(ours) ^ theirs))
        assert len(ours) == len(theirs) and theirs, extra


def test_symbolic_links_are_followed_as_the_aws_cli_follows_them(slipstream_bin, server, s3, bucket, tmp_path):
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    make_tree(tree, {"real/f": b"f", "top": b"t"})
    make_tree(outside, {"g": b"g", "deep/h": b"h"})
    (tree / "linkdir").symlink_to(outside)
    (tree / "linkfile").symlink_to(tree / "real" / "f")
    args = ["tree", f"s3://{bucket}/p/"]
    ours, _, _ = sync(slipstream_bin, server, tmp_path, *args, "--dryrun")
    theirs = aws_sync_plan(server, tmp_path, *args)
    assert set(ours) == theirs and len(theirs) == 5, sorted(set(ours) ^ theirs)
    # A loop is left out (its files are listed under their own names); the AWS CLI would
    # follow it until the path is too long.
    (tree / "real" / "up").symlink_to(tree)
    (outside / "back").symlink_to(tree)
    sync(slipstream_bin, server, tmp_path, *args)
    assert sorted(keys(s3, bucket, "p/")) == ["linkdir/deep/h", "linkdir/g", "linkfile", "real/f", "top"]
    assert s3.get_object(Bucket=bucket, Key="p/linkdir/deep/h")["Body"].read() == b"h"
    # --no-follow-symlinks leaves them out, here and in cp.
    ours, _, _ = sync(slipstream_bin, server, tmp_path, "tree", f"s3://{bucket}/n/", "--no-follow-symlinks")
    assert sorted(keys(s3, bucket, "n/")) == ["real/f", "top"], ours
    # --follow-symlinks is the default said aloud; of the two, the last one given wins (argparse's
    # rule in the AWS CLI).
    cases = [([], 5), (["--no-follow-symlinks"], 2), (["--follow-symlinks"], 5),
             (["--no-follow-symlinks", "--follow-symlinks"], 5), (["--follow-symlinks", "--no-follow-symlinks"], 2)]
    for i, (flag, want) in enumerate(cases):
        subprocess.run([slipstream_bin, "cp", "--recursive", "tree", f"s3://{bucket}/c{i}/", *flag,
                        "--endpoint-url", server["endpoint"], "--path-style"], cwd=tmp_path, env=cli_env(server),
                       check=True, capture_output=True, timeout=120)
        assert len(keys(s3, bucket, f"c{i}/")) == want, flag
    # A link to nothing stops the sync before anything moves, and says how to go on.
    (tree / "broken").symlink_to(tmp_path / "nowhere")
    _, err, code = sync(slipstream_bin, server, tmp_path, "tree", f"s3://{bucket}/b/", check=False)
    assert code == 1 and "broken is a symbolic link" in err and "--no-follow-symlinks" in err, err
    assert keys(s3, bucket, "b/") == {}
    sync(slipstream_bin, server, tmp_path, "tree", f"s3://{bucket}/b/", "--no-follow-symlinks")
    assert sorted(keys(s3, bucket, "b/")) == ["real/f", "top"]


def test_fifos_and_sockets_are_left_out_and_named(slipstream_bin, server, s3, bucket, tmp_path):
    """As s5cmd (an error line each, exit 1) and the AWS CLI (a warning each, exit 2) do: the
    files go, the entries that are not files are named, and the exit code says not all went."""
    import socket

    tree = tmp_path / "tree"
    make_tree(tree, {"a": b"a", "sub/b": b"b"})
    os.mkfifo(tree / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tree / "sub" / "sock"))
    try:
        _, err, code = sync(slipstream_bin, server, tmp_path, "tree", f"s3://{bucket}/s/", check=False)
        assert code == 1 and sorted(keys(s3, bucket, "s/")) == ["a", "sub/b"], err
        assert "warning: skipping tree/fifo: not a regular file" in err, err
        assert "warning: skipping tree/sub/sock: not a regular file" in err
        assert "2 entries left out: not regular files" in err
        for cmd in (["cp", "--recursive"], ["cp", "--recursive", "--dryrun"], ["mv", "--recursive", "--dryrun"]):
            proc = subprocess.run([slipstream_bin, *cmd, "tree", f"s3://{bucket}/c/", "--endpoint-url",
                                   server["endpoint"], "--path-style"], cwd=tmp_path, env=cli_env(server),
                                  capture_output=True, timeout=120)
            assert proc.returncode == 1 and b"warning: skipping tree/fifo" in proc.stderr, (cmd, proc.stderr)
        assert sorted(keys(s3, bucket, "c/")) == ["a", "sub/b"]
        # Excluded, nothing to say.
        _, err, code = sync(slipstream_bin, server, tmp_path, "tree", f"s3://{bucket}/e/", "--exclude", "fifo",
                            "--exclude", "*/sock")
        assert code == 0 and "warning" not in err, err
    finally:
        sock.close()


def test_a_wildcard_source_syncs_what_it_matches_and_bounds_delete(slipstream_bin, server, s3, bucket, tmp_path):
    """`sync 's3://b/logs/2026-*/*.gz' dir/` (s5cmd's form): the matches, named relative to the
    literal part up to its last `/`, the same files s5cmd's sync writes; with --delete only
    destination names the wildcard matches go (s5cmd removes every other file too: the
    wildcard here bounds both sides as an --exclude would, as `aws s3 sync --delete` leaves
    excluded files). Before, the wildcard was read as a prefix that held nothing and the sync
    said "nothing to do"."""
    from support import s5cmd_at
    for name in ["2026-01/a.gz", "2026-02/b.gz", "2026-02/c.txt", "2025-12/d.gz", "top.gz"]:
        s3.put_object(Bucket=bucket, Key=f"logs/{name}", Body=name.encode())
    source = f"s3://{bucket}/logs/2026-*/*.gz"
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    lines, _, _ = sync(slipstream_bin, server, tmp_path, source, f"{ours}/")
    s5cmd_at(server, "sync", source, f"{theirs}/")
    assert files(ours) == files(theirs) == {"2026-01/a.gz": b"2026-01/a.gz", "2026-02/b.gz": b"2026-02/b.gz"}
    assert sorted(lines) == [f"download: s3://{bucket}/logs/{n} to {ours}/{n}" for n in ["2026-01/a.gz", "2026-02/b.gz"]]
    lines, err, _ = sync(slipstream_bin, server, tmp_path, source, f"{ours}/", "--debug")
    assert lines == [] and "nothing to do, 2 already in sync" in err
    # Listed from the wildcard's literal part, as s5cmd lists it, not the whole directory.
    assert "list-type=2&prefix=logs%2F2026-" in err and "prefix=logs%2F&" not in err, err
    # --delete: a matching name the source lacks goes; the rest of the directory stays.
    make_tree(ours, {"2026-03/old.gz": b"old", "2026-03/keep.txt": b"keep", "notes": b"keep"})
    lines, _, _ = sync(slipstream_bin, server, tmp_path, source, f"{ours}/", "--delete")
    assert lines == [f"delete: {ours}/2026-03/old.gz"]
    assert sorted(files(ours)) == ["2026-01/a.gz", "2026-02/b.gz", "2026-03/keep.txt", "notes"]
    # On the server, and an --include cannot widen the wildcard.
    lines, _, _ = sync(slipstream_bin, server, tmp_path, source, f"s3://{bucket}/copy/", "--include", "*")
    assert sorted(keys(s3, bucket, "copy/")) == ["2026-01/a.gz", "2026-02/b.gz"], lines
    # A wildcard destination is refused; --raw takes the characters literally.
    _, err, rc = sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/logs/", f"s3://{bucket}/x*/", check=False)
    assert rc == 2 and "not a wildcard" in err
    s3.put_object(Bucket=bucket, Key="lit*/k", Body=b"k")
    lines, _, _ = sync(slipstream_bin, server, tmp_path, f"s3://{bucket}/lit*/", f"{tmp_path}/raw/", "--raw")
    assert files(tmp_path / "raw") == {"k": b"k"}
