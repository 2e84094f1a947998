import io
import os
from datetime import datetime
from typing import Any, Awaitable, Callable, Coroutine, Iterable, Literal, Mapping, Optional, Protocol, Sequence, TypedDict, Union, overload

_At = Union[datetime, str, None]
ChecksumAlgorithm = Literal["CRC32C", "CRC64NVME", "CRC32"]
# An SSE-C key: its 32 bytes (a str: its UTF-8), as boto3's SSECustomerKey.
SseCustomerKey = Union[bytes, str]
"""S3's names for the CRCs uploads can send (any case is accepted)."""

class BinaryWriter(Protocol):
    """What ``download_fileobj`` writes into: a binary file object's ``write``."""

    def write(self, data: bytes, /) -> Optional[int]: ...

class BinaryReader(Protocol):
    """What ``upload_fileobj`` reads from: a binary file object's ``read``."""

    def read(self, size: int = ..., /) -> bytes: ...

class ArrowStringColumn(Protocol):
    """Anything that exports Arrow data by the PyCapsule protocol: a pyarrow Array, ChunkedArray
    or one-column Table, a Polars Series, a DuckDB relation of one column, a pandas Series with
    the pyarrow backend, a nanoarrow array. Its type must be utf8, large_utf8 or utf8_view."""

    def __arrow_c_stream__(self, requested_schema: object = None) -> object: ...

_PolicyCondition = Union[Mapping[str, str], Sequence[Union[str, int]]]
"""A POST policy condition: ``{"acl": "private"}``, ``["starts-with", "$key", "up/"]``,
``["content-length-range", 0, 1048576]``."""

class PresignedPost(TypedDict):
    """boto3's ``generate_presigned_post`` answer: post the fields, then the file, to the url."""

    url: str
    fields: dict[str, str]

class UrlArray:
    """Presigned URLs in Arrow buffers (large_utf8, or utf8 when a consumer asks), one chunk per
    array of keys. Exported without a copy by the PyCapsule protocol: ``pyarrow.array(urls)``,
    ``pyarrow.chunked_array(urls)``, ``polars.Series(urls)``. ``repr`` never shows the URLs."""

    def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]: ...
    def __arrow_c_stream__(self, requested_schema: object = None) -> object: ...
    def __arrow_c_schema__(self) -> object: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Optional[str]: ...
    @property
    def null_count(self) -> int: ...
    @property
    def num_chunks(self) -> int: ...
    def to_pylist(self) -> list[Optional[str]]: ...

class Credentials:
    """An access key pair and optional session token. ``repr`` never shows the secret or token."""

    def __init__(self, access_key_id: str, secret_access_key: str, session_token: Optional[str] = None) -> None: ...
    @property
    def access_key_id(self) -> str: ...

class Presigner:
    """Presigns URLs for one bucket. Thread-safe: share one between threads.

    What is left out is found as ``Client`` finds it (the ``AWS_*`` variables, ``profile`` or
    ``AWS_PROFILE`` in the shared files); credentials that are refreshed (SSO, a role, instance
    metadata) raise ``ValueError``: a presigner signs with fixed keys, and
    ``Presigner.from_boto3`` follows refreshes. A pickle carries what was found."""

    @staticmethod
    def from_boto3(client: object, bucket: str) -> "Boto3Presigner": ...

    def __init__(
        self,
        bucket: str,
        *,
        region: Optional[str] = None,
        credentials: Optional[Credentials] = None,
        endpoint_url: Optional[str] = None,
        addressing: Literal["auto", "virtual", "path"] = "auto",
        signature: Literal["v4", "v4a"] = "v4",
        region_set: Optional[str] = None,
        profile: Optional[str] = None,
        use_fips_endpoint: Optional[bool] = None,
        use_dualstack_endpoint: Optional[bool] = None,
        use_accelerate_endpoint: Optional[bool] = None,
        us_east_1_regional_endpoint: Optional[Literal["regional", "legacy"]] = None,
    ) -> None:
        """The four endpoint settings are ``Client``'s (FIPS, dual-stack, Transfer
        Acceleration, us-east-1's regional host): URLs name the host boto3's would."""
        ...
    @property
    def bucket(self) -> str: ...
    @property
    def region(self) -> str: ...
    def presign(
        self,
        method: str,
        key: str,
        *,
        expires_in: int = 3600,
        at: _At = None,
        version_id: Optional[str] = None,
        response_content_type: Optional[str] = None,
        response_content_disposition: Optional[str] = None,
        response_cache_control: Optional[str] = None,
        response_content_language: Optional[str] = None,
        response_content_encoding: Optional[str] = None,
        response_expires: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        params: Optional[Mapping[str, str]] = None,
    ) -> str: ...
    def presign_get(self, key: str, **kw: object) -> str: ...
    def presign_put(self, key: str, *, content_type: Optional[str] = None, **kw: object) -> str: ...
    def presign_many(
        self,
        keys: Union[Sequence[str], Iterable[str]],
        *,
        method: str = "GET",
        expires_in: int = 3600,
        at: _At = None,
        threads: Optional[int] = None,
    ) -> list[str]: ...
    def presign_arrow(
        self,
        keys: ArrowStringColumn,
        *,
        method: str = "GET",
        expires_in: int = 3600,
        at: _At = None,
        threads: Optional[int] = None,
    ) -> UrlArray:
        """One URL per key of an Arrow string column, signed on every core with the GIL released,
        returned in Arrow buffers; nulls stay null. A bad key raises ValueError naming its row."""
    def presign_post(
        self,
        key: str,
        *,
        fields: Optional[Mapping[str, str]] = None,
        conditions: Optional[Sequence[_PolicyCondition]] = None,
        expires_in: int = 3600,
        at: _At = None,
    ) -> PresignedPost:
        """A presigned POST (browser form upload), byte-identical to botocore's. Each field needs a
        condition naming it; a key ending in ``${filename}`` takes the uploaded file's name."""

class _FollowingPresigner:
    """The ``Presigner`` calls, each on the presigner of the credentials of the moment."""

    @property
    def bucket(self) -> str: ...
    @property
    def region(self) -> str: ...
    def presign(self, method: str, key: str, **kw: object) -> str: ...
    def presign_get(self, key: str, **kw: object) -> str: ...
    def presign_put(self, key: str, **kw: object) -> str: ...
    def presign_many(self, keys: Iterable[str], **kw: object) -> list[str]: ...
    def presign_arrow(self, keys: ArrowStringColumn, **kw: object) -> UrlArray: ...
    def presign_post(self, key: str, **kw: object) -> PresignedPost: ...

class Boto3Presigner(_FollowingPresigner):
    """A presigner that follows a boto3 S3 client's configuration and (refreshing) credentials."""

class ClientPresigner(_FollowingPresigner):
    """``Client.presigner(bucket)``: the ``Presigner`` calls, signed with the client's credentials
    of the moment (refreshed ones followed), for the endpoint and addressing style its requests
    go to; SigV4A for a ``signature="v4a"`` client. Thread-safe."""

def generate_presigned_url(
    client: object, ClientMethod: str, Params: Optional[Mapping[str, object]] = None, ExpiresIn: int = 3600, HttpMethod: Optional[str] = None
) -> str: ...
def generate_presigned_post(
    client: object,
    Bucket: str,
    Key: str,
    Fields: Optional[Mapping[str, str]] = None,
    Conditions: Optional[Sequence[_PolicyCondition]] = None,
    ExpiresIn: int = 3600,
) -> PresignedPost: ...

class S3Error(OSError):
    """S3 refused a request."""

    code: str
    """S3's error code, e.g. ``NoSuchKey`` (empty when S3 sent no body, as for HEAD)."""
    status: int
    """The HTTP status."""

class Client:
    """Downloads and uploads with parallel parts over pooled connections; thread-safe.

    ``credentials`` is a ``Credentials``, or a callable returning ``(Credentials, expires_at)``
    (Unix seconds, or ``None`` for credentials that do not expire): it is called at the first
    request and again five minutes before ``expires_at``, also during a long transfer.

    What is left out is found where boto3 and the AWS CLI find it: credentials from
    ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, the profile (``profile``, else
    ``AWS_PROFILE``, else ``default``) in ~/.aws/credentials and ~/.aws/config (keys, SSO,
    ``credential_process``), web identity, the container or instance metadata; the region from
    ``AWS_REGION``, ``AWS_DEFAULT_REGION``, the profile, else us-east-1; the endpoint from
    ``AWS_ENDPOINT_URL_S3``, ``AWS_ENDPOINT_URL`` or the profile; the CA bundle from
    ``AWS_CA_BUNDLE`` or the profile; ``addressing="auto"`` from the profile's
    ``s3.addressing_style``. No credentials anywhere raises ``ValueError`` saying where it
    looked."""

    def __init__(
        self,
        *,
        region: Optional[str] = None,
        credentials: Optional[Union[Credentials, Callable[[], tuple[Credentials, Optional[float]]]]] = None,
        endpoint_url: Optional[str] = None,
        addressing: Literal["auto", "virtual", "path"] = "auto",
        part_size: int = 8 << 20,
        concurrency: int = 16,
        ca_bundle: Optional[Union[str, "os.PathLike[str]"]] = None,
        checksum_algorithm: ChecksumAlgorithm = "CRC32C",
        tcp_congestion: Optional[str] = None,
        stall_timeout: Optional[float] = 120.0,
        signature: Literal["v4", "v4a", "unsigned"] = "v4",
        region_set: Optional[str] = None,
        profile: Optional[str] = None,
        request_payer: bool = False,
        proxies: Optional[dict[str, str]] = None,
        use_fips_endpoint: Optional[bool] = None,
        use_dualstack_endpoint: Optional[bool] = None,
        use_accelerate_endpoint: Optional[bool] = None,
        us_east_1_regional_endpoint: Optional[Literal["regional", "legacy"]] = None,
        max_attempts: Optional[int] = None,
        connect_timeout: Optional[float] = None,
        read_timeout: Optional[float] = None,
        max_bandwidth: Optional[int] = None,
        verify: bool = True,
    ) -> None:
        """``signature="v4a"`` signs every request with SigV4A for ``region_set``
        (``"us-east-1,us-west-2"``, ``"*"``; default: the profile's
        ``sigv4a_signing_region_set`` or ``AWS_SIGV4A_SIGNING_REGION_SET``, else ``region``), as a multi-Region access point
        or an edge that verifies SigV4A needs; each request then costs one ECDSA signature.
        ``signature="unsigned"`` (botocore's ``signature_version=UNSIGNED``, the AWS CLI's
        ``--no-sign-request``) looks for no credentials and sends requests without any, for
        public buckets; ``from_boto3`` of a client configured so does the same.

        ``tcp_congestion`` names the TCP congestion control of the client's connections
        (``"cubic"``, ``"reno"``...; Linux), else the host's: uploads send with it, and on a long
        clean link a loss-based one keeps the link fuller than BBR. A name the host lacks or
        refuses raises ``ValueError`` here.

        ``request_payer=True`` signs ``x-amz-request-payer: requester`` into every request
        (boto3's ``RequestPayer="requester"`` on each call): Requester Pays buckets refuse
        requests without it.

        ``proxies`` (boto3's ``Config(proxies=...)``): ``{"https": "http://proxy:3128", "http":
        ...}``, the HTTP proxy for endpoints of each scheme (``user:password@`` in it for
        Basic credentials); left out, ``https_proxy``, ``http_proxy`` and ``no_proxy`` are read
        as boto3 reads them. An ``https`` endpoint is reached through a ``CONNECT`` tunnel,
        an ``http`` one by requests sent to the proxy. A URL that cannot be used (``socks5://``,
        ``https://``) raises ``ValueError``; ``from_boto3`` passes the boto3 client's.

        AWS's other S3 endpoints, as boto3's ``Config`` names them (ignored with a custom
        endpoint, except acceleration, which raises ``ValueError`` there):
        ``use_fips_endpoint=True`` sends to ``s3-fips.REGION.amazonaws.com`` (else
        ``AWS_USE_FIPS_ENDPOINT``, the profile's ``use_fips_endpoint``, or a ``fips-`` region
        such as ``us-gov-west-1-fips``); ``use_dualstack_endpoint=True`` to
        ``s3.dualstack.REGION.amazonaws.com``, reachable over IPv6 (else the profile's
        ``s3.use_dualstack_endpoint``, ``AWS_USE_DUALSTACK_ENDPOINT``, the profile's
        ``use_dualstack_endpoint``); ``use_accelerate_endpoint=True`` to
        ``BUCKET.s3-accelerate.amazonaws.com``, S3 Transfer Acceleration (else the profile's
        ``s3.use_accelerate_endpoint``); ``us_east_1_regional_endpoint="regional"`` to
        ``s3.us-east-1.amazonaws.com`` rather than the global ``s3.amazonaws.com`` (else
        ``AWS_S3_US_EAST_1_REGIONAL_ENDPOINT`` or the profile). Settings that are neither
        ``true`` nor ``false`` raise ``ValueError``, where boto3 reads them as false.

        A request that fails in a way trying again may mend (503 ``SlowDown``, 500, a reset
        connection) is tried up to ``max_attempts`` times, else ``AWS_MAX_ATTEMPTS`` or the
        profile's ``max_attempts``, as in boto3 (the first counted; 5 when none is set).
        ``connect_timeout`` (seconds, default 10) bounds each connection's set-up (TCP, TLS, a
        proxy's tunnel); ``read_timeout`` (seconds) the wait for an answer (default 60) and
        for each read of its body (default 30): past them the attempt is retried.
        ``max_bandwidth`` (bytes per second, as boto3's ``TransferConfig(max_bandwidth=)``;
        else the profile's ``s3.max_bandwidth``, e.g. ``50MB/s``) caps what all the client's
        connections move, both ways together (at least 16384).
        ``verify=False`` (boto3's) checks no server certificate, for a test server with a
        self-signed one (``ca_bundle`` trusts it safely); credentials are still fetched over
        checked connections.
        ``from_boto3`` carries the boto3 client's ``verify`` (``False``, or its CA bundle) and
        its ``retries`` (``total_max_attempts``, or its
        mode's default) and any timeout other than boto3's 60 s default.

        ``stall_timeout`` (seconds; ``0`` or ``None``: wait forever): a transfer raises
        ``TimeoutError`` once no byte has moved on any of the client's connections for that
        long (a frozen server), retries included. A download then leaves no file and an upload
        is aborted.

        Ctrl-C (``KeyboardInterrupt``) stops a transfer within 0.1 s; so does any signal
        handler that raises. Where the program has no handler of its own for SIGTERM or SIGHUP,
        a transfer in flight (on any thread) also catches them: it cleans up (no partial file,
        no open multipart upload) and then ends the process by that signal, as it would have
        ended without the client."""
        ...
    @classmethod
    def from_boto3(cls, client: object, **kw: object) -> "Client": ...
    @overload
    def open(
        self, bucket: str, key: str, mode: Literal["rb"] = "rb", *, version_id: Optional[str] = None, sse_customer_key: Optional[SseCustomerKey] = None, range: Optional[tuple[int, int]] = None
    ) -> "ObjectReader":
        """``bucket/key`` (or that version of it) as a binary file object, as boto3's
        ``get_object()["Body"]`` but seekable: parts fetched in parallel ahead of the reads,
        memory bounded by ``concurrency x part_size``; ``range=(start, end)`` (end exclusive)
        reads those bytes only (cut short at the object's end, as S3 cuts it). A missing object
        raises ``S3Error`` here; the object's checksum is checked at its end when it is read in
        order from the start (a mismatch raises there; none applies to a range or after a
        seek)."""
    @overload
    def open(
        self, bucket: str, key: str, mode: Literal["wb"], *, checksum_algorithm: Optional[ChecksumAlgorithm] = None, extra_args: Optional[ExtraArgs] = None
    ) -> "ObjectWriter":
        """``bucket/key`` written as a stream, uploaded as it is written (one ``PutObject`` within
        the first part, else parts sent while the next is written). Only ``close()`` or a ``with``
        block ending without an exception completes the object; an exception, ``abort()`` or a
        writer left unclosed aborts the upload and makes nothing."""
    def open_async(
        self, bucket: str, key: str, *, version_id: Optional[str] = None, sse_customer_key: Optional[SseCustomerKey] = None, range: Optional[tuple[int, int]] = None
    ) -> Coroutine[Any, Any, "AsyncObjectReader"]:
        """``open`` for asyncio: the reader once the object's first answer is here (a missing
        object raises at the ``await``)."""
    def presigner(self, bucket: str) -> ClientPresigner:
        """A presigner for ``bucket`` signing with this client's credentials (followed as they
        are refreshed), for the endpoint and addressing style its requests go to."""
    def generate_presigned_url(
        self, ClientMethod: str, Params: Optional[Mapping[str, object]] = None, ExpiresIn: int = 3600, HttpMethod: Optional[str] = None
    ) -> str:
        """boto3's ``generate_presigned_url``, byte-identical for get_object, head_object,
        put_object, delete_object and upload_part; other operations raise ``ValueError``. No
        request is sent; credentials that are due are fetched first."""
    def generate_presigned_post(
        self,
        Bucket: str,
        Key: str,
        Fields: Optional[Mapping[str, str]] = None,
        Conditions: Optional[Sequence[_PolicyCondition]] = None,
        ExpiresIn: int = 3600,
    ) -> PresignedPost:
        """boto3's ``generate_presigned_post``, byte-identical (the caller's Conditions are not
        appended to)."""
    def download(
        self,
        bucket: str,
        key: str,
        path: Union[str, "os.PathLike[str]"],
        *,
        version_id: Optional[str] = None, sse_customer_key: Optional[SseCustomerKey] = None,
        callback: Optional[Callable[[int], object]] = None,
    ) -> int:
        """``callback`` (boto3's ``Callback``, e.g. a ``tqdm``'s ``update``) is called on this
        thread with the bytes moved since its last call, about ten times a second and at the
        end; an exception it raises stops the transfer as Ctrl-C does. ``version_id`` (boto3's
        ``ExtraArgs={"VersionId": ...}``, here and in the other reads) reads that version of the
        object instead of the current one. ``sse_customer_key`` (boto3's ``SSECustomerKey``,
        here and in the other reads): the key of an object uploaded with SSE-C (``extra_args``
        ``SSECustomerAlgorithm="AES256"``, ``SSECustomerKey``); S3 takes it over HTTPS only."""
        ...
    def upload(
        self,
        path: Union[str, "os.PathLike[str]"],
        bucket: str,
        key: str,
        *,
        checksum_algorithm: Optional[ChecksumAlgorithm] = None,
        extra_args: Optional[ExtraArgs] = None,
        callback: Optional[Callable[[int], object]] = None,
    ) -> int: ...
    def download_fileobj(
        self,
        bucket: str,
        key: str,
        fileobj: BinaryWriter,
        *,
        version_id: Optional[str] = None, sse_customer_key: Optional[SseCustomerKey] = None,
        callback: Optional[Callable[[int], object]] = None,
    ) -> int:
        """Streams the object into ``fileobj`` (``write(bytes)``: a file opened ``"wb"``,
        ``io.BytesIO``, a ``gzip.GzipFile``), parts in parallel and written in order, memory
        bounded by the window of parts; the size. As boto3's: ``fileobj`` is neither flushed nor
        closed, and after an error what was written is not the object."""
        ...
    def upload_fileobj(
        self,
        fileobj: BinaryReader,
        bucket: str,
        key: str,
        *,
        checksum_algorithm: Optional[ChecksumAlgorithm] = None,
        extra_args: Optional[ExtraArgs] = None,
        callback: Optional[Callable[[int], object]] = None,
    ) -> int:
        """Uploads what ``fileobj.read(n)`` yields until ``b""`` (a file opened ``"rb"``,
        ``io.BytesIO``, a pipe), parts sent while the next is read; the size. An exception from
        ``read`` is raised as it was, and no object is made."""
        ...
    def get_bytes(
        self, bucket: str, key: str, range: Optional[tuple[int, int]] = None, *, version_id: Optional[str] = None, sse_customer_key: Optional[SseCustomerKey] = None
    ) -> bytes:
        """The object (parts in parallel, received straight into the result) or `range` of it."""
        ...
    def put_bytes(
        self,
        bucket: str,
        key: str,
        data: Union[bytes, bytearray, memoryview, str],
        *,
        checksum_algorithm: Optional[ChecksumAlgorithm] = None,
        extra_args: Optional[ExtraArgs] = None,
    ) -> str:
        """Stores ``data`` and returns the new object's ETag: one ``PutObject`` below the
        client's ``part_size``, a parallel multipart upload of slices of ``data`` from there (a
        ``bytes`` is not copied either way). As boto3's ``Body``, ``data`` may also be a
        ``str`` (sent as UTF-8) or any object with the buffer protocol (``bytearray``,
        ``memoryview``, ``array.array``, a NumPy array: its bytes, copied once, since it could
        change during the upload). ``extra_args`` as boto3's ``ExtraArgs`` (``upload`` takes it too):
        ``ContentType``, ``CacheControl``, ``Metadata``, ``StorageClass``; another name raises
        ``ValueError``."""
        ...
    def head(self, bucket: str, key: str, *, version_id: Optional[str] = None, sse_customer_key: Optional[SseCustomerKey] = None) -> dict[str, object]:
        """``HeadObject`` with boto3's field names: ``ContentLength``, ``ETag``, ``LastModified``,
        ``Metadata``, the content headers (``ContentType``...), ``StorageClass`` and
        ``VersionId`` when the answer has them (as boto3: no ``StorageClass`` is STANDARD) and the
        whole-object checksum (``ChecksumCRC64NVME``...). A missing object raises ``S3Error``
        (``code`` ``NotFound``)."""
        ...
    def list(self, bucket: str, prefix: str = "") -> "ObjectIterator":
        """Every object under ``prefix`` in key order, next pages fetched while you iterate."""
        ...
    def list_with_delimiter(self, bucket: str, prefix: str = "", delimiter: str = "/") -> "ListLevel":
        """One level below ``prefix``, as ``slipstream ls`` shows it (obstore's
        ``list_with_delimiter``, in boto3's names): ``CommonPrefixes`` (``[{"Prefix":
        "logs/2026/"}]``) and the objects directly under it as ``Contents``, every page
        followed. An empty ``delimiter`` raises ``ValueError``."""
        ...
    def list_buckets(self, *, prefix: str | None = None, bucket_region: str | None = None) -> list["BucketEntry"]:
        """``ListBuckets``: the buckets these credentials own, as boto3's ``Buckets`` list;
        ``prefix`` and ``bucket_region`` choose among them as boto3's ``Prefix`` and
        ``BucketRegion`` do (applied again to the answer, for servers that ignore them)."""
        ...
    def list_versions(self, bucket: str, prefix: str = "") -> "VersionListing":
        """Every version and delete marker under ``prefix``, as boto3's
        ``list_object_versions`` answers with its pages joined: ``Versions`` and
        ``DeleteMarkers``, newest first for each key."""
        ...
    def create_bucket(self, bucket: str, *, tags: Optional[Mapping[str, str]] = None) -> None:
        """``CreateBucket`` (the CLI's ``mb``) in the client's region (boto3's
        ``CreateBucketConfiguration={"LocationConstraint": region}`` outside us-east-1, which S3
        requires there), tagged with ``tags`` from the start (the AWS CLI's ``mb --tags``). A
        bucket that exists raises ``S3Error`` (``BucketAlreadyOwnedByYou`` or
        ``BucketAlreadyExists``)."""
        ...
    def delete_bucket(self, bucket: str, *, force: bool = False) -> None:
        """``DeleteBucket`` (the CLI's ``rb``). ``force=True`` first deletes every object in
        it (the AWS CLI's ``rb --force``: current versions, in batches as ``delete_many``); an
        object S3 refuses keeps the bucket and raises ``S3Error`` ``BucketNotEmpty`` naming it.
        A bucket that still holds something raises ``BucketNotEmpty`` saying what to do."""
        ...
    def get_bucket_versioning(self, bucket: str) -> dict[str, str]:
        """``GetBucketVersioning`` (the CLI's ``bucket-version``), as boto3 answers it:
        ``{"Status": "Enabled"}`` or ``"Suspended"`` (and ``MFADelete`` when the bucket has that
        setting); ``{}`` for a bucket never versioned."""
        ...
    def put_bucket_versioning(self, bucket: str, status: Literal["Enabled", "Suspended"]) -> None:
        """``PutBucketVersioning`` (``bucket-version --set``): turns versioning on or suspends
        it (boto3's ``VersioningConfiguration={"Status": status}``); another ``status`` raises
        ``ValueError`` (a bucket once versioned cannot be unversioned again)."""
        ...
    def delete(self, bucket: str, key: str, *, version_id: Optional[str] = None) -> None:
        """``DeleteObject``. In a versioned bucket it leaves a delete marker (the versions
        stay); with ``version_id`` it removes that version for good."""
        ...
    def delete_many(
        self, bucket: str, keys: Iterable[Union[str, tuple[str, str], Mapping[str, object]]]
    ) -> list[dict[str, str]]:
        """``DeleteObjects`` batches of 1,000, 8 in flight; returns the keys S3 refused as
        ``[{"Key", "Code", "Message"}]`` (empty when every key was deleted). An item may name a
        version instead, removed for good: ``(key, version_id)``, or boto3's dict with ``Key``
        and ``VersionId`` (``list_versions``' entries: ``c.delete_many(b, v["Versions"] +
        v["DeleteMarkers"])`` empties a prefix of a versioned bucket); a refused version
        carries its ``VersionId``."""
        ...
    def copy(self, src_bucket: str, src_key: str, bucket: str, key: str, *, src_version_id: Optional[str] = None, sse_customer_key: Optional[SseCustomerKey] = None, src_sse_customer_key: Optional[SseCustomerKey] = None, extra_args: Optional[CopyExtraArgs] = None) -> int:
        """Copies on the server (metadata and checksum kept; parts above 5 GiB); the size.
        ``src_version_id`` copies that version of the source: onto its own key, it becomes the
        current version again. SSE-C: ``src_sse_customer_key`` opens a source encrypted with
        one (boto3's ``CopySourceSSECustomerKey``), ``sse_customer_key`` encrypts the copy.
        ``extra_args`` as boto3's ``ExtraArgs`` of a copy: what the new object carries
        (``ContentType``, ``Metadata``... as an upload's) and ``MetadataDirective``. Given
        content headers or metadata replace the source's (as ``slipstream cp`` does; boto3 sends
        them under ``COPY`` unless told ``REPLACE``, and S3 then ignores them); ``"COPY"`` keeps
        the source's whatever is given, ``"REPLACE"`` replaces them even with none. The storage
        class, ACL, encryption and tags apply either way."""
        ...
    def sync(
        self,
        source: str,
        destination: str,
        *,
        delete: bool = False,
        size_only: bool = False,
        exact_timestamps: bool = False,
        dryrun: bool = False,
        filters: Sequence[tuple[Literal["include", "exclude"], str]] = (),
        objects: int | None = None,
        follow_symlinks: bool = True,
        raw: bool = False,
        callback: Optional[Callable[[int], object]] = None,
    ) -> SyncResult:
        """Makes ``destination`` hold what ``source`` holds: a directory and
        ``s3://bucket/prefix`` either way, or two prefixes (copied on the server). Moves what is
        missing or differs (size, then time, as ``aws s3 sync``); ``delete`` removes what the
        source lacks; ``filters`` in order, the last match deciding. A directory's symbolic
        links are followed (a loop left out, a link to nothing an error) unless
        ``follow_symlinks=False``; its FIFOs, sockets and devices are left out and listed in
        ``not_files``. ``callback`` as for ``download``, told the bytes of every object moved.
        A wildcard source (``"s3://b/logs/2026-*/*.gz"``, ``*`` crossing ``/``) takes the
        objects it matches, named relative to its literal part up to the last ``/``, and bounds
        both sides as a filter would: ``delete`` removes only destination names it matches. A
        wildcard destination raises ``ValueError``; ``raw=True`` takes ``*``, ``?`` and ``[``
        as characters of the keys."""
        ...

    # asyncio twins: each returns a coroutine whose work starts at the call, runs on the
    # client's own threads (the event loop stays free) and is aborted when the awaiting task is
    # cancelled (no partial file, the multipart upload aborted). Made before any loop runs
    # (``asyncio.run(c.get_bytes_async(b, k))``), a call starts when first awaited.
    def download_async(
        self, bucket: str, key: str, path: Union[str, "os.PathLike[str]"], *, version_id: Optional[str] = None, sse_customer_key: Optional[SseCustomerKey] = None
    ) -> Coroutine[Any, Any, int]: ...
    def upload_async(
        self,
        path: Union[str, "os.PathLike[str]"],
        bucket: str,
        key: str,
        *,
        checksum_algorithm: Optional[ChecksumAlgorithm] = None,
        extra_args: Optional[ExtraArgs] = None,
    ) -> Coroutine[Any, Any, int]: ...
    def download_fileobj_async(
        self, bucket: str, key: str, fileobj: BinaryWriter, *, version_id: Optional[str] = None, sse_customer_key: Optional[SseCustomerKey] = None
    ) -> Coroutine[Any, Any, int]: ...
    def upload_fileobj_async(
        self,
        fileobj: BinaryReader,
        bucket: str,
        key: str,
        *,
        checksum_algorithm: Optional[ChecksumAlgorithm] = None,
        extra_args: Optional[ExtraArgs] = None,
    ) -> Coroutine[Any, Any, int]: ...
    def get_bytes_async(
        self, bucket: str, key: str, range: Optional[tuple[int, int]] = None, *, version_id: Optional[str] = None, sse_customer_key: Optional[SseCustomerKey] = None
    ) -> Coroutine[Any, Any, bytes]: ...
    def put_bytes_async(
        self,
        bucket: str,
        key: str,
        data: Union[bytes, bytearray, memoryview, str],
        *,
        checksum_algorithm: Optional[ChecksumAlgorithm] = None,
        extra_args: Optional[ExtraArgs] = None,
    ) -> Coroutine[Any, Any, str]: ...
    def head_async(
        self, bucket: str, key: str, *, version_id: Optional[str] = None, sse_customer_key: Optional[SseCustomerKey] = None
    ) -> Coroutine[Any, Any, dict[str, object]]: ...
    def list_async(self, bucket: str, prefix: str = "") -> "AsyncObjectIterator": ...
    def list_with_delimiter_async(
        self, bucket: str, prefix: str = "", delimiter: str = "/"
    ) -> Coroutine[Any, Any, "ListLevel"]: ...
    def list_buckets_async(self, *, prefix: str | None = None, bucket_region: str | None = None) -> Coroutine[Any, Any, list["BucketEntry"]]: ...
    def list_versions_async(self, bucket: str, prefix: str = "") -> Coroutine[Any, Any, "VersionListing"]: ...
    def create_bucket_async(self, bucket: str, *, tags: Optional[Mapping[str, str]] = None) -> Coroutine[Any, Any, None]: ...
    def delete_bucket_async(self, bucket: str, *, force: bool = False) -> Coroutine[Any, Any, None]: ...
    def get_bucket_versioning_async(self, bucket: str) -> Coroutine[Any, Any, dict[str, str]]: ...
    def put_bucket_versioning_async(self, bucket: str, status: Literal["Enabled", "Suspended"]) -> Coroutine[Any, Any, None]: ...
    def delete_async(self, bucket: str, key: str, *, version_id: Optional[str] = None) -> Coroutine[Any, Any, None]: ...
    def delete_many_async(
        self, bucket: str, keys: Iterable[Union[str, tuple[str, str], Mapping[str, object]]]
    ) -> Coroutine[Any, Any, list[dict[str, str]]]: ...
    def copy_async(
        self, src_bucket: str, src_key: str, bucket: str, key: str, *, src_version_id: Optional[str] = None, sse_customer_key: Optional[SseCustomerKey] = None, src_sse_customer_key: Optional[SseCustomerKey] = None, extra_args: Optional[CopyExtraArgs] = None
    ) -> Coroutine[Any, Any, int]: ...
    def sync_async(
        self,
        source: str,
        destination: str,
        *,
        delete: bool = False,
        size_only: bool = False,
        exact_timestamps: bool = False,
        dryrun: bool = False,
        filters: Sequence[tuple[Literal["include", "exclude"], str]] = (),
        objects: int | None = None,
        follow_symlinks: bool = True,
        raw: bool = False,
    ) -> Coroutine[Any, Any, SyncResult]: ...

class ExtraArgs(TypedDict, total=False):
    """What an upload's object carries besides its bytes, named as boto3's ``ExtraArgs``."""

    ContentType: str
    CacheControl: str
    ContentDisposition: str
    ContentEncoding: str
    ContentLanguage: str
    Expires: Union[datetime, str]
    """A ``datetime`` (naive means UTC) or an HTTP date: ``Tue, 01 Jan 2030 00:00:00 GMT``."""
    Metadata: dict[str, str]
    StorageClass: str
    ACL: str
    GrantRead: str
    """Grantees, as S3 takes them: ``uri="http://acs.amazonaws.com/groups/global/AllUsers"``,
    ``id="..."``, ``emailAddress="..."``, comma-separated (so are the three below)."""
    GrantReadACP: str
    GrantWriteACP: str
    GrantFullControl: str
    ServerSideEncryption: str
    SSECustomerAlgorithm: Literal["AES256"]
    """SSE-C, with ``SSECustomerKey``: the object is encrypted with a key you keep; every read
    of it then takes ``sse_customer_key=``."""
    SSECustomerKey: Union[bytes, str]
    """The key's 32 bytes (a ``str``: its UTF-8), or its base64 when ``SSECustomerKeyMD5`` is
    given too (as boto3 takes them)."""
    SSECustomerKeyMD5: str
    SSEKMSKeyId: str
    Tagging: str
    """A query string: ``project=a&team=b%20c``."""
    WebsiteRedirectLocation: str

class CopyExtraArgs(ExtraArgs, total=False):
    """A copy's ``ExtraArgs``: an upload's, and what happens to the source's metadata."""

    MetadataDirective: Literal["COPY", "REPLACE"]

class _BucketEntryRequired(TypedDict):
    Name: str
    CreationDate: str
    """As S3 wrote it (ISO 8601, UTC)."""

class BucketEntry(_BucketEntryRequired, total=False):
    BucketRegion: str
    """Where the server says it (S3 does; older S3-compatible servers do not)."""

class SyncAction(TypedDict, total=False):
    action: Literal["upload", "download", "copy", "delete"]
    source: str
    destination: str

class ListLevel(TypedDict):
    CommonPrefixes: list[dict[str, str]]
    Contents: list[dict[str, object]]

class ObjectVersion(TypedDict, total=False):
    Key: str
    VersionId: str
    IsLatest: bool
    LastModified: str
    Size: int
    ETag: str
    StorageClass: str

class DeleteMarkerEntry(TypedDict):
    Key: str
    VersionId: str
    IsLatest: bool
    LastModified: str

class VersionListing(TypedDict):
    Versions: list[ObjectVersion]
    DeleteMarkers: list[DeleteMarkerEntry]

class SyncResult(TypedDict):
    copied: int
    bytes: int
    deleted: int
    unchanged: int
    actions: list[SyncAction]
    failed: list[dict[str, str]]
    not_files: list[str]
    """A source directory's entries left out for not being files (FIFOs, sockets, devices)."""

class ObjectReader(io.BufferedIOBase):
    """``Client.open``'s read-only binary stream (one thread's). ``read``, ``read1``,
    ``readline``, iteration by lines, ``readinto``, ``seek``, ``tell``, ``size``;
    ``io.TextIOWrapper``, ``zipfile`` and ``pyarrow.parquet`` take it. A seek within what was
    fetched (ahead, or the last MiB read) costs nothing; any other starts a download from there
    at the next read, pinned to the object's ETag. Closing it stops the download."""

    def read(self, size: Optional[int] = -1, /) -> bytes: ...
    def read1(self, size: Optional[int] = -1, /) -> bytes: ...
    def readline(self, size: Optional[int] = -1, /) -> bytes: ...
    def readable(self) -> bool: ...
    def readinto(self, b: Any, /) -> int: ...
    def readinto1(self, b: Any, /) -> int: ...
    def seekable(self) -> bool: ...
    def seek(self, offset: int, whence: int = 0, /) -> int: ...
    def tell(self) -> int: ...
    @property
    def size(self) -> int:
        """The object's size in bytes (the range's length, for a range)."""
    def close(self) -> None: ...

class ObjectWriter(io.BufferedIOBase):
    """``Client.open(bucket, key, "wb")``'s stream: ``write`` (any bytes-like object), ``tell``,
    ``close`` (completes the object), ``abort`` (makes nothing); ``with`` completes it unless the
    block raised. One thread's."""

    def write(self, b: Any, /) -> int: ...
    def writable(self) -> bool: ...
    def tell(self) -> int: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...

class AsyncObjectReader:
    """``Client.open_async``'s reader: ``await r.read(n)``, ``await r.read1(n)``, ``await
    r.readline()``, ``async for line in r``, ``async with``. A read that what was fetched can
    answer completes at once; a cancelled read loses nothing. ``seek`` and ``tell`` are not
    awaited (they never wait: the next read fetches from the new position). One task's at a
    time."""

    def read(self, size: Optional[int] = -1, /) -> Awaitable[bytes]: ...
    def read1(self, size: Optional[int] = -1, /) -> Awaitable[bytes]: ...
    def readline(self, size: Optional[int] = -1, /) -> Awaitable[bytes]: ...
    def seek(self, offset: int, whence: int = 0, /) -> int: ...
    def tell(self) -> int: ...
    @property
    def size(self) -> int:
        """The object's size in bytes (the range's length, for a range)."""
    def close(self) -> None: ...
    def __aiter__(self) -> "AsyncObjectReader": ...
    def __anext__(self) -> Awaitable[bytes]: ...
    def __aenter__(self) -> Awaitable["AsyncObjectReader"]: ...
    def __aexit__(self, *exc: object) -> Awaitable[None]: ...

class ObjectIterator:
    """What ``Client.list`` returns: dicts with ``Key``, ``Size``, ``ETag``, ``LastModified``
    and, when the listing has it (S3's does), ``StorageClass``."""

    def __iter__(self) -> "ObjectIterator": ...
    def __next__(self) -> dict[str, object]: ...

class AsyncObjectIterator:
    """What ``Client.list_async`` returns: ``async for o in client.list_async(bucket, prefix)``."""

    def __aiter__(self) -> "AsyncObjectIterator": ...
    def __anext__(self) -> Awaitable[dict[str, object]]: ...
