"""The `slipstream` logger at DEBUG, as botocore logs on `botocore.*`: a `Client` made while it
wants DEBUG records where its requests go and one record per attempt (method, URL, status,
time, retry), never a secret; made while it does not, it logs nothing and measures nothing."""

import asyncio
import logging
import uuid

import pytest

import slipstream
from test_client import make_client

KEY = b"0123456789abcdef0123456789abcdef"


@pytest.fixture()
def records():
    logger = logging.getLogger("slipstream")
    seen: list[logging.LogRecord] = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = seen.append
    old = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield seen
    logger.removeHandler(handler)
    logger.setLevel(old)


def test_each_attempt_is_a_debug_record_without_secrets(server, s3, records):
    c = make_client(server)
    bucket = f"pylog-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    c.put_bytes(bucket, "k", b"x" * 100, extra_args={"SSECustomerAlgorithm": "AES256", "SSECustomerKey": KEY})
    assert c.get_bytes(bucket, "k", sse_customer_key=KEY) == b"x" * 100

    async def listed():
        return await c.list_buckets_async(prefix=bucket)

    assert [b["Name"] for b in asyncio.run(listed())] == [bucket]
    lines = [r.getMessage() for r in records]
    assert all(r.levelno == logging.DEBUG and r.name == "slipstream" for r in records)
    assert lines[0] == (f"credentials from Python; region {server['region']}; endpoint {server['endpoint']}; "
                        "up to 5 attempts a request"), lines[0]
    assert any(line.startswith(f"PUT {server['endpoint']}/{bucket}/k -> 200 in ") for line in lines), lines
    assert any(line.startswith(f"GET {server['endpoint']}/{bucket}/k -> 20") for line in lines), lines
    assert any(line.startswith(f"GET {server['endpoint']}/?prefix={bucket} -> 200") for line in lines), lines
    for secret in [server["secret_key"], KEY.decode(), "Signature", "Credential="]:
        assert not any(secret in line for line in lines), secret


def test_a_client_made_without_debug_logs_nothing(server, records):
    logging.getLogger("slipstream").setLevel(logging.INFO)
    c = make_client(server)
    with pytest.raises(slipstream.S3Error):
        c.head(f"pylog-missing-{uuid.uuid4().hex[:8]}", "k")
    assert records == []


def test_retries_are_records_that_say_when_they_go_again(records):
    c = slipstream.Client(region="us-east-1", credentials=slipstream.Credentials("AKID", "secret"),
                          endpoint_url="http://127.0.0.1:9", addressing="path", max_attempts=2)
    with pytest.raises(Exception):
        c.head("b", "k")
    attempts = [r.getMessage() for r in records if " -> " in r.getMessage()]
    assert len(attempts) == 2 and "(attempt 1 of 2); again in " in attempts[0], attempts
    assert attempts[1].endswith("(attempt 2 of 2)"), attempts
