"""Presigner.presign_arrow: Arrow string columns in (pyarrow, Polars, DuckDB, pandas), URLs out in
Arrow buffers, equal to presign_many and to botocore; nulls, slices, chunks, errors by row."""

import random

import pyarrow as pa
import pytest
from test_differential_botocore import AT_TEXT, botocore_client, botocore_urls, random_key
from test_presigner import presigner

from slipstream import UrlArray

KEYS = [f"data/{i:05d}/ü +{i}.jpg" for i in range(2500)]


def with_nulls(keys, every=7):
    return [None if i % every == 3 else k for i, k in enumerate(keys)]


def expected(p, keys, **kw):
    """presign_many's URLs for the non-null keys, None where the key is null."""
    urls = iter(p.presign_many([k for k in keys if k is not None], at=AT_TEXT, **kw))
    return [None if k is None else next(urls) for k in keys]


@pytest.mark.parametrize("arrow_type", [pa.string(), pa.large_string(), pa.string_view()])
@pytest.mark.parametrize("threads", [1, 2, 5])
def test_each_string_layout_gives_presign_many_urls_with_nulls_kept(arrow_type, threads):
    p = presigner()
    keys = with_nulls(KEYS)
    urls = p.presign_arrow(pa.array(keys, type=arrow_type), at=AT_TEXT, threads=threads)
    assert isinstance(urls, UrlArray)
    assert (len(urls), urls.null_count) == (len(keys), keys.count(None))
    got = pa.array(urls)
    assert got.type == pa.large_string()
    assert got.null_count == keys.count(None)
    assert got.to_pylist() == expected(p, keys)


def test_urls_are_botocores_for_awkward_keys():
    rng = random.Random("arrow/awkward")
    keys = [random_key(rng) for _ in range(800)]
    want = botocore_urls(botocore_client("us-east-1"), "get_object", lambda k: {"Bucket": "diff-bucket", "Key": k}, keys, 900)
    got = presigner().presign_arrow(pa.array(keys, type=pa.string_view()), expires_in=900, at=AT_TEXT)
    assert got.to_pylist() == want


def test_slices_and_chunks_keep_rows_in_order():
    p = presigner()
    keys = with_nulls(KEYS, every=5)
    sliced = pa.array(keys)[13:2011]
    assert pa.array(p.presign_arrow(sliced, at=AT_TEXT)).to_pylist() == expected(p, keys[13:2011])
    chunked = pa.chunked_array([pa.array(keys[:700]), pa.array(keys[700:701]), pa.array([], pa.string()), pa.array(keys[701:])[0:]])
    urls = p.presign_arrow(chunked, at=AT_TEXT)
    assert urls.num_chunks == 4
    assert pa.chunked_array(urls).to_pylist() == expected(p, keys)
    # One array asked of a chunked result: the chunks are joined.
    assert pa.array(urls).to_pylist() == expected(p, keys)
    assert (urls[0], urls[-1], urls[3]) == (expected(p, keys[:1])[0], expected(p, keys[-1:])[0], None)


def test_a_consumer_asking_for_utf8_gets_utf8():
    urls = presigner().presign_arrow(pa.array(KEYS[:10]), at=AT_TEXT)
    assert pa.array(urls, type=pa.string()).type == pa.string()
    assert pa.array(urls, type=pa.string()).to_pylist() == urls.to_pylist()


def test_a_one_column_table_is_its_column():
    p = presigner()
    keys = with_nulls(KEYS[:300])
    table = pa.table({"key": keys})
    assert p.presign_arrow(table, at=AT_TEXT).to_pylist() == expected(p, keys)
    # Slices of tables and record batches: the rows are the slice's, not the whole column's.
    assert p.presign_arrow(table.slice(7, 100), at=AT_TEXT).to_pylist() == expected(p, keys[7:107])
    batch = pa.RecordBatch.from_pydict({"key": keys}).slice(3, 20)
    assert p.presign_arrow(batch, at=AT_TEXT).to_pylist() == expected(p, keys[3:23])


def test_polars_series_and_map_batches():
    pl = pytest.importorskip("polars")
    p = presigner()
    keys = with_nulls(KEYS)
    df = pl.DataFrame({"key": keys})
    # A Series in (Polars exports string views), a Series back without a copy.
    urls = pl.Series("url", p.presign_arrow(df["key"], at=AT_TEXT))
    assert urls.to_list() == expected(p, keys)
    # The recipe: a URL column inside a query.
    out = df.with_columns(url=pl.col("key").map_batches(lambda s: pl.Series(p.presign_arrow(s, at=AT_TEXT)), return_dtype=pl.String))
    assert out["url"].to_list() == expected(p, keys)


def test_duckdb_query_result():
    duckdb = pytest.importorskip("duckdb")
    p = presigner()
    rel = duckdb.sql("select 'logs/' || i::varchar || '/day.parquet' as key from range(3000) t(i) order by i")
    keys = [f"logs/{i}/day.parquet" for i in range(3000)]
    urls = p.presign_arrow(rel, at=AT_TEXT)
    assert urls.to_pylist() == expected(p, keys)
    # And back into DuckDB, beside the keys.
    signed = pa.table({"key": keys, "url": pa.array(urls)})  # noqa: F841  (read by the query)
    assert duckdb.sql("select count(*) from signed where url like '%X-Amz-Signature=%'").fetchall() == [(3000,)]


def test_pandas_with_the_pyarrow_backend():
    pd = pytest.importorskip("pandas")
    p = presigner()
    keys = with_nulls(KEYS[:400])
    for dtype in ["string[pyarrow]", pd.ArrowDtype(pa.large_string())]:
        s = pd.Series(keys, dtype=dtype)
        urls = pd.Series(pd.arrays.ArrowExtensionArray(pa.array(p.presign_arrow(s, at=AT_TEXT))))
        assert [None if pd.isna(u) else u for u in urls] == expected(p, keys)


def test_sigv4a_urls_differ_from_presign_only_in_the_signature():
    p = presigner(signature="v4a", region_set="*")
    keys = KEYS[:40]
    urls = p.presign_arrow(pa.array(keys), at=AT_TEXT, threads=3).to_pylist()
    for key, url in zip(keys, urls):
        one = p.presign_get(key, at=AT_TEXT)
        cut = one.index("X-Amz-Signature=")
        assert url[:cut] == one[:cut]
        assert len(url) > cut + len("X-Amz-Signature=") + 100


def test_a_bad_key_is_named_by_its_row_across_chunks():
    p = presigner()
    chunked = pa.chunked_array([pa.array(KEYS[:100]), pa.array(KEYS[100:150] + [""] + KEYS[151:200])])
    with pytest.raises(ValueError, match=r"keys\[150\]: the object key is empty"):
        p.presign_arrow(chunked)
    bad_utf8 = pa.array([b"ok", b"\xff\xfe", b"fine"], type=pa.binary())
    with pytest.raises(ValueError, match=r"keys\[1\]: the object key is not valid UTF-8"):
        p.presign_arrow(bad_utf8)


def test_what_is_not_a_string_column_is_refused_clearly():
    p = presigner()
    with pytest.raises(TypeError, match="presign_many"):
        p.presign_arrow(["a", "b"])
    with pytest.raises(TypeError, match='format "l"'):
        p.presign_arrow(pa.array([1, 2]))
    with pytest.raises(TypeError, match="dictionary-encoded"):
        p.presign_arrow(pa.array(["a", "b", "a"]).dictionary_encode())
    with pytest.raises(ValueError, match=r"got a table of 2 columns \(key, size\)"):
        p.presign_arrow(pa.table({"key": ["a"], "size": [1]}))
    with pytest.raises(ValueError, match="threads"):
        p.presign_arrow(pa.array(["a"]), threads=0)
    with pytest.raises(ValueError, match="604800"):
        p.presign_arrow(pa.array(["a"]), expires_in=604801)


def test_empty_input_and_repr_without_urls():
    urls = presigner().presign_arrow(pa.array([], pa.string()))
    assert (len(urls), pa.array(urls).to_pylist()) == (0, [])
    urls = presigner().presign_arrow(pa.array(["secret-looking"]), at=AT_TEXT)
    assert repr(urls) == "UrlArray(len=1, null_count=0, num_chunks=1)"
    with pytest.raises(IndexError):
        urls[1]


def test_no_pyarrow_needed():
    """Polars in, Polars out, in a process where pyarrow cannot be imported."""
    import subprocess
    import sys

    pytest.importorskip("polars")
    script = """
import sys
sys.modules["pyarrow"] = None  # any import of pyarrow now fails
import polars as pl
from slipstream import Credentials, Presigner
p = Presigner("b", region="us-east-1", credentials=Credentials("AKID", "secret"))
keys = pl.Series(["a/1", None, "ü b"])
urls = pl.Series(p.presign_arrow(keys, at="20260101T000000Z"))
want = [p.presign_get("a/1", at="20260101T000000Z"), None, p.presign_get("ü b", at="20260101T000000Z")]
assert urls.to_list() == want, urls.to_list()
assert "pyarrow" not in [m for m in sys.modules if sys.modules[m] is not None]
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
