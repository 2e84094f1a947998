"""Bridges from boto3: a presigner configured like a boto3 S3 client, and boto3's
`generate_presigned_url` call shape.

Credentials are read from the client at every call (botocore's `get_frozen_credentials`), so
credentials that botocore refreshes (assumed roles, SSO, instance profiles) stay fresh; the native
presigner is rebuilt only when they change.
"""

import base64
import hashlib
import threading
from typing import Any, Callable, Mapping, Optional, Tuple
from urllib.parse import urlsplit

from slipstream._slipstream import Credentials
from slipstream._slipstream import Presigner as _Native
from slipstream._presigners import FollowingPresigner

# ClientMethod -> HTTP method. Other operations raise: signing them differently than boto3
# would give URLs S3 refuses.
_METHODS = {"get_object": "GET", "head_object": "HEAD", "put_object": "PUT", "delete_object": "DELETE", "upload_part": "PUT"}
# Params that become query parameters, by name, in the order the caller gives them (as botocore).
_QUERY = {
    "VersionId": "versionId",
    "ResponseCacheControl": "response-cache-control",
    "ResponseContentDisposition": "response-content-disposition",
    "ResponseContentEncoding": "response-content-encoding",
    "ResponseContentLanguage": "response-content-language",
    "ResponseContentType": "response-content-type",
    "ResponseExpires": "response-expires",
    "UploadId": "uploadId",
    "PartNumber": "partNumber",
}
# Params that become signed headers.
_HEADERS = {"ContentType": "content-type"}
# SSE-C Params, for the methods that take them: signed headers the URL's user must send.
_SSE_C = ("SSECustomerAlgorithm", "SSECustomerKey", "SSECustomerKeyMD5")
_SSE_C_METHODS = {"get_object", "head_object", "put_object", "upload_part"}


def _sse_c_headers(params: dict) -> dict:
    """SSE-C Params as botocore signs them: the algorithm, the key in base64 and its MD5 in
    base64 (a `str` key taken as its UTF-8); with SSECustomerKeyMD5 given, both as given."""
    given = {name: params.pop(name) for name in _SSE_C if name in params}
    if not given:
        return {}
    key, md5 = given.get("SSECustomerKey"), given.get("SSECustomerKeyMD5")
    headers = {}
    if "SSECustomerAlgorithm" in given:
        headers["x-amz-server-side-encryption-customer-algorithm"] = given["SSECustomerAlgorithm"]
    if key is not None and md5 is None:
        raw = key.encode("utf-8") if isinstance(key, str) else bytes(key)
        key, md5 = base64.b64encode(raw).decode(), base64.b64encode(hashlib.md5(raw, usedforsecurity=False).digest()).decode()
    if key is not None:
        headers["x-amz-server-side-encryption-customer-key"] = key
    if md5 is not None:
        headers["x-amz-server-side-encryption-customer-key-md5"] = md5
    return headers


def _is_aws_endpoint(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host.endswith(".amazonaws.com") or host.endswith(".amazonaws.com.cn")


def _endpoint_variants(config: Any) -> dict:
    """The boto3 client's FIPS, dual-stack, acceleration and us-east-1 settings, as keyword
    arguments: given explicitly, so that what the client was made with wins over the
    environment, as it does for boto3. botocore keeps the profile's values as strings."""

    def on(value: Any) -> bool:
        return value is True or (isinstance(value, str) and value.lower() == "true")

    s3_config = config.s3 or {}
    return {
        "use_fips_endpoint": on(config.use_fips_endpoint),
        "use_dualstack_endpoint": on(s3_config.get("use_dualstack_endpoint")) or on(config.use_dualstack_endpoint),
        "use_accelerate_endpoint": on(s3_config.get("use_accelerate_endpoint")),
        "us_east_1_regional_endpoint": s3_config.get("us_east_1_regional_endpoint") or "legacy",
    }


# botocore's defaults: 60 s to connect and to read; attempts by retry mode when not given.
_BOTO3_TIMEOUT = 60
_ATTEMPTS_BY_MODE = {"standard": 3, "adaptive": 3}


def _retries_and_timeouts(config: Any) -> dict:
    """The boto3 client's attempts per request (`retries={"total_max_attempts": n}`,
    `{"max_attempts": retries}`, `AWS_MAX_ATTEMPTS`, or its retry mode's default) and the
    timeouts it was given; boto3's 60 s defaults are left to the `Client`'s own (10 s to
    connect, 60 s for an answer, 30 s of silence in a body, then retried)."""
    retries = config.retries or {}
    kw = {}
    attempts = retries.get("total_max_attempts") or _ATTEMPTS_BY_MODE.get(retries.get("mode"))
    if attempts:
        kw["max_attempts"] = attempts
    if config.connect_timeout != _BOTO3_TIMEOUT:
        kw["connect_timeout"] = config.connect_timeout
    if config.read_timeout != _BOTO3_TIMEOUT:
        kw["read_timeout"] = config.read_timeout
    return kw


def _certificates(client: Any) -> dict:
    """The boto3 client's `verify=`: `False` as `verify=False`; a CA bundle (its own, or
    `AWS_CA_BUNDLE`) as `ca_bundle=`; botocore's own bundle left to the `Client`'s roots."""
    from botocore.httpsession import DEFAULT_CA_BUNDLE

    verify = getattr(getattr(client._endpoint, "http_session", None), "_verify", True)
    if verify is False:
        return {"verify": False}
    if isinstance(verify, str) and verify != DEFAULT_CA_BUNDLE:
        return {"ca_bundle": verify}
    return {}


class Boto3Presigner(FollowingPresigner):
    """A presigner that follows a boto3 S3 client's configuration and credentials."""

    def __init__(self, client: Any, bucket: str) -> None:
        meta = client.meta
        self._client = client
        self._bucket = bucket
        self._region = meta.region_name or "us-east-1"
        self._endpoint = None if _is_aws_endpoint(meta.endpoint_url) else meta.endpoint_url
        s3_config = meta.config.s3 or {}
        self._addressing = s3_config.get("addressing_style") or "auto"
        self._variants = _endpoint_variants(meta.config)
        self._lock = threading.Lock()
        self._frozen: Optional[tuple] = None
        self._native: Optional[_Native] = None

    def _presigner(self) -> _Native:
        creds = self._client._request_signer._credentials
        if creds is None:
            raise ValueError("the boto3 client has no credentials: configure them as for boto3")
        frozen = creds.get_frozen_credentials()
        key = (frozen.access_key, frozen.secret_key, frozen.token)
        with self._lock:
            if key != self._frozen or self._native is None:
                self._native = _Native(
                    self._bucket,
                    region=self._region,
                    credentials=Credentials(*key),
                    endpoint_url=self._endpoint,
                    addressing=self._addressing,
                    **self._variants,
                )
                self._frozen = key
            return self._native


_cache_lock = threading.Lock()
_cache: dict = {}


def generate_presigned_url(client: Any, ClientMethod: str, Params: Optional[Mapping[str, Any]] = None, ExpiresIn: int = 3600, HttpMethod: Optional[str] = None) -> str:  # noqa: N803 (boto3's names)
    """`client.generate_presigned_url(ClientMethod, Params, ExpiresIn, HttpMethod)`,
    byte-identical for get_object, head_object, put_object, delete_object and upload_part."""
    return presigned_url(lambda bucket: _cached(client, bucket), ClientMethod, Params, ExpiresIn, HttpMethod)


def presigned_url(presigner_of: Callable[[str], Any], ClientMethod: str, Params: Optional[Mapping[str, Any]], ExpiresIn: int, HttpMethod: Optional[str]) -> str:  # noqa: N803
    """boto3's `generate_presigned_url` arguments as one `presign` call on the presigner
    `presigner_of(bucket)` gives: a boto3 client's (above) or a `Client`'s."""
    params = dict(Params or {})
    method = _METHODS.get(ClientMethod)
    if method is None:
        raise ValueError(f"ClientMethod {ClientMethod!r} is not supported: use one of {sorted(_METHODS)}")
    try:
        bucket, key = params.pop("Bucket"), params.pop("Key")
    except KeyError as e:
        raise ValueError(f"Params must include {e.args[0]!r}") from None
    query, headers = {}, _sse_c_headers(params) if ClientMethod in _SSE_C_METHODS else {}
    for name, value in params.items():
        if name in _QUERY:
            query[_QUERY[name]] = value
        elif name in _HEADERS and method == "PUT":
            headers[_HEADERS[name]] = value
        else:
            raise ValueError(f"parameter {name!r} is not supported for {ClientMethod}; use boto3 for it")
    # botocore signs the operation's request with only its method replaced.
    signed_as = method if HttpMethod is None else HttpMethod
    return presigner_of(bucket).presign(signed_as, key, expires_in=ExpiresIn, params=query, headers=headers)


def generate_presigned_post(
    client: Any,
    Bucket: str,  # noqa: N803 (boto3's names)
    Key: str,  # noqa: N803
    Fields: Optional[Mapping[str, str]] = None,  # noqa: N803
    Conditions: Optional[list] = None,  # noqa: N803
    ExpiresIn: int = 3600,  # noqa: N803
) -> dict:
    """`client.generate_presigned_post(Bucket, Key, Fields, Conditions, ExpiresIn)`,
    byte-identical: the same URL and fields, the same policy bytes and signature. Unlike
    botocore, the caller's Conditions list is not appended to."""
    return _cached(client, Bucket).presign_post(Key, fields=Fields, conditions=Conditions, expires_in=ExpiresIn)


def _cached(client: Any, bucket: str) -> Boto3Presigner:
    """One Boto3Presigner per (client, bucket), made on first use."""
    with _cache_lock:
        presigner = _cache.get((id(client), bucket))
        if presigner is None or presigner._client is not client:
            presigner = _cache[(id(client), bucket)] = Boto3Presigner(client, bucket)
    return presigner


def _credentials_of(creds: Any) -> Callable[[], Tuple[Credentials, Optional[float]]]:
    """A `Client` credentials callable over botocore credentials. The engine calls it at the
    first request and again five minutes before the expiry it returns; by then botocore's own
    refresh window (15 minutes) has passed, so `get_frozen_credentials` hands over new ones."""

    def current() -> Tuple[Credentials, Optional[float]]:
        frozen = creds.get_frozen_credentials()
        expiry = getattr(creds, "_expiry_time", None)
        return (
            Credentials(frozen.access_key, frozen.secret_key, frozen.token),
            expiry.timestamp() if expiry is not None else None,
        )

    return current


def client_settings(client: Any) -> dict:
    """`Client` keyword arguments matching a boto3 S3 client; its credentials are followed as
    botocore refreshes them."""
    from botocore import UNSIGNED

    meta = client.meta
    settings = {
        "region": meta.region_name or "us-east-1",
        "endpoint_url": None if _is_aws_endpoint(meta.endpoint_url) else meta.endpoint_url,
        "addressing": (meta.config.s3 or {}).get("addressing_style") or "auto",
        **_endpoint_variants(meta.config),
    }
    if meta.config.proxies:  # Config(proxies={"https": ...}); else the environment's, as for boto3
        settings["proxies"] = dict(meta.config.proxies)
    settings.update(_retries_and_timeouts(meta.config))
    settings.update(_certificates(client))
    if meta.config.signature_version is UNSIGNED:  # Config(signature_version=UNSIGNED)
        return dict(settings, signature="unsigned")
    creds = client._request_signer._credentials
    if creds is None:
        raise ValueError("the boto3 client has no credentials: configure them as for boto3")
    return dict(settings, credentials=_credentials_of(creds))
