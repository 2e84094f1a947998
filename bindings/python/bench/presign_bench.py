"""URLs per second for presigning distinct keys: slipstream against the Python anchors, in one run.

    make bench-python        (or: .venv/bin/python bindings/python/bench/presign_bench.py)

Every contender signs the same kind of key (`photos/2026/11/21/img-NNNNNNN.jpg`, GET, 1 hour);
each figure is the median of 3 runs. Slow contenders sign fewer keys (rates do not depend on
the count). boto3 is measured pure (BOTO_DISABLE_CRT): with awscrt installed it would switch to
the CRT signer.
"""

import datetime
import os
import statistics
import sys
import time

os.environ["BOTO_DISABLE_CRT"] = "true"

import boto3  # noqa: E402
import pyarrow as pa  # noqa: E402
import libpresign  # noqa: E402
import obstore  # noqa: E402
from awscrt.auth import (  # noqa: E402
    AwsCredentialsProvider,
    AwsSignatureType,
    AwsSignedBodyValue,
    AwsSigningAlgorithm,
    AwsSigningConfig,
    aws_sign_request,
)
from awscrt.http import HttpHeaders, HttpRequest  # noqa: E402
from botocore.config import Config  # noqa: E402
from fast_s3_url import Credentials as FastCredentials  # noqa: E402
from fast_s3_url import FastS3UrlSigner  # noqa: E402
from obstore.store import S3Store  # noqa: E402

import slipstream  # noqa: E402

AKID, SECRET, BUCKET, REGION = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "examplebucket", "us-east-1"


def keys(n):
    return [f"photos/2026/11/21/img-{i:07d}.jpg" for i in range(n)]


def rate(fn, n, runs=3, arrow=False):
    """Median URLs/s of `runs` calls of fn(keys) on n fresh keys: a list, or a pyarrow string
    array when `arrow` (made before the timing)."""
    ks = pa.array(keys(n)) if arrow else keys(n)
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        out = fn(ks)
        rates.append(n / (time.perf_counter() - start))
        assert len(out) == n
        # Freed here, outside the timing: a result's deallocation is not its production.
        out = None
    return statistics.median(rates)


def arrow_peak_memory(p, n=1_000_000):
    """Peak RSS growth of one presign_arrow call against its input's and output's Arrow bytes."""
    array = pa.array(keys(n))
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM (peak RSS) to the current RSS
    before = rss_kib("VmRSS")
    urls = pa.array(p.presign_arrow(array))
    grown = (rss_kib("VmHWM") - before) * 1024
    return grown, urls.nbytes, array.nbytes


def rss_kib(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def boto3_each(ks):
    c = boto3.client("s3", region_name=REGION, aws_access_key_id=AKID, aws_secret_access_key=SECRET, config=Config(signature_version="s3v4"))
    return [c.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": k}, ExpiresIn=3600) for k in ks]


def boto3_post(ks):
    c = boto3.client("s3", region_name=REGION, aws_access_key_id=AKID, aws_secret_access_key=SECRET, config=Config(signature_version="s3v4"))
    return [c.generate_presigned_post(BUCKET, k, Conditions=[["content-length-range", 0, 1 << 20]]) for k in ks]


def ours_post(p):
    return lambda ks: [p.presign_post(k, conditions=[["content-length-range", 0, 1 << 20]]) for k in ks]


def fast_s3_url_batch(ks):
    s = FastS3UrlSigner(bucket_endpoint_url=f"https://{BUCKET}.s3.amazonaws.com/", aws_region=REGION, credentials=FastCredentials(AKID, SECRET))
    return s.generate_presigned_get_object_urls(ks, expires_in=3600)


def libpresign_each(ks):
    return [libpresign.get(AKID, SECRET, REGION, BUCKET, k, 3600) for k in ks]


def obstore_batch(ks):
    store = S3Store(BUCKET, region=REGION, access_key_id=AKID, secret_access_key=SECRET)
    return obstore.sign(store, "GET", ks, datetime.timedelta(seconds=3600))


def awscrt_each(algorithm, region):
    def run(ks):
        provider = AwsCredentialsProvider.new_static(AKID, SECRET)
        config = AwsSigningConfig(
            algorithm=algorithm,
            signature_type=AwsSignatureType.HTTP_REQUEST_QUERY_PARAMS,
            credentials_provider=provider,
            region=region,
            service="s3",
            use_double_uri_encode=False,
            should_normalize_uri_path=False,
            signed_body_value=AwsSignedBodyValue.UNSIGNED_PAYLOAD,
            expiration_in_seconds=3600,
        )
        host = HttpHeaders([("host", f"{BUCKET}.s3.amazonaws.com")])
        out = []
        for k in ks:
            signed = aws_sign_request(HttpRequest("GET", "/" + k, host), config).result()
            out.append(f"https://{BUCKET}.s3.amazonaws.com{signed.path}")
        return out

    return run


def client_each(ks):
    """boto3's call on a slipstream `Client` (its own credentials, one call per key)."""
    c = slipstream.Client(region=REGION, credentials=slipstream.Credentials(AKID, SECRET))
    return [c.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": k}, ExpiresIn=3600) for k in ks]


def bridge_each(ks):
    """`slipstream.generate_presigned_url` over a boto3 client (its credentials read per call)."""
    c = boto3.client("s3", region_name=REGION, aws_access_key_id=AKID, aws_secret_access_key=SECRET, config=Config(signature_version="s3v4"))
    return [slipstream.generate_presigned_url(c, "get_object", Params={"Bucket": BUCKET, "Key": k}, ExpiresIn=3600) for k in ks]


# AWS's other endpoints: boto3 resolves the endpoint rules at every call, we once per presigner.
FIPS = {"use_fips_endpoint": True}
ACCELERATE = {"s3": {"use_accelerate_endpoint": True}}


def boto3_each_on(config):
    def run(ks):
        c = boto3.client("s3", region_name=REGION, aws_access_key_id=AKID, aws_secret_access_key=SECRET, config=Config(signature_version="s3v4", **config))
        return [c.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": k}, ExpiresIn=3600) for k in ks]

    return run


def bridge_each_on(config):
    def run(ks):
        c = boto3.client("s3", region_name=REGION, aws_access_key_id=AKID, aws_secret_access_key=SECRET, config=Config(signature_version="s3v4", **config))
        return [slipstream.generate_presigned_url(c, "get_object", Params={"Bucket": BUCKET, "Key": k}, ExpiresIn=3600) for k in ks]

    return run


def presigner_each_on(**endpoint):
    p = slipstream.Presigner(BUCKET, region=REGION, credentials=slipstream.Credentials(AKID, SECRET), **endpoint)
    return lambda ks: [p.presign_get(k) for k in ks]


def client_presigner_each(ks):
    p = slipstream.Client(region=REGION, credentials=slipstream.Credentials(AKID, SECRET)).presigner(BUCKET)
    return [p.presign_get(k) for k in ks]


def ours(signature="v4"):
    kw = {"signature": "v4a", "region_set": "*"} if signature == "v4a" else {}
    return slipstream.Presigner(BUCKET, region=REGION, credentials=slipstream.Credentials(AKID, SECRET), **kw)


def main():
    v4, v4a = ours(), ours("v4a")
    rows = [
        ("boto3 1.43 generate_presigned_url (pure Python)", "v4", rate(boto3_each, 10_000)),
        ("fast-s3-url 0.2 batch", "v4", rate(fast_s3_url_batch, 100_000)),
        ("libpresign 1.2, one call per key", "v4", rate(libpresign_each, 100_000)),
        ("obstore 0.12 sign(list)", "v4", rate(obstore_batch, 100_000)),
        ("awscrt 0.38 aws_sign_request, one call per key", "v4", rate(awscrt_each(AwsSigningAlgorithm.V4, REGION), 10_000)),
        ("awscrt 0.38 aws_sign_request, one call per key", "v4a", rate(awscrt_each(AwsSigningAlgorithm.V4_ASYMMETRIC, "*"), 5_000)),
        ("slipstream presign_get, one call per key", "v4", rate(lambda ks: [v4.presign_get(k) for k in ks], 100_000)),
        ("slipstream Client.generate_presigned_url, boto3's call, one per key", "v4", rate(client_each, 100_000)),
        ("slipstream.generate_presigned_url(boto3 client), one per key", "v4", rate(bridge_each, 100_000)),
        ("slipstream Client.presigner(bucket).presign_get, one per key", "v4", rate(client_presigner_each, 100_000)),
        ("slipstream presign_many, 1 thread", "v4", rate(lambda ks: v4.presign_many(ks, threads=1), 100_000)),
        ("slipstream presign_many, 2 threads", "v4", rate(lambda ks: v4.presign_many(ks, threads=2), 100_000)),
        ("slipstream presign_many, 1 thread", "v4a", rate(lambda ks: v4a.presign_many(ks, threads=1), 20_000)),
        ("slipstream presign_many, 2 threads", "v4a", rate(lambda ks: v4a.presign_many(ks, threads=2), 20_000)),
        ("slipstream presign_many, 2 threads, 1M keys", "v4", rate(lambda ks: v4.presign_many(ks, threads=2), 1_000_000)),
        ("slipstream presign_arrow, pyarrow in and out, 1 thread, 1M keys", "v4", rate(lambda a: pa.array(v4.presign_arrow(a, threads=1)), 1_000_000, runs=5, arrow=True)),
        ("slipstream presign_arrow, pyarrow in and out, 2 threads, 1M keys", "v4", rate(lambda a: pa.array(v4.presign_arrow(a, threads=2)), 1_000_000, runs=5, arrow=True)),
        ("slipstream presign_arrow, 2 threads", "v4a", rate(lambda a: v4a.presign_arrow(a, threads=2), 20_000, runs=5, arrow=True)),
        ("boto3 1.43 generate_presigned_url, FIPS endpoint", "v4", rate(boto3_each_on(FIPS), 10_000)),
        ("slipstream.generate_presigned_url(boto3 FIPS client), one per key", "v4", rate(bridge_each_on(FIPS), 100_000)),
        ("slipstream Presigner(use_fips_endpoint=True).presign_get", "v4", rate(presigner_each_on(use_fips_endpoint=True), 100_000)),
        ("boto3 1.43 generate_presigned_url, Transfer Acceleration", "v4", rate(boto3_each_on(ACCELERATE), 10_000)),
        ("slipstream Presigner(use_accelerate_endpoint=True).presign_get", "v4", rate(presigner_each_on(use_accelerate_endpoint=True), 100_000)),
        ("boto3 1.43 generate_presigned_post (forms/s)", "v4", rate(boto3_post, 5_000)),
        ("slipstream presign_post (forms/s)", "v4", rate(ours_post(v4), 100_000)),
    ]
    boto = rows[0][2]
    fast = rows[1][2]
    crt4a = rows[5][2]
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores\n")
    print("| contender | sig | URLs/s | vs boto3 | vs fast-s3-url batch | vs awscrt v4a |")
    print("|---|---|---:|---:|---:|---:|")
    for name, sig, r in rows:
        print(f"| {name} | {sig} | {r:,.0f} | {r / boto:.1f}x | {r / fast:.2f}x | {r / crt4a:.2f}x |")
    grown, out_bytes, in_bytes = arrow_peak_memory(v4)
    print(f"\npresign_arrow of 1M keys: peak RSS grew {grown / 2**20:.0f} MiB; the URLs' Arrow buffers are {out_bytes / 2**20:.0f} MiB (the keys' {in_bytes / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
