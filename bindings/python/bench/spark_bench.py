"""Presigning a Spark column: per-row cost of the docs/ARROW.md recipe (mapInArrow + presign_arrow)
against a plain Python UDF calling boto3's generate_presigned_url, on local[2], in one run.

    .venv/bin/pip install pyspark==4.3.0 && .venv/bin/python bindings/python/bench/spark_bench.py [ROWS] [RUNS]

Each job reads ROWS keys made by Spark (spark.range), presigns them and writes to Spark's `noop`
sink, so the time is the whole job; an identity mapInArrow over the same rows is the floor
Spark itself costs. boto3 signs ROWS/20 rows (it is that much slower); per-row costs compare.
"""

import os
import statistics
import sys
import time

os.environ["BOTO_DISABLE_CRT"] = "true"
os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"

import pyarrow as pa  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

import slipstream  # noqa: E402

AKID, SECRET, BUCKET, REGION = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "examplebucket", "us-east-1"


def keys(spark, n):
    return spark.range(n, numPartitions=4).select(F.format_string("photos/2026/11/21/img-%07d.jpg", "id").alias("key"))


def timed(job, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    presigner = slipstream.Presigner(BUCKET, region=REGION, credentials=slipstream.Credentials(AKID, SECRET))
    shared = spark.sparkContext.broadcast(presigner)

    def presign_batches(batches):
        p = shared.value
        for batch in batches:
            urls = pa.array(p.presign_arrow(batch.column("key")), type=pa.string())
            yield pa.RecordBatch.from_arrays([batch.column("key"), urls], names=["key", "url"])

    def identity(batches):
        for batch in batches:
            yield pa.RecordBatch.from_arrays([batch.column("key"), batch.column("key")], names=["key", "url"])

    client = {}

    def boto3_url(key):
        if "c" not in client:
            import boto3
            from botocore.config import Config

            client["c"] = boto3.client("s3", region_name=REGION, aws_access_key_id=AKID, aws_secret_access_key=SECRET, config=Config(signature_version="s3v4"))
        return client["c"].generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": key}, ExpiresIn=3600)

    boto3_udf = F.udf(boto3_url, "string")
    few = max(rows // 20, 1000)
    schema = "key string, url string"
    jobs = [
        ("mapInArrow identity (Spark's own cost)", rows, lambda: keys(spark, rows).mapInArrow(identity, schema).write.format("noop").mode("overwrite").save()),
        ("mapInArrow + slipstream presign_arrow", rows, lambda: keys(spark, rows).mapInArrow(presign_batches, schema).write.format("noop").mode("overwrite").save()),
        ("Python UDF + boto3 generate_presigned_url", few, lambda: keys(spark, few).select("key", boto3_udf("key").alias("url")).write.format("noop").mode("overwrite").save()),
    ]
    timed(jobs[0][2], 1)  # warm-up: JVM, Python workers
    results = [(name, n, timed(job, runs)) for name, n, job in jobs]
    boto = results[2][2] / results[2][1]
    print(f"Spark {spark.version} local[2], {os.cpu_count()} cores, median of {runs}\n")
    print("| job | rows | seconds | µs per row | rows/s | vs boto3 UDF |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, n, secs in results:
        per = secs / n
        print(f"| {name} | {n:,} | {secs:.2f} | {per * 1e6:.2f} | {n / secs:,.0f} | {boto / per:.0f}x |")
    spark.stop()


if __name__ == "__main__":
    main()
