"""Slipstream: the fast path to S3.

Presigned S3 URLs (SigV4 and SigV4A) at native speed, byte-identical to botocore::

    from slipstream import Credentials, Presigner

    p = Presigner("my-bucket", region="eu-west-1", credentials=Credentials(key_id, secret))
    url = p.presign_get("reports/2026.pdf", expires_in=600)
    urls = p.presign_many(keys)  # every core, the GIL released, order kept

and objects moved in parallel parts over pooled connections::

    from slipstream import Client

    c = Client()  # credentials, region and endpoint as boto3 finds them (AWS_*, ~/.aws)
    c.download("my-bucket", "big.iso", "/tmp/big.iso")
    data = c.get_bytes("my-bucket", "small.json")
    url = c.generate_presigned_url("get_object", Params={"Bucket": "my-bucket", "Key": "k"})
"""

import typing

from slipstream._boto3 import Boto3Presigner, generate_presigned_post, generate_presigned_url
from slipstream._boto3 import presigned_url as _presigned_url
from slipstream._presigners import FollowingPresigner as _FollowingPresigner
from slipstream._reader import ObjectReader, ObjectWriter
from slipstream._slipstream import Client as _NativeClient
from slipstream._slipstream import Credentials, S3Error, UrlArray
from slipstream._slipstream import Presigner as _NativePresigner


class Presigner(_NativePresigner):
    """Presigns URLs for one bucket; thread-safe. See the package docstring for an example."""

    @staticmethod
    def from_boto3(client, bucket: str) -> Boto3Presigner:
        """A presigner with the region, endpoint, addressing style and credentials of a boto3 S3
        client. Credentials that botocore refreshes are re-read at every call."""
        return Boto3Presigner(client, bucket)


class Client(_NativeClient):
    """Downloads and uploads with parallel parts; thread-safe, the GIL released while it works.

    Ctrl-C, and SIGTERM or SIGHUP where the program has no handler for them, stop a transfer
    with nothing left half-written: no partial file under the destination's name, no open
    multipart upload."""

    @classmethod
    def from_boto3(cls, client, **kw) -> "Client":
        """A client with the region, endpoint, addressing style, credentials, retries, timeouts
        and certificate checks of a boto3 S3 client; keyword arguments given here win.
        Credentials that botocore refreshes (assumed roles, SSO, instance profiles) are asked
        for again before they expire, also in the middle of a long transfer."""
        from slipstream._boto3 import client_settings

        return cls(**{**client_settings(client), **kw})  # what the caller gives wins

    def open(self, bucket: str, key: str, mode: str = "rb", *, version_id: typing.Optional[str] = None,
             range: typing.Optional[typing.Tuple[int, int]] = None,  # noqa: A002 (get_bytes' name)
             checksum_algorithm: typing.Optional[str] = None, extra_args: typing.Optional[dict] = None,
             sse_customer_key: typing.Union[bytes, str, None] = None):
        """`bucket/key` as a binary file object. ``"rb"``: read in order, as boto3's
        ``get_object()["Body"]``, its parts fetched in parallel ahead of the reads in bounded
        memory (the client's ``concurrency x part_size``); ``version_id``, ``range=(start, end)``
        (end exclusive) as ``get_bytes`` takes them. A missing object raises here; the object's
        checksum, when it has one, is checked at its end. ``"wb"``: written, and uploaded as it
        is written (``checksum_algorithm`` and ``extra_args`` as ``upload`` takes them); only
        ``close()`` or a ``with`` block ending without an exception completes the object.
        ``sse_customer_key``: the SSE-C key the object is read with (a write takes it in
        ``extra_args``, as ``upload`` does)."""
        if mode == "rb":
            if checksum_algorithm is not None or extra_args is not None:
                raise ValueError("checksum_algorithm and extra_args are for mode 'wb'")
            return ObjectReader(self._open(bucket, key, version_id=version_id, range=range,
                                           sse_customer_key=sse_customer_key))
        if mode == "wb":
            if version_id is not None or range is not None:
                raise ValueError("version_id and range are for mode 'rb': a write makes a new version")
            if sse_customer_key is not None:
                raise ValueError("a write takes its SSE-C key in extra_args (SSECustomerAlgorithm, SSECustomerKey)")
            return ObjectWriter(self._open_writer(bucket, key, checksum_algorithm=checksum_algorithm, extra_args=extra_args))
        raise ValueError(f"mode must be 'rb' or 'wb', not {mode!r}")

    def presigner(self, bucket: str) -> "ClientPresigner":
        """A presigner for `bucket` signing with this client's credentials, for the endpoint and
        addressing style it sends its requests to (SigV4A for a ``signature="v4a"`` client);
        credentials that are refreshed are followed at every call."""
        return ClientPresigner(self, bucket)

    def generate_presigned_url(self, ClientMethod: str, Params: typing.Optional[typing.Mapping[str, typing.Any]] = None, ExpiresIn: int = 3600, HttpMethod: typing.Optional[str] = None) -> str:  # noqa: N803 (boto3's names)
        """boto3's ``generate_presigned_url``, byte-identical for get_object, head_object,
        put_object, delete_object and upload_part, signed with this client's credentials."""
        return _presigned_url(self._urls_of, ClientMethod, Params, ExpiresIn, HttpMethod)

    def _urls_of(self, bucket: str):
        """What signs `bucket`'s URLs: the presigner of the current credentials, or for a client
        without any (``signature="unsigned"``) plain URLs, as a boto3 client with ``UNSIGNED``
        gives them."""
        return _PlainUrls(self, bucket) if self._unsigned else self._presigner(bucket)

    def generate_presigned_post(self, Bucket: str, Key: str, Fields: typing.Optional[typing.Mapping[str, str]] = None, Conditions: typing.Optional[list] = None, ExpiresIn: int = 3600) -> dict:  # noqa: N803
        """boto3's ``generate_presigned_post``, byte-identical, signed with this client's
        credentials. Unlike botocore, the caller's Conditions list is not appended to."""
        return self._presigner(Bucket).presign_post(Key, fields=Fields, conditions=Conditions, expires_in=ExpiresIn)


class _PlainUrls:
    """An unsigned client's `presign`: the object's URL and its query, no signature (the expiry
    has no meaning without one, and signed headers none without a signature)."""

    def __init__(self, client: Client, bucket: str) -> None:
        self._client = client
        self._bucket = bucket

    def presign(self, method: str, key: str, *, expires_in: int, params: dict, headers: dict) -> str:
        return self._client._object_url(self._bucket, key, [(k, str(v)) for k, v in params.items()])


class ClientPresigner(_FollowingPresigner):
    """`Client.presigner(bucket)`: the `Presigner` calls, signed with the client's credentials of
    the moment. Thread-safe."""

    def __init__(self, client: Client, bucket: str) -> None:
        self._client = client
        self._bucket = bucket

    def _presigner(self) -> _NativePresigner:
        return self._client._presigner(self._bucket)

    def __repr__(self) -> str:
        return f"ClientPresigner(bucket={self._bucket!r}, client={self._client!r})"


__all__ = ["Boto3Presigner", "Client", "ClientPresigner", "Credentials", "ObjectReader", "ObjectWriter", "Presigner", "S3Error", "UrlArray", "generate_presigned_post", "generate_presigned_url"]
