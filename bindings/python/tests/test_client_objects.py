"""slipstream.Client's listing, head, server-side copy and deletes against the local versitygw."""

import os
import uuid

import pytest
from test_client import make_client

import slipstream


def test_list_head_copy_delete(server, s3):
    c = make_client(server)
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    names = [f"p/{i:05}" for i in range(2100)] + ["q/other"]
    for n in names:
        s3.put_object(Bucket=bucket, Key=n, Body=n.encode())
    listed = list(c.list(bucket, "p/"))
    assert [o["Key"] for o in listed] == names[:-1], "three pages, in key order"
    assert listed[7]["Size"] == len("p/00007") and listed[7]["ETag"].startswith('"')
    theirs = s3.list_objects_v2(Bucket=bucket, Prefix="p/00007")["Contents"][0]
    assert listed[7].get("StorageClass") == theirs.get("StorageClass"), "as boto3 has it, when sent"
    assert [o["Key"] for o in c.list(bucket)] == names
    assert list(c.list(bucket, "nothing/")) == []

    s3.put_object(Bucket=bucket, Key="meta", Body=b"abc", ContentType="text/plain",
                  Metadata={"owner": "me"}, ChecksumAlgorithm="CRC32")
    h = c.head(bucket, "meta")
    assert (h["ContentLength"], h["ContentType"], h["Metadata"]) == (3, "text/plain", {"owner": "me"})
    b = s3.head_object(Bucket=bucket, Key="meta", ChecksumMode="ENABLED")
    assert h["ChecksumCRC32"] == b["ChecksumCRC32"]
    assert h.get("StorageClass") == b.get("StorageClass") and "VersionId" not in h
    assert c.copy(bucket, "meta", bucket, "meta-copy") == 3
    assert c.head(bucket, "meta-copy")["Metadata"] == {"owner": "me"}
    with pytest.raises(slipstream.S3Error) as e:
        c.head(bucket, "missing")
    assert e.value.code == "NotFound"

    assert c.delete_many(bucket, [o["Key"] for o in listed]) == []
    assert [o["Key"] for o in c.list(bucket)] == ["meta", "meta-copy", "q/other"]
    c.delete(bucket, "meta")
    assert [o["Key"] for o in c.list(bucket)] == ["meta-copy", "q/other"]


def test_copy_takes_boto3s_extra_args_and_metadata_directive(server, s3):
    """`copy(..., extra_args=)`: an upload's names plus `MetadataDirective`, checked with
    boto3's `head_object` of what the server made."""
    import asyncio

    c = make_client(server)
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="src", Body=b"abc", ContentType="text/plain", Metadata={"owner": "me"})
    c.copy(bucket, "src", bucket, "replaced", extra_args={"ContentType": "text/csv", "Metadata": {"v": "2"}})
    h = s3.head_object(Bucket=bucket, Key="replaced")
    assert (h["ContentType"], h["Metadata"]) == ("text/csv", {"v": "2"}), "given headers replace the source's"
    c.copy(bucket, "src", bucket, "kept", extra_args={"MetadataDirective": "COPY", "ContentType": "text/csv"})
    h = s3.head_object(Bucket=bucket, Key="kept")
    assert (h["ContentType"], h["Metadata"]) == ("text/plain", {"owner": "me"})
    asyncio.run(c.copy_async(bucket, "src", bucket, "bare", extra_args={"MetadataDirective": "REPLACE"}))
    assert s3.head_object(Bucket=bucket, Key="bare")["Metadata"] == {}, "REPLACE with none clears them"
    with pytest.raises(ValueError, match="MetadataDirective"):
        c.copy(bucket, "src", bucket, "x", extra_args={"MetadataDirective": "MERGE"})
    with pytest.raises(ValueError, match="Bogus"):
        c.copy(bucket, "src", bucket, "x", extra_args={"Bogus": "1"})
    assert [o["Key"] for o in c.list(bucket)] == ["bare", "kept", "replaced", "src"]


def test_list_buckets_names_every_bucket_as_boto3_does(server, s3):
    import asyncio

    c = make_client(server)
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    ours = c.list_buckets()
    theirs = s3.list_buckets()["Buckets"]
    assert [b["Name"] for b in ours] == [b["Name"] for b in theirs] and bucket in [b["Name"] for b in ours]
    mine = next(b for b in ours if b["Name"] == bucket)
    want = next(b for b in theirs if b["Name"] == bucket)["CreationDate"]
    assert mine["CreationDate"].startswith(want.strftime("%Y-%m-%dT%H:%M:%S")), (mine, want)

    async def both():
        return await c.list_buckets_async()

    assert asyncio.run(both()) == ours


def test_list_buckets_chooses_by_prefix_and_region_as_boto3_does(server, s3):
    import asyncio

    c = make_client(server)
    stem = f"pyb-{uuid.uuid4().hex[:10]}"
    for name in [f"{stem}-a", f"{stem}-b", f"x{stem}"]:
        s3.create_bucket(Bucket=name)
    for kw, boto_kw in [({"prefix": stem}, {"Prefix": stem}),
                        ({"prefix": stem, "bucket_region": server["region"]},
                         {"Prefix": stem, "BucketRegion": server["region"]})]:
        ours = c.list_buckets(**kw)
        theirs = s3.list_buckets(**boto_kw)["Buckets"]
        assert [b["Name"] for b in ours] == [b["Name"] for b in theirs] == [f"{stem}-a", f"{stem}-b"], kw
        assert [b.get("BucketRegion") for b in ours] == [b.get("BucketRegion") for b in theirs]
    assert c.list_buckets(prefix=stem, bucket_region="eu-north-1") == []

    async def far():
        return await c.list_buckets_async(prefix=f"x{stem}")

    assert [b["Name"] for b in asyncio.run(far())] == [f"x{stem}"]


def test_an_empty_key_is_refused_before_it_can_name_the_bucket(server, s3, tmp_path):
    # DELETE /bucket/ with no key deletes the bucket; GET lists it; PUT creates it.
    c = make_client(server)
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    (tmp_path / "f").write_bytes(b"x")
    calls = [lambda: c.delete(bucket, ""), lambda: c.get_bytes(bucket, ""), lambda: c.head(bucket, ""),
             lambda: c.put_bytes(bucket, "", b"x"), lambda: c.copy(bucket, "", bucket, "k"),
             lambda: c.download(bucket, "", tmp_path / "out"), lambda: c.upload(tmp_path / "f", bucket, "")]
    for call in calls:
        with pytest.raises(ValueError, match="key is empty"):
            call()
    assert bucket in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    assert not (tmp_path / "out").exists()


def locked_bucket(s3) -> str:
    """A new bucket with object lock, holding `free` and `held`, whose legal hold is on: S3
    refuses to delete `held` (AccessDenied)."""
    bucket = f"py-locked-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    for k in ["held", "free"]:
        s3.put_object(Bucket=bucket, Key=k, Body=b"x")
    s3.put_object_legal_hold(Bucket=bucket, Key="held", LegalHold={"Status": "ON"})
    return bucket


def test_delete_many_returns_what_the_server_refused(server, s3):
    c = make_client(server)
    bucket = locked_bucket(s3)
    refused = c.delete_many(bucket, ["held", "free"])
    assert [(r["Key"], r["Code"]) for r in refused] == [("held", "AccessDenied")]
    assert [o["Key"] for o in c.list(bucket)] == ["held"]


def test_sync_up_down_and_across(server, s3, tmp_path):
    import os
    import time

    c = make_client(server)
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    tree = tmp_path / "tree"
    old = time.time() - 3600
    for name, body in {"a.txt": b"a", "d/b.txt": b"bb", "d/e/c.log": b"ccc", "empty": b""}.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_bytes(body)
        os.utime(tree / name, (old, old))
    up = c.sync(str(tree), f"s3://{bucket}/up", filters=[("exclude", "*.log")])
    assert (up["copied"], up["bytes"], up["deleted"], up["unchanged"], up["failed"]) == (3, 3, 0, 0, [])
    assert sorted(a["destination"] for a in up["actions"]) == [f"s3://{bucket}/up/{n}" for n in ["a.txt", "d/b.txt", "empty"]]
    assert {a["action"] for a in up["actions"]} == {"upload"}
    again = c.sync(str(tree), f"s3://{bucket}/up", filters=[("exclude", "*.log")])
    assert (again["copied"], again["unchanged"], again["actions"]) == (0, 3, [])

    across = c.sync(f"s3://{bucket}/up/", f"s3://{bucket}/copy/")
    assert across["copied"] == 3 and {a["action"] for a in across["actions"]} == {"copy"}

    down = tmp_path / "down"
    (down / "stale").parent.mkdir(parents=True)
    (down / "stale").write_bytes(b"old")
    dry = c.sync(f"s3://{bucket}/copy", str(down), delete=True, dryrun=True)
    assert (dry["copied"], dry["deleted"]) == (3, 1) and (down / "stale").exists() and not (down / "a.txt").exists()
    done = c.sync(f"s3://{bucket}/copy", str(down), delete=True)
    assert sorted(p.relative_to(down).as_posix() for p in down.rglob("*") if p.is_file()) == ["a.txt", "d/b.txt", "empty"]
    assert done["deleted"] == 1
    with pytest.raises(ValueError):
        c.sync(str(tree), f"s3://{bucket}/x", filters=[("keep", "*")])
    with pytest.raises(ValueError):
        c.sync(str(tree), f"s3://{bucket}/x", size_only=True, exact_timestamps=True)
    with pytest.raises(slipstream.S3Error) as e:
        c.sync(str(tree), "s3://no-such-bucket-py/x")
    assert e.value.code == "NoSuchBucket"


def test_uploads_carry_boto3s_extra_args(server, s3, tmp_path):
    c = make_client(server)
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    page = tmp_path / "page.html"
    page.write_bytes(b"<p>hi</p>")
    extra = {"ContentType": "text/html; charset=utf-8", "CacheControl": "max-age=60",
             "Metadata": {"owner": "me", "team": "edge"}, "StorageClass": "STANDARD"}
    c.upload(page, bucket, "page.html", extra_args=extra)
    c.put_bytes(bucket, "k.json", b"{}", extra_args={"ContentType": "application/json"})
    h = s3.head_object(Bucket=bucket, Key="page.html")
    assert (h["ContentType"], h["CacheControl"], h["Metadata"]) == (
        "text/html; charset=utf-8", "max-age=60", {"owner": "me", "team": "edge"})
    assert s3.head_object(Bucket=bucket, Key="k.json")["ContentType"] == "application/json"
    # Nothing is guessed without them, as boto3 guesses nothing.
    c.put_bytes(bucket, "plain.html", b"x")
    assert s3.head_object(Bucket=bucket, Key="plain.html")["ContentType"] != "text/html"

    async def main():
        await c.put_bytes_async(bucket, "a.txt", b"a", extra_args={"Metadata": {"via": "async"}})
        await c.upload_async(page, bucket, "b.html", extra_args={"ContentType": "text/html"})

    import asyncio
    asyncio.run(main())
    assert s3.head_object(Bucket=bucket, Key="a.txt")["Metadata"] == {"via": "async"}
    assert s3.head_object(Bucket=bucket, Key="b.html")["ContentType"] == "text/html"
    with pytest.raises(ValueError, match='"GrantWrite" is not one of ACL, CacheControl'):
        c.put_bytes(bucket, "k", b"x", extra_args={"GrantWrite": "id=x"})
    # boto3's grants, as versitygw takes them signed.
    everyone = 'uri="http://acs.amazonaws.com/groups/global/AllUsers"'
    c.put_bytes(bucket, "granted", b"g", extra_args={"GrantRead": everyone, "GrantFullControl": 'id="o"'})
    assert s3.get_object(Bucket=bucket, Key="granted")["Body"].read() == b"g"
    with pytest.raises(TypeError):
        c.put_bytes(bucket, "k", b"x", extra_args={"Metadata": "not a dict"})
    with pytest.raises(TypeError, match="Expires"):
        c.put_bytes(bucket, "k", b"x", extra_args={"Expires": 5})


def test_every_extra_arg_reaches_the_object_single_and_multipart(server, s3, tmp_path):
    import datetime

    c = make_client(server, part_size=5 << 20)
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom((5 << 20) + 1))  # two parts
    extra = {
        "ContentDisposition": 'attachment; filename="r 1.pdf"',
        "ContentEncoding": "gzip",
        "ContentLanguage": "fr",
        "Expires": datetime.datetime(2030, 1, 2, 3, 4, 5),  # naive: UTC, as botocore reads it
        "WebsiteRedirectLocation": "/elsewhere.html",
        "ACL": "private",
        "ServerSideEncryption": "AES256",
        "Tagging": "project=a&team=b%20c",
        "StorageClass": "STANDARD",
    }
    c.put_bytes(bucket, "small", b"x", extra_args=extra)
    c.upload(big, bucket, "big", extra_args={**extra, "Expires": "Wed, 02 Jan 2030 03:04:05 GMT"})
    for key in ["small", "big"]:
        h = s3.head_object(Bucket=bucket, Key=key)
        assert h["ContentDisposition"] == 'attachment; filename="r 1.pdf"', key
        assert (h["ContentEncoding"], h["ContentLanguage"], h["WebsiteRedirectLocation"]) == ("gzip", "fr", "/elsewhere.html"), key
        assert h["ExpiresString"] == "Wed, 02 Jan 2030 03:04:05 GMT", key
        tags = s3.get_object_tagging(Bucket=bucket, Key=key)["TagSet"]
        assert sorted((t["Key"], t["Value"]) for t in tags) == [("project", "a"), ("team", "b c")], key


def test_sync_from_a_wildcard_takes_its_matches_and_deletes_only_within_it(server, s3, tmp_path):
    c = make_client(server)
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    for name in ["2026-01/a.gz", "2026-01/b.txt", "2025-12/c.gz"]:
        s3.put_object(Bucket=bucket, Key=f"logs/{name}", Body=b"x")
    down = tmp_path / "down"
    (down / "2026-02").mkdir(parents=True)
    (down / "2026-02" / "old.gz").write_bytes(b"old")
    (down / "notes").write_bytes(b"kept")
    done = c.sync(f"s3://{bucket}/logs/2026-*/*.gz", str(down), delete=True)
    assert (done["copied"], done["deleted"]) == (1, 1)
    assert sorted(p.relative_to(down).as_posix() for p in down.rglob("*") if p.is_file()) == ["2026-01/a.gz", "notes"]
    with pytest.raises(ValueError, match="not a wildcard"):
        c.sync(f"s3://{bucket}/logs/", f"s3://{bucket}/x*/")
    s3.put_object(Bucket=bucket, Key="lit*/k", Body=b"k")
    raw = c.sync(f"s3://{bucket}/lit*/", str(tmp_path / "raw"), raw=True)
    assert raw["copied"] == 1 and (tmp_path / "raw" / "k").read_bytes() == b"k"


def test_sync_follows_symbolic_links_unless_told_not_to(server, s3, tmp_path):
    c = make_client(server)
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "real").mkdir(parents=True)
    outside.mkdir()
    (tree / "real" / "f").write_bytes(b"f")
    (outside / "g").write_bytes(b"g")
    (tree / "linkdir").symlink_to(outside)
    (tree / "real" / "up").symlink_to(tree)  # a loop, left out
    done = c.sync(str(tree), f"s3://{bucket}/a/")
    assert done["copied"] == 2
    assert sorted(o["Key"] for o in c.list(bucket, "a/")) == ["a/linkdir/g", "a/real/f"]
    done = c.sync(str(tree), f"s3://{bucket}/b/", follow_symlinks=False)
    assert [o["Key"] for o in c.list(bucket, "b/")] == ["b/real/f"] and done["copied"] == 1
    (tree / "broken").symlink_to(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="broken is a symbolic link"):
        c.sync(str(tree), f"s3://{bucket}/c/")
    assert list(c.list(bucket, "c/")) == []


def test_file_errors_name_the_file_as_pythons_own_do(server, s3, tmp_path):
    c = make_client(server)
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    missing = tmp_path / "no" / "such" / "f"
    with pytest.raises(FileNotFoundError) as e:
        c.download(bucket, "k", missing)
    assert (e.value.errno, e.value.filename) == (2, str(missing))
    assert str(e.value) == f"[Errno 2] No such file or directory: '{missing}'"
    with pytest.raises(FileNotFoundError) as e:
        c.upload(tmp_path / "absent", bucket, "k2")
    assert e.value.filename == str(tmp_path / "absent")
    with pytest.raises(IsADirectoryError) as e:
        c.download(bucket, "k", tmp_path)
    assert e.value.filename == str(tmp_path)
    # Among many files, the one that failed is named: a sync into a file, and onto a file
    # where a directory must go.
    s3.put_object(Bucket=bucket, Key="tree/a/b", Body=b"y")
    blocker = tmp_path / "blocker"
    blocker.write_bytes(b"")
    with pytest.raises(NotADirectoryError) as e:
        c.sync(f"s3://{bucket}/tree/", str(blocker))
    assert e.value.filename == str(blocker)
    out = tmp_path / "out"
    out.mkdir()
    (out / "a").write_bytes(b"")
    with pytest.raises(FileExistsError) as e:
        c.sync(f"s3://{bucket}/tree/", str(out))
    assert e.value.filename == str(out / "a")
    assert (out / "a").read_bytes() == b""


def test_sync_leaves_out_fifos_and_names_them(server, s3, tmp_path):
    c = make_client(server)
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    tree = tmp_path / "tree"
    (tree / "d").mkdir(parents=True)
    (tree / "d" / "f").write_bytes(b"f")
    os.mkfifo(tree / "d" / "fifo")
    done = c.sync(str(tree), f"s3://{bucket}/p/")
    assert (done["copied"], done["not_files"]) == (1, [str(tree / "d" / "fifo")])
    assert [o["Key"] for o in c.list(bucket)] == ["p/d/f"]
    assert c.sync(str(tree), f"s3://{bucket}/p/", filters=[("exclude", "*fifo")])["not_files"] == []
    # Downloading into that tree: a FIFO of the destination is not the sync's business.
    assert c.sync(f"s3://{bucket}/p/", str(tree))["not_files"] == []


def test_list_with_delimiter_answers_as_boto3_does(server, s3):
    """One level of a prefix, every page followed: the same prefixes and keys as boto3's
    paginated list_objects_v2 with Delimiter."""
    import asyncio

    c = make_client(server)
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    names = [f"logs/d{i:04}/x" for i in range(1003)] + ["logs/top.txt", "logs/z", "other/k", "root"]
    for n in names:
        s3.put_object(Bucket=bucket, Key=n, Body=b"1")

    def boto3_level(prefix, delimiter="/"):
        prefixes, keys = [], []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix, Delimiter=delimiter):
            prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
            keys += [o["Key"] for o in page.get("Contents", [])]
        return prefixes, keys

    for prefix in ["", "logs/", "logs/d000", "nothing/"]:
        level = c.list_with_delimiter(bucket, prefix)
        ours = ([p["Prefix"] for p in level["CommonPrefixes"]], [o["Key"] for o in level["Contents"]])
        assert ours == boto3_level(prefix), prefix
    level = c.list_with_delimiter(bucket, "logs/")
    assert len(level["CommonPrefixes"]) == 1003, "more than one page of prefixes"
    assert set(level["Contents"][0]) == {"Key", "Size", "ETag", "LastModified", "StorageClass"}
    assert [p["Prefix"] for p in c.list_with_delimiter(bucket, "", delimiter="o")["CommonPrefixes"]] == \
        boto3_level("", "o")[0]

    async def both():
        return await c.list_with_delimiter_async(bucket, "logs/")

    assert asyncio.run(both()) == level
    with pytest.raises(ValueError, match="delimiter"):
        c.list_with_delimiter(bucket, "", delimiter="")


def test_create_and_delete_buckets_as_boto3_and_the_cli_do(server, s3):
    import asyncio

    c = make_client(server)
    bucket = f"py-{uuid.uuid4().hex[:16]}"
    c.create_bucket(bucket, tags={"team": "data + more", "cost": "7"})
    tags = {t["Key"]: t["Value"] for t in s3.get_bucket_tagging(Bucket=bucket)["TagSet"]}
    assert tags == {"team": "data + more", "cost": "7"}
    with pytest.raises(slipstream.S3Error) as made:
        c.create_bucket(bucket)
    assert made.value.code == "BucketAlreadyOwnedByYou" and made.value.status == 409

    for i in range(1500):  # two DeleteObjects batches' worth, listed over two pages
        s3.put_object(Bucket=bucket, Key=f"k/{i:04}", Body=b"x")
    with pytest.raises(slipstream.S3Error) as full:
        c.delete_bucket(bucket)
    assert full.value.code == "BucketNotEmpty" and "force=True" in str(full.value)
    assert len(list(c.list(bucket))) == 1500, "nothing deleted without force"
    c.delete_bucket(bucket, force=True)
    assert bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    with pytest.raises(slipstream.S3Error) as gone:
        c.delete_bucket(bucket)
    assert gone.value.code == "NoSuchBucket"

    async def both():
        await c.create_bucket_async(bucket)
        await c.put_bytes_async(bucket, "one", b"1")
        await c.delete_bucket_async(bucket, force=True)

    asyncio.run(both())
    assert bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]


def test_delete_bucket_force_keeps_a_bucket_whose_object_is_refused(server, s3):
    c = make_client(server)
    bucket = locked_bucket(s3)
    with pytest.raises(slipstream.S3Error) as kept:
        c.delete_bucket(bucket, force=True)
    assert kept.value.code == "BucketNotEmpty"
    assert "1 object(s) could not be deleted (the first, held: AccessDenied" in str(kept.value)
    assert [o["Key"] for o in c.list(bucket)] == ["held"]
    s3.put_object_legal_hold(Bucket=bucket, Key="held", LegalHold={"Status": "OFF"})
    c.delete_bucket(bucket, force=True)


def test_delete_bucket_force_says_what_a_versioned_bucket_still_holds(versioned_server, versioned_bucket):
    c = make_client(versioned_server)
    c.put_bytes(versioned_bucket, "k", b"one")
    with pytest.raises(slipstream.S3Error) as left:
        c.delete_bucket(versioned_bucket, force=True)
    assert left.value.code == "BucketNotEmpty" and "list_versions" in str(left.value)
    v = c.list_versions(versioned_bucket)
    assert c.delete_many(versioned_bucket, v["Versions"] + v["DeleteMarkers"]) == []
    c.delete_bucket(versioned_bucket)
