"""One wake-up primitive for threads and event loops: the hold gate and both arrival waits use it.

A `Signal` shares its owner's lock. Waiters check a condition under that lock and sleep until
`notify_all()` (called with the lock held) wakes them to check again. A thread sleeps on a
`threading.Event`; a task sleeps on an `anyio.Event`, woken through its event loop's thread-safe
scheduler (asyncio's `call_soon_threadsafe`, trio's `TrioToken.run_sync_soon`), so a release from
any thread or loop wakes it without a worker thread, and its cancel scope is honoured. Every waiter
is forgotten when it stops waiting, woken, timed out or cancelled, so no closed loop is kept alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from ..errors import ScriptError

__all__ = ["Gate", "Signal", "seconds"]


class Gate:
    """One hold period: `release()` opens it, freeing exactly the requests that arrived during it."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open = False


class Signal:
    """Wait, in a thread or a task, until a condition over state guarded by `lock` holds."""

    __slots__ = ("_lock", "_waiters")

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock
        self._waiters: list[Callable[[], None]] | tuple[()] = ()
        """Who waits: a list from the first waiter on (a stub that nobody waits on makes none)."""

    @property
    def waiting(self) -> bool:
        """Whether anyone waits (checked under the lock before a notification)."""
        return bool(self._waiters)

    def notify_all(self) -> None:
        """Wake every waiter to check its condition again. Call with the lock held."""
        waiters, self._waiters = self._waiters, ()
        for wake in waiters:
            wake()

    def wait(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Block this thread until `condition()` holds (checked under the lock); False after `timeout` s."""
        deadline = time.monotonic() + timeout
        while True:
            event = threading.Event()
            with self._lock:
                if condition():
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._join(event.set)
            try:
                event.wait(remaining)
            finally:
                self._forget(event.set)

    async def wait_async(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Await, without blocking the event loop, until `condition()` holds; False after `timeout` s.

        Works under asyncio and trio (through anyio, which httpx and httpx2 depend on; without it, as
        for an aiobotocore client alone, under asyncio); a cancellation of the waiting task propagates.
        """
        anyio: Any = _anyio()
        schedule = asyncio.get_running_loop().call_soon_threadsafe if anyio is None else _scheduler()
        deadline = time.monotonic() + timeout
        while True:
            event: Any = asyncio.Event() if anyio is None else anyio.Event()
            wake = _waker(schedule, event.set)
            with self._lock:
                if condition():
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._join(wake)
            try:
                if anyio is None:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(event.wait(), remaining)
                else:
                    with anyio.move_on_after(remaining):
                        await event.wait()
            finally:
                self._forget(wake)

    def _join(self, wake: Callable[[], None]) -> None:
        """Add a waiter (under the lock)."""
        waiters = self._waiters
        if isinstance(waiters, list):
            waiters.append(wake)
        else:
            self._waiters = [wake]

    def _forget(self, wake: Callable[[], None]) -> None:
        with self._lock:
            waiters = self._waiters
            if wake in waiters:  # else already woken: notify_all took it
                waiters.remove(wake)  # type: ignore[union-attr]


def _anyio() -> Any:
    """anyio, or None: without httpx (an aiobotocore client alone) only asyncio can be running."""
    try:
        return importlib.import_module("anyio")
    except ImportError:
        return None


def _scheduler() -> Callable[[Callable[[], Any]], Any]:
    """The running event loop's thread-safe way to run a callback soon: asyncio's or trio's."""
    try:
        return asyncio.get_running_loop().call_soon_threadsafe
    except RuntimeError:  # not asyncio: trio (anyio supports no other backend)
        trio = importlib.import_module("trio")
        schedule: Callable[[Callable[[], Any]], Any] = trio.lowlevel.current_trio_token().run_sync_soon
        return schedule


def _waker(schedule: Callable[[Callable[[], Any]], Any], callback: Callable[[], None]) -> Callable[[], None]:
    def wake() -> None:
        # The loop may have closed (its waiter timed out and left): nobody waits on it any more.
        with contextlib.suppress(RuntimeError):
            schedule(callback)

    return wake


_LONGEST = threading.TIMEOUT_MAX


def seconds(value: object, name: str, *, zero: bool = False) -> float:
    """A timeout in seconds: a positive (or, with `zero`, non-negative) finite real that threads can wait for."""
    if value.__class__ is float and (value >= 0.0 if zero else value > 0.0) and value <= _LONGEST:  # the usual
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value >= 0 if zero else value > 0):
        what = "a non-negative" if zero else "a positive"
        raise ScriptError(f"{name}: expected {what} number of seconds, got {value!r}")
    if not math.isfinite(value) or value > threading.TIMEOUT_MAX:
        raise ScriptError(
            f"{name}: expected a finite number of seconds of at most {threading.TIMEOUT_MAX:.0f} (what a thread "
            f"can wait for), got {value!r}"
        )
    return float(value)
