"""Serving a botocore client in-process, through its own `before-send` hook (a prototype).

botocore emits `before-send.{service}.{operation}` with the prepared request just before it would open
a connection; the first handler to return an `AWSResponse` answers the call instead of the network.
`attach` registers such a handler that hands each request to a server object and wraps the server's
answer so botocore's own parsers read it: JSON bodies, `StreamingBody` payloads (`invoke_model`) and
event streams (`converse_stream`) alike. An aiobotocore (aioboto3) client is served the same way: its
emitter fires the same event, and gets an `AioAWSResponse` over the same lazy chunks.

botocore's retry modes still decide, for real, whether and how often to retry; with `fast_retries`
the backoff they ask for is not slept. That reaches two of botocore's private attributes (the
emitter's unique-id registry, to wrap the retry handler it registered, and its handler trie, to find
the adaptive mode's client-side rate limiter): when a botocore release moves them, `attach` still
serves, and retries sleep as botocore says.

Nothing here imports botocore until `attach` is called, and then only by name.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import weakref
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import _http
from .errors import UsageError

__all__ = ["Attachment", "Server", "StubServer", "attach", "detach", "serve_with"]

_HANDLER_ID = "wirescript-before-send"
_ATTACHED: weakref.WeakKeyDictionary[Any, Attachment] = weakref.WeakKeyDictionary()


class Server(Protocol):
    """What `attach` serves a client with."""

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


def serve_with(handle_request: Any, client: Any) -> StubServer:
    """A `StubServer` over `handle_request` that knows `client`'s read timeout (`Config(read_timeout=…)`)."""
    read_timeout = getattr(getattr(getattr(client, "meta", None), "config", None), "read_timeout", None)
    timeout = float(read_timeout) if isinstance(read_timeout, (int, float)) else None
    return StubServer(handle_request, read_timeout=timeout)


class StubServer:
    """A `Server` over a transport's `handle_request`: each AWS request becomes an httpx (httpx2) request.

    So recording, holds, faults and problems are exactly those of the in-process path. The transport's
    connection failures become botocore's: one before the response exists (a fault's lead) is
    `ConnectionClosedError` or `ReadTimeoutError`, which botocore's retry modes retry; one while the body
    is read is urllib3's `ProtocolError` or `ReadTimeoutError`, as from a real dropped connection.

    Args:
        handle_request: The transport's `handle_request`.
        read_timeout: The client's read timeout in seconds (`Config(read_timeout=…)`): a fault's delay
            longer than it becomes a read timeout once it has passed.

    """

    def __init__(self, handle_request: Any, *, read_timeout: float | None = None) -> None:
        self._handle = handle_request
        self._extensions = {"timeout": {"read": read_timeout}} if read_timeout is not None else {}

    def serve(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, Mapping[str, str], Iterable[bytes]]:
        """Answer one request through the transport (see `Server.serve`)."""
        hx = _http.default_module()
        # The client's read timeout, so that a fault's delay longer than it times out as a socket would.
        request = hx.Request(method, url, headers=dict(headers), content=body, extensions=self._extensions)
        try:
            response = self._handle(request)
        except hx.TimeoutException as exc:
            raise importlib.import_module("botocore.exceptions").ReadTimeoutError(endpoint_url=url) from exc
        except hx.TransportError as exc:
            raise importlib.import_module("botocore.exceptions").ConnectionClosedError(endpoint_url=url) from exc
        response_headers = {k: v for k, v in response.headers.items() if k.lower() != "transfer-encoding"}
        return response.status_code, response_headers, _chunks(hx, response, url)


def _chunks(hx: Any, response: Any, url: str) -> Iterator[bytes]:
    exceptions = importlib.import_module("urllib3.exceptions")
    try:
        yield from response.iter_raw()
    except hx.TimeoutException as exc:
        raise exceptions.ReadTimeoutError(None, url, str(exc)) from exc
    except hx.TransportError as exc:
        raise exceptions.ProtocolError(str(exc)) from exc
    finally:
        response.close()


class _RawBody:
    """The `raw` of an `AWSResponse`: what botocore reads a body from (urllib3's response, elsewhere).

    botocore calls `stream()` for event streams and error bodies, `read(amt)` through `StreamingBody`
    (and `readinto`, `readlines`, `tell`, `readable` as its own methods of those names do), and `close()`
    when a stream is closed; chunks are pulled from the server only as they are read.
    """

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
        while not self.closed:
            piece = self._next()
            if piece is None:
                return
            yield piece

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

    def at_eof(self) -> bool:
        if self._buffer:
            return False
        piece = None if self.closed else self._next()
        if piece is None:
            return True
        self._buffer = piece
        return False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            close = getattr(self._chunks, "close", None)
            if close is not None:  # a generator: let the server know the client went away
                close()

    def release_conn(self) -> None:
        self.close()


class _AioContent:
    """The part of aiohttp's `StreamReader` aiobotocore reads: `iter_chunks()`, `read(n)`, `at_eof()`."""

    def __init__(self, raw: _RawBody) -> None:
        self._raw = raw

    async def iter_chunks(self) -> AsyncIterator[tuple[bytes, bool]]:
        for piece in self._raw.stream():
            yield piece, True

    async def read(self, n: int = -1) -> bytes:
        return self._raw.read(None if n < 0 else n)

    def at_eof(self) -> bool:
        return self._raw.at_eof()


class _AioRawBody:
    """The `raw` of an aiobotocore `AioAWSResponse`, over the same lazy chunks."""

    def __init__(self, chunks: Iterable[bytes], url: str) -> None:
        self._raw = _RawBody(chunks)
        self.content = _AioContent(self._raw)
        self.url = url

    async def read(self) -> bytes:
        return self._raw.read()

    def close(self) -> None:
        self._raw.close()

    def release(self) -> None:
        self._raw.close()


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


def _wrap_retries(client: Any, attachment: Attachment) -> None:
    # botocore registers its retry handler (legacy, standard or adaptive) on `needs-retry.{service}`
    # under this unique id; `Endpoint._needs_retry` sleeps for the first non-None value any
    # `needs-retry` handler returns. Wrapped, the handler still decides, and asks for no sleep.
    events = client.meta.events
    service = client.meta.service_model.service_id.hyphenize()
    retry_id = f"retry-config-{service}"
    registry = getattr(getattr(events, "_emitter", None), "_unique_id_handlers", None)
    entry = registry.get(retry_id) if isinstance(registry, dict) else None
    if entry is not None:
        original = entry["handler"]

        def no_backoff(**kwargs: Any) -> Any:
            delay = original(**kwargs)
            if inspect.isawaitable(delay):  # aiobotocore: its emitter awaits what a handler returns
                return _no_backoff_async(delay)
            return 0 if delay not in (None, False) else delay

        retry_event = f"needs-retry.{service}"
        events.unregister(retry_event, unique_id=retry_id)
        events.register(retry_event, no_backoff, unique_id=retry_id)
        attachment.retry_event, attachment.retry_id, attachment.retry_original = retry_event, retry_id, original
    # The adaptive mode also waits in `before-send`, in a token bucket, once it has seen a throttle.
    # (botocore's ClientRateLimiter, aiobotocore's AsyncClientRateLimiter and its subclasses)
    trie = getattr(getattr(events, "_emitter", None), "_handlers", None)
    if trie is None:
        return
    for handler in list(trie.prefix_search(f"before-send.{service}")):
        owner = getattr(handler, "__self__", None)
        if getattr(handler, "__name__", "") == "on_sending_request" and any(
            cls.__name__.endswith("ClientRateLimiter") for cls in type(owner).__mro__
        ):
            events.unregister("before-send", handler)
            attachment.limiters.append(handler)


def attach(client: Any, server: Server, *, fast_retries: bool = True) -> Attachment:
    """Serve every request of a botocore or boto3 client with `server`, in-process.

    Args:
        client: A botocore client (`boto3.client("bedrock-runtime", ...)`) or an aiobotocore one, created
            with explicit credentials and region so that botocore looks for none on the machine.
        server: Answers each request (see `Server.serve`).
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

    def before_send(request: Any, **_: Any) -> Any:
        headers = {
            str(k): (v.decode("latin-1") if isinstance(v, bytes) else str(v)) for k, v in request.headers.items()
        }
        status, response_headers, chunks = server.serve(
            request.method.upper(), request.url, headers, _body_bytes(request.body)
        )
        raw: Any = _AioRawBody(chunks, request.url) if aio else _RawBody(chunks)
        return aws_response(request.url, status, dict(response_headers), raw)

    service = client.meta.service_model.service_id.hyphenize()
    event = f"before-send.{service}"
    # registered first: an earlier handler that answers (another stub) would otherwise win.
    client.meta.events.register_first(event, before_send, unique_id=_HANDLER_ID)
    attachment = Attachment(event=event, handler=before_send)
    if fast_retries:
        _wrap_retries(client, attachment)
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
