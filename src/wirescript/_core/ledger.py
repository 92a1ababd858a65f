"""The ledger: a stub's state under one lock, and the order of arrival. Sans-IO: no HTTP library.

It admits each request (reads it into its record through `_record`, checks it against the strict
rules, numbers it and decides its turn with the cursor, in arrival order), keeps every problem and
the hold gate, and renders the answer through `_answer`. Each of those modules is entered once per
request, in that order; a failure on the way is a problem with a loud answer, never an exception.
It never touches an HTTP library: the adapters (`_http`, `_botocore`) turn their requests into the
neutral `Request` and the `Answer` into their responses, and `ScriptTransport` drives the line.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import functools
import operator
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._clock import Clock
from .._exchange import Answer, OpenStream, Request
from ..errors import ScriptError, UncheckedStubWarning, WaitTimeoutError
from ..recorded import OVERFLOW_KINDS, Problem, RecordedRequest
from ..script import ScriptLike, Turn, TurnLike, queue_label
from ..side import SideScript, parse_side
from ..strict import StrictRules, skip_ids
from ..wires import Addresses, Wire, later_wires, stub_wires
from ..wires._declared import STAND_INS as _LATER
from ..wires._later import LaterWires, built, made_so_far
from ..wires.base import AnswerChecks, Answered, Draw, Item, known_stop_reasons
from .answer import render
from .cursor import _NO_SIDE, TURNLESS, Ask, Cursor, Decision, PendingTurn, Refusal
from .record import Arrival, Attempts, Declared, Vocabulary, declared_vocabulary, may_be_retried, read, read_item
from .report import (
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
    unfinished,
)
from .signal import Gate, Signal, seconds

if TYPE_CHECKING:
    from ..wires.mcp import MCPScript
    from ..wires.routes import RouteHandler, RouteWire
    from .bill import Bill, Billing

__all__ = ["Ledger", "Watch", "unchecked", "watch"]

_BILLING = threading.Lock()
"""Taken to make a stub's usage machinery when it is first asked for (`Ledger.billing`)."""


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
        "_answers",
        "_asked_turns",
        "_attempts",
        "_billing",
        "_count",
        "_cursor",
        "_deriving",
        "_held",
        "_keep",
        "_owner",
        "_problems",
        "_records",
        "_resolving",
        "_seen",
        "_settling",
        "_side",
        "_streams",
        "_strict_rules",
        "_telling",
        "_troubled",
        "_vocabulary",
        "_wires",
        "check_tool_input",
        "checked",
        "claimed",
        "clock",
        "gate",
        "lock",
        "signal",
        "strict",
        "strict_skip",
    )

    def __init__(
        self,
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
        clock: Clock | None = None,
        usage: object = None,
        prices: object = None,
        check_tool_input: bool = False,
    ) -> None:
        """The ledger of `ScriptTransport(...)`'s arguments, each checked (`ScriptError`/`UsageError` naming it)."""
        if not isinstance(strict, bool):
            raise ScriptError(f"strict: expected True or False, got {type(strict).__name__} {strict!r}")
        if not isinstance(check_tool_input, bool):
            raise ScriptError(
                f"check_tool_input: expected True or False, got {type(check_tool_input).__name__} {check_tool_input!r}"
            )
        if max_records is not None and (
            isinstance(max_records, bool) or not isinstance(max_records, int) or max_records < 1
        ):
            raise ScriptError(f"max_records: expected a positive int or None, got {max_records!r}")
        if clock is not None and not isinstance(clock, Clock):
            raise ScriptError(f"clock: expected a wirescript.Clock, got {type(clock).__name__}")
        self.clock = clock if clock is not None else Clock()
        self._billing: Billing | None = None
        """The usage machinery, made here when the stub is given `usage` or `prices`, else when first asked
        for (a batch item, `stub.bill`): a stub that derives nothing neither imports nor builds it."""
        if usage is not None or prices is not None:
            from .bill import Billing

            self._billing = Billing(usage, prices, keep=max_records)
        self._deriving = self._billing is not None and self._billing.derive
        """Whether every turn's usage is derived (`usage="derive"`; a turn's `usage.derive` overrides it)."""
        self._asked_turns: dict[int, Turn] = {}
        """The turns a script function or the fallback answered with, by request index (for the bill)."""
        route_wire: RouteWire | None = None
        if routes is not None:  # without them, no stub loads the routes' module
            from ..wires.routes import RouteWire

            route_wire = RouteWire(routes)
        walked, addressed = stub_wires(wires, dialect)
        routed = route_wire is not None and bool(route_wire.routes)
        wired = [route_wire, *walked] if route_wire is not None and routed else walked
        if mcp is not None:  # without one, no request pays for an MCP wire in the matching loop (nor its import)
            from ..wires.mcp import MCPScript, MCPWire

            if not isinstance(mcp, MCPScript):
                raise ScriptError(f"mcp: expected a wirescript.MCPScript, got {type(mcp).__name__}")
            wired = [*wired]
            wired.insert(1 if routed else 0, MCPWire(mcp))
        defaults = not wires and dialect is None and not routed and mcp is None  # wires whose matching is pure
        every: Sequence[Wire]
        if defaults and isinstance(wired, LaterWires) and isinstance(addressed, LaterWires):
            # The default wires' runs, each stand-in made when first asked for: every table keeps these runs.
            every = wired.joined(addressed) or (*wired, *addressed)
        else:  # tuples throughout: every table over them keeps these (no copies)
            wired, addressed = tuple(wired), tuple(addressed)
            every = (*wired, *addressed)
        # The default wires' stand-ins have the same classes in every stub: their tables are worked out once.
        if defaults:
            kinds, known, declared, declaring = _standing()
        else:
            kinds, known, declared, declaring = None, None, None, None
        self._strict_rules = StrictRules(every, kinds=kinds)
        self.strict = strict
        if isinstance(strict_skip, tuple) and not strict_skip:  # the default: nothing to look up
            self.strict_skip: frozenset[str] = _NO_SKIP
        else:
            rules = {**self._strict_rules.rules, **self._strict_rules.answer_rules}
            self.strict_skip = skip_ids(strict_skip, rules=rules)
        self.check_tool_input = check_tool_input
        self._answers = (
            (
                _CHECKS
                if check_tool_input is False and self.strict_skip is _NO_SKIP
                else AnswerChecks(self.strict_skip, check_tool_input)
            )
            if strict
            else None
        )
        """What a scripted turn is held to against its request (None: strict mode off, server tools only)."""
        self._cursor = Cursor(script, fallback, every, known=known)
        self._side = self._cursor.side_script(parse_side(side) if side is not None else None)
        self._wires = every
        if declaring is None:
            declaring = _declaring(tuple(map(type, every)))
        self._settling, self._telling, self._resolving = declaring
        """The classes of the wires whose turnless requests move jobs on (`Wire.settle`), the positions of those
        that may have something unused to list (`Wire.unused`; the others list nothing), and the classes of those
        that fill in a record from state they keep (`Wire.resolve`; the others are not asked): shared by every
        stub of the same wire classes, a stand-in's class standing with its wire's."""
        if self._billing is not None and usage is not None and usage != "derive":
            from ..wires._caching import Counting  # a counter of the user's: the wires that count use it too

            for wire in every:
                if isinstance(wire, Counting):  # a stand-in of one is one too, and keeps it when built
                    wire.counter = self._billing.counter
        first = int(routed) + (mcp is not None) + len(wires or ())  # walked before the addresses
        self._vocabulary = Vocabulary(
            wired,
            addresses=Addresses(addressed),
            first=first,
            defaults=defaults,
            declared=declared,
            every=every,
        )
        self._attempts = Attempts()
        self._records: list[RecordedRequest] | collections.deque[RecordedRequest] = (
            [] if max_records is None else collections.deque(maxlen=max_records)
        )
        """The records kept: all of them in a list, or the last `max_records` in a deque (which costs more to make)."""
        self._keep = max_records
        self._count = 0
        self._troubled: dict[int, RecordedRequest] = {}
        """The requests with a problem, by index: kept when `max_records` drops them from `_records`."""
        self._problems: list[Problem] | None = None  # None until the first problem (`_add_problem`)
        self._held: dict[int, RecordedRequest] = {}
        self._streams: dict[int, OpenStream] = {}
        """The streamed answers not read to their end yet, by request index (`unfinished_stream` at `check()`)."""
        self.lock = threading.Lock()
        self.signal = Signal(self.lock)
        self.gate: Gate | None = None
        self._owner: weakref.ref[Any] | None = None
        self._seen: Watch | None = None  # the watch this stub was last told to (`Watch`)
        self.checked = False
        """Whether `check()` ran on this stub."""
        self.claimed = False
        """Whether a watcher took charge of this stub (the pytest plugin checks it, or warns when nothing did)."""

    @property
    def wires(self) -> tuple[Wire, ...]:
        """The stub's wires, in matching order (each built, if no request reached it yet)."""
        return built(self._wires)

    def own(self, owner: Any) -> None:
        """Called once by the shell holding this ledger: the watch is told; never checked, it warns when collected."""
        current = _watch
        if current is not None and current.births:
            self._owner = weakref.ref(owner)
            self._seen = current
            self._tell(current, None)
        if not self.claimed:  # nothing took charge of it: it warns when collected (or at exit), if nothing checked it
            # The reference that tells of its collection is the one the ledger holds too (no second one is made).
            ref = weakref.ref(owner, _collected)
            if self._owner is None:
                self._owner = ref
            _UNWATCHED[ref] = self

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
            return list(self._problems or ())

    def overflow(self) -> int:
        """How many requests got no scripted turn."""
        with self.lock:
            return sum(1 for p in self._problems or () if p.kind in OVERFLOW_KINDS)

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
        records: Sequence[RecordedRequest] = ()
        held: Sequence[RecordedRequest] = ()
        pending: Sequence[PendingTurn] = ()
        with self.lock:
            for index in list(self._streams) if self._streams else ():
                watch = self._streams.pop(index, None)
                if watch is not None:  # still open: never read to its end
                    self._add_problem(watch.record, unfinished(watch.sent))
            if self._troubled:
                records = sorted(self._troubled.values(), key=_INDEX)
            if self._held and "hold_timeout" not in allowed:
                held = list(self._held.values())
            total = self._cursor.pending_count()
            if total:
                pending = self._cursor.pending(LISTED)
        if records and allowed:
            records = [r for r in records if getattr(r.problem, "kind", None) not in allowed]
        # A wire no request reached is a fresh one: with no side script, it has nothing unused (a test checks).
        given = self._side
        fresh = _LATER if given is _NO_SIDE else ()
        # Without a side script, a stand-in not made yet is as fresh as one that is: not made to be asked.
        wires = made_so_far(self._wires) if fresh else self._wires
        side: list[tuple[str, Sequence[str]]] | None = None
        for at in self._telling:
            wire = wires[at]
            if wire is not None and wire.__class__ not in fresh and (lines := wire.unused(given)):
                side = side or []
                side.append((f"{wire.unused_label} {wire.unused_said}", lines))
        if not records and not held and not total and side is None:  # a passing test's: nothing to say
            return None
        return check_message(
            records, held, pending, total, problems=problems, unused_turns=unused_turns, unused_side=side or ()
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

    def wait(self, arrival: Arrival, hold_timeout: float) -> None:
        """Wait while `arrival` is held (a thread's wait); past `hold_timeout` its answer is the refusal."""
        gate = arrival.gate
        if gate is not None and not self.signal.wait(lambda: gate.open, hold_timeout):
            arrival.decision = self._refused(arrival.record, held_too_long(hold_timeout))
        self._unhold(arrival)

    async def wait_async(self, arrival: Arrival, hold_timeout: float) -> None:
        """`wait` without blocking the event loop; a request cancelled while held is an `abandoned` problem."""
        gate = arrival.gate
        try:
            if gate is not None and not await self.signal.wait_async(lambda: gate.open, hold_timeout):
                arrival.decision = self._refused(arrival.record, held_too_long(hold_timeout))
        except BaseException:  # cancelled while held: the turn it took is never delivered
            self.report(arrival.record, abandoned())
            raise
        finally:
            self._unhold(arrival)

    def _unhold(self, arrival: Arrival) -> None:
        if arrival.gate is not None:
            with self.lock:
                self._held.pop(arrival.record.index, None)

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

    def admit(self, request: Request, *, ask: bool = True) -> Arrival:
        """Read the request into its record, check it, and decide its answer: atomically, in arrival order.

        A script function or fallback is called outside the lock, here; with `ask=False` the
        arrival's decision is then the `Ask`, for the caller to run with `ask(arrival)` where a
        blocking function harms nothing (the loopback server's worker thread), or to give up on
        with `late(arrival, seconds)`.
        """
        arrival = read(request, self._vocabulary)
        record, wire = arrival.record, arrival.wire
        if wire is not None and self.strict and arrival.decision is None:
            arrival.decision = self._checked(wire, record)
        decision: Decision | Ask | None
        with self.lock:
            fields = record.__dict__  # set as pydantic's `__setattr__` sets them, without its two calls per field
            fields["index"] = self._count
            clock = self.clock
            if clock.__class__ is Clock and clock._source is None:  # `Clock.now()`, without its call
                fields["received_at"] = time.time() + clock._offset  # looked up now: freezegun moves `time.time`
            else:
                fields["received_at"] = clock.now()
            self._count += 1
            # a record that carries its attempt number needs no inference (nearly every SDK's)
            attempt = self._attempts.arrive(request, record) if record.__dict__["retry_count"] is None else None
            decision = arrival.decision
            if wire is not None and wire.__class__ in self._resolving:  # a wire that keeps no state is not asked
                try:
                    wire.resolve(record)
                except Exception as exc:  # a wire's bug must be loud, never a retried "Connection error."
                    decision = decision or failed(f"asking the {wire.name} wire to resolve the request", exc)
            settles = False
            if decision is None and wire is not None:  # a turnless wire (side endpoint, route) consumes no turn
                try:
                    turnless = wire.turnless or (wire.partly_turnless and wire.turnless_request(record))
                except Exception as exc:
                    decision = failed(f"asking the {wire.name} wire whether the request takes a turn", exc)
                else:
                    decision = TURNLESS if turnless else self._cursor.take(record)
                    settles = turnless and wire.__class__ in self._settling
            if isinstance(decision, Refusal):
                self._add_problem(record, decision)
            self._records.append(record)
            if settles:  # its jobs move on, and may take turns for the requests inside it: numbered after it
                assert wire is not None
                decision = self._settle(arrival, wire, request.host)
            arrival.gate = gate = self.gate
            if gate is not None:
                self._held[record.index] = record
            if self.signal.waiting:
                self.signal.notify_all()
            noticed = None
            if self._seen is not _watch:  # the stub's first request since the watch changed (a new test)
                noticed = self._seen = _watch
        if noticed is not None:
            self._tell(noticed, record.index)
        arrival.attempt = attempt
        arrival.decision = decision
        if arrival.draw is not None and ask:  # the turns it drew: asked and rendered outside the lock
            self.finish(arrival)
        if isinstance(decision, Ask):  # the script function runs outside the lock
            if not ask:
                return arrival
            arrival.decision = self._asked(record, decision)
        if attempt is not None:
            self._answered(arrival)
        return arrival

    def _settle(self, arrival: Arrival, wire: Wire, host: str) -> Decision:
        """`wire.settle` for a turnless request, under the lock: the turns it draws are taken now, in order."""
        draw = Drawing(self, arrival.record, host)
        try:
            wire.settle(arrival.record, draw)
        except Exception as exc:  # a wire's bug must be loud, never a retried "Connection error."
            refusal = failed(f"asking the {wire.name} wire to settle its jobs", exc)
            self._add_problem(arrival.record, refusal)
            draw.close()
            return refusal
        if draw.taken:
            arrival.draw = draw
        else:
            draw.close()
        return TURNLESS

    def finish(self, arrival: Arrival) -> Arrival:
        """Answer the turns a turnless request drew (`Wire.settle`): a script function asked, each answer rendered.

        Outside the lock; never raises. Each answer is its wire's rendering of its turn, of its
        turnless answer, or of its refusal, as a request that does not stream would get it.
        """
        draw = arrival.draw
        if draw is None:
            return arrival
        try:
            for answered, wire, decision in draw.taken:
                if isinstance(decision, Ask):
                    decision = self._asked(answered.record, decision)
                self._fill(answered, wire, decision, draw.host)
        finally:
            draw.close()
        return arrival

    def _fill(self, answered: Answered, wire: Wire | None, decision: Decision, host: str) -> None:
        record = answered.record
        item = Arrival(record, wire, wire, None)
        item.decision = decision
        self._derived(item)  # a batch item's usage is derived as any request's is
        answered.turn = item.decision if isinstance(item.decision, Turn) else None
        request = Request("POST", host, record.path, b"", (), b"")
        # No stream of an item is watched; its turn is held to the answer rules as any request's is.
        answer = render(item, request, self._side, self.report, {}, self._answers)
        answered.status = answer.status
        answered.headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in answer.headers}
        body = answer.body
        answered.body = body if isinstance(body, bytes) else b"".join(s for s in body if isinstance(s, bytes))

    def item(
        self, parent: RecordedRequest, item: Item, batch: str, host: str
    ) -> tuple[RecordedRequest, Wire | None, Refusal | None]:
        """A batch's item as a request of its own: read by the stub's wire for its path, checked, numbered (locked).

        The wire that serves it (None: none does), and why it gets no answer of that wire, if so.
        """
        record, wire, refusal = read_item(parent, item, batch, host, self._vocabulary)
        if refusal is None and wire is not None and self.strict:
            refusal = self._checked(wire, record)
        record.index = self._count
        self._count += 1
        if wire is not None and refusal is None:
            try:
                wire.resolve(record)
            except Exception as exc:
                refusal = failed(f"asking the {wire.name} wire to resolve a batch's item", exc)
        if refusal is not None:
            self._add_problem(record, refusal)
        self._records.append(record)
        if self.signal.waiting:
            self.signal.notify_all()
        return record, wire, refusal

    def ask(self, arrival: Arrival) -> Arrival:
        """Call the user function an `admit(request, ask=False)` left to ask; never raises.

        After `late(arrival, ...)` gave up on it, what the function returns is dropped.
        """
        asking = arrival.decision
        assert isinstance(asking, Ask)
        decision = self._asked(arrival.record, asking)
        with self.lock:
            given_up = arrival.decision is not asking
            if not given_up:
                arrival.decision = decision
        if not given_up:
            self._answered(arrival)
        return arrival

    def late(self, arrival: Arrival, seconds: float) -> Arrival:
        """Give up on a user function still running after `seconds`: a `script_error` problem, answered loudly."""
        asking = arrival.decision
        what = "script function" if arrival.draw is not None else "route handler"
        refusal = not_returned(asking.what if isinstance(asking, Ask) else what, seconds)
        with self.lock:
            arrival.decision = refusal
            self._add_problem(arrival.record, refusal)
        return arrival

    def _asked(self, record: RecordedRequest, ask: Ask) -> Turn | Refusal:
        decision = self._cursor.ask(ask, record)
        if isinstance(decision, Refusal) and record.problem is None:  # not given up on by `late` meanwhile
            self.report(record, decision)
        elif isinstance(decision, Turn):  # the bill reads it back (a queue's turns are kept by the cursor)
            kept, keep = self._asked_turns, self._keep
            if keep is None:
                kept[record.index] = decision
            else:
                with self.lock:  # no more than the records kept
                    kept[record.index] = decision
                    if len(kept) > keep:
                        del kept[next(iter(kept))]
        return decision

    def _answered(self, arrival: Arrival) -> None:
        """Tell the retry inference the decision: the retry can only come once this answer is sent."""
        if arrival.attempt is None or not may_be_retried(arrival.decision):  # never remembered: no lock
            return
        try:
            with self.lock:
                self._attempts.answered(arrival.attempt, arrival.record, arrival.decision, arrival.wire)
        except Exception as exc:  # a wire's `retryable` failing
            arrival.decision = self._refused(
                arrival.record, failed("asking the wire whether its answer is retried", exc)
            )

    def render(self, arrival: Arrival, request: Request) -> Answer:
        """The answer: the turn as its wire renders it, a turnless wire's answer, or the refusal. Never raises.

        A turn whose usage is derived (`usage="derive"`, or its own `usage.derive`) gets it here, from
        its wire's rules, as its answer begins.
        """
        decision = arrival.decision
        if decision.__class__ is Turn and (decision.usage is not None or self._deriving):  # as `_derived`
            self._derived(arrival)
        return render(arrival, request, self._side, self.report, self._streams, self._answers)

    def _derived(self, arrival: Arrival) -> None:
        """Give the arrival's turn its derived usage, when its usage is derived (`usage="derive"`)."""
        decision = arrival.decision
        if decision.__class__ is Turn and arrival.wire is not None:
            usage = decision.usage
            if (self._deriving if usage is None or usage.derive is None else usage.derive) and (decision.error is None):
                self._derive(arrival)

    def _derive(self, arrival: Arrival) -> None:
        """Derive the arrival's usage (a failure of a wire's rules is a loud problem, never an exception)."""
        assert isinstance(arrival.decision, Turn)
        assert arrival.wire is not None
        try:
            arrival.decision = self.billing.derived_turn(arrival.wire, arrival.record, arrival.decision, self._count)
        except Exception as exc:  # a wire's caching rules failing: loud, never a retried "Connection error."
            arrival.decision = self._refused(arrival.record, failed(f"deriving the {arrival.wire.name} usage", exc))

    @property
    def billing(self) -> Billing:
        """The stub's usage machinery (derivation, the cache store, prices, batch items), made when first needed."""
        billing = self._billing
        if billing is None:
            from .bill import Billing

            with _BILLING:  # not the stub's lock: a batch asks for it under that one
                billing = self._billing
                if billing is None:
                    billing = self._billing = Billing(keep=self._keep)
        return billing

    def bill(self) -> Bill:
        """The bill of the requests kept: a row per request answered with a message."""
        from .bill import Bill

        billing = self.billing
        with self.lock:
            records = list(self._records)
        # A record's wire served it, so it is made: the places never made are not made to be asked.
        wires = {wire.name: wire for wire in made_so_far(self._wires) if wire is not None}
        rows = []
        for record in records:
            if record.answered_by is None or (record.problem is not None and _unbilled(record.problem)):
                continue
            wire = wires.get(record.provider or "")
            if wire is None:
                continue
            turn = (
                self._asked_turns.get(record.index)
                if record.answered_by != "script"
                else self.turn(record.queue, record.turn_index)
            )
            row = billing.row(wire, record, turn)
            if row is not None:
                rows.append(row)
        return Bill(tuple(rows))

    def report(self, record: RecordedRequest, refusal: Refusal) -> None:
        """Record why `record` was not answered as scripted (its answer says so: nothing streams on)."""
        with self.lock:
            self._add_problem(record, refusal)
            self._streams.pop(record.index, None)

    def _refused(self, record: RecordedRequest, refusal: Refusal) -> Refusal:
        self.report(record, refusal)
        return refusal

    def _add_problem(self, record: RecordedRequest, refusal: Refusal) -> None:
        reason = refusal.reason
        if refusal.kind == "unscripted" and record.retry_count:
            header = next((name for name in self._vocabulary.retry_headers if name in record.headers), None)
            reason += retried(record, self._records, header)
        problem = Problem(record.index, record.method, record.path, refusal.kind, reason, lead=refusal.lead)
        record.problem = problem
        self._troubled[record.index] = record
        if self._problems is None:
            self._problems = [problem]
        else:
            self._problems.append(problem)

    def _checked(self, wire: Wire, record: RecordedRequest) -> Refusal | None:
        """The strict refusal of a parsed request, or None; outside the lock (a wire guards its own state)."""
        try:
            violation = self._strict_rules.check(wire, record, self.strict_skip)
        except Exception as exc:  # a rule's or a wire's bug must be loud, never a retried "Connection error."
            return failed("checking the request against the strict rules", exc)
        return refused_strictly(violation) if violation is not None else None


_INDEX = operator.attrgetter("index")


_NO_SKIP: frozenset[str] = frozenset()
"""The `strict_skip` of a stub given none (every stub shares it)."""

_CHECKS = AnswerChecks(_NO_SKIP, False)
"""The `AnswerChecks` of a strict stub that skips no rule and checks no tool input: the same for every such stub."""

Declaring = tuple[frozenset[type[Wire]], tuple[int, ...], frozenset[type[Wire]]]
"""`_declaring`'s answer: the settling classes, the telling positions, the resolving classes."""


@functools.cache
def _standing() -> tuple[tuple[type[Wire], ...], frozenset[str], Declared, Declaring]:
    """What a stub of the default wires' stand-ins works out over their classes, once per process (`later_wires`).

    The classes of its wires in order (the key of every table over them), the stop reasons a turn
    may script (`known_stop_reasons`), its `Vocabulary`'s declared tables and its wires' `_declaring`.
    Each comes from the same function a stub of other wires calls, on a stub's stand-ins: they hold
    only what their classes declare, and `later_wires` makes the same classes every time.
    """
    walked, addressed = later_wires()
    every = [*walked, *addressed]
    kinds = tuple(map(type, every))
    return kinds, known_stop_reasons(every), declared_vocabulary(walked, addressed), _declaring(kinds)


@functools.lru_cache(maxsize=64)  # every stub of the default wires has the same classes: worked out once
def _declaring(kinds: tuple[type[Wire], ...]) -> Declaring:
    """The classes that override `Wire.settle`, the positions of those overriding `Wire.unused`, those of `resolve`.

    A class is asked, not a position: a stub's wire is found among its own, and a stand-in's class
    stands with the class of the wire it becomes (whose overrides it forwards), so both are in a set
    when either is.
    """
    settling = frozenset(_as_built(kind for kind in kinds if kind.settle is not Wire.settle))
    telling = tuple(at for at, kind in enumerate(kinds) if kind.unused is not Wire.unused)
    return settling, telling, frozenset(_as_built(kind for kind in kinds if kind.resolve is not Wire.resolve))


def _as_built(kinds: Iterable[type[Wire]]) -> Iterator[type[Wire]]:
    """Each class, and for a stand-in's class the class of the wire it becomes too."""
    for kind in kinds:
        yield kind
        if kind in _LATER:
            yield kind._later_kind


class Drawing(Draw):
    """The `Draw` a settling wire takes turns with: the ledger's cursor, under its lock, for one request."""

    __slots__ = ("_done", "_ledger", "_parent", "host", "now", "side", "taken")

    def __init__(self, ledger: Ledger, parent: RecordedRequest, host: str) -> None:
        self._ledger = ledger
        self._parent = parent
        self.host = host
        self.now = parent.received_at
        self.side = ledger._side
        self.taken: list[tuple[Answered, Wire | None, Decision | Ask]] = []
        """Each answer drawn, the wire that renders it and its decision (a turn, turnless, an `Ask`, a refusal)."""
        self._done = threading.Event()

    def items(self, items: Sequence[Item], *, batch: str) -> list[Answered]:
        """Each item recorded, checked and given its queue's next turn, in order (under the lock)."""
        ledger = self._ledger
        answers = []
        for item in items:
            record, wire, refusal = ledger.item(self._parent, item, batch, self.host)
            ledger.billing.mark_batch(record.index)  # billed at the batch rate
            decision: Decision | Ask
            if refusal is not None:
                decision = refusal
            elif wire is None or wire.turnless:
                decision = TURNLESS
            else:
                decision = ledger._cursor.take(record)
                if isinstance(decision, Refusal):
                    ledger._add_problem(record, decision)
            answered = Answered(record, done=self._done)
            self.taken.append((answered, wire, decision))
            answers.append(answered)
        return answers

    def run(self, record: RecordedRequest, wire: Wire) -> Answered:
        """The next turn of `record`'s queue for a job admitted earlier without one (under the lock)."""
        decision = self._ledger._cursor.take(record)
        if isinstance(decision, Refusal):
            self._ledger._add_problem(record, decision)
        answered = Answered(record, done=self._done)
        self.taken.append((answered, wire, decision))
        return answered

    def close(self) -> None:
        """Every answer drawn is filled (or never will be): the wires reading them stop waiting."""
        self._done.set()


def _unbilled(problem: str) -> bool:
    """Whether a request with this problem got no message: all but a stream the app did not read to its end."""
    return getattr(problem, "kind", None) != "unfinished_stream"


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
