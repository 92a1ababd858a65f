"""Serve a `ScriptTransport` over real loopback HTTP, for apps under test in another process.

`ScriptApp` is an ASGI application in front of the stub: it turns each HTTP request into an
`httpx2.Request` (an `httpx.Request` when only httpx is installed), awaits
`stub.handle_async_request`, and streams the answer back chunk by chunk, so an SSE answer is
flushed event by event and recording, overflow, hold/release and wire faults behave exactly as
in-process. A scripted disconnect closes the connection abruptly; a scripted read timeout stalls
the stream until the client gives up, or `STALL_TIMEOUT` passes and the connection is dropped.

`ScriptServer` runs it on uvicorn (the `wirescript[server]` extra) in a background thread, on a
loopback address and a free port. Requests under `/_wirescript/` are a control API for test
runners in other languages (see `CONTROL_PREFIX`); they are never recorded as model requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from . import _http
from ._http import PER_EVENT
from ._record import UNREADABLE
from .errors import ScriptError, UsageError, WaitTimeoutError
from .recorded import REDACTED, RecordedRequest

if TYPE_CHECKING:
    from .transport import ScriptTransport

__all__ = ["CONTROL_PREFIX", "STALL_TIMEOUT", "ScriptApp", "ScriptServer", "request_json", "serve_command", "status_of"]

CONTROL_PREFIX = "/_wirescript"
"""The path prefix of the control API, which is never recorded as a model request.

- `GET /_wirescript/requests` — the recorded requests as JSON (credentials redacted, raw `content`
  left out). `?wait=N&timeout=S` first waits up to S seconds (default 5) for N requests; 504 if
  they do not arrive.
- `GET /_wirescript/status` — request count, overflow count, problems, pending turns, hold state.
- `GET /_wirescript/check` — 200 `{"ok": true}`, or 409 with `stub.check()`'s message.
- `POST /_wirescript/hold`, `POST /_wirescript/release` — `stub.hold()`, `stub.release()`.
"""

_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]

_CORS = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-expose-headers", b"*"),
]
_NO_RETRY = [(b"x-should-retry", b"false")]
_PREFLIGHT_METHODS = b"GET, POST, PUT, PATCH, DELETE, OPTIONS"
# Set by the HTTP stack on the response object; the server frames the body itself.
_HOP_BY_HOP = frozenset({"transfer-encoding", "connection", "keep-alive"})
_CONTROL_ROUTES = {"requests": "GET", "status": "GET", "check": "GET", "hold": "POST", "release": "POST"}
_LOOPBACK_NAMES = {"localhost": "127.0.0.1"}
_START_TIMEOUT = 10.0
_LOG = logging.getLogger("wirescript.server")
_MAX_WAIT = 3600.0  # the control API's longest wait: `timeout=inf` would wait forever

STALL_TIMEOUT = 2.0
"""How long a scripted read timeout (`timeout_after`) stalls over the server before the connection is
dropped. In-process the client's read timeout fires at once; over HTTP the stub cannot raise in the
client, so it sends nothing until the client gives up or this many seconds pass, then closes the
connection (which the SDKs retry as a connection error, as they retry a read timeout)."""
_STOP_TIMEOUT = 10.0


class _Abort(Exception):
    """Raised out of the ASGI app to drop the connection when it runs in a server other than `ScriptServer`."""


class ScriptApp:
    """An ASGI application that serves a `ScriptTransport` over HTTP.

    Every request except CORS preflights (answered 204) and the control API (`CONTROL_PREFIX`)
    goes to the stub exactly as an in-process request would: it is recorded, consumes a turn,
    waits while the stub is held, and gets its faults. Every response carries permissive CORS
    headers, so a browser page may call it (anthropic's `dangerouslyAllowBrowser`). Mount it in any
    ASGI server; `ScriptServer` runs it on uvicorn.

    Args:
        stub: The stub to serve.

    """

    def __init__(self, stub: ScriptTransport) -> None:
        self.stub = stub
        self._hx = _http.default_module()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._connections: dict[tuple[Any, ...], asyncio.Transport] = {}
        """The open connections by client address, when `ScriptServer` runs the app (to drop them)."""
        self._stopping = False

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        """Serve one ASGI connection scope (HTTP only)."""
        if scope["type"] != "http":
            return
        started = False

        async def tracked(message: _Message) -> None:
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
            await _json(send, 503, {"type": "error", "error": {"type": "api_error", "message": message}}, _NO_RETRY)
        except _Abort:
            raise
        except Exception as exc:  # a wirescript bug: never uvicorn's bare 500, which the SDKs retry
            _LOG.error("wirescript: %s %s failed: %s: %s", scope["method"], scope["path"], type(exc).__name__, exc)
            if not started:
                message = f"wirescript: the loopback server failed ({type(exc).__name__}: {exc}); please report it"
                error = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
                await _json(send, 400, error, _NO_RETRY)
        finally:
            self._tasks.discard(task)

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

    async def _serve(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        path: str = scope["path"]
        if scope["method"] == "OPTIONS":
            await self._preflight(scope, send)
            return
        if path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/"):
            await self._control(scope, path, send)
            return
        try:
            body = await _read_body(receive)
        except _Abort as exc:  # the client went away: one line, not a traceback
            _LOG.info("wirescript: %s %s: %s", scope["method"], path, exc)
            return
        request = self._request(scope, body)
        gone = asyncio.Event()
        watcher = asyncio.ensure_future(_watch(receive, gone))
        try:
            await self._answer(scope, request, send, gone)
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watcher

    def _request(self, scope: _Scope, body: bytes) -> Any:
        """The request for the stub: raw header bytes as sent; one that cannot be built is still recorded."""
        extensions: dict[str, Any] = {PER_EVENT: True}
        try:
            return self._hx.Request(
                scope["method"], _url(scope), headers=scope["headers"], content=body, extensions=extensions
            )
        except Exception as exc:  # a malformed Host, bytes httpx refuses: recorded as unreadable, never a 500
            extensions[UNREADABLE] = (
                f"the loopback server could not read this request ({type(exc).__name__}: {exc}); "
                "nothing was consumed from the script."
            )
            return self._hx.Request(scope["method"], _url(scope, own=True), content=body, extensions=extensions)

    async def _answer(self, scope: _Scope, request: Any, send: _Send, gone: asyncio.Event) -> None:
        handler = asyncio.ensure_future(self.stub.handle_async_request(request))
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
        try:
            response = handler.result()
        except self._hx.RemoteProtocolError:  # a scripted disconnect before any response
            await self._drop(scope, gone)
            return
        except self._hx.ReadTimeout:  # a scripted read timeout before any response
            await self._stall(scope, gone)
            return
        headers = [
            (k.encode("latin-1"), v.encode("latin-1"))
            for k, v in response.headers.multi_items()
            if k.lower() not in _HOP_BY_HOP
        ]
        await send({"type": "http.response.start", "status": response.status_code, "headers": headers + _CORS})
        try:
            async for chunk in response.stream:
                if chunk:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except self._hx.RemoteProtocolError:  # a scripted disconnect mid-stream
            await self._drop(scope, gone)
            return
        except self._hx.ReadTimeout:  # a scripted read timeout: stall, then drop the connection
            await self._stall(scope, gone)
            return
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _stall(self, scope: _Scope, gone: asyncio.Event) -> None:
        """A scripted read timeout: send nothing until the client gives up or `STALL_TIMEOUT` passes, then drop."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(gone.wait(), STALL_TIMEOUT)
            return
        await self._drop(scope, gone)

    async def _drop(self, scope: _Scope, gone: asyncio.Event | _Receive) -> None:
        """Close this request's connection as a crashed server would: what was sent is delivered, then EOF."""
        client = scope.get("client")
        transport = self._connections.get(tuple(client)) if client else None
        if transport is None:  # not under `ScriptServer`: the server drops it on an exception
            raise _Abort("wirescript: scripted disconnect")
        if self._stopping:  # the server goes down: what the client has not read is dropped too
            transport.abort()
        else:
            transport.close()
        if isinstance(gone, asyncio.Event):
            await gone.wait()
        else:
            await _until_disconnected(gone)

    async def _preflight(self, scope: _Scope, send: _Send) -> None:
        asked = dict(scope["headers"])
        headers = [
            *_CORS,
            (b"access-control-allow-methods", _PREFLIGHT_METHODS),
            (b"access-control-allow-headers", asked.get(b"access-control-request-headers", b"*")),
            (b"access-control-max-age", b"600"),
        ]
        if b"access-control-request-private-network" in asked:
            headers.append((b"access-control-allow-private-network", b"true"))
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _control(self, scope: _Scope, path: str, send: _Send) -> None:
        name = path[len(CONTROL_PREFIX) + 1 :]
        method = _CONTROL_ROUTES.get(name)
        if method is None:
            known = ", ".join(f"{m} {CONTROL_PREFIX}/{n}" for n, m in _CONTROL_ROUTES.items())
            await _json(send, 404, {"error": f"wirescript: no control endpoint {path}; known: {known}"})
            return
        if scope["method"] != method:
            message = f"wirescript: {scope['method']} {path} is not allowed; use {method}"
            await _json(send, 405, {"error": message}, [(b"allow", method.encode())])
            return
        stub = self.stub
        if name == "hold":
            stub.hold()
            await _json(send, 200, {"held": True})
        elif name == "release":
            stub.release()
            await _json(send, 200, {"held": False})
        elif name == "status":
            await _json(send, 200, status_of(stub))
        elif name == "check":
            try:
                stub.check()
            except AssertionError as exc:
                await _json(send, 409, {"ok": False, "message": str(exc)})
            else:
                await _json(send, 200, {"ok": True})
        else:
            await self._requests(scope, send)

    async def _requests(self, scope: _Scope, send: _Send) -> None:
        query = dict(parse_qsl(scope["query_string"].decode("latin-1")))
        unknown = sorted(set(query) - {"wait", "timeout"})
        if unknown:
            message = f"wirescript: unknown query parameter(s) {', '.join(unknown)}; known: wait, timeout"
            await _json(send, 400, {"error": message})
            return
        try:
            wait = _number(query, "wait", int, 0)
            timeout = _number(query, "timeout", float, 5.0)
        except ValueError as exc:
            await _json(send, 400, {"error": f"wirescript: {exc}"})
            return
        if wait:
            try:
                await self.stub.wait_for_requests_async(wait, timeout)
            except WaitTimeoutError as exc:
                await _json(send, 504, {"error": str(exc)})
                return
        await _json(send, 200, [request_json(r) for r in self.stub.requests])


def request_json(record: RecordedRequest) -> dict[str, Any]:
    """A recorded request as JSON data: every field but the raw `content`, the credential redacted."""
    data: dict[str, Any] = record.model_dump(mode="json", exclude={"content", "api_key"})
    data["api_key"] = REDACTED if record.api_key is not None else None
    return data


def status_of(stub: ScriptTransport) -> dict[str, Any]:
    """The stub's state as JSON data, for `GET /_wirescript/status`."""
    return {
        "requests": stub.request_count,
        "overflow": stub.overflow,
        "problems": stub.problems,
        "pending": [{"queue": p.queue, "position": p.position, "turn": p.turn.describe()} for p in stub.pending],
        "held": stub.held,
    }


def _number(query: dict[str, str], name: str, kind: type[int] | type[float], default: float) -> Any:
    raw = query.get(name)
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = -1
    if not value >= 0 or (kind is float and not 0 < value < _MAX_WAIT):  # NaN fails every comparison
        what = "a non-negative integer" if kind is int else f"a positive number of seconds below {_MAX_WAIT:g}"
        raise ValueError(f"{name}: expected {what}, got {raw!r}")
    return value


async def _json(send: _Send, status: int, data: Any, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps(data).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *_CORS]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _read_body(receive: _Receive) -> bytes:
    parts = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Abort("the client went away before sending its body")
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)


async def _watch(receive: _Receive, gone: asyncio.Event) -> None:
    """Set `gone` when the client disconnects (the only reader of `receive` once the body is read)."""
    await _until_disconnected(receive)
    gone.set()


async def _until_disconnected(receive: _Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _url(scope: _Scope, *, own: bool = False) -> str:
    """The request's URL, from its `Host` header (or, with `own` or no header, the server's own address)."""
    host, port = scope["server"] or ("127.0.0.1", 80)
    netloc = None if own else next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
    if netloc is None:
        netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    path = scope.get("raw_path") or scope["path"].encode()
    query = scope["query_string"]
    return f"http://{netloc}{path.decode('latin-1')}" + (f"?{query.decode('latin-1')}" if query else "")


def _protocol_class(app: ScriptApp) -> type[asyncio.Protocol]:
    """Uvicorn's HTTP/1.1 protocol, telling `app` each connection's transport so it can drop it."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class _Protocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            # A response is several small writes (head, one per SSE event, the end). Under Nagle's
            # algorithm a small write waits while earlier data is unacknowledged, and the client
            # delays its ACK: ~40 ms a response. asyncio sets TCP_NODELAY only on sockets whose
            # `proto` is IPPROTO_TCP (its private `_set_nodelay`); ours is 0. Set it here, whatever
            # made the listening socket and whichever loop runs it.
            sock = transport.get_extra_info("socket")
            if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
                with contextlib.suppress(OSError):  # the peer already went away
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            super().connection_made(transport)
            if self.client is not None:
                app._connections[self.client] = transport

        def connection_lost(self, exc: Exception | None) -> None:
            if self.client is not None:
                app._connections.pop(self.client, None)
            super().connection_lost(exc)

    return _Protocol


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


class ScriptServer:
    """A stub served over real HTTP on a loopback address by uvicorn, in a background thread.

    Args:
        stub: The stub to serve. Its records, overflow count and hold gate are the same objects
            whether the app calls it in-process or over this server.
        host: A loopback address: `127.0.0.1` (default), `::1` or `localhost`. Nothing else is
            accepted, so a scripted model is never reachable from the network.
        port: The TCP port; 0 (default) picks a free one. Read it back from `port` / `base_url`.

    Raises:
        UsageError: The host is not a loopback address, the port is out of range, or uvicorn is
            not installed (`pip install 'wirescript[server]'`).

    Usually used through `ScriptTransport.serve()`; directly::

        with ScriptServer(stub) as server:
            subprocess.run([...], env={"ANTHROPIC_BASE_URL": server.base_url, ...})

    """

    def __init__(self, stub: ScriptTransport, *, host: str = "127.0.0.1", port: int = 0) -> None:
        address = _loopback(host)
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise UsageError(f"port: expected an integer from 0 (a free port) to 65535, got {port!r}")
        try:
            import uvicorn  # noqa: F401
        except ImportError:
            raise UsageError("serving a script over HTTP needs uvicorn: pip install 'wirescript[server]'") from None
        self.stub = stub
        self.app = ScriptApp(stub)
        self.host = address
        self._requested_port = port
        self._socket: socket.socket | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None

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
    def running(self) -> bool:
        """Whether the server thread is serving."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> str:
        """Bind the port, start serving in a background thread and wait until it accepts; return `base_url`.

        Raises:
            UsageError: It is already running, or the port cannot be bound.
            RuntimeError: uvicorn did not start.

        """
        import uvicorn

        if self._socket is not None:
            raise UsageError("the server is already running; stop() it first")
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self._requested_port))
            sock.listen(128)  # connections queue from now on, before uvicorn accepts them
        except OSError as exc:
            sock.close()
            raise UsageError(f"port: cannot listen on {self.host}:{self._requested_port}: {exc}") from None
        sock.setblocking(False)
        self._socket = sock
        config = uvicorn.Config(
            self.app,
            http=_protocol_class(self.app),
            proxy_headers=False,
            ws="none",
            lifespan="off",
            loop="asyncio",
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=int(_STOP_TIMEOUT),
        )
        ready = self._ready
        ready.clear()
        self._failure = None

        class _Server(uvicorn.Server):
            wake: asyncio.Event | None = None
            loop: asyncio.AbstractEventLoop | None = None

            async def startup(self, sockets: list[socket.socket] | None = None) -> None:
                await super().startup(sockets=sockets)
                self.wake, self.loop = asyncio.Event(), asyncio.get_running_loop()
                ready.set()

            async def main_loop(self) -> None:
                # uvicorn's own loop, a tick every 0.1 s, but woken by stop() at once instead of at the next
                # tick: a server started and stopped per test no longer waits out a tick each time.
                counter = 0
                while not await self.on_tick(counter):
                    counter = (counter + 1) % 864_000
                    if self.wake is not None:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(self.wake.wait(), 0.1)

            async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
                # uvicorn's shutdown, step for step, but looking every 5 ms where it sleeps 0.1 s: a server
                # started per test stops in milliseconds, not 0.1-0.3 s (stop() aborted every request already).
                for listener in self.servers:
                    listener.close()
                for sock in sockets or []:
                    sock.close()
                state = self.server_state
                for connection in list(state.connections):
                    connection.shutdown()
                loop = asyncio.get_running_loop()
                deadline = loop.time() + _STOP_TIMEOUT  # the grace period given as timeout_graceful_shutdown
                while (state.connections or state.tasks) and not self.force_exit and loop.time() < deadline:
                    await asyncio.sleep(0.005)
                for task in state.tasks:
                    task.cancel(msg="the server stopped")
                for connection in list(state.connections):  # past the grace: drop what is left (unread data too)
                    connection.transport.abort()
                # Python >= 3.12 waits here for every connection to go: bounded, as uvicorn bounds it.
                closed = asyncio.gather(*(listener.wait_closed() for listener in self.servers))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(closed, max(deadline - loop.time(), 0.1))
                if not self.force_exit:
                    await self.lifespan.shutdown()

        self._server = server = _Server(config)
        self._thread = threading.Thread(target=self._run, args=(server, sock), name=f"wirescript-server-{self.port}")
        self._thread.daemon = True
        self._thread.start()
        while not ready.wait(0.01):
            if not self._thread.is_alive():
                failure = self._failure
                self._cleanup()
                raise RuntimeError(f"wirescript: the server did not start: {failure!r}") from failure
        return self.base_url

    def _run(self, server: Any, sock: socket.socket) -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # reported by start(); SystemExit is uvicorn's startup failure
            self._failure = exc

    def stop(self) -> None:
        """Stop serving: abort requests still in flight (held ones too), close the port, join the thread.

        Idempotent. The stub keeps its records.
        """
        thread, server = self._thread, self._server
        if thread is None or server is None:
            self._cleanup()
            return
        self.app.abort_all()
        server.should_exit = True
        if server.loop is not None and server.wake is not None:  # wake its main loop now, not at its next tick
            with contextlib.suppress(RuntimeError):  # the loop closed already: it has stopped by itself
                server.loop.call_soon_threadsafe(server.wake.set)
        thread.join(_STOP_TIMEOUT)
        if thread.is_alive():  # pragma: no cover - uvicorn ignored should_exit
            server.force_exit = True
            thread.join(_STOP_TIMEOUT)
        self._cleanup()
        if thread.is_alive():  # pragma: no cover
            raise RuntimeError("wirescript: the server thread did not stop")

    def _cleanup(self) -> None:
        if self._socket is not None:
            self._socket.close()
        self._socket = None
        self._server = None
        self._thread = None
        self.app = ScriptApp(self.stub)

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


def serve_command(
    script: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    hold_timeout: float = 30.0,
    max_records: int | None = None,
    out: IO[str] | None = None,
    err: IO[str] | None = None,
    strict: bool = True,
    strict_skip: Iterable[str] = (),
) -> int:
    """`wirescript serve SCRIPT`: serve a script file until SIGINT or SIGTERM; return the exit status.

    The base URL is printed alone on one line of `out` (stdout), flushed, once the server accepts
    connections; everything else goes to `err` (stderr). Stopping is clean: exit status 0, with a
    summary of the requests and any problems on stderr. A script that does not load is reported
    on stderr with exit status 2, before any URL is printed. `max_records` bounds the records kept
    (see `ScriptTransport`), for a long session; `strict` and `strict_skip` are `ScriptTransport`'s
    (`--no-strict`, `--strict-skip RULE`).
    """
    from .files import load_script
    from .transport import ScriptTransport

    out = out or sys.stdout
    err = err or sys.stderr
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            stub = ScriptTransport(
                load_script(script),
                hold_timeout=hold_timeout,
                max_records=max_records,
                strict=strict,
                strict_skip=strict_skip,
            )
            server = ScriptServer(stub, host=host, port=port)
            server.start()
        except (ScriptError, UsageError) as exc:
            print(f"wirescript serve: {exc}", file=err, flush=True)
            return 2
        try:
            print(server.base_url, file=out, flush=True)
            print(
                f"wirescript serve: {os.fspath(script)} ({len(stub.pending)} turn(s)) at {server.base_url}; "
                f"control API at {server.base_url}{CONTROL_PREFIX}/ (requests, status, check, hold, release); "
                "stop with Ctrl-C",
                file=err,
                flush=True,
            )
            while not stop.wait(1.0):
                pass
        finally:
            server.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print(f"wirescript serve: stopped after {stub.request_count} request(s), overflow {stub.overflow}", file=err)
    try:
        stub.check()
    except AssertionError as exc:
        print(str(exc), file=err)
    err.flush()
    return 0
