"""The `Wire` abstract base: what a provider API plugs into wirescript with. Pure: no HTTP library.

A wire recognises its requests by method, path and host, reads their bodies into the fields of a
`RecordedRequest`, and renders provider-neutral turns, errors and in-stream errors as its API
sends them. Everything a provider calls its own lives on its wire: its stop reasons, credential
headers and query parameters, error envelope, retryable statuses, the answer to an endpoint of its
host that no wire serves, and how its tool results read as text. The transport and the script
models know no provider.

Writing a wire::

    class EchoWire(Wire):
        name = "echo"
        endpoint = "POST …/v1/echo"
        events = frozenset({"chunk"})

        def matches(self, method, path, *, host=""):
            return method == "POST" and path.endswith("/v1/echo")

        def parse(self, body, path):
            return Parsed(model=body.get("model"), messages=body.get("messages", []))

        def render(self, turn, record, *, malformed_tool_json=False, joined=False):
            return Rendered(200, {"content-type": "application/json"}, json_dumps({"text": turn.text}).encode())

        def error(self, spec, record):
            body = json_dumps({"error": error_message(spec)}).encode()
            return Rendered(spec.status, retry_headers(spec, self.retryable), body)

        def stream_error(self, spec, record):
            return Frame("error", encode_event("error", json_dumps({"error": spec.message})))

    stub = ScriptTransport(["Hi"], wires=[EchoWire()])
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._strict_base import Violation
from ..recorded import RecordedRequest
from ..script import ErrorSpec, StreamError, Turn
from ..side import SideScript
from ..sse import json_dumps, parse_sse

__all__ = [
    "RETRYABLE",
    "Frame",
    "Parsed",
    "Rendered",
    "TurnlessWire",
    "Wire",
    "as_dict",
    "as_float",
    "as_int",
    "as_list",
    "break_json",
    "canonical_stop",
    "chunks",
    "decoded_error",
    "decoded_stop",
    "decoded_turn",
    "decoded_usage",
    "default_usage",
    "error_message",
    "is_event_stream",
    "json_answer",
    "json_body",
    "known_stop_reasons",
    "retry_headers",
    "sse_json",
    "unknown_endpoint",
]

RETRYABLE = frozenset({408, 409, 429}) | frozenset(range(500, 600))
"""The statuses the anthropic and openai SDKs retry (`_should_retry`): 408, 409, 429 and every 5xx."""

DEFAULT_INPUT_TOKENS = 10

CANONICAL_STOP_REASONS = frozenset(
    {"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal", "model_context_window_exceeded"}
)
"""The stop reasons every wire renders in its own terms (the script's own vocabulary)."""

_CANONICAL: dict[str, str] = {}
"""Every wire class's stop reasons, each mapped to the canonical one it stands for (filled by `Wire`)."""


@dataclass(slots=True)
class Frame:
    """One frame of a streamed answer (an SSE event, an AWS event-stream message), with the name faults use.

    In a joined rendering (`Wire.render(..., joined=True)`), one frame may carry several consecutive
    events of the same name: nothing then looks at events one by one.
    """

    name: str
    """The event name (`message_start`, `[DONE]`, `response.completed`, `chunk`, …)."""
    data: bytes
    """The encoded frame."""


@dataclass(slots=True)
class Rendered:
    """A response, independent of any HTTP library."""

    status: int
    headers: dict[str, str]
    body: bytes = b""
    frames: Iterator[Frame] | None = None
    """For a streamed answer: the frames, produced lazily as they are read."""


@dataclass(slots=True)
class Parsed:
    """The provider-level fields of a request, as `Wire.parse` reads them."""

    model: str | None = None
    system: str | None = None
    messages: list[Any] = field(default_factory=list)
    conversation: list[Any] | None = None
    tools: list[Any] = field(default_factory=list)
    tool_names: list[str] = field(default_factory=list)
    tool_results: list[Any] = field(default_factory=list)
    stream: bool = False
    max_tokens: int | None = None
    temperature: float | None = None


class Wire(ABC):
    """One provider API: recognise its requests, parse them, render turns and errors.

    A wire instance belongs to one transport, so any state it keeps (conversation threads, stored
    responses) is private to that stub: give each stub fresh instances. Subclasses set the class
    attributes below and implement the abstract methods; `ScriptTransport(script, wires=[...])`
    serves them before the default wires (a wire with a default wire's `name` replaces it).
    """

    name: ClassVar[str]
    """The provider id recorded as `RecordedRequest.provider`."""
    endpoint: ClassVar[str]
    """The endpoint it serves, for messages (`POST …/v1/messages`)."""
    events: ClassVar[frozenset[str]] = frozenset()
    """The names of the frames its streamed answers send: what `Fault.drop` may name."""
    stop_reasons: ClassVar[Mapping[str, str]] = {}
    """The stop reasons of its API a turn may script, each mapped to the canonical one it stands for
    (`{"length": "max_tokens"}`); a reason with no canonical equivalent maps to itself and is sent
    unchanged by every wire. Canonical reasons (`end_turn`, `tool_use`, `max_tokens`, …) need no entry."""
    credential_headers: ClassVar[tuple[str, ...]] = ()
    """Request headers (lower-case) that carry its API key, in the order they are read; always redacted."""
    credential_query: ClassVar[tuple[str, ...]] = ()
    """URL query parameters that carry its API key; always redacted."""
    hosts: ClassVar[tuple[str, ...]] = ()
    """Its API's hosts (a leading `.` matches any subdomain): a request there that no wire serves is
    answered in this wire's error envelope."""
    client_hint: ClassVar[str | None] = None
    """How a test gives its SDK's client the stub, when not `http_client=httpx2.Client(transport=stub)`:
    the network guard names it when it refuses a connection to one of its `hosts`."""
    retryable: ClassVar[frozenset[int]] = RETRYABLE
    """The statuses its SDK retries: a scripted error with one of them gets `retry-after-ms: 1`."""
    endpoints: ClassVar[tuple[str, ...]] = ()
    """Every endpoint it serves, as `METHOD path` with `{name}` placeholders (`POST /v1/messages`):
    the rows of the coverage table (`docs/providers.md`), which a test keeps true."""
    turnless: ClassVar[bool] = False
    """Whether it answers without a scripted turn (side endpoints, routes): the transport then calls
    `respond` and never `render`, and no turn is consumed. Its `GET` requests may have no body."""
    any_body: ClassVar[bool] = False
    """Whether a turnless wire serves any body, JSON or not (`record.body` is then None, the bytes
    are in `record.content`): routes do, for uploads and bodiless POSTs."""
    malformed_tool_json_applies_to_json: ClassVar[bool] = False
    """Whether `Fault.malformed_tool_json` can damage a JSON (non-streamed) answer too: OpenAI's
    `arguments` string, Gemini's `MALFORMED_FUNCTION_CALL`. Anthropic's tool input is an object."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for native, canonical in cls.__dict__.get("stop_reasons", {}).items():
            _CANONICAL.setdefault(native, canonical)

    @abstractmethod
    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """Whether this wire answers a request for `method` on `path` at `host` (lower-case, no port)."""

    @abstractmethod
    def parse(self, body: Any, path: str) -> Parsed:
        """Extract the provider-level fields from a JSON body (a dict when the wire is called)."""

    def resolve(self, record: RecordedRequest) -> None:  # noqa: B027 - optional: most wires keep no state
        """Complete a record from the wire's state (called under the stub's lock, in arrival order)."""

    @abstractmethod
    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        """Render a successful turn, streamed or not as the request asked.

        `joined`: the frames will only be concatenated (an unfaulted stream, read in chunks), so a
        wire may join runs of deltas into frames of several events; the bytes are the same.
        """

    @abstractmethod
    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """Render an error turn in the provider's error shape."""

    @abstractmethod
    def stream_error(self, spec: StreamError, record: RecordedRequest) -> Frame:
        """The provider's in-stream error event."""

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """The answer of a `turnless` wire, from the request and the stub's side script.

        Raise `LookupError` when the side script cannot answer (the request becomes an `unscripted`
        problem with its message); any other exception is a `script_error` problem.
        """
        raise NotImplementedError(f"the {self.name} wire answers with scripted turns")

    def unscripted(self, message: str, record: RecordedRequest, *, status: int = 400) -> Rendered:
        """The loud answer to a request with no scripted turn: a non-retryable error carrying `message`."""
        rendered = self.error(ErrorSpec(status=status, message=message, code="wirescript_unscripted"), record)
        rendered.headers["x-should-retry"] = "false"
        return rendered

    def check(self, record: RecordedRequest, *, skip: frozenset[str]) -> Violation | None:
        """The strict rule the request breaks, as the real API would refuse it, or None (the default: no rules).

        Called for every request the wire parsed, before a turn is chosen, outside the stub's lock:
        a wire that reads its own state here (threads, stored responses) guards it with its own lock.
        The default wires call `wirescript.strict.check_request` with the context only they hold;
        a refused request consumes no turn and is answered with `strict_error`.

        Args:
            record: The request (not yet numbered or resolved).
            skip: The rule ids not to check (`strict_skip`).

        """
        return None

    def strict_error(self, violation: Violation, message: str, record: RecordedRequest) -> Rendered:
        """The answer to a request a strict rule refuses: the provider's own error, never retried.

        The rule's status in the wire's error envelope (`error`), carrying `message` (the real API's
        wording, the rule id and the docs page) and `x-should-retry: false`.
        """
        rendered = self.error(ErrorSpec(status=violation.rule.status, message=message), record)
        rendered.headers["x-should-retry"] = "false"
        return rendered

    def claims(self, host: str) -> bool:
        """Whether `host` is one of its API's (`hosts`), so it answers what no wire serves there."""
        return any(host == h or (h.startswith(".") and host.endswith(h)) for h in self.hosts)

    def api_key(self, headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
        """The request's credential: a `credential_headers` value, a bearer token, or a `credential_query` value."""
        for name in self.credential_headers:
            if name in headers:
                return headers[name]
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token:
            return token.strip()
        for name in self.credential_query:
            if name in query:
                return query[name]
        return None

    @staticmethod
    def tool_result_text(result: Mapping[str, Any]) -> str | None:
        """The text of one of its tool results (as `RecordedRequest.tool_results` holds them), or None."""
        return None

    def decode(self, status: int, headers: Mapping[str, str], body: bytes) -> dict[str, Any] | None:
        """A real answer of its API as a provider-neutral turn (a dict of `Turn` fields), or None.

        What record mode (`wirescript.RecordingTransport`) calls on each response: `body` is the
        whole decoded body (JSON, or an SSE stream when `headers` say `text/event-stream`), and an
        error status becomes an `error` turn. None: the wire cannot read this answer, so nothing is
        recorded for it. Pure: it reads only its arguments. The default reads nothing.
        """
        return None


class TurnlessWire(Wire):
    """A wire that answers from the request alone (`turnless`): side endpoints, routes.

    It renders no turns; its errors use the envelope every SDK reads (`unknown_endpoint`'s), with
    the status asked for. Subclasses implement `matches` and `respond`, and `parse` for records.
    """

    turnless = True

    def unused(self, side: SideScript) -> list[str]:
        """The scripted side answers no request has taken yet, one line each (`check()` lists them)."""
        return []

    def parse(self, body: Any, path: str) -> Parsed:
        """The model a body names, if any (`body` is `{}` for a request without one)."""
        model = body.get("model") if isinstance(body, dict) else None
        return Parsed(model=model if isinstance(model, str) else None)

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        """Never called: a turnless wire answers with `respond`."""
        raise NotImplementedError(f"the {self.name} wire answers without turns")

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """An error in the envelope every SDK reads (Anthropic's, with OpenAI's `code` in it)."""
        rendered = unknown_endpoint(error_message(spec))
        kind = spec.type or _ERROR_TYPES.get(spec.status, "invalid_request_error" if spec.status < 500 else "api_error")
        body = {"type": "error", "error": {"type": kind, "message": error_message(spec), "code": spec.code}}
        return Rendered(spec.status, {**rendered.headers, **retry_headers(spec, self.retryable)}, json_answer(body))

    def decode_side(
        self, record: RecordedRequest, status: int, headers: Mapping[str, str], body: bytes
    ) -> dict[str, Any] | None:
        """A real answer of its endpoint as side-script data (`SideScript` fields), or None.

        What record mode calls on each answer of a turnless wire: `{"count_tokens": [n]}`,
        `{"embeddings": {text: vector}}`, `{"models": [ids]}`, or `{}` for an answer the replay
        gives as it is. None: not recorded (an error, an answer it cannot read). The default reads nothing.
        """
        return None

    def stream_error(self, spec: StreamError, record: RecordedRequest) -> Frame:
        """Never sent: a turnless wire does not stream."""
        return Frame("error", json_answer({"error": {"message": spec.message}}))


_ERROR_TYPES = {401: "authentication_error", 403: "permission_error", 404: "not_found_error", 429: "rate_limit_error"}


def json_answer(value: Any) -> bytes:
    """A JSON response body."""
    return json_dumps(value).encode()


def known_stop_reasons(wires: Iterable[Wire]) -> frozenset[str]:
    """Every stop reason a turn may script for these wires: the canonical ones and each wire's own."""
    return CANONICAL_STOP_REASONS.union(*(wire.stop_reasons for wire in wires))


def canonical_stop(turn: Turn) -> str:
    """The turn's stop reason in the canonical vocabulary (`end_turn`, `tool_use`, `max_tokens`, …).

    A reason of some wire's API is translated (OpenAI's `length` is `max_tokens`); one with no
    canonical equivalent passes through unchanged.
    """
    if turn.stop_reason is None:
        return "tool_use" if turn.tool_calls else "end_turn"
    return _CANONICAL.get(turn.stop_reason, turn.stop_reason)


def is_event_stream(headers: Mapping[str, str]) -> bool:
    """Whether a response's `content-type` (lower-case header names) says it is server-sent events."""
    return headers.get("content-type", "").lower().startswith("text/event-stream")


def json_body(body: bytes | str) -> Any:
    """A response body's JSON, or None when it is not JSON."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def sse_json(body: bytes) -> list[Any]:
    """The JSON data of each event of an SSE body, in order; events whose data is not JSON (`[DONE]`) left out."""
    events, _ = parse_sse(body.decode("utf-8", "replace"))
    return [data for event in events if (data := json_body(event.data)) is not None]


def decoded_stop(wire: Wire, native: Any, has_tool_calls: bool) -> str | None:
    """A native stop reason as a turn's `stop_reason`: canonical, and None when it is the default.

    The default (`tool_use` for a turn with tool calls, `end_turn` otherwise) is left out, so a
    recorded turn reads as one written by hand; a reason no wire knows is kept as it came.
    """
    if not isinstance(native, str) or not native:
        return None
    canonical = wire.stop_reasons.get(native, _CANONICAL.get(native, native))
    return None if canonical == ("tool_use" if has_tool_calls else "end_turn") else canonical


def decoded_turn(
    wire: Wire,
    *,
    thinking: Iterable[str] = (),
    thinking_signature: str | None = None,
    text: Iterable[str] = (),
    calls: Iterable[Mapping[str, Any]] = (),
    stop: Any = None,
    usage: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A decoded answer as a turn dict: its thinking and text joined, its tool calls, stop reason and usage.

    Only what the answer had is set: no `thinking` key for an answer without reasoning, no
    `text` for one without text, `tool` for one call and `tools` for several. The signature is
    kept only with the one block of thinking it signs (`thinking_signature`).
    """
    turn: dict[str, Any] = {}
    thought = list(thinking)
    if thought:
        turn["thinking"] = "".join(thought)
        if thinking_signature and len(thought) == 1:
            turn["thinking_signature"] = thinking_signature
    said = list(text)
    if said:
        turn["text"] = "".join(said)
    tool_calls = [dict(call) for call in calls]
    if len(tool_calls) == 1:
        turn["tool"] = tool_calls[0]
    elif tool_calls:
        turn["tools"] = tool_calls
    reason = decoded_stop(wire, stop, bool(tool_calls))
    if reason is not None:
        turn["stop_reason"] = reason
    if usage:
        turn["usage"] = dict(usage)
    return turn


def decoded_error(status: int, type_: Any = None, message: Any = None, code: Any = None) -> dict[str, Any]:
    """An error answer as an `error` turn: its status and, when they are strings, its type, message and code.

    No header is kept: a recording holds no header value (the `retry-after` a replay sends is its own).
    """
    error: dict[str, Any] = {"status": status}
    if isinstance(type_, str) and type_:
        error["type"] = type_
    if isinstance(message, str):
        error["message"] = message
    if isinstance(code, (str, int)) and not isinstance(code, bool) and str(code):
        error["code"] = str(code)
    return {"error": error}


def decoded_usage(**counts: Any) -> dict[str, int] | None:
    """A turn's `usage` from the counts an answer reported (non-negative ints only), or None when it reported none."""
    usage = {name: value for name, value in counts.items() if as_int(value) is not None and value >= 0}
    return usage or None


def chunks(text: str, most: int = 8) -> list[str]:
    """Split text for streaming: several pieces whenever it has two or more characters.

    Pieces are at most `most` characters long and cut at fixed positions, mid-word included, so
    a consumer that assumes whole words per delta is caught.
    """
    if len(text) < 2:  # nothing to split: no comprehension for a one-character answer
        return [text] if text else []
    size = max(1, min(most, len(text) // 2))
    return [text[i : i + size] for i in range(0, len(text), size)]


def default_usage(turn: Turn, output_chars: int) -> tuple[int, int]:
    """The (input, output) token counts for a turn: scripted values, else deterministic defaults."""
    usage = turn.usage
    input_tokens = usage.input_tokens if usage and usage.input_tokens is not None else DEFAULT_INPUT_TOKENS
    if usage and usage.output_tokens is not None:
        output_tokens = usage.output_tokens
    else:
        output_tokens = max(1, math.ceil(output_chars / 4))
    return input_tokens, output_tokens


def error_message(spec: ErrorSpec) -> str:
    """The scripted error message, or one naming the status."""
    return spec.message if spec.message is not None else f"wirescript: scripted {spec.status} error"


def retry_headers(spec: ErrorSpec, retryable: frozenset[int] = RETRYABLE) -> dict[str, str]:
    """Headers for an error response: the scripted ones, plus `retry-after-ms: 1` when retryable.

    The SDKs honour a server delay only when it is positive (0 falls back to their backoff of
    0.375 s or more), so 1 ms lets their real retry loop run without sleeping.
    """
    headers = {k.lower(): v for k, v in (spec.headers or {}).items()}
    if spec.status in retryable and "retry-after" not in headers and "retry-after-ms" not in headers:
        headers["retry-after-ms"] = "1"
    return headers


def break_json(arguments: str) -> str:
    """Tool arguments made into text that is not JSON (`Fault.malformed_tool_json`)."""
    return arguments[:-1] + ', "oops": }' if len(arguments) > 2 else '{"oops": }'


def unknown_endpoint(message: str) -> Rendered:
    """The loud 404 for a request no wire serves on a host no wire claims; readable by every SDK.

    Anthropic's error envelope with OpenAI's `error.code` in it: every SDK finds the message.
    """
    body = {
        "type": "error",
        "error": {
            "type": "not_found_error",
            "message": message,
            "code": "wirescript_unscripted",
            "details": {"error_code": "wirescript_unscripted"},
        },
    }
    return Rendered(404, {"content-type": "application/json", "x-should-retry": "false"}, json_dumps(body).encode())


def as_int(value: Any) -> int | None:
    """An int field of a request body, or None when absent or of another type."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_float(value: Any) -> float | None:
    """A number field of a request body, or None when absent or of another type."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def as_dict(value: Any) -> dict[str, Any]:
    """An object field of a response body, or {} when absent or of another type."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """A list field of a request body, or [] when absent or of another type."""
    return value if isinstance(value, list) else []
