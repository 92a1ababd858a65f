"""Serve a `ScriptTransport` over real loopback HTTP, for apps under test in another process.

`ScriptApp` is an ASGI application in front of the stub: the ASGI adapter (`_asgi`) turns each
HTTP request into the core's neutral request, the stub answers it as it answers an in-process
client, and the answer goes back chunk by chunk, so an SSE answer is flushed event by event and
recording, overflow, hold/release and wire faults behave exactly as in-process. No HTTP library is
involved: serving a script needs uvicorn, and neither httpx nor httpx2 (`wirescript record`, which
forwards each request to its provider, hands it on as an httpx/httpx2 request). A scripted
disconnect closes the connection abruptly; a scripted read timeout stalls the stream until the client gives up, or
`STALL_TIMEOUT` passes and the connection is dropped. The user's code (a script function, a
fallback, a route's handler) runs on a thread of its own, so one that blocks delays only its own
request, and at most the stub's `hold_timeout`.

`ScriptServer` runs it on uvicorn (the `wirescript[server]` extra) in a background thread, on a
loopback address and a free port (`_uvicorn`). Requests under `/_wirescript/` are the control API
for test runners in other languages (`_control`): they need the server's token, and are never
recorded as model requests. `wirescript serve` and `wirescript record` are in `wirescript.cli`
(`wirescript.server.serve_command`, their 0.1.0 place, still resolves with a `DeprecationWarning`
until 0.3.0).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import logging
import math
import secrets
import socket
import threading
import warnings
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from ._adapters import asgi as _asgi
from ._adapters import http as _http
from ._adapters.asgi import Receive, Scope
from ._adapters.asgi import Send as MessageSend
from ._control import (
    CONTROL_PREFIX,
    TOKEN_HEADER,
    Control,
    host_of,
    json_response,
    loopback_name,
    request_json,
    status_of,
)
from ._exchange import PER_EVENT, UNREADABLE, Answer, Request
from .errors import UsageError
from .recording import RecordingTransport
from .transport import ScriptTransport, serve_offloaded

if TYPE_CHECKING:
    from ._uvicorn import Runner

__all__ = [
    "CONTROL_PREFIX",
    "HEADER_TIMEOUT",
    "MAX_BODY",
    "MAX_RECORDS",
    "STALL_TIMEOUT",
    "TOKEN_HEADER",
    "ScriptApp",
    "ScriptServer",
    "request_json",
    "status_of",
]

_Result = TypeVar("_Result")

STALL_TIMEOUT = 2.0
"""How long a scripted read timeout (`timeout_after`) stalls over the server before the connection is
dropped. In-process the client's read timeout fires at once; over HTTP the stub cannot raise in the
client, so it sends nothing until the client gives up or this many seconds pass, then closes the
connection (which the SDKs retry as a connection error, as they retry a read timeout)."""

MAX_BODY = 64 * 1024 * 1024
"""The largest request body the server reads (64 MiB, twice the 32 MB Anthropic's Messages API takes):
a larger one is refused unread, as an `unreadable` problem (`ScriptServer(max_body=...)`)."""

HEADER_TIMEOUT = 10.0
"""How long a connection may take to send a request's head (its request line and headers), from its
first byte: a connection that trickles it in is closed (`ScriptServer(header_timeout=...)`)."""

MAX_RECORDS = 10_000
"""How many requests' records `wirescript serve` keeps, the last ones (about 25 MB of them): its stub's
`max_records` (`--max-records N`, or `all`). The request count, the problems and the requests that
have one are kept whatever the bound; the control API lists the records kept. A stub you serve
yourself keeps what its own `ScriptTransport(max_records=...)` says (all, by default)."""

# The CORS headers of the model endpoints (never of the control API), so that a page under test on
# another loopback port may call them; no private-network grant: a page on a public origin may not.
_CORS = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-expose-headers", b"*"),
]
_PREFLIGHT_METHODS = b"GET, POST, PUT, PATCH, DELETE, OPTIONS"
_NO_RETRY = [(b"x-should-retry", b"false")]
_CLOSE = (b"connection", b"close")
# Set by the HTTP stack on a recorder's response object; the server frames the body itself.
_HOP_BY_HOP = frozenset({"transfer-encoding", "connection", "keep-alive"})
_LOOPBACK_NAMES = {"localhost": "127.0.0.1"}
_LOG = logging.getLogger("wirescript.server")


def __getattr__(name: str) -> Any:
    if name != "serve_command":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        "wirescript.server.serve_command is deprecated, use wirescript.cli.serve_command (the same function); "
        "it will be removed from wirescript.server in 0.3.0",
        DeprecationWarning,
        stacklevel=2,
    )
    from .cli import serve_command  # the 0.1.0 place of `wirescript serve`'s function

    return serve_command


class _Abort(Exception):
    """Raised out of the ASGI app to drop the connection when it runs in a server other than `ScriptServer`."""


class _TooLarge(Exception):
    """A request body over the server's `max_body`."""


class ScriptApp:
    """An ASGI application that serves a `ScriptTransport` over HTTP.

    Every request except CORS preflights (answered 204) and the control API (`CONTROL_PREFIX`)
    goes to the stub exactly as an in-process request would: it is recorded, consumes a turn,
    waits while the stub is held, and gets its faults. The model endpoints' answers carry CORS
    headers (`Access-Control-Allow-Origin: *`), so a page under test on another loopback port may
    call them (anthropic's `dangerouslyAllowBrowser`); the control API's carry none. Mount it in
    any ASGI server; `ScriptServer` runs it on uvicorn.

    Args:
        stub: The stub to serve (or a `RecordingTransport`, for `wirescript record`).
        token: The control API's token, sent in the `X-Wirescript-Token` header; default a new
            random one (`token`).
        max_body: The largest request body read, in bytes (`MAX_BODY`); a larger one is refused.

    """

    def __init__(
        self, stub: ScriptTransport | RecordingTransport, *, token: str | None = None, max_body: int = MAX_BODY
    ) -> None:
        self.stub = stub
        self.token: str = token if token is not None else secrets.token_urlsafe(24)
        """The control API's token (the `X-Wirescript-Token` header)."""
        self.max_body = max_body
        self._control = Control(stub, self.token)
        self._recording = isinstance(stub, RecordingTransport)
        # A recorder forwards httpx/httpx2 requests; a stub reads the neutral request (`_asgi`).
        self._hx = _http.default_module() if self._recording else None
        self._dropped: tuple[type[Exception], ...] = (_asgi.Dropped,)
        self._stalled: tuple[type[Exception], ...] = (_asgi.Stalled,)
        if self._hx is not None:  # the upstream's failures, passed on as the stub's faults are
            self._dropped += (self._hx.RemoteProtocolError,)
            self._stalled += (self._hx.ReadTimeout,)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._connections: dict[tuple[Any, ...], Any] = {}
        """The open connections by client address, when `ScriptServer` runs the app (to drop them)."""
        self._stopping = False

    async def __call__(self, scope: Scope, receive: Receive, send: MessageSend) -> None:
        """Serve one ASGI connection scope (HTTP only)."""
        if scope["type"] != "http":
            return
        started = False

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal started
            started = True
            await send(message)

        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            if self._stopping:
                raise asyncio.CancelledError
            await self._serve(scope, receive, tracked)
        except asyncio.CancelledError:
            if not self._stopping:
                raise
            # `abort_all`: the server goes down under the request (a held one, typically)
            if started:
                with contextlib.suppress(_Abort):  # stopping is no scripted disconnect: no traceback
                    await self._drop(scope, receive)
                return
            message = f"wirescript: the server stopped before answering {scope['method']} {scope['path']}"
            error = {"type": "error", "error": {"type": "api_error", "message": message}}
            await json_response(send, 503, error, [*_CORS, *_NO_RETRY])
        except _Abort:
            raise
        except Exception as exc:  # a wirescript bug: never uvicorn's bare 500, which the SDKs retry
            _LOG.error("wirescript: %s %s failed: %s: %s", scope["method"], scope["path"], type(exc).__name__, exc)
            if not started:
                message = f"wirescript: the loopback server failed ({type(exc).__name__}: {exc}); please report it"
                error = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
                await json_response(send, 400, error, [*_CORS, *_NO_RETRY])
        finally:
            self._tasks.discard(task)
            connection = self._connections.get(_client(scope))
            if connection is not None:
                connection.answered()

    def abort_all(self) -> None:
        """Close every connection still being answered (held, slow, stalled); thread-safe.

        `ScriptServer.stop()` calls it, so a held request never keeps the server from stopping.
        """
        self._stopping = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._cancel_tasks)

    def _cancel_tasks(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    async def _serve(self, scope: Scope, receive: Receive, send: MessageSend) -> None:
        path: str = scope["path"]
        if path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/"):
            await self._control.serve(scope, send)
            return
        if scope["method"] == "OPTIONS":
            await self._preflight(scope, send)
            return
        refused = _refused(scope) or (_foreign_page(scope) if self._recording else None)
        body = b""
        if not refused:
            try:
                body = await _read_body(receive, self.max_body, _declared_length(scope))
            except _TooLarge:
                refused = (
                    f"the body is larger than the loopback server's limit of {self.max_body:,} bytes "
                    "(ScriptServer(max_body=...)); it was not read, and nothing was consumed from the script."
                )
            except _Abort as exc:  # the client went away: one line, not a traceback
                _LOG.info("wirescript: %s %s: %s", scope["method"], path, exc)
                return
        request = self._request(scope, body) if not refused else self._unreadable(scope, refused)
        gone = asyncio.Event()
        watcher = asyncio.ensure_future(_watch(receive, gone))
        try:
            await self._answer(scope, request, send, gone, close=bool(refused))
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watcher

    def _request(self, scope: Scope, body: bytes) -> Request | Any:
        """The request for the stub: raw header bytes as sent; one that cannot be read is still recorded."""
        if self._hx is None:
            try:
                return _asgi.read(scope, body)
            except _asgi.Unreadable as exc:  # a malformed Host: recorded as unreadable, never a 500
                reason = f"the loopback server could not read this request ({exc})"
                return self._unreadable(scope, f"{reason}; nothing was consumed from the script.", body)
        try:
            return self._hx.Request(
                scope["method"], _url(scope), headers=scope["headers"], content=body, extensions={PER_EVENT: True}
            )
        except Exception as exc:  # a malformed Host, bytes httpx refuses: recorded as unreadable, never a 500
            reason = f"the loopback server could not read this request ({type(exc).__name__}: {exc})"
            return self._unreadable(scope, f"{reason}; nothing was consumed from the script.", body)

    def _unreadable(self, scope: Scope, reason: str, body: bytes = b"") -> Request | Any:
        """A request the server refuses to hand on as sent: the stub records it as `unreadable`, with `reason`."""
        if self._hx is None:
            return _asgi.refused(scope, reason, body)
        extensions = {PER_EVENT: True, UNREADABLE: reason}
        return self._hx.Request(scope["method"], _url(scope, own=True), content=body, extensions=extensions)

    async def _answer(
        self, scope: Scope, request: Request | Any, send: MessageSend, gone: asyncio.Event, *, close: bool
    ) -> None:
        handler = asyncio.ensure_future(self._handle(request))
        waiter = asyncio.ensure_future(gone.wait())
        try:
            await asyncio.wait({handler, waiter}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # the server stops under the request: the stub records it as abandoned
            handler.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await handler
            raise
        finally:
            waiter.cancel()
        if not handler.done():  # the client gave up before the answer (held, slow): the stub records it
            handler.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await handler
            _LOG.info("wirescript: %s %s: the client disconnected before the answer", scope["method"], scope["path"])
            return
        extra = [*_CORS, _CLOSE] if close else _CORS  # a refused body was not read: the connection cannot go on
        try:
            response = handler.result()  # a scripted disconnect or read timeout before any response raises here
            if isinstance(response, Answer):
                await _asgi.respond(send, response, extra)
            else:
                await self._relay(response, send, extra)
        except self._dropped:  # a scripted disconnect
            await self._drop(scope, gone)
        except self._stalled:  # a scripted read timeout: stall, then drop the connection
            await self._stall(scope, gone)

    async def _handle(self, request: Request | Any) -> Answer | Any:
        stub = self.stub
        if isinstance(stub, ScriptTransport):  # its user functions on a thread of their own
            answer = await serve_offloaded(stub, request, _in_thread)
            await _asgi.before(answer)
            return answer
        return await stub.handle_async_request(request)

    async def _relay(self, response: Any, send: MessageSend, extra: list[tuple[bytes, bytes]]) -> None:
        """Pass a recorder's httpx/httpx2 response on, chunk by chunk as it arrives."""
        headers = [
            (k.encode("latin-1"), v.encode("latin-1"))
            for k, v in response.headers.multi_items()
            if k.lower() not in _HOP_BY_HOP
        ]
        await send({"type": "http.response.start", "status": response.status_code, "headers": headers + extra})
        async for chunk in response.stream:
            if chunk:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _stall(self, scope: Scope, gone: asyncio.Event) -> None:
        """A scripted read timeout: send nothing until the client gives up or `STALL_TIMEOUT` passes, then drop."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(gone.wait(), STALL_TIMEOUT)
            return
        await self._drop(scope, gone)

    async def _drop(self, scope: Scope, gone: asyncio.Event | Receive) -> None:
        """Close this request's connection as a crashed server would: what was sent is delivered, then EOF."""
        connection = self._connections.get(_client(scope))
        if connection is None:  # not under `ScriptServer`: the server drops it on an exception
            raise _Abort("wirescript: scripted disconnect")
        if self._stopping:  # the server goes down: what the client has not read is dropped too
            connection.transport.abort()
        else:
            connection.transport.close()
        if isinstance(gone, asyncio.Event):
            await gone.wait()
        else:
            await _until_disconnected(gone)

    async def _preflight(self, scope: Scope, send: MessageSend) -> None:
        asked = dict(scope["headers"])
        headers = [
            *_CORS,
            (b"access-control-allow-methods", _PREFLIGHT_METHODS),
            (b"access-control-allow-headers", asked.get(b"access-control-request-headers", b"*")),
            (b"access-control-max-age", b"600"),
        ]
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _in_thread(function: Callable[[], _Result], seconds: float) -> _Result:
    """`function()` on a thread of its own; `TimeoutError` past `seconds` (the thread is left to finish alone).

    A daemon thread, not an executor's: a function that never returns must not hold up the event
    loop's end, nor the interpreter's.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_Result] = loop.create_future()
    future.add_done_callback(lambda done: done.cancelled() or done.exception())  # told even when no one waits

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def run() -> None:
        try:
            result = function()
        except BaseException as exc:  # a bug of ours (the ledger catches the user's): told to the awaiting task
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
                loop.call_soon_threadsafe(settle, functools.partial(future.set_exception, exc))
        else:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle, functools.partial(future.set_result, result))

    threading.Thread(target=run, name="wirescript-script-function", daemon=True).start()
    return await asyncio.wait_for(asyncio.shield(future), seconds)


def _refused(scope: Scope) -> str | None:
    """Why the server will not hand this request on as sent: HTTP/2, a proxy's tunnel or absolute URL."""
    method, target = scope["method"], scope.get("raw_path") or scope["path"].encode()
    if method == "PRI":
        return (
            "an HTTP/2 connection preface (PRI * HTTP/2.0): the loopback server speaks HTTP/1.1 only; "
            "let the client use HTTP/1.1 (httpx2.Client(http2=False), the default)."
        )
    if method == "CONNECT":
        return (
            f"a proxy tunnel (CONNECT {target.decode('latin-1')}): the loopback server is not a proxy; point "
            "the SDK's base URL at it (ANTHROPIC_BASE_URL, OPENAI_BASE_URL) instead of HTTPS_PROXY."
        )
    if not target.startswith(b"/"):
        return (
            f"a proxy request for {target.decode('latin-1')!r}: the loopback server is not a proxy; point the "
            "SDK's base URL at it (ANTHROPIC_BASE_URL, OPENAI_BASE_URL) instead of HTTP_PROXY."
        )
    return None


def _foreign_page(scope: Scope) -> str | None:
    """On the recording server: why a request from a web page on a non-loopback origin is not forwarded."""
    origin = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"origin"), None)
    if origin is None or _loopback_origin(origin):
        return None
    return (
        f"a request from the web page at {origin}: wirescript record forwards (and records) requests from pages "
        "on loopback origins only; serve the page under test from localhost or 127.0.0.1."
    )


def _loopback_origin(origin: str) -> bool:
    scheme, _, rest = origin.partition("://")
    return scheme in ("http", "https") and loopback_name(host_of(rest))


def _declared_length(scope: Scope) -> int | None:
    value = next((v for k, v in scope["headers"] if k == b"content-length"), None)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


async def _read_body(receive: Receive, limit: int, declared: int | None) -> bytes:
    if declared is not None and declared > limit:
        raise _TooLarge
    parts, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Abort("the client went away before sending its body")
        part = message.get("body", b"")
        size += len(part)
        if size > limit:
            raise _TooLarge
        parts.append(part)
        if not message.get("more_body", False):
            return b"".join(parts)


async def _watch(receive: Receive, gone: asyncio.Event) -> None:
    """Set `gone` when the client disconnects (the only reader of `receive` once the body is read)."""
    await _until_disconnected(receive)
    gone.set()


async def _until_disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _client(scope: Scope) -> tuple[Any, ...]:
    """The client's address, as the app's connections are keyed (empty when the server gives none)."""
    client = scope.get("client")
    return tuple(client) if client else ()


def _url(scope: Scope, *, own: bool = False) -> str:
    """The request's URL, from its `Host` header (or, with `own`, the server's own address and a plain path)."""
    host, port = scope["server"] or ("127.0.0.1", 80)
    netloc = None if own else next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
    if netloc is None:
        netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    path = scope.get("raw_path") or scope["path"].encode()
    if own and not path.startswith(b"/"):  # `*`, `host:443`, `http://…`: kept in the reason, not the URL
        return f"http://{netloc}/"
    query = scope["query_string"]
    return f"http://{netloc}{path.decode('latin-1')}" + (f"?{query.decode('latin-1')}" if query else "")


def _loopback(host: str) -> str:
    address = _LOOPBACK_NAMES.get(host, host)
    try:
        loopback = ipaddress.ip_address(address).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise UsageError(
            f"host: wirescript serves on a loopback address only (127.0.0.1, ::1 or localhost), got {host!r}"
        )
    return address


def _positive(name: str, value: float, kind: type[int] | type[float]) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float) if kind is float else int)
        or not (value > 0 and math.isfinite(value))
    ):
        what = "a positive number of bytes" if kind is int else "a positive, finite number of seconds"
        raise UsageError(f"{name}: expected {what}, got {value!r}")


class ScriptServer:
    """A stub served over real HTTP on a loopback address by uvicorn, in a background thread.

    Args:
        stub: The stub to serve. Its records, overflow count and hold gate are the same objects
            whether the app calls it in-process or over this server.
        host: A loopback address: `127.0.0.1` (default), `::1` or `localhost`. Nothing else is
            accepted, so a scripted model is never reachable from the network.
        port: The TCP port; 0 (default) picks a free one. Read it back from `port` / `base_url`.
        max_body: The largest request body read, in bytes (default `MAX_BODY`, 64 MiB): a larger one
            is refused unread, an `unreadable` problem.
        header_timeout: Seconds a connection may take to send a request's head (default
            `HEADER_TIMEOUT`, 10 s); one that takes longer is closed.

    Raises:
        UsageError: The host is not a loopback address, the port is out of range, a limit is not
            positive, or uvicorn is not installed (`pip install 'wirescript[server]'`).

    Usually used through `ScriptTransport.serve()`; directly::

        with ScriptServer(stub) as server:
            subprocess.run([...], env={"ANTHROPIC_BASE_URL": server.base_url, ...})

    The control API (`/_wirescript/...`) answers only requests that carry `server.token` in the
    `X-Wirescript-Token` header, and whose `Host` names this machine.

    """

    def __init__(
        self,
        stub: ScriptTransport | RecordingTransport,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        max_body: int = MAX_BODY,
        header_timeout: float = HEADER_TIMEOUT,
    ) -> None:
        address = _loopback(host)
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise UsageError(f"port: expected an integer from 0 (a free port) to 65535, got {port!r}")
        _positive("max_body", max_body, int)
        _positive("header_timeout", header_timeout, float)
        try:
            import uvicorn  # noqa: F401
        except ImportError:
            raise UsageError("serving a script over HTTP needs uvicorn: pip install 'wirescript[server]'") from None
        self.stub = stub
        self.token: str = secrets.token_urlsafe(24)
        """The control API's token, random per server: send it as the `X-Wirescript-Token` header."""
        self.host = address
        self.max_body = max_body
        self.header_timeout = float(header_timeout)
        self.app = ScriptApp(stub, token=self.token, max_body=max_body)
        self._requested_port = port
        self._socket: socket.socket | None = None
        self._runner: Runner | None = None

    @property
    def port(self) -> int:
        """The bound TCP port (known once started)."""
        if self._socket is None:
            raise UsageError("the server is not running: call start() or use it as a context manager")
        return int(self._socket.getsockname()[1])

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`, the provider base URL to give the app.

        Anthropic and Gemini clients take it as is; OpenAI clients expect `<base_url>/v1`.
        """
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def control_headers(self) -> dict[str, str]:
        """`{"X-Wirescript-Token": token}`: the headers a control API request needs."""
        return {TOKEN_HEADER: self.token}

    @property
    def running(self) -> bool:
        """Whether the server thread is serving."""
        return self._runner is not None and self._runner.running

    def start(self) -> str:
        """Bind the port, start serving in a background thread and wait until it accepts; return `base_url`.

        Raises:
            UsageError: It is already running, or the port cannot be bound.
            RuntimeError: uvicorn did not start.

        """
        from ._uvicorn import Runner

        if self._socket is not None:
            raise UsageError("the server is already running; stop() it first")
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on the sockets it accepts only from such a
        # listener. A response is several small writes (head, one per SSE event, the end); under
        # Nagle's algorithm each waits for the client's delayed ACK, about 40 ms a response.
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self._requested_port))
            sock.listen(128)  # connections queue from now on, before uvicorn accepts them
        except OSError as exc:
            sock.close()
            raise UsageError(f"port: cannot listen on {self.host}:{self._requested_port}: {exc}") from None
        sock.setblocking(False)
        self._socket = sock
        runner = Runner(self.app, sock, header_timeout=self.header_timeout)
        try:
            runner.start()
        except BaseException:
            self._cleanup()
            raise
        self._runner = runner
        return self.base_url

    def stop(self) -> None:
        """Stop serving: abort requests still in flight (held ones too), close the port, join the thread.

        Idempotent. The stub keeps its records.
        """
        runner, self._runner = self._runner, None
        try:
            if runner is not None:
                runner.stop()
        finally:
            self._cleanup()

    def _cleanup(self) -> None:
        if self._socket is not None:
            self._socket.close()
        self._socket = None
        self.app = ScriptApp(self.stub, token=self.token, max_body=self.max_body)

    def __enter__(self) -> ScriptServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.base_url if self._socket is not None else "stopped"
        return f"<ScriptServer {where} {self.stub!r}>"
