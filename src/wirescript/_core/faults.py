"""Plan a faulted response: check that the fault can take effect, then lay out the steps. Pure: no I/O.

A response is served in two parts: the steps *before* it, run before the response exists (the first-byte
delay, a connection that fails before any byte, which the SDK retries), and the *body*, run as the
client reads (events, per-event delays, a cut, a mid-stream failure, which nothing retries).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

from .._exchange import tail_at
from .._steps import Disconnect, Sleep, Step, Timeout
from .._text import did_you_mean
from ..errors import ScriptError
from ..script import Fault, Turn
from ..wires.base import Frame, Wire

__all__ = ["FaultPlan", "check_script_faults", "plan_fault"]


class FaultPlan(NamedTuple):
    """How a faulted response goes out."""

    before: tuple[Sleep | Disconnect | Timeout, ...]
    """Run before the response exists: a failure here happens inside the client's `send`."""
    body: Iterator[Step]
    """The response body, step by step as the client reads it."""


def check_script_faults(turns: Iterable[tuple[str, Turn]], wires: Sequence[Wire]) -> None:
    """Reject, at construction, faults that can never take effect on any answer.

    Checks that every dropped event is one some wire sends, and that an error turn's fault suits a
    JSON answer (an error is never streamed).

    Raises:
        ScriptError: Naming the turn (`where`) and the fault field.

    """
    known = frozenset().union(*(wire.events for wire in wires))
    for where, turn in turns:
        fault = turn.fault
        if fault is None:
            continue
        for name in fault.drop:
            if name not in known:
                hint = did_you_mean(name, known)
                raise ScriptError(
                    f"invalid {where}: field 'fault.drop': no wire sends an event named {name!r} "
                    f"(known events: {', '.join(sorted(known))}){hint}"
                )
        if turn.error is not None:
            problem = _json_problem(fault, "an 'error' turn answers with one JSON body", None)
            if problem is not None:
                raise ScriptError(f"invalid {where}: {problem}")


def plan_fault(
    fault: Fault,
    frames: Sequence[Frame] | None,
    body: bytes,
    *,
    wire: Wire,
    why_json: str,
    error_frame: Frame | None,
    read_timeout: float | None,
    end: Callable[[], None] | None = None,
) -> FaultPlan | str:
    """Lay out a faulted response, or say why the fault cannot take effect on this answer.

    Args:
        fault: The turn's fault.
        frames: The frames of a streamed answer, or None for a JSON answer.
        body: The JSON answer's body (unused for a stream).
        wire: The wire serving the answer.
        why_json: For a JSON answer, why it is one (for the message).
        error_frame: The wire's in-stream error event, when the fault asks for one.
        read_timeout: The client's read timeout in seconds, from the request, if it has one.
        end: For a streamed answer, called when the stream ends as scripted: as the client takes its
            tail, or as the fault itself ends it (a cut, a disconnect, a timeout, an in-stream error).

    Returns:
        The plan, or a sentence naming the fault field that would not take effect.

    """
    end = end or _nothing
    if fault.raw is not None:  # the script wrote the body itself: the stub's doing, however it ends
        end()
        raw = fault.raw.encode() if isinstance(fault.raw, str) else fault.raw
        return FaultPlan(_before(fault, read_timeout), iter((raw,)))
    if frames is None:
        problem = _json_problem(fault, why_json, wire)
        if problem is not None:
            return problem
        frames = (Frame("body", body),)
    else:
        problem = _stream_problem(fault, [frame.name for frame in frames], wire.name)
        if problem is not None:
            return problem
    before = _before(fault, read_timeout)
    if any(not isinstance(step, Sleep) for step in before):  # the response never exists: nothing to read
        end()
    return FaultPlan(before, _body(fault, frames, error_frame, read_timeout, end, wire.closing))


def _nothing() -> None:
    pass


def _before(fault: Fault, read_timeout: float | None) -> tuple[Sleep | Disconnect | Timeout, ...]:
    before: list[Sleep | Disconnect | Timeout] = []
    if fault.first_byte_delay:
        if read_timeout is not None and fault.first_byte_delay > read_timeout:
            return (
                Sleep(read_timeout),
                Timeout(f"wirescript: no response within the client's read timeout of {read_timeout} s"),
            )
        before.append(Sleep(fault.first_byte_delay))
    if fault.disconnect_after == 0:
        before.append(Disconnect("wirescript: scripted disconnect before the response"))
    elif fault.timeout_after == 0:
        before.append(Timeout("wirescript: scripted read timeout before the response"))
    return tuple(before)


_CATALOG_HINT = (
    " (an error catalog's in-stream case, id 'stream-…', reaches streaming requests only: leave it out of a "
    "non-streaming app's cases with in_stream=False, e.g. anthropic_errors(in_stream=False))"
)


def _json_problem(fault: Fault, why_json: str, wire: Wire | None) -> str | None:
    """Why a fault cannot take effect on a JSON answer (one event, its body), or None."""
    if fault.drop:
        return (
            f"the fault drops {_names(fault.drop)}, but {why_json}, which has no events to drop; "
            "fault.drop needs a streamed answer"
        )
    if fault.stream_error is not None:
        hint = "" if wire is None else "; script an 'error' turn for an HTTP error instead" + _CATALOG_HINT
        return f"fault.stream_error needs a streamed answer, but {why_json}{hint}"
    for name in ("cut_after", "disconnect_after", "timeout_after"):
        count = getattr(fault, name)
        if count is not None and count > 0:
            return (
                f"fault.{name}={count} needs a streamed answer, but {why_json} (a single event); "
                f"only {name}=0 applies to it"
            )
    if fault.malformed_tool_json and wire is not None and not wire.malformed_tool_json_applies_to_json:
        return (
            f"fault.malformed_tool_json needs a streamed answer from the {wire.name} wire, but {why_json}, "
            "whose tool input is a JSON object, not text that could be malformed"
        )
    return None


def _stream_problem(fault: Fault, names: list[str], wire: str) -> str | None:
    """Why a fault cannot take effect on a streamed answer with these event names, or None."""
    missing = [name for name in fault.drop if name not in names]
    if missing:
        sent = ", ".join(dict.fromkeys(names))
        return f"the fault drops {_names(missing)}, which this {wire} answer does not send (its events: {sent})"
    total = sum(1 for name in names if name not in fault.drop)
    after_drops = " after the drops" if fault.drop else ""
    if fault.cut_after is not None and fault.cut_after >= total:
        return (
            f"fault.cut_after={fault.cut_after} cuts nothing: this answer sends {total} events{after_drops}; "
            f"cut_after must be below {total}"
        )
    for name, count in (
        ("disconnect_after", fault.disconnect_after),
        ("timeout_after", fault.timeout_after),
        ("stream_error.after", fault.stream_error.after if fault.stream_error is not None else None),
    ):
        if count is not None and count > total:
            return (
                f"fault.{name}={count} is never reached: this answer sends {total} events{after_drops}; "
                f"{name} must be at most {total}"
            )
    return None


def _names(names: Iterable[str]) -> str:
    return ", ".join(map(repr, names))


def _body(
    fault: Fault,
    frames: Iterable[Frame],
    error_frame: Frame | None,
    read_timeout: float | None,
    end: Callable[[], None],
    closing: frozenset[str],
) -> Iterator[Step]:
    """The body as the fault damages it. Counts refer to events actually sent; the plan was checked.

    `end` is called as the stream ends as scripted: as the client takes the tail of its last event
    (sent in a chunk of its own), or as the fault ends it.
    """
    if fault.disconnect_after == 0 or fault.timeout_after == 0:
        end()
        return  # the steps before the response fail: there is no body
    error_at = fault.stream_error.after if fault.stream_error is not None else None
    sent_frames = [frame for frame in frames if frame.name not in fault.drop]
    events = [frame.data for frame in sent_frames]
    # The last event with content: the stream's tail is its last byte, its line ends and the closing frames.
    last = next((i for i in range(len(sent_frames) - 1, -1, -1) if sent_frames[i].name not in closing), -1)
    for sent, data in enumerate([*events, None]):
        if error_at == sent:
            assert error_frame is not None
            end()
            yield from _delayed(fault, read_timeout, error_frame.data)
            return
        if fault.cut_after == sent:
            end()
            return
        if fault.disconnect_after == sent:
            end()
            yield Disconnect(f"wirescript: scripted disconnect after {sent} events")
            return
        if fault.timeout_after == sent:
            end()
            yield Timeout(f"wirescript: scripted read timeout after {sent} events")
            return
        if data is None:
            end()
            return
        if _times_out(fault, read_timeout):  # the delay outlasts the client's read timeout
            end()
            yield from _delayed(fault, read_timeout, data)
            return
        if sent == last:  # its tail in a chunk of its own (`_exchange.Watch`)
            cut = tail_at(data, len(data))
            yield from _delayed(fault, read_timeout, data[:cut])
            end()
            yield data[cut:]
        else:
            yield from _delayed(fault, read_timeout, data)


def _times_out(fault: Fault, read_timeout: float | None) -> bool:
    return read_timeout is not None and fault.delay > read_timeout


def _delayed(fault: Fault, read_timeout: float | None, data: bytes) -> Iterator[Step]:
    """One event after the per-event delay; a delay past the read timeout is a `ReadTimeout` instead."""
    if _times_out(fault, read_timeout):
        assert read_timeout is not None
        yield Sleep(read_timeout)
        yield Timeout(f"wirescript: no event within the client's read timeout of {read_timeout} s")
        return
    if fault.delay:
        yield Sleep(fault.delay)
    yield data
