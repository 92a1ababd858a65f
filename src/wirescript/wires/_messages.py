"""The Anthropic Messages answer, shared by the wires that send it: Anthropic's own API and Bedrock's invoke.

A `Message` (JSON) and its documented stream of events, independent of how they are framed: the
Anthropic wire sends the events as SSE, the Bedrock wire as AWS event-stream `chunk` messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .._text import text_of
from ..script import ToolCall, Turn
from ..sse import json_dumps
from . import _messages_tools as _tools
from ._decode import as_float, as_int, as_list, decoded_turn, decoded_usage
from ._messages_tools import INPUT_BLOCKS
from ._render import break_json, chunks, default_usage
from .base import Parsed, Wire

__all__ = [
    "Pieces",
    "decoded_events",
    "decoded_message",
    "message",
    "parse_messages",
    "stream_events",
    "stream_items",
    "tool_result_text",
]


@dataclass(frozen=True, slots=True)
class Pieces:
    """A run of `content_block_delta` events of one block: each piece goes in `delta[key]`."""

    index: int
    kind: str
    key: str
    pieces: list[str]

    def event(self, piece: str) -> dict[str, Any]:
        """The `content_block_delta` event carrying one piece."""
        return _delta(self.index, {"type": self.kind, self.key: piece})


def parse_messages(body: Any) -> Parsed:
    """Model, system, messages, tools and tool_result blocks of a Messages request body.

    `tool_results` are the last user message's `tool_result` blocks; `all_tool_results` every message's.
    """
    # Exact types first (what a parsed JSON body holds), the general readers otherwise: the same values.
    messages = body.get("messages")
    if messages.__class__ is not list:
        messages = as_list(messages)
    tools = body.get("tools")
    if tools.__class__ is not list:
        tools = [] if tools is None else as_list(tools)  # most requests send none
    model = body.get("model")
    all_results: list[Any] = []
    newest: list[Any] = []  # the last user message's
    for m in messages:  # a loop, not a comprehension: no function call per request for the usual text messages
        if m.__class__ is not dict and not isinstance(m, dict):
            continue
        content = m.get("content")
        if content.__class__ is str:
            found = []
        elif isinstance(content, list):
            found = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            all_results += found
        else:
            found = []
        if m.get("role") == "user":
            newest = found
    system = body.get("system")
    max_tokens = body.get("max_tokens")
    temperature = body.get("temperature")
    return Parsed(
        model=model if model.__class__ is str or isinstance(model, str) else None,
        system=system if system is None or system.__class__ is str else text_of(system, sep="\n"),
        messages=messages,
        tools=tools,
        tool_names=[t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
        if tools
        else [],
        tool_results=newest,
        all_tool_results=all_results,
        stream=body.get("stream") is True,
        max_tokens=max_tokens if max_tokens is None or max_tokens.__class__ is int else as_int(max_tokens),
        temperature=None if temperature is None else as_float(temperature),
    )


def tool_result_text(result: Any) -> str | None:
    """A `tool_result` block's `content`: a string, or its text blocks joined; None for another block."""
    if not isinstance(result, dict) or result.get("type") != "tool_result":
        return None
    return text_of(result.get("content")) or ""


def blocks(turn: Turn, index: int, calls: Sequence[ToolCall] | None = None) -> list[dict[str, Any]]:
    """The content blocks of a turn: thinking, text, then the tool calls (`calls`: its `tool_calls`, when known)."""
    out: list[dict[str, Any]] = []
    if turn.thinking is not None:
        signature = turn.thinking_signature or f"sig_{index:04d}"
        out.append({"type": "thinking", "thinking": turn.thinking, "signature": signature})
    if turn.text is not None:
        out.append({"type": "text", "text": turn.text})
    for k, call in enumerate(turn.tool_calls if calls is None else calls):
        out.append(
            {"type": "tool_use", "id": call.id or f"toolu_{index:04d}_{k}", "name": call.name, "input": call.input}
        )
    return out


def message(turn: Turn, index: int, model: str, msg_id: str, stop: str) -> tuple[dict[str, Any], list[str]]:
    """The Message answering a turn, and each tool call's input encoded once (a stream sends it).

    Args:
        turn: The scripted turn (not an error turn).
        index: The request's index, for deterministic ids and signatures.
        model: The model the Message names.
        msg_id: The Message id.
        stop: Its stop reason, canonical (`Wire.canonical_stop`).

    """
    if turn.server_tools is not None or turn.citations is not None:
        content = _tools.rich_blocks(turn, index)
        arguments = [json_dumps(b["input"]) for b in content if b["type"] in INPUT_BLOCKS]
    else:
        calls = turn.tool_calls
        content = blocks(turn, index, calls)
        arguments = [json_dumps(call.input) for call in calls] if calls else []
    chars = len(turn.text or "") + len(turn.thinking or "") + (sum(map(len, arguments)) if arguments else 0)
    input_tokens, output_tokens = default_usage(turn, chars)
    scripted = turn.usage
    usage: dict[str, Any] = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": (scripted.cache_creation_input_tokens or 0) if scripted else 0,
        "cache_read_input_tokens": (scripted.cache_read_input_tokens or 0) if scripted else 0,
        "output_tokens": output_tokens,
    }
    if turn.server_tools is not None:
        usage["server_tool_use"] = _tools.server_usage(turn)
    hour = scripted.cache_creation_1h_input_tokens if scripted else None
    if hour is not None:  # the split by lifetime, as the API sends it (`cache_creation`): only when known
        created = usage["cache_creation_input_tokens"]
        usage["cache_creation"] = {"ephemeral_5m_input_tokens": created - hour, "ephemeral_1h_input_tokens": hour}
    return _message(msg_id, model, content, stop, usage), arguments


def _message(msg_id: str, model: str, content: Any, stop_reason: str | None, usage: Any) -> dict[str, Any]:
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


def stream_items(
    msg: dict[str, Any], arguments: list[str], malformed_tool_json: bool
) -> Iterator[tuple[str, dict[str, Any]] | Pieces]:
    """The documented event sequence of a Message, runs of deltas left as `Pieces`.

    `message_start` (no content, no stop reason, an output count of 1), `ping`, each block's start,
    deltas and stop, `message_delta` (the stop reason and output count), `message_stop`.

    A `tool_use`, `server_tool_use` or `mcp_tool_use` block streams its input as `input_json_delta`
    fragments (`arguments`: each one's input encoded, in order); a server tool's result block (and an
    MCP tool listing) comes whole in its `content_block_start`; a cited text block starts with
    `citations: []` and sends each citation as a `citations_delta` before its text. The billed
    server tool calls (`usage.server_tool_use`) come in `message_delta`.
    """
    usage = msg["usage"]
    start = {**msg, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    if "server_tool_use" in usage:  # counted at the end, in message_delta
        del start["usage"]["server_tool_use"]
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    calls = iter(arguments)
    for index, block in enumerate(msg["content"]):
        kind = block["type"]
        if kind == "thinking":
            yield "content_block_start", _start(index, {"type": "thinking", "thinking": "", "signature": ""})
            yield Pieces(index, "thinking_delta", "thinking", chunks(block["thinking"]))
            yield "content_block_delta", _delta(index, {"type": "signature_delta", "signature": block["signature"]})
        elif kind == "text":
            if "citations" in block:
                yield "content_block_start", _start(index, {"type": "text", "text": "", "citations": []})
                for citation in block["citations"]:
                    yield "content_block_delta", _delta(index, {"type": "citations_delta", "citation": citation})
            else:
                yield "content_block_start", _start(index, {"type": "text", "text": ""})
            yield Pieces(index, "text_delta", "text", chunks(block["text"]))
        elif kind in INPUT_BLOCKS:
            yield "content_block_start", _start(index, {**block, "input": {}})
            args = next(calls)
            if malformed_tool_json and kind == "tool_use":
                args = break_json(args)
            yield Pieces(index, "input_json_delta", "partial_json", chunks(args, 32))
        else:
            yield "content_block_start", _start(index, block)
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    ending = {"output_tokens": usage["output_tokens"]}
    if "server_tool_use" in usage:
        ending["server_tool_use"] = usage["server_tool_use"]
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
        "usage": ending,
    }
    yield "message_delta", delta
    yield "message_stop", {"type": "message_stop"}


def stream_events(
    msg: dict[str, Any], arguments: list[str], malformed_tool_json: bool
) -> Iterator[tuple[str, dict[str, Any]]]:
    """`stream_items` with every run of deltas expanded into its events: `(event name, event JSON)`."""
    for item in stream_items(msg, arguments, malformed_tool_json):
        if isinstance(item, Pieces):
            for piece in item.pieces:
                yield "content_block_delta", item.event(piece)
        else:
            yield item


def _start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def decoded_message(wire: Wire, blocks: list[Any], stop: Any, usage: Any) -> dict[str, Any]:
    """A Message's content blocks, stop reason and usage as a turn.

    Server tool blocks become the turn's `server_tools` (each use with its result), the citations
    of its text blocks its `citations`; the billed searches and fetches are kept only when they
    differ from what the server tools count.
    """
    blocks = [b for b in blocks if isinstance(b, dict)]
    counts = usage if isinstance(usage, dict) else {}
    thinking = [b for b in blocks if b.get("type") == "thinking" and isinstance(b.get("thinking"), str)]
    signature = thinking[0].get("signature") if len(thinking) == 1 else None
    tools = _tools.decoded_server_tools(blocks)
    text, citations = _tools.decoded_text(blocks, tools)
    turn = decoded_turn(
        wire,
        thinking=[b["thinking"] for b in thinking],
        thinking_signature=signature if isinstance(signature, str) else None,
        text=[b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)],
        calls=[
            {"id": b["id"], "name": b["name"], "input": b["input"] if isinstance(b.get("input"), dict) else {}}
            for b in blocks
            if b.get("type") == "tool_use" and isinstance(b.get("id"), str) and isinstance(b.get("name"), str)
        ],
        stop=stop,
        usage=decoded_usage(
            input_tokens=counts.get("input_tokens"),
            output_tokens=counts.get("output_tokens"),
            cache_read_input_tokens=counts.get("cache_read_input_tokens") or None,
            cache_creation_input_tokens=counts.get("cache_creation_input_tokens") or None,
        ),
        server_tools=tools,
        citations=citations if text else [],
    )
    billed = counts.get("server_tool_use")
    if isinstance(billed, dict) and tools:
        extra = _tools.decoded_billing(billed, tools)
        if extra:
            turn["usage"] = {**turn.get("usage", {}), **extra}
    return turn


def decoded_events(wire: Wire, events: Iterable[Any]) -> dict[str, Any] | None:
    """The stream events of a Message (their JSON), put back together as `anthropic`'s stream accumulator does.

    None when no `message_start` came, or a tool call's arguments are not JSON. An `error` event
    becomes the turn's `fault.stream_error`, after what was streamed before it.
    """
    blocks: dict[int, dict[str, Any]] = {}
    usage: dict[str, Any] = {}
    stop: Any = None
    failure: dict[str, Any] | None = None
    started = False
    for data in events:
        if not isinstance(data, dict):
            continue
        kind = data.get("type")
        if kind == "message_start" and isinstance(data.get("message"), dict):
            started = True
            usage.update(data["message"].get("usage") or {})
        elif kind == "content_block_start" and isinstance(data.get("content_block"), dict):
            block = dict(data["content_block"])
            if block.get("type") in INPUT_BLOCKS:
                block["partial"] = ""
            blocks[as_int(data.get("index")) or 0] = block
        elif kind == "content_block_delta" and isinstance(data.get("delta"), dict):
            target = blocks.get(as_int(data.get("index")) or 0)
            if target is not None:
                _apply_delta(target, data["delta"])
        elif kind == "message_delta":
            delta = data.get("delta")
            if isinstance(delta, dict) and "stop_reason" in delta:
                stop = delta["stop_reason"]
            usage.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
        elif kind == "error" and isinstance(data.get("error"), dict):
            error = data["error"]
            failure = {"type": error.get("type") or "api_error", "message": str(error.get("message", ""))}
    if not started:
        return None
    ordered = [blocks[i] for i in sorted(blocks)]
    for block in ordered:
        if block.get("type") in INPUT_BLOCKS:
            partial = block.pop("partial")
            try:
                block["input"] = json.loads(partial) if partial else block.get("input") or {}
            except ValueError:
                return None  # arguments that are not JSON cannot be a turn's tool input
    turn = decoded_message(wire, ordered, stop, usage)
    if failure is not None:
        turn.pop("stop_reason", None)
        turn["fault"] = {"stream_error": failure}
    return turn


def _apply_delta(block: dict[str, Any], delta: dict[str, Any]) -> None:
    kind = delta.get("type")
    if kind == "text_delta" and isinstance(delta.get("text"), str):
        block["text"] = str(block.get("text", "")) + delta["text"]
    elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
        block["thinking"] = str(block.get("thinking", "")) + delta["thinking"]
    elif kind == "signature_delta" and isinstance(delta.get("signature"), str):
        block["signature"] = delta["signature"]  # as anthropic's accumulator: the delta replaces it
    elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
        block["partial"] = str(block.get("partial", "")) + delta["partial_json"]
    elif kind == "citations_delta" and isinstance(delta.get("citation"), dict):
        block["citations"] = [*(block.get("citations") or []), delta["citation"]]
