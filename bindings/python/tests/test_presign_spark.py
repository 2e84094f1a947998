"""The Spark recipe of docs/ARROW.md, run on local[2]: a presigner broadcast to the executors (it
pickles; its repr hides the secret) and `mapInArrow` presigning each Arrow batch, the same
function a cluster runs on every executor. Output equal to presign_many."""

import os
import pickle
import sys

import pyarrow as pa
import pytest
from test_differential_botocore import AT_TEXT
from test_presign_arrow import expected, with_nulls
from test_presigner import presigner

from slipstream import Credentials, Presigner


def test_presigners_and_credentials_pickle():
    p = presigner(token="tok", addressing="path", endpoint_url="http://127.0.0.1:7070")
    again = pickle.loads(pickle.dumps(p))
    assert type(again) is Presigner
    assert again.presign_get("a b", at=AT_TEXT) == p.presign_get("a b", at=AT_TEXT)
    v4a = presigner(signature="v4a", region_set="us-*")
    assert "X-Amz-Region-Set=us-%2A" in pickle.loads(pickle.dumps(v4a)).presign_get("k", at=AT_TEXT)
    c = pickle.loads(pickle.dumps(Credentials("AKID", "secret", "token")))
    assert repr(c) == "Credentials(access_key_id='AKID', secret_access_key='<redacted>', session_token='<redacted>')"


@pytest.fixture(scope="module")
def spark():
    pyspark_sql = pytest.importorskip("pyspark.sql")
    # Executors start this interpreter (with slipstream installed), not whatever python3 is on PATH.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # bind to loopback only
    session = (
        pyspark_sql.SparkSession.builder.master("local[2]")
        .appName("slipstream-presign-test")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def presign_column(shared, at):
    """The recipe's function: Arrow batches of keys in, batches of (key, url) out."""

    def presign_batches(batches):
        p = shared.value
        for batch in batches:
            keys = batch.column("key")
            urls = pa.array(p.presign_arrow(keys, at=at), type=pa.string())
            yield pa.RecordBatch.from_arrays([keys, urls], names=["key", "url"])

    return presign_batches


def test_spark_map_in_arrow_gives_presign_many_urls(spark):
    p = presigner()
    keys = with_nulls([f"exports/{i:06d}/part ü.parquet" for i in range(20_000)], every=11)
    df = spark.createDataFrame([(k,) for k in keys], "key string").repartition(4)
    shared = spark.sparkContext.broadcast(p)
    rows = df.mapInArrow(presign_column(shared, AT_TEXT), "key string, url string").collect()
    want = dict(zip(keys, expected(p, keys)))
    assert len(rows) == len(keys)
    assert all(r.url == want[r.key] for r in rows)
    assert sum(r.url is None for r in rows) == keys.count(None)
