"""The `Wire` abstract base: what a provider API plugs into wirescript with. Pure: no HTTP library.

A wire recognises its requests by method, path and host, reads their bodies into the fields of a
`RecordedRequest`, and renders provider-neutral turns, errors and in-stream errors as its API
sends them. Everything a provider calls its own lives on its wire: its strict rules and what its
request bodies' top-level fields are, its stop reasons, hosts, credential headers and query
parameters, retry-count header, error envelope, retryable statuses, the answer to an endpoint of its
host that no wire serves, and how its tool results read as text. A stub learns each of these from
its own wires (`ScriptTransport(wires=[...])`): the transport and the script models know no provider.

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

import functools
import operator
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from .._plain import Plain
from ..errors import UsageError
from ..recorded import RecordedRequest
from ..script import ErrorSpec, StreamError, Turn
from ..sse import json_dumps
from ._answers import AnswerChecks, AnswerRule, AnswerViolation, Choice, Offer, OfferedTool, Output, hold
from ._declared import declared
from ._hosts import host_matcher
from ._render import RETRYABLE, error_message, json_answer, retry_headers
from ._rules import Rule, Violation, json_type

if TYPE_CHECKING:
    from ..side import SideScript
    from ._caching import Caching

__all__ = [
    "CANONICAL_STOP_REASONS",
    "RETRYABLE",
    "AnswerChecks",
    "AnswerRule",
    "AnswerViolation",
    "Answered",
    "Caching",
    "Choice",
    "Draw",
    "Frame",
    "Item",
    "Offer",
    "OfferedTool",
    "Output",
    "Parsed",
    "Rendered",
    "Rule",
    "TurnlessWire",
    "Violation",
    "Wire",
    "bind_stops",
    "error_message",
    "known_stop_reasons",
    "loud_error",
    "retry_headers",
    "unknown_endpoint",
]

CANONICAL_STOP_REASONS = frozenset(
    {"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal", "model_context_window_exceeded"}
)
"""The stop reasons every wire renders in its own terms (the script's own vocabulary)."""


class Frame(Plain):
    """One frame of a streamed answer (an SSE event, an AWS event-stream message), with the name faults use.

    In a joined rendering (`Wire.render(..., joined=True)`), one frame may carry several consecutive
    events of the same name: nothing then looks at events one by one.
    """

    __slots__ = ("data", "name")
    _fields = ("name", "data")

    def __init__(self, name: str, data: bytes) -> None:
        self.name = name
        """The event name (`message_start`, `[DONE]`, `response.completed`, `chunk`, …)."""
        self.data = data
        """The encoded frame."""


class OneChunk(Iterator[Frame]):
    """A short stream a wire rendered at once for a joined answer: its whole body, sent as one chunk.

    The frames are those of the stream read in chunks: everything up to `content_end` (its events
    with content, as one frame named `first`), then the frames that close it (`closing`; none when
    it ends at `content_end`). The core
    sends the body as it is, its tail apart (`_exchange.whole`), with no pass over the frames;
    iterated, it gives those two frames.
    """

    __slots__ = ("_next", "body", "closing", "content_end", "first")

    def __init__(self, body: bytes, content_end: int, first: str, closing: str) -> None:
        self.body = body
        self.content_end = content_end
        self.first = first
        self.closing = closing
        self._next = 0

    def __next__(self) -> Frame:
        at, self._next = self._next, self._next + 1
        if at == 0:
            return Frame(self.first, self.body[: self.content_end])
        if at == 1 and self.content_end < len(self.body):
            return Frame(self.closing, self.body[self.content_end :])
        raise StopIteration


class Rendered(Plain):
    """A response, independent of any HTTP library."""

    __slots__ = ("body", "frames", "headers", "status")
    _fields = ("status", "headers", "body", "frames")

    def __init__(
        self, status: int, headers: dict[str, str], body: bytes = b"", frames: Iterator[Frame] | None = None
    ) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.frames = frames
        """For a streamed answer: the frames, produced lazily as they are read."""


class Parsed(Plain):
    """The provider-level fields of a request, as `Wire.parse` reads them (a list not given: a fresh empty one)."""

    __slots__ = (
        "all_tool_results",
        "conversation",
        "max_tokens",
        "messages",
        "model",
        "stream",
        "system",
        "temperature",
        "tool_names",
        "tool_results",
        "tools",
    )
    _fields = (
        "model",
        "system",
        "messages",
        "conversation",
        "tools",
        "tool_names",
        "tool_results",
        "all_tool_results",
        "stream",
        "max_tokens",
        "temperature",
    )

    def __init__(
        self,
        model: str | None = None,
        system: str | None = None,
        messages: list[Any] | None = None,
        conversation: list[Any] | None = None,
        tools: list[Any] | None = None,
        tool_names: list[str] | None = None,
        tool_results: list[Any] | None = None,
        all_tool_results: list[Any] | None = None,
        stream: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> None:
        self.model = model
        self.system = system
        self.messages: list[Any] = [] if messages is None else messages
        self.conversation = conversation
        self.tools: list[Any] = [] if tools is None else tools
        self.tool_names: list[str] = [] if tool_names is None else tool_names
        self.tool_results: list[Any] = [] if tool_results is None else tool_results
        """The tool results of the request's newest message (or turn): what it answers the model's last calls with."""
        self.all_tool_results = all_tool_results
        """Every tool result the request's messages carry; None: the same as `tool_results`."""
        self.stream = stream
        self.max_tokens = max_tokens
        self.temperature = temperature


class Item(Plain):
    """A request inside another (a batch's item), as its own API would take it: what `Draw.items` records."""

    __slots__ = ("body", "custom_id", "method", "path")
    _fields = ("body", "path", "custom_id", "method")

    def __init__(self, body: Any, path: str, custom_id: str | None = None, method: str = "POST") -> None:
        self.body = body
        """Its body (a JSON object): a Messages request's `params`, a batch input line's `body`."""
        self.path = path
        """The path it would be sent to (`/v1/messages`, `/v1/chat/completions`): the stub's wire for it reads it."""
        self.custom_id = custom_id
        """Its id within the batch (`custom_id`, Gemini's `key`): `RecordedRequest.custom_id`."""
        self.method = method


class Answered:
    """The answer to a request a wire drew a turn for (`Draw.items`, `Draw.run`): filled once the request is admitted.

    Read it only after `ready()`: the answers are rendered outside the stub's lock, once the script
    function (if any) has answered. Two answers are equal only if they are the same one.
    """

    __slots__ = ("body", "done", "headers", "record", "status", "turn")

    def __init__(
        self,
        record: RecordedRequest,
        status: int = 0,
        headers: dict[str, str] | None = None,
        body: bytes = b"",
        turn: Turn | None = None,
        done: threading.Event | None = None,
    ) -> None:
        self.record = record
        """Its record (a batch item's own, in `stub.requests`; a job's own request's)."""
        self.status = status
        """The HTTP status its wire answered with (200, or an error turn's, or the loud 400 of a problem)."""
        self.headers: dict[str, str] = {} if headers is None else headers
        self.body = body
        """Its whole answer, as its wire renders it for a request that does not stream."""
        self.turn = turn
        """Its turn; None when none answered it (its record's `problem` says why) or its wire is turnless."""
        self.done = threading.Event() if done is None else done
        """Set once the answer is filled (every answer of one draw shares it)."""

    def __repr__(self) -> str:
        return f"Answered(record={self.record.index}, status={self.status}, turn={self.turn!r})"

    def ready(self, timeout: float = 30.0) -> bool:
        """Wait until the answer is filled (at once, but while a script function answers); False past `timeout`."""
        return self.done.is_set() or self.done.wait(timeout)


class Draw(ABC):
    """How a turnless request takes turns of the script, for the requests inside it or a job that runs now.

    Given to `Wire.settle`, under the stub's lock: a batch's items, a background response that runs.

    The turns are taken at once, in order, from the queue each record's model names, so a batch
    consumes the script where it ends, as if its items had been sent then; each answer is rendered
    once the request is admitted (a script function is asked outside the lock).
    """

    __slots__ = ()

    now: float
    """When the request arrived, on the stub's clock."""
    side: SideScript
    """The stub's side script (its `jobs` pace)."""

    @abstractmethod
    def items(self, items: Sequence[Item], *, batch: str) -> list[Answered]:
        """Record each item as a request of its own, and take its turn; its answer is filled later.

        Numbered and in `stub.requests` (`custom_id` and `batch` set), it is served by the stub's wire for
        its path, as a request to the parent's host would be: checked by
        that wire's strict rules, answered by the next turn of its queue (a turnless wire's items, such
        as embeddings, by that wire without one). An item no wire serves is an `unknown_endpoint` problem.
        """

    @abstractmethod
    def run(self, record: RecordedRequest, wire: Wire) -> Answered:
        """Take the next turn for a request admitted earlier without one (a background job that runs now).

        Its answer is `wire`'s rendering (for a request that does not stream); its record gets the turn's fields.
        """


class _BaseCaching:
    """`Wire.caching` of a wire that declares none: the base rules (`Caching()`), made when first read.

    Every provider's wire declares its own; only a stub that derives usage reads it, so importing the
    wires does not import the caching module for it.
    """

    __slots__ = ()

    def __get__(self, instance: object, owner: type | None = None) -> Caching:
        return _base_caching()


@functools.cache
def _base_caching() -> Caching:
    from ._caching import Caching

    return Caching()


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
    closing: ClassVar[frozenset[str]] = frozenset()
    """The names of the frames that only close its streams and carry nothing an app reads (`message_stop`,
    `[DONE]`): a client may stop before them (litellm stops at the stop reason), so a stream counts as
    read to its end once its last other frame is (`unfinished_stream`)."""
    stop_reasons: ClassVar[Mapping[str, str]] = {}
    """The stop reasons of its API a turn may script, each mapped to the canonical one it stands for
    (`{"length": "max_tokens"}`); a reason with no canonical equivalent maps to itself and is sent
    unchanged by every wire. Canonical reasons (`end_turn`, `tool_use`, `max_tokens`, …) need no entry."""
    credential_headers: ClassVar[tuple[str, ...]] = ()
    """Request headers (lower-case) that carry its API key, in the order they are read; always redacted."""
    credential_query: ClassVar[tuple[str, ...]] = ()
    """URL query parameters that carry its API key; always redacted."""
    hosts: ClassVar[tuple[str, ...]] = ()
    """Its API's hosts, as host patterns (`*` within one DNS label: `*.openai.azure.com`, the syntax of
    `intercept(hosts=...)`). `stub.intercept()` takes the hosts of the stub's wires, and a request
    there that no wire serves is answered in this wire's error envelope."""
    addresses: ClassVar[tuple[str, ...]] = ()
    """Where its server answers by default, as `host` or `host:port` (`localhost:11434`, `api.mistral.ai`):
    what a host dialect declares. A stub made without `dialect=` answers a request to one of the
    built-in dialects' addresses with that dialect, before walking the other wires. Never intercepted:
    `hosts` are."""
    boto_service: ClassVar[str | None] = None
    """The AWS service (botocore's `service_name`) whose boto3 clients it answers: `intercept()` serves
    the clients of it created while open (`bedrock-runtime`)."""
    client_hint: ClassVar[str | None] = None
    """How a test gives its SDK's client the stub, when not `http_client=httpx2.Client(transport=stub)`:
    the network guard names it when it refuses a connection to one of its `hosts`."""
    retryable: ClassVar[frozenset[int]] = RETRYABLE
    """The statuses its SDK retries: a scripted error with one of them gets `retry-after-ms: 1`."""
    retry_count_header: ClassVar[str | None] = None
    """The request header its SDK numbers its attempts in (`x-stainless-retry-count`), read into
    `RecordedRequest.retry_count`; without one, the stub derives the count from what it answered."""
    per_request_headers: ClassVar[tuple[str, ...]] = ()
    """Request headers (lower-case) whose value its SDK makes new for every request (botocore's
    invocation id and signing time): recorded as every header is, but never kept for the next request,
    which could not use them."""
    rules: ClassVar[Sequence[Rule]] = ()
    """The strict rules it checks (`check`): the ids `strict_skip` may name, with its stub's `any.*` rules."""
    answer_rules: ClassVar[Sequence[AnswerRule]] = ()
    """The answer rules it holds a scripted turn to (`answer_problem`), in the order they are checked: what
    the request it answers lets the model say (`offer`). Their ids are ones `strict_skip` may name too."""
    answer_fields: ClassVar[frozenset[str]] = frozenset()
    """The top-level request fields that may bind an answer without tool calls (`tool_choice`,
    `response_format`): a turn that calls no tool is held to the answer rules only when its request carries
    one of them, so a plain text answer costs nothing."""
    label: ClassVar[str] = ""
    """Its API's name in messages (`Anthropic Messages (POST /v1/messages)`); its `endpoint` when empty."""
    own_fields: ClassVar[tuple[str, ...]] = ()
    """Top-level request fields of its API that mark a body as written for it (Gemini's `contents`):
    another wire of the stub that refuses unknown fields (`unknown_field`) refuses them as this API's
    (`any.body-for-another-wire`). A field several wires own is told apart by `claims_body`."""
    shared_fields: ClassVar[frozenset[str]] = frozenset()
    """Fields other wires own that its bodies may carry all the same (Chat Completions takes Anthropic's
    `max_tokens`): it never refuses them as another API's."""
    unknown_field: ClassVar[str | None] = None
    """Its API's wording for a top-level field it does not know, `{key}` standing for the field
    (`"{key}: Extra inputs are not permitted"`); None: it refuses no field as another API's."""
    field_types: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    """Well-known top-level fields and the JSON types its API takes for them (`{"stream": ("boolean",)}`,
    names as `json_type` gives them; null always passes): another type is refused (`any.field-type`),
    in the words of `field_type_message`."""
    endpoints: ClassVar[tuple[str, ...]] = ()
    """Every endpoint it serves, as `METHOD path` with `{name}` placeholders (`POST /v1/messages`):
    the rows of the coverage table (`docs/providers.md`), which a test keeps true."""
    turnless: ClassVar[bool] = False
    """Whether it answers without a scripted turn (side endpoints, routes): the transport then calls
    `respond` and never `render`, and no turn is consumed. Its `GET` requests may have no body."""
    partly_turnless: ClassVar[bool] = False
    """Whether some of its requests answer without a turn (`turnless_request` says which): a generation API
    that also serves what it stored (OpenAI Responses' `GET /responses/{id}`, a background response
    created now and run later). Those are served as a turnless wire's are (`settle`, `respond`)."""
    shared_paths: ClassVar[bool] = False
    """Whether another API serves the same paths (OpenAI's and Gemini's `/v1/batches`): a request its path
    matches is its own only when `owns(headers)` says the headers are its SDK's, else the next wire is asked."""
    unused_label: ClassVar[str] = "side script answer(s)"
    """What `check()` calls the entries `unused` lists (`"side script answer(s)"`)."""
    unused_said: ClassVar[str] = "were never requested"
    """What `check()` says of them (`"were never requested"`, `"were never collected to their end"`)."""
    any_body: ClassVar[bool] = False
    """Whether a turnless wire serves any body, JSON or not (`record.body` is then None, the bytes
    are in `record.content`): routes do, for uploads and bodiless POSTs."""
    caching: ClassVar[Caching] = _BaseCaching()  # type: ignore[assignment]  # reads as a `Caching`
    """Its provider's usage rules (`wirescript.wires.Caching`): how a stub made with `usage="derive"` counts a
    request's prompt, caches it by the provider's rules and bills it (`docs/usage.md`). The default counts
    the record's tools, system prompt and messages and caches nothing."""
    malformed_tool_json_applies_to_json: ClassVar[bool] = False
    """Whether `Fault.malformed_tool_json` can damage a JSON (non-streamed) answer too: OpenAI's
    `arguments` string, Gemini's `MALFORMED_FUNCTION_CALL`. Anthropic's tool input is an object."""

    _stop_map: Mapping[str, str] | None = None
    """The stop reasons of its stub's wires, bound when the stub is made (`bind_stops`)."""

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

    def server_tools_problem(self, turn: Turn, record: RecordedRequest) -> str | None:
        """Why the real API could not have answered `record` with the turn's server tools and citations, or None.

        Called before `render`, only for a turn that has `server_tools` or `citations`: a message
        (what is impossible, and the fix) makes the request an `impossible_answer` problem,
        answered loudly instead of rendered. The default says this wire renders neither, so a
        wire of one's own never drops them silently.
        """
        return f"the {self.name} wire renders no server tools or citations; take them out of the turn for it"

    def offer(self, record: RecordedRequest) -> Offer | None:
        """What the request lets the model answer with, for the answer rules; None: nothing the wire can tell.

        Called only for a turn the answer rules may hold (one that calls a tool, or a request carrying one of
        `answer_fields`), before `render`, under no lock: it reads the record alone (its `tools`, which a
        continued thread's `resolve` filled in, and its body). The default tells nothing.
        """
        return None

    def answer_problem(
        self, turn: Turn, record: RecordedRequest, checks: AnswerChecks | None = None
    ) -> AnswerViolation | None:
        """Why the real API could not have answered `record` with `turn`, or None.

        Called before `render` for a turn with server tools or citations (`server_tools_problem`, always) and,
        with `checks` (strict mode on, the turn not `unchecked`), for a turn the answer rules may hold: its
        rules (`answer_rules`) over what the request offers (`offer`), in order, skipping the ids in
        `checks.skip`. A violation makes the request an `impossible_answer` problem, answered loudly instead of
        rendered.
        """
        if turn.server_tools is not None or turn.citations is not None:
            why = self.server_tools_problem(turn, record)
            if why is not None:
                return AnswerViolation(None, why)
        if checks is None or not self.answer_rules:
            return None
        offer = self.offer(record)
        if offer is None:
            return None
        rules = self.answer_rules if offer.rules is None else offer.rules
        return hold(turn, offer, rules, checks, self.canonical_stop(turn))

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

    def owns(self, headers: Mapping[str, str]) -> bool:
        """Whether a request its path matches carries its SDK's headers (asked only of a `shared_paths` wire)."""
        return True

    def turnless_request(self, record: RecordedRequest) -> bool:
        """Whether this request answers without a turn (asked only of a `partly_turnless` wire, under the lock)."""
        return self.turnless

    def bodiless(self, method: str, path: str) -> bool:
        """Whether a request of its with an empty body is one of its requests without a body (asked only then).

        The default: a turnless wire's `GET`. A wire serving a `DELETE` or a `POST …/cancel` says so.
        """
        return self.turnless and method == "GET"

    def settle(self, record: RecordedRequest, draw: Draw) -> None:  # noqa: B027 - optional: few wires start jobs
        """Bring the wire's jobs up to this turnless request, under the stub's lock, in arrival order.

        A wire whose API runs jobs (batches, background responses) starts them here, moves them on
        (a poll, the clock: `draw.now`) and, when one runs, takes its turns with `draw`; `respond`
        then answers from the state settled here. Called only for a wire that overrides it.
        """

    def unused(self, side: SideScript) -> list[str]:
        """What it was scripted or given that the app never took, one line each (`check()` lists them).

        A turnless wire's side answers never requested, a job's state the app never saw to its end;
        none by default.
        """
        return []

    def unscripted(self, message: str, record: RecordedRequest, *, status: int = 400) -> Rendered:
        """The loud answer to a request with no scripted turn: a non-retryable error carrying `message`."""
        rendered = self.error(ErrorSpec(status=status, message=message, code="wirescript_unscripted"), record)
        rendered.headers["x-should-retry"] = "false"
        return rendered

    def check(self, record: RecordedRequest, *, skip: frozenset[str]) -> Violation | None:
        """The strict rule the request breaks, as the real API would refuse it, or None (the default: no rules).

        Called for every request the wire parsed, before a turn is chosen, outside the stub's lock,
        after the stub's `any.*` rules: a wire that reads its own state here (threads, stored
        responses) guards it with its own lock. The rule of the violation must be one of its `rules`
        (a violation of another is a loud problem: `strict_skip` could not name it); a refused
        request consumes no turn and is answered with `strict_error`.

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
        return bool(self.hosts) and host_matcher(self.hosts)(host)

    def claims_body(self, body: dict[str, Any]) -> bool:
        """Whether a body carrying a field several wires own (`messages`) reads as written for its API.

        Only asked to name the API a refused body looks meant for; the default: it cannot tell.
        """
        return False

    def field_type_message(self, key: str, value: Any, kinds: tuple[str, ...]) -> str:
        """Its API's words for a `field_types` field of another JSON type (`any.field-type`)."""
        return f"{key}: expected {' or '.join(kinds)}, got {json_type(value)}"

    @property
    def stop_map(self) -> Mapping[str, str]:
        """Every stop reason its stub's wires declare, mapped to the canonical one it stands for.

        Bound when the stub is made, so a turn scripted in another wire's vocabulary (OpenAI's
        `length`) is translated; its own `stop_reasons` while no stub holds it.
        """
        return self.stop_reasons if self._stop_map is None else self._stop_map

    def canonical_stop(self, turn: Turn) -> str:
        """The turn's stop reason in the canonical vocabulary (`end_turn`, `tool_use`, `max_tokens`, …).

        A reason of some wire's API is translated (OpenAI's `length` is `max_tokens`); one with no
        canonical equivalent passes through unchanged.
        """
        if turn.stop_reason is None:
            return "tool_use" if turn.tool_calls else "end_turn"
        return self.stop_map.get(turn.stop_reason, turn.stop_reason)

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


def known_stop_reasons(wires: Iterable[Wire]) -> frozenset[str]:
    """Every stop reason a turn may script for these wires: the canonical ones and each wire's own."""
    if isinstance(wires, (list, tuple)):  # a stub's: the default wires' stand-ins share one table
        return declared(wires, "known_stop_reasons", _known_stop_reasons)
    return _known_stop_reasons(wires)


def _known_stop_reasons(wires: Iterable[Wire]) -> frozenset[str]:
    return CANONICAL_STOP_REASONS.union(*map(_STOP_REASONS, wires))


_STOP_REASONS = operator.attrgetter("stop_reasons")


def bind_stops(wires: Sequence[Wire]) -> None:
    """Give each of one stub's wires the stop map of them all (`Wire.stop_map`), so each translates the others'.

    Raises:
        UsageError: Two wires map a stop reason to different canonical ones, a wire maps a canonical
            reason to another, or a wire another stub holds maps one differently.

    """
    stops = _stop_map(tuple(type(wire) for wire in wires))
    for index, wire in enumerate(wires):
        held = wire._stop_map
        if held is None or held is stops:
            wire._stop_map = stops
            continue
        clash = next((k for k in held.keys() & stops.keys() if held[k] != stops[k]), None)
        if clash is not None:
            raise UsageError(
                f"wires[{index}]: this {type(wire).__name__} instance serves another stub, whose wires map "
                f"the stop reason {clash!r} to {held[clash]!r}: give each stub fresh wire instances"
            )
        wire._stop_map = {**held, **stops}


@functools.lru_cache(maxsize=64)
def _stop_map(kinds: tuple[type[Wire], ...]) -> Mapping[str, str]:
    """The stop map of a stub whose wires are of these classes (declared on them: worked out once)."""
    stops: dict[str, str] = {}
    owner: dict[str, str] = {}
    for index, kind in enumerate(kinds):
        for native, canonical in kind.stop_reasons.items():
            if native in CANONICAL_STOP_REASONS and canonical != native:
                raise UsageError(
                    f"wires[{index}]: the {kind.name} wire maps the canonical stop reason {native!r} to "
                    f"{canonical!r}; a canonical reason stands for itself"
                )
            known = stops.setdefault(native, canonical)
            if known != canonical:
                raise UsageError(
                    f"wires[{index}]: the {kind.name} wire maps the stop reason {native!r} to {canonical!r}, "
                    f"the {owner[native]} wire to {known!r}; one stub serves one meaning of each reason"
                )
            owner.setdefault(native, kind.name)
    return MappingProxyType(stops)


def loud_error(status: int, kind: str, message: str, code: str) -> Rendered:
    """A non-retryable error every SDK reads: Anthropic's error envelope with OpenAI's `error.code` in it.

    What a request no wire serves is answered with (`unknown_endpoint`), and what the network guard
    answers a connection it refused with.
    """
    body = {
        "type": "error",
        "error": {"type": kind, "message": message, "code": code, "details": {"error_code": code}},
    }
    return Rendered(status, {"content-type": "application/json", "x-should-retry": "false"}, json_dumps(body).encode())


def unknown_endpoint(message: str) -> Rendered:
    """The loud 404 for a request no wire serves on a host no wire claims; readable by every SDK."""
    return loud_error(404, "not_found_error", message, "wirescript_unscripted")
