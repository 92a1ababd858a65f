"""Turn a rendered stream plus a `Fault` into the steps a response body takes. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .script import Fault
from .wires.base import Frame

__all__ = ["Disconnect", "Sleep", "Step", "Timeout", "fault_steps", "plain_steps"]


@dataclass(frozen=True, slots=True)
class Sleep:
    """Wait this long before the next step."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Disconnect:
    """The connection drops: the stack's `RemoteProtocolError`."""

    message: str


@dataclass(frozen=True, slots=True)
class Timeout:
    """The read times out: the stack's `ReadTimeout`."""

    message: str


Step = bytes | Sleep | Disconnect | Timeout


def plain_steps(frames: Iterator[Frame]) -> Iterator[Step]:
    """The unfaulted stream: each frame's bytes as the reader asks for them."""
    for frame in frames:
        yield frame.data


def fault_steps(
    frames: Iterator[Frame],
    fault: Fault,
    error_frame: Callable[[], Frame] | None,
    read_timeout: float | None,
) -> Iterator[Step]:
    """The stream as the fault damages it. Counts refer to frames actually sent.

    A per-event delay longer than the client's read timeout becomes a `ReadTimeout` after that
    timeout, as it would on a network.
    """
    sent = 0
    stream_error_at = fault.stream_error.after if fault.stream_error is not None else None
    dropped = frozenset(fault.drop)

    def limits() -> Step | None:
        if fault.cut_after is not None and sent >= fault.cut_after:
            return b""
        if fault.disconnect_after is not None and sent >= fault.disconnect_after:
            return Disconnect(f"wirescript: scripted disconnect after {sent} events")
        if fault.timeout_after is not None and sent >= fault.timeout_after:
            return Timeout(f"wirescript: scripted read timeout after {sent} events")
        return None

    for frame in frames:
        if stream_error_at is not None and sent >= stream_error_at and error_frame is not None:
            stop = limits()
            if stop is not None:
                if stop != b"":
                    yield stop
                return
            yield error_frame().data
            return
        if frame.name in dropped:
            continue
        stop = limits()
        if stop is not None:
            if stop != b"":
                yield stop
            return
        if fault.delay:
            if read_timeout is not None and fault.delay > read_timeout:
                yield Sleep(read_timeout)
                yield Timeout(f"wirescript: no event within the client's read timeout of {read_timeout} s")
                return
            yield Sleep(fault.delay)
        yield frame.data
        sent += 1
    if stream_error_at is not None and error_frame is not None:
        yield error_frame().data
        return
    stop = limits()
    if stop is not None and stop != b"":
        yield stop
