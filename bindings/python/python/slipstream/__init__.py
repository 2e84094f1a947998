"""Slipstream: the fast path to S3.

Presigned S3 URLs (SigV4 and SigV4A) at native speed, byte-identical to botocore::

    from slipstream import Credentials, Presigner

    p = Presigner("my-bucket", region="eu-west-1", credentials=Credentials(key_id, secret))
    url = p.presign_get("reports/2026.pdf", expires_in=600)
    urls = p.presign_many(keys)  # every core, the GIL released, order kept
"""

from slipstream._boto3 import Boto3Presigner, generate_presigned_url
from slipstream._slipstream import Credentials
from slipstream._slipstream import Presigner as _NativePresigner


class Presigner(_NativePresigner):
    """Presigns URLs for one bucket; thread-safe. See the package docstring for an example."""

    @staticmethod
    def from_boto3(client, bucket: str) -> Boto3Presigner:
        """A presigner with the region, endpoint, addressing style and credentials of a boto3 S3
        client. Credentials that botocore refreshes are re-read at every call."""
        return Boto3Presigner(client, bucket)


__all__ = ["Boto3Presigner", "Credentials", "Presigner", "generate_presigned_url"]
