"""What `ScriptTransport.check()` and the pytest fixture print: problems and unused turns, listed."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Sequence
from typing import get_args

from .._text import did_you_mean, ordinal
from ..errors import UsageError
from ..recorded import ProblemKind, RecordedRequest
from ..script import queue_label
from ..strict import DOCS_PAGE, explain
from ..wires.base import Violation
from .cursor import PendingTurn, Refusal

__all__ = [
    "LISTED",
    "abandoned",
    "allowed_kinds",
    "check_message",
    "failed",
    "held_too_long",
    "not_returned",
    "refused_strictly",
    "retried",
    "short_of",
    "unfinished",
]

KINDS: tuple[str, ...] = get_args(ProblemKind)

LISTED = 50
"""The most items a listing shows; the rest are counted."""


def check_message(
    records: Sequence[RecordedRequest],
    held: Sequence[RecordedRequest],
    pending: Sequence[PendingTurn],
    total: int,
    *,
    problems: bool,
    unused_turns: bool,
    unused_side: Sequence[tuple[str, Sequence[str]]] = (),
) -> str | None:
    """What `check()` raises: each problem, each held request, each unused turn and turnless answer (those asked for).

    `unused_side`: per wire with entries the app never took (side answers never requested, jobs never
    collected), what they are called with what is said of them, and one line each.
    """
    if not records and not held and not total and not unused_side:  # a passing test's: nothing to say
        return None
    lines = unanswered_lines(records) if problems else []
    if problems and held:
        lines.append(f"wirescript: {len(held)} request(s) are still held, waiting for release():")
        lines.extend(f"  - {record.summary()}" for record in held[:LISTED])
    if unused_turns:
        lines.extend(unused_lines(pending, total))
    for label, unused in unused_side if unused_turns else ():
        lines.append(f"wirescript: {len(unused)} {label}:")
        lines.extend(f"  - {line}" for line in unused[:LISTED])
        if len(unused) > LISTED:
            lines.append(f"  … and {len(unused) - LISTED} more")
    return "\n".join(lines) if lines else None


def short_of(n: int, arrived: int, timeout: float, *, sync: bool) -> str:
    """Why `wait_for_requests` gave up; a sync wait inside a running event loop is pointed at the async twin."""
    message = (
        f"wirescript: waited {timeout} s for {n} request(s), {arrived} arrived. "
        "Is the app still running, or did it send fewer requests than the test expects?"
    )
    with contextlib.suppress(RuntimeError):
        if sync and asyncio.get_running_loop():
            message += (
                " (wait_for_requests() blocks the event loop it is called in, so requests of that loop "
                "cannot arrive: use `await stub.wait_for_requests_async(n)`.)"
            )
    return message


def held_too_long(timeout: float) -> Refusal:
    """A held request that was never released."""
    return Refusal(
        "hold_timeout",
        f"was held for {timeout} s and never released: call stub.release() once the test has seen what it "
        "needs (or raise hold_timeout).",
        lead=" ",
    )


def not_returned(what: str, seconds: float) -> Refusal:
    """A user function (script function, fallback, route handler) still running when the server gave up on it."""
    return Refusal(
        "script_error",
        f"the {what} did not return within {seconds:g} s (the stub's hold_timeout, which bounds it over the "
        "loopback server); the request was answered with this error. Make it return sooner, or raise hold_timeout.",
    )


def abandoned() -> Refusal:
    """A held request whose client gave up waiting."""
    return Refusal(
        "abandoned",
        "was held and its client gave up waiting (cancelled, timed out or disconnected, or the loopback server "
        "stopped) before the answer: "
        "the turn it consumed was never delivered. Release it before the client's deadline, or leave the turn out.",
        lead=" ",
    )


def unfinished(sent: int) -> Refusal:
    """A streamed answer the app never read to its end (found at `check()`); `sent`: the bytes its client took."""
    if sent:
        what = f"the app stopped reading after {sent:,} bytes: the rest of the scripted turn never reached it"
    else:
        what = "the app never read: the scripted turn never reached it"
    return Refusal(
        "unfinished_stream",
        f"was answered with a stream that {what} (a loop that breaks early, a stream=True result dropped unread, "
        "a client gone mid-stream). Read the stream to its end (iterate it to the last event, or use the SDK's "
        'get_final_message() / until_done()), or allow it: check(allow=["unfinished_stream"]), '
        '@pytest.mark.wirescript(allow=["unfinished_stream"]).',
        lead=" ",
    )


def failed(doing: str, exc: Exception) -> Refusal:
    """Wirescript itself failed (a bug): loud, never a retried connection error."""
    return Refusal(
        "render_error",
        f"wirescript failed while {doing} ({type(exc).__name__}: {exc}); this is a bug in wirescript or in a "
        "wire: please report it",
    )


def refused_strictly(violation: Violation) -> Refusal:
    """A request the real API would refuse: the rule, the API's wording, and how to turn the rule off."""
    rule = violation.rule.id
    return Refusal(
        "strict",
        f"was refused as the real API would refuse it (strict rule {rule}): {violation.message} Nothing was "
        f'consumed from the script. Fix the request, or turn the rule off with strict_skip=["{rule}"] '
        f"({DOCS_PAGE}).",
        lead=" ",
        violation=violation,
        explained=explain(violation),
    )


def unanswered_lines(records: Sequence[RecordedRequest]) -> list[str]:
    """Each request that was not answered as scripted: its summary, then the reason."""
    offending = [r for r in records if r.problem is not None]
    if not offending:
        return []
    lines = [f"wirescript: {len(offending)} request(s) were not answered as scripted:"]
    for record in offending[:LISTED]:
        problem = record.problem
        reason = getattr(problem, "reason", problem)
        lines.append(f"  - {record.summary()}")
        lines.append(f"    {reason}")
    if len(offending) > LISTED:
        lines.append(f"  … and {len(offending) - LISTED} more")
    return lines


def unused_lines(pending: Sequence[PendingTurn], total: int) -> list[str]:
    """Each scripted turn never requested (the first `LISTED` of `total`)."""
    if not total:
        return []
    lines = [f"wirescript: {total} scripted turn(s) were never requested:"]
    lines.extend(f"  - {queue_label(p.queue)}[{p.position}]: {p.turn.describe()}" for p in pending[:LISTED])
    if total > LISTED:
        lines.append(f"  … and {total - LISTED} more")
    return lines


_NONE: frozenset[str] = frozenset()


def allowed_kinds(allow: Iterable[str]) -> frozenset[str]:
    """The problem kinds `check(allow=...)` leaves out, checked: a typo must not hide nothing silently."""
    if allow.__class__ is tuple and not allow:  # the default: none
        return _NONE
    if isinstance(allow, str):
        allow = [allow]
    kinds = frozenset(allow)
    for kind in kinds:
        if kind not in KINDS:
            hint = did_you_mean(kind, KINDS) if isinstance(kind, str) else ""
            raise UsageError(f"allow: {kind!r} is not a problem kind{hint} (kinds: {', '.join(KINDS)})")
    return kinds


def retried(record: RecordedRequest, earlier: Iterable[RecordedRequest], header: str | None = None) -> str:
    """Why a retry was not answered: the SDK retried on its own, and the two ways to script that.

    `header`: the retry-count header the request carried its attempt in (`Wire.retry_count_header`),
    or None when the stub derived the attempt from what it answered.
    """
    attempt = record.retry_count or 0
    first = None
    for candidate in earlier:
        if candidate.index < record.index and not candidate.retry_count and candidate.path == record.path:
            first = candidate
    of = f" of requests[{first.index}]" if first is not None else ""
    said = f"header {header}: {attempt}" if header is not None else "as the stub counts them"
    return (
        f" It is not an extra call of the app: it is the SDK's retry {attempt} ({ordinal(attempt + 1)} attempt"
        f"{of}, {said}). The client retries 429, 5xx and connection errors on its own (max_retries, 2 by "
        "default in many SDKs). Build the client with max_retries=0, or script one turn per attempt "
        "(ErrorCase.turns() does)."
    )
