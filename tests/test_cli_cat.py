"""`cat` of many objects, as s5cmd's cat: a wildcard's matches (recursive, in key order), the
objects directly under a prefix ending in `/` or in a bucket (one level), one after another,
against the local versitygw, byte for byte what s5cmd writes for the same target. Small
objects are fetched ahead while one is written and a large one streams in its turn, so the
order must hold across both kinds. Issue 19."""

import os

import pytest

from support import cli_at as cli, s5cmd_at as s5cmd

# Key order is byte order: "a/..." < "b" < "c/..." < "d..." ; one object above cat's 8 MiB
# fetched-ahead size, between small ones.
OBJECTS = {"p/a/1": b"a1", "p/a/2": b"", "p/b": b"B" * 1000, "p/big": os.urandom(9 << 20), "p/c/3": b"c3",
           "p/d.txt": b"d", "p/e.txt": b"e", "top": b"top"}


@pytest.fixture
def filled(s3, bucket):
    for key, body in OBJECTS.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body)
    return bucket


@pytest.mark.parametrize("target", ["p/*", "p/*.txt", "p/", "", "p/[a-c]*"])
def test_cat_writes_what_s5cmd_cat_writes(slipstream_bin, server, filled, target):
    url = f"s3://{filled}/{target}"
    ours = cli(slipstream_bin, server, "cat", url).stdout
    theirs = s5cmd(server, "cat", url).stdout if "[" not in target else None
    # s5cmd takes only * and ? as wildcards: the set is checked against the keys instead.
    if target == "p/*":
        assert ours == b"".join(body for key, body in sorted(OBJECTS.items()) if key.startswith("p/"))
    if target == "p/[a-c]*":
        assert ours == b"".join(OBJECTS[k] for k in ["p/a/1", "p/a/2", "p/b", "p/big", "p/c/3"])
    else:
        assert ours == theirs != b""


def test_cat_of_nothing_is_an_error_and_version_id_names_one_object(slipstream_bin, server, filled):
    miss = cli(slipstream_bin, server, "cat", f"s3://{filled}/p/*.zip", check=False)
    assert miss.returncode == 1 and miss.stdout == b"" and b"no object matches" in miss.stderr, miss.stderr
    empty = cli(slipstream_bin, server, "cat", f"s3://{filled}/nothing/", check=False)
    assert empty.returncode == 1 and b"no object matches" in empty.stderr
    versioned = cli(slipstream_bin, server, "cat", "--version-id", "x", f"s3://{filled}/p/*", check=False)
    assert versioned.returncode == 2 and b"--version-id" in versioned.stderr


def test_cat_raw_reads_a_key_with_wildcard_characters(slipstream_bin, server, s3, filled):
    s3.put_object(Bucket=filled, Key="q/lit*", Body=b"literal")
    s3.put_object(Bucket=filled, Key="q/lit*2", Body=b"other")
    assert cli(slipstream_bin, server, "cat", "--raw", f"s3://{filled}/q/lit*").stdout == b"literal"
    assert cli(slipstream_bin, server, "cat", f"s3://{filled}/q/lit*").stdout == b"literalother"
