"""The only module that touches httpx or httpx2: it builds the response an incoming request expects.

A client asserts that the response stream is an instance of *its own* library's byte-stream
class, sync or async as the client is, so the response is built with the module the request came
from (`httpx` or `httpx2`), from a sync generator for sync clients and an async one for async
clients. Neither library is imported here; each is looked up from the request's type.
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from types import ModuleType
from typing import Any

from ._faults import Disconnect, Sleep, Step, Timeout

__all__ = ["async_body", "async_lead", "http_module", "make_response", "read_timeout", "sync_body", "sync_lead"]


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


def make_response(request: Any, status: int, headers: dict[str, str], content: Any) -> Any:
    """A response of the request's own library; `content` is bytes or a (sync or async) iterator of bytes."""
    hx = http_module(request)
    return hx.Response(status, headers=headers, content=content, request=request)


def _raise(hx: ModuleType, request: Any, step: Disconnect | Timeout) -> None:
    if isinstance(step, Disconnect):
        raise hx.RemoteProtocolError(step.message, request=request)
    raise hx.ReadTimeout(step.message, request=request)


def sync_body(request: Any, steps: Iterator[Step]) -> Iterator[bytes]:
    """Run the steps for a sync client: real sleeps, the stack's exceptions."""
    hx = http_module(request)
    for step in steps:
        if isinstance(step, bytes):
            yield step
        elif isinstance(step, Sleep):
            time.sleep(step.seconds)
        else:
            _raise(hx, request, step)


async def async_body(request: Any, steps: Iterator[Step]) -> AsyncIterator[bytes]:
    """Run the steps for an async client: sleeps that yield to the event loop."""
    hx = http_module(request)
    for step in steps:
        if isinstance(step, bytes):
            yield step
        elif isinstance(step, Sleep):
            import anyio

            await anyio.sleep(step.seconds)
        else:
            _raise(hx, request, step)


def sync_lead(request: Any, steps: Iterable[Step]) -> None:
    """Run the steps before a sync response exists: a failure here is raised inside the client's `send`."""
    if not steps:  # the common case: nothing happens before the response
        return
    for _ in sync_body(request, iter(steps)):
        raise AssertionError("a response's lead sends no bytes")  # pragma: no cover - _faults never plans that


async def async_lead(request: Any, steps: Iterable[Step]) -> None:
    """Run the steps before an async response exists: a failure here is raised inside the client's `send`."""
    if not steps:  # the common case: nothing happens before the response
        return
    async for _ in async_body(request, iter(steps)):
        raise AssertionError("a response's lead sends no bytes")  # pragma: no cover - _faults never plans that
