"""aiohttp's reach: an aiohttp request for an intercepted host is served by the stub, and the guard answers it too.

aiohttp does not use httpx, so the transports' patches do not see it. aiohttp 3.12 added client
middlewares, its public way to see every request a `ClientSession` sends, with its URL, headers and
body already prepared (`ClientSession(middlewares=...)`). While the transport patches are held (an
open interception, an active guard, the pytest session's hold), `ClientSession.__init__` is wrapped
so that each session created then gets one more middleware, last (nearest the network, as a
transport is), that reads the callbacks `_hooks.transports` holds on every request:

- an interception's `route(host)`: the stub answers the request. The aiohttp request becomes the
  httpx2 (else httpx) request the stub's httpx path takes, and the stub's response becomes a real
  `aiohttp.ClientResponse`: its bytes are framed as an HTTP/1.1 chunked response and fed to
  aiohttp's own response parser over an in-memory connection, as they arrive, so a stream is read
  event by event (`resp.content`), its latency is real, and a scripted disconnect or read timeout
  fails the read as a dropped connection or a socket timeout would;
- a guard's `rescue(request, exception, is_async)`: a request whose connection the guard refused
  gets the guard's non-retryable 403 answer instead of a connection error (which google-genai
  retries after sleeping one to ten seconds).

With neither set, the middleware hands the request on unchanged. A session created while nothing
held the patches has no such middleware and is not reached (the guard still refuses its
connections at the socket); a request that passes `middlewares=` of its own replaces the session's.

Building the response uses aiohttp's own pieces below its public API: `ResponseHandler` (the
protocol that parses a response), `ClientRequest.send` (which makes the response object) and
`ClientResponse.start`. They are the same from aiohttp 3.12 to 3.14 (`SUPPORTED`); another release
is left unpatched, and a test names the range.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import sys
from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any

from .. import _hooks

__all__ = ["SUPPORTED", "spot", "supported"]

SUPPORTED = ((3, 12), (4, 0))
"""The aiohttp releases patched: from 3.12 (client middlewares) up to, not including, 4.0."""

_NOT_FORCED = SimpleNamespace(force_close=False)  # what `ClientRequest.send` reads of the connection's connector


def supported(module: ModuleType) -> bool:
    """Whether this aiohttp release is one `SUPPORTED` names."""
    try:
        version = tuple(int(part) for part in str(module.__version__).split(".")[:2])
    except (AttributeError, ValueError):  # pragma: no cover - a build without a plain version
        return False
    return SUPPORTED[0] <= version < SUPPORTED[1]


def spot() -> _hooks.Spot | None:
    """The spot to patch, `ClientSession.__init__`, when aiohttp is imported already and supported; else None.

    The transports' finder (`_hooks.transports.finders`, registered by `intercept`).

    aiohttp is never imported here: importing it costs a test that does not use it (an open
    interception imports it, where it is installed, before it takes the patches).
    """
    module = sys.modules.get("aiohttp")
    if module is None or not supported(module):
        return None
    return _hooks.Spot(module.ClientSession, "__init__", _wrap_init)


def _wrap_init(original: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["middlewares"] = (*(kwargs.get("middlewares") or ()), _middleware)
        original(self, *args, **kwargs)

    return __init__


async def _middleware(request: Any, handler: Callable[[Any], Any]) -> Any:
    """Serve a request for an intercepted host; answer one the guard refused; else send it on."""
    route = _hooks.transports.route
    target = route(request.url.host or "") if route is not None else None
    if target is not None:
        hx = _http_module()
        if hx is not None:
            return await _serve(request, target, hx)
    if _hooks.transports.rescue is None:
        return await handler(request)
    try:
        return await handler(request)
    except Exception as exc:
        rescue = _hooks.transports.rescue
        hx = _http_module()
        if rescue is None or hx is None:
            raise
        answer = rescue(_request(request, b"", hx), exc, True)
        if answer is None:
            raise
        return await _response(request, answer, hx)


def _http_module() -> ModuleType | None:
    """httpx2, else httpx: the library the stub's httpx path reads requests of (None when neither is installed)."""
    for name in ("httpx2", "httpx"):
        module = sys.modules.get(name)
        if module is not None:
            return module
    for name in ("httpx2", "httpx"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _request(request: Any, body: bytes, hx: ModuleType) -> Any:
    return hx.Request(request.method, str(request.url), headers=list(request.headers.items()), content=body)


async def _serve(request: Any, target: Any, hx: ModuleType) -> Any:
    """The stub's answer to the request, as the `ClientResponse` aiohttp would have read from the network."""
    import aiohttp

    body = await request.body.as_bytes() if request.body else b""
    try:
        answer = await target.handle_async_request(_request(request, body, hx))
    except hx.TimeoutException as exc:  # a scripted read timeout before the response
        raise aiohttp.SocketTimeoutError("Timeout on reading data from socket") from exc
    except hx.TransportError as exc:  # a scripted disconnect before the response
        raise aiohttp.ServerDisconnectedError() from exc
    return await _response(request, answer, hx)


async def _response(request: Any, answer: Any, hx: ModuleType) -> Any:
    """Feed `answer` (an httpx/httpx2 response) to aiohttp's response parser; the `ClientResponse` it makes."""
    from aiohttp.client_proto import ResponseHandler

    loop = asyncio.get_running_loop()
    protocol = ResponseHandler(loop)
    pipe = _Pipe()
    protocol.connection_made(pipe)
    empty = request.method == "HEAD" or answer.status_code in (204, 304)
    protocol.set_response_params(skip_payload=request.method == "HEAD")
    head = [b"HTTP/1.1 %d %s\r\n" % (answer.status_code, answer.reason_phrase.encode("latin-1"))]
    for name, value in answer.headers.raw:
        if name.lower() not in (b"content-length", b"transfer-encoding"):
            head.append(b"%s: %s\r\n" % (name, value))
    head.append(b"\r\n" if empty else b"transfer-encoding: chunked\r\n\r\n")
    protocol.data_received(b"".join(head))
    connection = _Connection(protocol, pipe)
    response = await request.send(connection)
    await response.start(connection)
    if empty:
        await answer.aclose()
    else:
        pipe.pump = loop.create_task(_pump(answer, protocol, pipe, response, hx))
    return response


async def _pump(answer: Any, protocol: Any, pipe: _Pipe, response: Any, hx: ModuleType) -> None:
    """Send the answer's body to the parser as chunks, as it arrives; a scripted failure fails the read."""
    import aiohttp

    try:
        async for chunk in answer.aiter_raw():
            if chunk:
                await pipe.resumed.wait()
                protocol.data_received(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        protocol.data_received(b"0\r\n\r\n")
    except hx.TimeoutException:
        timeout = aiohttp.SocketTimeoutError("Timeout on reading data from socket")
        protocol.set_exception(timeout)
        response.content.set_exception(timeout)
    except Exception as exc:  # a scripted disconnect, as the peer closing mid-body
        protocol.connection_lost(None if isinstance(exc, hx.TransportError) else exc)
    finally:
        await answer.aclose()


class _Pipe(asyncio.Transport):
    """The in-memory connection an answer is read from: what aiohttp writes to it (the request) goes nowhere."""

    def __init__(self) -> None:
        super().__init__()
        self.closing = False
        self.resumed = asyncio.Event()
        self.resumed.set()
        self.pump: asyncio.Task[None] | None = None

    def write(self, data: Any) -> None:
        """The request's bytes: the stub has them already."""

    def is_closing(self) -> bool:
        """Whether the connection was closed."""
        return self.closing

    def close(self) -> None:
        """Close the connection: an answer still being sent stops."""
        self.closing = True
        self.resumed.set()
        if self.pump is not None and not self.pump.done():
            self.pump.cancel()

    def abort(self) -> None:
        """As `close`."""
        self.close()

    def pause_reading(self) -> None:
        """Flow control: aiohttp's buffer is full, the answer waits."""
        self.resumed.clear()

    def resume_reading(self) -> None:
        """Flow control: the answer goes on."""
        self.resumed.set()

    def is_reading(self) -> bool:
        """Whether the answer is flowing."""
        return self.resumed.is_set()

    def get_write_buffer_size(self) -> int:
        """Nothing is ever buffered."""
        return 0

    def can_write_eof(self) -> bool:
        """No half-close."""
        return False


class _Connection:
    """What aiohttp uses of a connection (`aiohttp.connector.Connection`) while it sends and reads."""

    _connector = _NOT_FORCED

    def __init__(self, protocol: Any, pipe: _Pipe) -> None:
        self.protocol = protocol
        self.transport = pipe
        self._pipe = pipe
        self._callbacks: list[Callable[[], None]] = []

    @property
    def closed(self) -> bool:
        """Whether the connection was closed or released."""
        return self._pipe.closing

    def add_callback(self, callback: Callable[[], None]) -> None:
        """Call `callback` when the connection is released or closed (aiohttp cancels its timeout so)."""
        if callback is not None:
            self._callbacks.append(callback)

    def _notify(self) -> None:
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            with contextlib.suppress(Exception):
                callback()

    def release(self) -> None:
        """The answer was read to its end: the connection is done (its sender is finishing)."""
        self._notify()
        self._pipe.closing = True

    def close(self) -> None:
        """The response was closed before its end: stop sending the answer."""
        self._notify()
        self._pipe.close()
