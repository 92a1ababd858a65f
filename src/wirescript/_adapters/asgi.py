"""The ASGI adapter: the loopback server's requests into the core's `Request`, its `Answer` out as ASGI messages.

`read` turns an ASGI HTTP scope and the body the server read into a `Request`, as an httpx client
would have seen its URL: the host (lower case) and port of its `Host` header, the path with its dot
segments removed and percent-decoded, the query and the headers as sent. It asks for an unfaulted
stream one event per chunk, so that each event is flushed to the network. `refused` is the request
the server will not hand on as sent (HTTP/2, a proxy's, a body over its limit): the stub records it
as an `unreadable` problem.

`before` runs an answer's steps before its response (a first-byte delay awaited; a connection that
fails before any byte), and `respond` sends the answer as `http.response.start` and
`http.response.body` messages, each chunk of its body as the stub renders it and a fault's delays
awaited on the event loop. A scripted disconnect or read timeout is raised as `Dropped` or
`Stalled`, after what came before it was sent, for the server to act out on its connection.

No HTTP library is involved: the loopback server needs uvicorn, and neither httpx nor httpx2.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any
from urllib.parse import unquote

from .._exchange import Answer, Request, run, whole
from .._steps import Disconnect, Sleep

__all__ = ["Dropped", "Receive", "Scope", "Send", "Stalled", "Unreadable", "before", "read", "refused", "respond"]

Scope = MutableMapping[str, Any]
"""An ASGI connection scope."""
Receive = Callable[[], Awaitable[dict[str, Any]]]
"""An ASGI `receive` callable."""
Send = Callable[[dict[str, Any]], Awaitable[None]]
"""An ASGI `send` callable."""

# Set by an HTTP stack on its response; the ASGI server frames the body itself.
_HOP_BY_HOP = frozenset({b"transfer-encoding", b"connection", b"keep-alive"})


class Dropped(Exception):
    """A scripted disconnect: the server closes the connection, what was sent delivered."""


class Stalled(Exception):
    """A scripted read timeout: the server sends nothing more, until the client gives up."""


class Unreadable(ValueError):
    """A request whose URL cannot be read as sent (a malformed `Host`): the message says why."""


def read(scope: Scope, body: bytes) -> Request:
    """The core's request for an ASGI HTTP request whose body has been read.

    Raises:
        Unreadable: Its `Host` header names no host and port.

    """
    headers: Sequence[tuple[bytes, bytes]] = scope["headers"]
    netloc = next((value for name, value in headers if name == b"host"), None)
    if netloc is None:
        host, port = _server(scope)
    else:
        host, port = _host(netloc)
    raw_path = scope.get("raw_path")
    if raw_path is not None:
        path = unquote(_without_dot_segments(raw_path.decode("latin-1"))) or "/"
    else:  # an ASGI server that gives none: `path` is decoded already
        path = _without_dot_segments(scope["path"]) or "/"
    return Request(scope["method"], host, path, scope["query_string"], headers, body, True, None, None, port)


def refused(scope: Scope, reason: str, body: bytes = b"") -> Request:
    """A request the server refuses to hand on as sent, at its own address: recorded as `unreadable`, with `reason`.

    Only its method, its path (`/` when the target is none: `*`, `host:443`, an absolute URL) and
    the server's own `Host` are kept of it, as sent.
    """
    host, port = _server(scope)
    raw_path = scope.get("raw_path") or scope["path"].encode()
    if raw_path.startswith(b"/"):
        path, query = unquote(_without_dot_segments(raw_path.decode("latin-1"))), scope["query_string"]
    else:
        path, query = "/", b""
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    headers = [(b"host", netloc.encode("latin-1"))]
    if body:
        headers.append((b"content-length", str(len(body)).encode()))
    return Request(scope["method"], host, path, query, headers, body, True, None, reason, port)


def _server(scope: Scope) -> tuple[str, int | None]:
    """The server's own address (the scope's `server`), as a host and a port other than 80."""
    host, port = scope.get("server") or ("127.0.0.1", 80)
    return str(host).lower(), None if port == 80 else int(port)


@functools.lru_cache(maxsize=64)
def _host(netloc: bytes) -> tuple[str, int | None]:
    """The host (lower case, an IPv6 address without its brackets) and port (None: 80) of a `Host` header.

    Raises:
        Unreadable: It is no `host`, `host:port`, `[v6]` or `[v6]:port`.

    """
    text = netloc.decode("latin-1")
    if text.startswith("["):
        end = text.find("]")
        host, rest = (text[1:end], text[end + 1 :]) if end > 0 else (text, "")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise Unreadable(f"its Host header {text!r} names no IPv6 address") from None
    else:
        host, colon, port = text.partition(":")
        rest = colon + port
    if not rest or rest == ":":
        return host.lower(), None
    digits = rest[1:]
    if rest[0] != ":" or not (digits.isascii() and digits.isdecimal()):
        raise Unreadable(f"its Host header {text!r} names no port")
    return host.lower(), None if int(digits) == 80 else int(digits)


def _without_dot_segments(path: str) -> str:
    """The path with its `.` and `..` segments resolved (RFC 3986, section 5.2.4), as an httpx URL has it."""
    if "." not in path:
        return path
    segments = path.split("/")
    if "." not in segments and ".." not in segments:
        return path
    kept: list[str] = []
    for segment in segments:
        if segment == ".":
            continue
        if segment == "..":
            if kept and kept != [""]:
                kept.pop()
        else:
            kept.append(segment)
    return "/".join(kept)


async def before(answer: Answer) -> None:
    """Run the steps before the response exists: a delay awaited, a failure raised (`Dropped`, `Stalled`)."""
    for step in answer.before:
        if isinstance(step, Sleep):
            await asyncio.sleep(step.seconds)
        elif isinstance(step, Disconnect):
            raise Dropped(step.message)
        elif not isinstance(step, bytes):
            raise Stalled(step.message)


async def respond(send: Send, answer: Answer, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """Send `answer` (its steps before run already, `before`) with `extra` headers, chunk by chunk.

    Each chunk is one `http.response.body` message, so the server writes it at once (a stream's
    events, its tail apart), and the end is one more.

    Raises:
        Dropped: A scripted disconnect, after what came before it was sent.
        Stalled: A scripted read timeout, after what came before it was sent.

    """
    headers = [(name.lower(), value) for name, value in answer.headers if name.lower() not in _HOP_BY_HOP]
    headers.extend(extra)
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    body = answer.body
    if isinstance(body, bytes):
        # The end in a message of its own: sending it waits while the client reads nothing (the
        # server's flow control), so the request stays in flight, and `stop()` drops it at once.
        for chunk in (body,) if answer.watch is None else whole(body, answer.watch):  # a stream's tail apart
            if chunk:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
    else:
        for item in run(body, Dropped, Stalled):
            if isinstance(item, bytes):
                if item:
                    await send({"type": "http.response.body", "body": item, "more_body": True})
            else:
                await asyncio.sleep(item)
    await send({"type": "http.response.body", "body": b"", "more_body": False})
