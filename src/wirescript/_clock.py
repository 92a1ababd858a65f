"""The stub's clock: the time everything that expires or moves on reads (cache entries, background jobs, batches).

Nothing in wirescript sleeps for it. `now()` is the wall clock (`time.time()`, which time-machine and
freezegun move for the whole process) plus every `advance()` so far, so a test of a 24-hour batch or a
5-minute cache entry takes no time and never flakes::

    stub.clock.advance("6m")   # every entry written 6 minutes ago is now 6 minutes old

One clock may serve several stubs (`ScriptTransport(..., clock=clock)`), so their jobs move together.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable
from datetime import timedelta

from .errors import UsageError

__all__ = ["Clock", "Duration", "duration_seconds"]

Duration = float | int | str | timedelta
"""A span of time: seconds, a `timedelta`, or a string of numbers with units (`"90s"`, `"6m"`, `"1h30m"`, `"24h"`)."""

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")


def duration_seconds(value: Duration, name: str = "seconds") -> float:
    """`value` in seconds: a non-negative number, a `timedelta` or a string such as `"6m"` or `"1h30m"`.

    Raises:
        UsageError: `value` is negative, not finite, or a string that is not numbers with units
            (`ms`, `s`, `m`, `h`, `d`); the message names `name`.

    """
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, str):
        text = value.strip().replace(" ", "")
        parts = _PART.findall(text)
        if not text or "".join(number + unit for number, unit in parts) != text:
            raise UsageError(
                f"{name}: expected seconds or a duration such as '90s', '6m', '1h30m' or '24h' (units ms, s, m, h, "
                f"d), got {value!r}"
            )
        seconds = sum(float(number) * _UNITS[unit] for number, unit in parts)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise UsageError(f"{name}: expected seconds, a timedelta or a duration string, got {type(value).__name__}")
    if not math.isfinite(seconds) or seconds < 0:
        raise UsageError(f"{name}: expected a duration of zero or more seconds, got {value!r}")
    return seconds


_ADVANCING = threading.Lock()
"""Held while a clock moves forward: one for every clock (moving one is rare, and making a lock per clock is not)."""


class Clock:
    """The time a stub's caches, background jobs and batches run on: the wall clock plus every `advance()`.

    Args:
        source: Where the time comes from, in seconds since the epoch (None, the default:
            `time.time()`, read on each call, which time-machine and freezegun move). Give a
            function of your own to run a stub on a clock of your own (a frozen one: `lambda: 0.0`).

    ```python
    from wirescript import Clock

    clock = Clock(source=lambda: 1_000.0)
    clock.advance("6m")
    assert clock.now() == 1_360.0
    ```

    """

    __slots__ = ("_offset", "_source")

    def __init__(self, *, source: Callable[[], float] | None = None) -> None:
        if source is not None and not callable(source):
            raise UsageError(f"source: expected a function returning seconds, got {type(source).__name__}")
        self._source = source
        self._offset = 0.0

    def now(self) -> float:
        """The current time, in seconds since the epoch: the source's time plus every `advance()` so far."""
        source = self._source
        # `time.time` looked up on each call: freezegun replaces the module's attribute, not a bound default
        return (time.time() if source is None else source()) + self._offset

    def advance(self, by: Duration) -> float:
        """Move the clock forward by `by` (seconds, a `timedelta`, or `"6m"`, `"1h30m"`, `"24h"`); return the new time.

        Raises:
            UsageError: `by` is negative or not a duration.

        """
        seconds = duration_seconds(by, "advance")
        with _ADVANCING:
            self._offset += seconds
        return self.now()

    @property
    def advanced(self) -> float:
        """How many seconds `advance()` has moved the clock in all."""
        return self._offset

    def __repr__(self) -> str:
        return f"<Clock now={self.now():.3f} advanced={self._offset:g}s>"
