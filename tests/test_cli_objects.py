"""`slipstream cp/ls/rm/head/mb` against the local versitygw: round trips, errors, exit codes."""

import base64
import json
import os
import resource
import subprocess
import uuid

import awscrt.checksums
import pytest

from support import run_cli


def cli(bin_path, server, *args, check=True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        HOME="/nonexistent",
        AWS_ACCESS_KEY_ID=server["access_key"],
        AWS_SECRET_ACCESS_KEY=server["secret_key"],
        AWS_REGION=server["region"],
    )
    return run_cli(bin_path, *args, "--endpoint-url", server["endpoint"], "--path-style", env=env, check=check)


def test_upload_list_head_download_remove(slipstream_bin, server, tmp_path):
    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}")
    data = os.urandom(12 * 1024 * 1024 + 5)
    src = tmp_path / "big.bin"
    src.write_bytes(data)
    up = cli(slipstream_bin, server, "cp", str(src), f"s3://{bucket}/dir/", "--part-size", "5MiB", "--json")
    summary = json.loads(up.stdout)
    # 5 MiB parts nearby; 10 MiB parts (the far cut, README) when CreateMultipartUpload took
    # 20 ms or more, which a server busy with the rest of the test run can take on loopback.
    assert summary["operation"] == "upload" and summary["bytes"] == len(data) and summary["parts"] in (3, 2)
    head = json.loads(cli(slipstream_bin, server, "head", f"s3://{bucket}/dir/big.bin").stdout)
    assert head["size"] == len(data) and head["etag"]
    listing = cli(slipstream_bin, server, "ls", f"s3://{bucket}/").stdout.decode()
    assert "PRE dir/" in listing
    listing = cli(slipstream_bin, server, "ls", "--recursive", f"s3://{bucket}/").stdout.decode()
    assert f"{len(data)} dir/big.bin" in listing
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    down = cli(slipstream_bin, server, "cp", f"s3://{bucket}/dir/big.bin", str(out_dir), "--concurrency", "3")
    assert b"download:" in down.stderr
    assert b"\x1b" not in down.stderr and b"\r" not in down.stderr, "no progress bar when piped"
    assert (out_dir / "big.bin").read_bytes() == data
    assert sorted(p.name for p in out_dir.iterdir()) == ["big.bin"]
    cli(slipstream_bin, server, "rm", f"s3://{bucket}/dir/big.bin")
    gone = cli(slipstream_bin, server, "head", f"s3://{bucket}/dir/big.bin", check=False)
    assert gone.returncode == 1 and b"NotFound" in gone.stderr


def test_checksum_algorithm_is_sent_shown_and_checked(slipstream_bin, server, tmp_path):
    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}")
    data = os.urandom(11 * 1024 * 1024)
    src = tmp_path / "big.bin"
    src.write_bytes(data)
    up = cli(slipstream_bin, server, "cp", str(src), f"s3://{bucket}/big.bin", "--part-size", "5MiB",
             "--checksum-algorithm", "crc64nvme", "--json")
    assert json.loads(up.stdout)["checksum"] == "CRC64NVME"
    head = json.loads(cli(slipstream_bin, server, "head", f"s3://{bucket}/big.bin").stdout)
    expected = base64.b64encode(awscrt.checksums.crc64nvme(data).to_bytes(8, "big")).decode()
    assert (head["checksum_algorithm"], head["checksum"]) == ("CRC64NVME", expected)
    down = cli(slipstream_bin, server, "cp", f"s3://{bucket}/big.bin", str(tmp_path / "back"), "--json")
    assert json.loads(down.stdout)["checksum"] == "CRC64NVME", "the download checked it"
    assert (tmp_path / "back").read_bytes() == data
    # The AWS CLI's --checksum-mode ENABLED is taken (downloads check either way); another
    # value is refused as the AWS CLI refuses it.
    down = cli(slipstream_bin, server, "cp", f"s3://{bucket}/big.bin", str(tmp_path / "again"), "--json",
               "--checksum-mode", "ENABLED")
    assert json.loads(down.stdout)["checksum"] == "CRC64NVME"
    r = cli(slipstream_bin, server, "sync", f"s3://{bucket}/", str(tmp_path / "s"), "--checksum-mode", "OFF",
            check=False)
    assert r.returncode == 2 and b"ENABLED" in r.stderr
    # The default, CRC32C, leaves a multipart object a checksum of part checksums: none to check.
    cli(slipstream_bin, server, "cp", str(src), f"s3://{bucket}/c.bin", "--part-size", "5MiB")
    head = json.loads(cli(slipstream_bin, server, "head", f"s3://{bucket}/c.bin").stdout)
    assert head["checksum_algorithm"] is None and head["checksum"] is None
    r = cli(slipstream_bin, server, "cp", str(src), f"s3://{bucket}/x", "--checksum-algorithm", "SHA1", check=False)
    assert r.returncode == 2 and b"CRC64NVME" in r.stderr


def test_failures_leave_nothing_and_say_why(slipstream_bin, server, tmp_path):
    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}")
    dest = tmp_path / "missing.bin"
    r = cli(slipstream_bin, server, "cp", f"s3://{bucket}/missing.bin", str(dest), check=False)
    # Which object, and where it was going, as the AWS CLI names them: S3's message does not.
    assert r.returncode == 1 and r.stderr.decode().strip() == (
        f"slipstream: download failed: s3://{bucket}/missing.bin to {dest}: "
        "NoSuchKey: The specified key does not exist. (HTTP 404)")
    assert list(tmp_path.iterdir()) == []
    r = cli(slipstream_bin, server, "cp", __file__, "s3://no-such-bucket-here/", check=False)
    assert r.returncode == 1 and (
        f"upload failed: {__file__} to s3://no-such-bucket-here/test_cli_objects.py: NoSuchBucket".encode()
        in r.stderr)
    r = cli(slipstream_bin, server, "cp", "nope", f"s3://{bucket}/k", "--part-size", "1MiB", check=False)
    assert r.returncode == 2 and b"5MiB" in r.stderr
    r = cli(slipstream_bin, server, "cp", str(tmp_path / "absent"), f"s3://{bucket}/k", check=False)
    assert r.returncode == 1 and b"No such file" in r.stderr
    r = cli(slipstream_bin, server, "cp", "-", "-", check=False)
    assert r.returncode == 2
    r = cli(slipstream_bin, server, "cp", f"s3://{bucket}/", str(tmp_path / "x"), check=False)
    assert r.returncode == 2 and b"must name an object" in r.stderr
    r = cli(slipstream_bin, server, "ls", f"s3://{bucket}/", "--tcp-congestion", "no-such-cc", check=False)
    assert r.returncode == 2 and b'"no-such-cc" refused: this host does not have it' in r.stderr
    # A download that fails leaves none of the directories it made for its file.
    r = cli(slipstream_bin, server, "cp", f"s3://{bucket}/missing.bin", str(tmp_path / "new/dir/"), check=False)
    assert r.returncode == 1 and b"NoSuchKey" in r.stderr
    assert list(tmp_path.iterdir()) == []
    # A file that cannot be written is named in the error, not only the system's reason.
    blocked = tmp_path / "a-file"
    blocked.write_bytes(b"data")
    cli(slipstream_bin, server, "cp", str(blocked), f"s3://{bucket}/k")
    r = cli(slipstream_bin, server, "cp", f"s3://{bucket}/k", str(blocked / "k"), check=False)
    assert r.returncode == 1 and f"cannot make the directory {blocked}".encode() in r.stderr
    r = cli(slipstream_bin, server, "cp", f"s3://{bucket}/k", "/proc/no-such-file", check=False)
    assert r.returncode == 1 and b"slipstream: /proc/no-such-file: No such file" in r.stderr
    # Among many files too (the AWS CLI names each file that failed).
    r = cli(slipstream_bin, server, "cp", "--recursive", f"s3://{bucket}/", str(blocked), check=False)
    assert r.returncode == 1 and f"slipstream: {blocked}: File exists".encode() in r.stderr
    r = cli(slipstream_bin, server, "sync", f"s3://{bucket}/", str(blocked), check=False)
    assert r.returncode == 1 and f"slipstream: {blocked}: Not a directory".encode() in r.stderr
    r = cli(slipstream_bin, server, "cp", str(tmp_path), f"s3://{bucket}/k", check=False)
    assert r.returncode == 2 and b"is a directory" in r.stderr


def test_the_summary_names_where_one_object_went(slipstream_bin, server, tmp_path):
    """`cp f s3://b/dir/` says `s3://b/dir/f`, as the AWS CLI's line does, not the prefix given."""
    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}")
    (tmp_path / "f.txt").write_bytes(b"hello")
    r = cli(slipstream_bin, server, "cp", str(tmp_path / "f.txt"), f"s3://{bucket}")
    assert r.stderr.decode().startswith(f"upload: {tmp_path / 'f.txt'} -> s3://{bucket}/f.txt (5 bytes")
    r = cli(slipstream_bin, server, "cp", f"s3://{bucket}/f.txt", f"s3://{bucket}/copies/")
    assert r.stderr.decode().startswith(f"copy: s3://{bucket}/f.txt -> s3://{bucket}/copies/f.txt (")
    r = cli(slipstream_bin, server, "cp", f"s3://{bucket}/copies/f.txt", f"{tmp_path}/out/")
    assert r.stderr.decode().startswith(f"download: s3://{bucket}/copies/f.txt -> {tmp_path}/out/f.txt (")
    r = cli(slipstream_bin, server, "cp", "--no-clobber", f"s3://{bucket}/f.txt", f"{tmp_path}/out/")
    assert r.stderr.decode().startswith(f"skip: s3://{bucket}/f.txt -> {tmp_path}/out/f.txt: the destination exists")


def test_tcp_congestion_is_used_for_the_transfer(slipstream_bin, server, tmp_path):
    # reno: built into every Linux and allowed without privileges (the Python tests check that
    # it reaches the sockets; this checks the flag reaches the client and a transfer works).
    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}", "--tcp-congestion", "reno")
    data = os.urandom(11 * 1024 * 1024)
    src = tmp_path / "big.bin"
    src.write_bytes(data)
    reno = ("--tcp-congestion", "reno", "--part-size", "5MiB")
    cli(slipstream_bin, server, "cp", str(src), f"s3://{bucket}/big.bin", *reno)
    cli(slipstream_bin, server, "cp", f"s3://{bucket}/big.bin", str(tmp_path / "back.bin"), *reno)
    assert (tmp_path / "back.bin").read_bytes() == data


def test_stdin_stdout_and_s3_to_s3(slipstream_bin, server, tmp_path):
    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}")
    data = os.urandom(11 * 1024 * 1024 + 3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME="/nonexistent", AWS_ACCESS_KEY_ID=server["access_key"],
               AWS_SECRET_ACCESS_KEY=server["secret_key"], AWS_REGION=server["region"])
    conn = ["--endpoint-url", server["endpoint"], "--path-style"]
    up = run_cli(slipstream_bin, "cp", "-", f"s3://{bucket}/from-stdin", "--part-size", "5MiB", "--json", *conn,
                 stdin=data, env=env)
    assert json.loads(up.stdout)["parts"] == 3
    # The AWS CLI's --expected-size cuts parts long enough for it in 10,000: 100 GiB, parts of
    # 10.7 MB, so two here.
    up = run_cli(slipstream_bin, "cp", "-", f"s3://{bucket}/expected", "--part-size", "5MiB", "--json",
                 "--expected-size", "100GiB", *conn, stdin=data, env=env)
    assert json.loads(up.stdout)["parts"] == 2
    # Data through a pipe: nothing else printed, as the AWS CLI prints nothing there.
    quiet_down = run_cli(slipstream_bin, "cp", f"s3://{bucket}/expected", "-", *conn, env=env)
    assert quiet_down.stdout == data and quiet_down.stderr == b""
    quiet_up = run_cli(slipstream_bin, "cp", "-", f"s3://{bucket}/quiet", *conn, stdin=b"hello", env=env)
    assert quiet_up.stdout == b"" and quiet_up.stderr == b""
    down = run_cli(slipstream_bin, "cp", f"s3://{bucket}/from-stdin", "-", "--json", "--concurrency", "2", *conn, env=env)
    assert down.stdout == data
    assert json.loads(down.stderr)["bytes"] == len(data)
    cli(slipstream_bin, server, "cp", f"s3://{bucket}/from-stdin", f"s3://{bucket}/copied", "--part-size", "5MiB")
    copied = run_cli(slipstream_bin, "cp", f"s3://{bucket}/copied", "-", *conn, env=env)
    assert copied.stdout == data


def test_pipe_uploads_standard_input_as_s5cmds_pipe_with_cps_flags(slipstream_bin, server, tmp_path):
    """s5cmd's `pipe s3://b/k`: `cp - s3://b/k`, every cp flag taken (here the content type and
    metadata); the same object s5cmd's pipe makes from the same bytes."""
    from support import S5CMD, cli_env
    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}")
    data = os.urandom(6 * 1024 * 1024 + 7)
    env = cli_env(server)
    conn = ["--endpoint-url", server["endpoint"], "--path-style"]
    run_cli(slipstream_bin, "pipe", f"s3://{bucket}/ours", "--content-type", "text/csv", "--metadata", "a=1",
            "--part-size", "5MiB", *conn, stdin=data, env=env)
    head = json.loads(cli(slipstream_bin, server, "head", f"s3://{bucket}/ours").stdout)
    assert (head["size"], head["content_type"], head["metadata"]) == (len(data), "text/csv", {"a": "1"})
    s5 = subprocess.run([str(S5CMD), "--endpoint-url", server["endpoint"], "pipe",
                         f"s3://{bucket}/theirs"], input=data, env=env, capture_output=True, timeout=120)
    assert s5.returncode == 0, s5.stderr
    ours = cli(slipstream_bin, server, "cat", f"s3://{bucket}/ours").stdout
    assert ours == cli(slipstream_bin, server, "cat", f"s3://{bucket}/theirs").stdout == data
    local = run_cli(slipstream_bin, "pipe", str(tmp_path / "f"), *conn, env=env, check=False)
    assert local.returncode == 2 and b"pipe uploads standard input" in local.stderr
    helped = run_cli(slipstream_bin, "pipe", "--help", env=env)
    assert b"--content-type" in helped.stdout


def test_recursive_copies_a_tree_both_ways(slipstream_bin, server, tmp_path):
    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}")
    src = tmp_path / "src"
    names = ["a.txt", "sub dir/ü.bin", "sub dir/deeper/x+y.dat"]
    for i, name in enumerate(names):
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes(os.urandom(1000 * (i + 1)))
    up = json.loads(cli(slipstream_bin, server, "cp", "-r", str(src), f"s3://{bucket}/tree", "--objects", "2", "--json").stdout)
    assert up["objects"] == 3 and up["bytes"] == 6000
    listing = cli(slipstream_bin, server, "ls", "--recursive", f"s3://{bucket}/tree/").stdout.decode()
    assert all(f"tree/{n}" in listing for n in names)
    dest = tmp_path / "dest"
    down = json.loads(cli(slipstream_bin, server, "cp", "--recursive", f"s3://{bucket}/tree/", str(dest), "--json").stdout)
    assert down["objects"] == 3
    for name in names:
        assert (dest / name).read_bytes() == (src / name).read_bytes()


def test_https_with_ca_bundle(slipstream_bin, server, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME="/nonexistent", AWS_ACCESS_KEY_ID=server["access_key"],
               AWS_SECRET_ACCESS_KEY=server["secret_key"], AWS_REGION=server["region"])
    tls = ["--endpoint-url", os.environ["SLIPSTREAM_TEST_TLS_ENDPOINT"], "--path-style"]
    ca = os.environ["SLIPSTREAM_TEST_CA"]
    bucket = f"tls-{uuid.uuid4().hex[:16]}"
    run_cli(slipstream_bin, "mb", f"s3://{bucket}", *tls, "--ca-bundle", ca, env=env)
    src = tmp_path / "f"
    src.write_bytes(os.urandom(100_000))
    run_cli(slipstream_bin, "cp", str(src), f"s3://{bucket}/f", *tls, env=dict(env, AWS_CA_BUNDLE=ca))
    out = run_cli(slipstream_bin, "cp", f"s3://{bucket}/f", "-", *tls, "--ca-bundle", ca, env=env)
    assert out.stdout == src.read_bytes()
    refused = run_cli(slipstream_bin, "head", f"s3://{bucket}/f", *tls, env=env, check=False)
    assert refused.returncode == 1 and b"certificate" in refused.stderr.lower()


def test_killed_or_full_leaves_nothing_that_looks_complete(slipstream_bin, server, tmp_path):
    import signal
    import subprocess

    from relay import Relay
    from support import cli_env, wait_for

    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}")
    data = os.urandom(64 * 1024 * 1024)
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    cli(slipstream_bin, server, "cp", str(src), f"s3://{bucket}/big")
    env = cli_env(server)
    conn = ["--endpoint-url", server["endpoint"], "--path-style"]
    out = tmp_path / "out"
    out.mkdir()
    dest = out / "big.bin"
    # Through a relay at 8 MiB/s (8 s for the object), so the kill surely lands mid-transfer:
    # once the temporary file exists and data has arrived, the download cannot have finished.
    with Relay(server["endpoint"], rate=8 << 20) as relay:
        proc = subprocess.Popen([slipstream_bin, "cp", f"s3://{bucket}/big", str(dest), "--concurrency", "2",
                                 "--part-size", "5MiB", "--endpoint-url", relay.endpoint, "--path-style"],
                                env=env, stderr=subprocess.DEVNULL)
        wait_for(lambda: any(out.iterdir()) and relay.relayed_down > (2 << 20), 30, "the download to start")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the download ended before the kill"
    # Killed mid-way: nothing under the destination's name (the hidden temporary file stays:
    # SIGKILL cannot be caught).
    assert not dest.exists()
    assert [p.name for p in out.iterdir() if not p.name.startswith(".")] == []
    # Standard output on a full disk: an error, exit 1.
    with open("/dev/full", "wb") as full:
        r = subprocess.run([slipstream_bin, "cp", f"s3://{bucket}/big", "-", *conn], env=env,
                           stdout=full, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 1 and b"No space left" in r.stderr, r.stderr


def test_a_full_disk_fails_the_download_and_leaves_nothing(slipstream_bin, server, tmp_path):
    """A 40 MiB object into a 20 MiB file system: a clear error, no file, no temporary file."""
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root")
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(small)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        bucket = f"cli-{uuid.uuid4().hex[:16]}"
        cli(slipstream_bin, server, "mb", f"s3://{bucket}")
        src = tmp_path / "big.bin"
        src.write_bytes(os.urandom(40 * 1024 * 1024))
        cli(slipstream_bin, server, "cp", str(src), f"s3://{bucket}/big.bin")
        r = cli(slipstream_bin, server, "cp", f"s3://{bucket}/big.bin", str(small / "big.bin"), check=False)
        assert r.returncode == 1 and b"No space left on device" in r.stderr
        assert list(small.iterdir()) == [], "neither the file nor its temporary file is left"
        r = cli(slipstream_bin, server, "cp", "--recursive", f"s3://{bucket}/", str(small / "tree"), check=False)
        assert r.returncode == 1 and b"No space left on device" in r.stderr
        assert [p for p in small.rglob("*") if p.is_file()] == []
    finally:
        subprocess.run(["umount", str(small)], check=True)


def test_object_headers_acl_and_encryption_flags(slipstream_bin, server, s3, tmp_path):
    """The AWS CLI's upload flags reach the object, single and multipart; a server-side copy
    with flags replaces the content headers (and keeps none it was not given)."""
    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}")
    small, big = tmp_path / "small.txt", tmp_path / "big.bin"
    small.write_bytes(b"hello")
    big.write_bytes(os.urandom((5 << 20) + 7))
    flags = [
        "--content-disposition", 'attachment; filename="report.pdf"', "--content-encoding", "gzip",
        "--content-language", "fr", "--expires", "Wed, 02 Jan 2030 03:04:05 GMT",
        "--website-redirect", "/moved.html", "--acl", "private", "--sse", "AES256",
    ]
    cli(slipstream_bin, server, "cp", str(small), f"s3://{bucket}/small.txt", *flags)
    cli(slipstream_bin, server, "cp", str(big), f"s3://{bucket}/big.bin", "--part-size", "5MiB", *flags)
    for key in ["small.txt", "big.bin"]:
        h = s3.head_object(Bucket=bucket, Key=key)
        got = (h["ContentDisposition"], h["ContentEncoding"], h["ContentLanguage"], h["ExpiresString"], h["WebsiteRedirectLocation"])
        assert got == ('attachment; filename="report.pdf"', "gzip", "fr", "Wed, 02 Jan 2030 03:04:05 GMT", "/moved.html"), key
    cli(slipstream_bin, server, "cp", f"s3://{bucket}/small.txt", f"s3://{bucket}/copy.txt", "--content-language", "de", "--acl", "private")
    h = s3.head_object(Bucket=bucket, Key="copy.txt")
    assert h["ContentLanguage"] == "de"
    assert "ContentEncoding" not in h and "ContentDisposition" not in h, "replaced, not merged"
    bad = cli(slipstream_bin, server, "cp", str(small), f"s3://{bucket}/x", "--acl", "everyone", check=False)
    assert bad.returncode == 2
    # --expires reads as botocore reads a timestamp and goes as an HTTP date; text that is no
    # date is refused rather than stored.
    cli(slipstream_bin, server, "cp", str(small), f"s3://{bucket}/iso.txt", "--expires", "2030-01-02T03:04:05Z")
    assert s3.head_object(Bucket=bucket, Key="iso.txt")["ExpiresString"] == "Wed, 02 Jan 2030 03:04:05 GMT"
    bad = cli(slipstream_bin, server, "cp", str(small), f"s3://{bucket}/x", "--expires", "soon", check=False)
    assert bad.returncode == 2 and b"is not a date" in bad.stderr


def test_head_shows_what_boto3_head_object_shows_and_checks_buckets(slipstream_bin, server, s3, tmp_path):
    """`head` prints the headers, metadata and storage class boto3 reads from the same object;
    of a bucket, that it exists (exit 1 with NoSuchBucket when not, as for a missing object)."""
    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}")
    src = tmp_path / "page.html"
    src.write_bytes(b"<p>\xc3\xa9</p>")
    cli(slipstream_bin, server, "cp", str(src), f"s3://{bucket}/dir/page.html", "--cache-control", "max-age=60",
        "--content-language", "fr", "--metadata", "owner=me,team=s3")
    s3.put_object(Bucket=bucket, Key="dir/", Body=b"")  # a "folder" marker is an object too
    head = json.loads(cli(slipstream_bin, server, "head", f"s3://{bucket}/dir/page.html").stdout)
    b = s3.head_object(Bucket=bucket, Key="dir/page.html", ChecksumMode="ENABLED")
    assert head == {
        "key": f"s3://{bucket}/dir/page.html", "size": b["ContentLength"], "etag": b["ETag"].strip('"'),
        "last_modified": b["ResponseMetadata"]["HTTPHeaders"]["last-modified"],
        "storage_class": b.get("StorageClass", "STANDARD"), "content_type": "text/html",
        "cache_control": "max-age=60", "content_language": "fr", "metadata": {"owner": "me", "team": "s3"},
        "checksum_algorithm": "CRC32C", "checksum": b["ChecksumCRC32C"],
    }
    marker = json.loads(cli(slipstream_bin, server, "head", f"s3://{bucket}/dir/").stdout)
    assert (marker["key"], marker["size"], marker["metadata"]) == (f"s3://{bucket}/dir/", 0, {})
    assert json.loads(cli(slipstream_bin, server, "head", f"s3://{bucket}").stdout) == {"bucket": f"s3://{bucket}"}
    missing = cli(slipstream_bin, server, "head", f"s3://{bucket}-gone", check=False)
    assert missing.returncode == 1 and b"NoSuchBucket" in missing.stderr and missing.stdout == b""


def test_many_objects_in_flight_are_not_held_to_a_logins_open_files(slipstream_bin, server, tmp_path):
    """256 objects in flight hold more sockets and files than a soft limit of 128 open files
    allows: the command raises its soft limit to the hard one (as Go programs such as s5cmd
    do), so neither direction fails halfway with "Too many open files"."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1024:
        pytest.skip(f"the hard limit on open files here is {hard}")
    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}")
    src = tmp_path / "src"
    src.mkdir()
    for i in range(300):
        (src / f"f{i:03}").write_bytes(i.to_bytes(2, "big") * 512)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME="/nonexistent", AWS_ACCESS_KEY_ID=server["access_key"],
               AWS_SECRET_ACCESS_KEY=server["secret_key"], AWS_REGION=server["region"])

    def limited():
        resource.setrlimit(resource.RLIMIT_NOFILE, (128, hard))

    def cp(a, b):
        proc = subprocess.run([slipstream_bin, "cp", "--recursive", a, b, "--objects", "256", "--quiet",
                               "--endpoint-url", server["endpoint"], "--path-style"],
                              env=env, capture_output=True, preexec_fn=limited, timeout=120)
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")

    cp(str(src), f"s3://{bucket}/t/")
    cp(f"s3://{bucket}/t/", str(tmp_path / "out"))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(p.name for p in src.iterdir())
    assert all((tmp_path / "out" / p.name).read_bytes() == p.read_bytes() for p in src.iterdir())


def test_local_names_that_are_not_utf8_are_taken_as_the_aws_cli_takes_them(slipstream_bin, server, s3, tmp_path):
    """A Latin-1 file name goes to a key that is given and comes back under any name; a key
    that would be made from it is refused with the way out; an s3:// URL must be UTF-8."""
    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}")
    root = os.fsencode(tmp_path)
    latin1 = root + b"/caf\xe9.txt"
    with open(latin1, "wb") as f:
        f.write(b"latin")
    cli(slipstream_bin, server, "cp", latin1, f"s3://{bucket}/cafe.txt")
    assert s3.get_object(Bucket=bucket, Key="cafe.txt")["Body"].read() == b"latin"
    r = cli(slipstream_bin, server, "cp", latin1, f"s3://{bucket}/dir/", check=False)
    assert r.returncode == 2 and b"not valid UTF-8" in r.stderr and f"s3://{bucket}/dir/KEY".encode() in r.stderr
    cli(slipstream_bin, server, "cp", f"s3://{bucket}/cafe.txt", root + b"/back\xe9.txt")
    with open(root + b"/back\xe9.txt", "rb") as f:
        assert f.read() == b"latin"
    r = cli(slipstream_bin, server, "cp", latin1, f"s3://{bucket}/k\xe9".encode("latin-1"), check=False)
    assert r.returncode == 2 and b"is not valid UTF-8, as S3 keys must be" in r.stderr
    # A directory so named: uploaded, synced, downloaded into another, moved (its files go).
    tree = root + b"/d\xe9"
    os.mkdir(tree)
    with open(tree + b"/a", "wb") as f:
        f.write(b"a")
    cli(slipstream_bin, server, "cp", "--recursive", tree, f"s3://{bucket}/t/")
    cli(slipstream_bin, server, "sync", tree, f"s3://{bucket}/s/")
    cli(slipstream_bin, server, "cp", "--recursive", f"s3://{bucket}/t/", root + b"/out\xe9")
    with open(root + b"/out\xe9/a", "rb") as f:
        assert f.read() == b"a"
    cli(slipstream_bin, server, "mv", "--recursive", tree, f"s3://{bucket}/m/")
    assert os.listdir(tree) == []
    listed = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"])
    assert listed == ["cafe.txt", "m/a", "s/a", "t/a"]


def test_no_verify_ssl_trusts_any_certificate_and_says_so(slipstream_bin, server, tmp_path):
    """The AWS CLI's and s5cmd's --no-verify-ssl: the throwaway CA's server is refused without
    a bundle, reached with the option, and a warning says what it costs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME="/nonexistent", AWS_ACCESS_KEY_ID=server["access_key"],
               AWS_SECRET_ACCESS_KEY=server["secret_key"], AWS_REGION=server["region"])
    tls = ["--endpoint-url", os.environ["SLIPSTREAM_TEST_TLS_ENDPOINT"], "--path-style"]
    bucket = f"tls-{uuid.uuid4().hex[:16]}"
    refused = run_cli(slipstream_bin, "mb", f"s3://{bucket}", *tls, env=env, check=False)
    assert refused.returncode == 1 and b"certificate" in refused.stderr.lower()
    made = run_cli(slipstream_bin, "mb", f"s3://{bucket}", *tls, "--no-verify-ssl", env=env)
    assert b"warning: --no-verify-ssl" in made.stderr
    data = os.urandom(100_000)
    run_cli(slipstream_bin, "cp", "-", f"s3://{bucket}/f", *tls, "--no-verify-ssl", stdin=data, env=env)
    out = run_cli(slipstream_bin, "cp", f"s3://{bucket}/f", "-", *tls, "--no-verify-ssl", env=env)
    assert out.stdout == data


def test_no_verify_ssl_never_fetches_credentials_unchecked(slipstream_bin, server, tmp_path):
    """Credentials are fetched over checked connections whatever --no-verify-ssl says: STS for a
    web identity, sent to the throwaway CA's server, is refused for its certificate (an
    unchecked fetch would have reached it and failed on its answer instead)."""
    token = tmp_path / "token"
    token.write_text("a-web-identity-token")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    tls_endpoint = os.environ["SLIPSTREAM_TEST_TLS_ENDPOINT"]
    env.update(HOME="/nonexistent", AWS_REGION=server["region"], AWS_WEB_IDENTITY_TOKEN_FILE=str(token),
               AWS_ROLE_ARN="arn:aws:iam::123456789012:role/r", AWS_ENDPOINT_URL_STS=tls_endpoint)
    failed = run_cli(slipstream_bin, "ls", "s3://b/", "--endpoint-url", tls_endpoint, "--path-style", "--no-verify-ssl",
                     env=env, check=False)
    assert failed.returncode != 0 and b"invalid peer certificate" in failed.stderr, failed.stderr
    # The token is posted in a form, as botocore posts it, and never named in an error.
    assert b"a-web-identity-token" not in failed.stderr


def test_a_download_to_a_device_or_pipe_writes_into_it_and_leaves_it_one(slipstream_bin, server, tmp_path):
    """`cp s3://b/k /dev/null` and friends: the data goes into the device or pipe, in order, as
    the AWS CLI writes "special files"; a temporary file renamed over it would replace the
    device (as root, /dev/null with the object). A FIFO stands in for the device here, read by
    a thread, and a link to it too."""
    import stat
    import threading

    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(slipstream_bin, server, "mb", f"s3://{bucket}")
    data = os.urandom(12 * 1024 * 1024 + 7)  # three parts, written in order
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    cli(slipstream_bin, server, "cp", str(src), f"s3://{bucket}/k")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    for dest in [fifo, link]:
        got = []
        reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
        reader.start()
        cli(slipstream_bin, server, "cp", f"s3://{bucket}/k", str(dest), "--part-size", "5MiB")
        reader.join(timeout=60)
        assert got == [data], dest
        assert stat.S_ISFIFO(os.stat(fifo, follow_symlinks=False).st_mode), "still a pipe"
        assert link.is_symlink(), "the link is kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "pipe", "src.bin"], "no temporary file"


def test_an_upload_from_a_pipe_reads_it_to_its_end(slipstream_bin, server, s3, bucket, tmp_path):
    """`cp <(command) s3://b/k`, `cp /dev/stdin s3://b/k`: a pipe has no size (its stat says 0),
    so it is read as a stream, as `-` is, where its size made an empty object before (the AWS
    CLI skips such a file with a warning)."""
    import threading

    data = os.urandom(6 * 1024 * 1024 + 3)  # two parts at 5 MiB
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(data), daemon=True)
    writer.start()
    cli(slipstream_bin, server, "cp", str(fifo), f"s3://{bucket}/from-pipe", "--part-size", "5MiB")
    writer.join(timeout=60)
    assert s3.get_object(Bucket=bucket, Key="from-pipe")["Body"].read() == data
