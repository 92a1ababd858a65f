"""`ScriptBuilder`: write a script as a chain of verbs, in the spirit of a fake model provider.

```
stub = (
    ScriptBuilder()
    .calls("get_weather", {"city": "Paris"})
    .says("Sunny in Paris.")
    .usage(input_tokens=120, output_tokens=8)
    .build()
)
```

Each verb appends one turn to the current queue (the default queue until `for_model()` picks
another) and validates it at once, so a mistake fails at the line that made it. Once a queue is
drained, requests to it overflow loudly, unless `echoes_user()` or `echoes_tool_result()` was
asked for that queue: those answer from the request itself, never by guessing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Self, TypeAlias

from ._core.bill import PriceTable, UsageMode
from ._core.cursor import check_turns
from .errors import ScriptError
from .recorded import RecordedRequest
from .script import DEFAULT_QUEUE, ToolCall, Turn, parse_turn, queue_label
from .transport import ScriptTransport
from .wires import Wire, default_wires

__all__ = ["ScriptBuilder", "ToolCallLike", "tool_result_text"]

ToolCallLike: TypeAlias = ToolCall | Mapping[str, Any] | tuple[str, Mapping[str, Any]]
"""A tool call: a `ToolCall`, a dict of the same shape, or a `(name, input)` pair."""

_Drained: TypeAlias = Callable[[RecordedRequest], Turn]


class ScriptBuilder:
    """A chainable script: each verb adds a turn and returns the builder.

    Turns go to the default queue (requests for any model) until `for_model()` selects the queue
    of one model; `for_other_models()` goes back to the default queue. Give the builder to the
    `wirescript` pytest fixture, or call `build()` for a `ScriptTransport`.
    """

    __slots__ = ("_drained", "_queue", "_queues")

    def __init__(self) -> None:
        self._queues: dict[str, list[Turn]] = {DEFAULT_QUEUE: []}
        self._queue = DEFAULT_QUEUE
        self._drained: dict[str, tuple[str, _Drained]] = {}

    # ------------------------------------------------------------------ turns

    def says(self, text: str, *, thinking: str | None = None, stop_reason: str | None = None) -> Self:
        """The model answers with text.

        Args:
            text: The answer's text.
            thinking: Reasoning text sent before the answer.
            stop_reason: The stop reason (default `end_turn`), e.g. `max_tokens` or `refusal`.

        """
        if not isinstance(text, str):
            raise ScriptError(f"{self._where('.says()')}: text must be a str, got {type(text).__name__} {text!r}")
        return self._add(".says()", {"text": text, "thinking": thinking, "stop_reason": stop_reason})

    def calls(
        self,
        name: str,
        input: Mapping[str, Any] | None = None,
        /,
        *,
        id: str | None = None,
        text: str | None = None,
        thinking: str | None = None,
    ) -> Self:
        """The model calls one tool.

        Args:
            name: The tool's name.
            input: The arguments, a JSON object (default: none).
            id: The call id; generated deterministically when absent.
            text: Text the model says before the call.
            thinking: Reasoning text sent before the call.

        """
        call = {"name": name, "input": {} if input is None else input, "id": id}
        return self._add(".calls()", {"tool": call, "text": text, "thinking": thinking})

    def calls_tools(self, *calls: ToolCallLike, text: str | None = None, thinking: str | None = None) -> Self:
        """The model calls several tools in one turn (parallel tool calls).

        Args:
            *calls: Two or more calls, each a `(name, input)` pair, a dict (`{"name": ..., "input": ...}`)
                or a `ToolCall`.
            text: Text the model says before the calls.
            thinking: Reasoning text sent before the calls.

        """
        where = "ScriptBuilder.calls_tools()"
        if len(calls) < 2:
            raise ScriptError(
                f"{where}: expected two or more calls, got {len(calls)}; use .calls(name, input) for a single call"
            )
        tools = [_call(where, i, c) for i, c in enumerate(calls)]
        return self._add(".calls_tools()", {"tools": tools, "text": text, "thinking": thinking})

    def fails(
        self,
        status: int,
        *,
        type: str | None = None,
        message: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Self:
        """The provider answers with an HTTP error instead of a message.

        Args:
            status: The HTTP status, 400-599. The SDKs retry 408, 409, 429 and 5xx, so a retried
                error needs a turn per attempt (or a client with `max_retries=0`).
            type: The provider's error type; defaults to the documented one for the status.
            message: The error message.
            code: An error code (Anthropic `error.details.error_code`, OpenAI `error.code`).
            headers: Extra response headers.

        """
        error = {"status": status, "type": type, "message": message, "code": code, "headers": headers}
        return self._add(".fails()", {"error": {k: v for k, v in error.items() if v is not None}})

    def turn(self, turn: Turn | Mapping[str, Any] | str) -> Self:
        """Add any turn: a `Turn`, a dict of the same shape, or a string (a text turn).

        This reaches what the verbs do not (faults, a catalog error case's `turn`, ...).
        """
        where = self._where(".turn()")
        return self._append(parse_turn(turn, where), where)

    def usage(
        self,
        *,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cache_read_input_tokens: int | None = None,
        cache_creation_input_tokens: int | None = None,
    ) -> Self:
        """Report token usage on the turn added last (to the current queue).

        Counts given by an earlier `usage()` on the same turn are kept; counts never given use
        wirescript's deterministic defaults.

        Raises:
            ScriptError: There is no turn yet in the current queue, or the last one is an error.

        """
        turns = self._queues[self._queue]
        if not turns:
            raise ScriptError(
                f"ScriptBuilder.usage(): {self._queue_name()} has no turn to report usage on; "
                "add one first (.says(), .calls(), ...)"
            )
        where = self._where(".usage()", len(turns) - 1)
        last = turns[-1]
        if last.error is not None:
            label = self._label(len(turns) - 1)
            raise ScriptError(
                f"ScriptBuilder.usage(): the last turn, {label}, is an error ({last.describe()}), "
                "which reports no usage"
            )
        counts = {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": cache_read_input_tokens,
            "cache_creation_input_tokens": cache_creation_input_tokens,
        }
        given = {k: v for k, v in counts.items() if v is not None}
        if not given:
            raise ScriptError(f"ScriptBuilder.usage(): give at least one count ({', '.join(counts)})")
        fields = last.model_dump(exclude_defaults=True)
        fields["usage"] = {**fields.get("usage", {}), **given}
        turns[-1] = _checked(parse_turn(fields, where), where)
        return self

    def unchecked(self) -> Self:
        """Serve the turn added last (to the current queue) even if the real API could not give it to its request.

        For a test of how the app copes with an impossible answer (a tool it never offered, arguments that
        break a strict schema): the turn gets `"unchecked": true`, so the answer rules do not hold it.

        Raises:
            ScriptError: There is no turn yet in the current queue, or the last one is an error.

        """
        turns = self._queues[self._queue]
        if not turns:
            raise ScriptError(
                f"ScriptBuilder.unchecked(): {self._queue_name()} has no turn to mark; add one first (.calls(), ...)"
            )
        where = self._where(".unchecked()", len(turns) - 1)
        last = turns[-1]
        if last.error is not None:
            raise ScriptError(
                f"ScriptBuilder.unchecked(): the last turn, {self._label(len(turns) - 1)}, is an error "
                f"({last.describe()}), which no answer rule holds"
            )
        turns[-1] = _checked(parse_turn({**last.model_dump(exclude_defaults=True), "unchecked": True}, where), where)
        return self

    # ------------------------------------------------------------------ queues

    def for_model(self, model: str) -> Self:
        """Add the following turns to the queue of `model`: requests naming it are served from there.

        Requests naming a model without a queue of its own are served from the default queue.
        """
        if not isinstance(model, str) or not model or model == DEFAULT_QUEUE:
            hint = "; use .for_other_models() for the default queue" if model == DEFAULT_QUEUE else ""
            raise ScriptError(f"ScriptBuilder.for_model(): expected a model name, got {model!r}{hint}")
        self._queues.setdefault(model, [])
        self._queue = model
        return self

    def for_other_models(self) -> Self:
        """Add the following turns to the default queue, which serves every model without a queue."""
        self._queue = DEFAULT_QUEUE
        return self

    # ------------------------------------------------------------------ once drained

    def echoes_user(self) -> Self:
        """Once the current queue is drained, answer each request with its last user message's text.

        A request with no user text to echo is reported as a problem (and fails the test).
        """
        return self._when_drained("echoes_user()", _echo_user)

    def echoes_tool_result(self, *, prefix: str = "") -> Self:
        """Once the current queue is drained, answer with `prefix` + the text of the request's last tool result.

        The request's tool results are its newest message's (`RecordedRequest.tool_results`), read in
        every provider's shape (see `tool_result_text`). A request whose newest message carries no tool
        result is reported as a problem (and fails the test).
        """
        if not isinstance(prefix, str):
            raise ScriptError(f"ScriptBuilder.echoes_tool_result(): prefix must be a str, got {type(prefix).__name__}")
        return self._when_drained("echoes_tool_result()", lambda record: _echo_tool_result(record, prefix))

    # ------------------------------------------------------------------ results

    @property
    def script(self) -> dict[str, list[Turn]]:
        """The queues built so far, keyed by model (`"*"`: the default queue); a copy."""
        queues = {queue: list(turns) for queue, turns in self._queues.items()}
        if not queues[DEFAULT_QUEUE] and DEFAULT_QUEUE not in self._drained and len(queues) > 1:
            # No default queue at all: a request for another model is reported as such.
            del queues[DEFAULT_QUEUE]
        return queues

    @property
    def fallback(self) -> Callable[[RecordedRequest], Turn | None] | None:
        """The answer for drained queues (`ScriptTransport(fallback=...)`), or None when none was asked for."""
        if not self._drained:
            return None
        drained = dict(self._drained)
        own_queues = frozenset(self._queues) - {DEFAULT_QUEUE}

        def answer(record: RecordedRequest) -> Turn | None:
            queue = record.model if record.model in own_queues else DEFAULT_QUEUE
            behaviour = drained.get(queue)
            return behaviour[1](record) if behaviour is not None else None

        return answer

    def build(
        self,
        *,
        hold_timeout: float = 30.0,
        strict: bool = True,
        strict_skip: Iterable[str] = (),
        usage: UsageMode = None,
        prices: PriceTable | None = None,
        check_tool_input: bool = False,
    ) -> ScriptTransport:
        """A fresh `ScriptTransport` serving the script (each call gives an independent stub).

        `strict`, `strict_skip`, `usage`, `prices` and `check_tool_input` are `ScriptTransport`'s: the strict
        request and answer rules, on by default, derived usage (`"derive"`), off by default, the bill's prices,
        and the opt-in check of every tool call's input.
        """
        return ScriptTransport(
            self.script,
            hold_timeout=hold_timeout,
            fallback=self.fallback,
            strict=strict,
            strict_skip=strict_skip,
            usage=usage,
            prices=prices,
            check_tool_input=check_tool_input,
        )

    def __repr__(self) -> str:
        parts = [f"{queue!r}: {len(turns)} turn(s)" for queue, turns in self._queues.items()]
        drained = [f"{queue!r} then {name}" for queue, (name, _) in self._drained.items()]
        return f"<ScriptBuilder {', '.join(parts + drained)}>"

    # ------------------------------------------------------------------ internals

    def _queue_name(self) -> str:
        return "the default queue" if self._queue == DEFAULT_QUEUE else f"the queue for {self._queue!r}"

    def _label(self, position: int) -> str:
        """`script[2]`, `script['claude-b'][0]`: a turn of the current queue, as the transport names it."""
        return f"{queue_label(self._queue)}[{position}]"

    def _where(self, verb: str, position: int | None = None) -> str:
        """`turn script[2] from .says()`: the turn a verb makes (or changes)."""
        return f"turn {self._label(len(self._queues[self._queue]) if position is None else position)} from {verb}"

    def _add(self, verb: str, fields: dict[str, Any]) -> Self:
        fields = {k: v for k, v in fields.items() if v is not None}
        where = self._where(verb)
        return self._append(parse_turn(fields, where), where)

    def _append(self, turn: Turn, where: str) -> Self:
        self._queues[self._queue].append(_checked(turn, where))
        return self

    def _when_drained(self, name: str, behaviour: _Drained) -> Self:
        known = self._drained.get(self._queue)
        if known is not None:
            raise ScriptError(
                f"ScriptBuilder.{name}: {self._queue_name()} already answers with .{known[0]} once drained; "
                "a queue has one such behaviour"
            )
        self._drained[self._queue] = (name, behaviour)
        return self


def _call(where: str, index: int, call: object) -> dict[str, Any]:
    if isinstance(call, ToolCall):
        return call.model_dump(exclude_none=True)
    if isinstance(call, tuple) and len(call) == 2 and isinstance(call[0], str):
        return {"name": call[0], "input": call[1]}
    if isinstance(call, Mapping):
        return dict(call)
    raise ScriptError(
        f"{where}: call {index}: expected a (name, input) pair, a dict or a ToolCall, "
        f"got {type(call).__name__}: {call!r}"
    )


_WIRES: list[Wire] = default_wires()
"""The default wires: what a builder's turns are checked against, and how tool results read."""


def _checked(turn: Turn, where: str) -> Turn:
    """`turn`, once no default wire refuses it (an unknown stop reason, a fault no wire can apply)."""
    check_turns([(where, turn)], _WIRES)
    return turn


def tool_result_text(result: object) -> str | None:
    """The text of one tool result, whatever the provider's shape; None if `result` is not one.

    Each wire reads its own shape (`Wire.tool_result_text`):

    - Anthropic `tool_result` blocks: `content`, a string or text blocks (joined).
    - OpenAI Chat `tool` messages: `content`, a string or text parts.
    - OpenAI Responses `function_call_output` items: `output`, a string or text parts.
    - Gemini `functionResponse` parts: the `output` (or `error`) string of `response` when that is
      all it holds, else `response` as compact JSON.
    """
    if not isinstance(result, Mapping):
        return None
    return next((text for wire in _WIRES if (text := wire.tool_result_text(result)) is not None), None)


def _echo_user(record: RecordedRequest) -> Turn:
    text = record.last_user_text
    if text is None:
        raise LookupError(
            "ScriptBuilder.echoes_user(): its queue is drained and the request has no user text to echo; "
            "add a turn for it"
        )
    return Turn(text=text)


def _echo_tool_result(record: RecordedRequest, prefix: str) -> Turn:
    texts: Sequence[str | None] = [tool_result_text(result) for result in record.tool_results]
    found = [t for t in texts if t is not None]
    if not found:
        raise LookupError(
            "ScriptBuilder.echoes_tool_result(): its queue is drained and the request sends no tool result to echo; "
            "add a turn for it"
        )
    return Turn(text=prefix + found[-1])
