"""`Client.open`'s file object: a read-only, seekable binary stream over the native reader
(reader.rs), an `io.BufferedIOBase`, so `io.TextIOWrapper`, `gzip`, `csv`, `tarfile`,
`zipfile`, `pyarrow.parquet` and `for line in f` take it as they take an open file."""

import io


class ObjectReader(io.BufferedIOBase):
    """An object read as a file, its parts fetched in parallel ahead of the reads, in bounded
    memory. Seekable: a seek within what was fetched costs nothing, any other starts a
    download from there at the next read (pinned to the object's ETag). One thread's, as a
    file object is. Closing it (or leaving a ``with`` block) stops the download."""

    def __init__(self, native) -> None:
        super().__init__()
        self._native = native
        # The native calls themselves, not Python methods around them: a line read costs one
        # call. They raise ValueError once the reader is closed, as a file's do.
        self.read = native.read
        self.read1 = native.read1
        self.readline = native.readline

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        return self._into(b, self._native.read)

    def readinto1(self, b) -> int:
        return self._into(b, self._native.read1)

    @staticmethod
    def _into(b, read) -> int:
        view = memoryview(b).cast("B")
        data = read(len(view))
        view[: len(data)] = data
        return len(data)

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._native.seek(offset, whence)

    def tell(self) -> int:
        return self._native.tell()

    @property
    def size(self) -> int:
        """The object's size in bytes (the range's length, for a range)."""
        return self._native.size

    def __del__(self) -> None:
        # Not IOBase's close-on-delete: in `client.open(b, k).read()` this object goes before the
        # native read it handed out has run. The native reader, once unreferenced, stops its
        # download itself.
        pass

    def close(self) -> None:
        if not self.closed:
            self._native.close()
        super().close()


class ObjectWriter(io.BufferedIOBase):
    """An object written as a stream and uploaded as it is written (parts sent while the next
    is written, in bounded memory). Only ``close()`` (or a ``with`` block that ends without an
    exception) completes the object; an exception in the block, ``abort()``, or a writer left
    unclosed aborts the upload, and no object appears. One thread's, as a file object is."""

    def __init__(self, native) -> None:
        super().__init__()
        self._native = native

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        if b.__class__ is not bytes:
            b = memoryview(b).tobytes()  # bytearray, memoryview, array: their bytes, copied
        return self._native.write(b)

    def tell(self) -> int:
        return self._native.tell()

    def flush(self) -> None:
        # Nothing to push: bytes go out as parts fill, and the object exists only once closed.
        pass

    def abort(self) -> None:
        """Abandons the object: the upload is aborted and nothing is made."""
        self._native.abort()
        super().close()

    def close(self) -> None:
        """Completes the object (raises the upload's error, and then there is no object)."""
        if not self.closed:
            try:
                self._native.close()
            finally:
                super().close()

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()

    def __del__(self) -> None:
        # Never IOBase's close-on-delete: an unclosed writer's object must not be completed.
        if not self.closed:
            self._native.abort()
