"""Anthropic Messages API: `POST /v1/messages`, JSON or SSE."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, TypeVar
from urllib.parse import unquote

from ..._exchange import CHUNK_BYTES
from ...recorded import RecordedRequest
from ...script import ErrorSpec, StreamError, Turn
from ...sse import PIECE, delta_template, encode_deltas, encode_event, encode_pieces, json_dumps, json_string
from .. import _messages
from .._answers import Offer
from .._decode import as_list, decoded_error, is_event_stream, json_body, sse_json
from .._messages_answers import ANSWER_FIELDS, ANSWER_RULES, messages_offer
from .._messages_rules import header_betas
from .._messages_tools import server_tools_problem
from .._render import chunks, error_message, plain_text, retry_headers
from .._rules import ModelTable, Violation
from ..base import Frame, OneChunk, Parsed, Rendered, Wire
from .caching import ANTHROPIC_CACHING
from .models import CLAUDE_MODELS, ClaudeModel
from .rules import RULES, check_anthropic, plainly_valid, rules_violation

__all__ = ["ANTHROPIC_ERROR_TYPES", "AnthropicWire"]

ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
"""The documented `error.type` for each status; other 4xx are `invalid_request_error`, other 5xx `api_error`."""

_THREADS_LOCK = threading.Lock()
"""Held to read or add an Anthropic wire's thread (only requests that carry `thread` do): one dict operation each."""


def _thread(wire: AnthropicWire, thread: Mapping[str, Any]) -> tuple[list[Any], list[Any], str | None] | None:
    """The conversation, tools and system prompt the wire holds for a continued thread, if it answered it."""
    with _THREADS_LOCK:
        threads = wire._threads
        return threads.get(str(thread.get("previous_message_id"))) if threads is not None else None


_SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
_JSON_HEADERS = {"content-type": "application/json"}


def _error_type(status: int) -> str:
    return ANTHROPIC_ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "api_error")


class AnthropicWire(Wire):
    """Anthropic Messages, including anthropic 2.x's server-held message threads.

    A threaded request (`thread: {"type": "continue", ...}`) sends only the new messages; the
    wire remembers each thread's conversation, tools and system prompt, so the record still shows
    the whole conversation the model was given.
    """

    name = "anthropic"
    endpoint = "POST …/v1/messages"
    endpoints = (
        "POST /v1/messages",
        "POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict",
        "POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:streamRawPredict",
    )
    credential_headers = ("x-api-key",)
    hosts = (
        "api.anthropic.com",
        "*.services.ai.azure.com",  # Claude on Azure AI Foundry (`anthropic.AnthropicFoundry`)
    )
    retry_count_header = "x-stainless-retry-count"
    rules = RULES
    answer_rules = ANSWER_RULES
    answer_fields = ANSWER_FIELDS
    models: ClassVar[ModelTable[ClaudeModel]] = CLAUDE_MODELS
    """The Claude models the model-dependent strict rules know (output limits, prefills, sampling): a
    subclass may declare an updated table (`CLAUDE_MODELS.updated({...})`); an unknown model is never refused."""
    caching = ANTHROPIC_CACHING
    label = "Anthropic Messages (POST /v1/messages)"
    own_fields = ("system", "max_tokens", "messages")
    unknown_field = "{key}: Extra inputs are not permitted"
    field_types: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "model": ("string",),
        "max_tokens": ("integer",),
        "messages": ("array",),
        "stream": ("boolean",),
        "system": ("string", "array"),
        "tools": ("array",),
        "temperature": ("number",),
    }
    closing = frozenset({"message_stop"})
    events = frozenset(
        {
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        }
    )

    _threads: dict[str, tuple[list[Any], list[Any], str | None]] | None = None
    """The threads this wire answered (by message id), made when a request first carries one (`_THREADS_LOCK`)."""

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """`POST …/v1/messages` (the beta endpoint's `?beta=true` included) on any host, and Vertex AI's.

        Vertex AI (`anthropic.AnthropicVertex`): `…/publishers/anthropic/models/{model}:rawPredict`
        and `:streamRawPredict`.
        """
        if method != "POST":
            return False
        return path.endswith("/v1/messages") or (_VERTEX in path and _vertex_model(path) is not None)

    @staticmethod
    def tool_result_text(result: Mapping[str, Any]) -> str | None:
        """A `tool_result` block's `content`: a string, or its text blocks joined."""
        return _messages.tool_result_text(result)

    def parse(self, body: Any, path: str) -> Parsed:
        """Model, system, messages, tools and tool_result blocks of a Messages request."""
        parsed = _messages.parse_messages(body)
        model = _vertex_model(path) if _VERTEX in path else None  # Vertex AI names the model in the path, not the body
        if model is not None:
            parsed.model = model
        return parsed

    def resolve(self, record: RecordedRequest) -> None:
        """Fill in a continued thread's earlier conversation, tools and system prompt."""
        thread = record.body.get("thread") if isinstance(record.body, dict) else None
        if not isinstance(thread, dict) or thread.get("type") != "continue":
            return
        known = _thread(self, thread)
        if known is None:
            return
        conversation, tools, system = known
        record.conversation = [*conversation, *record.messages]
        if "tools" not in record.body:
            record.tools = tools
            record.tool_names = [t["name"] for t in tools if isinstance(t, dict) and "name" in t]
        if "system" not in record.body:
            record.system = system

    def check(self, record: RecordedRequest, *, skip: frozenset[str]) -> Violation | None:
        """The Anthropic strict rules; a continued thread is checked with the conversation the wire holds for it.

        The API version and betas come from the request: the body's `anthropic_version` (Vertex AI
        carries it there), else the `anthropic-version` header; the `anthropic-beta` header.
        """
        body = record.body
        if not isinstance(body, dict):
            return None
        history = None
        thread = body.get("thread")
        if isinstance(thread, dict) and thread.get("type") == "continue":
            known = _thread(self, thread)
            history = known[0] if known is not None else None
        if "model" not in body and _vertex_model(record.path) is not None:
            body = {**body, "model": record.model}  # Vertex AI names the model in the path, as the API accepts
        if history is None and plainly_valid(body, self.models):  # no rule can refuse it: the headers are not read
            return None
        version = body.get("anthropic_version")
        headers = record.headers
        return rules_violation(
            body,
            history=history,
            skip=skip,
            betas=header_betas(headers.get("anthropic-beta")),
            anthropic_version=version if isinstance(version, str) else headers.get("anthropic-version"),
            models=self.models,
        )

    @staticmethod
    def check_body(body: dict[str, Any], *, skip: frozenset[str], **context: Any) -> Violation | None:
        """Its rules over a bare body, with the context `check` reads from the wire (`strict.check_request`)."""
        return check_anthropic(
            body,
            history=context.get("history"),
            skip=skip,
            betas=context.get("betas") or (),
            anthropic_version=context.get("anthropic_version"),
        )

    def claims_body(self, body: dict[str, Any]) -> bool:
        """A body with a field only Messages has (`system`, `thinking`, …), or a tool use, tool result or thinking."""
        if any(key in body for key in _OWN_HINTS):
            return True
        messages = body.get("messages")
        for message in messages if isinstance(messages, list) else []:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") in ("tool_use", "tool_result", "thinking"):
                    return True
        return False

    def field_type_message(self, key: str, value: Any, kinds: tuple[str, ...]) -> str:
        """Pydantic's words, as the API answers: `max_tokens: Input should be a valid integer`."""
        return f"{key}: Input should be a valid {_PYDANTIC.get(kinds[0], kinds[0])}"

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        """A Message as JSON, or the documented SSE event sequence when the request streams.

        A plain text turn (no thinking, tools, usage, server tools or citations) on a request that
        continues no thread is rendered from the bytes kept for its text, model and stop reason
        (`_plain`), around the message id: the bytes the full rendering gives.
        """
        index = record.index
        model = record.model or "claude-wirescript"
        body = record.body
        stream = record.stream
        if (joined or not stream) and plain_text(turn) and not (isinstance(body, dict) and "thread" in body):
            stop = "end_turn" if turn.stop_reason is None else self.canonical_stop(turn)
            kept = _PLAIN.get((turn.text, model, stop, stream))
            if kept is not None:
                before, after, closing = kept
                data = b"".join((before, b'"msg_%04d"' % index, after))
                if not stream:
                    return Rendered(200, {"content-type": "application/json", "request-id": f"req_{index:04d}"}, data)
                end = len(data) - closing
                if end < CHUNK_BYTES:
                    return Rendered(
                        200,
                        {**_SSE_HEADERS, "request-id": f"req_{index:04d}"},
                        frames=OneChunk(data, end, "message_start", "message_stop"),
                    )
            return self._plain(turn, record, model, stop, joined)
        return self._render(turn, record, model, malformed_tool_json, joined)

    def _plain(self, turn: Turn, record: RecordedRequest, model: str, stop: str, joined: bool) -> Rendered:
        """`_render` of a plain text turn, its bytes kept around the message id for the next answer of the same text."""
        rendered = self._render(turn, record, model, False, joined)
        frames = rendered.frames
        if frames is None:
            data, closing = rendered.body, 0
        elif isinstance(frames, OneChunk):
            data, closing = frames.body, len(frames.body) - frames.content_end
        else:  # not one chunk: a long answer, rendered as it is read
            return rendered
        msg_id = b'"msg_%04d"' % record.index
        before, found, after = data.partition(msg_id)  # the Message's first field: nothing comes before it
        if found:
            if len(_PLAIN) >= _PLAIN_MOST:  # a suite's many texts: the newest are kept, not the first few
                _PLAIN.clear()
            _PLAIN[(turn.text, model, stop, record.stream)] = (before, after, closing)
        return rendered

    def _render(
        self, turn: Turn, record: RecordedRequest, model: str, malformed_tool_json: bool, joined: bool
    ) -> Rendered:
        msg_id = f"msg_{record.index:04d}"
        message, arguments = _messages.message(turn, record.index, model, msg_id, self.canonical_stop(turn))
        if isinstance(record.body, dict) and "thread" in record.body:
            with _THREADS_LOCK:
                if self._threads is None:
                    self._threads = {}
                self._threads[msg_id] = (
                    [*record.conversation, {"role": "assistant", "content": message["content"]}],
                    record.tools,
                    record.system,
                )
        request_id = f"req_{record.index:04d}"
        if not record.stream:
            return Rendered(200, {**_JSON_HEADERS, "request-id": request_id}, json_dumps(message).encode())
        if turn.server_tools is not None or turn.citations is not None:
            frames = _rich_stream(message, arguments, malformed_tool_json, joined)
        else:
            frames = (joined and _one_chunk(message, arguments)) or _stream(
                message, arguments, malformed_tool_json, joined
            )
        return Rendered(200, {**_SSE_HEADERS, "request-id": request_id}, frames=frames)

    def offer(self, record: RecordedRequest) -> Offer | None:
        """The request's tools (a continued thread's included), `tool_choice` and JSON output format.

        A continued thread this wire does not know, sent without `tools`, may have tools of its own: its tool
        names are not checked.
        """
        body = record.body
        if not isinstance(body, dict):
            return None
        tools: list[Any] | None = record.tools
        thread = body.get("thread")
        if not tools and "tools" not in body and isinstance(thread, dict) and thread.get("type") == "continue":
            known = _thread(self, thread) is not None
            tools = None if not known else tools
        return messages_offer(body, tools)

    def server_tools_problem(self, turn: Turn, record: RecordedRequest) -> str | None:
        """Why the Messages API could not have answered with these server tools or citations (not enabled), or None."""
        return server_tools_problem(turn, record)

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """`{"type": "error", "error": {"type", "message"}, "request_id"}` with the status and a `request-id` header.

        The body's `request_id` is the header's, as the API sends them (the anthropic SDK's
        `ErrorResponse` has the field).
        """
        error: dict[str, Any] = {
            "type": spec.type or _error_type(spec.status),
            "message": error_message(spec),
        }
        if spec.code is not None:
            error["details"] = {"error_code": spec.code}
        request_id = f"req_{record.index:04d}"
        headers = {**_JSON_HEADERS, "request-id": request_id, **retry_headers(spec, self.retryable)}
        body = {"type": "error", "error": error, "request_id": request_id}
        return Rendered(spec.status, headers, json_dumps(body).encode())

    def decode(self, status: int, headers: Mapping[str, str], body: bytes) -> dict[str, Any] | None:
        """A Message (JSON or its SSE events) or an error envelope as a turn.

        A thinking block gives its text and its signature (`thinking_signature`; of several blocks,
        the texts joined and no signature, which signs one block); server tool blocks give the
        turn's `server_tools`, cited text its `citations`; `redacted_thinking` is left out. An `error` event
        inside a stream becomes the turn's `fault.stream_error`, after what was streamed before it.
        """
        if status >= 400:
            data = json_body(body)
            error = data.get("error") if isinstance(data, dict) else None
            error = error if isinstance(error, dict) else {}
            details = error.get("details")
            code = details.get("error_code") if isinstance(details, dict) else None
            return decoded_error(status, error.get("type"), error.get("message"), code)
        if not is_event_stream(headers):
            message = json_body(body)
            if not isinstance(message, dict) or message.get("type") != "message":
                return None
            return _messages.decoded_message(
                self, as_list(message.get("content")), message.get("stop_reason"), message.get("usage")
            )
        return _messages.decoded_events(self, sse_json(body))

    def stream_error(self, spec: StreamError, record: RecordedRequest) -> Frame:
        """`event: error` with the error envelope."""
        data = {"type": "error", "error": {"type": spec.type, "message": spec.message}}
        return Frame("error", encode_event("error", json_dumps(data)))


_OWN_HINTS = ("system", "thinking", "stop_sequences", "anthropic_version")
"""Top-level fields of Messages that no other API's body carries: a body with one is written for it."""
_PYDANTIC = {"array": "list", "object": "dictionary"}
"""JSON type names as pydantic's messages call them."""

_VERTEX = "/publishers/anthropic/models/"


def _vertex_model(path: str) -> str | None:
    """The model of a Vertex AI `…/publishers/anthropic/models/{model}:rawPredict` path (not count-tokens)."""
    head, found, tail = path.rpartition(_VERTEX)
    if not found or not head:
        return None
    model, colon, verb = tail.partition(":")
    if not colon or verb not in ("rawPredict", "streamRawPredict") or not model or "/" in model:
        return None
    return None if model == "count-tokens" else unquote(model)


def _stream(message: dict[str, Any], arguments: list[str], malformed_tool_json: bool, joined: bool) -> Iterator[Frame]:
    """The documented event sequence of a Message (`_messages.stream_items`), as SSE frames."""
    for item in _messages.stream_items(message, arguments, malformed_tool_json):
        if isinstance(item, _messages.Pieces):
            # The data around a piece is the same in every answer for a block index and delta type: encoded once.
            shape = (item.index, item.kind, item.key)
            template = _TEMPLATES.get(shape)
            if template is None:
                template = delta_template("content_block_delta", item.event(PIECE))
                if template is not None:
                    _keep(_TEMPLATES, shape, template)
            if template is None:
                encoded = encode_deltas("content_block_delta", item.event(PIECE), item.pieces, joined=joined)
            else:
                encoded = encode_pieces(template, item.pieces, joined=joined)
            for chunk in encoded:
                yield Frame("content_block_delta", chunk)
            continue
        name, data = item
        frame = _CONSTANT.get(name)  # ping, message_stop: the same bytes in every answer
        if frame is None and name == "message_start":  # the same around its id for a model and usage
            frame = _message_start(data)
        elif frame is None and name == "message_delta":  # a stop reason and an output count: most answers share one
            ending = (data["delta"]["stop_reason"], data["usage"]["output_tokens"])
            frame = _ENDS.get(ending) or _keep(_ENDS, ending, encode_event(name, json_dumps(data)))
        elif frame is None and (
            name == "content_block_stop"
            or (name == "content_block_start" and data["content_block"]["type"] in ("text", "thinking"))
        ):  # the same bytes in every answer (an index and a block type): encoded once
            key = (name, data["index"], data.get("content_block", {}).get("type"))
            frame = _FIXED.get(key) or _keep(_FIXED, key, encode_event(name, json_dumps(data)))
        elif frame is None:
            frame = encode_event(name, json_dumps(data))
        yield Frame(name, frame)


_ONE_CHUNK_CHARS = 1024
"""The most text (thinking, text and tool input together) `_one_chunk` renders at once: a stream of
about a hundred deltas, well inside one chunk (`CHUNK_BYTES`); a longer one is rendered as it is read."""


def _one_chunk(message: dict[str, Any], arguments: list[str]) -> OneChunk | None:
    """A short joined stream (`_stream`'s bytes) as the one chunk it is sent in: its events, then `message_stop`.

    Each event's bytes come from the frames `_stream` keeps (or fills them); the stream is rendered
    at once, with no generator per event. None for what it does not render (`_stream` does): a long
    answer, derived usage, a block of another type, data that is not ASCII.
    """
    content = message["content"]
    chars = sum(map(len, arguments)) if arguments else 0
    for block in content:
        kind = block["type"]
        chars += len(block["text"]) if kind == "text" else len(block["thinking"]) if kind == "thinking" else 0
    if chars > _ONE_CHUNK_CHARS:
        return None
    start = _start_frame(message)
    if start is None:
        return None
    parts = [start, _PING]
    calls = iter(arguments)
    for index, block in enumerate(content):
        kind = block["type"]
        if kind == "text":
            template = _TEMPLATES.get((index, "text_delta", "text")) or _template(index, "text_delta", "text")
            if template is None or "citations" in block:
                return None
            parts.append(_FIXED.get(("content_block_start", index, "text")) or _fixed_start(index, "text"))
            text = block["text"]
            if len(text) == 1:  # one character, one delta (`chunks`): its frame, without the generator
                before, after = template
                parts.append(f"{before}{json_string(text)}{after}".encode())
            else:
                parts += encode_pieces(template, chunks(text), joined=True)
        elif kind == "thinking":
            template = _template(index, "thinking_delta", "thinking")
            signed = _template(index, "signature_delta", "signature")
            if template is None or signed is None:
                return None
            parts.append(_FIXED.get(("content_block_start", index, "thinking")) or _fixed_start(index, "thinking"))
            parts += encode_pieces(template, chunks(block["thinking"]), joined=True)
            parts += encode_pieces(signed, (block["signature"],))
        elif kind == "tool_use":
            template = _template(index, "input_json_delta", "partial_json")
            if template is None:
                return None
            data = {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}}
            parts.append(encode_event("content_block_start", json_dumps(data)))
            parts += encode_pieces(template, chunks(next(calls), 32), joined=True)
        else:
            return None
        parts.append(_FIXED.get(("content_block_stop", index, None)) or _fixed_stop(index))
    usage = message["usage"]
    ending = (message["stop_reason"], usage["output_tokens"])
    parts += (_ENDS.get(ending) or _end_frame(ending), _STOP)
    body = b"".join(parts)
    end = len(body) - _STOP_BYTES
    if end >= CHUNK_BYTES:  # not one chunk after all (text that escapes long): as it is read
        return None
    return OneChunk(body, end, "message_start", "message_stop")


def _template(index: int, kind: str, key: str) -> tuple[str, str] | None:
    """The kept `delta_template` of a block's deltas of one type (None: not ASCII, encoded whole)."""
    shape = (index, kind, key)
    template = _TEMPLATES.get(shape)
    if template is None:
        template = delta_template("content_block_delta", _messages.Pieces(index, kind, key, []).event(PIECE))
        if template is not None:
            _keep(_TEMPLATES, shape, template)
    return template


def _fixed_start(index: int, kind: str) -> bytes:
    """The `content_block_start` frame of an empty text or thinking block, kept."""
    block = {"type": "text", "text": ""} if kind == "text" else {"type": "thinking", "thinking": "", "signature": ""}
    data = {"type": "content_block_start", "index": index, "content_block": block}
    return _keep(_FIXED, ("content_block_start", index, kind), encode_event("content_block_start", json_dumps(data)))


def _fixed_stop(index: int) -> bytes:
    """The `content_block_stop` frame of a block, kept."""
    data = {"type": "content_block_stop", "index": index}
    return _keep(_FIXED, ("content_block_stop", index, None), encode_event("content_block_stop", json_dumps(data)))


def _end_frame(ending: tuple[str | None, int]) -> bytes:
    """The `message_delta` frame of a stop reason and output count, kept."""
    stop, output = ending
    data = {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": output},
    }
    return _keep(_ENDS, ending, encode_event("message_delta", json_dumps(data)))


def _start_frame(message: dict[str, Any]) -> bytes | None:
    """The `message_start` frame of a plain Message (`stream_items`' first event), from its kept template.

    None when it has no template: derived usage, server tool usage, a model name that is not ASCII.
    """
    usage = message["usage"]
    if "cache_creation" in usage or "server_tool_use" in usage:
        return None
    usage = {**usage, "output_tokens": 1}
    shape = (message["model"], *usage.items())
    template = _STARTS.get(shape)
    if template is None:
        start = {**message, "id": PIECE, "content": [], "stop_reason": None, "usage": usage}
        template = delta_template("message_start", {"type": "message_start", "message": start})
        if template is None:
            return None
        _keep(_STARTS, shape, template)
    before, after = template
    return f'{before}"{message["id"]}"{after}'.encode()  # `render`'s id, `msg_` and digits: nothing to escape


def _rich_stream(
    message: dict[str, Any], arguments: list[str], malformed_tool_json: bool, joined: bool
) -> Iterator[Frame]:
    """The event sequence of a Message with server tool blocks or cited text, each event encoded as it comes.

    None of `_stream`'s kept frames: their keys do not tell a cited text block or a `message_delta`
    with `server_tool_use` from the plain ones.
    """
    for item in _messages.stream_items(message, arguments, malformed_tool_json):
        if isinstance(item, _messages.Pieces):
            for chunk in encode_deltas("content_block_delta", item.event(PIECE), item.pieces, joined=joined):
                yield Frame("content_block_delta", chunk)
            continue
        name, data = item
        yield Frame(name, encode_event(name, json_dumps(data)))


def _message_start(data: dict[str, Any]) -> bytes:
    """The `message_start` frame: its template around the message id, kept by model and usage, with the id put in.

    `stream_items` puts nothing else in it that differs between answers (the content is empty, the stop
    reason and sequence null).
    """
    message = data["message"]
    if "cache_creation" in message["usage"]:  # derived usage: a nested split, not a template key
        return encode_event("message_start", json_dumps(data))
    shape = (message["model"], *message["usage"].items())
    template = _STARTS.get(shape)
    if template is None:
        template = delta_template("message_start", {**data, "message": {**message, "id": PIECE}})
        if template is None:  # a model name that is not ASCII: encoded whole
            return encode_event("message_start", json_dumps(data))
        _keep(_STARTS, shape, template)
    before, after = template
    return f'{before}"{message["id"]}"{after}'.encode()  # `render`'s id, `msg_` and digits: nothing to escape


_K = TypeVar("_K")
_V = TypeVar("_V")


def _keep(cache: dict[_K, _V], key: _K, value: _V) -> _V:
    """`value`, kept in `cache` under `key` while it holds fewer than 256 (a stub's answers take a few shapes)."""
    if len(cache) < 256:
        cache[key] = value
    return value


_PLAIN_MOST = 512
_PLAIN: dict[tuple[str | None, str, str, bool], tuple[bytes, bytes, int]] = {}
"""A plain text turn's answer around its message id, by text, model, stop reason and whether it streams
(`AnthropicWire.render`): the bytes before and after the id, and the length of its closing frame."""
_STARTS: dict[tuple[Any, ...], tuple[str, str]] = {}
"""The `delta_template` of `message_start` around the message id, by model and usage."""
_ENDS: dict[tuple[str | None, int], bytes] = {}
"""The `message_delta` frame by stop reason and output count, the only values `stream_items` puts in it."""
_TEMPLATES: dict[tuple[int, str, str], tuple[str, str]] = {}
"""The `delta_template` of each block index and delta type (`Pieces`)."""
_FIXED: dict[tuple[str, int, str | None], bytes] = {}
"""The frames of block stops and of text and thinking block starts, by event, index and block type."""


_CONSTANT = {name: encode_event(name, json_dumps({"type": name})) for name in ("ping", "message_stop")}
"""The frames of the events that carry nothing but their type."""
_STOP = _CONSTANT["message_stop"]
_PING = _CONSTANT["ping"]
_STOP_BYTES = len(_STOP)
