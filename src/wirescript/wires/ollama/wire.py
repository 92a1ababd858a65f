"""Ollama's native chat, `POST /api/chat`: one JSON object, or NDJSON lines ending in a `done` line.

What its answers look like (github.com/ollama/ollama docs/api.md, 'Generate a chat completion';
docs/api/errors.mdx): a stream is `application/x-ndjson`, one object per line, each
`{"model", "created_at", "message": {"role", "content"}, "done": false}`, tool calls whole in one
line with `arguments` as a JSON object, and a last line with `"done": true`, `done_reason` and
the token counts (`prompt_eval_count`, `eval_count`) and durations. `done_reason` is `stop` when
the model called tools too. `stream` is true unless the request says false. An error is
`{"error": "<message>"}` with the status; one after the stream started is such a line, inside the
200 stream.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from ..._text import text_of
from ...recorded import RecordedRequest
from ...script import ErrorSpec, StreamError, Turn
from ...sse import json_dumps
from .._answers import PLAIN_IMPOSSIBILITY, AnswerRule, Offer, OfferedTool
from .._decode import as_float, as_int, as_list, since_last_assistant
from .._render import alphanumeric, chunks, default_usage, error_message, retry_headers
from ..base import Frame, Parsed, Rendered, Wire

__all__ = ["DONE_REASONS", "TOOL_NOT_OFFERED", "OllamaWire"]

DONE_REASONS = {"max_tokens": "length", "model_context_window_exceeded": "length"}
"""A canonical stop reason as Ollama's `done_reason`; the others (`end_turn`, `tool_use`, …) are `stop`."""

_CREATED = datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.UTC)
"""`created_at` of request 0 (wirescript's `CREATED` epoch); request n is n seconds later."""
_NDJSON = {"content-type": "application/x-ndjson"}
_JSON = {"content-type": "application/json; charset=utf-8"}
_STOP = ("end_turn", "stop_sequence", "tool_use")
"""The canonical stop reasons Ollama reports as `stop` (a tool call included); others pass through."""
_LOWER = "0123456789abcdefghijklmnopqrstuvwxyz"


def _created_at(index: int) -> str:
    return (_CREATED + datetime.timedelta(seconds=index)).strftime("%Y-%m-%dT%H:%M:%S.000000Z")


def _line(value: Mapping[str, Any]) -> bytes:
    return json_dumps(value).encode() + b"\n"


TOOL_NOT_OFFERED = AnswerRule(
    "ollama_native.answer.tool-not-offered",
    "ollama_native",
    "tool_offered",
    "A tool call naming a tool the request's `tools` does not hold (a typo), or any tool call when the request "
    "offers none.",
    PLAIN_IMPOSSIBILITY,
)


class OllamaWire(Wire):
    """Ollama's `POST /api/chat` (default address `localhost:11434`), streamed or not."""

    name = "ollama_native"
    endpoint = "POST /api/chat"
    endpoints = ("POST /api/chat",)
    label = "Ollama's native chat (POST /api/chat)"
    events: ClassVar[frozenset[str]] = frozenset({"chunk", "done"})
    addresses = ("localhost:11434", "127.0.0.1:11434")
    answer_rules = (TOOL_NOT_OFFERED,)

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """`POST …/api/chat`."""
        return method == "POST" and path.endswith("/api/chat")

    @staticmethod
    def tool_result_text(result: Mapping[str, Any]) -> str | None:
        """A `tool` message's `content`."""
        return text_of(result.get("content")) or "" if result.get("role") == "tool" else None

    def parse(self, body: Any, path: str) -> Parsed:
        """Model, system messages, messages, tools, tool messages; `stream` defaults to true."""
        messages = as_list(body.get("messages"))
        tools = as_list(body.get("tools"))
        options = body.get("options") if isinstance(body.get("options"), dict) else {}
        system = [text_of(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "system"]
        names = [
            t["function"]["name"]
            for t in tools
            if isinstance(t, dict)
            and isinstance(t.get("function"), dict)
            and isinstance(t["function"].get("name"), str)
        ]
        return Parsed(
            model=body.get("model") if isinstance(body.get("model"), str) else None,
            system="\n".join(s for s in system if s) or None,
            messages=messages,
            tools=tools,
            tool_names=names,
            tool_results=since_last_assistant(messages, ("tool",)),
            all_tool_results=[m for m in messages if isinstance(m, dict) and m.get("role") == "tool"],
            stream=body.get("stream", True) is not False,
            max_tokens=as_int(options.get("num_predict")),
            temperature=as_float(options.get("temperature")),
        )

    def offer(self, record: RecordedRequest) -> Offer | None:
        """The tools the request offers, by name (`format` and `tool_choice` bind nothing Ollama guarantees)."""
        return Offer({name: OfferedTool(name) for name in record.tool_names})

    def _done_reason(self, turn: Turn) -> str:
        stop = self.canonical_stop(turn)
        return DONE_REASONS.get(stop, "stop" if stop in _STOP else stop)

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        """One chat response object, or NDJSON lines: text and thinking pieces, the tool calls, the `done` line."""
        index = record.index
        head = {"model": record.model or "wirescript", "created_at": _created_at(index)}
        calls = [
            {
                "id": call.id or f"call_{alphanumeric(f'ollama:{index}:{k}', 8, _LOWER)}",
                "function": {"index": k, "name": call.name, "arguments": call.input},
            }
            for k, call in enumerate(turn.tool_calls or [])
        ]
        chars = (
            len(turn.text or "")
            + len(turn.thinking or "")
            + sum(len(json_dumps(c.input)) for c in turn.tool_calls or [])
        )
        input_tokens, output_tokens = default_usage(turn, chars)
        done = {
            "done": True,
            "done_reason": self._done_reason(turn),
            "total_duration": 1_000_000 * (input_tokens + output_tokens),
            "load_duration": 1_000_000,
            "prompt_eval_count": input_tokens,
            "prompt_eval_duration": 1_000_000 * input_tokens,
            "eval_count": output_tokens,
            "eval_duration": 1_000_000 * output_tokens,
        }
        if not record.stream:
            message: dict[str, Any] = {"role": "assistant", "content": turn.text or ""}
            if turn.thinking is not None:
                message["thinking"] = turn.thinking
            if calls:
                message["tool_calls"] = calls
            return Rendered(200, dict(_JSON), _line({**head, "message": message, **done}))
        return Rendered(200, dict(_NDJSON), frames=self._lines(head, turn, calls, done))

    @staticmethod
    def _lines(head: dict[str, Any], turn: Turn, calls: list[dict[str, Any]], done: dict[str, Any]) -> Iterator[Frame]:
        def line(message: dict[str, Any]) -> Frame:
            return Frame("chunk", _line({**head, "message": {"role": "assistant", **message}, "done": False}))

        for piece in chunks(turn.thinking or ""):
            yield line({"content": "", "thinking": piece})
        for piece in chunks(turn.text or ""):
            yield line({"content": piece})
        if calls:
            yield line({"content": "", "tool_calls": calls})
        yield Frame("done", _line({**head, "message": {"role": "assistant", "content": ""}, **done}))

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """`{"error": "<message>"}` with the status."""
        return Rendered(
            spec.status, {**_JSON, **retry_headers(spec, self.retryable)}, _line({"error": error_message(spec)})
        )

    def stream_error(self, spec: StreamError, record: RecordedRequest) -> Frame:
        """An `{"error": "<message>"}` line inside the 200 stream."""
        return Frame("error", _line({"error": spec.message}))
