"""A TCP relay between a client under test and the local S3 server, on 127.0.0.1.

It slows the traffic to a given rate, so that a signal or a fault surely lands in the
middle of a transfer, and it can freeze: every connection stays open and nothing more is
relayed in either direction, as when the server process is stopped (SIGSTOP) or the path to it
goes dark. Used as a context manager; closing it closes every connection.
"""

from __future__ import annotations

import socket
import threading
import time


class Relay:
    def __init__(self, upstream: str, rate: float | None = None, rate_up: float | None = None) -> None:
        """`upstream`: `http://host:port`. `rate`: bytes per second from the server, per
        connection, and `rate_up` to it (`None`: as fast as they come)."""
        host, port = upstream.removeprefix("http://").rstrip("/").rsplit(":", 1)
        self._upstream = (host, int(port))
        self._rate = rate
        self._rate_up = rate_up
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = "http://127.0.0.1:%d" % self._listener.getsockname()[1]
        self._running = threading.Event()
        self._running.set()  # cleared: frozen
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.relayed_down = 0  # bytes from the server to clients
        self.accepted = 0  # connections from clients
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self) -> None:
        """From now on nothing is relayed; connections stay open and new ones are accepted."""
        self._running.clear()

    def thaw(self) -> None:
        self._running.set()

    def reset(self) -> None:
        """Resets every open connection (RST, as a crashed or rebooted server does); new ones are
        still accepted."""
        import struct

        with self._lock:
            sockets, self._sockets = self._sockets, []
        for s in sockets:
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.shutdown(socket.SHUT_RD)  # wakes the pump blocked in recv, sends nothing
                s.close()  # with a zero linger: RST
            except OSError:
                pass

    def close(self) -> None:
        self._closed.set()
        self._running.set()
        self._listener.close()
        with self._lock:
            for s in self._sockets:
                try:
                    s.close()
                except OSError:
                    pass

    def __enter__(self) -> "Relay":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self.accepted += 1
            try:
                server = socket.create_connection(self._upstream)
            except OSError:
                client.close()
                continue
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, down: bool) -> None:
        rate = self._rate if down else self._rate_up
        chunk = 64 * 1024 if rate is None else max(1024, int(rate / 20))
        try:
            while not self._closed.is_set():
                self._running.wait()
                data = src.recv(chunk)
                if not data:
                    break
                # Frozen after the read: hold the bytes, as a stopped server would.
                while not self._running.is_set() and not self._closed.is_set():
                    time.sleep(0.05)
                dst.sendall(data)
                if down:
                    self.relayed_down += len(data)
                if rate is not None:
                    time.sleep(len(data) / rate)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
