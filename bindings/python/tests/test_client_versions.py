"""slipstream.Client in a versioned bucket (a versitygw with versioning), against boto3's view
of the same bucket: `version_id=` on every read and on delete, `src_version_id=` on copy, and
`list_versions` as boto3's `list_object_versions` answers."""

import asyncio
import io
import os

import pytest
from test_client import make_client

import slipstream


def two_versions(s3, bucket, key, first, second):
    """The IDs of `first` and `second`, written in that order to `key`."""
    return (s3.put_object(Bucket=bucket, Key=key, Body=first)["VersionId"],
            s3.put_object(Bucket=bucket, Key=key, Body=second)["VersionId"])


def test_reads_name_a_version(versioned_server, versioned_bucket, tmp_path):
    s3, bucket = versioned_server["boto3"], versioned_bucket
    c = make_client(versioned_server, part_size=5 * 1024 * 1024)
    old, new = os.urandom(11 * 1024 * 1024), os.urandom(11 * 1024 * 1024)
    v1, v2 = two_versions(s3, bucket, "k", old, new)

    assert c.get_bytes(bucket, "k") == new
    assert c.get_bytes(bucket, "k", version_id=v1) == old, "every part of that version"
    assert c.get_bytes(bucket, "k", (10, 20), version_id=v1) == old[10:20]
    assert asyncio.run(get_async(c, bucket, v1)) == old
    assert c.head(bucket, "k", version_id=v1)["VersionId"] == v1
    assert c.head(bucket, "k")["VersionId"] == v2
    path = tmp_path / "old"
    assert c.download(bucket, "k", str(path), version_id=v1) == len(old)
    assert path.read_bytes() == old
    out = io.BytesIO()
    assert c.download_fileobj(bucket, "k", out, version_id=v1) == len(old)
    assert out.getvalue() == old
    with pytest.raises(slipstream.S3Error):
        c.get_bytes(bucket, "k", version_id="no-such-version")


async def get_async(c, bucket, version):
    return await c.get_bytes_async(bucket, "k", version_id=version)


def test_copy_restores_and_delete_removes_one_version(versioned_server, versioned_bucket):
    s3, bucket = versioned_server["boto3"], versioned_bucket
    c = make_client(versioned_server)
    v1, v2 = two_versions(s3, bucket, "k", b"first", b"second")
    assert c.copy(bucket, "k", bucket, "k", src_version_id=v1) == 5
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"first"
    c.delete(bucket, "k", version_id=v2)
    left = [v["VersionId"] for v in s3.list_object_versions(Bucket=bucket)["Versions"]]
    assert v2 not in left and v1 in left and len(left) == 2
    c.delete(bucket, "k")
    assert s3.list_object_versions(Bucket=bucket)["DeleteMarkers"][0]["IsLatest"], "a plain delete leaves a marker"


def test_list_versions_answers_as_boto3(versioned_server, versioned_bucket):
    s3, bucket = versioned_server["boto3"], versioned_bucket
    c = make_client(versioned_server)
    two_versions(s3, bucket, "p/a", b"1", b"22")
    s3.put_object(Bucket=bucket, Key="p/b", Body=b"333")
    s3.delete_object(Bucket=bucket, Key="p/b")
    s3.put_object(Bucket=bucket, Key="q", Body=b"q")
    ours = c.list_versions(bucket, "p/")
    theirs = s3.list_object_versions(Bucket=bucket, Prefix="p/")

    def fields(entries, names):
        return sorted(tuple(e[n] for n in names) for e in entries)

    names = ("Key", "VersionId", "IsLatest", "Size", "ETag")
    assert fields(ours["Versions"], names) == fields(theirs["Versions"], names)
    names = ("Key", "VersionId", "IsLatest")
    assert fields(ours["DeleteMarkers"], names) == fields(theirs["DeleteMarkers"], names)
    assert [v["IsLatest"] for v in ours["Versions"] if v["Key"] == "p/a"] == [True, False], "newest first"
    assert len(c.list_versions(bucket)["Versions"]) == 4
    assert asyncio.run(list_async(c, bucket)) == ours


async def list_async(c, bucket):
    return await c.list_versions_async(bucket, "p/")


def test_delete_many_removes_versions_named_every_way(versioned_server, versioned_bucket):
    s3, bucket = versioned_server["boto3"], versioned_bucket
    c = make_client(versioned_server)
    for i in range(150):
        two_versions(s3, bucket, f"p/{i:03}", b"a", b"b")
    s3.delete_object(Bucket=bucket, Key="p/000")
    v1, _ = two_versions(s3, bucket, "t", b"1", b"2")
    s3.put_object(Bucket=bucket, Key="plain", Body=b"x")

    # list_versions' entries as they come (IsLatest orders each key's batch), a tuple, a key.
    listed = c.list_versions(bucket, "p/")
    assert len(listed["Versions"]) == 300 and len(listed["DeleteMarkers"]) == 1
    assert c.delete_many(bucket, listed["Versions"] + listed["DeleteMarkers"] + [("t", v1), "plain"]) == []
    after = s3.list_object_versions(Bucket=bucket)
    assert not [v for v in after.get("Versions", []) if v["Key"].startswith("p/")]
    assert not [m for m in after.get("DeleteMarkers", []) if m["Key"] != "plain"]
    assert [v["Key"] for v in after["Versions"] if v["Key"] == "t"] == ["t"], "the other version of t stays"
    assert any(m["Key"] == "plain" for m in after["DeleteMarkers"]), "a key alone: a delete marker"
    for bad in ("one-key", [1], [{"VersionId": "v"}]):
        with pytest.raises((TypeError, ValueError)):
            c.delete_many(bucket, bad)


def test_bucket_versioning_reads_and_sets_as_boto3(versioned_server):
    import uuid

    c, theirs = make_client(versioned_server), versioned_server["boto3"]
    bucket = f"pv-{uuid.uuid4().hex[:16]}"
    c.create_bucket(bucket)
    never = c.get_bucket_versioning(bucket)
    assert never == {} and "Status" not in theirs.get_bucket_versioning(Bucket=bucket)
    c.put_bucket_versioning(bucket, "Enabled")
    assert c.get_bucket_versioning(bucket)["Status"] == theirs.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"

    async def suspend():
        await c.put_bucket_versioning_async(bucket, "suspended")
        return await c.get_bucket_versioning_async(bucket)

    assert asyncio.run(suspend()) == {"Status": "Suspended"}
    with pytest.raises(ValueError, match="Enabled or Suspended"):
        c.put_bucket_versioning(bucket, "Disabled")
    with pytest.raises(slipstream.S3Error) as missing:
        c.get_bucket_versioning("no-such-bucket-here")
    assert missing.value.code == "NoSuchBucket"
