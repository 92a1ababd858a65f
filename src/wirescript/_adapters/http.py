"""The httpx/httpx2 adapter: the only module that touches either library.

`read` turns an httpx or httpx2 request into the core's neutral `Request` (through the libraries'
public API: the URL's parts, `headers.raw`, the body, the extensions); `response` and
`response_async` turn the core's `Answer` into a response of the request's own library, running the
steps before it (a failure there is raised inside the client's `send`, as its SDK expects). It also
holds record mode's network transport of a request's library.

A client asserts that the response stream is an instance of *its own* library's byte-stream
class, sync or async as the client is, so the response is built with the module the request came
from (`httpx` or `httpx2`), with a stream class made for that library. Neither library is imported
here to serve a request: each is looked up from the request's type; `default_module` picks one for
record mode to forward a request that came in by another way (the loopback server, a boto3 client).
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from types import ModuleType
from typing import Any

from .._exchange import PER_EVENT, UNREADABLE, Answer, OpenStream, Request, run, whole
from .._steps import Step
from ..errors import UsageError

__all__ = [
    "PER_EVENT",
    "built",
    "default_module",
    "http_module",
    "make_response",
    "network_transport",
    "read",
    "response",
    "response_async",
]

# What `Response(content=<iterator>)` adds to the headers; a response built from a stream gets it here.
_CHUNKED = (b"Transfer-Encoding", b"chunked")


def http_module(request: Any) -> ModuleType:
    """The library (`httpx` or `httpx2`) that made `request`."""
    return sys.modules[type(request).__module__.partition(".")[0]]


def default_module() -> ModuleType:
    """What record mode forwards a request of no library with (the loopback server's, boto3's): httpx2, else httpx.

    Raises:
        UsageError: Neither is installed.

    """
    for name in ("httpx2", "httpx"):
        try:
            return __import__(name)
        except ImportError:
            continue
    raise UsageError("record mode needs httpx2 or httpx to forward requests: pip install 'wirescript[httpx2]'")


def read(request: Any) -> Request:
    """The core's neutral request for an httpx/httpx2 request whose body has been read."""
    url = request.url
    extensions = request.extensions
    read_timeout = None
    timeout = extensions.get("timeout")
    if isinstance(timeout, dict):
        value = timeout.get("read")
        if isinstance(value, (int, float)):
            read_timeout = float(value)
    unreadable = extensions.get(UNREADABLE)
    return Request(
        request.method,
        url.host,
        url.path,
        url.query,
        request.headers.raw,
        request.content,
        bool(extensions.get(PER_EVENT)),
        read_timeout,
        None if unreadable is None else str(unreadable),
        url.port,
    )


def response(request: Any, answer: Answer) -> Any:
    """The response to a sync client's `request`: the steps before it run (sleeping, or raising), then the response."""
    if answer.before:
        for item in _run(http_module(request), request, answer.before):
            if not isinstance(item, bytes):
                time.sleep(item)
    return built(request, answer, is_async=False)


async def response_async(request: Any, answer: Answer) -> Any:
    """The response to an async client's `request`: the steps before it awaited (or raised), then the response."""
    if answer.before:
        for item in _run(http_module(request), request, answer.before):
            if not isinstance(item, bytes):
                await _async_sleep(item)
    return built(request, answer, is_async=True)


def built(request: Any, answer: Answer, *, is_async: bool) -> Any:
    """A response of the request's own library whose body is the answer's, or runs its steps (`answer.before` run).

    Built as `Response(content=<iterator>)` builds it (the same headers, `Transfer-Encoding: chunked`
    last), but from a stream that sends the body or runs the steps itself, once, as a network stream
    is read once (openai drains a stream it has read, and must find it empty). The answer is spent:
    its header list becomes the response's.
    """
    hx, sync_stream, async_stream = _KINDS.get(request.__class__) or _kind(request)
    stream = (async_stream if is_async else sync_stream)(request, answer.body, answer.watch)
    headers = answer.headers
    headers.append(_CHUNKED)  # the answer's own list (each answer has a fresh one): no copy of it
    return hx.Response(answer.status, headers=headers, stream=stream, request=request)


_KINDS: dict[type, tuple[ModuleType, type, type]] = {}
"""By request class: its library and the library's sync and async response streams (`_streams`)."""


def _kind(request: Any) -> tuple[ModuleType, type, type]:
    """The library of `request`'s class and its response streams, found once per class."""
    hx = http_module(request)
    kind = _KINDS[request.__class__] = (hx, *_streams(hx))
    return kind


def make_response(
    request: Any, status: int, headers: dict[str, str], body: bytes | Iterator[Step], *, is_async: bool
) -> Any:
    """A response of the request's own library from its parts (the network guard's answer)."""
    raw = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
    return built(request, Answer(status, raw, (), body), is_async=is_async)


def _run(hx: ModuleType, request: Any, steps: Iterable[Step]) -> Iterator[bytes | float]:
    """The step loop with the stack's failures (`RemoteProtocolError`, `ReadTimeout`).

    Both the sync and the async stream drive it (as httpx's `Auth.auth_flow` is driven), each
    sleeping its own way.
    """
    return run(
        steps,
        lambda message: hx.RemoteProtocolError(message, request=request),
        lambda message: hx.ReadTimeout(message, request=request),
    )


class _Steps:
    """What both response streams hold: the request (for its library's exceptions) and the body or its steps."""

    def __init__(self, request: Any, steps: bytes | Iterator[Step], watch: OpenStream | None) -> None:
        self._request = request
        self._steps = steps
        self._watch = watch
        self._consumed = False

    def _start(self, hx: ModuleType) -> Iterator[bytes | float]:
        if self._consumed:
            raise hx.StreamConsumed()
        self._consumed = True
        watch, self._watch = self._watch, None  # held by the body's iteration alone, freed with it
        if isinstance(self._steps, bytes):  # a whole body: no step loop
            if watch is not None:  # a stream: its tail apart, to know it is read to its end
                return whole(self._steps, watch)
            return iter((self._steps,))
        return _run(hx, self._request, self._steps)


@functools.cache
def _streams(hx: ModuleType) -> tuple[type, type]:
    """The sync and async response streams for `hx`: subclasses of its own byte-stream classes."""

    class SyncSteps(_Steps, hx.SyncByteStream):  # type: ignore[misc,name-defined]
        """Runs the steps for a sync client: real sleeps, the stack's exceptions."""

        def __iter__(self) -> Iterator[bytes]:
            body = self._steps
            if isinstance(body, bytes) and not self._consumed:  # a whole body: its chunks, with no step loop
                self._consumed = True
                watch, self._watch = self._watch, None  # held by the iteration alone: freed with it
                return iter((body,)) if watch is None else whole(body, watch)
            return self._sleeping()

        def _sleeping(self) -> Iterator[bytes]:
            for item in self._start(hx):
                if isinstance(item, bytes):
                    yield item
                else:
                    time.sleep(item)

    class AsyncSteps(_Steps, hx.AsyncByteStream):  # type: ignore[misc,name-defined]
        """Runs the steps for an async client: sleeps that yield to the event loop (asyncio or trio)."""

        # Iterated by a small object rather than an async generator: no generator machinery (nor the
        # event loop's async-generator hooks) per response, and nothing that needs closing.
        def __aiter__(self) -> AsyncIterator[bytes]:
            return _AsyncRun(self._start(hx))

    return SyncSteps, AsyncSteps


class _AsyncRun:
    """One iteration of an async response stream, driving the step loop."""

    __slots__ = ("_run",)

    def __init__(self, run: Iterator[bytes | float]) -> None:
        self._run = run

    def __aiter__(self) -> _AsyncRun:
        return self

    async def __anext__(self) -> bytes:
        for item in self._run:
            if isinstance(item, bytes):
                return item
            await _async_sleep(item)
        raise StopAsyncIteration


async def _async_sleep(seconds: float) -> None:
    import anyio  # httpx and httpx2 depend on it: present wherever an async client runs

    await anyio.sleep(seconds)


def network_transport(request: Any, *, is_async: bool) -> Any:
    """A new real network transport of the request's library (`HTTPTransport` or `AsyncHTTPTransport`)."""
    hx = http_module(request)
    return hx.AsyncHTTPTransport() if is_async else hx.HTTPTransport()
