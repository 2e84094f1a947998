"""Presigners that follow refreshed credentials: every call asks for the native presigner of the
credentials of the moment (a boto3 client's in `_boto3.py`, a `Client`'s in `__init__.py`), so a
presigner kept for the life of a program never signs with keys that have lapsed."""

import abc
from typing import Any

from slipstream._slipstream import Presigner as _Native


class FollowingPresigner(abc.ABC):
    """The `Presigner` calls, each made on `_presigner()`'s answer."""

    @abc.abstractmethod
    def _presigner(self) -> _Native:
        """The native presigner of the credentials of the moment."""

    @property
    def bucket(self) -> str:
        return self._presigner().bucket

    @property
    def region(self) -> str:
        return self._presigner().region

    def presign(self, method: str, key: str, **kw: Any) -> str:
        return self._presigner().presign(method, key, **kw)

    def presign_get(self, key: str, **kw: Any) -> str:
        return self._presigner().presign_get(key, **kw)

    def presign_put(self, key: str, **kw: Any) -> str:
        return self._presigner().presign_put(key, **kw)

    def presign_many(self, keys: Any, **kw: Any) -> list:
        return self._presigner().presign_many(keys, **kw)

    def presign_arrow(self, keys: Any, **kw: Any) -> Any:
        return self._presigner().presign_arrow(keys, **kw)

    def presign_post(self, key: str, **kw: Any) -> dict:
        return self._presigner().presign_post(key, **kw)
