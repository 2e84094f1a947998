"""The Python API: byte-identical to botocore, batch equal to single calls, errors, threads."""

import datetime
import random
import threading

import pytest
from test_differential_botocore import ACCESS_KEY, AT, AT_TEXT, GET_OVERRIDES, SECRET_KEY, TOKEN, botocore_client, botocore_urls, random_key

from slipstream import Credentials, Presigner

AT_AWARE = AT.replace(tzinfo=datetime.timezone.utc)
PY_OVERRIDES = {
    "ResponseCacheControl": "response_cache_control",
    "ResponseContentDisposition": "response_content_disposition",
    "ResponseContentEncoding": "response_content_encoding",
    "ResponseContentLanguage": "response_content_language",
    "ResponseContentType": "response_content_type",
    "ResponseExpires": "response_expires",
    "VersionId": "version_id",
}


def presigner(region="us-east-1", token=None, addressing="auto", bucket="diff-bucket", **kw):
    return Presigner(bucket, region=region, credentials=Credentials(ACCESS_KEY, SECRET_KEY, token), addressing=addressing, **kw)


@pytest.mark.parametrize("token", [None, TOKEN])
@pytest.mark.parametrize("addressing", ["auto", "path"])
@pytest.mark.parametrize("op", ["get", "get+overrides", "put+content-type"])
def test_byte_identical_to_botocore(op, addressing, token):
    rng = random.Random(f"py/{op}/{addressing}/{token}")
    keys = [random_key(rng) for _ in range(500)]
    region = "eu-west-1" if token else "us-east-1"
    client = botocore_client(region, token, style=addressing)
    p = presigner(region, token, addressing)
    if op == "get":
        want = botocore_urls(client, "get_object", lambda k: {"Bucket": "diff-bucket", "Key": k}, keys, 900)
        got = [p.presign_get(k, expires_in=900, at=AT_TEXT) for k in keys]
    elif op == "get+overrides":
        extra = {b: v for b, _, v in GET_OVERRIDES}
        want = botocore_urls(client, "get_object", lambda k: {"Bucket": "diff-bucket", "Key": k, **extra}, keys, 3600)
        kw = {PY_OVERRIDES[b]: v for b, v in extra.items()}
        got = [p.presign("GET", k, at=AT_AWARE, **kw) for k in keys]
    else:
        want = botocore_urls(client, "put_object", lambda k: {"Bucket": "diff-bucket", "Key": k, "ContentType": "image/png"}, keys, 3600)
        got = [p.presign_put(k, content_type="image/png", at=AT_TEXT) for k in keys]
    mismatches = [(k, g, w) for k, g, w in zip(keys, got, want) if g != w]
    assert not mismatches, f"{len(mismatches)} differ; first: {mismatches[0]}"


def test_upload_part_params_match_botocore():
    keys = ["part/1", "a b"]
    client = botocore_client("us-east-1")
    want = botocore_urls(client, "upload_part", lambda k: {"Bucket": "diff-bucket", "Key": k, "UploadId": "u/1+", "PartNumber": 7}, keys, 3600)
    p = presigner()
    got = [p.presign("PUT", k, at=AT_TEXT, params={"uploadId": "u/1+", "partNumber": 7}) for k in keys]
    assert got == want


def test_presign_many_equals_single_calls_in_order():
    p = presigner(token=TOKEN)
    keys = [f"dir/{i}/ü {i}" for i in range(5000)]
    single = [p.presign_get(k, at=AT_TEXT) for k in keys]
    for threads in [None, 1, 2, 3]:
        assert p.presign_many(keys, at=AT_TEXT, threads=threads) == single
    assert p.presign_many(iter(keys[:10]), at=AT_TEXT) == single[:10]
    assert p.presign_many([], at=AT_TEXT) == []
    puts = p.presign_many(keys[:3], method="put", expires_in=60, at=AT_TEXT)
    assert all("X-Amz-Expires=60&" in u for u in puts)


def test_presign_many_keeps_order_across_pipeline_chunks():
    # 8,192 keys per chunk: several chunks, a partial last one, and more threads than chunks.
    p = presigner()
    keys = [f"chunks/{i}" for i in range(3 * 8192 + 17)]
    single = [p.presign_get(k, at=AT_TEXT) for k in keys]
    for threads in [None, 1, 2, 3, 8]:
        assert p.presign_many(keys, at=AT_TEXT, threads=threads) == single, threads
    assert p.presign_many(keys[:8192], at=AT_TEXT, threads=2) == single[:8192]
    assert p.presign_many(keys[:8193], at=AT_TEXT, threads=2) == single[:8193]


def test_at_forms_agree_and_default_to_now():
    p = presigner()
    assert p.presign_get("k", at=AT_TEXT) == p.presign_get("k", at=AT_AWARE)
    plus_one = datetime.timezone(datetime.timedelta(hours=1))
    assert p.presign_get("k", at=AT_AWARE.astimezone(plus_one)) == p.presign_get("k", at=AT_TEXT)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d")
    assert f"X-Amz-Date={now}T" in p.presign_get("k")


@pytest.mark.parametrize(
    "call,exc,text",
    [
        (lambda p: p.presign_get(""), ValueError, "empty"),
        (lambda p: p.presign_get("k", expires_in=0), ValueError, "604800"),
        (lambda p: p.presign_get("k", expires_in=604801), ValueError, "604800"),
        (lambda p: p.presign_get("k", expires_in=-5), ValueError, "-5"),
        (lambda p: p.presign_get("k", at="yesterday"), ValueError, "YYYYMMDDTHHMMSSZ"),
        (lambda p: p.presign_get("k", at=datetime.datetime(2020, 1, 1)), ValueError, "timezone-aware"),
        (lambda p: p.presign_get("k", at=12), TypeError, "datetime"),
        (lambda p: p.presign_get(b"k"), TypeError, ""),
        (lambda p: p.presign_get(None), TypeError, ""),
        (lambda p: p.presign("G E T", "k"), ValueError, "method"),
        (lambda p: p.presign_many("abc"), TypeError, "iterable"),
        (lambda p: p.presign_many(["a", ""]), ValueError, "keys[1]"),
        (lambda p: p.presign_many(["a", 3]), TypeError, ""),
        (lambda p: p.presign_many(["a"], threads=0), ValueError, "threads"),
        (lambda p: p.presign_get("k", params=[1, 2]), TypeError, "mapping"),
        (lambda p: p.presign_get("\ud800"), UnicodeEncodeError, ""),
    ],
)
def test_bad_input_raises_standard_exceptions(call, exc, text):
    with pytest.raises(exc) as e:
        call(presigner())
    assert text in str(e.value)


@pytest.mark.parametrize(
    "kw,text",
    [
        ({"bucket": "a b"}, "bucket"),
        ({"addressing": "sideways"}, "addressing"),
        ({"signature": "v2"}, "signature"),
        ({"region_set": "*"}, "v4a"),
        ({"endpoint_url": "127.0.0.1:9000"}, "endpoint"),
        ({"region": "us east"}, "region"),
    ],
)
def test_bad_configuration_is_a_value_error(kw, text):
    args = {"bucket": "b-u-c", "region": "us-east-1", "credentials": Credentials("A", "S")}
    args.update(kw)
    bucket = args.pop("bucket")
    with pytest.raises(ValueError, match=text):
        Presigner(bucket, **args)


def test_credentials_hide_secrets():
    c = Credentials("AKID", "SECRETVALUE", "TOKENVALUE")
    text = repr(c) + repr(presigner())
    assert "AKID" in text and "SECRETVALUE" not in text and "TOKENVALUE" not in text
    with pytest.raises(ValueError):
        Credentials("", "s")


def test_one_presigner_shared_by_threads():
    p = presigner()
    keys = [f"t/{i}" for i in range(400)]
    expected = [p.presign_get(k, at=AT_TEXT) for k in keys]
    results, errors = {}, []

    def work(n):
        try:
            results[n] = [p.presign_get(k, at=AT_TEXT) for k in keys] + p.presign_many(keys, at=AT_TEXT)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(r == expected + expected for r in results.values())


def test_presign_many_releases_the_gil():
    p = presigner()
    keys = [f"gil/{i:07d}" for i in range(600_000)]
    done = threading.Event()
    ticks = 0

    def count():
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        start_ticks = ticks
        urls = p.presign_many(keys, threads=1)
        during = ticks - start_ticks
    finally:
        done.set()
        counter.join()
    assert len(urls) == len(keys)
    # With the GIL held for the whole call the counter could only run before and after it,
    # in the interpreter's 5 ms switch slices; released, it runs throughout.
    assert during > 10_000, during


def test_sigv4a_urls():
    p = presigner(signature="v4a", region_set="us-east-1,eu-west-1")
    url = p.presign_get("a b", at=AT_TEXT)
    assert "X-Amz-Algorithm=AWS4-ECDSA-P256-SHA256&" in url and "X-Amz-Region-Set=us-east-1%2Ceu-west-1&" in url
    assert len(p.presign_many(["a", "b"], at=AT_TEXT)) == 2


def _rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


def test_no_memory_growth_over_a_million_calls():
    p = presigner(token=TOKEN)
    keys = [f"m/{i}" for i in range(1000)]

    def round_of_calls():
        for k in keys:
            p.presign_get(k)
            p.presign("PUT", k, params={"partNumber": 1}, headers={"content-type": "x/y"})
        p.presign_many(keys)
        for bad in ("", None):
            try:
                p.presign_get(bad)
            except (ValueError, TypeError):
                pass

    for _ in range(50):
        round_of_calls()
    before = _rss_kib()
    for _ in range(500):  # 500 rounds x 2,000 single calls + 500 batches of 1,000 = 1.5M URLs
        round_of_calls()
    grown = _rss_kib() - before
    assert grown < 4096, f"resident memory grew by {grown} KiB"
