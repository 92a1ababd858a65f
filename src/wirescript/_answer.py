"""The answer renderer: a turn, its wire and its fault become response parts. Pure: no HTTP library.

`answer()` renders a scripted turn, planning its fault when it has one, or says why the fault cannot
take effect on this answer; `refuse()` renders the loud, non-retryable error a request gets when it
cannot be answered as scripted. Neither calls the other: the transport decides.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import NamedTuple

from ._cursor import Refusal
from ._faults import plain_steps, plan_fault
from ._report import failed
from ._steps import Step
from .errors import ScriptError
from .recorded import RecordedRequest
from .script import Turn, queue_label
from .side import SideScript
from .strict import explain
from .wires.base import Rendered, Violation, Wire, unknown_endpoint

__all__ = ["Answer", "answer", "impossible", "refuse", "refuse_strictly", "respond"]


class Answer(NamedTuple):
    """A response before it meets an HTTP library."""

    status: int
    headers: dict[str, str]
    lead: tuple[Step, ...]
    """Run before the response exists (`FaultPlan.lead`)."""
    body: bytes | Iterator[Step]
    """The whole body, or the steps that send it."""


def answer(
    wire: Wire, record: RecordedRequest, turn: Turn, *, per_event: bool, read_timeout: float | None
) -> Answer | Refusal:
    """The response for a scripted turn, or why it cannot be sent (an impossible answer, a fault that cannot work).

    Args:
        wire: The wire serving the request.
        record: The request.
        turn: Its turn.
        per_event: Send each event in a chunk of its own (the loopback server flushes each).
        read_timeout: The client's read timeout, which a long fault delay turns into a `ReadTimeout`.

    """
    if turn.server_tools is not None or turn.citations is not None:
        why = wire.server_tools_problem(turn, record)
        if why is not None:
            return impossible(record, why)
    fault = turn.fault
    # Unfaulted and read in chunks: nothing looks at events one by one, so the wire may join them.
    joined = fault is None and not per_event
    if turn.error is not None:
        rendered = wire.error(turn.error, record)
    else:
        malformed = fault is not None and fault.malformed_tool_json
        rendered = wire.render(turn, record, malformed_tool_json=malformed, joined=joined)
    if fault is None:
        return Answer(rendered.status, rendered.headers, (), _steps(rendered, joined=joined))
    frames = list(rendered.frames) if rendered.frames is not None else None
    if turn.error is not None:
        why_json = "an 'error' turn answers with one JSON body"
    else:
        why_json = "the request did not ask for a stream, so the answer is one JSON body"
    planned = plan_fault(
        fault,
        frames,
        rendered.body,
        wire=wire,
        why_json=why_json,
        error_frame=wire.stream_error(fault.stream_error, record) if fault.stream_error is not None else None,
        read_timeout=read_timeout,
    )
    if isinstance(planned, str):
        return Refusal("fault", planned)
    return Answer(rendered.status, rendered.headers, planned.lead, planned.body)


def impossible(record: RecordedRequest, why: str) -> Refusal:
    """An `impossible_answer`: the turn that answers `record` is one its API could not give to it (`why`)."""
    if record.answered_by == "script" and record.turn_index is not None and record.queue is not None:
        turn = f"{queue_label(record.queue)}[{record.turn_index}]"
    else:
        turn = "the fallback's turn" if record.answered_by == "fallback" else "the script function's turn"
    return Refusal(
        "impossible_answer",
        f"was answered with {turn}, which the real API could not give to this request: {why}.",
        lead=" ",
    )


def respond(wire: Wire, record: RecordedRequest, side: SideScript) -> Answer | Refusal:
    """The answer of a turnless wire (a side endpoint, a route), or why it has none. Never raises.

    A side script that cannot answer (`LookupError`) is `unscripted`, a route handler's failure
    (`ScriptError`) a `script_error`, a request the wire cannot serve (`ValueError`) `unreadable`,
    anything else a wirescript bug (`render_error`).
    """
    try:
        rendered = wire.respond(record, side)
    except ScriptError as exc:
        return Refusal("script_error", str(exc))
    except LookupError as exc:
        return Refusal("unscripted", str(exc.args[0]) if exc.args else "the side script cannot answer it")
    except ValueError as exc:
        return Refusal("unreadable", f"the {wire.name} wire cannot serve it: {exc}")
    except Exception as exc:
        return failed("answering a side endpoint", exc)
    return Answer(rendered.status, rendered.headers, (), _steps(rendered, joined=True))


def refuse(answerer: Wire | None, record: RecordedRequest, message: str, *, not_found: bool = False) -> Answer:
    """The loud answer to a request not answered as scripted: a non-retryable error carrying `message`.

    In the answering wire's own error envelope (404 for an endpoint it does not serve), or, when no
    wire can answer, an envelope every SDK reads.
    """
    if answerer is None:
        rendered = unknown_endpoint(message)
    else:
        rendered = answerer.unscripted(message, record, status=404 if not_found else 400)
    return Answer(rendered.status, rendered.headers, (), rendered.body)


def refuse_strictly(wire: Wire, record: RecordedRequest, violation: Violation) -> Answer:
    """The provider's own error for a request a strict rule refuses: its status and envelope, never retried.

    The message is the real API's wording, then the rule id and how to turn it off (`strict.explain`).
    """
    rendered = wire.strict_error(violation, explain(violation), record)
    return Answer(rendered.status, rendered.headers, (), rendered.body)


def _steps(rendered: Rendered, *, joined: bool) -> bytes | Iterator[Step]:
    """The body: whole when it is one JSON document or a joined stream of one chunk, else its steps."""
    if rendered.frames is None:
        return rendered.body
    if not joined:
        return (frame.data for frame in rendered.frames)
    chunks = plain_steps(rendered.frames)
    first = next(chunks, b"")
    second = next(chunks, None)
    # Most answers fit one chunk: sent whole, they cost the client no stream machinery.
    return first if second is None else itertools.chain((first, second), chunks)
