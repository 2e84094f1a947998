"""Local globs as s5cmd takes them (`cp 'dir/*.csv' s3://b/`, quoted so the shell leaves them):
`cp`, `mv` and `sync` against the local versitygw, each compared with the objects s5cmd
(`.venv/bin/s5cmd`, `make setup`) writes for the same glob. A glob matches segment by segment
(`*` stays within one, as a shell's or Go's `filepath.Glob`), a directory it matches is taken
whole, and names are relative to its literal part up to the last `/`. Issue 19."""

import os
import pathlib
import time

import pytest

from support import cli_at as cli, s5cmd_at as s5cmd

TREE = {"2026-01/a.gz": b"a", "2026-01/x/b.gz": b"bb", "2026-02/c.gz": b"ccc", "2025-12/d.gz": b"d",
        "top.gz": b"t", "notes.txt": b"n", ".hidden.gz": b"h"}


def make_tree(root: pathlib.Path) -> None:
    """TREE's files, an hour old (a file written within its upload's second would look newer
    than its object to the next sync: S3's times are whole seconds)."""
    hour_ago = time.time() - 3600
    for name, body in TREE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(body)
        os.utime(root / name, (hour_ago, hour_ago))


def keys(s3, bucket, prefix):
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return {o["Key"][len(prefix):]: s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read() for o in listed}


@pytest.mark.parametrize("glob", ["*.gz", "2026-*/*.gz", "2026-*", "*/x/*", "*", "2026-0?/?.gz"])
def test_cp_uploads_what_s5cmd_uploads_for_a_glob(slipstream_bin, server, s3, bucket, tmp_path, glob):
    make_tree(tmp_path / "t")
    case = str(abs(hash(glob)))
    ours, theirs = f"ours/{case}/", f"theirs/{case}/"
    cli(slipstream_bin, server, "cp", f"{tmp_path}/t/{glob}", f"s3://{bucket}/{ours}")
    s5cmd(server, "cp", f"{tmp_path}/t/{glob}", f"s3://{bucket}/{theirs}")
    assert keys(s3, bucket, ours) == keys(s3, bucket, theirs) != {}


def test_globs_relative_to_the_working_directory_dry_runs_and_misses(slipstream_bin, server, s3, bucket, tmp_path,
                                                                     monkeypatch):
    make_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    dry = cli(slipstream_bin, server, "cp", "--dryrun", "2026-*/*.gz", f"s3://{bucket}/d/").stdout.decode()
    assert sorted(dry.splitlines()) == [f"(dryrun) upload: ./2026-01/a.gz to s3://{bucket}/d/2026-01/a.gz",
                                        f"(dryrun) upload: ./2026-02/c.gz to s3://{bucket}/d/2026-02/c.gz"]
    assert keys(s3, bucket, "d/") == {}
    # Sets, which s5cmd does not take as wildcards (its glob characters are * and ?).
    cli(slipstream_bin, server, "cp", "202[56]-1?/[a-d].gz", f"s3://{bucket}/set/")
    assert keys(s3, bucket, "set/") == {"2025-12/d.gz": b"d"}
    # A glob that matches nothing is an error, as s5cmd's "no match found" (and `cp` of an S3
    # wildcard here); nothing was uploaded.
    miss = cli(slipstream_bin, server, "cp", "*.zip", f"s3://{bucket}/d/", check=False)
    assert miss.returncode == 1 and b"no file matches *.zip" in miss.stderr, miss.stderr
    # A file whose name holds the characters is that file; --raw never expands.
    (tmp_path / "odd*name").write_bytes(b"odd")
    cli(slipstream_bin, server, "cp", "odd*name", f"s3://{bucket}/odd")
    assert keys(s3, bucket, "odd") == {"": b"odd"}
    raw = cli(slipstream_bin, server, "cp", "--raw", "*.gz", f"s3://{bucket}/r/", check=False)
    assert raw.returncode != 0 and b"*.gz" in raw.stderr


def test_mv_of_a_glob_removes_only_the_files_it_uploaded(slipstream_bin, server, s3, bucket, tmp_path):
    make_tree(tmp_path / "t")
    cli(slipstream_bin, server, "mv", f"{tmp_path}/t/2026-*", f"s3://{bucket}/mv/")
    assert set(keys(s3, bucket, "mv/")) == {"2026-01/a.gz", "2026-01/x/b.gz", "2026-02/c.gz"}
    left = sorted(p.relative_to(tmp_path / "t").as_posix() for p in (tmp_path / "t").rglob("*") if p.is_file())
    assert left == [".hidden.gz", "2025-12/d.gz", "notes.txt", "top.gz"]


def test_sync_from_a_glob_deletes_only_within_it(slipstream_bin, server, s3, bucket, tmp_path):
    make_tree(tmp_path / "t")
    cli(slipstream_bin, server, "sync", f"{tmp_path}/t/*.gz", f"s3://{bucket}/s/")
    s5cmd(server, "sync", f"{tmp_path}/t/*.gz", f"s3://{bucket}/s5/")
    assert keys(s3, bucket, "s/") == keys(s3, bucket, "s5/") == {"top.gz": b"t", ".hidden.gz": b"h"}
    s3.put_object(Bucket=bucket, Key="s/old.gz", Body=b"old")
    s3.put_object(Bucket=bucket, Key="s/keep.txt", Body=b"keep")
    out = cli(slipstream_bin, server, "sync", "--delete", f"{tmp_path}/t/*.gz", f"s3://{bucket}/s/").stdout.decode()
    assert out.splitlines() == [f"delete: s3://{bucket}/s/old.gz"]
    assert set(keys(s3, bucket, "s/")) == {"top.gz", ".hidden.gz", "keep.txt"}
