"""Slipstream: the fast path to S3.

Presigned S3 URLs (SigV4 and SigV4A) at native speed, byte-identical to botocore::

    from slipstream import Credentials, Presigner

    p = Presigner("my-bucket", region="eu-west-1", credentials=Credentials(key_id, secret))
    url = p.presign_get("reports/2026.pdf", expires_in=600)
    urls = p.presign_many(keys)  # every core, the GIL released, order kept

and objects moved in parallel parts over pooled connections::

    from slipstream import Client

    c = Client(region="eu-west-1", credentials=Credentials(key_id, secret))
    c.download("my-bucket", "big.iso", "/tmp/big.iso")
    data = c.get_bytes("my-bucket", "small.json")
"""

import contextlib
import os
import signal
import threading

from slipstream._boto3 import Boto3Presigner, generate_presigned_url
from slipstream._slipstream import Client as _NativeClient
from slipstream._slipstream import Credentials, S3Error
from slipstream._slipstream import Presigner as _NativePresigner


class Presigner(_NativePresigner):
    """Presigns URLs for one bucket; thread-safe. See the package docstring for an example."""

    @staticmethod
    def from_boto3(client, bucket: str) -> Boto3Presigner:
        """A presigner with the region, endpoint, addressing style and credentials of a boto3 S3
        client. Credentials that botocore refreshes are re-read at every call."""
        return Boto3Presigner(client, bucket)


# SIGTERM (kill, timeout, systemd, Kubernetes) and SIGHUP (a closed terminal) end a Python
# process at once by default, which would leave a download's temporary file and an upload's
# open multipart upload behind. While a transfer runs on the main thread and the program has no
# handler of its own for them, they are turned into an exception that cancels the transfer (the
# native side cleans up), and then sent again with the default action restored, so the process
# ends by that signal as it would have.
_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class _Stopped(BaseException):
    """A stop signal that arrived during a transfer (a BaseException, like KeyboardInterrupt,
    so that ``except Exception`` does not swallow it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by signal {signum}")
        self.signum = signum


def _raise_stopped(signum, _frame):
    raise _Stopped(signum)


@contextlib.contextmanager
def _stop_signals_cancel():
    taken = {}
    if threading.current_thread() is threading.main_thread():
        for sig in _STOP_SIGNALS:
            if signal.getsignal(sig) == signal.SIG_DFL:
                taken[sig] = signal.signal(sig, _raise_stopped)
    try:
        yield
    except _Stopped as stop:
        for sig, old in taken.items():
            signal.signal(sig, old)
        taken.clear()
        os.kill(os.getpid(), stop.signum)
        raise SystemExit(128 + stop.signum) from None
    finally:
        for sig, old in taken.items():
            signal.signal(sig, old)


class Client(_NativeClient):
    """Downloads and uploads with parallel parts; thread-safe, the GIL released while it works.

    Ctrl-C, and SIGTERM or SIGHUP where the program has no handler for them, stop a transfer
    with nothing left half-written: no partial file under the destination's name, no open
    multipart upload."""

    def download(self, *args, **kw):
        with _stop_signals_cancel():
            return super().download(*args, **kw)

    def upload(self, *args, **kw):
        with _stop_signals_cancel():
            return super().upload(*args, **kw)

    def get_bytes(self, *args, **kw):
        with _stop_signals_cancel():
            return super().get_bytes(*args, **kw)

    def put_bytes(self, *args, **kw):
        with _stop_signals_cancel():
            return super().put_bytes(*args, **kw)

    @classmethod
    def from_boto3(cls, client, **kw) -> "Client":
        """A client with the region, endpoint, addressing style and credentials of a boto3 S3
        client. Credentials that botocore refreshes (assumed roles, SSO, instance profiles) are
        asked for again before they expire, also in the middle of a long transfer."""
        from slipstream._boto3 import client_settings

        return cls(**client_settings(client), **kw)


__all__ = ["Boto3Presigner", "Client", "Credentials", "Presigner", "S3Error", "generate_presigned_url"]
