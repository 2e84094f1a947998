"""`cp`/`mv --flatten` (-f), s5cmd's: every object or file of a many-object copy under its last
name alone, against the local versitygw, and the same copies made by s5cmd (`.venv/bin/s5cmd`,
installed by `make setup`) for the names each writes. Issue 19."""

import pathlib

from support import cli_at as cli, s5cmd_at as s5cmd

TREE = {"2026-01/a.gz": b"a", "2026-02/b.gz": b"bb", "2026-02/sub/c.gz": b"ccc", "other.txt": b"o"}


def keys(s3, bucket, prefix):
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return {o["Key"][len(prefix):]: s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read() for o in listed}


def files(root: pathlib.Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_flatten_writes_last_names_as_s5cmd_does(slipstream_bin, server, s3, bucket, tmp_path):
    for name, body in TREE.items():
        s3.put_object(Bucket=bucket, Key=f"logs/{name}", Body=body)
    want = {"a.gz": b"a", "b.gz": b"bb", "c.gz": b"ccc"}
    # Down, from a wildcard.
    cli(slipstream_bin, server, "cp", "--flatten", f"s3://{bucket}/logs/2026-*/*.gz", str(tmp_path / "ours") + "/")
    s5cmd(server, "cp", "--flatten", f"s3://{bucket}/logs/2026-*/*.gz", str(tmp_path / "theirs") + "/")
    assert files(tmp_path / "ours") == want == files(tmp_path / "theirs")
    # Without it both keep the structure below the wildcard.
    cli(slipstream_bin, server, "cp", f"s3://{bucket}/logs/2026-*/*.gz", str(tmp_path / "kept") + "/")
    assert set(files(tmp_path / "kept")) == {"2026-01/a.gz", "2026-02/b.gz", "2026-02/sub/c.gz"}

    # Up, from a directory (s5cmd: a wildcard).
    tree = tmp_path / "tree"
    for name, body in TREE.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_bytes(body)
    cli(slipstream_bin, server, "cp", "-r", "-f", str(tree), f"s3://{bucket}/up/")
    s5cmd(server, "cp", "--flatten", f"{tree}/*", f"s3://{bucket}/up5/")
    assert keys(s3, bucket, "up/") == keys(s3, bucket, "up5/") == {**want, "other.txt": b"o"}

    # On the server, with --dryrun first: the lines name the flattened keys.
    dry = cli(slipstream_bin, server, "cp", "-r", "-f", "--dryrun", f"s3://{bucket}/logs/", f"s3://{bucket}/flat/")
    assert f"to s3://{bucket}/flat/c.gz" in dry.stdout.decode() and keys(s3, bucket, "flat/") == {}
    cli(slipstream_bin, server, "cp", "-r", "-f", f"s3://{bucket}/logs/", f"s3://{bucket}/flat/")
    assert keys(s3, bucket, "flat/") == {**want, "other.txt": b"o"}
    refused = cli(slipstream_bin, server, "cp", "-r", "-f", f"s3://{bucket}/logs/", f"s3://{bucket}/logs/x/",
                  check=False)
    assert refused.returncode == 2 and b"its own objects" in refused.stderr


def test_two_sources_with_one_last_name_the_later_is_refused_and_named(slipstream_bin, server, s3, bucket, tmp_path):
    for name in ["a/x.gz", "b/x.gz", "c/y.gz"]:
        s3.put_object(Bucket=bucket, Key=f"dup/{name}", Body=name.encode())
    down = cli(slipstream_bin, server, "cp", "-r", "-f", f"s3://{bucket}/dup/", str(tmp_path / "d"), check=False)
    assert down.returncode == 1
    err = down.stderr.decode()
    assert f"s3://{bucket}/dup/b/x.gz: {tmp_path / 'd' / 'x.gz'} is already the copy of s3://{bucket}/dup/a/x.gz" in err
    assert files(tmp_path / "d") == {"x.gz": b"a/x.gz", "y.gz": b"c/y.gz"}, "the first and the others moved"
    copy = cli(slipstream_bin, server, "cp", "-r", "-f", f"s3://{bucket}/dup/", f"s3://{bucket}/one/", check=False)
    assert copy.returncode == 1 and b"is already the copy of" in copy.stderr
    assert set(keys(s3, bucket, "one/")) == {"x.gz", "y.gz"}


def test_mv_flatten_removes_each_file_it_uploaded(slipstream_bin, server, s3, bucket, tmp_path):
    tree = tmp_path / "tree"
    for name, body in TREE.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_bytes(body)
    cli(slipstream_bin, server, "mv", "-r", "-f", str(tree), f"s3://{bucket}/moved/")
    assert set(keys(s3, bucket, "moved/")) == {"a.gz", "b.gz", "c.gz", "other.txt"}
    assert files(tree) == {}, "every file moved"
