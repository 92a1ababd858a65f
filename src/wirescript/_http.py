"""The only module that touches httpx or httpx2: it builds the response an incoming request expects.

A client asserts that the response stream is an instance of *its own* library's byte-stream
class, sync or async as the client is, so the response is built with the module the request came
from (`httpx` or `httpx2`), with a stream class made for that library. Neither library is imported
here; each is looked up from the request's type.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from types import ModuleType
from typing import Any

from ._faults import Disconnect, Sleep, Step, Timeout

__all__ = ["async_lead", "http_module", "make_response", "read_timeout", "sync_lead"]

# What `Response(content=<iterator>)` adds to the headers; a response built from a stream gets it here.
_CHUNKED = ("Transfer-Encoding", "chunked")


def http_module(request: Any) -> ModuleType:
    """The library (`httpx` or `httpx2`) that made `request`."""
    return sys.modules[type(request).__module__.partition(".")[0]]


def read_timeout(request: Any) -> float | None:
    """The client's read timeout for this request, from its timeout extension."""
    timeout = getattr(request, "extensions", {}).get("timeout")
    if isinstance(timeout, dict):
        value = timeout.get("read")
        if isinstance(value, (int, float)):
            return float(value)
    return None


def make_response(request: Any, status: int, headers: dict[str, str], steps: Iterator[Step], *, is_async: bool) -> Any:
    """A response of the request's own library whose body runs `steps`, for a sync or an async client.

    Built as `Response(content=<iterator>)` builds it (the same headers, `Transfer-Encoding: chunked`
    last), but from a stream that runs the steps itself instead of through two generators.
    """
    hx = http_module(request)
    sync_stream, async_stream = _streams(hx)
    stream = (async_stream if is_async else sync_stream)(request, steps)
    return hx.Response(status, headers=[*headers.items(), _CHUNKED], stream=stream, request=request)


class _Steps:
    """What both response streams hold: the request (for its library's exceptions) and the steps."""

    def __init__(self, request: Any, steps: Iterator[Step]) -> None:
        self._request = request
        self._steps = steps
        self._consumed = False


@functools.cache
def _streams(hx: ModuleType) -> tuple[type, type]:
    """The sync and async response streams for `hx`: subclasses of its own byte-stream classes."""

    class SyncSteps(_Steps, hx.SyncByteStream):  # type: ignore[misc,name-defined]
        """Runs the steps for a sync client: real sleeps, the stack's exceptions."""

        def __iter__(self) -> Iterator[bytes]:
            if self._consumed:
                raise hx.StreamConsumed()
            self._consumed = True
            for step in self._steps:
                if isinstance(step, bytes):
                    yield step
                elif isinstance(step, Sleep):
                    time.sleep(step.seconds)
                else:
                    _raise(hx, self._request, step)

    class AsyncSteps(_Steps, hx.AsyncByteStream):  # type: ignore[misc,name-defined]
        """Runs the steps for an async client: sleeps that yield to the event loop."""

        # Iterated by a small object rather than an async generator: no generator machinery (nor the
        # event loop's async-generator hooks) per response, and nothing that needs closing.
        def __aiter__(self) -> AsyncIterator[bytes]:
            return _AsyncRun(self)

    class _AsyncRun:
        """One iteration of an `AsyncSteps`; like a generator, it checks for reuse when first advanced."""

        __slots__ = ("_started", "_stream")
        _started: bool
        _stream: Any

        def __init__(self, stream: AsyncSteps) -> None:
            self._stream = stream
            self._started = False

        def __aiter__(self) -> _AsyncRun:
            return self

        async def __anext__(self) -> bytes:
            stream = self._stream
            if not self._started:
                if stream._consumed:
                    raise hx.StreamConsumed()
                stream._consumed = True
                self._started = True
            for step in stream._steps:
                if isinstance(step, bytes):
                    return step
                if isinstance(step, Sleep):
                    import anyio

                    await anyio.sleep(step.seconds)
                else:
                    _raise(hx, stream._request, step)
            raise StopAsyncIteration

    return SyncSteps, AsyncSteps


def _raise(hx: ModuleType, request: Any, step: Disconnect | Timeout) -> None:
    if isinstance(step, Disconnect):
        raise hx.RemoteProtocolError(step.message, request=request)
    raise hx.ReadTimeout(step.message, request=request)


def sync_lead(request: Any, steps: Iterable[Step]) -> None:
    """Run the steps before a sync response exists: a failure here is raised inside the client's `send`.

    The transport calls it only when there are steps (a fault's first-byte delay or connection failure).
    """
    hx = http_module(request)
    for step in steps:
        if isinstance(step, Sleep):
            time.sleep(step.seconds)
        elif isinstance(step, bytes):  # pragma: no cover - _faults never plans that
            raise AssertionError("a response's lead sends no bytes")
        else:
            _raise(hx, request, step)


async def async_lead(request: Any, steps: Iterable[Step]) -> None:
    """Run the steps before an async response exists: a failure here is raised inside the client's `send`.

    The transport calls it only when there are steps (a fault's first-byte delay or connection failure).
    """
    hx = http_module(request)
    for step in steps:
        if isinstance(step, Sleep):
            import anyio

            await anyio.sleep(step.seconds)
        elif isinstance(step, bytes):  # pragma: no cover - _faults never plans that
            raise AssertionError("a response's lead sends no bytes")
        else:
            _raise(hx, request, step)
