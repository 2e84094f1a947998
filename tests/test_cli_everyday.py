"""The everyday commands against the local versitygw: rm in batches, wildcards and filters,
server-side cp and mv, du, cat, rb. Issue 19."""

import json
import os
import uuid

from support import cli_env, recording_server, run_cli, start_private_server


def cli(bin_path, server, *args, check=True, endpoint=None):
    return run_cli(bin_path, *args, "--endpoint-url", endpoint or server["endpoint"], "--path-style",
                   env=cli_env(server), check=check)


def keys(s3, bucket, prefix=""):
    out, token = [], None
    while True:
        kw = {"Bucket": bucket, "Prefix": prefix}
        if token:
            kw["ContinuationToken"] = token
        page = s3.list_objects_v2(**kw)
        out += [o["Key"] for o in page.get("Contents", [])]
        token = page.get("NextContinuationToken")
        if not token:
            return sorted(out)


def put(s3, bucket, names, body=b"x"):
    for n in names:
        s3.put_object(Bucket=bucket, Key=n, Body=body)


def test_rm_recursive_deletes_a_prefix_in_batches_and_nothing_beside_it(slipstream_bin, server, s3, bucket, tmp_path):
    tree = tmp_path / "tree"
    for i in range(2345):
        d = tree / f"d{i % 7}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}").write_bytes(b"%d" % i)
    cli(slipstream_bin, server, "cp", "--recursive", str(tree), f"s3://{bucket}/many/", "--objects", "64", "--quiet")
    put(s3, bucket, ["many2/keep", "manyfold"])
    assert len(keys(s3, bucket, "many/")) == 2345
    out = cli(slipstream_bin, server, "rm", "--recursive", f"s3://{bucket}/many", "--json").stdout.decode()
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 2345 and all(line["action"] == "delete" for line in lines)
    assert {line["source"] for line in lines} == {f"s3://{bucket}/many/d{i % 7}/f{i}" for i in range(2345)}
    # `many` reads as the directory many/: many2/ and manyfold stay.
    assert keys(s3, bucket) == ["many2/keep", "manyfold"]


def test_wildcards_filters_and_dryrun(slipstream_bin, server, s3, bucket):
    names = ["logs/2026-01/a.gz", "logs/2026-01/b.txt", "logs/2026-02/c.gz", "logs/2025-12/d.gz", "top.gz"]
    put(s3, bucket, names)
    dry = cli(slipstream_bin, server, "rm", f"s3://{bucket}/logs/2026-*/*.gz", "--dryrun").stdout.decode()
    assert dry.splitlines() == [f"(dryrun) delete: s3://{bucket}/logs/2026-01/a.gz",
                                f"(dryrun) delete: s3://{bucket}/logs/2026-02/c.gz"]
    assert keys(s3, bucket) == sorted(names), "a dry run deletes nothing"
    # The AWS CLI's order: the last matching filter decides.
    cli(slipstream_bin, server, "rm", "--recursive", f"s3://{bucket}/", "--exclude", "*", "--include", "*.txt",
        "--quiet")
    assert "logs/2026-01/b.txt" not in keys(s3, bucket)
    cli(slipstream_bin, server, "rm", f"s3://{bucket}/logs/2026-*/*.gz")
    assert keys(s3, bucket) == ["logs/2025-12/d.gz", "top.gz"]
    # A wildcard that matches nothing fails, as in s5cmd; a plain rm of the bucket needs --recursive.
    none = cli(slipstream_bin, server, "rm", f"s3://{bucket}/nothing-*", check=False)
    assert none.returncode == 1 and b"no object matches" in none.stderr
    whole = cli(slipstream_bin, server, "rm", f"s3://{bucket}/", check=False)
    assert whole.returncode == 2 and b"--recursive" in whole.stderr
    bad = cli(slipstream_bin, server, "rm", f"s3://{bucket}/a[b", check=False)
    assert bad.returncode == 2 and b"[" in bad.stderr
    # Keys with wildcard characters: --raw takes them literally, as s5cmd's --raw.
    put(s3, bucket, ["x[1].txt", "x1.txt"])
    cli(slipstream_bin, server, "rm", "--raw", f"s3://{bucket}/x[1].txt")
    assert "x[1].txt" not in keys(s3, bucket) and "x1.txt" in keys(s3, bucket)
    put(s3, bucket, ["x[1].txt"])
    cli(slipstream_bin, server, "rm", f"s3://{bucket}/x[1].txt")
    assert "x1.txt" not in keys(s3, bucket) and "x[1].txt" in keys(s3, bucket), "[1] is a set"


def test_cp_and_mv_of_a_wildcard_that_matches_nothing_fail_as_rm_does(slipstream_bin, server, s3, bucket, tmp_path):
    put(s3, bucket, ["logs/a.gz", "logs/b.txt"])
    for command, destination in [("cp", str(tmp_path / "out")), ("mv", str(tmp_path / "out")),
                                 ("cp", f"s3://{bucket}/copies/"), ("mv", f"s3://{bucket}/copies/")]:
        for extra in [[], ["--dryrun"]]:
            r = cli(slipstream_bin, server, command, f"s3://{bucket}/logs/*.zip", destination, *extra, check=False)
            assert r.returncode == 1, (command, destination, extra, r.stderr)
            assert f"no object matches s3://{bucket}/logs/*.zip".encode() in r.stderr
    # Matches that filters leave out are no matches either (s5cmd: "no object found").
    r = cli(slipstream_bin, server, "cp", f"s3://{bucket}/logs/*", str(tmp_path / "out"), "--exclude", "*",
            check=False)
    assert r.returncode == 1 and b"no object matches" in r.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    assert keys(s3, bucket) == ["logs/a.gz", "logs/b.txt"]
    # An empty prefix copied --recursive is not an error, as in the AWS CLI; a match is copied.
    cli(slipstream_bin, server, "cp", "--recursive", f"s3://{bucket}/empty/", str(tmp_path / "out"))
    cli(slipstream_bin, server, "cp", f"s3://{bucket}/logs/*.gz", str(tmp_path / "out"))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.gz"]


def test_errors_without_an_s3_code_say_which_request_and_where(slipstream_bin, server, tmp_path):
    # A HEAD answer has no body: the message names the request rather than a bare "HTTP 400".
    r = cli(slipstream_bin, server, "cp", "--recursive", "s3://x/", str(tmp_path / "out"), check=False)
    assert r.returncode == 1
    assert b"HTTP 400" in r.stderr and b"HeadBucket s3://x" in r.stderr, r.stderr
    # A local source that is a directory or missing is named, before any request.
    (tmp_path / "d").mkdir()
    r = cli(slipstream_bin, server, "cp", str(tmp_path / "d"), "s3://x/k", check=False)
    assert r.returncode == 2 and b"is a directory: cp --recursive" in r.stderr, r.stderr
    r = cli(slipstream_bin, server, "cp", str(tmp_path / "missing"), "s3://x/k", check=False)
    assert r.returncode == 1 and f"cannot read {tmp_path / 'missing'}".encode() in r.stderr, r.stderr
    r = cli(slipstream_bin, server, "mb", "s3://xyz/key", check=False)
    assert r.returncode == 2, r.stderr
    # `head s3://bucket/` asks HeadBucket, as s5cmd's head does; its 400 (no such name) too.
    r = cli(slipstream_bin, server, "head", "s3://x/", check=False)
    assert r.returncode == 1 and b"HTTP 400" in r.stderr and b"HeadBucket s3://x" in r.stderr, r.stderr
    # A refused connection names the endpoint it was refused at.
    r = cli(slipstream_bin, server, "ls", "s3://any", endpoint="http://127.0.0.1:1", check=False)
    assert r.returncode == 1 and b"http://127.0.0.1:1" in r.stderr and b"refused" in r.stderr, r.stderr


def test_rm_reports_each_key_the_server_refuses_and_deletes_the_rest(slipstream_bin, server, s3):
    bucket = f"locked-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    awkward = ["free", "ü x+y&z", "line\r\nbreak", "tab\tkey", "held"]
    put(s3, bucket, awkward)
    s3.put_object_legal_hold(Bucket=bucket, Key="held", LegalHold={"Status": "ON"})
    r = cli(slipstream_bin, server, "rm", "--recursive", f"s3://{bucket}/", check=False)
    assert r.returncode == 1, r.stderr
    assert f"delete failed: s3://{bucket}/held: AccessDenied".encode() in r.stderr
    assert b"1 object(s) could not be deleted" in r.stderr
    assert r.stdout.decode().count("delete: ") == 4
    assert keys(s3, bucket) == ["held"]
    s3.put_object_legal_hold(Bucket=bucket, Key="held", LegalHold={"Status": "OFF"})
    gone = cli(slipstream_bin, server, "rb", "--force", f"s3://{bucket}")
    assert gone.stdout.decode().splitlines()[-1] == f"remove_bucket: {bucket}"
    assert bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]


def test_copies_on_the_server_keep_metadata_and_checksum(slipstream_bin, server, s3, bucket):
    for name, body in [("empty", b""), ("five", os.urandom(5 * 1024 * 1024))]:
        s3.put_object(Bucket=bucket, Key=f"src/{name}", Body=body, ContentType="text/csv",
                      CacheControl="max-age=60", Metadata={"owner": "data-team"}, ChecksumAlgorithm="CRC32")
        out = cli(slipstream_bin, server, "cp", f"s3://{bucket}/src/{name}", f"s3://{bucket}/dst/", "--json")
        summary = json.loads(out.stdout)
        assert (summary["operation"], summary["bytes"], summary["parts"]) == ("copy", len(body), 0)
        src = s3.head_object(Bucket=bucket, Key=f"src/{name}", ChecksumMode="ENABLED")
        assert src.get("ChecksumCRC32"), "the source has a checksum to keep"
        dst = s3.head_object(Bucket=bucket, Key=f"dst/{name}", ChecksumMode="ENABLED")
        for field in ["ContentType", "CacheControl", "Metadata", "ChecksumCRC32", "ContentLength"]:
            assert dst.get(field) == src.get(field), field
        assert s3.get_object(Bucket=bucket, Key=f"dst/{name}")["Body"].read() == body
    same = cli(slipstream_bin, server, "cp", f"s3://{bucket}/src/five", f"s3://{bucket}/src/five", check=False)
    assert same.returncode == 2 and b"both the source and the destination" in same.stderr
    missing = cli(slipstream_bin, server, "cp", f"s3://{bucket}/nope", f"s3://{bucket}/x", check=False)
    assert missing.returncode == 1 and b"NotFound" in missing.stderr
    # A prefix, with filters, on the server.
    put(s3, bucket, ["tree/a.txt", "tree/sub/b.txt", "tree/sub/c.tmp"])
    out = cli(slipstream_bin, server, "cp", "--recursive", f"s3://{bucket}/tree/", f"s3://{bucket}/copy",
              "--exclude", "*.tmp").stdout.decode()
    assert sorted(out.splitlines()) == [f"copy: s3://{bucket}/tree/a.txt to s3://{bucket}/copy/a.txt",
                                        f"copy: s3://{bucket}/tree/sub/b.txt to s3://{bucket}/copy/sub/b.txt"]
    inside = cli(slipstream_bin, server, "cp", "--recursive", f"s3://{bucket}/tree/", f"s3://{bucket}/tree/x/",
                 check=False)
    assert inside.returncode == 2 and b"inside" in inside.stderr


def test_mv_deletes_each_source_only_after_its_copy(slipstream_bin, server, s3, bucket, tmp_path):
    put(s3, bucket, [f"in/{i:03}" for i in range(30)], body=b"payload")
    out = cli(slipstream_bin, server, "mv", "--recursive", f"s3://{bucket}/in/", f"s3://{bucket}/done/").stdout
    assert out.decode().count("move: ") == 30
    assert keys(s3, bucket) == [f"done/{i:03}" for i in range(30)]
    # A move that cannot copy leaves its source.
    failed = cli(slipstream_bin, server, "mv", f"s3://{bucket}/done/000", "s3://no-such-bucket-here/x", check=False)
    assert failed.returncode == 1 and (
        f"move failed: s3://{bucket}/done/000 to s3://no-such-bucket-here/x: NoSuchBucket".encode()
        in failed.stderr)
    assert "done/000" in keys(s3, bucket)
    # Object to file, file to object.
    dest = tmp_path / "got"
    cli(slipstream_bin, server, "mv", f"s3://{bucket}/done/001", str(dest))
    assert dest.read_bytes() == b"payload" and "done/001" not in keys(s3, bucket)
    cli(slipstream_bin, server, "mv", str(dest), f"s3://{bucket}/back/")
    assert not dest.exists() and "back/got" in keys(s3, bucket)
    refused = cli(slipstream_bin, server, "mv", f"s3://{bucket}/back/got", "-", check=False)
    assert refused.returncode == 2 and "back/got" in keys(s3, bucket)


def test_copy_between_two_services_streams_through_here(slipstream_bin, server, s3, bucket, tmp_path):
    data = os.urandom(7 * 1024 * 1024 + 11)
    s3.put_object(Bucket=bucket, Key="far/obj", Body=data)
    with start_private_server(server, tmp_path) as other:
        cli(slipstream_bin, server, "mb", "s3://other-bucket", endpoint=other["endpoint"])
        cli(slipstream_bin, server, "mv", f"s3://{bucket}/far/obj", "s3://other-bucket/near/obj",
            "--source-endpoint-url", server["endpoint"], "--part-size", "5MiB", endpoint=other["endpoint"])
        back = cli(slipstream_bin, server, "cat", "s3://other-bucket/near/obj", endpoint=other["endpoint"])
        assert back.stdout == data
    assert "far/obj" not in keys(s3, bucket)


def test_du_counts_in_total_and_per_directory(slipstream_bin, server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="a/1", Body=b"x" * 10)
    s3.put_object(Bucket=bucket, Key="a/2", Body=b"x" * 20)
    s3.put_object(Bucket=bucket, Key="b/c/3", Body=b"x" * 2048)
    s3.put_object(Bucket=bucket, Key="top", Body=b"x")
    out = cli(slipstream_bin, server, "du", "--group", f"s3://{bucket}/").stdout.decode().splitlines()
    assert out == [f"30 bytes in 2 objects: s3://{bucket}/a/",
                   f"2048 bytes in 1 objects: s3://{bucket}/b/",
                   f"1 bytes in 1 objects: s3://{bucket}/top",
                   f"2079 bytes in 4 objects: s3://{bucket}/"]
    j = json.loads(cli(slipstream_bin, server, "du", f"s3://{bucket}/b/*", "--json").stdout)
    assert (j["objects"], j["bytes"]) == (1, 2048)
    human = cli(slipstream_bin, server, "du", "-H", f"s3://{bucket}/b").stdout.decode()
    assert human.startswith("2.0 KiB in 1 objects")
    assert cli(slipstream_bin, server, "cat", f"s3://{bucket}/a/1").stdout == b"x" * 10
    missing = cli(slipstream_bin, server, "cat", f"s3://{bucket}/nope", check=False)
    assert missing.returncode == 1 and f"s3://{bucket}/nope: NoSuchKey".encode() in missing.stderr


def test_uploads_and_copies_carry_the_headers_asked_for(slipstream_bin, server, s3, bucket, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_bytes(b"<html></html>")
    (site / "big.bin").write_bytes(os.urandom(6 << 20))  # multipart at 5 MiB parts
    cli(slipstream_bin, server, "cp", str(site / "index.html"), f"s3://{bucket}/guessed.html")
    assert s3.head_object(Bucket=bucket, Key="guessed.html")["ContentType"] == "text/html"
    cli(slipstream_bin, server, "cp", str(site / "index.html"), f"s3://{bucket}/plain.html", "--no-guess-mime-type")
    assert s3.head_object(Bucket=bucket, Key="plain.html")["ContentType"] != "text/html"

    flags = ["--content-type", "text/x-test", "--cache-control", "max-age=60", "--metadata", "owner=me,team=s3"]
    cli(slipstream_bin, server, "sync", str(site), f"s3://{bucket}/s/", "--part-size", "5MiB", *flags)
    for key in ["s/index.html", "s/big.bin"]:
        h = s3.head_object(Bucket=bucket, Key=key)
        assert (h["ContentType"], h["CacheControl"], h["Metadata"]) == \
            ("text/x-test", "max-age=60", {"owner": "me", "team": "s3"}), key
    # A server-side copy keeps the source's headers, or replaces them when asked.
    cli(slipstream_bin, server, "cp", f"s3://{bucket}/s/index.html", f"s3://{bucket}/kept.html")
    assert s3.head_object(Bucket=bucket, Key="kept.html")["Metadata"] == {"owner": "me", "team": "s3"}
    cli(slipstream_bin, server, "cp", f"s3://{bucket}/s/index.html", f"s3://{bucket}/new.html",
        "--metadata", "owner=you", "--content-type", "text/html")
    h = s3.head_object(Bucket=bucket, Key="new.html")
    assert (h["ContentType"], h["Metadata"]) == ("text/html", {"owner": "you"})
    bad = cli(slipstream_bin, server, "cp", str(site / "index.html"), f"s3://{bucket}/x", "--metadata", "novalue",
              check=False)
    assert bad.returncode == 2 and b"KEY=VALUE" in bad.stderr


def on_a_terminal(bin_path, server, *args):
    """Runs the command with standard output and error on a pseudo-terminal (where progress
    bars are drawn); returns its exit code and what reached the terminal."""
    import pty
    import subprocess
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([bin_path, *args, "--endpoint-url", server["endpoint"], "--path-style"],
                                env=cli_env(server), stdout=follower, stderr=follower)
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        return proc.wait(timeout=120), seen
    finally:
        os.close(leader)


def test_the_aws_cli_s_output_flags_no_progress_and_only_show_errors(slipstream_bin, server, bucket, tmp_path):
    """On a terminal a long transfer draws a bar; --no-progress keeps the action lines without
    it, and --only-show-errors (--quiet) prints nothing but errors, for cp, mv and sync."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "big.bin").write_bytes(os.urandom(256 << 20))  # long enough for the bar's 100 ms ticks
    (tree / "small.txt").write_bytes(b"s")
    code, drawn = on_a_terminal(slipstream_bin, server, "cp", "--recursive", str(tree), f"s3://{bucket}/bar/")
    assert code == 0 and b"\r" in drawn and b"upload:" in drawn, "the bar is drawn by default"
    moved = str(tmp_path / "moved.bin")
    for loud, quiet in ((["cp", "--recursive", str(tree), f"s3://{bucket}/plain/"],) * 2,
                        (["sync", str(tree), f"s3://{bucket}/synced/"], ["sync", str(tree), f"s3://{bucket}/s2/"]),
                        (["mv", f"s3://{bucket}/plain/big.bin", moved], ["mv", moved, f"s3://{bucket}/back.bin"])):
        code, lines = on_a_terminal(slipstream_bin, server, *loud, "--no-progress")
        assert code == 0 and b"\r" not in lines.replace(b"\r\n", b"\n") and b"\x1b" not in lines, loud
        assert b"upload:" in lines or b"move:" in lines, (loud, lines)
        code, nothing = on_a_terminal(slipstream_bin, server, *quiet, "--only-show-errors")
        assert code == 0 and nothing == b"", (quiet, nothing)
    code, errors = on_a_terminal(slipstream_bin, server, "cp", f"s3://{bucket}/missing", str(tmp_path / "m"),
                                 "--only-show-errors")
    assert code == 1 and b"NoSuchKey" in errors


def test_metadata_directive_and_copies_in_place_as_the_aws_cli_makes_them(slipstream_bin, server, s3, bucket):
    """--metadata-directive gives what the AWS CLI's gives (the same flags, both tools, the
    objects' headers compared), also onto the source itself; a copy in place that changes
    nothing S3 counts, and any mv in place, are refused before anything is sent."""
    import subprocess
    from test_cli_ls import AWS
    assert AWS.exists(), "the AWS CLI is missing: `make setup` installs it in .tools/awscli-venv"
    env = dict(cli_env(server), AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent")

    def seen(key):
        h = s3.head_object(Bucket=bucket, Key=key)
        return h.get("ContentType"), h.get("CacheControl"), h["Metadata"]

    cases = [["--metadata-directive", "REPLACE"], ["--metadata-directive", "COPY"],
             ["--metadata-directive", "REPLACE", "--content-type", "text/css", "--cache-control", "no-cache"],
             ["--metadata", "x=y"], ["--metadata-directive", "COPY", "--metadata", "x=y"]]
    for i, flags in enumerate(cases):
        for tool, name in ((AWS, "aws"), (slipstream_bin, "ours")):
            s3.put_object(Bucket=bucket, Key=f"{name}{i}/src.js", Body=b"js", ContentType="text/javascript",
                          CacheControl="max-age=60", Metadata={"owner": "me"})
            base = [str(tool), "s3"] if tool == AWS else [tool]
            tail = [] if tool == AWS else ["--path-style"]
            for dst in ("copy.js", "src.js"):  # a new key, then the object itself
                r = subprocess.run([*base, "cp", f"s3://{bucket}/{name}{i}/src.js", f"s3://{bucket}/{name}{i}/{dst}",
                                    *flags, "--endpoint-url", server["endpoint"], *tail],
                                   env=env, capture_output=True, timeout=120)
                in_place_allowed = dst == "copy.js" or "REPLACE" in flags or "--metadata" in flags and "COPY" not in flags
                assert (r.returncode == 0) == in_place_allowed, (name, flags, dst, r.stderr)
        for dst in ("copy.js", "src.js"):
            assert seen(f"ours{i}/{dst}") == seen(f"aws{i}/{dst}"), (flags, dst)
    assert seen("ours1/copy.js") == ("text/javascript", "max-age=60", {"owner": "me"})
    # REPLACE with nothing given (versitygw keeps Cache-Control even then, for both tools).
    assert seen("ours0/src.js")[0::2] == ("binary/octet-stream", {})

    # Beyond the AWS CLI's flags: any content header given replaces (it ignores --content-type
    # without REPLACE), in place too, and --recursive rewrites a prefix in place.
    s3.put_object(Bucket=bucket, Key="site/a.js", Body=b"a", ContentType="text/plain")
    s3.put_object(Bucket=bucket, Key="site/b/c.css", Body=b"c", ContentType="text/plain")
    cli(slipstream_bin, server, "cp", f"s3://{bucket}/site/a.js", f"s3://{bucket}/site/a.js",
        "--content-type", "text/javascript")
    assert seen("site/a.js")[0] == "text/javascript"
    cli(slipstream_bin, server, "cp", "--recursive", f"s3://{bucket}/site/", f"s3://{bucket}/site/",
        "--cache-control", "max-age=5", "--exclude", "*.js")
    assert [seen(k)[1] for k in ("site/a.js", "site/b/c.css")] == [None, "max-age=5"]
    assert sorted(keys(s3, bucket, "site/")) == ["site/a.js", "site/b/c.css"]
    for args in (["cp", f"s3://{bucket}/site/a.js", f"s3://{bucket}/site/a.js"],
                 ["cp", f"s3://{bucket}/site/a.js", f"s3://{bucket}/site/a.js", "--dryrun"],
                 ["cp", "--recursive", f"s3://{bucket}/site/", f"s3://{bucket}/site/", "--acl", "private"],
                 ["mv", f"s3://{bucket}/site/a.js", f"s3://{bucket}/site/a.js", "--content-type", "a/b"],
                 ["mv", "--recursive", f"s3://{bucket}/site/", f"s3://{bucket}/site/", "--content-type", "a/b"]):
        r = cli(slipstream_bin, server, *args, check=False)
        assert r.returncode == 2 and b"both the source and the destination" in r.stderr, args
    assert sorted(keys(s3, bucket, "site/")) == ["site/a.js", "site/b/c.css"], "nothing moved or lost"


def test_page_size_lists_everything_in_shorter_pages(slipstream_bin, server, s3, bucket, tmp_path):
    """The AWS CLI's --page-size: every command that lists follows the shorter pages to the
    end (the pages' length is checked in crates/transfer/tests/versitygw.rs)."""
    put(s3, bucket, [f"p/{i:02}" for i in range(7)])
    listed = cli(slipstream_bin, server, "ls", "--recursive", f"s3://{bucket}/p/", "--page-size", "2").stdout
    assert len(listed.splitlines()) == 7
    du = cli(slipstream_bin, server, "du", f"s3://{bucket}/p/", "--page-size", "3").stdout
    assert b"in 7 objects" in du
    cli(slipstream_bin, server, "cp", "--recursive", f"s3://{bucket}/p/", str(tmp_path / "d"), "--page-size", "2")
    assert len(list((tmp_path / "d").iterdir())) == 7
    cli(slipstream_bin, server, "rm", "--recursive", f"s3://{bucket}/p/", "--page-size", "1")
    assert keys(s3, bucket, "p/") == []
    for bad in ("0", "1001", "x"):
        r = cli(slipstream_bin, server, "ls", f"s3://{bucket}/", "--page-size", bad, check=False)
        assert r.returncode == 2, bad


def test_request_payer_is_sent_signed_with_every_request(slipstream_bin, server, s3, bucket, tmp_path):
    """--request-payer: the header on every request and among the signed ones (a server that
    records what it gets), and requests carrying it pass versitygw's signature check."""
    listing = (b'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name><Prefix></Prefix>'
               b'<KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>')
    with recording_server(listing) as (endpoint, requests):
        for flag in (["--request-payer"], ["--request-payer", "requester"]):
            cli(slipstream_bin, server, "ls", f"s3://{bucket}/", *flag, endpoint=endpoint)
        cli(slipstream_bin, server, "ls", f"s3://{bucket}/", endpoint=endpoint)
    seen = [r["headers"] for r in requests]
    assert [h.get("x-amz-request-payer") for h in seen] == ["requester", "requester", None]
    assert "x-amz-request-payer" in seen[0]["authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")
    # The real server checks the signature with the header in it: up, listed, down.
    (tmp_path / "f").write_bytes(b"paid")
    cli(slipstream_bin, server, "cp", str(tmp_path / "f"), f"s3://{bucket}/f", "--request-payer")
    assert b"f" in cli(slipstream_bin, server, "ls", f"s3://{bucket}/", "--request-payer").stdout
    cli(slipstream_bin, server, "cp", f"s3://{bucket}/f", str(tmp_path / "g"), "--request-payer", "requester")
    assert (tmp_path / "g").read_bytes() == b"paid"
    bad = cli(slipstream_bin, server, "ls", f"s3://{bucket}/", "--request-payer", "owner", check=False)
    assert bad.returncode == 2


def test_no_sign_request_reads_a_public_bucket_without_credentials(slipstream_bin, server, s3, tmp_path):
    """--no-sign-request: no credentials looked for (none exist here) and none sent; a bucket
    whose policy lets anyone read is listed and read, one that does not is refused with a
    note that the request went unsigned; presigning it is refused up front."""
    import subprocess
    public, private = f"pub-{uuid.uuid4().hex[:12]}", f"priv-{uuid.uuid4().hex[:12]}"
    for b in (public, private):
        s3.create_bucket(Bucket=b)
        s3.put_object(Bucket=b, Key="d/a.txt", Body=b"open data")
    policy = {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": "*", "Action": ["s3:GetObject", "s3:ListBucket"],
        "Resource": [f"arn:aws:s3:::{public}", f"arn:aws:s3:::{public}/*"]}]}
    s3.put_bucket_policy(Bucket=public, Policy=json.dumps(policy))
    nobody = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    nobody.update(HOME=str(tmp_path), AWS_REGION=server["region"], AWS_EC2_METADATA_DISABLED="true")

    def anonymous(*args):
        return subprocess.run([slipstream_bin, *args, "--no-sign-request", "--endpoint-url", server["endpoint"],
                               "--path-style"], env=nobody, capture_output=True, timeout=120)

    listed = anonymous("ls", "--recursive", f"s3://{public}/")
    assert listed.returncode == 0 and b"d/a.txt" in listed.stdout, listed.stderr
    assert anonymous("cat", f"s3://{public}/d/a.txt").stdout == b"open data"
    assert anonymous("cp", "--recursive", f"s3://{public}/d/", str(tmp_path / "out")).returncode == 0
    assert (tmp_path / "out" / "a.txt").read_bytes() == b"open data"
    for refused in (anonymous("ls", f"s3://{private}/"), anonymous("cp", str(tmp_path / "out" / "a.txt"),
                                                                    f"s3://{public}/up.txt")):
        assert refused.returncode == 1 and b"AccessDenied" in refused.stderr
        assert b"went unsigned" in refused.stderr, refused.stderr
    assert anonymous("presign", f"s3://{public}/d/a.txt").returncode == 2
    assert anonymous("ls", f"s3://{public}/", "--region-set", "*").returncode == 2
    # Without the flag the same environment has no credentials to find, and says so.
    without = subprocess.run([slipstream_bin, "ls", f"s3://{public}/", "--endpoint-url", server["endpoint"]],
                             env=nobody, capture_output=True, timeout=120)
    assert without.returncode != 0 and b"credentials" in without.stderr


def test_unsigned_requests_carry_no_authorization(slipstream_bin, server, tmp_path):
    """What --no-sign-request sends: no Authorization, no X-Amz-Date, no content hash header
    (a recording server)."""
    with recording_server(b"abcd") as (endpoint, requests):
        cli(slipstream_bin, server, "head", "s3://bkt/k", "--no-sign-request", endpoint=endpoint)
        cli(slipstream_bin, server, "head", "s3://bkt/k", endpoint=endpoint)
    seen = [set(r["headers"]) for r in requests]
    unsigned, signed = seen
    assert not unsigned & {"authorization", "x-amz-date", "x-amz-content-sha256"}, unsigned
    assert {"authorization", "x-amz-date"} <= signed


def test_grants_are_sent_as_the_aws_cli_sends_them(slipstream_bin, server, s3, tmp_path):
    everyone = "uri=http://acs.amazonaws.com/groups/global/AllUsers"
    src = tmp_path / "f.txt"
    src.write_bytes(b"granted")
    grants = ["--grants", f"read={everyone}", "full=id=owner-a,id=owner-b"]
    # What goes on the wire: each permission's x-amz-grant-* header, the grantees as given.
    with recording_server() as (endpoint, requests):
        cli(slipstream_bin, server, "cp", str(src), "s3://bkt/f.txt", *grants, endpoint=endpoint)
    sent = requests[-1]["headers"]
    assert (sent["x-amz-grant-read"], sent["x-amz-grant-full-control"]) == (everyone, "id=owner-a,id=owner-b")
    assert "x-amz-grant-read" in sent["authorization"], "signed"
    # A real server takes them signed (versitygw verifies every signed header); sync too.
    bucket = f"grants-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    cli(slipstream_bin, server, "cp", str(src), f"s3://{bucket}/f.txt", "--grants", f"read={everyone}")
    cli(slipstream_bin, server, "sync", str(tmp_path), f"s3://{bucket}/tree/", "--grants", f"readacl={everyone}")
    assert s3.get_object(Bucket=bucket, Key="tree/f.txt")["Body"].read() == b"granted"
    for bad, said in [(["--grants", "write=id=x"], b"read|readacl|writeacl|full"),
                      (["--grants", "read=id=a", "read=id=b"], b"twice")]:
        r = cli(slipstream_bin, server, "cp", str(src), f"s3://{bucket}/g", *bad, check=False)
        assert r.returncode == 2 and said in r.stderr, r.stderr


def test_mb_tags_make_the_bucket_tagged_as_the_aws_cli_does(slipstream_bin, server, s3):
    bucket = f"tagged-{uuid.uuid4().hex[:12]}"
    made = cli(slipstream_bin, server, "mb", f"s3://{bucket}", "--tags", "team", "data + more", "--tags", "cost", "7")
    assert made.stdout.decode() == f"make_bucket: {bucket}\n"  # the AWS CLI's line
    tags = {t["Key"]: t["Value"] for t in s3.get_bucket_tagging(Bucket=bucket)["TagSet"]}
    assert tags == {"team": "data + more", "cost": "7"}
    r = cli(slipstream_bin, server, "mb", f"s3://{bucket}-2", "--tags", "lonely", check=False)
    assert r.returncode == 2 and b"VALUE" in r.stderr, r.stderr


def test_mb_outside_us_east_1_names_its_region(slipstream_bin, server, tmp_path):
    """As the AWS CLI's mb: a bucket made for another region than us-east-1 carries its
    LocationConstraint (S3's regional endpoints refuse one without), us-east-1's none; a
    versitygw of eu-west-1 makes it and answers its location."""
    import boto3
    with recording_server() as (endpoint, requests):
        for region in ("eu-west-1", "us-east-1"):
            cli(slipstream_bin, server, "mb", "s3://made", "--region", region, endpoint=endpoint)
    bodies = [r["body"] for r in requests]
    assert b"<LocationConstraint>eu-west-1</LocationConstraint>" in bodies[0] and bodies[1] == b""
    regional = dict(server, region="eu-west-1")
    with start_private_server(regional, tmp_path) as private:
        cli(slipstream_bin, private, "mb", "s3://regional", "--region", "eu-west-1", endpoint=private["endpoint"])
        s3 = boto3.client("s3", endpoint_url=private["endpoint"], region_name="eu-west-1",
                          aws_access_key_id=server["access_key"], aws_secret_access_key=server["secret_key"])
        assert s3.get_bucket_location(Bucket="regional")["LocationConstraint"] == "eu-west-1"
        assert "regional" in [b["Name"] for b in s3.list_buckets()["Buckets"]]


def test_dry_run_is_also_s5cmds_spelling(slipstream_bin, server, s3, bucket, tmp_path):
    put(s3, bucket, ["d/a", "d/b"], body=b"x")
    rm = cli(slipstream_bin, server, "rm", "--dry-run", "--recursive", f"s3://{bucket}/d/")
    assert sorted(rm.stdout.decode().splitlines()) == [f"(dryrun) delete: s3://{bucket}/d/a",
                                                       f"(dryrun) delete: s3://{bucket}/d/b"]
    cp = cli(slipstream_bin, server, "cp", "--dry-run", "-r", f"s3://{bucket}/d/", str(tmp_path / "out"))
    assert "(dryrun) download" in cp.stdout.decode() and not (tmp_path / "out").exists()
    sync = cli(slipstream_bin, server, "sync", "--dry-run", f"s3://{bucket}/d/", str(tmp_path / "out"))
    assert "(dryrun) download" in sync.stdout.decode() and not (tmp_path / "out").exists()
    assert keys(s3, bucket, "d/") == ["d/a", "d/b"]
