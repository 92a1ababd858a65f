"""The script cursor: which turn answers a request. Pure: records in, turns or refusals out.

A script is normalised once (queues of validated turns, or a function) and checked against the
stub's wires (stop reasons they know, events faults may drop). `Cursor.take` runs under the stub's
lock, in arrival order, and either serves the next turn of the request's queue, refuses the request
(`Refusal`), or says which user function to ask (`Ask`); `Cursor.ask` calls that function outside
the lock. Nothing here knows HTTP.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

from .._text import did_you_mean, ordinal
from ..errors import ScriptError
from ..recorded import ProblemKind, RecordedRequest
from ..script import DEFAULT_QUEUE, ScriptLike, Turn, TurnLike, parse_turn, parse_turns, queue_label
from ..side import SIDE_KEY, JobPace, SideScript, parse_side
from ..wires.base import Violation, Wire, known_stop_reasons
from .faults import check_script_faults

__all__ = ["TURNLESS", "Ask", "Cursor", "Decision", "PendingTurn", "Refusal", "Turnless", "check_turns"]

ScriptFunction = Callable[[RecordedRequest], TurnLike | None]

_STOP_EXAMPLES = (
    "'end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'refusal', 'stop', 'length', "
    "'tool_calls', 'content_filter', 'STOP', 'MAX_TOKENS', 'SAFETY'"
)


_NO_SIDE = SideScript.model_construct(
    set(), count_tokens=None, embeddings={}, models=[], jobs=JobPace.model_construct(set(), polls=2, after=60.0)
)
"""The side script of a stub given none: frozen and only read, so every such stub shares it. Its defaults,
unvalidated and each given (a default left to pydantic costs an `inspect.signature` of its factory), so that
a test that scripts no side answers never builds the side script's validators; equal to `SideScript()`."""


class PendingTurn(NamedTuple):
    """A scripted turn that no request has consumed yet."""

    queue: str
    """The queue: a model name, or `"*"` for the default queue."""
    position: int
    """The turn's position in its queue."""
    turn: Turn
    """The turn."""


class Refusal(NamedTuple):
    """Why a request gets no scripted turn: a problem's kind and reason, and how they join its head."""

    kind: ProblemKind
    reason: str
    lead: str = ": "
    violation: Violation | None = None
    """For a `strict` refusal: the rule the request breaks, answered with the provider's own error."""
    explained: str = ""
    """For a `strict` refusal: the message of that error (the real API's wording, the rule id, how to skip it)."""


class Turnless:
    """The decision for a request a turnless wire answers (a side endpoint, a route): no turn is consumed."""

    __slots__ = ()


TURNLESS = Turnless()


class Ask(NamedTuple):
    """Ask a user function for the turn (outside the stub's lock)."""

    function: ScriptFunction
    what: str
    """`script function` or `fallback`, for messages."""
    exhausted: Refusal | None = None
    """For the fallback: why the script could not answer, reported if the fallback cannot either."""


Decision = Turn | Refusal | Turnless
"""What answers a request: a scripted turn, a turnless wire's answer, or why it gets neither."""


def check_turns(turns: Iterable[tuple[str, Turn]], wires: Sequence[Wire], known: frozenset[str] | None = None) -> None:
    """Refuse, at construction, what no wire of the stub can send: unknown stop reasons, impossible faults.

    `known` is `known_stop_reasons(wires)`, when the caller has it already.

    Raises:
        ScriptError: Naming the turn (`where`) and the field.

    """
    known = known_stop_reasons(wires) if known is None else known
    labelled = list(turns)
    for where, turn in labelled:
        check_stop_reason(turn, where, known)
    check_script_faults(labelled, wires)


def check_stop_reason(turn: Turn, where: str, known: frozenset[str]) -> None:
    """Refuse a stop reason none of the wires knows, with the closest known one."""
    value = turn.stop_reason
    if value is not None and value not in known:
        raise ScriptError(
            f"invalid {where}: field 'stop_reason': unknown stop reason {value!r}{did_you_mean(value, known)} "
            f"(expected a provider's documented value, e.g. {_STOP_EXAMPLES})"
        )


class Cursor:
    """The script's queues and how far each has been served, or the script function; the fallback."""

    __slots__ = ("_cursor", "_known", "_queues", "_side", "fallback", "function")

    def __init__(
        self,
        script: ScriptLike,
        fallback: ScriptFunction | None,
        wires: Sequence[Wire],
        *,
        known: frozenset[str] | None = None,
    ) -> None:
        """`known`: the wires' `known_stop_reasons`, when worked out already."""
        if fallback is not None and not callable(fallback):
            raise ScriptError(f"fallback: expected a function (RecordedRequest) -> turn, got {type(fallback).__name__}")
        for what, candidate in (("script", script), ("fallback", fallback)):
            if callable(candidate) and inspect.iscoroutinefunction(candidate):
                raise ScriptError(
                    f"{what}: {getattr(candidate, '__name__', 'the function')} is async, but script functions must "
                    "be plain functions (they answer sync and async clients alike); make it a plain def"
                )
        self.fallback = fallback
        self.function: ScriptFunction | None = None
        self._queues: dict[str, list[Turn]] = {}
        self._side: SideScript | None = None
        if callable(script) and not isinstance(script, (Sequence, Mapping)):
            self.function = script
        elif isinstance(script, Mapping):
            for key, turns in script.items():
                if not isinstance(key, str):
                    raise ScriptError(f"script: queue keys are model names (str), got {type(key).__name__} {key!r}")
                if key == SIDE_KEY:
                    self._side = parse_side(turns, f"script[{SIDE_KEY!r}]")
                    continue
                self._queues[key] = parse_turns(turns, f"script[{key!r}]")
        else:
            self._queues[DEFAULT_QUEUE] = parse_turns(script, "script")
        self._known = known = known_stop_reasons(wires) if known is None else known
        # Only a stop reason or a fault can be beyond the wires: the other turns are not even labelled.
        flagged = [
            (f"{queue_label(queue)}[{i}]", turn)
            for queue, turns in self._queues.items()
            for i, turn in enumerate(turns)
            if turn.stop_reason is not None or turn.fault is not None
        ]
        if flagged:
            check_turns(flagged, wires, known)
        self._cursor = dict.fromkeys(self._queues, 0)

    def side_script(self, given: SideScript | None) -> SideScript:
        """The side script the stub serves: `given` or the script's `"$side"` entry, listing the queues' models first.

        Raises:
            ScriptError: Both were given.

        """
        if given is not None and self._side is not None:
            raise ScriptError(f"side: given twice, as side= and as the script's {SIDE_KEY!r} entry; keep one")
        named = [queue for queue in self._queues if queue != DEFAULT_QUEUE]
        if given is None and self._side is None and not named:
            return _NO_SIDE
        side = given or self._side or _NO_SIDE
        return side.model_copy(update={"models": list(dict.fromkeys([*named, *side.models]))})

    def pending(self, limit: int | None = None) -> list[PendingTurn]:
        """The turns no request has consumed yet, queue by queue (at most `limit` of them)."""
        found: list[PendingTurn] = []
        for queue, turns in self._queues.items():
            for position in range(self._cursor[queue], len(turns)):
                if limit is not None and len(found) >= limit:
                    return found
                found.append(PendingTurn(queue, position, turns[position]))
        return found

    def turn(self, queue: str, position: int) -> Turn | None:
        """The turn at `position` of `queue`, or None."""
        turns = self._queues.get(queue)
        return turns[position] if turns is not None and 0 <= position < len(turns) else None

    def pending_count(self) -> int:
        """How many turns no request has consumed yet."""
        return sum(len(turns) - self._cursor[queue] for queue, turns in self._queues.items())

    def take(self, record: RecordedRequest) -> Turn | Ask | Refusal:
        """The answer to `record`: its queue's next turn, a function to ask, or a refusal. Under the lock."""
        if self.function is not None:
            return Ask(self.function, "script function")
        queue = record.model if record.model in self._queues else DEFAULT_QUEUE
        turns = self._queues.get(queue)
        if turns is not None and (position := self._cursor[queue]) < len(turns):
            self._cursor[queue] = position + 1
            fields = record.__dict__  # as pydantic's `__setattr__` sets them (a record's fields set names them all)
            fields["turn_index"] = position
            fields["queue"] = queue
            fields["answered_by"] = "script"
            return turns[position]
        if turns is None:
            known = ", ".join(repr(q) for q in self._queues)
            refusal = Refusal(
                "unscripted",
                f"no queue for model {record.model!r} and no default queue '*' (queues: {known}). "
                "Add a queue for this model or a '*' queue.",
            )
        else:
            where = "the script" if queue == DEFAULT_QUEUE else f"the queue for model {queue!r}"
            refusal = Refusal(
                "unscripted",
                f"is past the end of {where}: it has {len(turns)} turn(s), all served. The app made a model "
                "call the script does not expect; add a turn for it or find the extra call. "
                f"It is the {ordinal(record.index + 1)} request (requests[{record.index}]).",
                lead=f" (model {record.model!r}) ",
            )
        if self.fallback is not None:
            return Ask(self.fallback, "fallback", refusal)
        return refusal

    def ask(self, ask: Ask, record: RecordedRequest) -> Turn | Refusal:
        """Call the user function for `record` (outside the lock); a failure is a refusal, never raised."""
        try:
            answer = ask.function(record)
        except Exception as exc:  # the user's function failed: answer loudly, keep serving
            return Refusal("script_error", f"the {ask.what} raised {type(exc).__name__}: {exc}")
        if answer is None:
            if ask.exhausted is not None:
                exhausted = ask.exhausted
                return Refusal(
                    "unscripted", f"{exhausted.reason} The {ask.what} returned None for it too.", exhausted.lead
                )
            return Refusal("unscripted", f"the {ask.what} returned None (unscripted request).")
        where = f"{ask.what}'s answer to requests[{record.index}]"
        try:
            turn = parse_turn(answer, where)
            check_stop_reason(turn, where, self._known)
        except ScriptError as exc:
            return Refusal("script_error", str(exc))
        record.answered_by = "fallback" if ask.exhausted is not None else "function"
        return turn
