"""OpenAI Chat Completions: `POST …/chat/completions`, JSON or `data:` chunks ending in `[DONE]`.

Thinking has no standard field in Chat Completions. A turn's `thinking` is sent as
`reasoning_content`, the field DeepSeek, Moonshot, vLLM and other OpenAI-compatible servers use
(in `choices[0].message` and in stream deltas): the openai SDK keeps it as an extra field
(`message.model_extra["reasoning_content"]`, accumulated by `chat.completions.stream()`), and
frameworks such as pydantic-ai read it as thinking.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, NamedTuple
from urllib.parse import unquote

from ..._exchange import CHUNK_BYTES
from ..._text import text_of
from ...recorded import RecordedRequest
from ...script import ErrorSpec, StreamError, ToolCall, Turn
from ...sse import PIECE, delta_template, encode_deltas, encode_event, json_dumps, json_string
from .._answers import AnswerRule, Offer
from .._caching import Caching
from .._decode import (
    as_dict,
    as_float,
    as_int,
    as_list,
    decoded_turn,
    decoded_usage,
    is_event_stream,
    json_body,
    sse_json,
)
from .._render import chunks, plain_text
from .._rules import ModelTable, Rule, Violation
from ..base import Frame, OneChunk, Parsed, Rendered, Wire
from . import builtins
from .answers import CHAT_ANSWER_FIELDS, CHAT_ANSWER_RULES, chat_offer
from .caching import OPENAI_CACHING
from .common import (
    COMPATIBLE_HOSTS,
    CREATED,
    DEFAULT_MODEL,
    HOSTS,
    JSON_HEADERS,
    RETRY_COUNT_HEADER,
    SSE_HEADERS,
    STOP_REASONS,
    SYSTEM_ROLES,
    TokenCounts,
    arguments,
    call_id,
    decoded_openai_error,
    join_system,
    openai_error,
    openai_usage,
    request_id,
    strict_error,
    token_counts,
    tool_input,
    type_message,
)
from .models import OPENAI_MODELS, OpenAIModel
from .rules import CHAT_RULES, chat_rules_violation, check_openai_chat, plainly_valid_chat

__all__ = ["FINISH_REASONS", "ChatShape", "OpenAIChatWire"]

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
"""A turn's stop reason (canonical, Anthropic's vocabulary) as a Chat `finish_reason`; others pass through."""

# A tuple, not a set: a request may carry any JSON there, and membership in a tuple never hashes it.
_TOOL_RESULT_ROLES = ("tool", "function")
_CHAT_ROLES = ("system", "developer", "tool")
_OWN_HINTS = ("max_completion_tokens", "response_format", "n", "stream_options")
"""Top-level fields of Chat Completions that a Messages body does not carry."""


class ChatShape(NamedTuple):
    """How a host's Chat Completions answers differ from OpenAI's: what a host dialect renders differently.

    `OpenAIChatWire.shape` is None (OpenAI's own answers, decided with no hook); a dialect sets one,
    each field left at its default rendering as OpenAI does.
    """

    reasoning_key: str = "reasoning_content"
    """The field a turn's `thinking` is sent in (`message` and stream deltas): `reasoning` on vLLM and Ollama."""
    completion_id: Callable[[RecordedRequest], str] | None = None
    """The completion's `id` (default `chatcmpl-<request>`)."""
    call_id: Callable[[ToolCall, int, int], str] | None = None
    """A tool call's id from `(call, request index, k)` when the turn scripts none (default `call_<request>_<k>`)."""
    streamed_tool_finish: str | None = None
    """The `finish_reason` a stream that carries tool calls ends with instead of `tool_calls`."""
    same_index: bool = False
    """Every streamed tool call at `index: 0` (so an app accumulating by index merges them)."""
    decorate: Callable[[dict[str, Any], str, RecordedRequest], None] | None = None
    """Adds the host's own fields to a body before it is encoded: `where` is `completion` (a JSON answer),
    `first` (the stream's role chunk), `chunk` (any other chunk), `finish` (the finish chunk) or `usage`."""
    prelude: Callable[[dict[str, Any], RecordedRequest], list[bytes]] | None = None
    """Encoded frames sent before a stream's first chunk (SSE comments, a content-filter chunk)."""


def finish_reason(stop: str) -> str:
    """The Chat `finish_reason` of a canonical stop reason: `stop`, `tool_calls`, `length`, `content_filter`, or it."""
    return FINISH_REASONS.get(stop, stop)


class OpenAIChatWire(Wire):
    """OpenAI Chat Completions, streamed or not.

    Matches any path ending in `/chat/completions`, so a base URL without `/v1` (and Azure's
    `/openai/deployments/<name>/chat/completions`) is served too.
    """

    name = "openai_chat"
    endpoint = "POST …/chat/completions"
    endpoints = ("POST /v1/chat/completions", "POST /openai/deployments/{deployment}/chat/completions")
    closing = frozenset({"[DONE]"})
    events = frozenset({"chunk", "[DONE]"})
    stop_reasons = STOP_REASONS
    credential_headers = ("api-key",)  # Azure OpenAI
    hosts: ClassVar[tuple[str, ...]] = (*HOSTS, *COMPATIBLE_HOSTS)
    retry_count_header = RETRY_COUNT_HEADER
    malformed_tool_json_applies_to_json = True
    rules: ClassVar[Sequence[Rule]] = CHAT_RULES
    answer_rules: ClassVar[Sequence[AnswerRule]] = CHAT_ANSWER_RULES
    answer_fields: ClassVar[frozenset[str]] = CHAT_ANSWER_FIELDS
    models: ClassVar[ModelTable[OpenAIModel]] = OPENAI_MODELS
    """The OpenAI models the model-dependent strict rules know (the o-series): a subclass may declare an
    updated table (`OPENAI_MODELS.updated({...})`); an unknown model is never refused."""
    caching: ClassVar[Caching] = OPENAI_CACHING
    label = "OpenAI Chat Completions (POST /chat/completions)"
    # `stop` too: Messages refuses it ("stop: Extra inputs are not permitted"; it takes `stop_sequences`), Gemini
    # too (`generationConfig.stopSequences`).
    own_fields: ClassVar[tuple[str, ...]] = ("max_completion_tokens", "response_format", "messages", "stop")
    shared_fields = frozenset({"max_tokens"})  # Anthropic's too; Chat takes it (deprecated for max_completion_tokens)
    unknown_field: ClassVar[str | None] = "Unrecognized request argument supplied: {key}"
    field_types: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "model": ("string",),
        "messages": ("array",),
        "stream": ("boolean",),
        "max_tokens": ("integer",),
        "max_completion_tokens": ("integer",),
        "n": ("integer",),
        "temperature": ("number",),
        "tools": ("array",),
    }

    shape: ChatShape | None = None
    """How this wire's answers differ from OpenAI's (a host dialect's `ChatShape`); None: OpenAI's own."""

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """`POST …/chat/completions`, on any host."""
        return method == "POST" and path.endswith("/chat/completions")

    @staticmethod
    def tool_result_text(result: Mapping[str, Any]) -> str | None:
        """A `tool` (or legacy `function`) message's `content`: a string, or its text parts joined."""
        if result.get("role") not in _TOOL_RESULT_ROLES:
            return None
        return text_of(result.get("content")) or ""

    def parse(self, body: Any, path: str) -> Parsed:
        """Model, system/developer messages, messages, tools, `tool` messages and limits of a request."""
        # One pass over the messages for what `system_text`, `since_last_assistant` and the tool messages
        # read, exact JSON types first and the general readers otherwise: the same values, fewer calls.
        messages = body.get("messages")
        if messages.__class__ is not list:
            messages = as_list(messages)
        tools = body.get("tools")
        if tools.__class__ is not list:
            tools = [] if tools is None else as_list(tools)  # most requests send none
        max_tokens = body.get("max_completion_tokens")
        if max_tokens is not None and max_tokens.__class__ is not int:
            max_tokens = as_int(max_tokens)
        if max_tokens is None:
            max_tokens = body.get("max_tokens")
            if max_tokens is not None and max_tokens.__class__ is not int:
                max_tokens = as_int(max_tokens)
        model = body.get("model")
        if model.__class__ is not str and not isinstance(model, str):
            model = None
        if "/openai/deployments/" in path:  # Azure OpenAI: the deployment answers, whatever the body names
            model = unquote(path.split("/openai/deployments/", 1)[1].split("/", 1)[0]) or model
        system: list[str | None] = []
        all_results: list[Any] = []
        newest: list[Any] = []  # the tool messages after the last assistant message
        for m in messages:
            if m.__class__ is dict or isinstance(m, dict):
                role = m.get("role")
                if role in SYSTEM_ROLES:
                    content = m.get("content")
                    system.append(content if content.__class__ is str else text_of(content, sep="\n"))
                elif role in _TOOL_RESULT_ROLES:
                    all_results.append(m)
                    newest.append(m)
                elif role == "assistant":
                    newest = []
            elif isinstance(m, Mapping) and m.get("role") in SYSTEM_ROLES:  # a mapping that is not a dict
                system.append(text_of(m.get("content"), sep="\n"))
        temperature = body.get("temperature")
        return Parsed(
            model=model,
            system=join_system(system) if system else None,
            messages=messages,
            tools=tools,
            tool_names=[name for t in tools if (name := _tool_name(t)) is not None] if tools else [],
            tool_results=newest,
            all_tool_results=all_results,
            stream=body.get("stream") is True,
            max_tokens=max_tokens,
            temperature=None if temperature is None else as_float(temperature),
        )

    def check(self, record: RecordedRequest, *, skip: frozenset[str]) -> Violation | None:
        """The Chat Completions strict rules (the request alone decides them, with the wire's model table)."""
        body = record.body
        if not isinstance(body, dict) or plainly_valid_chat(body, self.models):  # what nearly every request sends
            return None
        return chat_rules_violation(body, skip=skip, models=self.models)

    @staticmethod
    def check_body(body: dict[str, Any], *, skip: frozenset[str], **context: Any) -> Violation | None:
        """Its rules over a bare body (`wirescript.strict.check_request`): the request alone decides them."""
        return check_openai_chat(body, skip=skip)

    def claims_body(self, body: dict[str, Any]) -> bool:
        """A body with a field only Chat has (`n`, `stream_options`, …), or a system, developer or tool message."""
        if any(key in body for key in _OWN_HINTS):
            return True
        messages = body.get("messages")
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict) and (message.get("role") in _CHAT_ROLES or "tool_calls" in message):
                return True
        return False

    def field_type_message(self, key: str, value: Any, kinds: tuple[str, ...]) -> str:
        """OpenAI's words: `Invalid type for 'n': expected an integer, but got a string instead.`."""
        return type_message(key, value, kinds)

    def strict_error(self, violation: Violation, message: str, record: RecordedRequest) -> Rendered:
        """OpenAI's envelope, with the offending `param`."""
        return strict_error(violation, message, record)

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        """A `chat.completion` as JSON, or `chat.completion.chunk`s then `[DONE]` when the request streams.

        `malformed_tool_json` breaks the arguments string of every tool call, streamed or not.

        A plain text turn (no thinking, tools, usage, server tools or citations) on OpenAI's own wire is
        rendered from the bytes kept for its text, model, finish reason and whether usage is streamed
        (`_PLAIN`), around the completion's id and `created`: the bytes the full rendering gives.
        """
        stream = record.stream
        if (joined or not stream) and self.shape is None and plain_text(turn):
            body = record.body
            options = body.get("stream_options") if stream and isinstance(body, dict) else None
            include_usage = isinstance(options, dict) and options.get("include_usage") is True
            finish = "stop" if turn.stop_reason is None else finish_reason(self.canonical_stop(turn))
            model = record.model or DEFAULT_MODEL
            key = (turn.text, model, finish, stream, include_usage)
            kept = _PLAIN.get(key)
            if kept is None:
                return self._plain(turn, record, key, malformed_tool_json, joined)
            index = record.index
            headers = {**(SSE_HEADERS if stream else JSON_HEADERS), "x-request-id": f"req_{index:04d}"}
            model_json, parts = kept
            if not stream:
                head = f'{{"id":"chatcmpl-{index:04d}","object":"chat.completion","created":{CREATED + index},'
                return Rendered(200, headers, f"{head}{model_json}{parts[0]}".encode())
            lead = (
                f'data: {{"id":"chatcmpl-{index:04d}","object":"chat.completion.chunk","created":{CREATED + index},'
                f"{model_json},"
            )
            data = f"{lead}{lead.join(parts)}".encode()
            end = len(data) - _DONE_BYTES
            if end < CHUNK_BYTES:
                return Rendered(200, headers, frames=OneChunk(data, end, "chunk", "[DONE]"))
        return self._render(turn, record, malformed_tool_json, joined)

    def _plain(
        self,
        turn: Turn,
        record: RecordedRequest,
        key: tuple[str | None, str, str, bool, bool],
        malformed_tool_json: bool,
        joined: bool,
    ) -> Rendered:
        """`_render` of a plain text turn, its bytes kept around the id and `created` for the next answer of it."""
        rendered = self._render(turn, record, malformed_tool_json, joined)
        index = record.index
        model_json = f'"model":{json_dumps(key[1])}'
        frames = rendered.frames
        head = f'{{"id":"chatcmpl-{index:04d}","object":"chat.completion","created":{CREATED + index},{model_json}'
        if frames is None:
            text = rendered.body.decode()
            parts = [text.removeprefix(head)] if text.startswith(head) else None
        elif isinstance(frames, OneChunk):
            lead = (
                f'data: {{"id":"chatcmpl-{index:04d}","object":"chat.completion.chunk","created":{CREATED + index},'
                f"{model_json},"
            )
            split = frames.body.decode().split(lead)  # each chunk's start: inside a JSON string, a quote is escaped
            parts = split[1:] if not split[0] and f"{lead}{lead.join(split[1:])}".encode() == frames.body else None
        else:  # a long answer, rendered as it is read
            return rendered
        if parts is not None:
            if len(_PLAIN) >= _PLAIN_MOST:  # a suite's many texts: the newest are kept, not the first few
                _PLAIN.clear()
            _PLAIN[key] = (model_json, tuple(parts))
        return rendered

    def _render(self, turn: Turn, record: RecordedRequest, malformed_tool_json: bool, joined: bool) -> Rendered:
        index = record.index
        tool_calls = turn.tool_calls
        shape = self.shape
        minted = call_id if shape is None or shape.call_id is None else shape.call_id
        calls = (
            [
                (minted(call, index, k), call.name, arguments(call, malformed_tool_json))
                for k, call in enumerate(tool_calls)
            ]
            if tool_calls
            else []
        )
        counts = token_counts(turn, [args for _, _, args in calls] if calls else [])
        head = {
            "id": f"chatcmpl-{index:04d}"
            if shape is None or shape.completion_id is None
            else shape.completion_id(record),
            "object": "chat.completion",
            "created": CREATED + index,
            "model": record.model or DEFAULT_MODEL,
        }
        finish = finish_reason(self.canonical_stop(turn))
        headers = request_id(record)
        if not record.stream:
            message: dict[str, Any] = {"role": "assistant", "content": turn.text, "refusal": None}
            if turn.citations is not None:
                message["annotations"] = builtins.chat_annotations(turn)
            if turn.thinking is not None:
                message["reasoning_content" if shape is None else shape.reasoning_key] = turn.thinking
            if calls:
                message["tool_calls"] = [
                    {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
                    for cid, name, args in calls
                ]
            completion = {
                **head,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": _usage(counts),
            }
            if shape is not None and shape.decorate is not None:
                shape.decorate(completion, "completion", record)
            return Rendered(200, {**JSON_HEADERS, **headers}, json_dumps(completion).encode())
        options = record.body.get("stream_options") if isinstance(record.body, dict) else None
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        chunk_head = {**head, "object": "chat.completion.chunk"}
        if shape is None:
            frames = (joined and _one_chunk(chunk_head, turn, calls, finish, counts if include_usage else None)) or (
                _stream(chunk_head, turn, calls, finish, counts if include_usage else None, joined)
            )
        else:
            frames = _shaped_stream(
                shape, record, chunk_head, turn, calls, finish, counts if include_usage else None, joined
            )
        return Rendered(200, {**SSE_HEADERS, **headers}, frames=frames)

    def offer(self, record: RecordedRequest) -> Offer | None:
        """The request's tools (and legacy `functions`), `tool_choice`, `parallel_tool_calls` and `response_format`."""
        return chat_offer(record.body) if isinstance(record.body, dict) else None

    def server_tools_problem(self, turn: Turn, record: RecordedRequest) -> str | None:
        """Why Chat Completions could not have answered with these server tools or citations, or None."""
        return builtins.chat_problem(turn, record)

    def decode(self, status: int, headers: Mapping[str, str], body: bytes) -> dict[str, Any] | None:
        """A chat completion (JSON, or its chunks put back together) or an error as a turn.

        The first choice is the answer; its `reasoning_content` (the field OpenAI-compatible servers
        send thinking in) is the turn's thinking. An error chunk inside a stream becomes the turn's
        `fault.stream_error`.
        """
        if status >= 400:
            return decoded_openai_error(status, body)
        if not is_event_stream(headers):
            completion = json_body(body)
            choices = as_list(completion.get("choices")) if isinstance(completion, dict) else []
            if not choices or not isinstance(choices[0], dict) or not isinstance(choices[0].get("message"), dict):
                return None
            message = choices[0]["message"]
            calls = [
                (c.get("id"), (c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments"))
                for c in as_list(message.get("tool_calls"))
                if isinstance(c, dict)
            ]
            return self._turn(
                message.get("reasoning_content"),
                message.get("content"),
                calls,
                choices[0].get("finish_reason"),
                completion.get("usage"),
                None,
                as_list(message.get("annotations")),
            )
        return self._decode_stream(body)

    def _decode_stream(self, body: bytes) -> dict[str, Any] | None:
        reasoning: list[str] = []
        content: list[str] = []
        calls: dict[int, list[Any]] = {}
        noted: list[Any] = []
        finish: Any = None
        usage: Any = None
        failure: dict[str, Any] | None = None
        seen = False
        for chunk in sse_json(body):
            if not isinstance(chunk, dict):
                continue
            if isinstance(chunk.get("error"), dict):
                error = chunk["error"]
                failure = {"type": error.get("type") or "api_error", "message": str(error.get("message", ""))}
                continue
            seen = True
            if isinstance(chunk.get("usage"), dict):
                usage = chunk["usage"]
            choices = [c for c in as_list(chunk.get("choices")) if isinstance(c, dict) and c.get("index", 0) == 0]
            for choice in choices:
                finish = choice.get("finish_reason") or finish
                delta = as_dict(choice.get("delta"))
                if isinstance(delta.get("reasoning_content"), str):
                    reasoning.append(delta["reasoning_content"])
                if isinstance(delta.get("content"), str):
                    content.append(delta["content"])
                noted += as_list(delta.get("annotations"))
                for call in as_list(delta.get("tool_calls")):
                    if not isinstance(call, dict):
                        continue
                    entry = calls.setdefault(as_int(call.get("index")) or 0, [None, None, ""])
                    function = as_dict(call.get("function"))
                    entry[0] = call.get("id") or entry[0]
                    entry[1] = function.get("name") or entry[1]
                    if isinstance(function.get("arguments"), str):
                        entry[2] += function["arguments"]
        if not seen:
            return None
        ordered = [tuple(calls[i]) for i in sorted(calls)]
        return self._turn(
            "".join(reasoning) or None, "".join(content) if content else None, ordered, finish, usage, failure, noted
        )

    def _turn(
        self,
        reasoning: Any,
        content: Any,
        calls: Sequence[tuple[Any, ...]],
        finish: Any,
        usage: Any,
        failure: dict[str, Any] | None,
        annotations: Sequence[Any] = (),
    ) -> dict[str, Any] | None:
        tool_calls = []
        for call_id_, name, args in calls:
            arguments_ = tool_input(args)
            if not isinstance(name, str) or not name or arguments_ is None:
                return None  # a call without a name, or arguments that are not a JSON object, is no tool call
            tool_calls.append(
                {"id": call_id_, "name": name, "input": arguments_} if call_id_ else {"name": name, "input": arguments_}
            )
        turn = decoded_turn(
            self,
            thinking=[reasoning] if isinstance(reasoning, str) and reasoning else [],
            text=[content] if isinstance(content, str) and content else [],
            calls=tool_calls,
            stop=finish,
            usage=decoded_usage(**openai_usage(usage, "prompt_tokens", "completion_tokens", "prompt_tokens_details")),
            citations=builtins.decoded_annotations(content, [a for a in annotations if isinstance(a, dict)], [])
            if annotations and isinstance(content, str)
            else (),
        )
        if failure is not None:
            turn.pop("stop_reason", None)
            turn["fault"] = {"stream_error": failure}
        return turn

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """`{"error": {"message", "type", "param", "code"}}` with the status and an `x-request-id`."""
        return openai_error(spec, record)

    def stream_error(self, spec: StreamError, record: RecordedRequest) -> Frame:
        """A data chunk `{"error": {...}}`: the SDK raises `openai.APIError` with its message."""
        data = {"error": {"message": spec.message, "type": spec.type, "param": None, "code": None}}
        return Frame("error", encode_event(None, json_dumps(data)))


def _tool_name(tool: Any) -> str | None:
    if not isinstance(tool, dict):
        return None
    kind = tool.get("type", "function")
    inner = tool.get(kind) if isinstance(kind, str) else None
    name = inner.get("name") if isinstance(inner, dict) else None
    return name if isinstance(name, str) else None


def _usage(counts: TokenCounts) -> dict[str, Any]:
    prompt_details: dict[str, int] = {"cached_tokens": counts.cached, "audio_tokens": 0}
    if counts.cache_write:
        prompt_details["cache_write_tokens"] = counts.cache_write
    return {
        "prompt_tokens": counts.input,
        "completion_tokens": counts.output,
        "total_tokens": counts.total,
        "prompt_tokens_details": prompt_details,
        "completion_tokens_details": {
            "reasoning_tokens": counts.reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _arguments_delta(index: int, piece: str) -> dict[str, Any]:
    return {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}


def _choice(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}


_DELTAS: dict[str, Callable[[str], dict[str, Any]]] = {
    "content": lambda piece: {"content": piece},
    "reasoning_content": lambda piece: {"reasoning_content": piece},
}


def _stream(
    head: dict[str, Any],
    turn: Turn,
    calls: list[tuple[str, str, str]],
    finish: str,
    counts: TokenCounts | None,
    joined: bool,
) -> Iterator[Frame]:
    """Role chunk, reasoning and content deltas, tool-call fragments, the finish chunk, usage, `[DONE]`.

    Every chunk is `head` with one choice (and `usage: null` when usage is asked for).
    """
    extra = {"usage": None} if counts is not None else {}

    def data(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [_choice(delta, finish_reason)], **extra}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> Frame:
        return Frame("chunk", encode_event(None, json_dumps(data(delta, finish_reason))))

    def deltas(delta: dict[str, Any], pieces: Sequence[str]) -> Iterator[Frame]:
        for encoded in encode_deltas(None, data(delta), pieces, joined=joined):
            yield Frame("chunk", encoded)

    yield chunk({"role": "assistant", "content": "" if turn.text is not None else None, "refusal": None})
    if turn.thinking is not None:
        yield from deltas(_DELTAS["reasoning_content"](PIECE), chunks(turn.thinking) or [""])
    yield from deltas(_DELTAS["content"](PIECE), chunks(turn.text or ""))
    if turn.citations is not None:  # all in one delta: the SDK's accumulator appends a list only once
        yield chunk({"annotations": builtins.chat_annotations(turn)})
    for k, (cid, name, args) in enumerate(calls):
        first = {"index": k, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}
        yield chunk({"tool_calls": [first]})
        yield from deltas(_arguments_delta(k, PIECE), chunks(args, 32))
    yield chunk({}, finish)
    if counts is not None:
        yield Frame("chunk", encode_event(None, json_dumps({**head, "choices": [], "usage": _usage(counts)})))
    yield Frame("[DONE]", _DONE)


_ONE_CHUNK_CHARS = 1024
"""The most text (thinking, text and tool arguments together) `_one_chunk` renders at once: about a
hundred deltas, well inside one chunk (`CHUNK_BYTES`); a longer answer is rendered as it is read."""


def _one_chunk(
    head: dict[str, Any], turn: Turn, calls: list[tuple[str, str, str]], finish: str, counts: TokenCounts | None
) -> OneChunk | None:
    """A short joined stream (`_stream`'s bytes) as the one chunk it is sent in: its chunks, then `[DONE]`.

    Every chunk is `head` and the rest of its data: `head` is encoded once, the rest of each chunk
    kept by what it holds (`_rests`), so a chunk costs a string concatenation. None for what it does
    not render (`_stream` does): a long answer, citations, a `head` that is not plain ASCII (a model
    name that needs escaping).
    """
    text, thinking = turn.text, turn.thinking
    chars = (len(text) if text else 0) + (len(thinking) if thinking else 0)
    if calls:
        chars += sum(len(args) for _, _, args in calls)
    if chars > _ONE_CHUNK_CHARS or turn.citations is not None:
        return None
    encoded = json_dumps(head)
    if not encoded.isascii() or "\\" in encoded:
        return None
    lead = f"data: {encoded[:-1]},"  # each chunk's data is `head` and then its own fields
    usage = counts is not None
    parts = [lead, _RESTS.get(("role", text is not None, usage)) or _rest_role(text is not None, usage)]
    if thinking is not None:
        _pieces(parts, lead, _delta_rest(("reasoning_content", usage)), chunks(thinking) or [""])
    if text:
        before, after = _DELTA_RESTS.get(("content", usage)) or _delta_rest(("content", usage))
        if len(text) == 1:  # one character, one delta (`chunks`)
            parts += (lead, before, json_string(text), after)
        else:
            _pieces(parts, lead, (before, after), chunks(text))
    extra = {"usage": None} if usage else {}
    for k, (cid, name, args) in enumerate(calls):
        first = {"index": k, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}
        rest = json_dumps({"choices": [_choice({"tool_calls": [first]})], **extra})
        parts += (lead, rest[1:], "\n\n")
        _pieces(parts, lead, _delta_rest((k, usage)), chunks(args, 32))
    parts += (lead, _RESTS.get(("finish", finish, usage)) or _rest_finish(finish, usage))
    if counts is not None:
        parts += (lead, json_dumps({"choices": [], "usage": _usage(counts)})[1:], "\n\n")
    parts.append(_DONE_TEXT)
    body = "".join(parts).encode()
    end = len(body) - _DONE_BYTES
    if end >= CHUNK_BYTES:  # not one chunk after all (text that escapes long): as it is read
        return None
    return OneChunk(body, end, "chunk", "[DONE]")


def _pieces(parts: list[str], lead: str, template: tuple[str, str], pieces: list[str]) -> None:
    """Each piece's delta chunk, from its kept template (`_delta_rest`), added to `parts`."""
    before, after = template
    for piece in pieces:
        parts += (lead, before, json_string(piece), after)


def _delta_rest(key: tuple[str | int, bool]) -> tuple[str, str]:
    """What goes around a piece after `head` in a delta chunk, kept.

    `key`: the delta's field (`content`, `reasoning_content`) or the index of the tool call whose
    arguments it carries, and whether usage is asked for (every chunk then has `usage: null`).
    """
    template = _DELTA_RESTS.get(key)
    if template is None:
        field, usage = key
        delta = _arguments_delta(field, PIECE) if isinstance(field, int) else {field: PIECE}
        around = delta_template(None, {"choices": [_choice(delta)], **({"usage": None} if usage else {})})
        assert around is not None  # ASCII: field names and an index
        template = (around[0].removeprefix("data: {"), around[1])
        if len(_DELTA_RESTS) < 256:
            _DELTA_RESTS[key] = template
    return template


def _rest_role(has_text: bool, usage: bool) -> str:
    """The role chunk's data after `head`, kept."""
    delta = {"role": "assistant", "content": "" if has_text else None, "refusal": None}
    rest = json_dumps({"choices": [_choice(delta)], **({"usage": None} if usage else {})})[1:] + "\n\n"
    _RESTS[("role", has_text, usage)] = rest
    return rest


def _rest_finish(finish: str, usage: bool) -> str:
    """The finish chunk's data after `head`, kept while there are few."""
    rest = json_dumps({"choices": [_choice({}, finish)], **({"usage": None} if usage else {})})[1:] + "\n\n"
    if len(_RESTS) < 256:
        _RESTS[("finish", finish, usage)] = rest
    return rest


_PLAIN_MOST = 512
_PLAIN: dict[tuple[str | None, str, str, bool, bool], tuple[str, tuple[str, ...]]] = {}
"""A plain text turn's answer around its id and `created`, by text, model, finish reason, whether it streams
and whether it streams usage (`OpenAIChatWire.render`): the model's field, then the text after each
chunk's head (a JSON answer: the text after the model)."""
_RESTS: dict[tuple[str, Any, bool], str] = {}
"""The data after `head` of the role and finish chunks `_one_chunk` renders, the same in every answer."""
_DELTA_RESTS: dict[tuple[str | int, bool], tuple[str, str]] = {}
"""What goes around a piece after `head` in the delta chunks `_one_chunk` renders (`_delta_rest`)."""


def _shaped_stream(
    shape: ChatShape,
    record: RecordedRequest,
    head: dict[str, Any],
    turn: Turn,
    calls: list[tuple[str, str, str]],
    finish: str,
    counts: TokenCounts | None,
    joined: bool,
) -> Iterator[Frame]:
    """`_stream` as a host dialect sends it: its reasoning field, call indexes, finish reason and own fields."""
    extra = {"usage": None} if counts is not None else {}
    decorate = shape.decorate
    if calls and shape.streamed_tool_finish is not None and finish == "tool_calls":
        finish = shape.streamed_tool_finish

    def data(delta: dict[str, Any], finish_reason: str | None = None, where: str = "chunk") -> dict[str, Any]:
        body = {**head, "choices": [_choice(delta, finish_reason)], **extra}
        if decorate is not None:
            decorate(body, where, record)
        return body

    def chunk(delta: dict[str, Any], finish_reason: str | None = None, where: str = "chunk") -> Frame:
        return Frame("chunk", encode_event(None, json_dumps(data(delta, finish_reason, where))))

    def deltas(delta: dict[str, Any], pieces: Sequence[str]) -> Iterator[Frame]:
        for encoded in encode_deltas(None, data(delta), pieces, joined=joined):
            yield Frame("chunk", encoded)

    if shape.prelude is not None:
        for encoded in shape.prelude(head, record):
            yield Frame("chunk", encoded)
    first = {"role": "assistant", "content": "" if turn.text is not None else None, "refusal": None}
    yield chunk(first, where="first")
    if turn.thinking is not None:
        yield from deltas({shape.reasoning_key: PIECE}, chunks(turn.thinking) or [""])
    yield from deltas(_DELTAS["content"](PIECE), chunks(turn.text or ""))
    for k, (cid, name, args) in enumerate(calls):
        at = 0 if shape.same_index else k
        opening = {"index": at, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}
        yield chunk({"tool_calls": [opening]})
        yield from deltas(_arguments_delta(at, PIECE), chunks(args, 32))
    yield chunk({}, finish, "finish")
    if counts is not None:
        usage = {**head, "choices": [], "usage": _usage(counts)}
        if decorate is not None:
            decorate(usage, "usage", record)
        yield Frame("chunk", encode_event(None, json_dumps(usage)))
    yield Frame("[DONE]", _DONE)


_DONE = encode_event(None, "[DONE]")
_DONE_TEXT = _DONE.decode()
_DONE_BYTES = len(_DONE)
