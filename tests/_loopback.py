"""A plain stdlib HTTP server on loopback, in a thread: a "real service" the stub must not answer."""

from __future__ import annotations

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
