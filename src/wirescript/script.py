"""Script models: what a turn can say, validated when the script is built.

A turn is provider-neutral: each wire renders the same `Turn` in its own format, so one
script drives an app on any provider. Turns are pydantic models; a plain dict of the same
shape, or a bare string (a text-only turn), is accepted wherever a turn is.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import ScriptError

if TYPE_CHECKING:
    from .recorded import RecordedRequest

__all__ = [
    "DEFAULT_QUEUE",
    "ErrorSpec",
    "Fault",
    "ScriptLike",
    "StreamError",
    "ToolCall",
    "Turn",
    "TurnLike",
    "Usage",
    "parse_turn",
    "parse_turns",
]

DEFAULT_QUEUE = "*"
"""The key of the queue that serves requests whose model has no queue of its own."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False, use_attribute_docstrings=True)


class ToolCall(_Model):
    """One tool call the model makes."""

    name: str = Field(min_length=1)
    """The tool's name, as the app registered it."""
    input: dict[str, Any] = Field(default_factory=dict)
    """The arguments, a JSON object; it is streamed in several fragments."""
    id: str | None = Field(default=None, min_length=1)
    """The call id (`toolu_…`, `call_…`); generated deterministically when absent."""


class Usage(_Model):
    """Token counts reported for the turn. Unset counts use wirescript's deterministic defaults."""

    input_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens; default 10."""
    output_tokens: int | None = Field(default=None, ge=0)
    """Completion tokens; default one per four characters of output, at least 1."""
    cache_read_input_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens read from the cache (Anthropic `cache_read_input_tokens`, OpenAI `cached_tokens`)."""
    cache_creation_input_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens written to the cache (Anthropic only)."""


class ErrorSpec(_Model):
    """An error answer: the provider's error JSON with this HTTP status."""

    status: int = Field(ge=400, le=599)
    """The HTTP status, 400-599."""
    type: str | None = Field(default=None, min_length=1)
    """The provider's error type; defaults to the documented one for the status."""
    message: str | None = None
    """The error message; defaults to a message naming the status."""
    code: str | None = None
    """An error code (Anthropic `error.details.error_code`, OpenAI `error.code`)."""
    headers: dict[str, str] | None = None
    """Extra response headers. Retryable statuses get `retry-after-ms: 1` unless given here."""


class StreamError(_Model):
    """An error event inside a 200 stream (Anthropic `event: error`, an OpenAI error chunk)."""

    type: str = "overloaded_error"
    """The error type."""
    message: str = "Overloaded"
    """The error message."""
    after: int = Field(default=1, ge=0)
    """How many events of the stream go out before the error event."""


class Fault(_Model):
    """Wire faults applied to a turn's response. Counts are in SSE events (frames)."""

    cut_after: int | None = Field(default=None, ge=0)
    """End the stream cleanly (EOF) after this many events."""
    drop: tuple[str, ...] = ()
    """Event names to leave out, e.g. `message_start`, `message_stop`, `[DONE]`, `response.completed`."""
    disconnect_after: int | None = Field(default=None, ge=0)
    """Raise the HTTP stack's `RemoteProtocolError` after this many events."""
    delay: float = Field(default=0.0, ge=0)
    """Seconds to sleep before each event (asyncio-friendly in async clients)."""
    first_byte_delay: float = Field(default=0.0, ge=0)
    """Seconds to sleep before the response starts."""
    timeout_after: int | None = Field(default=None, ge=0)
    """Raise the stack's `ReadTimeout` after this many events (0: before the response starts)."""
    stream_error: StreamError | None = None
    """Send an in-stream error event."""
    malformed_tool_json: bool = False
    """Stream tool arguments that are not valid JSON."""
    raw: str | None = None
    """Serve these exact body bytes (UTF-8) instead of the rendered turn, with the turn's status."""


class Turn(_Model):
    """One scripted model answer.

    Text, thinking and tool calls may be combined; they are rendered thinking first, then text,
    then the tool calls in order. A turn with none of them is a valid, empty answer.
    """

    text: str | None = None
    """The answer's text; streamed in several deltas."""
    tool: ToolCall | None = None
    """One tool call (shorthand for `tools=[...]` with one entry)."""
    tools: tuple[ToolCall, ...] | None = None
    """Several tool calls in one turn (parallel tool calls)."""
    thinking: str | None = None
    """Reasoning text: an Anthropic thinking block, an OpenAI reasoning item."""
    usage: Usage | None = None
    """Token counts."""
    stop_reason: str | None = Field(default=None, min_length=1)
    """The stop reason. Default: `tool_use` when the turn calls a tool, else `end_turn`. Common values are
    translated per provider (`max_tokens` is OpenAI's `length`, `tool_use` its `tool_calls`)."""
    error: ErrorSpec | None = None
    """Answer with an HTTP error instead of a message."""
    fault: Fault | None = None
    """Damage the response on the wire."""

    @model_validator(mode="after")
    def _check(self) -> Turn:
        if self.tool is not None and self.tools is not None:
            raise ValueError("give either 'tool' (one call) or 'tools' (several), not both")
        if self.error is not None:
            clash = [f for f in ("text", "tool", "tools", "thinking", "usage", "stop_reason") if getattr(self, f)]
            if clash:
                raise ValueError(
                    f"an 'error' turn answers with an HTTP error, so it cannot also have {', '.join(map(repr, clash))}"
                )
        return self

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Every tool call of the turn, `tool` and `tools` alike, in order."""
        if self.tool is not None:
            return (self.tool,)
        return self.tools or ()

    def describe(self) -> str:
        """A one-line summary for messages: `text 'Done.'`, `tool create_card`, `error 429`."""
        if self.error is not None:
            return f"error {self.error.status}"
        parts = []
        if self.thinking:
            parts.append("thinking")
        if self.text is not None:
            parts.append(f"text {_short(self.text)}")
        parts.extend(f"tool {c.name}" for c in self.tool_calls)
        if self.fault is not None:
            parts.append("fault")
        return ", ".join(parts) or "empty"


def _short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


TurnLike: TypeAlias = Turn | Mapping[str, Any] | str
"""A turn: a `Turn`, a dict of the same shape, or a string (a text-only turn)."""

ScriptLike: TypeAlias = (
    Sequence[TurnLike] | Mapping[str, Sequence[TurnLike]] | Callable[["RecordedRequest"], "TurnLike | None"]
)
"""A script: a list of turns served in order; a dict of such lists keyed by model name (`"*"` for the
rest); or a function from the recorded request to the turn (None: unscripted)."""

_TURN_FIELDS = tuple(Turn.model_fields)


def parse_turn(value: object, where: str = "turn") -> Turn:
    """Validate one turn, raising `ScriptError` that names `where` and the offending field."""
    if isinstance(value, Turn):
        return value
    if isinstance(value, str):
        return Turn(text=value)
    if not isinstance(value, Mapping):
        raise ScriptError(
            f"{where}: expected a turn (a dict such as {{'text': 'Hi'}}, a Turn, or a string), "
            f"got {type(value).__name__}: {_short(repr(value), 60)}"
        )
    try:
        return Turn.model_validate(value)
    except ValidationError as exc:
        raise ScriptError(_explain(exc, where)) from None


def parse_turns(values: object, where: str = "script") -> list[Turn]:
    """Validate a list of turns; each error names `where[index]` and the field."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence):
        raise ScriptError(f"{where}: expected a list of turns, got {type(values).__name__}")
    return [parse_turn(v, f"{where}[{i}]") for i, v in enumerate(values)]


def _explain(exc: ValidationError, where: str) -> str:
    lines = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            lines.append(f"unknown field {loc!r}{_suggest(err['loc'])}")
            continue
        got = err.get("input")
        got_text = (
            "" if err["type"] in ("value_error", "missing") else f", got {type(got).__name__} {_short(repr(got), 50)}"
        )
        msg = err["msg"].removeprefix("Value error, ")
        lines.append(f"field {loc!r}: {msg}{got_text}" if loc else f"{msg}")
    head = f"invalid {where}: "
    if len(lines) == 1:
        return head + lines[0]
    return head + "".join(f"\n  - {line}" for line in lines)


def _suggest(loc: tuple[int | str, ...]) -> str:
    model: type[BaseModel] = Turn
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return ""
        sub = _model_of(field.annotation)
        if sub is None:
            return ""
        model = sub
    names = list(model.model_fields)
    close = difflib.get_close_matches(str(loc[-1]), names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f" (expected one of: {', '.join(names)}){hint}"


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None
