"""OpenAI Chat Completions: `POST …/chat/completions`, JSON or `data:` chunks ending in `[DONE]`.

Thinking has no standard field in Chat Completions. A turn's `thinking` is sent as
`reasoning_content`, the field DeepSeek, Moonshot, vLLM and other OpenAI-compatible servers use
(in `choices[0].message` and in stream deltas): the openai SDK keeps it as an extra field
(`message.model_extra["reasoning_content"]`, accumulated by `chat.completions.stream()`), and
frameworks such as pydantic-ai read it as thinking.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..recorded import RecordedRequest
from ..script import ErrorSpec, StreamError, Turn
from ..sse import encode_event, json_dumps, json_string
from ._openai import (
    CREATED,
    DEFAULT_MODEL,
    JSON_HEADERS,
    SSE_HEADERS,
    TokenCounts,
    arguments,
    call_id,
    join_system,
    openai_error,
    request_id,
    text_of_parts,
    token_counts,
)
from .base import (
    PIECE,
    Frame,
    Parsed,
    Rendered,
    Wire,
    as_float,
    as_int,
    as_list,
    canonical_stop,
    chunks,
    delta_frames,
    pieces_template,
)

__all__ = ["FINISH_REASONS", "OpenAIChatWire"]

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
"""A turn's stop reason (canonical, Anthropic's vocabulary) as a Chat `finish_reason`; others pass through."""

# Tuples, not sets: a request may carry any JSON there, and membership in a tuple never hashes it.
_SYSTEM_ROLES = ("system", "developer")
_TOOL_RESULT_ROLES = ("tool", "function")


def finish_reason(turn: Turn) -> str:
    """The Chat `finish_reason` for a turn: `stop`, `tool_calls`, `length`, `content_filter`, or as scripted."""
    stop = canonical_stop(turn)
    return FINISH_REASONS.get(stop, stop)


class OpenAIChatWire(Wire):
    """OpenAI Chat Completions, streamed or not.

    Matches any path ending in `/chat/completions`, so a base URL without `/v1` (and Azure's
    `/openai/deployments/<name>/chat/completions`) is served too.
    """

    name = "openai_chat"
    endpoint = "POST …/chat/completions"
    events = frozenset({"chunk", "[DONE]"})
    malformed_tool_json_applies_to_json = True

    def matches(self, method: str, path: str) -> bool:
        """`POST …/chat/completions`."""
        return method == "POST" and path.endswith("/chat/completions")

    def parse(self, body: Any, path: str) -> Parsed:
        """Model, system/developer messages, messages, tools, `tool` messages and limits of a request."""
        messages = as_list(body.get("messages"))
        tools = as_list(body.get("tools"))
        max_tokens = as_int(body.get("max_completion_tokens"))
        return Parsed(
            model=body.get("model") if isinstance(body.get("model"), str) else None,
            system=join_system(
                [
                    text_of_parts(m.get("content"))
                    for m in messages
                    if isinstance(m, dict) and m.get("role") in _SYSTEM_ROLES
                ]
            ),
            messages=messages,
            tools=tools,
            tool_names=[name for t in tools if (name := _tool_name(t)) is not None],
            tool_results=[m for m in messages if isinstance(m, dict) and m.get("role") in _TOOL_RESULT_ROLES],
            stream=body.get("stream") is True,
            max_tokens=max_tokens if max_tokens is not None else as_int(body.get("max_tokens")),
            temperature=as_float(body.get("temperature")),
        )

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        """A `chat.completion` as JSON, or `chat.completion.chunk`s then `[DONE]` when the request streams.

        `malformed_tool_json` breaks the arguments string of every tool call, streamed or not.
        """
        index = record.index
        calls = [
            (call_id(call, index, k), call.name, arguments(call, malformed_tool_json))
            for k, call in enumerate(turn.tool_calls)
        ]
        counts = token_counts(turn, [args for _, _, args in calls])
        head = {
            "id": f"chatcmpl-{index:04d}",
            "object": "chat.completion",
            "created": CREATED + index,
            "model": record.model or DEFAULT_MODEL,
        }
        finish = finish_reason(turn)
        headers = request_id(record)
        if not record.stream:
            message: dict[str, Any] = {"role": "assistant", "content": turn.text, "refusal": None}
            if turn.thinking is not None:
                message["reasoning_content"] = turn.thinking
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
            return Rendered(200, {**JSON_HEADERS, **headers}, json_dumps(completion).encode())
        options = record.body.get("stream_options") if isinstance(record.body, dict) else None
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        chunk_head = {**head, "object": "chat.completion.chunk"}
        return Rendered(
            200,
            {**SSE_HEADERS, **headers},
            frames=_stream(chunk_head, turn, calls, finish, counts if include_usage else None, joined),
        )

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


@functools.lru_cache(maxsize=256)
def _choice_json(kind: str, finish_reason: str | None) -> str:
    """The JSON of a choice that is the same in every answer: the role chunk's or the finish chunk's."""
    if kind == "role":
        return json_dumps(_choice({"role": "assistant", "content": "", "refusal": None}))
    if kind == "role-no-content":
        return json_dumps(_choice({"role": "assistant", "content": None, "refusal": None}))
    return json_dumps(_choice({}, finish_reason))


@functools.lru_cache(maxsize=256)
def _delta_template(kind: str, call: int) -> list[str] | None:
    """A delta choice's JSON around its piece: `kind` is `content`, `reasoning_content` or `arguments`."""
    delta = _arguments_delta(call, PIECE) if kind == "arguments" else _DELTAS[kind](PIECE)
    return pieces_template(_choice(delta), 1)


@functools.lru_cache(maxsize=256)
def _chunk_template(model: str, usage: bool) -> list[str] | None:
    """A chunk's JSON around its id, its `created` time and its one choice, for a model's answers."""
    head = {"id": PIECE, "object": "chat.completion.chunk", "created": PIECE, "model": model}
    return pieces_template({**head, "choices": [PIECE], **({"usage": None} if usage else {})}, 3)


def _stream(
    head: dict[str, Any],
    turn: Turn,
    calls: list[tuple[str, str, str]],
    finish: str,
    counts: TokenCounts | None,
    joined: bool,
) -> Iterator[Frame]:
    """Role chunk, reasoning and content deltas, tool-call fragments, the finish chunk, usage, `[DONE]`.

    Every chunk is `head` with one choice (and `usage: null` when usage is asked for): the JSON
    around the choice is encoded once per answer, and the choice's own JSON comes from a template,
    so a delta costs one string encoding and the bytes are those of encoding each chunk whole.
    """
    extra = {"usage": None} if counts is not None else {}
    # `head` is `{"id", "object", "created", "model"}` (see `render`): its JSON comes from a template too.
    template = _chunk_template(head["model"], counts is not None)
    around = None
    if template is not None:
        opening, between, after_created, after_choices = template
        around = [f"{opening}{json_string(head['id'])}{between}{head['created']:d}{after_created}", after_choices]

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> Frame:
        return Frame(
            "chunk", encode_event(None, json_dumps({**head, "choices": [_choice(delta, finish_reason)], **extra}))
        )

    def deltas(kind: str, pieces: Sequence[str], call: int = 0) -> Iterator[Frame]:
        parts = _delta_template(kind, call) if around is not None else None
        if parts is None or around is None:
            for piece in pieces:
                delta = _arguments_delta(call, piece) if kind == "arguments" else _DELTAS[kind](piece)
                yield chunk(delta)
            return
        yield from delta_frames("chunk", None, around[0] + parts[0], parts[1] + around[1], pieces, joined=joined)

    if around is not None:
        role = "role" if turn.text is not None else "role-no-content"
        yield Frame("chunk", encode_event(None, around[0] + _choice_json(role, None) + around[1]))
    else:
        yield chunk({"role": "assistant", "content": "" if turn.text is not None else None, "refusal": None})
    if turn.thinking is not None:
        yield from deltas("reasoning_content", chunks(turn.thinking) or [""])
    yield from deltas("content", chunks(turn.text or ""))
    for k, (cid, name, args) in enumerate(calls):
        first = {"index": k, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}
        yield chunk({"tool_calls": [first]})
        yield from deltas("arguments", chunks(args, 32), k)
    if around is not None:
        yield Frame("chunk", encode_event(None, around[0] + _choice_json("finish", finish) + around[1]))
    else:
        yield chunk({}, finish)
    if counts is not None:
        yield Frame("chunk", encode_event(None, json_dumps({**head, "choices": [], "usage": _usage(counts)})))
    yield Frame("[DONE]", encode_event(None, "[DONE]"))
