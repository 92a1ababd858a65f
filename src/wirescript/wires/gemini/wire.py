r"""Gemini Developer API (google-genai): `POST …/models/{model}:generateContent` and `:streamGenerateContent`.

The answer is a `GenerateContentResponse`: JSON, or for `:streamGenerateContent?alt=sse` a series of
`data:` frames, each a whole `GenerateContentResponse` holding the next piece of the answer. The
last frame carries the `finishReason` and the full `usageMetadata`. `:streamGenerateContent`
without `alt=sse` streams the same chunks as the elements of one JSON array, the API's default
streaming format (`[{...}\n,\r\n{...}\n]`, sent as each element is ready).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from json.encoder import encode_basestring
from typing import Any, ClassVar

from pydantic_core import PydanticSerializationError, to_json

from ..._exchange import CHUNK_BYTES
from ..._text import text_of
from ...recorded import RecordedRequest
from ...script import ErrorSpec, StreamError, Turn
from ...sse import encode_event, json_dumps
from .._answers import Offer
from .._caching import Caching
from .._decode import (
    as_dict,
    as_float,
    as_int,
    as_list,
    decoded_error,
    decoded_turn,
    decoded_usage,
    is_event_stream,
    json_body,
    sse_json,
)
from .._render import DEFAULT_INPUT_TOKENS, chunks, default_usage, error_message, retry_headers
from .._rules import Violation
from ..base import Frame, OneChunk, Parsed, Rendered, Wire
from . import grounding
from .answers import ANSWER_FIELDS, ANSWER_RULES, gemini_offer
from .caching import GEMINI_CACHING, CachedContents
from .rules import RULES, check_gemini, gemini_rules_violation, plainly_valid_gemini

__all__ = ["GEMINI_ERROR_STATUSES", "GEMINI_FINISH_REASONS", "GeminiWire"]

GEMINI_ERROR_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
"""The `error.status` (a `google.rpc.Code` name) for each HTTP status; other statuses are `UNKNOWN`."""

GEMINI_FINISH_REASONS = {
    "end_turn": "STOP",
    "tool_use": "STOP",
    "stop_sequence": "STOP",
    "max_tokens": "MAX_TOKENS",
    "refusal": "SAFETY",
}
"""The `finishReason` for each canonical stop reason; other values are sent unchanged (`RECITATION`, …)."""

GEMINI_STOP_REASONS = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "refusal",
    "RECITATION": "RECITATION",
    "LANGUAGE": "LANGUAGE",
    "OTHER": "OTHER",
    "BLOCKLIST": "BLOCKLIST",
    "PROHIBITED_CONTENT": "PROHIBITED_CONTENT",
    "SPII": "SPII",
    "MALFORMED_FUNCTION_CALL": "MALFORMED_FUNCTION_CALL",
    "UNEXPECTED_TOOL_CALL": "UNEXPECTED_TOOL_CALL",
    "TOO_MANY_TOOL_CALLS": "TOO_MANY_TOOL_CALLS",
    "MALFORMED_RESPONSE": "MALFORMED_RESPONSE",
}
"""Gemini's `finishReason` values a turn may script, as the canonical stop reasons they stand for
(`RECITATION` and the other Gemini-only reasons stand for themselves)."""

GEMINI_RETRYABLE = frozenset({408, 429, 500, 502, 503, 504})
"""The statuses google-genai retries when `HttpOptions(retry_options=...)` is given (it retries nothing by default)."""

_STATUS_CODES = {status: code for code, status in GEMINI_ERROR_STATUSES.items()}
_STREAM_ERROR_CODES = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "rate_limit_error": 429,
    "api_error": 500,
    "server_error": 500,
    "overloaded_error": 503,
    "timeout_error": 504,
}
_JSON_HEADERS = {"content-type": "application/json; charset=UTF-8"}
_SSE_HEADERS = {"content-type": "text/event-stream"}
_METHODS = (":generateContent", ":streamGenerateContent")


def _field(message: Mapping[str, Any], camel: str, snake: str) -> Any:
    """A field of a JSON message by either of its names: lowerCamelCase first, then the proto field name.

    The proto3 JSON mapping has parsers accept both (https://protobuf.dev/programming-guides/json/:
    "Parsers accept both the lowerCamelCase name (or the one specified by the `json_name` option) and
    the original proto field name"), and the Gemini API does: litellm's `gemini/` route sends
    `system_instruction`, `function_declarations`, `function_response`, `generation_config`.
    """
    value = message.get(camel)
    return message.get(snake) if value is None else value


_MESSAGE_TYPES = {
    "contents": "type.googleapis.com/google.ai.generativelanguage.v1beta.Content",
    "tools": "type.googleapis.com/google.ai.generativelanguage.v1beta.Tool",
}
"""The protobuf message type of each repeated field, as the API's type errors name it."""


def _error_status(status: int) -> str:
    return GEMINI_ERROR_STATUSES.get(status, "UNKNOWN")


def _model_of(path: str) -> str | None:
    """The model id: the last path segment before the method (`…/models/gemini-2.5-flash:generateContent`).

    The same holds for tuned models (`…/tunedModels/my-tune:…`) and Vertex AI publisher paths.
    """
    resource, _, _ = path.rpartition(":")
    return resource.rpartition("/")[2] or None


def _place(path: str) -> tuple[str | None, bool]:
    """The model (`_model_of`) and whether the request streams, of a request's path, kept for the next request."""
    place = (_model_of(path), path.endswith(":streamGenerateContent"))
    if len(_PLACES) < _PLACES_MOST and len(path) <= _KEPT_LONGEST:  # a stub sees a few paths, streamed or not
        _PLACES[path] = place
    return place


_PLACES: dict[str, tuple[str | None, bool]] = {}
"""`_place` of each path seen: a pure function of the path, so it cannot go stale."""
_PLACES_MOST = 256
_KEPT_LONGEST = 512
"""The longest path (or model) whose reading (or answer shape) is kept: longer ones are worked out each time."""


class GeminiWire(Wire):
    """The Gemini Developer API as google-genai (and frameworks on it) calls it.

    The model comes from the path, streaming from the method (`:streamGenerateContent`). Thinking
    is rendered as thought parts (`thought: true`), tool calls as `functionCall` parts, several in
    one turn; a turn's stop reason is translated to Gemini's `finishReason` (`end_turn` and
    `tool_use` are `STOP`, `max_tokens` is `MAX_TOKENS`, `refusal` is `SAFETY`).

    A stream sends one chunk per text piece (cut mid-word) and per function call; only the last
    chunk (`final_chunk`, the others are `chunk`) has the `finishReason` and the output token
    count. Ids are deterministic per stub: `fc_0003_1` is the second function call of
    `requests[3]`, `resp_0003` its `responseId`, and a thinking turn's `thoughtSignature` (on the
    first function call, else on the last part) is `sig_0003` base64-encoded.
    """

    name = "gemini"
    endpoint = "POST …/models/{model}:generateContent"
    endpoints = ("POST /v1beta/models/{model}:generateContent", "POST /v1beta/models/{model}:streamGenerateContent")
    events = frozenset({"chunk", "final_chunk"})
    stop_reasons = GEMINI_STOP_REASONS
    credential_headers = ("x-goog-api-key",)
    credential_query = ("key",)
    # The Gemini API, and Vertex AI's global and regional (`us-central1-aiplatform.googleapis.com`) endpoints.
    hosts = ("generativelanguage.googleapis.com", "aiplatform.googleapis.com", "*-aiplatform.googleapis.com")
    client_hint = (
        "google-genai: http_options=types.HttpOptions(httpx_client=httpx2.Client(transport=stub), "
        "httpx_async_client=httpx2.AsyncClient(transport=stub))"
    )
    retryable = GEMINI_RETRYABLE
    malformed_tool_json_applies_to_json = True
    rules = RULES
    answer_rules = ANSWER_RULES
    answer_fields = ANSWER_FIELDS
    caching: ClassVar[Caching] = GEMINI_CACHING
    label = "Gemini generateContent"
    own_fields = ("contents", "generationConfig", "generation_config", "systemInstruction", "system_instruction")
    unknown_field = 'Invalid JSON payload received. Unknown name "{key}": Cannot find field.'
    # protobuf JSON takes a lone object for a repeated field
    field_types: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "contents": ("array", "object"),
        "tools": ("array", "object"),
    }

    def __init__(self) -> None:
        self.cached_contents = CachedContents()
        """Its explicit caches (`caches.create`), which the stub's `cachedContents` endpoints manage."""

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """`POST …/models/{model}:generateContent` or `:streamGenerateContent`, any API version, any host."""
        return method == "POST" and path.endswith(_METHODS)

    @staticmethod
    def tool_result_text(result: Mapping[str, Any]) -> str | None:
        """A `functionResponse` part's text.

        Its `output` (or `error`) string when that is all its `response` holds, else the `response` as compact JSON.
        """
        function_response = _field(result, "functionResponse", "function_response")
        if not isinstance(function_response, Mapping):
            return None
        response = function_response.get("response")
        if isinstance(response, Mapping) and len(response) == 1:
            (key, value), *_ = response.items()
            if key in ("output", "error") and isinstance(value, str):
                return value
        return json.dumps(response, separators=(",", ":"), ensure_ascii=False)

    def parse(self, body: Any, path: str) -> Parsed:
        """Model and stream flag from the path; contents, system instruction, tools and results from the body."""
        place = _PLACES.get(path)  # the model and the stream flag: worked out once per path
        if place is None:
            place = _place(path)
        contents = body.get("contents")
        if not isinstance(contents, list):
            contents = []
        tools = body.get("tools")
        # Each field by either of its JSON names, camelCase first: the API accepts snake_case bodies too (`_field`).
        system = body.get("systemInstruction")
        if system is None:
            system = body.get("system_instruction")
        if system is not None:
            system = text_of(system.get("parts") if isinstance(system, dict) else system, sep="\n")
        config = body.get("generationConfig")
        if config is None:
            config = body.get("generation_config")
        max_tokens = temperature = None
        if isinstance(config, dict) and config:
            limit = config.get("maxOutputTokens")
            max_tokens = as_int(config.get("max_output_tokens") if limit is None else limit)
            temperature = as_float(config.get("temperature"))
        # The functionResponse parts of every content, and of the last that is not the model's (a `user` or
        # `function` turn): what the request answers the model's last calls with. A list only where one is found.
        results: list[Any] = []
        newest: list[Any] | None = None
        for content in contents:
            if not isinstance(content, dict):
                continue
            found: list[Any] | None = None
            parts = content.get("parts")
            if isinstance(parts, list):
                for part in parts:
                    if isinstance(part, dict) and ("functionResponse" in part or "function_response" in part):
                        if found is None:
                            found = [part]
                        else:
                            found.append(part)
                if found is not None:
                    results += found
            if content.get("role") != "model":
                newest = found
        if isinstance(tools, list) and tools:
            names = [
                declaration["name"]
                for tool in tools
                if isinstance(tool, dict)
                for declaration in as_list(_field(tool, "functionDeclarations", "function_declarations"))
                if isinstance(declaration, dict) and isinstance(declaration.get("name"), str)
            ]
        else:
            tools = tools if isinstance(tools, list) else []
            names = []
        # By position, in the declared order (a call by keyword costs twice as much; the order is held by a test):
        # model, system, messages, conversation, tools, tool_names, tool_results, all_tool_results, stream,
        # max_tokens, temperature.
        return Parsed(
            place[0],
            system,
            contents,
            None,
            tools,
            names,
            [] if newest is None else newest,
            results,
            place[1],
            max_tokens,
            temperature,
        )

    def check(self, record: RecordedRequest, *, skip: frozenset[str]) -> Violation | None:
        """The Gemini strict rules (snake_case and camelCase fields alike, as the API reads them)."""
        body = record.body
        if not isinstance(body, dict) or plainly_valid_gemini(body):  # `check_gemini`, one call fewer
            return None
        return gemini_rules_violation(body, skip=skip)

    @staticmethod
    def check_body(body: dict[str, Any], *, skip: frozenset[str], **context: Any) -> Violation | None:
        """Its rules over a bare body (`wirescript.strict.check_request`): the request alone decides them."""
        return check_gemini(body, skip=skip)

    def field_type_message(self, key: str, value: Any, kinds: tuple[str, ...]) -> str:
        """The Google API's words: `Invalid value at 'contents' (type.googleapis.com/…Content), "hi"`."""
        return f"Invalid value at '{key}' ({_MESSAGE_TYPES.get(key, kinds[0])}), {json.dumps(value)}"

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        """A `GenerateContentResponse` as JSON, or as SSE chunks when the request streams.

        `joined`: each run of text pieces travels in frames of many chunks.

        With `malformed_tool_json`, the tool calls are replaced by what Gemini answers when the model
        botches one: no `functionCall` parts and `finishReason: MALFORMED_FUNCTION_CALL`.
        """
        text = turn.text
        if (  # a text answer, what most turns are: from the JSON kept for its shape (`_text`)
            text is not None
            and turn.thinking is None
            and turn.tool is None
            and not turn.tools
            and turn.server_tools is None
            and turn.citations is None
        ):
            rendered = self._text(turn, record, text, joined=joined)
            if rendered is not None:
                return rendered
        index = record.index
        thinking, calls = turn.thinking, turn.tool_calls
        chars = len(text or "") + len(thinking or "")
        if calls:  # tool inputs are sent as objects: encoded here only to count their characters
            chars += sum(len(json_dumps(c.input)) for c in calls)
        input_tokens, output_tokens = default_usage(turn, chars)
        cached = turn.usage.cache_read_input_tokens if turn.usage else None
        if malformed_tool_json and calls:
            finish = "MALFORMED_FUNCTION_CALL"
        else:
            stop = self.canonical_stop(turn)
            finish = GEMINI_FINISH_REASONS.get(stop, stop)
        if malformed_tool_json:
            calls = ()
        model = record.model or "gemini-wirescript"
        identity = f"resp_{index:04d}"
        signature = None if thinking is None else base64.b64encode(f"sig_{index:04d}".encode()).decode()
        function_parts = [
            {"functionCall": {"id": call.id or f"fc_{index:04d}_{k}", "name": call.name, "args": call.input}}
            for k, call in enumerate(calls)
        ]
        metadata = None
        code: list[dict[str, Any]] = []
        if turn.server_tools is not None or turn.citations is not None:
            code = grounding.code_parts(turn)
            metadata = grounding.grounding_metadata(turn)
        if not record.stream:
            parts: list[dict[str, Any]] = []
            if thinking is not None:
                parts.append({"text": thinking, "thought": True})
            if code:
                parts.extend(code)
            if text is not None:
                parts.append({"text": text})
            parts.extend(function_parts)
            _sign(parts, signature)
            envelope = _envelope(input_tokens, output_tokens, cached, model, identity)
            body = {"candidates": [_candidate(parts, finish, metadata)], **envelope}
            return Rendered(200, dict(_JSON_HEADERS), json_dumps(body).encode())
        # The parts in order, a run of text pieces as one entry: (its pieces, the JSON before and after each).
        runs: list[dict[str, Any] | _Run] = []
        if thinking is not None:
            runs.append((chunks(thinking) or [""], *_THOUGHT_PART))
        if code:
            runs.extend(code)
        if text is not None:
            runs.append((chunks(text) or [""], *_TEXT_PART))
        if function_parts:
            runs.extend(function_parts)
        # The thought signature goes where Gemini puts it: the first function call, else the last part.
        if signature is not None and (function_parts or isinstance(runs[-1], dict)):
            _sign([part for part in runs if isinstance(part, dict)], signature)
            signature = None
        array = _json_array(record)
        if metadata is None:  # what surrounds the parts, kept by model, usage and finish, the id put in
            shape = (model, input_tokens, output_tokens, cached, finish, array)
            middle_head, middle_tail, close_head, close_tail = _AROUND.get(shape) or _kept_around(shape)
            middle, close = f"{middle_head}{identity}{middle_tail}", f"{close_head}{identity}{close_tail}"
        else:
            envelope = _envelope(input_tokens, output_tokens, cached, model, identity)
            middle, close = _around(envelope, finish, metadata, array=array)
        frames = _stream(runs, middle, close, array=array, joined=joined, signature=signature)
        return Rendered(200, dict(_JSON_HEADERS if array else _SSE_HEADERS), b"", frames)

    def _text(self, turn: Turn, record: RecordedRequest, text: str, *, joined: bool) -> Rendered | None:
        """`render` of a turn of text alone, from the JSON kept for its answer's shape; None: left to `render`.

        A whole answer, and a short stream read in chunks (which travels as one chunk, `OneChunk`): the
        bytes `render`'s general path gives (`tests/test_gemini_fast_paths.py` holds them equal), with no
        dict encoded and no generator. A stream read event by event, or too long for one chunk, is left to it.
        """
        chars = len(text)
        stream = record.stream
        if stream and (not joined or chars > _ONE_CHUNK_CHARS):
            return None
        usage = turn.usage
        if usage is None:  # `default_usage`
            input_tokens, output_tokens, cached = DEFAULT_INPUT_TOKENS, (chars + 3) // 4 or 1, None
        else:
            (input_tokens, output_tokens), cached = default_usage(turn, chars), usage.cache_read_input_tokens
        if turn.stop_reason is None:  # `end_turn`: no tool calls
            finish = "STOP"
        else:
            stop = self.canonical_stop(turn)
            finish = GEMINI_FINISH_REASONS.get(stop, stop)
        model = record.model or "gemini-wirescript"
        identity = f"resp_{record.index:04d}"
        if not stream:
            whole_shape = (model, input_tokens, output_tokens, cached, finish)
            head, tail = _WHOLE.get(whole_shape) or _kept_whole(whole_shape)
            whole = f"{_WHOLE_HEAD}{encode_basestring(text)}{head}{identity}{tail}"
            try:
                body = whole.encode()
            except UnicodeEncodeError:  # a lone surrogate: escaped whole, as `json_dumps` escapes it
                body = _escaped(whole, "", "")
            return Rendered(200, dict(_JSON_HEADERS), body)
        array = _json_array(record)
        shape = (model, input_tokens, output_tokens, cached, finish, array)
        start, between_head, between_tail, end_head, end_tail = _TEXTS.get(shape) or _kept_text(shape)
        pieces = chunks(text) if chars > 1 else [text]  # `chunks(text) or [""]`
        last = f"{start}{encode_basestring(pieces[-1])}{end_head}{identity}{end_tail}"
        if len(pieces) > 1:  # each piece's chunk, as `_stream` frames them, then the last
            stop = f"{between_head}{identity}{between_tail}"
            last = "".join([*[f"{start}{encode_basestring(piece)}{stop}" for piece in pieces[:-1]], last])
        if array:  # the array's first element opens it with `[` instead of the separator
            last = f"[{last[len(_ARRAY_FRAMING[0]) :]}"
        try:
            body = last.encode()
        except UnicodeEncodeError:  # a lone surrogate: `_stream` escapes each chunk alone
            return None
        if len(body) >= CHUNK_BYTES:  # more than one chunk (a long model name): `_stream`'s frames, as read
            return None
        frames = OneChunk(body, len(body), "final_chunk", "")
        return Rendered(200, dict(_JSON_HEADERS if array else _SSE_HEADERS), b"", frames)

    def offer(self, record: RecordedRequest) -> Offer | None:
        """The request's function declarations, `toolConfig.functionCallingConfig` and JSON response format."""
        return gemini_offer(record.body) if isinstance(record.body, dict) else None

    def server_tools_problem(self, turn: Turn, record: RecordedRequest) -> str | None:
        """Why Gemini could not have answered with this grounding or code execution (not enabled), or None."""
        return grounding.server_tools_problem(turn, record)

    def decode(self, status: int, headers: Mapping[str, str], body: bytes) -> dict[str, Any] | None:
        """A `GenerateContentResponse` (JSON, or the parts of its chunks together) or an error as a turn.

        The first candidate is the answer: thought parts are its thinking (a turn has no field for
        the `thoughtSignature`, which a replay sends afresh), text parts its text, `functionCall`
        parts its tool calls, code execution parts and `groundingMetadata` its server tools and
        citations. `STOP` is the default stop reason, with tool calls or without.
        """
        if status >= 400:
            data = json_body(body)
            error = data.get("error") if isinstance(data, dict) else None
            error = error if isinstance(error, dict) else {}
            return decoded_error(status, error.get("status"), error.get("message"))
        data = None if is_event_stream(headers) else json_body(body)
        chunks_ = sse_json(body) if is_event_stream(headers) else data if isinstance(data, list) else [data]
        responses = [c for c in chunks_ if isinstance(c, dict)]
        if not responses:
            return None
        failure: dict[str, Any] | None = None
        parts: list[dict[str, Any]] = []
        finish: Any = None
        usage: Any = None
        metadata: Any = None
        for response in responses:
            if isinstance(response.get("error"), dict):
                error = response["error"]
                failure = {"type": error.get("status") or "INTERNAL", "message": str(error.get("message", ""))}
                continue
            usage = response.get("usageMetadata", usage)
            candidates = as_list(response.get("candidates"))
            candidate = candidates[0] if candidates and isinstance(candidates[0], dict) else {}
            finish = candidate.get("finishReason") or finish
            metadata = candidate.get("groundingMetadata") or metadata
            content = as_dict(candidate.get("content"))
            parts.extend(p for p in as_list(content.get("parts")) if isinstance(p, dict))
        calls = []
        for part in parts:
            call = part.get("functionCall")
            if not isinstance(call, dict):
                continue
            if not isinstance(call.get("name"), str) or not call["name"]:
                return None
            entry = {"name": call["name"], "input": as_dict(call.get("args"))}
            if isinstance(call.get("id"), str) and call["id"]:
                entry = {"id": call["id"], **entry}
            calls.append(entry)
        counts = usage if isinstance(usage, dict) else {}
        text = [p["text"] for p in parts if not p.get("thought") and isinstance(p.get("text"), str)]
        searches, citations = grounding.decoded_grounding(metadata, "".join(text))
        turn = decoded_turn(
            self,
            thinking=[p["text"] for p in parts if p.get("thought") is True and isinstance(p.get("text"), str)],
            server_tools=[*searches, *grounding.decoded_code(parts)],
            text=text,
            citations=citations,
            calls=calls,
            stop=None if finish == "STOP" else finish,
            usage=decoded_usage(
                input_tokens=counts.get("promptTokenCount"),
                output_tokens=counts.get("candidatesTokenCount"),
                cache_read_input_tokens=counts.get("cachedContentTokenCount") or None,
            ),
        )
        if failure is not None:
            turn.pop("stop_reason", None)
            turn["fault"] = {"stream_error": failure}
        return turn

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """`{"error": {"code", "message", "status"}}`, with an `ErrorInfo` detail carrying `spec.code`."""
        error: dict[str, Any] = {
            "code": spec.status,
            "message": error_message(spec),
            "status": spec.type or _error_status(spec.status),
        }
        if spec.code is not None:
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": spec.code,
                    "domain": "googleapis.com",
                    "metadata": {"service": "generativelanguage.googleapis.com"},
                }
            ]
        headers = {**_JSON_HEADERS, **retry_headers(spec, self.retryable)}
        return Rendered(spec.status, headers, json_dumps({"error": error}).encode())

    def stream_error(self, spec: StreamError, record: RecordedRequest) -> Frame:
        """A `data:` chunk holding `{"error": {"code", "message", "status"}}`, which google-genai raises.

        `spec.type` is a Gemini status (`UNAVAILABLE`) or a provider-neutral error type
        (`overloaded_error` is 503 `UNAVAILABLE`, `rate_limit_error` 429 `RESOURCE_EXHAUSTED`, …).
        In a JSON-array stream (no `alt=sse`) the error object is the array's last element.
        """
        if spec.type in _STATUS_CODES:
            code, status = _STATUS_CODES[spec.type], spec.type
        elif spec.type in _STREAM_ERROR_CODES:
            code = _STREAM_ERROR_CODES[spec.type]
            status = _error_status(code)
        else:
            code, status = 500, spec.type
        data = {"error": {"code": code, "message": spec.message, "status": status}}
        if _json_array(record):
            return Frame("error", _element(json_dumps(data), first=spec.after == 0, last=True))
        return Frame("error", encode_event(None, json_dumps(data)))


def _envelope(input_tokens: int, output_tokens: int, cached: int | None, model: str, identity: str) -> dict[str, Any]:
    """A `GenerateContentResponse`'s fields after its candidates: the usage, the model and the response id."""
    usage: dict[str, Any] = {
        "promptTokenCount": input_tokens,
        "candidatesTokenCount": output_tokens,
        "totalTokenCount": input_tokens + output_tokens,
    }
    if cached is not None:
        usage["cachedContentTokenCount"] = cached
    return {"usageMetadata": usage, "modelVersion": model, "responseId": identity}


def _sign(parts: list[dict[str, Any]], signature: str | None) -> None:
    """Attach the thought signature where Gemini does: the first function call, else the last part."""
    if signature is None or not parts:
        return
    target = next((p for p in parts if "functionCall" in p), parts[-1])
    target["thoughtSignature"] = signature


def _candidate(
    parts: list[dict[str, Any]], finish: str | None, metadata: dict[str, Any] | None = None
) -> dict[str, Any]:
    # An answer with no parts has a content with no `parts` key, as proto3 JSON leaves out empty fields.
    content: dict[str, Any] = {"parts": parts, "role": "model"} if parts else {"role": "model"}
    candidate: dict[str, Any] = {"content": content}
    if finish is not None:
        candidate["finishReason"] = finish
    if metadata is not None:
        candidate["groundingMetadata"] = metadata
    candidate["index"] = 0
    return candidate


def _json_array(record: RecordedRequest) -> bool:
    """Whether a streamed answer is a JSON array: `:streamGenerateContent` without `alt=sse`.

    The API's default streaming format is JSON (`alt=json`); google-genai asks for `alt=sse`,
    REST clients (llm-gemini) read the array as it arrives.
    """
    return record.query.get("alt", "json").lower() != "sse"


def _element(chunk: str, *, first: bool, last: bool) -> bytes:
    r"""One chunk as an element of the streamed JSON array, framed as the API frames it.

    `[` opens the array before the first element, `,\r\n` separates the next ones, each element
    ends with `\n`, and `]` closes the array after the last (observed: llm-gemini's recorded
    answers of `:streamGenerateContent`, tests/cassettes/test_gemini/test_tools.yaml).
    """
    return b"".join((b"[" if first else b",\r\n", chunk.encode(), b"\n]" if last else b"\n"))


def _around(
    envelope: dict[str, Any], finish: str, metadata: dict[str, Any] | None = None, *, array: bool = False
) -> tuple[str, str]:
    """What follows the part of each chunk but the last, and of the last: each `GenerateContentResponse`'s JSON, framed.

    Earlier chunks report only the prompt tokens, as Gemini does, so a consumer that adds up
    usage across chunks is caught; the last also carries `finishReason`, the full usage and the
    grounding metadata. `array`: the chunks are the elements of one JSON array.
    """
    prompt = envelope["usageMetadata"]["promptTokenCount"]
    partial = {**envelope, "usageMetadata": {"promptTokenCount": prompt, "totalTokenCount": prompt}}
    _, suffix, end = _ARRAY_FRAMING if array else _SSE_FRAMING
    middle = f'{_PARTS_END},"index":0}}],{_json(partial)[1:]}{suffix}'
    close = f',"finishReason":{_json(finish)}'
    if metadata is not None:
        close += f',"groundingMetadata":{_json(metadata)}'
    return middle, f'{close},"index":0}}],{_json(envelope)[1:]}{end}'


def _split_id(text: str) -> tuple[str, str]:
    """An `_around` text of an answer whose `responseId` is empty, cut where the id goes."""
    head, key, tail = text.rpartition(',"responseId":""')
    return f"{head}{key[:-1]}", f'"{tail}'


def _stream(
    runs: list[dict[str, Any] | _Run],
    middle: str,
    close: str,
    *,
    array: bool = False,
    joined: bool = False,
    signature: str | None = None,
) -> Iterator[Frame]:
    """One chunk per part: the part, then `middle` (`close` after the last; `_around`).

    `array`: the chunks are the elements of one JSON array. `joined`: a run of text pieces travels
    in frames of many chunks. `signature`: the thought signature of the last text piece.

    Each chunk is the bytes of `json_dumps` of its `GenerateContentResponse`, built from JSON
    encoded once per answer (what surrounds the part, each other part), so a text piece costs one
    string encoding.
    """
    prefix, suffix, end = _ARRAY_FRAMING if array else _SSE_FRAMING
    head = f"{prefix}{_CHUNK_HEAD}"
    opening = array  # the array's first element opens it with `[` instead of the separator
    count = len(runs)
    if not count:  # no parts: a content with no `parts` key, as proto3 JSON leaves out empty fields
        last = f'{prefix}{{"candidates":[{{"content":{{"role":"model"}}{close}'
    for number, run in enumerate(runs, start=1):
        if isinstance(run, dict):
            if number == count:
                last = f"{head}{_json(run)}{_PARTS_END}{close}"
                break
            data = _encoded(f"{head}{_json(run)}{middle}", prefix, suffix)
            if opening:
                data, opening = b"[" + data[len(prefix) :], False
            yield Frame("chunk", data)
            continue
        pieces, before, after = run
        if number == count:
            signed = after if signature is None else f'{after[:-1]},"thoughtSignature":"{signature}"}}'
            last = f"{head}{before}{encode_basestring(pieces[-1])}{signed}{_PARTS_END}{close}"
            if len(pieces) == 1:
                break
            pieces = pieces[:-1]
        start, stop = f"{head}{before}", f"{after}{middle}"
        if opening and pieces:
            data = _encoded(f"{start}{encode_basestring(pieces[0])}{stop}", prefix, suffix)
            yield Frame("chunk", b"[" + data[len(prefix) :])
            pieces, opening = pieces[1:], False
        if not joined:
            for piece in pieces:
                text = f"{start}{encode_basestring(piece)}{stop}"
                try:
                    data = text.encode()
                except UnicodeEncodeError:
                    data = _escaped(text, prefix, suffix)
                yield Frame("chunk", data)
            continue
        step = max(1, _JOINED_CHARS // (len(start) + len(stop) + 16))
        for at in range(0, len(pieces), step):
            batch = pieces[at : at + step]
            text = "".join([f"{start}{encode_basestring(piece)}{stop}" for piece in batch])
            try:
                data = text.encode()
            except UnicodeEncodeError:  # a lone surrogate: each chunk of the batch as it goes alone
                data = b"".join(_encoded(f"{start}{encode_basestring(piece)}{stop}", prefix, suffix) for piece in batch)
            yield Frame("chunk", data)
    data = _encoded(last, prefix, end)
    if opening:
        data = b"[" + data[len(prefix) :]
    yield Frame("final_chunk", data)


def _json(value: Any) -> str:
    """`json_dumps(value)` when it holds no lone surrogate; else the JSON with the surrogate as it is.

    A chunk holding one is escaped whole when it is encoded (`_encoded`), as `json_dumps` escapes it.
    """
    try:
        return to_json(value).decode()
    except PydanticSerializationError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _encoded(text: str, prefix: str, suffix: str) -> bytes:
    """A framed chunk's bytes (`prefix`, the chunk's JSON, `suffix`): as UTF-8, or escaped whole (`_escaped`)."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        return _escaped(text, prefix, suffix)


def _escaped(text: str, prefix: str, suffix: str) -> bytes:
    """A framed chunk with a lone surrogate, which UTF-8 cannot carry: its JSON escaped to ASCII, as `json_dumps` does.

    Never the case for a validated turn (a script refuses lone surrogates): kept so that nothing fails here.
    """
    chunk = text[len(prefix) : len(text) - len(suffix)]
    return f"{prefix}{json.dumps(json.loads(chunk), separators=(',', ':'))}{suffix}".encode()


_Run = tuple[list[str], str, str]
"""A run of text pieces, each the one part of its chunk: the pieces, the part's JSON before and after the text."""
_TEXT_PART = ('{"text":', "}")
_THOUGHT_PART = ('{"text":', ',"thought":true}')
_CHUNK_HEAD = '{"candidates":[{"content":{"parts":['
_PARTS_END = '],"role":"model"}'
_SSE_FRAMING = ("data: ", "\n\n", "\n\n")
_ARRAY_FRAMING = (",\r\n", "\n", "\n]")
"""(before each chunk, after each chunk but the last, after the last); `[` opens the array instead of the first `,`."""
_JOINED_CHARS = 8 * 1024
"""About how long a frame of joined chunks is."""
_AROUND: dict[tuple[Any, ...], tuple[str, str, str, str]] = {}
"""`_around` of an answer without grounding metadata, cut where its `responseId` goes (`_split_id`), by model,
usage, finish reason and framing: the only values it holds."""


def _kept_around(shape: tuple[Any, ...]) -> tuple[str, str, str, str]:
    """`_around` of an answer of this shape (model, usage, finish, framing) without grounding, cut where its id goes."""
    model, input_tokens, output_tokens, cached, finish, array = shape
    envelope = _envelope(input_tokens, output_tokens, cached, model, "")
    middle, close = _around(envelope, finish, None, array=array)
    kept = (*_split_id(middle), *_split_id(close))
    if len(_AROUND) < _SHAPES_MOST:  # a stub's answers take a few shapes
        _AROUND[shape] = kept
    return kept


def _kept_text(shape: tuple[Any, ...]) -> tuple[str, str, str, str, str]:
    """A text stream's chunks of this shape: the JSON before each piece, after each but the last, after the last.

    After a piece, the JSON is cut where the `responseId` goes (`_kept_around`): before and after it, for the
    chunks before the last, then for the last.
    """
    middle_head, middle_tail, close_head, close_tail = _AROUND.get(shape) or _kept_around(shape)
    prefix = _ARRAY_FRAMING[0] if shape[-1] else _SSE_FRAMING[0]
    after = _TEXT_PART[1]
    kept = (
        f"{prefix}{_CHUNK_HEAD}{_TEXT_PART[0]}",
        f"{after}{middle_head}",
        middle_tail,
        f"{after}{_PARTS_END}{close_head}",
        close_tail,
    )
    if len(_TEXTS) < _SHAPES_MOST and len(shape[0]) <= _KEPT_LONGEST:
        _TEXTS[shape] = kept
    return kept


def _kept_whole(shape: tuple[Any, ...]) -> tuple[str, str]:
    """A whole text answer's JSON after its text (`_WHOLE_HEAD`, the text), cut where its `responseId` goes."""
    model, input_tokens, output_tokens, cached, finish = shape
    envelope = _envelope(input_tokens, output_tokens, cached, model, "")
    after = f'{_TEXT_PART[1]}{_PARTS_END},"finishReason":{_json(finish)},"index":0}}],{_json(envelope)[1:]}'
    kept = _split_id(after)
    if len(_WHOLE) < _SHAPES_MOST and len(model) <= _KEPT_LONGEST:
        _WHOLE[shape] = kept
    return kept


_TEXTS: dict[tuple[Any, ...], tuple[str, str, str, str, str]] = {}
"""`_kept_text` by model, usage, finish reason and framing: the only values it holds."""
_WHOLE: dict[tuple[Any, ...], tuple[str, str]] = {}
"""`_kept_whole` by model, usage and finish reason: the only values it holds."""
_WHOLE_HEAD = f"{_CHUNK_HEAD}{_TEXT_PART[0]}"
"""A whole text answer's JSON before its text."""
_SHAPES_MOST = 256
"""How many answer shapes `_AROUND` and `_WHOLE` keep each."""
_ONE_CHUNK_CHARS = 256
"""The most text `GeminiWire._text` renders at once for a stream read in chunks: some thirty pieces, well inside
one chunk (`CHUNK_BYTES`); a longer one is rendered as it is read."""
