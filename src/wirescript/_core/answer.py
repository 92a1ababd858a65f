"""The renderer: a decided request becomes the core's `Answer`. Pure: no HTTP library. Never raises.

`render()` answers every decision the ledger makes: a scripted turn as its wire renders it (its
fault planned by `_faults`), a turnless wire's answer, or the loud, non-retryable error of a request
that cannot be answered as scripted (the wire's own envelope; the strict error for a strict rule).
A wire failing on the way (its `render`, `error`, `stream_error`, `respond`, `unscripted`, its
lazy frames) is a problem, answered loudly, never an exception out of the transport.

A streamed answer is watched (`_exchange.OpenStream`): it is open until the client takes its tail (the
last byte of its content and the frames that only close it), which goes out in a chunk of its own,
or until the stub's own fault ends it; the ledger reports the ones still open at `check()` as
`unfinished_stream` problems. The watch costs nothing per event: an unfaulted stream is sent in
chunks of whole events, and only its last chunk is split.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .._exchange import CHUNK_BYTES, Answer, OpenStream, Request, tail_at
from .._steps import Disconnect, Step
from ..errors import ScriptError
from ..recorded import RecordedRequest
from ..script import Turn, queue_label
from ..side import SideScript
from ..wires.base import AnswerChecks, Frame, OneChunk, Rendered, Wire, loud_error, unknown_endpoint
from .cursor import Refusal, Turnless
from .faults import plan_fault
from .record import Arrival
from .report import failed

__all__ = ["CHUNK_BYTES", "Report", "impossible", "refusal", "render"]

Report = Callable[[RecordedRequest, Refusal], None]
"""Where a problem found while rendering or streaming goes: the ledger's `report`."""


def render(
    arrival: Arrival,
    request: Request,
    side: SideScript,
    report: Report,
    streams: dict[int, OpenStream],
    checks: AnswerChecks | None = None,
) -> Answer:
    """The answer to a decided request. Never raises: a failure is reported and answered loudly.

    Args:
        arrival: The request, its wire and its decision.
        request: The request as it came in (event by event or in chunks, the client's read timeout).
        side: The stub's side script, for a turnless wire.
        report: Where a problem found on the way goes (the ledger's `report`), before its answer is rendered.
        streams: The stub's open streamed answers, by request index: a streamed answer is added to them.
        checks: What a turn is held to against its request (the answer rules the stub skips, its opt-in
            checks); None: only the server tools it runs (strict mode off).

    """
    record, wire, decision = arrival.record, arrival.wire, arrival.decision
    if isinstance(decision, Turn) and wire is not None:
        try:
            answer = _turn(wire, record, decision, request, report, streams, checks)
        except Exception as exc:  # a wirescript or wire bug must be loud, never a retried "Connection error."
            streams.pop(record.index, None)
            answer = failed("rendering the answer", exc)
        if isinstance(answer, Answer):
            return answer
        report(record, answer)
    elif isinstance(decision, Turnless) and wire is not None:
        answer = _turnless(wire, record, side)
        if isinstance(answer, Answer):
            return answer
        report(record, answer)
    else:
        assert isinstance(decision, Refusal)
        answer = decision
    return refusal(arrival.answerer, record, answer)


def refusal(answerer: Wire | None, record: RecordedRequest, refused: Refusal) -> Answer:
    """The loud answer to a request not answered as scripted (its problem reported): a non-retryable error.

    In the answering wire's own envelope (404 for an endpoint it does not serve; the provider's own
    error for a strict rule), or, when no wire can answer, an envelope every SDK reads.
    """
    message = f"wirescript: {record.problem}"
    if answerer is None:
        return _whole(unknown_endpoint(message))
    try:
        if refused.violation is not None:
            rendered = answerer.strict_error(refused.violation, refused.explained, record)
        else:
            status = 404 if refused.kind == "unknown_endpoint" else 400
            rendered = answerer.unscripted(message, record, status=status)
        return _whole(rendered)
    except Exception as exc:  # the wire cannot even say it: the envelope every SDK reads, saying both
        note = f" (and the {answerer.name} wire failed answering it in its own envelope: {type(exc).__name__}: {exc})"
        return _whole(loud_error(400, "invalid_request_error", message + note, "wirescript_unscripted"))


def _whole(rendered: Rendered) -> Answer:
    return Answer(rendered.status, _raw_headers(rendered.headers), (), rendered.body)


def _raw_headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    """As bytes: a scripted header may be any Latin-1 text (HTTP's own); beyond it, `UnicodeEncodeError`."""
    raw = []
    for name, value in headers.items():  # a loop, not a comprehension: no function call per answer (3.11)
        raw.append((name.encode("latin-1"), value.encode("latin-1")))
    return raw


def _turn(
    wire: Wire,
    record: RecordedRequest,
    turn: Turn,
    request: Request,
    report: Report,
    streams: dict[int, OpenStream],
    checks: AnswerChecks | None,
) -> Answer | Refusal:
    """A scripted turn as its wire renders it, its fault planned; or why it cannot be sent as scripted.

    A turn is first held against the request it answers (`Wire.answer_problem`): its server tools always,
    and, in strict mode, the wire's answer rules, for a turn that may break one (it calls a tool, or its
    request carries one of the wire's `answer_fields`); an `unchecked` turn is held to nothing. An answer the real API
    could not give is an `impossible_answer`, not rendered. A plain text answer pays a few attribute reads.
    """
    fault = turn.fault
    if turn.unchecked or turn.error is not None or (fault is not None and fault.raw is not None):
        checks = None  # an error, or bytes of its own: no answer of the model's to hold against the request
    elif checks is not None and turn.tool is None and not turn.tools:
        body = record.body
        fields = wire.answer_fields
        if not fields or not isinstance(body, dict) or fields.isdisjoint(body):
            checks = None
    if not turn.unchecked and (checks is not None or turn.server_tools is not None or turn.citations is not None):
        violation = wire.answer_problem(turn, record, checks)
        if violation is not None:
            return impossible(record, violation.message)
    per_event = request.per_event
    # Unfaulted and read in chunks: nothing looks at events one by one, so the wire may join them.
    joined = fault is None and not per_event
    if turn.error is not None:
        rendered = wire.error(turn.error, record)
    else:
        malformed = fault is not None and fault.malformed_tool_json
        rendered = wire.render(turn, record, malformed_tool_json=malformed, joined=joined)
    try:
        headers = _raw_headers(rendered.headers)
    except UnicodeEncodeError as exc:  # no HTTP library can carry it
        return failed("building the response", exc)
    frames = rendered.frames
    if fault is None:
        if frames is None:
            return Answer(rendered.status, headers, (), rendered.body)
        if joined:
            return _joined(rendered.status, headers, frames, wire.closing, record, report, streams)
        watch = OpenStream(record, streams)
        return Answer(rendered.status, headers, (), _guarded(_each(frames, wire.closing, watch), record, report))
    listed = list(frames) if frames is not None else None
    if turn.error is not None:
        why_json = "an 'error' turn answers with one JSON body"
    else:
        why_json = "the request did not ask for a stream, so the answer is one JSON body"
    planned = plan_fault(
        fault,
        listed,
        rendered.body,
        wire=wire,
        why_json=why_json,
        error_frame=wire.stream_error(fault.stream_error, record) if fault.stream_error is not None else None,
        read_timeout=request.read_timeout,
        end=OpenStream(record, streams).end if listed is not None else None,
    )
    if isinstance(planned, str):
        streams.pop(record.index, None)
        return Refusal("fault", planned)
    return Answer(rendered.status, headers, planned.before, _guarded(planned.body, record, report))


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


def _joined(
    status: int,
    headers: list[tuple[bytes, bytes]],
    frames: Iterable[Frame],
    closing: frozenset[str],
    record: RecordedRequest,
    report: Report,
    streams: dict[int, OpenStream],
) -> Answer:
    """An unfaulted stream read in chunks: whole frames, joined into chunks of about `CHUNK_BYTES`.

    Without a fault nothing depends on when each event arrives, and every chunk costs the client's
    stack and SSE decoder a pass of their own, so frames travel together, as they do over a network
    that delivers them faster than the client reads. Rendering stays lazy: a chunk is rendered when
    it is read (the first two here, to send a one-chunk answer whole, costing the client no stream
    machinery), and no frame is ever split but for the stream's tail (`_exchange.OpenStream`). The
    chunks are those of `_batched`: a one-chunk answer is joined here, without its generator.
    """
    watch = OpenStream(record, streams)
    if frames.__class__ is OneChunk:  # rendered at once, as one chunk: nothing to join
        body = frames.body
        watch.cut = tail_at(body, frames.content_end)
        return Answer(status, headers, (), body, watch)
    batch: list[bytes] = []
    size = 0
    tail = 0  # the bytes of the closing frames at the batch's end
    frames = iter(frames)
    for frame in frames:
        data = frame.data
        if frame.name in closing:
            tail += len(data)
        elif size >= CHUNK_BYTES:  # more than one chunk: the rest as it is read
            first = b"".join(batch)
            chunks = _batched(itertools.chain((frame,), frames), closing, watch)
            second = next(chunks)
            return Answer(status, headers, (), _guarded(_tailed(first, second, chunks, watch), record, report))
        else:
            tail = 0
        batch.append(data)
        size += len(data)
    # One chunk (most answers): sent whole, its tail apart (`_exchange.whole`).
    chunk = b"".join(batch)
    watch.cut = tail_at(chunk, len(chunk) - tail)
    return Answer(status, headers, (), chunk, watch)


def _batched(frames: Iterable[Frame], closing: frozenset[str], watch: OpenStream) -> Iterator[bytes]:
    """The chunks, each cut only before a frame with content: the last holds the last such frame.

    The last one's tail is marked on `watch` (`OpenStream.cut`) as it is made.
    """
    batch: list[Frame] = []
    size = 0
    for frame in frames:
        if size >= CHUNK_BYTES and frame.name not in closing:
            yield b"".join([f.data for f in batch])
            batch = []
            size = 0
        batch.append(frame)
        size += len(frame.data)
    chunk = b"".join([f.data for f in batch])
    coda = 0
    for frame in reversed(batch):
        if frame.name not in closing:
            break
        coda += len(frame.data)
    watch.cut = tail_at(chunk, len(chunk) - coda)
    yield chunk


def _tailed(first: bytes, second: bytes, rest: Iterator[bytes], watch: OpenStream) -> Iterator[bytes]:
    """The chunks as they are read, the tail of the last one in a chunk of its own: taking it ends the watch."""
    watch.sent = len(first)
    yield first
    chunk = second
    for following in rest:
        watch.sent += len(chunk)
        yield chunk
        chunk = following
    cut = watch.cut
    watch.sent += cut
    yield chunk[:cut]
    watch.end()
    watch.sent += len(chunk) - cut
    yield chunk[cut:]


def _each(frames: Iterable[Frame], closing: frozenset[str], watch: OpenStream) -> Iterator[bytes]:
    """One event per chunk (the loopback server flushes each), the stream's tail in a chunk of its own."""
    last: bytes | None = None  # the last frame with content so far, held until the next shows it is not the last
    coda: list[bytes] = []  # the closing frames after it
    for frame in frames:
        if frame.name in closing:
            coda.append(frame.data)
            continue
        if last is not None:
            watch.sent += len(last)
            yield last
            for data in coda:  # closing frames in mid-stream: sent as they came
                watch.sent += len(data)
                yield data
            coda = []
        last = frame.data
    last = last or b""
    cut = tail_at(last, len(last))
    watch.sent += cut
    yield last[:cut]
    watch.end()
    watch.sent += len(last) - cut
    yield last[cut:]
    yield from coda


def _guarded(body: Iterator[Step], record: RecordedRequest, report: Report) -> Iterator[Step]:
    """`body`, a failure while its steps are rendered reported and sent as a dropped connection."""
    try:
        yield from body
    except Exception as exc:
        report(record, failed("streaming the answer", exc))
        yield Disconnect(f"wirescript: {record.problem}")


def _turnless(wire: Wire, record: RecordedRequest, side: SideScript) -> Answer | Refusal:
    """The answer of a turnless wire (a side endpoint, a route), or why it has none.

    A side script that cannot answer (`LookupError`) is `unscripted`, a route handler's failure
    (`ScriptError`) a `script_error`, a request the wire cannot serve (`ValueError`) `unreadable`,
    anything else a wirescript bug (`render_error`).
    """
    try:
        rendered = wire.respond(record, side)
        frames = rendered.frames
        body: Any = rendered.body if frames is None else b"".join(frame.data for frame in frames)
    except ScriptError as exc:
        return Refusal("script_error", str(exc))
    except LookupError as exc:
        return Refusal("unscripted", str(exc.args[0]) if exc.args else "the side script cannot answer it")
    except ValueError as exc:
        return Refusal("unreadable", f"the {wire.name} wire cannot serve it: {exc}")
    except Exception as exc:
        return failed("answering a side endpoint", exc)
    try:
        return Answer(rendered.status, _raw_headers(rendered.headers), (), body)
    except UnicodeEncodeError as exc:
        return failed("building the response", exc)
