"""The ledger: a stub's state under one lock, and the order of arrival. Sans-IO: no HTTP library.

It numbers each request, records it, decides its turn with the cursor (or a turnless answer, or a
refusal), keeps every problem and the hold gate, and renders the answer through `_answer`, turning
any failure on the way into a problem instead of an exception. It never reads a body nor builds a
response: `ScriptTransport` does that, and only that, around it.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from ._answer import Answer, answer, refuse, refuse_strictly, respond
from ._cursor import Ask, Cursor, PendingTurn, Refusal
from ._record import Attempts, Vocabulary, read_request
from ._report import (
    LISTED,
    abandoned,
    allowed_kinds,
    check_message,
    failed,
    held_too_long,
    not_returned,
    refused_strictly,
    retried,
    short_of,
)
from ._signal import Signal, seconds
from ._steps import Disconnect, Step
from .errors import ScriptError, UncheckedStubWarning, WaitTimeoutError
from .recorded import OVERFLOW_KINDS, Problem, RecordedRequest
from .script import ScriptLike, Turn, TurnLike, queue_label
from .side import SideScript, parse_side
from .strict import StrictRules, skip_ids
from .wires import Addresses, RouteWire, TurnlessWire, Wire, stub_wires
from .wires.mcp import MCPScript, MCPWire
from .wires.routes import RouteHandler

__all__ = ["TURNLESS", "Arrival", "Gate", "Ledger", "Turnless", "Watch", "unchecked", "watch"]


class Turnless:
    """The decision for a request a turnless wire answers: no turn is consumed."""

    __slots__ = ()


TURNLESS = Turnless()


class Gate:
    """One hold period: `release()` opens it, freeing exactly the requests that arrived during it."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open = False


class Arrival(NamedTuple):
    """A request as the ledger decided it: its record, who answers it and how, and the gate it waits at."""

    record: RecordedRequest
    wire: Wire | None
    """The wire that answers it: the serving wire, or for a refusal the wire whose envelope it is sent in."""
    decision: Turn | Refusal | Turnless | Ask
    """An `Ask` only from `arrive(request, ask=False)`: `ask(arrival)` decides it."""
    gate: Gate | None
    """The hold period it arrived in, or None: not held."""
    answerer: Wire | None = None
    """For an `Ask`: the wire whose envelope a refusal is sent in."""
    attempt: tuple[str, str] | None = None
    """For an `Ask`: the key `Attempts.answered` is told the decision under."""


class Watch:
    """Who is told of the stubs of a stretch of time: the pytest plugin, for a test that uses its fixture.

    While it is the watch (`watch(w)`), `adopt(stub, None)` is called with each stub built (while
    `births` is on), and `adopt(stub, index)` with each other stub at its first request in the
    stretch (`index`: that request's), outside the stub's lock. A ledger compares one reference per
    request to tell: nothing else is done while no watch changes.
    """

    __slots__ = ("adopt", "births")

    def __init__(self, adopt: Callable[[Any, int | None], None]) -> None:
        self.adopt = adopt
        self.births = True
        """Whether a stub built now is the stretch's own (off while a fixture of wider scope is set up)."""


_watch: Watch | None = None


def watch(new: Watch | None) -> Watch | None:
    """Make `new` the watch (None: none); return the one it replaces."""
    global _watch
    old, _watch = _watch, new
    return old


class Ledger:
    """The records, the problems and the hold gate of one stub, behind one lock."""

    __slots__ = (
        "_attempts",
        "_count",
        "_cursor",
        "_held",
        "_owner",
        "_problems",
        "_records",
        "_seen",
        "_side",
        "_strict_rules",
        "_troubled",
        "_vocabulary",
        "_wires",
        "checked",
        "claimed",
        "gate",
        "lock",
        "signal",
        "strict",
        "strict_skip",
    )

    def __init__(
        self,
        cursor: Cursor,
        wires: Sequence[Wire],
        side: SideScript,
        *,
        strict: bool,
        strict_skip: frozenset[str],
        max_records: int | None,
        rules: StrictRules | None = None,
        addressed: Sequence[Wire] = (),
        first: int = 0,
    ) -> None:
        self._cursor = cursor
        self._wires = (*wires, *addressed)
        self._side = side
        self.strict = strict
        self.strict_skip = strict_skip
        self._strict_rules = rules if rules is not None else StrictRules(self._wires)
        self._vocabulary = Vocabulary(wires, addresses=Addresses(addressed), first=first)
        self._attempts = Attempts()
        self._records: collections.deque[RecordedRequest] = collections.deque(maxlen=max_records)
        self._count = 0
        self._troubled: dict[int, RecordedRequest] = {}
        """The requests with a problem, by index: kept when `max_records` drops them from `_records`."""
        self._problems: list[Problem] = []
        self._held: dict[int, RecordedRequest] = {}
        self.lock = threading.Lock()
        self.signal = Signal(self.lock)
        self.gate: Gate | None = None
        self._owner: weakref.ref[Any] | None = None
        self._seen: Watch | None = None  # the watch this stub was last told to (`Watch`)
        self.checked = False
        """Whether `check()` ran on this stub."""
        self.claimed = False
        """Whether a watcher took charge of this stub (the pytest plugin checks it, or warns when nothing did)."""

    @classmethod
    def built(
        cls,
        script: ScriptLike,
        fallback: Callable[[RecordedRequest], TurnLike | None] | None,
        wires: Sequence[Wire] | None,
        side: SideScript | Mapping[str, Any] | None,
        routes: Mapping[str, RouteHandler] | None,
        max_records: int | None,
        strict: bool,
        strict_skip: Iterable[str],
        mcp: MCPScript | None = None,
        dialect: object = None,
    ) -> Ledger:
        """The ledger of `ScriptTransport(...)`'s arguments, each checked (`ScriptError`/`UsageError` naming it)."""
        if not isinstance(strict, bool):
            raise ScriptError(f"strict: expected True or False, got {type(strict).__name__} {strict!r}")
        if max_records is not None and (
            isinstance(max_records, bool) or not isinstance(max_records, int) or max_records < 1
        ):
            raise ScriptError(f"max_records: expected a positive int or None, got {max_records!r}")
        route_wire = RouteWire(routes)
        walked, addressed = stub_wires(wires, dialect)
        wired = [route_wire, *walked] if route_wire.routes else walked
        if mcp is not None:  # without one, no request pays for an MCP wire in the matching loop
            if not isinstance(mcp, MCPScript):
                raise ScriptError(f"mcp: expected a wirescript.MCPScript, got {type(mcp).__name__}")
            wired.insert(1 if route_wire.routes else 0, MCPWire(mcp))
        every = [*wired, *addressed]
        rules = StrictRules(every)
        skipped = skip_ids(strict_skip, rules=rules.rules)
        cursor = Cursor(script, fallback, every)
        side_script = cursor.side_script(parse_side(side) if side is not None else None)
        first = (1 if route_wire.routes else 0) + (mcp is not None) + len(wires or ())  # walked before the addresses
        return cls(
            cursor,
            wired,
            side_script,
            strict=strict,
            strict_skip=skipped,
            max_records=max_records,
            rules=rules,
            addressed=addressed,
            first=first,
        )

    @property
    def wires(self) -> tuple[Wire, ...]:
        """The stub's wires, in matching order."""
        return self._wires

    def own(self, owner: Any) -> None:
        """Called once by the shell holding this ledger: the watch is told; never checked, it warns when collected."""
        self._owner = weakref.ref(owner)
        current = _watch
        if current is not None and current.births:
            self._seen = current
            self._tell(current, None)
        if not self.claimed:  # nothing took charge of it: it warns when collected (or at exit), if nothing checked it
            _UNWATCHED[weakref.ref(owner, _collected)] = self

    def turn(self, queue: str | None, position: int | None) -> Turn | None:
        """The scripted turn at `position` of `queue` (as a record names it), or None."""
        if queue is None or position is None:
            return None
        return self._cursor.turn(queue, position)

    def _tell(self, current: Watch, index: int | None) -> None:
        owner = self._owner() if self._owner is not None else None
        if owner is None:
            return
        with contextlib.suppress(Exception):  # a watcher's bug must not reach the app's request
            current.adopt(owner, index)

    # ------------------------------------------------------------------ snapshots

    @property
    def count(self) -> int:
        """How many requests arrived (read without the lock: an int is read whole)."""
        return self._count

    def records(self) -> list[RecordedRequest]:
        """The records kept, in arrival order."""
        with self.lock:
            return list(self._records)

    def problems(self) -> list[Problem]:
        """Every problem so far, in the order they were found."""
        with self.lock:
            return list(self._problems)

    def overflow(self) -> int:
        """How many requests got no scripted turn."""
        with self.lock:
            return sum(1 for p in self._problems if p.kind in OVERFLOW_KINDS)

    def pending_count(self) -> int:
        """How many scripted turns are not consumed yet."""
        with self.lock:
            return self._cursor.pending_count()

    def pending(self) -> list[PendingTurn]:
        """The scripted turns not consumed yet."""
        with self.lock:
            return self._cursor.pending()

    def check(self, *, problems: bool, unused_turns: bool, allow: Iterable[str]) -> str | None:
        """What `ScriptTransport.check()` raises: every problem, held request and unused turn; None: nothing."""
        allowed = allowed_kinds(allow)
        self.checked = True
        with self.lock:
            records = sorted(self._troubled.values(), key=lambda r: r.index)
            held = [] if "hold_timeout" in allowed else list(self._held.values())
            pending, total = self._cursor.pending(LISTED), self._cursor.pending_count()
        records = [r for r in records if getattr(r.problem, "kind", None) not in allowed]
        side = [
            (w.unused_label, lines)
            for w in self._wires
            if isinstance(w, TurnlessWire) and (lines := w.unused(self._side))
        ]
        return check_message(
            records, held, pending, total, problems=problems, unused_turns=unused_turns, unused_side=side
        )

    # ------------------------------------------------------------------ the hold gate

    def hold(self) -> None:
        """Open a hold period, unless one is open."""
        with self.lock:
            if self.gate is None:
                self.gate = Gate()

    def release(self) -> None:
        """End the hold period: every request that arrived in it may be answered."""
        with self.lock:
            gate, self.gate = self.gate, None
            if gate is not None:
                gate.open = True
                self.signal.notify_all()

    def unhold(self, arrival: Arrival) -> None:
        """`arrival` is no longer waiting at its gate."""
        if arrival.gate is not None:
            with self.lock:
                self._held.pop(arrival.record.index, None)

    def admit(self, arrival: Arrival, hold_timeout: float) -> Arrival:
        """Wait while `arrival` is held (a thread's wait); past `hold_timeout` its answer is the refusal."""
        gate = arrival.gate
        if gate is not None and not self.signal.wait(lambda: gate.open, hold_timeout):
            arrival = arrival._replace(decision=self.problem(arrival.record, held_too_long(hold_timeout)))
        self.unhold(arrival)
        return arrival

    async def admit_async(self, arrival: Arrival, hold_timeout: float) -> Arrival:
        """`admit` without blocking the event loop; a request cancelled while held is an `abandoned` problem."""
        gate = arrival.gate
        try:
            if gate is not None and not await self.signal.wait_async(lambda: gate.open, hold_timeout):
                arrival = arrival._replace(decision=self.problem(arrival.record, held_too_long(hold_timeout)))
        except BaseException:  # cancelled while held: the turn it took is never delivered
            self.problem(arrival.record, abandoned())
            raise
        finally:
            self.unhold(arrival)
        return arrival

    def wait_for(self, n: int, timeout: float) -> list[RecordedRequest]:
        """The records once at least `n` requests arrived (`WaitTimeoutError` past `timeout` seconds)."""
        if not self.signal.wait(lambda: self._count >= n, seconds(timeout, "timeout", zero=True)):
            raise WaitTimeoutError(short_of(n, self._count, timeout, sync=True))
        return self.records()

    async def wait_for_async(self, n: int, timeout: float) -> list[RecordedRequest]:
        """`wait_for` without blocking the event loop (asyncio or trio)."""
        if not await self.signal.wait_async(lambda: self._count >= n, seconds(timeout, "timeout", zero=True)):
            raise WaitTimeoutError(short_of(n, self._count, timeout, sync=False))
        return self.records()

    # ------------------------------------------------------------------ serving

    def arrive(self, request: Any, *, ask: bool = True) -> Arrival:
        """Record the request and decide its turn, atomically, in arrival order.

        A script function or fallback is called outside the lock, here; with `ask=False` the
        arrival's decision is then the `Ask`, for the caller to run with `ask(arrival)` where a
        blocking function harms nothing (the loopback server's worker thread), or to give up on
        with `late(arrival, seconds)`.
        """
        reading = read_request(request, self._vocabulary)
        record, wire, refusal = reading.record, reading.wire, reading.refusal
        if refusal is None and wire is not None and self.strict:
            refusal = self._checked(wire, record)
        decision: Turn | Ask | Refusal | Turnless
        with self.lock:
            record.index = self._count
            self._count += 1
            attempt = self._attempts.arrive(request, record)
            if wire is not None:
                wire.resolve(record)
            if refusal is not None:
                decision = refusal
            else:  # a turnless wire (side endpoint, route) consumes no turn
                decision = TURNLESS if wire is not None and wire.turnless else self._cursor.take(record)
            if isinstance(decision, Refusal):
                self._add_problem(record, decision)
            self._records.append(record)
            gate = self.gate
            if gate is not None:
                self._held[record.index] = record
            if self.signal.waiting:
                self.signal.notify_all()
            noticed = None
            if self._seen is not _watch:  # the stub's first request since the watch changed (a new test)
                noticed = self._seen = _watch
        if noticed is not None:
            self._tell(noticed, record.index)
        if isinstance(decision, Ask):  # the script function runs outside the lock
            if not ask:
                return Arrival(record, wire, decision, gate, reading.answerer, attempt)
            decision = self._asked(record, decision)
        if attempt is not None:  # the retry can only come once this answer is sent
            with self.lock:
                self._attempts.answered(attempt, record, decision, wire)
        return Arrival(record, reading.answerer if isinstance(decision, Refusal) else wire, decision, gate)

    def ask(self, arrival: Arrival) -> Arrival:
        """Call the user function an `arrive(request, ask=False)` left to ask; never raises.

        After `late(arrival, ...)` gave up on it, what the function returns is dropped.
        """
        assert isinstance(arrival.decision, Ask)
        record = arrival.record
        decision = self._asked(record, arrival.decision)
        if arrival.attempt is not None:
            with self.lock:
                self._attempts.answered(arrival.attempt, record, decision, arrival.wire)
        wire = arrival.answerer if isinstance(decision, Refusal) else arrival.wire
        return arrival._replace(wire=wire, decision=decision)

    def late(self, arrival: Arrival, seconds: float) -> Arrival:
        """Give up on a user function still running after `seconds`: a `script_error` problem, answered loudly."""
        what = arrival.decision.what if isinstance(arrival.decision, Ask) else "route handler"
        refusal = self.problem(arrival.record, not_returned(what, seconds))
        return arrival._replace(wire=arrival.answerer or arrival.wire, decision=refusal)

    def _asked(self, record: RecordedRequest, ask: Ask) -> Turn | Refusal:
        decision = self._cursor.ask(ask, record)
        if isinstance(decision, Refusal) and record.problem is None:  # not given up on by `late` meanwhile
            self.problem(record, decision)
        return decision

    def answer(self, arrival: Arrival, *, per_event: bool, read_timeout: float | None) -> Answer:
        """The response: the turn as its wire renders it, a turnless wire's answer, or the refusal. Never raises."""
        record, wire, decision = arrival.record, arrival.wire, arrival.decision
        if isinstance(decision, Turnless) and wire is not None:
            side = respond(wire, record, self._side)
            if isinstance(side, Answer):
                return self._guarded(record, side)
            decision = self.problem(record, side)
        if isinstance(decision, Turn) and wire is not None:
            try:
                reply = answer(wire, record, decision, per_event=per_event, read_timeout=read_timeout)
            except Exception as exc:  # a wirescript bug must be loud, never a retried "Connection error."
                decision = self.problem(record, failed("rendering the answer", exc))
            else:
                if isinstance(reply, Answer):
                    return self._guarded(record, reply)
                decision = self.problem(record, reply)
        assert isinstance(decision, Refusal)
        return self.refusal(record, wire, decision)

    def refusal(self, record: RecordedRequest, wire: Wire | None, refusal: Refusal) -> Answer:
        """The loud answer to a request the stub refused: the wire's own error (the strict one for a rule)."""
        if refusal.violation is not None and wire is not None:
            return refuse_strictly(wire, record, refusal.violation)
        return refuse(wire, record, f"wirescript: {record.problem}", not_found=refusal.kind == "unknown_endpoint")

    def unbuildable(self, arrival: Arrival, exc: Exception) -> Answer:
        """The loud answer to a request whose response could not be built (a problem of its own)."""
        refusal = self.problem(arrival.record, failed("building the response", exc))
        return self.refusal(arrival.record, arrival.wire, refusal)

    def problem(self, record: RecordedRequest, refusal: Refusal) -> Refusal:
        """Record why `record` was not answered as scripted; return the refusal."""
        with self.lock:
            self._add_problem(record, refusal)
        return refusal

    def _add_problem(self, record: RecordedRequest, refusal: Refusal) -> None:
        reason = refusal.reason
        if refusal.kind == "unscripted" and record.retry_count:
            header = next((name for name in self._vocabulary.retry_headers if name in record.headers), None)
            reason += retried(record, self._records, header)
        problem = Problem(record.index, record.method, record.path, refusal.kind, reason, lead=refusal.lead)
        record.problem = problem
        self._troubled[record.index] = record
        self._problems.append(problem)

    def _checked(self, wire: Wire, record: RecordedRequest) -> Refusal | None:
        """The strict refusal of a parsed request, or None; outside the lock (a wire guards its own state)."""
        try:
            violation = self._strict_rules.check(wire, record, self.strict_skip)
        except Exception as exc:  # a rule's or a wire's bug must be loud, never a retried "Connection error."
            return failed("checking the request against the strict rules", exc)
        return refused_strictly(violation) if violation is not None else None

    def _guarded(self, record: RecordedRequest, reply: Answer) -> Answer:
        """`reply`, a failure while its steps are rendered recorded and sent as a dropped connection."""
        body = reply.body
        return reply if isinstance(body, bytes) else reply._replace(body=self._guarded_steps(record, body))

    def _guarded_steps(self, record: RecordedRequest, body: Iterator[Step]) -> Iterator[Step]:
        try:
            yield from body
        except Exception as exc:
            self.problem(record, failed("streaming the answer", exc))
            yield Disconnect(f"wirescript: {record.problem}")


def unchecked(ledger: Ledger) -> str | None:
    """The warning for a stub nothing checked, when turns of its script were never requested; else None."""
    if ledger.checked:
        return None
    with ledger.lock:
        pending, total = ledger._cursor.pending(3), ledger._cursor.pending_count()
    if not total:
        return None
    listed = "; ".join(f"{queue_label(p.queue)}[{p.position}]: {p.turn.describe()}" for p in pending)
    more = f" and {total - len(pending)} more" if total > len(pending) else ""
    return (
        f"wirescript: nothing checked a ScriptTransport whose {total} scripted turn(s) were never requested "
        f"({listed}{more}; {ledger.count} request(s) reached it). Call stub.check() when the app is done, or build "
        "the stub in a test that uses the wirescript fixture."
    )


_UNWATCHED: dict[weakref.ref[Any], Ledger] = {}
"""The ledger of each living stub no watch took charge of, by a weak reference to the stub (cheaper than
`weakref.finalize`, and without a cycle: the ledger does not hold that reference)."""


def _collected(owner: weakref.ref[Any]) -> None:
    """A stub no watch took charge of was collected: warn when nothing checked it and turns were left."""
    ledger = _UNWATCHED.pop(owner, None)
    message = None if ledger is None or ledger.claimed else unchecked(ledger)
    if message is not None:
        warnings.warn(message, UncheckedStubWarning, stacklevel=2)


@atexit.register
def _at_exit() -> None:
    """The stubs still alive when the interpreter exits (at module level, say) are looked at as if collected."""
    for owner in list(_UNWATCHED):
        _collected(owner)
