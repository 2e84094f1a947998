"""Slipstream: the fast path to S3.

Presigned S3 URLs (SigV4 and SigV4A) at native speed, byte-identical to botocore::

    from slipstream import Credentials, Presigner

    p = Presigner("my-bucket", region="eu-west-1", credentials=Credentials(key_id, secret))
    url = p.presign_get("reports/2026.pdf", expires_in=600)
    urls = p.presign_many(keys)  # every core, the GIL released, order kept
"""

from slipstream._slipstream import Credentials, Presigner

__all__ = ["Credentials", "Presigner"]
