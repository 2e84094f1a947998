"""slipstream.Client's listing, head, server-side copy and deletes against the local versitygw."""

import uuid

import pytest

import slipstream


def make_client(server):
    return slipstream.Client(
        region=server["region"],
        credentials=slipstream.Credentials(server["access_key"], server["secret_key"]),
        endpoint_url=server["endpoint"],
        addressing="path",
    )


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
    assert [o["Key"] for o in c.list(bucket)] == names
    assert list(c.list(bucket, "nothing/")) == []

    s3.put_object(Bucket=bucket, Key="meta", Body=b"abc", ContentType="text/plain",
                  Metadata={"owner": "me"}, ChecksumAlgorithm="CRC32")
    h = c.head(bucket, "meta")
    assert (h["ContentLength"], h["ContentType"], h["Metadata"]) == (3, "text/plain", {"owner": "me"})
    assert h["ChecksumCRC32"] == s3.head_object(Bucket=bucket, Key="meta", ChecksumMode="ENABLED")["ChecksumCRC32"]
    assert c.copy(bucket, "meta", bucket, "meta-copy") == 3
    assert c.head(bucket, "meta-copy")["Metadata"] == {"owner": "me"}
    with pytest.raises(slipstream.S3Error) as e:
        c.head(bucket, "missing")
    assert e.value.code == "NotFound"

    assert c.delete_many(bucket, [o["Key"] for o in listed]) == []
    assert [o["Key"] for o in c.list(bucket)] == ["meta", "meta-copy", "q/other"]
    c.delete(bucket, "meta")
    assert [o["Key"] for o in c.list(bucket)] == ["meta-copy", "q/other"]


def test_delete_many_returns_what_the_server_refused(server, s3):
    c = make_client(server)
    bucket = f"py-locked-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    for k in ["held", "free"]:
        s3.put_object(Bucket=bucket, Key=k, Body=b"x")
    s3.put_object_legal_hold(Bucket=bucket, Key="held", LegalHold={"Status": "ON"})
    refused = c.delete_many(bucket, ["held", "free"])
    assert [(r["Key"], r["Code"]) for r in refused] == [("held", "AccessDenied")]
    assert [o["Key"] for o in c.list(bucket)] == ["held"]
