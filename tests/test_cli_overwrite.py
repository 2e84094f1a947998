"""`cp`/`mv` `--if-size-differ` (-s) and `--if-source-newer` (-u), s5cmd's conditions for writing
over a destination that exists, against the local versitygw: each direction, one object and
many, and the same trees given to s5cmd (`.venv/bin/s5cmd`, installed by `make setup`) to check
that both tools write the same destinations. Issue 19."""

import os
import pathlib
import time

import pytest

from support import cli_at as cli, s5cmd_at as s5cmd

HOUR_AGO = time.time() - 3600


def write(path: pathlib.Path, body: bytes, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    os.utime(path, (mtime, mtime))


def download_tree(s3, bucket, tmp_path, name):
    """Objects under `src/`, and a directory holding: a file of the same size, older; one of
    another size, older; one of the same size, newer; one of another size, newer; none for the
    last object."""
    for key in ["same-old", "size-old", "same-new", "size-new", "missing"]:
        s3.put_object(Bucket=bucket, Key=f"src/{key}", Body=b"object")
    d = tmp_path / name
    later = time.time() + 3600
    write(d / "same-old", b"OBJECT", HOUR_AGO)
    write(d / "size-old", b"local, longer", HOUR_AGO)
    write(d / "same-new", b"OBJECT", later)
    write(d / "size-new", b"local, longer", later)
    return d


def written(d: pathlib.Path) -> set:
    return {p.name for p in d.iterdir() if p.read_bytes() == b"object"}


@pytest.mark.parametrize("flag, want", [
    ("--if-size-differ", {"size-old", "size-new", "missing"}),
    ("--if-source-newer", {"same-old", "size-old", "missing"}),
])
def test_downloads_write_what_the_condition_says_as_s5cmd_does(slipstream_bin, server, s3, bucket, tmp_path, flag, want):
    ours = download_tree(s3, bucket, tmp_path, "ours")
    proc = cli(slipstream_bin, server, "cp", "--recursive", flag, f"s3://{bucket}/src/", str(ours))
    assert written(ours) == want
    assert "2 skipped: the destination" in proc.stderr.decode() and flag in proc.stderr.decode()
    theirs = download_tree(s3, bucket, tmp_path, "theirs")
    s5cmd(server, "cp", flag, f"s3://{bucket}/src/*", f"{theirs}/")
    assert written(theirs) == want, "s5cmd writes the same files"
    # One object: the same decision.
    one = tmp_path / "one"
    write(one, b"OBJECT", time.time() + 3600)
    proc = cli(slipstream_bin, server, "cp", flag, f"s3://{bucket}/src/same-new", str(one))
    assert one.read_bytes() == b"OBJECT" and "skip:" in proc.stderr.decode()


def test_uploads_and_server_side_copies_compare_with_the_object(slipstream_bin, server, s3, bucket, tmp_path):
    d = tmp_path / "up"
    write(d / "same", b"12345", HOUR_AGO)
    write(d / "longer", b"123456789", HOUR_AGO)
    write(d / "new", b"new", HOUR_AGO)
    for key in ["same", "longer"]:
        s3.put_object(Bucket=bucket, Key=f"up/{key}", Body=b"54321")
    proc = cli(slipstream_bin, server, "cp", "-r", "-s", str(d), f"s3://{bucket}/up/")
    assert "1 skipped" in proc.stderr.decode()
    bodies = {k: s3.get_object(Bucket=bucket, Key=f"up/{k}")["Body"].read() for k in ["same", "longer", "new"]}
    assert bodies == {"same": b"54321", "longer": b"123456789", "new": b"new"}
    # The files are older than every object now: -u writes none of them, then one made newer.
    proc = cli(slipstream_bin, server, "cp", "-r", "-u", str(d), f"s3://{bucket}/up/")
    assert "3 skipped: the destination is as new (--if-source-newer)" in proc.stderr.decode()
    write(d / "same", b"fresh", time.time() + 3600)
    cli(slipstream_bin, server, "cp", "-u", str(d / "same"), f"s3://{bucket}/up/same")
    assert s3.get_object(Bucket=bucket, Key="up/same")["Body"].read() == b"fresh"

    # On the server: the copies made later are newer than their sources, so -u leaves them; a
    # source written again after them is copied.
    cli(slipstream_bin, server, "cp", "-r", f"s3://{bucket}/up/", f"s3://{bucket}/copy/")
    time.sleep(1.1)  # LastModified is to the second
    s3.put_object(Bucket=bucket, Key="up/new", Body=b"newer")
    proc = cli(slipstream_bin, server, "mv", "-r", "-u", f"s3://{bucket}/up/", f"s3://{bucket}/copy/")
    assert "2 skipped" in proc.stderr.decode()
    assert s3.get_object(Bucket=bucket, Key="copy/new")["Body"].read() == b"newer"
    left = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="up/")["Contents"])
    assert left == ["up/longer", "up/same"], "mv keeps the sources it left alone"
    one = cli(slipstream_bin, server, "cp", "-s", f"s3://{bucket}/up/same", f"s3://{bucket}/copy/same")
    assert "skip:" in one.stderr.decode() and "(--if-size-differ)" in one.stderr.decode()


def test_standard_streams_have_nothing_to_compare(slipstream_bin, server, bucket):
    for args in [("-", f"s3://{bucket}/k"), (f"s3://{bucket}/k", "-")]:
        r = cli(slipstream_bin, server, "cp", "--if-size-differ", *args, check=False)
        assert r.returncode == 2 and b"not standard input or output" in r.stderr
