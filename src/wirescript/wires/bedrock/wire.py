"""Amazon Bedrock runtime: Converse, ConverseStream, and InvokeModel (with its stream) for Anthropic models.

`POST /model/{modelId}/converse` and `/converse-stream` carry Bedrock's own provider-neutral shape;
`/invoke` and `/invoke-with-response-stream` carry the model's native body, here the Anthropic
Messages body (`anthropic_version` in it, the model in the path), as boto3's `invoke_model` and
`anthropic.AnthropicBedrock` send it. Streams are AWS event-stream messages (`application/vnd.amazon.eventstream`),
one `Frame` per message, so faults count, drop and cut whole messages: ConverseStream's
`messageStart` … `metadata`, and InvokeModel's `chunk` messages, each named by the Anthropic event
it carries (`message_start`, `content_block_delta`, …). Errors carry `x-amzn-errortype`, which botocore
raises as the modeled exception (`ThrottlingException`, …); in-stream errors are `exception` messages.

Shapes: botocore's service model for bedrock-runtime (2023-09-30); what AnthropicBedrock sends and
decodes: anthropic's `lib/bedrock` (2.14).
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..._exchange import CHUNK_BYTES
from ...recorded import RecordedRequest
from ...script import ErrorSpec, StreamError, Turn
from ...sse import json_dumps
from .. import _messages
from .._answers import Offer
from .._decode import as_float, as_int, as_list, decoded_error, decoded_turn, decoded_usage, json_body
from .._messages_answers import ANSWER_FIELDS as MESSAGES_ANSWER_FIELDS
from .._messages_answers import ANSWER_RULES as MESSAGES_ANSWER_RULES
from .._messages_answers import messages_offer
from .._messages_rules import header_betas
from .._messages_tools import server_tools_problem
from .._render import plain_text, retry_headers
from .._rules import Violation
from ..base import Frame, OneChunk, Parsed, Rendered, Wire
from . import converse as _converse
from . import eventstream
from .answers import CONVERSE_ANSWER_FIELDS, CONVERSE_ANSWER_RULES, converse_offer
from .caching import BEDROCK_CACHING
from .rules import RULES, check_converse, check_invoke

__all__ = ["BEDROCK_STOP_REASONS", "OPERATIONS", "BedrockWire"]

OPERATIONS = {
    "converse": "Converse",
    "converse-stream": "ConverseStream",
    "invoke": "InvokeModel",
    "invoke-with-response-stream": "InvokeModelWithResponseStream",
}
"""The last path segment of each operation served, and the operation's name."""

BEDROCK_STOP_REASONS = {
    "guardrail_intervened": "guardrail_intervened",
    "content_filtered": "refusal",
}
"""Converse's `StopReason` values a turn may script beyond the canonical ones (botocore's service model).

`content_filtered` stands for the canonical `refusal` (OpenAI's `content_filter`); `guardrail_intervened`
has no equivalent elsewhere and is sent unchanged by every wire."""

_PATH = re.compile(r"/model/(?P<model>.+)/(?P<op>converse|converse-stream|invoke|invoke-with-response-stream)$")
_CREDENTIAL = re.compile(r"Credential=([^/,\s]+)/")
"""The access key id in a SigV4 `Authorization` header."""
_EVENTSTREAM = "application/vnd.amazon.eventstream"
_CONVERSE_EVENTS = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}
)
_MESSAGES_EVENTS = frozenset(
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


@functools.lru_cache(maxsize=256)
def operation(path: str) -> tuple[str, str] | None:
    """`(model id, operation path segment)` of a bedrock-runtime path, or None for another path.

    The model id is the segment between `/model/` and the operation, as the HTTP library decoded it
    (boto3 percent-encodes `:` and `/`, AnthropicBedrock `/` only; an ARN keeps its `/`). Kept for
    the paths seen last: a request asks it several times (to route, parse, check and render it).
    """
    found = _PATH.search(path)
    return (found["model"], found["op"]) if found else None


def _claude_body(body: dict[str, Any], model: str | None) -> bool:
    """Whether an InvokeModel body is Claude's Messages body.

    It is when it carries `anthropic_version`, or `messages` for a path's model id that names an
    Anthropic model (`anthropic.claude-…`, `us.anthropic.…`); an ARN that names none is not read.
    """
    if "anthropic_version" in body:
        return True
    return "messages" in body and isinstance(model, str) and "anthropic." in model.lower()


def _system_text(system: Any) -> str | None:
    texts = [b["text"] for b in as_list(system) if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "\n".join(texts) if texts else None


def _tool_result_content(content: Any) -> str:
    parts = []
    for item in as_list(content):
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif isinstance(item, dict) and "json" in item:
            parts.append(json_dumps(item["json"]))
    return "".join(parts)


class BedrockWire(Wire):
    """Amazon Bedrock runtime (`bedrock-runtime`): Converse, ConverseStream, InvokeModel and its stream.

    InvokeModel serves the Anthropic Messages body (Claude on Bedrock). The record's `model` is the model
    id (or ARN) from the path, its `api_key` the SigV4 access key id (or a Bedrock API key sent as a
    bearer token); the `Authorization` header and `X-Amz-Security-Token` are redacted.
    """

    name = "bedrock"
    endpoint = "POST …/model/{modelId}/converse|converse-stream|invoke|invoke-with-response-stream"
    endpoints = (
        "POST /model/{model}/converse",
        "POST /model/{model}/converse-stream",
        "POST /model/{model}/invoke",
        "POST /model/{model}/invoke-with-response-stream",
    )
    closing = frozenset({"message_stop"})  # InvokeModel's Claude stream
    events = _CONVERSE_EVENTS | _MESSAGES_EVENTS
    stop_reasons = BEDROCK_STOP_REASONS
    hosts = ("bedrock-runtime.*.amazonaws.com", "bedrock-runtime-fips.*.amazonaws.com")  # every region
    boto_service = "bedrock-runtime"
    retry_count_header = "x-stainless-retry-count"  # anthropic.AnthropicBedrock's; botocore sends none
    per_request_headers = ("amz-sdk-invocation-id", "x-amz-date")  # botocore's: a new id and time per call
    rules = RULES
    answer_rules = (*CONVERSE_ANSWER_RULES, *MESSAGES_ANSWER_RULES)
    answer_fields = CONVERSE_ANSWER_FIELDS | MESSAGES_ANSWER_FIELDS
    caching = BEDROCK_CACHING
    label = "Amazon Bedrock runtime (Converse; InvokeModel for Claude)"

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """`POST …/model/{modelId}/{operation}` for the four operations, on any host."""
        return method == "POST" and operation(path) is not None

    def api_key(self, headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
        """The SigV4 access key id (`Credential=<key id>/…` of `Authorization`), else a bearer token."""
        authorization = headers.get("authorization", "")
        if authorization.startswith("AWS4-HMAC-SHA256"):
            found = _CREDENTIAL.search(authorization)
            return found[1] if found else None
        return super().api_key(headers, query)

    @staticmethod
    def tool_result_text(result: Mapping[str, Any]) -> str | None:
        """A Converse `{"toolResult": {...}}` block's text (`json` items as JSON), or an Anthropic `tool_result`'s."""
        inner = result.get("toolResult")
        if isinstance(inner, dict):
            return _tool_result_content(inner.get("content"))
        return _messages.tool_result_text(result)

    def parse(self, body: Any, path: str) -> Parsed:
        """Converse fields (system blocks, `toolConfig`, `toolResult` blocks, `inferenceConfig`), or Messages ones."""
        found = operation(path)
        assert found is not None  # matches() said so
        model, op = found
        if op.startswith("invoke"):
            parsed = _messages.parse_messages(body)
            parsed.model = model
            parsed.stream = op == "invoke-with-response-stream"
            return parsed
        # Exact types first (what a parsed JSON body holds), the general readers otherwise: the same values.
        messages = body.get("messages")
        if messages.__class__ is not list and not isinstance(messages, list):
            messages = []
        tool_config = body.get("toolConfig")
        tools: list[Any] = []
        if tool_config is not None and isinstance(tool_config, dict):
            specs = as_list(tool_config.get("tools"))
            tools = [t["toolSpec"] for t in specs if isinstance(t, dict) and isinstance(t.get("toolSpec"), dict)]
        last_user: list[Any] | None = None  # the toolResult blocks of the last user message (None: none)
        every: list[Any] = []  # and of every message, in order
        for message in messages:  # each message's `toolResult` blocks: a loop, no function call per message
            if message.__class__ is not dict and not isinstance(message, dict):
                continue
            results: list[Any] | None = None
            content = message.get("content")
            if content.__class__ is list or isinstance(content, list):
                for block in content:
                    if block.__class__ is dict or isinstance(block, dict):
                        result = block.get("toolResult")
                        if result is not None and (result.__class__ is dict or isinstance(result, dict)):
                            if results is None:
                                results = []
                            results.append(block)
            if message.get("role") == "user":
                last_user = results
            if results is not None:
                every += results
        system = body.get("system")
        inference = body.get("inferenceConfig")
        if inference is not None and not isinstance(inference, dict):
            inference = None
        return Parsed(
            model=model,
            system=_system_text(system) if system is not None else None,
            messages=messages,
            tools=tools,
            tool_names=[t["name"] for t in tools if isinstance(t.get("name"), str)] if tools else [],
            tool_results=last_user if last_user is not None else [],
            all_tool_results=every,
            stream=op == "converse-stream",
            max_tokens=as_int(inference.get("maxTokens")) if inference is not None else None,
            temperature=as_float(inference.get("temperature")) if inference is not None else None,
        )

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        """Converse JSON or event stream; for invoke, an Anthropic Message or its events in `chunk` messages.

        A plain text turn's Converse body, and its ConverseStream body read in chunks, hold nothing of
        the request (its index is in the headers alone): they are kept per text, stop reason and
        operation (`_PLAIN`), the bytes the full rendering gives.
        """
        found = operation(record.path)
        op = found[1] if found else "converse"
        index = record.index
        text = turn.text
        if text is not None and (op == "converse" or (joined and op == "converse-stream")) and plain_text(turn):
            key = (text, "end_turn" if turn.stop_reason is None else self.canonical_stop(turn), op)
            kept = _PLAIN.get(key)
            if kept is None:
                return self._plain(turn, record, op, key, joined)
            if op == "converse":
                return Rendered(200, {"content-type": "application/json", "x-amzn-requestid": _request_id(index)}, kept)
            chunk = OneChunk(kept, len(kept), "messageStart", "")
            return Rendered(200, {"content-type": _EVENTSTREAM, "x-amzn-requestid": _request_id(index)}, frames=chunk)
        return self._render(turn, record, op, malformed_tool_json, joined)

    def _plain(self, turn: Turn, record: RecordedRequest, op: str, key: tuple[str, str, str], joined: bool) -> Rendered:
        """`_render` of a plain text turn, its body kept for the next answer of the same text and stop reason.

        A stream is kept when it was rendered at once as one chunk, a Converse body when it is no longer
        than one (`CHUNK_BYTES`: a suite's few short texts, not its long ones).
        """
        rendered = self._render(turn, record, op, False, joined)
        frames = rendered.frames
        if frames is None:
            body = rendered.body
        elif frames.__class__ is OneChunk and frames.content_end == len(frames.body) and not frames.closing:
            body = frames.body
        else:  # not one chunk: a long answer, rendered as it is read
            return rendered
        if len(body) < CHUNK_BYTES:
            if len(_PLAIN) >= _PLAIN_MOST:  # a suite's many texts: the newest are kept, not the first few
                _PLAIN.clear()
            _PLAIN[key] = body
        return rendered

    def _render(
        self, turn: Turn, record: RecordedRequest, op: str, malformed_tool_json: bool, joined: bool
    ) -> Rendered:
        index = record.index
        if op == "converse":
            body = _converse.converse_json(turn, index, stop=self.canonical_stop(turn))
            return Rendered(200, {"content-type": "application/json", "x-amzn-requestid": _request_id(index)}, body)
        if op == "converse-stream":
            stop = self.canonical_stop(turn)
            frames: Iterator[Frame] | None = None
            if joined:  # a short stream: rendered at once, as the one chunk it is sent in
                frames = _converse.one_chunk(turn, index, stop=stop, malformed_tool_json=malformed_tool_json)
            if frames is None:
                frames = _converse.stream_frames(
                    turn, index, malformed_tool_json=malformed_tool_json, stop=stop, joined=joined
                )
            return Rendered(200, {"content-type": _EVENTSTREAM, "x-amzn-requestid": _request_id(index)}, frames=frames)
        headers = {"x-amzn-requestid": _request_id(index)}
        model = record.model or "anthropic.claude-wirescript"
        msg, arguments = _messages.message(turn, index, model, f"msg_bdrk_{index:04d}", self.canonical_stop(turn))
        if op == "invoke":
            return Rendered(200, {"content-type": "application/json", **headers}, json_dumps(msg).encode())
        events = _chunks(msg, arguments, malformed_tool_json)
        return Rendered(200, {"content-type": _EVENTSTREAM, **headers}, frames=events)

    def offer(self, record: RecordedRequest) -> Offer | None:
        """Converse's `toolConfig` and `outputConfig`; InvokeModel's Claude body as the Messages rules read it.

        Another model's own InvokeModel body (Nova's, Mistral's) is held to nothing.
        """
        found = operation(record.path)
        body = record.body
        if found is None or not isinstance(body, dict):
            return None
        if found[1] in ("converse", "converse-stream"):
            return converse_offer(body, record.model)
        if not _claude_body(body, record.model):
            return None
        offer = messages_offer(body, record.tools)
        offer.rules = MESSAGES_ANSWER_RULES
        return offer

    def server_tools_problem(self, turn: Turn, record: RecordedRequest) -> str | None:
        """Why Bedrock could not have answered with these server tools or citations, or None.

        InvokeModel sends Claude's Messages answer: of the server tools, Bedrock runs only tool search
        there. Converse renders no server tools or citations.
        """
        found = operation(record.path)
        if found is not None and found[1].startswith("invoke"):
            return server_tools_problem(turn, record, bedrock=True)
        return (
            "Converse renders no server tools or citations: the one server tool Claude runs on Bedrock, tool search, "
            "is InvokeModel's (https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool). Send "
            "the request with InvokeModel, or take them out of the turn for Converse"
        )

    def check(self, record: RecordedRequest, *, skip: frozenset[str]) -> Violation | None:
        """Converse's refusals, or for InvokeModel the Claude Messages body's (with Bedrock's differences).

        An InvokeModel body carrying `anthropic_version`, or `messages` for a model id naming Anthropic's,
        is Claude's Messages body (what `anthropic.AnthropicBedrock` and boto3's `invoke_model` send for
        Claude); another model's own body (Nova's, Mistral's, gpt-oss's `messages` too) is not checked.
        """
        found = operation(record.path)
        body = record.body
        if found is None or not isinstance(body, dict):
            return None
        if found[1] in ("converse", "converse-stream"):
            return check_converse(body, skip=skip, model=record.model)
        if not _claude_body(body, record.model):
            return None  # another model's own body, which Bedrock passes through
        betas = header_betas(record.headers.get("anthropic-beta"))
        return check_invoke(body, record.model, skip=skip, betas=betas)

    @staticmethod
    def check_body(body: dict[str, Any], *, skip: frozenset[str], **context: Any) -> Violation | None:
        """Converse's rules over a bare body (`wirescript.strict.check_request`)."""
        return check_converse(body, skip=skip, model=context.get("model"))

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """`{"message": …}` with `x-amzn-errortype` naming the exception (`type`, else the status's)."""
        status, headers, body = _converse.error_response(spec, record.index)
        # `retry-after-ms` is AnthropicBedrock's (the anthropic SDK's retry loop); botocore ignores it.
        merged = {k.lower(): v for k, v in headers.items()} | retry_headers(spec, self.retryable)
        return Rendered(status, merged, body)

    def decode(self, status: int, headers: Mapping[str, str], body: bytes) -> dict[str, Any] | None:
        """A bedrock-runtime answer as a turn: Converse or an Anthropic Message, JSON or event stream.

        The operation is told by the answer itself: a Converse body has `output`, an invoke body is
        a Message (`"type": "message"`); a ConverseStream sends Converse events, an invoke stream
        `chunk` events carrying Messages events. An error status becomes an `error` turn whose type
        is the `x-amzn-errortype` exception name; an `exception` message in a stream, the turn's
        `fault.stream_error` (its type the exception member, as `stream_error` sends it back).
        """
        if status >= 400:
            data = json_body(body)
            data = data if isinstance(data, dict) else {}
            kind = headers.get("x-amzn-errortype", "").split(":", 1)[0]
            return decoded_error(status, kind or None, data.get("message", data.get("Message")))
        if headers.get("content-type", "").lower().startswith(_EVENTSTREAM):
            return _decode_event_stream(self, body)
        data = json_body(body)
        if not isinstance(data, dict):
            return None
        if data.get("type") == "message":
            return _messages.decoded_message(
                self, as_list(data.get("content")), data.get("stop_reason"), data.get("usage")
            )
        output = data.get("output")
        message = output.get("message") if isinstance(output, dict) else None
        if not isinstance(message, dict):
            return None
        return _decoded_converse(self, as_list(message.get("content")), data.get("stopReason"), data.get("usage"))

    def stream_error(self, spec: StreamError, record: RecordedRequest) -> Frame:
        """An `exception` message: `type` a stream exception member, or an Anthropic error type translated."""
        name, data = _converse.stream_exception(spec.type, spec.message)
        return Frame(name, data)


_PLAIN: dict[tuple[str, str, str], bytes] = {}
"""A plain text turn's body by (text, canonical stop reason, operation): its Converse JSON, or its ConverseStream's
one chunk."""
_PLAIN_MOST = 256


def _request_id(index: int) -> str:
    return f"req-{index:04d}"


def _chunks(msg: dict[str, Any], arguments: list[str], malformed_tool_json: bool) -> Iterator[Frame]:
    """The Messages events of an invoke stream, each one `chunk` message named by its event."""
    for name, data in _messages.stream_events(msg, arguments, malformed_tool_json):
        if name == "message_stop":
            usage = msg["usage"]
            data = {
                **data,
                "amazon-bedrock-invocationMetrics": {
                    "inputTokenCount": usage["input_tokens"],
                    "outputTokenCount": usage["output_tokens"],
                    "invocationLatency": 1,
                    "firstByteLatency": 1,
                },
            }
        yield Frame(name, eventstream.chunk(json_dumps(data).encode()))


def _decoded_converse(wire: Wire, blocks: list[Any], stop: Any, usage: Any) -> dict[str, Any]:
    """Converse content blocks (`reasoningContent`, `text`, `toolUse`), stop reason and usage as a turn."""
    blocks = [b for b in blocks if isinstance(b, dict)]
    reasoning = [
        b["reasoningContent"]["reasoningText"]
        for b in blocks
        if isinstance(b.get("reasoningContent"), dict)
        and isinstance(b["reasoningContent"].get("reasoningText"), dict)
        and isinstance(b["reasoningContent"]["reasoningText"].get("text"), str)
    ]
    signature = reasoning[0].get("signature") if len(reasoning) == 1 else None
    calls = [b["toolUse"] for b in blocks if isinstance(b.get("toolUse"), dict)]
    counts = usage if isinstance(usage, dict) else {}
    return decoded_turn(
        wire,
        thinking=[r["text"] for r in reasoning],
        thinking_signature=signature if isinstance(signature, str) else None,
        text=[b["text"] for b in blocks if isinstance(b.get("text"), str)],
        calls=[
            {"id": c["toolUseId"], "name": c["name"], "input": c["input"] if isinstance(c.get("input"), dict) else {}}
            for c in calls
            if isinstance(c.get("toolUseId"), str) and isinstance(c.get("name"), str)
        ],
        stop=stop,
        usage=decoded_usage(
            input_tokens=counts.get("inputTokens"),
            output_tokens=counts.get("outputTokens"),
            cache_read_input_tokens=counts.get("cacheReadInputTokens") or None,
            cache_creation_input_tokens=counts.get("cacheWriteInputTokens") or None,
        ),
    )


def _decode_event_stream(wire: Wire, body: bytes) -> dict[str, Any] | None:
    """An event stream: invoke's `chunk` events (Messages events), or ConverseStream's events."""
    try:
        messages = eventstream.decode(body)
    except eventstream.EventStreamError:
        return None
    anthropic: list[Any] = []
    converse: list[tuple[str, Any]] = []
    failure: dict[str, Any] | None = None
    for message in messages:
        kind = message.headers.get(":message-type")
        payload = json_body(message.payload) if message.payload else {}
        payload = payload if isinstance(payload, dict) else {}
        if kind == "exception":
            failure = {"type": str(message.headers.get(":exception-type") or "modelStreamErrorException")}
            failure["message"] = str(payload.get("message", payload.get("Message", "")))
            continue
        if kind != "event":
            continue
        name = str(message.headers.get(":event-type", ""))
        if name == "chunk":
            try:
                anthropic.append(json.loads(base64.b64decode(str(payload.get("bytes", "")), validate=True)))
            except (ValueError, binascii.Error):
                return None
        else:
            converse.append((name, payload))
    if anthropic:
        if failure is not None:
            anthropic.append({"type": "error", "error": failure})
        return _messages.decoded_events(wire, anthropic)
    turn = _decoded_converse_stream(wire, converse)
    if turn is not None and failure is not None:
        turn.pop("stop_reason", None)
        turn["fault"] = {"stream_error": failure}
    return turn


def _decoded_converse_stream(wire: Wire, events: list[tuple[str, Any]]) -> dict[str, Any] | None:
    """ConverseStream events put back together as a Converse message, as botocore's caller would."""
    if not events or events[0][0] != "messageStart":
        return None
    blocks: dict[int, dict[str, Any]] = {}
    stop: Any = None
    usage: Any = None
    for name, data in events:
        index = as_int(data.get("contentBlockIndex")) or 0
        if name == "contentBlockStart":
            start = data.get("start")
            tool = start.get("toolUse") if isinstance(start, dict) else None
            if isinstance(tool, dict):
                blocks[index] = {"toolUse": {**tool, "partial": ""}}
        elif name == "contentBlockDelta" and isinstance(data.get("delta"), dict):
            delta = data["delta"]
            block = blocks.setdefault(index, {})
            if isinstance(delta.get("text"), str):
                block["text"] = str(block.get("text", "")) + delta["text"]
            reasoning = delta.get("reasoningContent")
            if isinstance(reasoning, dict):
                text = block.setdefault("reasoningContent", {}).setdefault("reasoningText", {"text": ""})
                if isinstance(reasoning.get("text"), str):
                    text["text"] += reasoning["text"]
                if isinstance(reasoning.get("signature"), str):
                    text["signature"] = reasoning["signature"]
            tool_delta = delta.get("toolUse")
            if isinstance(tool_delta, dict) and isinstance(tool_delta.get("input"), str) and "toolUse" in block:
                block["toolUse"]["partial"] += tool_delta["input"]
        elif name == "messageStop":
            stop = data.get("stopReason")
        elif name == "metadata":
            usage = data.get("usage")
    ordered = [blocks[i] for i in sorted(blocks)]
    for block in ordered:
        tool = block.get("toolUse")
        if isinstance(tool, dict):
            partial = tool.pop("partial", "")
            try:
                tool["input"] = json.loads(partial) if partial else {}
            except ValueError:
                return None  # arguments that are not JSON cannot be a turn's tool input
    return _decoded_converse(wire, ordered, stop, usage)
