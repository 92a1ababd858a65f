"""Script models: what a turn can say, validated when the script is built.

A turn is provider-neutral: each wire renders the same `Turn` in its own format, so one
script drives an app on any provider. Turns are pydantic models; a plain dict of the same
shape, or a bare string (a text-only turn), is accepted wherever a turn is.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    NonNegativeInt,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import to_json

from ._models import construct, fits
from ._text import clip, did_you_mean, shown
from .errors import ScriptError
from .side import SideScript

if TYPE_CHECKING:
    from .recorded import RecordedRequest

__all__ = [
    "DEFAULT_QUEUE",
    "MAX_DEPTH",
    "MAX_FAULT_DELAY",
    "SERVER_TOOL_NAMES",
    "Citation",
    "ErrorSpec",
    "Fault",
    "ScriptLike",
    "ServerTool",
    "StreamError",
    "ToolCall",
    "Turn",
    "TurnLike",
    "Usage",
    "parse_turn",
    "parse_turns",
    "queue_label",
]

DEFAULT_QUEUE = "*"
"""The key of the queue that serves requests whose model has no queue of its own."""

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_FRAMING_HEADERS = frozenset({"content-length", "transfer-encoding", "connection"})

MAX_DEPTH = 200
"""The deepest nesting of lists and mappings a script (a file, or a tool input) may have."""


def queue_label(queue: str) -> str:
    """How messages name a queue's turns: `script` for the default queue, `script['claude-b']` for a model's."""
    return "script" if queue == DEFAULT_QUEUE else f"script[{queue!r}]"


class _Model(BaseModel):
    model_config = ConfigDict(
        # Field docstrings are not given to pydantic (`use_attribute_docstrings` costs ~30 ms of import
        # time on Python < 3.13); `script_json_schema()` reads them from the source instead.
        extra="forbid",
        frozen=True,
        strict=False,
        allow_inf_nan=False,
        # Each model's validator is built when a script is first validated, not when wirescript is imported.
        defer_build=True,
    )


def _json_object(value: dict[str, Any]) -> dict[str, Any]:
    problem = _not_json(value, "", set(), 1)
    if problem is not None:
        raise ValueError(problem)
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_json_object)]
"""A JSON object a model sends (a tool's input): refused when JSON cannot carry it."""


class ToolCall(_Model):
    """One tool call the model makes."""

    name: str = Field(min_length=1)
    """The tool's name, as the app registered it."""
    input: JsonObject = Field(default_factory=dict)
    """The arguments, a JSON object; it is streamed in several fragments."""
    id: str | None = Field(default=None, min_length=1)
    """The call id (`toolu_…`, `call_…`); generated deterministically when absent."""


_S, _I, _B, _N, _O, _L = "a string", "an integer", "a boolean", "a number", "an object", "a list"
_SEARCH_RESULT_KEYS = {"url": _S, "title": _S, "page_age": _S}
_FILE_RESULT_KEYS = {"file_id": _S, "filename": _S, "text": _S, "score": _N, "attributes": _O}
_FETCH_RESULT_KEYS = {"url": _S, "content": _S, "title": _S, "retrieved_at": _S}
_RUN_RESULT_KEYS = {"stdout": _S, "stderr": _S, "return_code": _I}
_LISTED_TOOL_KEYS = {"name": _S, "input_schema": _O, "description": _S, "annotations": _O}
_EDIT_RESULT_KEYS = {
    "view": {"content": _S, "file_type": _S, "num_lines": _I, "start_line": _I, "total_lines": _I},
    "create": {"is_file_update": _B},
    "str_replace": {"lines": _L, "new_lines": _I, "new_start": _I, "old_lines": _I, "old_start": _I},
}
_KINDS: dict[str, Callable[[Any], bool]] = {
    _S: lambda v: isinstance(v, str),
    _I: lambda v: isinstance(v, int) and not isinstance(v, bool),
    _B: lambda v: isinstance(v, bool),
    _N: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    _O: lambda v: isinstance(v, dict),
    _L: lambda v: isinstance(v, list),
}
_COMMON_CODES = ("invalid_tool_input", "unavailable", "too_many_requests")
_RUN_CODES = (*_COMMON_CODES, "execution_time_exceeded", "container_expired")

SERVER_TOOL_NAMES: dict[str, tuple[str, ...]] = {
    "web_search": (*_COMMON_CODES, "max_uses_exceeded", "query_too_long", "request_too_large"),
    "web_fetch": (
        *_COMMON_CODES,
        "url_too_long",
        "url_not_allowed",
        "url_not_in_prior_context",
        "url_not_accessible",
        "unsupported_content_type",
        "max_uses_exceeded",
        "content_too_large",
    ),
    "code_execution": _RUN_CODES,
    "bash_code_execution": (*_RUN_CODES, "output_file_too_large"),
    "text_editor_code_execution": (*_RUN_CODES, "file_not_found", "string_not_found"),
    "tool_search_tool_regex": (*_COMMON_CODES, "execution_time_exceeded"),
    "tool_search_tool_bm25": (*_COMMON_CODES, "execution_time_exceeded"),
    "file_search": (),
    "image_generation": (),
}
"""The built-in server tools a turn may name, each with the error codes its `error` may give.

The codes are the Anthropic API's (the anthropic SDK's `*_tool_result_error_code.py` types and the
tools' docs); an empty tuple means any code (the tool's answer has none of its own: a failed
`file_search_call` or `image_generation_call` just says `failed`). An MCP call (`server` given) has
its own tool names and any error message."""

MCP_LIST_TOOLS = "mcp_list_tools"
"""The `name` of a server tool entry that is an MCP server's tool listing (with `server`)."""


class ServerTool(_Model):
    """One tool the provider runs itself during the turn: a web search, code execution, an MCP server's tool.

    Each is rendered in the wire's own vocabulary, before the turn's text: an Anthropic
    `server_tool_use` block and its result block, an OpenAI Responses output item
    (`web_search_call`, ...), Gemini grounding metadata or code execution parts.
    """

    name: str = Field(min_length=1)
    """The built-in tool: `web_search`, `web_fetch`, `code_execution`, `bash_code_execution`,
    `text_editor_code_execution`, `tool_search_tool_regex`, `tool_search_tool_bm25`, `file_search`,
    `image_generation`. With `server`: the MCP tool's name, or `mcp_list_tools` for the server's
    tool listing."""
    input: JsonObject = Field(default_factory=dict)
    """What the model gave the tool: `{"query": ...}` for a search, `{"url": ...}` for a fetch,
    `{"code": ...}` or `{"command": ...}` for code execution, the MCP tool's arguments."""
    result: Any = None
    """What the tool gave back; its shape is the tool's (see the docs' server tools page): a list of
    `{url, title?, page_age?}` for `web_search`, of `{file_id, filename, text?, score?}` for
    `file_search`, of tool names for tool search, of `{name, input_schema?, description?}` for
    `mcp_list_tools`; `{url?, content, title?, retrieved_at?}` for `web_fetch`; `{stdout?, stderr?,
    return_code?}` for code execution; a base64 image for `image_generation`; text for an MCP tool.
    None (with no `error`): the call is left unanswered, which only a turn that also calls a client
    tool, or that pauses (`stop_reason: pause_turn`), may do."""
    error: str | None = Field(default=None, min_length=1)
    """The tool failed instead: its error code (`max_uses_exceeded`, `unavailable`, ...), or for an
    MCP tool the error message. Not with `result`."""
    server: str | None = Field(default=None, min_length=1)
    """The MCP server whose tool this is (Anthropic `mcp_servers[].name`, OpenAI `server_label`)."""
    id: str | None = Field(default=None, min_length=1)
    """The call id (`srvtoolu_…`, `ws_…`, ...); generated deterministically when absent."""

    @model_validator(mode="after")
    def _check(self) -> ServerTool:
        if self.server is None and self.name not in SERVER_TOOL_NAMES:
            names = list(SERVER_TOOL_NAMES)
            hint = did_you_mean(self.name, names)
            raise ValueError(
                f"unknown server tool {self.name!r}{hint} (expected one of: {', '.join(names)}; "
                "an MCP server's tool also gives 'server')"
            )
        if self.result is not None and self.error is not None:
            raise ValueError("give either 'result' (the tool's answer) or 'error' (its failure), not both")
        if self.result is not None:
            problem = _not_json(self.result, "result", set(), 1)
            if problem is not None:
                raise ValueError(problem)
            problem = _result_problem(self)
            if problem is not None:
                raise ValueError(problem)
        if self.error is not None and self.server is None:
            codes = SERVER_TOOL_NAMES[self.name]
            if codes and self.error not in codes:
                raise ValueError(
                    f"field 'error': {self.name}'s error codes are {', '.join(codes)}; got {self.error!r}"
                    f"{did_you_mean(self.error, codes)}"
                )
        if self.name == "text_editor_code_execution" and self.input.get("command") not in _EDIT_RESULT_KEYS:
            raise ValueError(
                "field 'input.command': a text_editor_code_execution call is one of "
                f"{', '.join(_EDIT_RESULT_KEYS)}; got {self.input.get('command')!r}"
            )
        return self

    @property
    def pending(self) -> bool:
        """Whether the call is left unanswered: neither a `result` nor an `error`."""
        return self.result is None and self.error is None


def _result_problem(tool: ServerTool) -> str | None:
    """Why a server tool's `result` does not have its tool's shape, or None."""
    name, result = tool.name, tool.result
    if tool.server is not None:
        if name == MCP_LIST_TOOLS:
            return _objects(result, "mcp_list_tools results", _LISTED_TOOL_KEYS, ("name",))
        if not isinstance(result, str):
            return f"field 'result': an MCP tool's result is its text, got {type(result).__name__}"
        return None
    if name == "web_search":
        return _objects(result, "web_search results", _SEARCH_RESULT_KEYS, ("url",))
    if name == "file_search":
        return _objects(result, "file_search results", _FILE_RESULT_KEYS, ("file_id", "filename"))
    if name.startswith("tool_search_tool_"):
        if not isinstance(result, list) or not all(isinstance(n, str) and n for n in result):
            return "field 'result': tool search results are a list of tool names"
        return None
    if name == "image_generation":
        if not isinstance(result, str) or not result:
            return "field 'result': an image_generation result is the image, base64-encoded"
        return None
    if name == "web_fetch":
        return _keys(result, "result", "a web_fetch result", _FETCH_RESULT_KEYS, ("content",))
    if name == "text_editor_code_execution":
        command = str(tool.input.get("command"))
        return _keys(result, "result", f"a text editor {command} result", _EDIT_RESULT_KEYS.get(command, {}), ())
    return _keys(result, "result", f"a {name} result", _RUN_RESULT_KEYS, ())


def _shape(keys: Mapping[str, str], required: tuple[str, ...]) -> str:
    return "{" + ", ".join(key if key in required else f"{key}?" for key in keys) + "}"


def _objects(value: Any, what: str, keys: Mapping[str, str], required: tuple[str, ...]) -> str | None:
    if not isinstance(value, list):
        return f"field 'result': {what} are a list of {_shape(keys, required)}, got {type(value).__name__}"
    for index, item in enumerate(value):
        problem = _keys(item, f"result[{index}]", f"a {what.removesuffix('s')}", keys, required)
        if problem is not None:
            return problem
    return None


def _keys(value: Any, where: str, what: str, keys: Mapping[str, str], required: tuple[str, ...]) -> str | None:
    """Why `value` is not an object of these keys (each of its JSON kind), naming the field; or None."""
    if not isinstance(value, dict):
        return f"field {where!r}: {what} is an object {_shape(keys, required)}, got {type(value).__name__}"
    for key, item in value.items():
        kind = keys.get(key)
        if kind is None:
            return (
                f"field {where!r}: {what} has no field {key!r} (expected: {', '.join(keys)})"
                f"{did_you_mean(key, list(keys))}"
            )
        if not _KINDS[kind](item):
            return f"field '{where}.{key}': expected {kind}, got {type(item).__name__}"
    missing = [key for key in required if key not in value]
    if missing:
        return f"field {where!r}: {what} needs {missing[0]!r} ({keys[missing[0]]})"
    return None


def _citation_shorthand(value: Any) -> Any:
    """A bare number is a citation of that source: `0` is `{"source": 0}`."""
    if isinstance(value, int) and not isinstance(value, bool):
        return {"source": value}
    return value


class Citation(_Model):
    """A source the turn's text cites: one of the turn's search results (`source`), or a page or file named here.

    A citation backs the whole text, or the words of it given as `span`. Rendered as Anthropic text
    blocks with `citations`, OpenAI `url_citation` and `file_citation` annotations, Gemini
    `groundingSupports`.
    """

    source: int | None = Field(default=None, ge=0)
    """The cited result's index among the turn's search results: the results of its `web_search` and
    `file_search` server tools, in order. A bare number in `citations` is this."""
    url: str | None = Field(default=None, min_length=1)
    """A web page cited by its address (a result of an earlier turn's search, say)."""
    title: str | None = None
    """The page's title (default: the result's, else the url)."""
    file_id: str | None = Field(default=None, min_length=1)
    """A file cited by its id (an OpenAI `file_citation`)."""
    filename: str | None = None
    """The cited file's name (default: the result's, else the file id)."""
    cited_text: str | None = None
    """The words quoted from the source (Anthropic `cited_text`); default: the cited span."""
    span: str | None = Field(default=None, min_length=1)
    """The words of the turn's `text` this citation backs (where they first occur); default: the whole
    text. Two citations' spans are the same words or do not overlap."""

    @model_validator(mode="after")
    def _check(self) -> Citation:
        named = [name for name in ("source", "url", "file_id") if getattr(self, name) is not None]
        if len(named) != 1:
            raise ValueError(
                "a citation names its source once: 'source' (an index into the turn's search results), 'url' or "
                f"'file_id'; got {' and '.join(map(repr, named)) or 'none of them'}"
            )
        return self


CitationLike = Annotated[
    Citation, BeforeValidator(_citation_shorthand, json_schema_input_type=Citation | NonNegativeInt)
]
"""A citation, or a bare number: the index of the cited source among the turn's search results."""


class Usage(_Model):
    """Token counts reported for the turn. Unset counts use wirescript's deterministic defaults.

    Each count is the value of the provider's own field: `input_tokens` is Anthropic's and Bedrock's
    uncached input, OpenAI's `prompt_tokens` and Gemini's `promptTokenCount` (which include cached
    tokens). With `derive` (or the stub's `usage="derive"`), every count left unset is worked out
    from the request instead, prompt caching included (`docs/usage.md`); a count given here wins.
    """

    input_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens; default 10."""
    output_tokens: int | None = Field(default=None, ge=0)
    """Completion tokens; default one per four characters of output, at least 1."""
    cache_read_input_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens read from the cache (Anthropic `cache_read_input_tokens`, OpenAI `cached_tokens`)."""
    cache_creation_input_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens written to the cache (Anthropic `cache_creation_input_tokens`, OpenAI `cache_write_tokens`)."""
    web_search_requests: int | None = Field(default=None, ge=0)
    """Web searches billed (Anthropic `usage.server_tool_use.web_search_requests`); default: the turn's
    `web_search` server tools that did not fail."""
    web_fetch_requests: int | None = Field(default=None, ge=0)
    """Web fetches billed (Anthropic `usage.server_tool_use.web_fetch_requests`); default: the turn's
    `web_fetch` server tools that did not fail."""
    cache_creation_1h_input_tokens: int | None = Field(default=None, ge=0)
    """Of `cache_creation_input_tokens`, those written with a 1-hour lifetime, the rest with 5 minutes
    (Anthropic `cache_creation.ephemeral_1h_input_tokens`, Bedrock `cacheDetails`); sent only when given."""
    derive: bool | None = None
    """Work the unset counts out from the request (True), or not (False) whatever the stub's `usage=`;
    None: as the stub says. `usage: "derive"` is short for `{"derive": True}`."""

    @field_validator(
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "cache_creation_1h_input_tokens",
        "web_search_requests",
        "web_fetch_requests",
    )
    @classmethod
    def _encodable(cls, value: int | None) -> int | None:
        if value is not None:
            _check_int(value)
        return value

    @model_validator(mode="after")
    def _split(self) -> Usage:
        hour, created = self.cache_creation_1h_input_tokens, self.cache_creation_input_tokens
        if hour is not None and (created is None or hour > created):
            raise ValueError(
                "'cache_creation_1h_input_tokens' is part of 'cache_creation_input_tokens', so that count is "
                f"needed and at least {hour}"
            )
        return self


@functools.cache
def _derive() -> Usage:
    """`usage: "derive"`: every count worked out from the request (built on first use, as the models are)."""
    return Usage(derive=True)


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
    """Extra response headers. Retryable statuses get `retry-after-ms: 1` unless given here. Names are
    HTTP tokens, values Latin-1 text without CR, LF or NUL; the framing headers (`content-length`,
    `transfer-encoding`, `connection`) are wirescript's."""

    @field_validator("headers", mode="after")
    @classmethod
    def _sendable(cls, headers: dict[str, str] | None) -> dict[str, str] | None:
        for name, value in (headers or {}).items():
            if not name or not _TOKEN.fullmatch(name):
                raise ValueError(
                    f"header name {name!r} is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~ only)"
                )
            if name.lower() in _FRAMING_HEADERS:
                raise ValueError(f"header {name!r} frames the response, which wirescript does; leave it out")
            if any(c in value for c in "\r\n\0"):
                raise ValueError(f"header {name!r}: its value holds a CR, LF or NUL, which no HTTP response can carry")
            try:
                value.encode("latin-1")
            except UnicodeEncodeError:
                raise ValueError(
                    f"header {name!r}: its value {clip(value, 40)!r} is not Latin-1, which HTTP headers carry; "
                    "encode it (for example percent-encode it) first"
                ) from None
        return headers


class StreamError(_Model):
    """An error event inside a 200 stream (Anthropic `event: error`, an OpenAI error chunk)."""

    type: str = "overloaded_error"
    """The error type."""
    message: str = "Overloaded"
    """The error message."""
    after: int = Field(default=1, ge=0)
    """How many events of the stream go out before the error event."""


MAX_FAULT_DELAY = 60.0
"""The longest delay a fault may script, in seconds: a longer one would only hang the suite."""

_STREAM_ENDS = ("cut_after", "disconnect_after", "timeout_after", "stream_error")


class Fault(_Model):
    """Wire faults applied to a turn's response.

    Counts are in events: the SSE frames of a streamed answer, in the order they would be sent. A
    JSON answer (the request did not stream, or the turn is an `error`) is one event, its body. A
    fault must take effect: one that cannot on the answer at hand (a count past the answer's end,
    a dropped event the answer does not send, a stream fault on a JSON answer) is answered with a
    loud error naming it and reported in `stub.problems`.
    """

    cut_after: int | None = Field(default=None, ge=0)
    """End the stream cleanly (EOF) after this many events; 0 sends an empty body."""
    drop: tuple[str, ...] = ()
    """Event names to leave out, e.g. `message_start`, `message_stop`, `[DONE]`, `response.completed`."""
    disconnect_after: int | None = Field(default=None, ge=0)
    """Raise the HTTP stack's `RemoteProtocolError` after this many events. 0: the connection drops
    before the response starts, which the SDK retries (with the next turn)."""
    delay: float = Field(default=0.0, ge=0, le=MAX_FAULT_DELAY, allow_inf_nan=False)
    """Seconds to sleep before each event (asyncio-friendly in async clients). A delay longer than
    the client's read timeout becomes the stack's `ReadTimeout` once that timeout has passed."""
    first_byte_delay: float = Field(default=0.0, ge=0, le=MAX_FAULT_DELAY, allow_inf_nan=False)
    """Seconds to sleep before the response starts. Longer than the client's read timeout: the
    stack's `ReadTimeout` once that timeout has passed, before the response starts."""
    timeout_after: int | None = Field(default=None, ge=0)
    """Raise the stack's `ReadTimeout` after this many events, at once (0: before the response
    starts, which the SDK retries). For a timeout that takes real time, use `delay`."""
    stream_error: StreamError | None = None
    """Send an in-stream error event, which ends the stream."""
    malformed_tool_json: bool = False
    """Send tool arguments that are not valid JSON (the turn needs a tool call)."""
    raw: str | bytes | None = None
    """Serve these exact body bytes (a string is sent as UTF-8) instead of the rendered turn, with
    the turn's status and headers. Only `first_byte_delay` combines with it."""

    @model_validator(mode="after")
    def _check(self) -> Fault:
        active = self.active()
        if not active:
            raise ValueError(f"a fault needs at least one of: {', '.join(type(self).model_fields)}")
        ends = [name for name in _STREAM_ENDS if name in active]
        if len(ends) > 1:
            raise ValueError(f"give at most one way to end the stream, got {' and '.join(map(repr, ends))}")
        others = [name for name in active if name not in ("raw", "first_byte_delay")]
        if self.raw is not None and others:
            raise ValueError(
                f"'raw' replaces the whole body, so it cannot be combined with {', '.join(map(repr, others))} "
                "(only 'first_byte_delay' can)"
            )
        if "" in self.drop:
            raise ValueError("'drop' names events; an empty name matches none")
        if len(set(self.drop)) != len(self.drop):
            raise ValueError(f"'drop' names an event twice: {list(self.drop)!r}")
        return self

    def active(self) -> list[str]:
        """The names of the fields that do something, in declaration order."""
        idle: dict[str, object] = {"drop": (), "delay": 0.0, "first_byte_delay": 0.0, "malformed_tool_json": False}
        return [name for name in type(self).model_fields if getattr(self, name) != idle.get(name)]


class Turn(_Model):
    """One scripted model answer.

    Text, thinking, server tools and tool calls may be combined; they are rendered thinking first,
    then the server tools, the text, then the tool calls in order. A turn with none of them is a
    valid, empty answer.
    """

    text: str | None = None
    """The answer's text; streamed in several deltas."""
    citations: tuple[CitationLike, ...] | None = None
    """The sources the text cites: a number (the index of one of the turn's search results) or a
    `Citation`. Each backs the whole text, or the words of it given as its `span`. Needs `text`."""
    server_tools: tuple[ServerTool, ...] | None = None
    """Tools the provider runs itself before the text (web search, web fetch, code execution, file
    search, an MCP server's tools): each with its `input` and its `result` (or `error`)."""
    tool: ToolCall | None = None
    """One tool call (shorthand for `tools=[...]` with one entry)."""
    tools: tuple[ToolCall, ...] | None = None
    """Several tool calls in one turn (parallel tool calls)."""
    thinking: str | None = None
    """Reasoning text: an Anthropic thinking block, an OpenAI reasoning item."""
    thinking_signature: str | None = Field(default=None, min_length=1)
    """The thinking block's `signature`, sent as given by the wires that carry one (Anthropic Messages,
    Anthropic on Vertex AI and Bedrock, Bedrock Converse); the other wires ignore it. Needs `thinking`.
    Default: a placeholder (`sig_0000`, numbered by request). Record mode keeps the provider's."""
    usage: Usage | None = None
    """Token counts; `"derive"` works them out from the request (`Usage.derive`)."""
    stop_reason: str | None = Field(default=None, min_length=1)
    """The stop reason. Default: `tool_use` when the turn calls a tool, else `end_turn`. Common values are
    translated per provider (`max_tokens` is OpenAI's `length`, `tool_use` its `tool_calls`); the values
    a stub accepts are its wires' (checked when the stub is built)."""
    error: ErrorSpec | None = None
    """Answer with an HTTP error instead of a message."""
    fault: Fault | None = None
    """Damage the response on the wire."""
    unchecked: bool | None = None
    """True: serve the turn even if the real API could not give it to the request (a tool the request does not
    offer, input or text that breaks a schema the provider guarantees, text where a tool call is forced):
    for a test of how the app copes with an impossible answer. Without it such a turn is an
    `impossible_answer` (see the answer rules in `docs/answers.md`)."""

    @field_validator("usage", mode="before")
    @classmethod
    def _derive_shorthand(cls, value: Any) -> Any:
        if value == "derive":
            return _derive()
        if isinstance(value, str):
            raise ValueError(f"expected token counts (a dict) or 'derive', got the string {clip(value, 40)!r}")
        return value

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> Turn:
        if self.tool is not None and self.tools is not None:
            raise ValueError("give either 'tool' (one call) or 'tools' (several), not both")
        if self.error is not None:
            clash = [f for f in _ANSWER_FIELDS if getattr(self, f)]
            if clash:
                raise ValueError(
                    f"an 'error' turn answers with an HTTP error, so it cannot also have {', '.join(map(repr, clash))}"
                )
        if self.thinking_signature is not None and self.thinking is None:
            raise ValueError(
                "'thinking_signature' signs a thinking block, so the turn needs 'thinking' (its text, '' for none)"
            )
        if self.fault is not None and self.fault.malformed_tool_json and not self.tool_calls:
            raise ValueError("'fault.malformed_tool_json' breaks tool arguments, so the turn needs a 'tool' or 'tools'")
        if self.server_tools is not None or self.citations is not None:
            _check_server_tools(self)
        bad = None if info.context is _ENCODABLE else _unencodable(self, "")
        if bad is not None:
            where, char = bad
            raise ValueError(
                f"field {where!r} holds the lone surrogate {char!r}, which UTF-8 cannot encode, so no "
                "provider could send it"
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
        if self.server_tools:
            parts.extend(f"server tool {t.name}" for t in self.server_tools)
        if self.text is not None:
            parts.append(f"text {_short(self.text)}")
        parts.extend(f"tool {c.name}" for c in self.tool_calls)
        if self.fault is not None:
            parts.append("fault")
        return ", ".join(parts) or "empty"


_ANSWER_FIELDS = (
    "text",
    "citations",
    "server_tools",
    "tool",
    "tools",
    "thinking",
    "thinking_signature",
    "usage",
    "stop_reason",
    "unchecked",
)
"""The fields of a message answer, which an `error` turn cannot have."""


def sources(turn: Turn) -> list[tuple[ServerTool, dict[str, Any]]]:
    """The turn's search results a citation's `source` indexes: each `web_search` and `file_search` result, in order.

    With `citation_spans`, what the validation and the wires (`wires/_server.py`) read of a turn's citations.
    """
    return [
        (tool, result)
        for tool in turn.server_tools or ()
        if tool.name in ("web_search", "file_search") and tool.server is None and isinstance(tool.result, list)
        for result in tool.result
    ]


def citation_spans(turn: Turn) -> list[tuple[int, int]]:
    """Where in the turn's text each citation's span is, as `(start, end)` character offsets, in citation order."""
    text = turn.text or ""
    spans = []
    for citation in turn.citations or ():
        if citation.span is None:
            spans.append((0, len(text)))
            continue
        start = text.find(citation.span)
        spans.append((start, start + len(citation.span)))
    return spans


def _check_server_tools(turn: Turn) -> None:
    """The turn's server tools and citations hold together: answered calls, known sources, spans in the text."""
    for index, tool in enumerate(turn.server_tools or ()):
        if tool.pending and not turn.tool_calls and turn.stop_reason != "pause_turn":
            raise ValueError(
                f"field 'server_tools.{index}': {tool.name} has neither a 'result' nor an 'error'. A server tool "
                "is left unanswered only in a turn that also calls a client tool ('tool' or 'tools': the API runs "
                "it once the tool results come back) or that pauses (stop_reason 'pause_turn'); give its result"
            )
    if turn.citations is None:
        return
    text = turn.text
    if not text:
        raise ValueError("'citations' are the sources of the turn's text, so the turn needs a non-empty 'text'")
    found = sources(turn)
    for index, citation in enumerate(turn.citations):
        if citation.source is not None and citation.source >= len(found):
            raise ValueError(
                f"field 'citations.{index}.source': {citation.source} names no search result: the turn's "
                f"web_search and file_search server tools give {len(found)} result(s), numbered from 0"
            )
        if citation.span is not None and citation.span not in text:
            raise ValueError(
                f"field 'citations.{index}.span': {_short(citation.span)} is not in the turn's text {_short(text)}"
            )
    ordered = sorted(set(citation_spans(turn)))
    for (start, end), (next_start, next_end) in itertools.pairwise(ordered):
        if next_start < end:
            raise ValueError(
                f"field 'citations': the spans {_short(text[start:end])} and {_short(text[next_start:next_end])} "
                "overlap; a text block is cited whole, so two spans are the same words or do not overlap"
            )


_JSON_KINDS = "expected an object, array, string, number, true, false or null"
_JSON_LEAVES = frozenset({str, bool, type(None)})


def _check_int(value: int) -> None:
    """Refuse an int that JSON encoding cannot write (Python limits int-to-text conversion to 4,300 digits)."""
    try:
        str(value)
    except ValueError:
        raise ValueError(
            f"an integer of {value.bit_length()} bits is too long to send as JSON (Python writes ints of at most "
            "4,300 digits as text)"
        ) from None


def _not_json(value: Any, where: str, open_containers: set[int], depth: int) -> str | None:
    """Why `value` cannot be sent as JSON (naming where in it), or None when it can.

    A model's tool arguments are JSON, so a value `json.dumps` would reject, or would turn into
    something that is not JSON (NaN, Infinity) or that reads back differently (a non-string key),
    is refused when the script is built instead of when the turn is served.
    """
    cls = value.__class__
    at = f" at {where!r}" if where else ""
    if cls is not dict and cls is not list:  # a plain dict or list goes straight to its items
        if value is None or isinstance(value, (str, bool)):
            return None
        if isinstance(value, int):
            try:
                _check_int(value)
            except ValueError as exc:
                return f"{exc}{at}"
            return None
        if isinstance(value, float):
            if math.isfinite(value):
                return None
            return f"{value!r}{at} is not a JSON number (JSON has no NaN or Infinity)"
        if not isinstance(value, (Mapping, list, tuple)):
            return f"{type(value).__name__} {shown(value, 50)}{at} is not a JSON value ({_JSON_KINDS})"
    if id(value) in open_containers:
        return f"the value{at} is an object or array it is itself inside; JSON cannot hold a cycle"
    if depth > MAX_DEPTH:
        return f"the value{at} is nested more than {MAX_DEPTH} levels deep (the most a script may nest)"
    open_containers.add(id(value))
    try:
        # A str, bool or None item is JSON as it is: told here by its class, without a call of its own.
        if cls is dict or (cls is not list and isinstance(value, Mapping)):
            for key, item in value.items():
                if not isinstance(key, str):
                    return f"the key {key!r}{at} has type {type(key).__name__}; JSON object keys are strings"
                if item.__class__ not in _JSON_LEAVES:
                    problem = _not_json(item, f"{where}.{key}" if where else key, open_containers, depth + 1)
                    if problem is not None:
                        return problem
        else:
            for index, item in enumerate(value):
                if item.__class__ not in _JSON_LEAVES:
                    problem = _not_json(item, f"{where}[{index}]", open_containers, depth + 1)
                    if problem is not None:
                        return problem
    finally:
        open_containers.discard(id(value))
    return None


_NO_TEXT = frozenset({bool, int, float, bytes})


@functools.cache
def _field_names(model: type[BaseModel]) -> tuple[str, ...]:
    """A model's field names in declaration order, read once per class."""
    return tuple(model.model_fields)


def _unencodable(value: Any, where: str) -> tuple[str, str] | None:
    """The first string (or dict key) in `value` that UTF-8 cannot encode: (its field path, the character).

    Models are walked field by field in declaration order (what `model_dump` would give, without
    building it); an ASCII string needs no encoding to be known good.
    """
    cls = value.__class__
    if value is None or cls in _NO_TEXT:
        return None
    if cls is str or isinstance(value, str):
        if value.isascii():
            return None
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return where, value[exc.start]
        return None
    # A plain dict or list is told by its class before any ABC check (`Mapping`), which costs more.
    if cls is dict or (cls is not list and isinstance(value, Mapping)):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            found = _unencodable(key, path) or _unencodable(item, path)
            if found is not None:
                return found
        return None
    if cls is list or isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _unencodable(item, f"{where}[{index}]")
            if found is not None:
                return found
        return None
    if isinstance(value, BaseModel):
        given = value.model_fields_set  # a default holds no text of the script's
        for name in _field_names(type(value)):
            if name not in given:
                continue
            item = getattr(value, name)
            if item is not None and item.__class__ not in _NO_TEXT:
                found = _unencodable(item, f"{where}.{name}" if where else name)
                if found is not None:
                    return found
    return None


def _short(text: str, limit: int = 40) -> str:
    return repr(clip(text, limit))


TurnLike: TypeAlias = Turn | Mapping[str, Any] | str
"""A turn: a `Turn`, a dict of the same shape, or a string (a text-only turn)."""

ScriptLike: TypeAlias = (
    Sequence[TurnLike]
    | Mapping[str, Sequence[TurnLike] | SideScript]
    | Callable[["RecordedRequest"], "TurnLike | None"]
)
"""A script: a list of turns served in order; a dict of such lists keyed by model name (`"*"` for the
rest), which may carry the side endpoints' `SideScript` as its `"$side"` entry; or a function from
the recorded request to the turn (None: unscripted)."""

_TURN_FIELDS = tuple(Turn.model_fields)


def parse_turn(value: object, where: str = "turn") -> Turn:
    """Validate one turn, raising `ScriptError` that names `where` and the offending field."""
    if isinstance(value, Turn):
        return value
    if isinstance(value, str):
        value = {"text": value}
    if not isinstance(value, Mapping):
        raise ScriptError(
            f"{where}: expected a turn (a dict such as {{'text': 'Hi'}}, a Turn, or a string), "
            f"got {type(value).__name__}: {shown(value)}"
        )
    try:
        return Turn.model_validate(value)
    except ValidationError as exc:
        raise ScriptError(_explain(exc, where)) from None


def parse_turns(values: object, where: str = "script") -> list[Turn]:
    """Validate a list of turns; each error names `where[index]` and the field."""
    if (values.__class__ is not list and values.__class__ is not tuple) and (
        isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence)
    ):
        hint = ""
        if isinstance(values, os.PathLike) or (isinstance(values, str) and values.endswith((".json", ".yaml", ".yml"))):
            hint = " (for a script file, pass load_script(path))"
        raise ScriptError(f"{where}: expected a list of turns, got {type(values).__name__}{hint}")
    items: list[object] = []
    texts = True  # whether every turn is a text alone (`_text_turn`)
    for value in values:
        if value.__class__ is not dict:  # the usual turn needs no look at its type
            if isinstance(value, str):
                value = {"text": value}
            elif not isinstance(value, (dict, Turn)) and isinstance(value, Mapping):
                value = dict(value)
        if texts and (value.__class__ is not dict or len(value) != 1 or value.get("text").__class__ is not str):
            texts = False
        items.append(value)
    if texts:  # the commonest script: no field but `text`, each a str that encodes (else validated, to say why)
        made = [_text_turn(value["text"]) for value in items]  # type: ignore[index]
        if None not in made:
            return made  # type: ignore[return-value]
    try:  # the whole list in one validation: a 20-turn script is built in a few microseconds a turn
        return _turns().validate_python(items, context=_ENCODABLE if _all_encodable(items) else None)
    except ValidationError as exc:
        bad = next(int(e["loc"][0]) for e in exc.errors(include_url=False) if e["loc"] and isinstance(e["loc"][0], int))
        parse_turn(items[bad], f"{where}[{bad}]")  # the same message as validating that turn alone
        raise  # pragma: no cover - the turn alone fails as it did in the list


def _text_turn(text: str) -> Turn | None:
    """The turn `{"text": text}` validates to, made without the validator; None when `text` does not encode.

    A text alone meets every check of `Turn` but that it encodes as UTF-8 (ASCII always does), so
    the validated turn is the validated empty text's fields with this text, and `text` the one field
    set. It is made as pydantic's `model_construct` makes a model (`_models.construct`, where the
    model fits it), which `tests/test_setup_shortcuts.py` holds to the validator.
    """
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: the validator says where
            return None
    if not _TEXT_FITS:  # another pydantic's layout: the validator makes it
        return None
    fields = _empty_text().copy()
    fields["text"] = text
    return construct(Turn, _TEXT_SET, fields)


_TEXT_SET = {"text"}
"""The fields set of every text turn `_text_turn` makes: one set for all (a turn is frozen, so pydantic adds
no field to it; a copy gets its own), not a 216-byte set per turn of a script."""


_TEXT_FITS = fits(Turn)
"""Whether a text turn can be made as `model_construct` makes one (pydantic 2's layout): checked once."""


@functools.cache
def _empty_text() -> dict[str, Any]:
    """The fields of `Turn(text="")`, validated once, in the validator's order: what `_text_turn` copies."""
    return dict(vars(Turn.model_validate({"text": ""})))


@functools.cache
def _turns() -> TypeAdapter[list[Turn]]:
    """The validator of a whole list of turns, built when the first script is validated."""
    return TypeAdapter(list[Turn])


_ENCODABLE: dict[str, bool] = {"wirescript.encodable": True}
"""The validation context that tells `Turn` its input is known to hold no lone surrogate (`_all_encodable`)."""


def _all_encodable(items: list[object]) -> bool:
    """Whether every string (and key) of these turns is known to encode as UTF-8, proven in one pass.

    pydantic-core's `to_json` writes UTF-8 and refuses a lone surrogate, the one string UTF-8
    cannot carry. Whatever else it refuses or cannot walk (an object it does not know, a cycle,
    deep nesting) leaves the proof unmade. The validated turns hold only strings the input holds.
    When not proven, each turn is walked (`_unencodable`) as validation builds it, which names the
    field; `Turn`s were walked when built.
    """
    try:
        to_json([item for item in items if item.__class__ is not Turn])
    except (ValueError, RecursionError):  # pydantic-core's serialization error is a ValueError
        return False
    return True


def _explain(exc: ValidationError, where: str) -> str:
    lines = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            lines.append(f"unknown field {loc!r}{_suggest(err['loc'])}")
            continue
        got = err.get("input")
        got_text = "" if err["type"] in ("value_error", "missing") else f", got {type(got).__name__} {shown(got, 50)}"
        msg = err["msg"].removeprefix("Value error, ")
        inner = _INNER_FIELD.match(msg)
        if inner is not None and loc:  # a nested model names its own field: one path for both
            loc, msg = f"{loc}.{inner.group(1)}", inner.group(2)
        lines.append(f"field {loc!r}: {msg}{got_text}" if loc else f"{msg}")
    if len(lines) == 1:
        return f"invalid {where}: {lines[0]}"
    return f"invalid {where}:" + "".join(f"\n  - {line}" for line in lines)


_INNER_FIELD = re.compile(r"field '([^']+)': (.*)", re.DOTALL)


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
    return f" (expected one of: {', '.join(names)}){did_you_mean(str(loc[-1]), names, cutoff=0.75)}"


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None
