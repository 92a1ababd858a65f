"""The botocore adapter: a boto3/botocore or aiobotocore client served in-process, through its `before-send` hook.

botocore emits `before-send.{service}.{operation}` with the prepared request just before it would open
a connection; the first handler to return an `AWSResponse` answers the call instead of the network.
`attach` registers such a handler. For a stub (a `Door`: `ScriptTransport.attach`), the handler turns
the AWS request into the core's neutral `Request` and the core's `Answer` into an `AWSResponse` whose
body botocore's own parsers read as they would a socket's: JSON bodies, `StreamingBody` payloads
(`invoke_model`) and event streams (`converse_stream`) alike, pulled lazily as the application reads.
Neither httpx nor httpx2 is involved. An aiobotocore client is served by a coroutine handler (its
emitter awaits what a handler returns): a held request waits without blocking the event loop, and a
fault's delays are awaited, not slept. Any other `Server` (record mode's forwarding transport, a test's
canned answers) is asked with the request's method, URL, headers and body.

The connection failures a fault scripts become botocore's: one before the response exists is
`ConnectionClosedError` or `ReadTimeoutError`, which botocore's retry modes retry; one while the body is
read is what the client's HTTP stack raises for a dropped connection (urllib3's `ProtocolError` or
`ReadTimeoutError`; aiohttp's `ServerDisconnectedError` or `asyncio.TimeoutError` under aiobotocore).

botocore's retry modes still decide, for real, whether and how often to retry; with `fast_retries`
the backoff they ask for is not slept (`_fast_retries`, the one function that reaches into botocore's
private state: see its docstring).

Nothing here imports botocore until `attach` is called, and then only by name.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
import sys
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol
from urllib.parse import unquote, urlsplit

from .._exchange import Answer, Request, run, whole
from .._steps import Disconnect, Sleep, Step
from ..errors import UsageError

__all__ = ["Attachment", "Door", "HttpxServer", "Server", "attach", "detach", "serve_with"]

_HANDLER_ID = "wirescript-before-send"
_ATTACHED: weakref.WeakKeyDictionary[Any, Attachment] = weakref.WeakKeyDictionary()


class Door(NamedTuple):
    """A stub's two entry points for the core's neutral requests (`ScriptTransport._serve` and its async twin)."""

    serve: Callable[[Request], Answer]
    serve_async: Callable[[Request], Awaitable[Answer]]


class Server(Protocol):
    """What `attach` serves a client with, when it is not a stub."""

    def serve(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, Mapping[str, str], Iterable[bytes]]:
        """Answer one HTTP request.

        Args:
            method: The HTTP method, upper case.
            url: The full URL botocore would have sent the request to (path percent-encoded).
            headers: The request headers, SigV4 `Authorization` included.
            body: The request body.

        Returns:
            The status, the response headers, and the body as byte chunks, read lazily as the client
            reads (an event stream is read message by message as the application iterates it).

        """
        ...


def serve_with(handle_request: Any, client: Any) -> HttpxServer:
    """An `HttpxServer` over an httpx transport's `handle_request` that knows `client`'s read timeout."""
    return HttpxServer(handle_request, read_timeout=_read_timeout(client))


def _read_timeout(client: Any) -> float | None:
    """The client's read timeout in seconds (`Config(read_timeout=…)`), or None."""
    read_timeout = getattr(getattr(getattr(client, "meta", None), "config", None), "read_timeout", None)
    return float(read_timeout) if isinstance(read_timeout, (int, float)) else None


class HttpxServer:
    """A `Server` over an httpx (httpx2) transport's `handle_request`: record mode's way to forward a boto3 call.

    Each AWS request becomes an httpx request; the transport's connection failures become botocore's
    as a stub's do (see the module docstring).

    Args:
        handle_request: The transport's `handle_request`.
        read_timeout: The client's read timeout in seconds (`Config(read_timeout=…)`).

    """

    def __init__(self, handle_request: Any, *, read_timeout: float | None = None) -> None:
        self._handle = handle_request
        self._extensions = {"timeout": {"read": read_timeout}} if read_timeout is not None else {}

    def serve(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, Mapping[str, str], Iterable[bytes]]:
        """Answer one request through the transport (see `Server.serve`)."""
        from . import http as _http

        hx = _http.default_module()
        request = hx.Request(method, url, headers=dict(headers), content=body, extensions=self._extensions)
        try:
            response = self._handle(request)
        except hx.TimeoutException as exc:
            raise _exceptions().ReadTimeoutError(endpoint_url=url) from exc
        except hx.TransportError as exc:
            raise _exceptions().ConnectionClosedError(endpoint_url=url) from exc
        response_headers = {k: v for k, v in response.headers.items() if k.lower() != "transfer-encoding"}
        return response.status_code, response_headers, _httpx_chunks(hx, response, url)


def _httpx_chunks(hx: Any, response: Any, url: str) -> Iterator[bytes]:
    exceptions = importlib.import_module("urllib3.exceptions")
    try:
        yield from response.iter_raw()
    except hx.TimeoutException as exc:
        raise exceptions.ReadTimeoutError(None, url, str(exc)) from exc
    except hx.TransportError as exc:
        raise exceptions.ProtocolError(str(exc)) from exc
    finally:
        response.close()


def _exceptions() -> Any:
    return importlib.import_module("botocore.exceptions")


# ---------------------------------------------------------------------- the stub's adapter


def _neutral(request: Any, read_timeout: float | None) -> Request:
    """The core's request for a prepared AWS request (`AWSPreparedRequest`)."""
    host, path, query, port = _url_parts(request.url)
    return Request(
        request.method.upper(),
        host,
        path,
        query,
        _request_headers(request.headers),
        _body_bytes(request.body),
        read_timeout=read_timeout,
        port=port,
    )


@functools.lru_cache(maxsize=256)
def _url_parts(url: str) -> tuple[str, str, bytes, int | None]:
    """The host (lower case), the percent-decoded path, the query and the port (None: the scheme's) of a URL.

    Kept for the URLs seen last: a client sends to the same few (one per model and operation), and
    decoding a path with a `%3A` in it costs more than the rest of the request's conversion.
    """
    url_parts = urlsplit(url)
    port = url_parts.port
    default = 443 if url_parts.scheme == "https" else 80
    return (
        (url_parts.hostname or "").lower(),
        unquote(url_parts.path),
        url_parts.query.encode(),
        port if port not in (None, default) else None,
    )


def _request_headers(headers: Any) -> list[tuple[bytes, bytes]]:
    """A prepared request's headers as byte pairs, in order.

    botocore's `HeadersDict` is read through its own dict of (`_HeaderKey`, value): through its public
    mapping, each value is looked up by a new case-insensitive key, four times the cost of the rest of
    the request's conversion (9 µs of a Converse call's 400, measured on botocore 1.44). The reach into
    its private state holds from 1.29 to 1.44 (`tests/test_botocore_serve.py` names the range); a
    headers object of another shape is read through the public mapping.
    """
    found = getattr(headers, "_dict", None)
    if type(found) is dict:
        raw = []
        try:
            for key, value in found.items():  # a loop, not a comprehension: no function call per request (3.11)
                if value.__class__ is not bytes:  # botocore's signed values are bytes, its `Content-Length` text
                    value = value.encode() if value.__class__ is str else _value_bytes(value)
                raw.append((key._key.encode(), value))
        except AttributeError:  # keys of another shape
            pass
        else:
            return raw
    return [(str(name).encode(), _value_bytes(value)) for name, value in headers.items()]


def _value_bytes(value: Any) -> bytes:
    """A header's value as sent: bytes as they are (botocore signs and sends its values as bytes), else its text."""
    return value if isinstance(value, bytes) else str(value).encode()


def _fail_before(step: Step, url: str) -> None:
    """A fault's failure before the response exists: what botocore's HTTP session raises, which it retries."""
    if isinstance(step, Disconnect):
        raise _exceptions().ConnectionClosedError(endpoint_url=url)
    raise _exceptions().ReadTimeoutError(endpoint_url=url)


def _before(answer: Answer, url: str) -> None:
    for step in answer.before:
        if isinstance(step, Sleep):
            time.sleep(step.seconds)
        elif not isinstance(step, bytes):
            _fail_before(step, url)


async def _before_async(answer: Answer, url: str) -> None:
    for step in answer.before:
        if isinstance(step, Sleep):
            await asyncio.sleep(step.seconds)
        elif not isinstance(step, bytes):
            _fail_before(step, url)


def _pieces(answer: Answer, url: str) -> Iterator[bytes]:
    """The body for a sync client: sleeps slept, a dropped connection or a timeout raised as urllib3's."""
    body = answer.body
    if isinstance(body, bytes):  # a stream's tail apart, to know it is read to its end
        yield from (body,) if answer.watch is None else whole(body, answer.watch)
        return
    exceptions = importlib.import_module("urllib3.exceptions")
    for item in run(body, exceptions.ProtocolError, lambda message: exceptions.ReadTimeoutError(None, url, message)):
        if isinstance(item, bytes):
            yield item
        else:
            time.sleep(item)


def _aio_items(answer: Answer) -> Iterator[bytes | float]:
    """The body for an aiobotocore client: bytes, and seconds to await; a failure raised as aiohttp's."""
    body = answer.body
    if isinstance(body, bytes):
        yield from (body,) if answer.watch is None else whole(body, answer.watch)
        return
    yield from run(body, importlib.import_module("aiohttp").ServerDisconnectedError, TimeoutError)


def _headers(answer: Answer) -> dict[str, str]:
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in answer.headers}


class _RawBody:
    """The `raw` of an `AWSResponse`: what botocore reads a body from (urllib3's response, elsewhere).

    botocore calls `stream()` for event streams and error bodies, `read(amt)` through `StreamingBody`
    (and `readinto`, `readlines`, `tell`, `readable` as its own methods of those names do), and `close()`
    when a stream is closed; chunks are pulled from the server only as they are read.
    """

    __slots__ = ("_buffer", "_chunks", "_pulled", "closed")

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._buffer = b""
        self._pulled = 0
        self.closed = False

    def _next(self) -> bytes | None:
        for piece in self._chunks:
            if piece:
                self._pulled += len(piece)
                return bytes(piece)
        return None

    def tell(self) -> int:
        """The bytes pulled from the server so far, as urllib3's `HTTPResponse.tell()` counts them."""
        return self._pulled

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        if self._buffer:
            buffered, self._buffer = self._buffer, b""
            yield buffered
        chunks = self._chunks
        while not self.closed:
            for piece in chunks:  # `_next`, in line: once per chunk of every stream
                if piece:
                    break
            else:
                return
            self._pulled += len(piece)
            yield bytes(piece)

    def read(self, amt: int | None = None) -> bytes:
        if amt is None or amt < 0:
            rest = b"".join([self._buffer, *iter(self._next, None)])
            self._buffer = b""
            return rest
        while len(self._buffer) < amt and (piece := self._next()) is not None:
            self._buffer += piece
        out, self._buffer = self._buffer[:amt], self._buffer[amt:]
        return out

    def readinto(self, target: Any) -> int:
        data = self.read(len(target))
        target[: len(data)] = data
        return len(data)

    def readlines(self) -> list[bytes]:
        return self.read().splitlines(keepends=True)

    def readable(self) -> bool:
        return not self.closed

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            _let_go(self._chunks)

    def release_conn(self) -> None:
        self.close()


class _AioContent:
    """The part of aiohttp's `StreamReader` aiobotocore reads: `iter_chunks()`, `read(n)`, `at_eof()`.

    Over items that are bytes or seconds to await (a fault's delays): waiting never blocks the loop.
    """

    def __init__(self, items: Iterable[bytes | float]) -> None:
        self._items: Iterator[bytes | float] = iter(items)
        self._buffer = b""
        self._wait = 0.0
        self._done = False

    async def _next(self) -> bytes | None:
        if self._wait:
            wait, self._wait = self._wait, 0.0
            await asyncio.sleep(wait)
        for item in self._items:
            if isinstance(item, bytes):
                if item:
                    return bytes(item)
            else:
                await asyncio.sleep(item)
        self._done = True
        return None

    async def iter_chunks(self) -> AsyncIterator[tuple[bytes, bool]]:
        if self._buffer:
            buffered, self._buffer = self._buffer, b""
            yield buffered, True
        while not self._done:
            piece = await self._next()
            if piece is None:
                return
            yield piece, True

    async def read(self, n: int = -1) -> bytes:
        if n < 0:
            pieces = [self._buffer]
            while (piece := await self._next()) is not None:
                pieces.append(piece)
            self._buffer = b""
            return b"".join(pieces)
        while len(self._buffer) < n and (piece := await self._next()) is not None:
            self._buffer += piece
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def at_eof(self) -> bool:
        if self._buffer or self._wait:
            return False
        if self._done:
            return True
        for item in self._items:  # looks ahead without waiting: a delay is awaited by the next read
            if isinstance(item, bytes):
                if item:
                    self._buffer = bytes(item)
                    return False
            else:
                self._wait = item
                return False
        self._done = True
        return True

    def close(self) -> None:
        if not self._done:
            self._done = True
            _let_go(self._items)


def _let_go(source: Iterator[Any]) -> None:
    """The client went away: a generator is closed, so the server knows."""
    close = getattr(source, "close", None)
    if close is not None:
        close()


class _AioRawBody:
    """The `raw` of an aiobotocore `AioAWSResponse`, over the same lazy chunks (and awaited delays)."""

    def __init__(self, items: Iterable[bytes | float], url: str) -> None:
        self.content = _AioContent(items)
        self.url = url

    async def read(self) -> bytes:
        return await self.content.read()

    def close(self) -> None:
        self.content.close()

    def release(self) -> None:
        self.content.close()


def _body_bytes(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, bytes | bytearray):
        return bytes(body)
    if isinstance(body, str):
        return body.encode()
    data = body.read()
    seek = getattr(body, "seek", None)
    if seek is not None:  # botocore may send the same body again on a retry
        seek(0)
    return data if isinstance(data, bytes) else str(data).encode()


@dataclass(slots=True)
class Attachment:
    """What `attach` registered on one client, so that `detach` can take it off again."""

    event: str
    handler: Any
    retry_event: str | None = None
    retry_id: str | None = None
    retry_original: Any = None
    limiters: list[Any] = field(default_factory=list)


async def _no_backoff_async(delay: Any) -> Any:
    value = await delay
    return 0 if value not in (None, False) else value


def _fast_retries(client: Any, attachment: Attachment) -> None:
    """Keep botocore's retry decisions but sleep none of their backoff: the one reach into botocore's private state.

    botocore registers its retry handler (legacy, standard or adaptive) on `needs-retry.{service}`
    under the unique id `retry-config-{service}`, and `Endpoint._needs_retry` sleeps for the first
    non-None value a `needs-retry` handler returns. The public `unregister` does not hand back the
    handler it removes, so the emitter's unique-id registry (`_emitter._unique_id_handlers`) is read
    to wrap it: it still decides, and asks for no sleep. The adaptive mode also waits in `before-send`,
    in a token bucket once it has seen a throttle; its handler is found in the emitter's handler trie
    (`_emitter._handlers.prefix_search`) and unregistered while attached. Measured (botocore 1.44):
    a Converse call answered 429 twice, then 200, takes 1.05 s of backoff in the legacy mode, 1.7 s
    in the standard and 4.0 s in the adaptive one; 6-7 ms without. When a botocore release moves
    either attribute, serving still works and retries sleep as botocore says; a test names the
    releases the reach is known to hold for (`tests/test_botocore_serve.py`).
    """
    events = client.meta.events
    service = client.meta.service_model.service_id.hyphenize()
    retry_id = f"retry-config-{service}"
    emitter = getattr(events, "_emitter", None)
    registry = getattr(emitter, "_unique_id_handlers", None)
    entry = registry.get(retry_id) if isinstance(registry, dict) else None
    if entry is not None:
        original = entry["handler"]

        def no_backoff(**kwargs: Any) -> Any:
            delay = original(**kwargs)
            if delay is None:  # no retry: what almost every response gets
                return None
            if inspect.isawaitable(delay):  # aiobotocore: its emitter awaits what a handler returns
                return _no_backoff_async(delay)
            return 0 if delay not in (None, False) else delay

        retry_event = f"needs-retry.{service}"
        events.unregister(retry_event, unique_id=retry_id)
        events.register(retry_event, no_backoff, unique_id=retry_id)
        attachment.retry_event, attachment.retry_id, attachment.retry_original = retry_event, retry_id, original
    # botocore's ClientRateLimiter, aiobotocore's AsyncClientRateLimiter and its subclasses
    trie = getattr(emitter, "_handlers", None)
    if trie is None:
        return
    for handler in list(trie.prefix_search(f"before-send.{service}")):
        owner = getattr(handler, "__self__", None)
        if getattr(handler, "__name__", "") == "on_sending_request" and any(
            cls.__name__.endswith("ClientRateLimiter") for cls in type(owner).__mro__
        ):
            events.unregister("before-send", handler)
            attachment.limiters.append(handler)


def _stub_handler(door: Door, aws_response: Any, read_timeout: float | None, *, aio: bool) -> Any:
    """The `before-send` handler that serves a client with a stub: one neutral request in, its answer out.

    The sync handler reads the request in line (what `_neutral` does): it runs for every request.
    """
    serve = door.serve

    def before_send(request: Any, **_: Any) -> Any:
        url = request.url
        host, path, query, port = _url_parts(url)
        sent = request.body
        answer = serve(
            Request(
                request.method.upper(),
                host,
                path,
                query,
                _request_headers(request.headers),
                sent if sent.__class__ is bytes else _body_bytes(sent),
                read_timeout=read_timeout,
                port=port,
            )
        )
        if answer.before:
            _before(answer, url)
        headers = {}
        for name, value in answer.headers:
            headers[name.decode("latin-1")] = value.decode("latin-1")
        body = answer.body
        if body.__class__ is bytes:  # a whole body, watched to its end if it is a stream's
            watch = answer.watch
            return aws_response(url, answer.status, headers, _RawBody((body,) if watch is None else whole(body, watch)))
        return aws_response(url, answer.status, headers, _RawBody(_pieces(answer, url)))

    async def before_send_async(request: Any, **_: Any) -> Any:
        answer = await door.serve_async(_neutral(request, read_timeout))
        await _before_async(answer, request.url)
        return aws_response(request.url, answer.status, _headers(answer), _AioRawBody(_aio_items(answer), request.url))

    return before_send_async if aio else before_send


def _server_handler(server: Server, aws_response: Any, *, aio: bool) -> Any:
    """The `before-send` handler that serves a client with any other `Server`."""

    def before_send(request: Any, **_: Any) -> Any:
        headers = {
            str(k): (v.decode("latin-1") if isinstance(v, bytes) else str(v)) for k, v in request.headers.items()
        }
        status, response_headers, chunks = server.serve(
            request.method.upper(), request.url, headers, _body_bytes(request.body)
        )
        raw: Any = _AioRawBody(chunks, request.url) if aio else _RawBody(chunks)
        return aws_response(request.url, status, dict(response_headers), raw)

    return before_send


def attach(client: Any, server: Door | Server, *, fast_retries: bool = True) -> Attachment:
    """Serve every request of a botocore or boto3 client with `server`, in-process.

    Args:
        client: A botocore client (`boto3.client("bedrock-runtime", ...)`) or an aiobotocore one, created
            with explicit credentials and region so that botocore looks for none on the machine.
        server: A stub's `Door`, or any `Server`.
        fast_retries: Keep botocore's retry decisions but sleep none of their backoff.

    Returns:
        What was registered, for `detach`.

    Raises:
        UsageError: The client is already attached, or is not a botocore client.

    """
    if client in _ATTACHED:
        raise UsageError("this client is already served by wirescript; detach it first")
    if not hasattr(getattr(client, "meta", None), "events"):
        raise UsageError(f"attach() takes a boto3/botocore client, got {type(client).__name__}")
    aio_client = getattr(sys.modules.get("aiobotocore.client"), "AioBaseClient", None)
    aio = aio_client is not None and isinstance(client, aio_client)
    if aio:
        aws_response = importlib.import_module("aiobotocore.awsrequest").AioAWSResponse
    else:
        aws_response = importlib.import_module("botocore.awsrequest").AWSResponse
    read_timeout = _read_timeout(client)

    if isinstance(server, Door):
        handler = _stub_handler(server, aws_response, read_timeout, aio=aio)
    else:
        handler = _server_handler(server, aws_response, aio=aio)
    service = client.meta.service_model.service_id.hyphenize()
    event = f"before-send.{service}"
    # registered first: an earlier handler that answers (another stub) would otherwise win.
    client.meta.events.register_first(event, handler, unique_id=_HANDLER_ID)
    attachment = Attachment(event=event, handler=handler)
    if fast_retries:
        _fast_retries(client, attachment)
    _ATTACHED[client] = attachment
    return attachment


def detach(client: Any) -> None:
    """Undo `attach`: the client goes back to botocore's own sending, retries and rate limiting.

    Args:
        client: A client `attach` was called on; one never attached is left as it is.

    """
    attachment = _ATTACHED.pop(client, None)
    if attachment is None:
        return
    events = client.meta.events
    events.unregister(attachment.event, unique_id=_HANDLER_ID)
    if attachment.retry_event is not None:
        events.unregister(attachment.retry_event, unique_id=attachment.retry_id)
        events.register(attachment.retry_event, attachment.retry_original, unique_id=attachment.retry_id)
    for handler in attachment.limiters:
        events.register("before-send", handler)
