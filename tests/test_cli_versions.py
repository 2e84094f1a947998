"""Versioned buckets through the CLI, on a versitygw with versioning, checked with boto3:
`ls --all-versions`, and `--version-id` on cat, head, cp (to a file, to standard output, on
the server, onto its own key) and rm, as s5cmd offers them."""

import hashlib
import json
import os

from support import cli_env, run_cli


def cli(bin_path, server, *args, check=True):
    return run_cli(bin_path, *args, "--endpoint-url", server["endpoint"], "--path-style",
                   env=cli_env(server), check=check)


def put_versions(server, bucket):
    """Two versions of a/k, a deleted b (a version behind a delete marker), and c: each
    version's ID, newest first, as boto3 lists them."""
    s3 = server["boto3"]
    s3.put_object(Bucket=bucket, Key="a/k", Body=b"first")
    s3.put_object(Bucket=bucket, Key="a/k", Body=b"second!")
    s3.put_object(Bucket=bucket, Key="b", Body=b"gone")
    s3.delete_object(Bucket=bucket, Key="b")
    s3.put_object(Bucket=bucket, Key="c", Body=b"c")
    listing = s3.list_object_versions(Bucket=bucket)
    ids = {}
    for v in listing.get("Versions", []):
        ids.setdefault(v["Key"], []).append((v["LastModified"], v["VersionId"], False))
    for m in listing.get("DeleteMarkers", []):
        ids.setdefault(m["Key"], []).append((m["LastModified"], m["VersionId"], True))
    return ids, listing


def test_ls_all_versions_names_every_version_and_marker(slipstream_bin, versioned_server, versioned_bucket):
    server, bucket = versioned_server, versioned_bucket
    _, listing = put_versions(server, bucket)
    want = {(v["Key"], v["VersionId"], False, v["IsLatest"]) for v in listing["Versions"]}
    want |= {(m["Key"], m["VersionId"], True, m["IsLatest"]) for m in listing["DeleteMarkers"]}
    out = cli(slipstream_bin, server, "ls", "--all-versions", "--recursive", "--json", f"s3://{bucket}/").stdout
    lines = [json.loads(line) for line in out.decode().splitlines()]
    got = {(o["key"].removeprefix(f"s3://{bucket}/"), o["version_id"], o.get("delete_marker", False),
            o["is_latest"]) for o in lines}
    assert got == want
    # Each key's current version comes first, as S3 lists them.
    keys = [o["key"] for o in lines]
    assert keys == sorted(keys)
    for key in set(keys):
        assert [o["is_latest"] for o in lines if o["key"] == key][0] is True
    # Pages of 2: versitygw starts each page with the last entry of the one before; listed once.
    paged = cli(slipstream_bin, server, "ls", "--all-versions", "--recursive", "--json", "--page-size", "2",
                f"s3://{bucket}/").stdout
    assert [json.loads(line) for line in paged.decode().splitlines()] == lines
    sizes = {o["version_id"]: o.get("size") for o in lines}
    assert sorted(s for s in sizes.values() if s is not None) == [1, 4, 5, 7]
    # Text: the version ID last, a delete marker said so; one level unless --recursive.
    text = cli(slipstream_bin, server, "ls", "--all-versions", f"s3://{bucket}/").stdout.decode()
    rows = text.splitlines()
    assert rows[0].split() == ["PRE", "a/"]
    marker = next(m for m in listing["DeleteMarkers"] if m["Key"] == "b")
    assert any(r.endswith(f" (deleted) b  {marker['VersionId']}") for r in rows), text
    assert not any(" a/k " in r for r in rows)
    summary = cli(slipstream_bin, server, "ls", "--all-versions", "--summarize", f"s3://{bucket}/a/").stdout.decode()
    assert "Total Objects: 2" in summary and "Total Size: 12" in summary
    # A wildcard's matches, and one that matches nothing (exit 1, as ls).
    matched = cli(slipstream_bin, server, "ls", "--all-versions", f"s3://{bucket}/a/*").stdout.decode()
    assert len(matched.splitlines()) == 2
    none = cli(slipstream_bin, server, "ls", "--all-versions", f"s3://{bucket}/z*", check=False)
    assert none.returncode == 1 and b"no object matches" in none.stderr
    # du counts every version's bytes (delete markers hold none), plain du the current ones.
    du = cli(slipstream_bin, server, "du", "--all-versions", "--json", f"s3://{bucket}/").stdout
    assert json.loads(du) == {"prefix": f"s3://{bucket}/", "objects": 4, "bytes": 17}
    du = cli(slipstream_bin, server, "du", "--json", f"s3://{bucket}/").stdout
    assert json.loads(du) == {"prefix": f"s3://{bucket}/", "objects": 2, "bytes": 8}
    buckets = cli(slipstream_bin, server, "ls", "--all-versions", check=False)
    assert buckets.returncode == 2 and b"--all-versions" in buckets.stderr
    # s5cmd's columns and filters: a delete marker has no class or ETag ("-"); whole names.
    columns = cli(slipstream_bin, server, "ls", "--all-versions", "-s", "-e", f"s3://{bucket}/b").stdout.decode()
    assert f" - -  (deleted) b  {marker['VersionId']}" in columns, columns
    assert f" STANDARD {hashlib.md5(b'gone').hexdigest()}          4 b  " in columns, columns
    paths = cli(slipstream_bin, server, "ls", "--all-versions", "--recursive", "--show-fullpath", "--exclude", "a/*",
                f"s3://{bucket}/").stdout.decode()
    assert sorted(paths.splitlines()) == [f"s3://{bucket}/b"] * 2 + [f"s3://{bucket}/c"], paths


def test_version_id_reads_copies_restores_and_deletes_one_version(slipstream_bin, versioned_server,
                                                                   versioned_bucket, tmp_path):
    server, bucket = versioned_server, versioned_bucket
    ids, _ = put_versions(server, bucket)
    s3 = server["boto3"]
    old = next(v for _, v, _ in ids["a/k"] if s3.head_object(Bucket=bucket, Key="a/k", VersionId=v)["ContentLength"] == 5)
    behind_marker = next(v for _, v, marker in ids["b"] if not marker)

    assert cli(slipstream_bin, server, "cat", f"s3://{bucket}/a/k").stdout == b"second!"
    assert cli(slipstream_bin, server, "cat", "--version-id", old, f"s3://{bucket}/a/k").stdout == b"first"
    head = json.loads(cli(slipstream_bin, server, "head", "--version-id", old, f"s3://{bucket}/a/k").stdout)
    assert head["version_id"] == old and head["size"] == 5
    # The data behind a delete marker: a plain read says NoSuchKey, and why; the version is there.
    deleted = cli(slipstream_bin, server, "cat", f"s3://{bucket}/b", check=False)
    assert deleted.returncode == 1 and b"its current version is a delete marker" in deleted.stderr
    marker = next(v for _, v, is_marker in ids["b"] if is_marker)
    headed = cli(slipstream_bin, server, "head", "--version-id", marker, f"s3://{bucket}/b", check=False)
    assert headed.returncode == 1 and b"that version is a delete marker" in headed.stderr
    dest = tmp_path / "b.out"
    cli(slipstream_bin, server, "cp", "--version-id", behind_marker, f"s3://{bucket}/b", str(dest))
    assert dest.read_bytes() == b"gone"
    piped = cli(slipstream_bin, server, "cp", "--version-id", old, f"s3://{bucket}/a/k", "-")
    assert piped.stdout == b"first"
    # On the server, to another key, and onto its own key: the old version is current again.
    cli(slipstream_bin, server, "cp", "--version-id", old, f"s3://{bucket}/a/k", f"s3://{bucket}/old-k")
    assert s3.get_object(Bucket=bucket, Key="old-k")["Body"].read() == b"first"
    cli(slipstream_bin, server, "cp", "--version-id", old, f"s3://{bucket}/a/k", f"s3://{bucket}/a/k")
    assert s3.get_object(Bucket=bucket, Key="a/k")["Body"].read() == b"first"
    assert len(s3.list_object_versions(Bucket=bucket, Prefix="a/k")["Versions"]) == 3
    # rm --version-id removes that version for good, and only it.
    deleted = cli(slipstream_bin, server, "rm", "--version-id", old, f"s3://{bucket}/a/k")
    assert f"delete: s3://{bucket}/a/k (version {old})" in deleted.stdout.decode()
    left = {v["VersionId"] for v in s3.list_object_versions(Bucket=bucket, Prefix="a/k")["Versions"]}
    assert old not in left and len(left) == 2
    missing = cli(slipstream_bin, server, "cat", "--version-id", old, f"s3://{bucket}/a/k", check=False)
    assert missing.returncode == 1 and missing.stderr


def test_a_version_is_read_in_parallel_parts_of_that_version(slipstream_bin, versioned_server,
                                                             versioned_bucket, tmp_path):
    """Every ranged GET of a download names the version: were one to read the current version,
    its other ETag would fail the download instead of mixing two versions' bytes."""
    server, bucket = versioned_server, versioned_bucket
    s3 = server["boto3"]
    old, new = os.urandom(13 * 1024 * 1024), os.urandom(13 * 1024 * 1024)
    first = s3.put_object(Bucket=bucket, Key="big", Body=old)["VersionId"]
    s3.put_object(Bucket=bucket, Key="big", Body=new)
    dest = tmp_path / "big.old"
    cli(slipstream_bin, server, "cp", "--version-id", first, "--part-size", "5MiB", "--concurrency", "4",
        f"s3://{bucket}/big", str(dest))
    assert dest.read_bytes() == old
    assert cli(slipstream_bin, server, "cat", "--version-id", first, f"s3://{bucket}/big").stdout == old


def test_version_id_is_refused_where_it_names_no_one_version(slipstream_bin, versioned_server, versioned_bucket,
                                                             tmp_path):
    server, bucket = versioned_server, versioned_bucket
    for args in (
        ["mv", "--version-id", "v1", f"s3://{bucket}/a/k", str(tmp_path / "x")],
        ["cp", "--version-id", "v1", "--recursive", f"s3://{bucket}/a/", str(tmp_path)],
        ["cp", "--version-id", "v1", f"s3://{bucket}/a/*", str(tmp_path)],
        ["cp", "--version-id", "v1", str(tmp_path), f"s3://{bucket}/a/k"],
        ["rm", "--version-id", "v1", "--recursive", f"s3://{bucket}/a/"],
        ["rm", "--version-id", "v1", f"s3://{bucket}/a/k", f"s3://{bucket}/b"],
        ["head", "--version-id", "v1", f"s3://{bucket}"],
    ):
        refused = cli(slipstream_bin, server, *args, check=False)
        assert refused.returncode == 2 and b"version" in refused.stderr, args


def test_rm_all_versions_empties_what_it_names_and_then_the_bucket(slipstream_bin, versioned_server,
                                                                  versioned_bucket):
    server, bucket = versioned_server, versioned_bucket
    s3 = server["boto3"]
    put_versions(server, bucket)
    for i in range(30):
        s3.put_object(Bucket=bucket, Key=f"many/{i:02}", Body=b"x")
        s3.put_object(Bucket=bucket, Key=f"many/{i:02}", Body=b"y")
    s3.put_object(Bucket=bucket, Key="many/folder/", Body=b"")
    s3.put_object(Bucket=bucket, Key="many/keep.log", Body=b"k")

    # A dry run names every version and deletes none.
    dry = cli(slipstream_bin, server, "rm", "--all-versions", "--recursive", "--dryrun", f"s3://{bucket}/many/")
    assert len(dry.stdout.decode().splitlines()) == 62
    assert len(s3.list_object_versions(Bucket=bucket, Prefix="many/")["Versions"]) == 62
    # Filters, and small pages so that deletes run while the listing goes on.
    cli(slipstream_bin, server, "rm", "--all-versions", "--recursive", "--page-size", "7", "--batches", "2",
        f"s3://{bucket}/many/", "--exclude", "*.log")
    left = s3.list_object_versions(Bucket=bucket, Prefix="many/")
    assert [v["Key"] for v in left.get("Versions", [])] == ["many/keep.log"] and not left.get("DeleteMarkers")
    # One key's versions, and its delete marker: b is gone for good.
    out = cli(slipstream_bin, server, "rm", "--all-versions", f"s3://{bucket}/b").stdout.decode()
    assert len(out.splitlines()) == 2 and all(line.startswith(f"delete: s3://{bucket}/b (version ") for line in out.splitlines())
    assert not [v for v in s3.list_object_versions(Bucket=bucket, Prefix="b").get("Versions", [])]
    none = cli(slipstream_bin, server, "rm", "--all-versions", f"s3://{bucket}/zz*", check=False)
    assert none.returncode == 1 and b"no object matches" in none.stderr

    # rb --force removes current objects only: the versions left are named, with the way out.
    refused = cli(slipstream_bin, server, "rb", "--force", f"s3://{bucket}", check=False)
    assert refused.returncode == 1 and b"rm --all-versions --recursive" in refused.stderr
    cli(slipstream_bin, server, "rm", "--all-versions", "--recursive", f"s3://{bucket}/")
    cli(slipstream_bin, server, "rb", f"s3://{bucket}")
    assert bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]
