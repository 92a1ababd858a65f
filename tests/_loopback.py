"""A plain stdlib HTTP server on loopback, in a thread: a "real service" the stub must not answer."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import threading
from collections.abc import Iterator
from typing import Any


class _Handler(http.server.BaseHTTPRequestHandler):
    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        self.server.paths.append(self.path)  # type: ignore[attr-defined]
        body = b'{"served_by": "loopback"}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def loopback_server(host: str = "127.0.0.1") -> Iterator[tuple[str, list[str]]]:
    """Serve on `host` and a free port; yield the base URL and the list of paths it received."""
    server = http.server.ThreadingHTTPServer((host, 0), _Handler)
    server.paths = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        yield f"http://{host}:{port}", server.paths  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextlib.contextmanager
def loopback_proxy() -> Iterator[tuple[str, list[bytes]]]:
    """A forward proxy on 127.0.0.1 that forwards nothing: it records each connection's first line and answers 502.

    Yields its URL (for `HTTPS_PROXY`) and the first lines received (`b"CONNECT api.example.com:443 HTTP/1.1"`).
    """
    received: list[bytes] = []
    started = threading.Event()
    state: dict[str, Any] = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state["writers"].add(writer)
        try:
            line = await reader.readline()
            if line:
                received.append(line.rstrip(b"\r\n"))
                writer.write(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                await writer.drain()
        except OSError:  # the client went away (the guard shuts a refused tunnel)
            pass
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
            state["writers"].discard(writer)

    async def main() -> None:
        state["writers"] = set()
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        state["port"] = server.sockets[0].getsockname()[1]
        state["loop"], state["stop"] = asyncio.get_running_loop(), asyncio.Event()
        started.set()
        async with server:
            await state["stop"].wait()
            for writer in list(state["writers"]):  # close what is still open before the loop ends
                writer.close()
            await asyncio.sleep(0.01)

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield f"http://127.0.0.1:{state['port']}", received
    finally:
        state["loop"].call_soon_threadsafe(state["stop"].set)
        thread.join(10)
