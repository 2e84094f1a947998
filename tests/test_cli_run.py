"""`slipstream run` (many cp/mv/rm lines over one connection pool, as s5cmd's run) and
`--no-clobber`, against the local versitygw. Issue 19."""

import hashlib

from support import cli_env, run_cli


def cli(bin_path, server, *args, stdin=b"", check=True):
    return run_cli(bin_path, *args, "--endpoint-url", server["endpoint"], "--path-style",
                   stdin=stdin, env=cli_env(server), check=check)


def keys(s3, bucket, prefix=""):
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return sorted(o["Key"] for page in pages for o in page.get("Contents", []))


def body(s3, bucket, key):
    return s3.get_object(Bucket=bucket, Key=key)["Body"].read()


def test_run_does_every_line_reports_the_bad_ones_by_number_and_goes_on(slipstream_bin, server, s3, bucket, tmp_path):
    (tmp_path / "a file.txt").write_bytes(b"alpha")
    s3.put_object(Bucket=bucket, Key="in/b.csv", Body=b"bravo")
    s3.put_object(Bucket=bucket, Key="in/c.csv", Body=b"charlie")
    s3.put_object(Bucket=bucket, Key="old/d", Body=b"delta")
    for i in range(3):
        s3.put_object(Bucket=bucket, Key=f"tree/{i}.gz", Body=b"%d" % i)
    out = tmp_path / "out"
    out.mkdir()
    commands = tmp_path / "commands.txt"
    spaced = tmp_path / "a file.txt"
    commands.write_text(f"""# a comment, then a blank line

cp '{spaced}' s3://{bucket}/up/
cp s3://{bucket}/in/b.csv {out}/b.csv
mv s3://{bucket}/in/c.csv s3://{bucket}/done/c.csv
rm s3://{bucket}/old/d
cp --recursive s3://{bucket}/tree/ {out}/tree --exclude '2.gz'
frobnicate s3://{bucket}/x
cp s3://{bucket}/in/missing {out}/missing
cp s3://{bucket}/in/b.csv {out}/b.csv --endpoint-url http://127.0.0.1:1
""")
    proc = cli(slipstream_bin, server, "run", str(commands), check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "line 8 (frobnicate s3://" in err and "frobnicate" in err.split("line 8")[1].split("\n")[0]
    assert "line 9 (cp s3://" in err and "missing" in err
    assert "line 10 (" in err and "belong to `run`" in err
    assert "3 of 8 line(s) failed" in err
    # Every good line did its work.
    assert body(s3, bucket, "up/a file.txt") == b"alpha"
    assert (out / "b.csv").read_bytes() == b"bravo"
    assert keys(s3, bucket, "in/") == ["in/b.csv"] and body(s3, bucket, "done/c.csv") == b"charlie"
    assert keys(s3, bucket, "old/") == []
    assert sorted(p.name for p in (out / "tree").iterdir()) == ["0.gz", "1.gz"]
    assert not (out / "missing").exists() and not list(out.glob(".*")), "nothing half-written"
    lines = proc.stdout.decode().splitlines()
    # The object a line made is named (`up/` given, `up/a file.txt` written), as s5cmd's `run` prints.
    assert f"upload: {tmp_path / 'a file.txt'} to s3://{bucket}/up/a file.txt" in lines
    assert f"move: s3://{bucket}/in/c.csv to s3://{bucket}/done/c.csv" in lines
    assert f"delete: s3://{bucket}/old/d" in lines


def test_run_reads_many_lines_from_stdin_over_one_pool(slipstream_bin, server, s3, bucket, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    lines = []
    for i in range(300):
        (src / f"f{i}").write_bytes(b"%d" % i * (i + 1))
        lines.append(f"cp {src / f'f{i}'} s3://{bucket}/many/f{i}")
    proc = cli(slipstream_bin, server, "run", "--workers", "32", "--quiet", stdin="\n".join(lines).encode())
    assert proc.stdout == b"" and proc.stderr == b""
    assert keys(s3, bucket, "many/") == sorted(f"many/f{i}" for i in range(300))
    assert body(s3, bucket, "many/f7") == b"7" * 8
    # And back, with the run's own summary.
    down = tmp_path / "down"
    down.mkdir()
    again = "\n".join(f"cp s3://{bucket}/many/f{i} {down}/" for i in range(300))
    proc = cli(slipstream_bin, server, "run", "-", stdin=again.encode())
    assert "run: 300 line(s), 0 failed" in proc.stderr.decode()
    assert len(proc.stdout.decode().splitlines()) == 300
    for i in (0, 150, 299):
        assert (down / f"f{i}").read_bytes() == (src / f"f{i}").read_bytes()


def test_no_clobber_leaves_existing_destinations_and_their_sources(slipstream_bin, server, s3, bucket, tmp_path):
    (tmp_path / "new.txt").write_bytes(b"new")
    s3.put_object(Bucket=bucket, Key="k/new.txt", Body=b"old")
    proc = cli(slipstream_bin, server, "cp", "-n", str(tmp_path / "new.txt"), f"s3://{bucket}/k/")
    assert "skip:" in proc.stderr.decode() and "--no-clobber" in proc.stderr.decode()
    assert body(s3, bucket, "k/new.txt") == b"old"
    # Without it the object is replaced.
    cli(slipstream_bin, server, "cp", str(tmp_path / "new.txt"), f"s3://{bucket}/k/", "--quiet")
    assert body(s3, bucket, "k/new.txt") == b"new"

    # Many objects down: the existing file stays as it was, the others arrive.
    for name in ("a", "b", "c"):
        s3.put_object(Bucket=bucket, Key=f"p/{name}", Body=name.encode() * 3)
    d = tmp_path / "d"
    d.mkdir()
    (d / "b").write_bytes(b"mine")
    proc = cli(slipstream_bin, server, "cp", "--recursive", "--no-clobber", f"s3://{bucket}/p/", str(d), "--json")
    assert '"objects":2' in proc.stdout.decode() and '"skipped":1' in proc.stdout.decode()
    assert [(d / n).read_bytes() for n in ("a", "b", "c")] == [b"aaa", b"mine", b"ccc"]

    # mv on the server: a source whose destination exists is neither copied over nor deleted.
    s3.put_object(Bucket=bucket, Key="q/b", Body=b"theirs")
    proc = cli(slipstream_bin, server, "mv", "-r", "-n", f"s3://{bucket}/p/", f"s3://{bucket}/q/")
    assert "1 skipped" in proc.stderr.decode()
    assert keys(s3, bucket, "p/") == ["p/b"]
    assert body(s3, bucket, "q/b") == b"theirs" and body(s3, bucket, "q/a") == b"aaa"

    # Uploads of a directory: one HeadObject each.
    up = tmp_path / "up"
    up.mkdir()
    for name in ("x", "y"):
        (up / name).write_bytes(hashlib.sha256(name.encode()).digest())
    s3.put_object(Bucket=bucket, Key="u/y", Body=b"keep")
    cli(slipstream_bin, server, "cp", "-r", "-n", str(up), f"s3://{bucket}/u/", "--quiet")
    assert body(s3, bucket, "u/y") == b"keep"
    assert body(s3, bucket, "u/x") == hashlib.sha256(b"x").digest()


def test_a_download_makes_the_directories_its_destination_names(slipstream_bin, server, s3, bucket, tmp_path):
    # As the AWS CLI and s5cmd do; run's lines rely on it to rebuild a tree.
    s3.put_object(Bucket=bucket, Key="a/k.txt", Body=b"k")
    cli(slipstream_bin, server, "cp", f"s3://{bucket}/a/k.txt", str(tmp_path / "new" / "sub" / "x.txt"))
    assert (tmp_path / "new" / "sub" / "x.txt").read_bytes() == b"k"
    cli(slipstream_bin, server, "cp", f"s3://{bucket}/a/k.txt", str(tmp_path / "dir") + "/")
    assert (tmp_path / "dir" / "k.txt").read_bytes() == b"k", "a trailing / names a directory"


def test_run_takes_sync_lines_on_its_one_client(slipstream_bin, server, s3, bucket, tmp_path):
    """s5cmd's run takes any command; here `sync` lines as well as cp/mv/rm: each sync as the
    command makes it (with --delete bounded by its filters), all on the run's connection pool."""
    import os
    import time

    hour_ago = time.time() - 3600
    for d in ["a", "b"]:
        for name in ["x.txt", "y.tmp", "sub/z.txt"]:
            path = tmp_path / d / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(f"{d}/{name}".encode())
            os.utime(path, (hour_ago, hour_ago))
    s3.put_object(Bucket=bucket, Key="a/stale.txt", Body=b"gone")
    s3.put_object(Bucket=bucket, Key="a/keep.tmp", Body=b"excluded: kept")
    lines = "\n".join([
        f"sync {tmp_path / 'a'} s3://{bucket}/a/ --delete --exclude '*.tmp'",
        f"sync '{tmp_path / 'b'}/*.txt' s3://{bucket}/b/",
    ])
    proc = cli(slipstream_bin, server, "run", stdin=lines.encode())
    err = proc.stderr.decode()
    assert "run: 2 line(s), 0 failed" in err, err
    assert keys(s3, bucket, "a/") == ["a/keep.tmp", "a/sub/z.txt", "a/x.txt"]
    assert keys(s3, bucket, "b/") == ["b/x.txt"]
    assert body(s3, bucket, "a/sub/z.txt") == b"a/sub/z.txt"
    again = cli(slipstream_bin, server, "run", stdin=lines.encode()).stderr.decode()
    assert again.count("nothing to do") == 2, again
