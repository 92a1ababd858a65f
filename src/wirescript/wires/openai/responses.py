"""OpenAI Responses API: `POST …/responses`, a Response as JSON or the documented SSE event sequence.

A turn becomes output items in this order: a `reasoning` item for `thinking` (its text is the
item's one `summary_text` part, streamed as `response.reasoning_summary_text.delta` events), a
`message` item for `text`, and one `function_call` item per tool call. Every streamed event carries
a `sequence_number` (0, 1, 2, …) and the same response id, and the deltas join into exactly what
`response.completed` reports.

The Responses API has no stop reason: a turn whose stop reason is `max_tokens` (or `length`)
ends `incomplete` with `incomplete_details.reason == "max_output_tokens"` (`response.incomplete`
instead of `response.completed`), and `refusal` (or `content_filter`) ends `incomplete` with
reason `content_filter`, as the API does. Other stop reasons give a `completed` response.

What the API stores, the wire serves (developers.openai.com/docs/guides/background, the openai SDK's
`resources/responses/responses.py`): a response created with `store` (the default) is retrievable
(`GET …/responses/{id}`), lists its input items (`…/input_items`), can be deleted, and is continued
by `previous_response_id`. A `background: true` response is created `queued` without a turn; it
runs (takes its turn) when its pace ends it (`SideScript.jobs`: its second retrieve, or a minute on
the stub's clock by default), showing `in_progress` before; an error turn ends it `failed`, a
`max_tokens` turn `incomplete`; `POST …/cancel` ends it `cancelled` before it runs, consuming no
turn. A `background` stream runs at once, and `GET …/responses/{id}?stream=true&starting_after=N`
replays its events after N, for five minutes on the stub's clock (openai/openai-python#2828).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..._exchange import CHUNK_BYTES
from ..._text import text_of
from ...recorded import RecordedRequest
from ...script import ErrorSpec, StreamError, Turn
from ...side import SideScript
from ...sse import PIECE, SEQUENCE, encode_deltas, encode_event, json_dumps, json_event, json_string
from .._answers import Offer
from .._caching import Caching
from .._decode import as_float, as_int, as_list, decoded_turn, decoded_usage, is_event_stream, json_body, sse_json
from .._jobs import Job, Jobs, page
from .._render import chunks, json_answer
from .._rules import Violation
from ..base import Draw, Frame, OneChunk, Parsed, Rendered, Wire
from . import builtins
from .answers import RESPONSES_ANSWER_FIELDS, RESPONSES_ANSWER_RULES, responses_offer
from .builtins import BUILTIN_EVENTS
from .caching import OPENAI_CACHING
from .common import (
    CREATED,
    DEFAULT_MODEL,
    HOSTS,
    JSON_HEADERS,
    RETRY_COUNT_HEADER,
    SSE_HEADERS,
    TokenCounts,
    arguments,
    call_id,
    decoded_openai_error,
    join_system,
    openai_error,
    openai_usage,
    request_id,
    strict_error,
    system_text,
    token_counts,
    tool_input,
    type_message,
)
from .conversations import ConversationStore, conversation_id
from .rules import PREVIOUS_RESPONSE_NOT_FOUND, RESPONSES_RULES, check_openai_responses, previous_response_not_found

__all__ = ["INCOMPLETE_REASONS", "OpenAIResponsesWire"]

INCOMPLETE_REASONS = {
    "max_tokens": "max_output_tokens",
    "model_context_window_exceeded": "max_output_tokens",
    "refusal": "content_filter",
}
"""Stop reasons (canonical) that make a response `incomplete`, with their `incomplete_details.reason`."""

_INCOMPLETE_STOPS = {"max_output_tokens": "max_tokens", "content_filter": "refusal"}
"""An `incomplete` response's `incomplete_details.reason` as the canonical stop reason it stands for."""

# A tuple, not a set: a request may carry any JSON there, and membership in a tuple never hashes it.
_TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output", "computer_call_output")


_MODEL_ITEMS = ("function_call", "custom_tool_call", "reasoning", "computer_call", "local_shell_call")
"""Input item types the model produced (passed back): the boundary before this request's own tool outputs."""


def _since_last_model_item(items: list[Any]) -> list[Any]:
    """The tool outputs after the last assistant message or call item: this request's tool results.

    With `previous_response_id` the input holds only the new outputs, so all of them.
    """
    found: list[Any] = []
    for item in reversed(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind in _TOOL_OUTPUTS:
            found.append(item)
        elif item.get("role") == "assistant" or kind in _MODEL_ITEMS:
            break
    found.reverse()
    return found


STREAM_AGE_LIMIT = 300.0
"""Seconds after its creation that a response can be streamed again (`GET …?stream=true`): five minutes, on the
stub's clock. Past it: "This response can no longer be streamed because it is more than 5 minutes old" (a 400;
openai/openai-python#2828)."""

BACKGROUND_STATUSES = ("queued", "in_progress")
"""The statuses a background response shows before it ends, in order (developers.openai.com/docs/guides/background:
"Keep polling while the request is in the queued or in_progress state")."""

_ACTIONS = {("GET", None): "retrieve", ("DELETE", None): "delete", ("POST", "cancel"): "cancel"}
_ACTIONS[("GET", "input_items")] = "input_items"


def _action(method: str, path: str) -> tuple[str, str] | None:
    """What a request to a stored response asks (`retrieve`, `delete`, `cancel`, `input_items`) and its id, or None."""
    _head, found, tail = path.rpartition("/responses/")
    if not found or not tail:
        return None
    response_id, _, rest = tail.partition("/")
    if not response_id or "/" in rest:
        return None
    action = _ACTIONS.get((method, rest or None))
    return (action, response_id) if action is not None else None


def _deferred(body: Any) -> bool:
    """Whether a create asks for a background response that does not stream: created now, run later."""
    return isinstance(body, dict) and body.get("background") is True and body.get("stream") is not True


@dataclass(slots=True, eq=False)
class StoredResponse:
    """A response the wire keeps (`store`): what a retrieve answers and `previous_response_id` continues."""

    response: dict[str, Any]
    """The Response object as a retrieve answers it now (its final form once it ended)."""
    items: list[Any]
    """Its conversation: the input it was given (a continued thread's included) and its output items."""
    record: RecordedRequest
    """The request that created it."""
    job: Job | None = None
    """A background response's job; None for one answered at once."""


class OpenAIResponsesWire(Wire):
    """The OpenAI Responses API, streamed or not, including `previous_response_id` conversations.

    A request that continues a stored response (`previous_response_id`) sends only its new input;
    the wire remembers each response's input and output, so `RecordedRequest.conversation` still
    shows the whole conversation the model was given.
    """

    name = "openai_responses"
    endpoint = "POST …/responses"
    endpoints = (
        "POST /v1/responses",
        "POST /openai/responses",
        *(
            f"{method} {prefix}/responses/{{response_id}}{tail}"
            for prefix in ("/v1", "/openai")
            for method, tail in (("GET", ""), ("DELETE", ""), ("POST", "/cancel"), ("GET", "/input_items"))
        ),
    )
    partly_turnless = True
    unused_label = "background response(s)"
    unused_said = "were never seen to their end"
    events = frozenset(
        {
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.done",
            "response.reasoning_summary_part.done",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed",
            "response.incomplete",
            *BUILTIN_EVENTS,
        }
    )
    credential_headers = ("api-key",)  # Azure OpenAI
    hosts = HOSTS
    retry_count_header = RETRY_COUNT_HEADER
    malformed_tool_json_applies_to_json = True
    rules = RESPONSES_RULES
    answer_rules = RESPONSES_ANSWER_RULES
    answer_fields = RESPONSES_ANSWER_FIELDS
    caching: ClassVar[Caching] = OPENAI_CACHING
    label = "OpenAI Responses (POST /responses)"
    own_fields = ("input", "instructions", "previous_response_id", "max_output_tokens")
    # Chat's `response_format` and `stop`, and `max_tokens`: Responses' own rules answer `max_tokens`
    # (`openai_responses.unknown-parameter`); the others are left through (their words are not observed).
    shared_fields = frozenset({"response_format", "max_tokens", "stop"})
    unknown_field = "Unknown parameter: '{key}'."
    field_types: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "model": ("string",),
        "input": ("string", "array"),
        "stream": ("boolean",),
        "max_output_tokens": ("integer",),
        "temperature": ("number",),
        "tools": ("array",),
        "previous_response_id": ("string",),
    }

    def __init__(self) -> None:
        self._stored: dict[str, StoredResponse] = {}
        self._stored_lock = threading.Lock()
        self._jobs: Jobs[Job] = Jobs()
        self.conversations = ConversationStore()
        """The stub's conversations (`conversation=`), shared with its Conversations API wire."""

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """`POST …/responses`, and a stored response's `GET`, `DELETE`, `POST …/cancel` and `GET …/input_items`."""
        if path.endswith("/responses"):
            return method == "POST"
        return "/responses/" in path and _action(method, path) is not None

    def turnless_request(self, record: RecordedRequest) -> bool:
        """A stored response's retrieval, cancel or deletion, and a background create that does not stream."""
        return record.method != "POST" or not record.path.endswith("/responses") or _deferred(record.body)

    def bodiless(self, method: str, path: str) -> bool:
        """A stored response's requests carry no body (a `POST …/cancel` neither)."""
        return _action(method, path) is not None

    @staticmethod
    def tool_result_text(result: Mapping[str, Any]) -> str | None:
        """A `function_call_output` (or `custom_tool_call_output`) item's `output`: a string or text parts."""
        if result.get("type") not in _TOOL_OUTPUTS:
            return None
        return text_of(result.get("output")) or ""

    def parse(self, body: Any, path: str) -> Parsed:
        """Model, instructions, input items, tools, `function_call_output` items and limits of a request.

        A string `input` is recorded as the one user message it stands for. `system` joins
        `instructions` and the text of system and developer messages.
        """
        raw_input = body.get("input")
        tools = body.get("tools")
        if tools.__class__ is not list:
            tools = [] if tools is None else as_list(tools)  # most requests send none
        instructions = body.get("instructions")
        model = body.get("model")
        if raw_input.__class__ is str:  # one user message: no system message, no tool output; exact types first
            limit = body.get("max_output_tokens")
            temperature = body.get("temperature")
            return Parsed(
                model=model if isinstance(model, str) else None,
                system=instructions if isinstance(instructions, str) and instructions else None,
                messages=[{"role": "user", "content": raw_input}],
                tools=tools,
                tool_names=[t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
                if tools
                else [],
                tool_results=[],
                all_tool_results=[],
                stream=body.get("stream") is True,
                max_tokens=limit if limit is None or limit.__class__ is int else as_int(limit),
                temperature=None if temperature is None else as_float(temperature),
            )
        messages = [{"role": "user", "content": raw_input}] if isinstance(raw_input, str) else as_list(raw_input)
        return Parsed(
            model=model if isinstance(model, str) else None,
            system=join_system(
                [
                    instructions if isinstance(instructions, str) else None,
                    *system_text(messages),
                ]
            ),
            messages=messages,
            tools=tools,
            tool_names=[t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)],
            tool_results=_since_last_model_item(messages),
            all_tool_results=[m for m in messages if isinstance(m, dict) and m.get("type") in _TOOL_OUTPUTS],
            stream=body.get("stream") is True,
            max_tokens=as_int(body.get("max_output_tokens")),
            temperature=as_float(body.get("temperature")),
        )

    def resolve(self, record: RecordedRequest) -> None:
        """Prepend the stored conversation of the response a request continues (`previous_response_id`).

        Or the items of the conversation it names (`conversation=`, the Conversations API). A stored
        response's request gets its id as `path_params["response_id"]`.
        """
        if record.method != "POST" or not record.path.endswith("/responses"):
            action = _action(record.method, record.path)
            if action is not None:
                record.path_params = {"response_id": action[1]}
            return
        body = record.body if isinstance(record.body, dict) else {}
        named = conversation_id(conversation) if (conversation := body.get("conversation")) is not None else None
        if named is not None:
            items = self.conversations.items(named)
            if items is not None:
                record.conversation = [*items, *record.messages]
            return
        previous = body.get("previous_response_id")
        if not isinstance(previous, str):
            return
        with self._stored_lock:
            known = self._stored.get(previous)
        if known is not None:
            record.conversation = [*known.items, *record.messages]

    def check(self, record: RecordedRequest, *, skip: frozenset[str]) -> Violation | None:
        """The Responses strict rules, with the stored conversation of the `previous_response_id`.

        An id this wire never stored (or stored with `store: false`) is OpenAI's 404.
        """
        body = record.body
        if not isinstance(body, dict):
            return None
        previous = body.get("previous_response_id")
        items = None
        if isinstance(previous, str):
            with self._stored_lock:
                known = self._stored.get(previous)
            items = known.items if known is not None else None
        violation = check_openai_responses(body, previous_items=items, skip=skip)
        unknown = isinstance(previous, str) and items is None
        if violation is None and unknown and PREVIOUS_RESPONSE_NOT_FOUND.id not in skip:
            return previous_response_not_found(str(previous))
        return violation

    @staticmethod
    def check_body(body: dict[str, Any], *, skip: frozenset[str], **context: Any) -> Violation | None:
        """Its rules over a bare body, with the stored items of the previous response (`check_request`)."""
        return check_openai_responses(body, previous_items=context.get("previous_items"), skip=skip)

    def field_type_message(self, key: str, value: Any, kinds: tuple[str, ...]) -> str:
        """OpenAI's words: `Invalid type for 'input': expected a string or an array, but got …`."""
        return type_message(key, value, kinds)

    def strict_error(self, violation: Violation, message: str, record: RecordedRequest) -> Rendered:
        """OpenAI's envelope, with the offending `param` and, for an unknown previous response, its `code`."""
        return strict_error(violation, message, record)

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        """A Response as JSON, or the documented event sequence when the request streams.

        Every event is its own frame; `joined`, a short stream is rendered at once, as the one chunk it is sent in.

        `malformed_tool_json` breaks the arguments string of every function call, in the deltas
        and in the completed response alike.
        """
        index = record.index
        body: dict[str, Any] = record.body if isinstance(record.body, dict) else {}
        reason = INCOMPLETE_REASONS.get(self.canonical_stop(turn))
        items = _items(turn, index, malformed_tool_json, reason is None, body)
        if turn.server_tools is not None or turn.citations is not None:
            _add_builtins(turn, index, body, items)
        counts = token_counts(turn, [i["arguments"] for i in items if i["type"] == "function_call"])
        response = _response(body, record, items, counts, reason)
        named = conversation_id(conversation) if (conversation := body.get("conversation")) is not None else None
        if named is not None:
            response["conversation"] = {"id": named}
        if body.get("store") is not False:
            self._store(record, response, items, turn)
        if named is not None:  # the API adds the request's input and the response's output to it
            self.conversations.extend(named, [*record.messages, *items])
        headers = request_id(record)
        if not record.stream:
            return Rendered(200, {**JSON_HEADERS, **headers}, json_dumps(response).encode())
        if joined and _short(items):  # read in chunks: rendered at once, most often one chunk
            whole = _text_stream(response)
            if whole is None:
                frames = list(_stream(response, body))
                whole = b"".join([frame.data for frame in frames])
                if len(whole) >= CHUNK_BYTES:
                    return Rendered(200, {**SSE_HEADERS, **headers}, frames=iter(frames))
            if len(whole) < CHUNK_BYTES:
                return Rendered(200, {**SSE_HEADERS, **headers}, frames=OneChunk(whole, len(whole), "response", ""))
        return Rendered(200, {**SSE_HEADERS, **headers}, frames=_stream(response, body))

    def offer(self, record: RecordedRequest) -> Offer | None:
        """The request's tools (and those its input adds), `tool_choice`, `parallel_tool_calls` and `text.format`."""
        return responses_offer(record.body, record.conversation) if isinstance(record.body, dict) else None

    def server_tools_problem(self, turn: Turn, record: RecordedRequest) -> str | None:
        """Why the Responses API could not have answered with these built-in tools (not offered), or None."""
        return builtins.responses_problem(turn, record)

    def decode(self, status: int, headers: Mapping[str, str], body: bytes) -> dict[str, Any] | None:
        """A Response (JSON, or the one its stream ends with) or an error as a turn.

        Reasoning items give their summary text as the thinking (not their encrypted content);
        `message` items their `output_text` (its annotations the citations); `function_call` and
        `computer_call` items the tool calls; built-in tool items the server tools. An `incomplete`
        response's reason is the stop reason (`max_output_tokens` is `max_tokens`). An `error`
        event, or a `response.failed` one, becomes the turn's `fault.stream_error`.
        """
        if status >= 400:
            return decoded_openai_error(status, body)
        if not is_event_stream(headers):
            response = json_body(body)
            return self._turn(response) if isinstance(response, dict) and "output" in response else None
        final: dict[str, Any] | None = None
        failure: dict[str, Any] | None = None
        for event in sse_json(body):
            if not isinstance(event, dict):
                continue
            kind = event.get("type")
            if kind in ("response.completed", "response.incomplete", "response.failed"):
                final = event.get("response") if isinstance(event.get("response"), dict) else None
                error = final.get("error") if final is not None else None
                if kind == "response.failed" and isinstance(error, dict):
                    failure = {"type": error.get("code") or "server_error", "message": str(error.get("message", ""))}
            elif kind == "error":
                failure = {"type": event.get("code") or "server_error", "message": str(event.get("message", ""))}
        if final is None and failure is None:
            return None
        turn = self._turn(final) if final is not None else {}
        if turn is not None and failure is not None:
            turn.pop("stop_reason", None)
            turn["fault"] = {"stream_error": failure}
        return turn

    def _turn(self, response: dict[str, Any]) -> dict[str, Any] | None:
        items = [item for item in as_list(response.get("output")) if isinstance(item, dict)]
        thinking = [
            part["text"]
            for item in items
            if item.get("type") == "reasoning"
            for part in as_list(item.get("summary"))
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        text = [
            part["text"]
            for item in items
            if item.get("type") == "message"
            for part in as_list(item.get("content"))
            if isinstance(part, dict) and part.get("type") == "output_text" and isinstance(part.get("text"), str)
        ]
        calls = []
        for item in items:
            if item.get("type") == "computer_call" and isinstance(item.get("action"), dict):
                computer = {"name": "computer", "input": item["action"]}
                calls.append({"id": item["call_id"], **computer} if isinstance(item.get("call_id"), str) else computer)
                continue
            if item.get("type") != "function_call":
                continue
            arguments_ = tool_input(item.get("arguments"))
            name = item.get("name")
            if not isinstance(name, str) or not name or arguments_ is None:
                return None  # a call without a name, or arguments that are not a JSON object, is no tool call
            call = {"name": name, "input": arguments_}
            if isinstance(item.get("call_id"), str) and item["call_id"]:
                call = {"id": item["call_id"], **call}
            calls.append(call)
        details = response.get("incomplete_details")
        reason = details.get("reason") if response.get("status") == "incomplete" and isinstance(details, dict) else None
        server_tools = builtins.decoded_items(items)
        known = [r for t in server_tools if "server" not in t for r in t.get("result") or () if isinstance(r, dict)]
        noted = [
            annotation
            for item in items
            if item.get("type") == "message"
            for part in as_list(item.get("content"))
            if isinstance(part, dict) and part.get("type") == "output_text"
            for annotation in as_list(part.get("annotations"))
            if isinstance(annotation, dict)
        ]
        return decoded_turn(
            self,
            thinking=thinking,
            server_tools=server_tools,
            text=text,
            citations=builtins.decoded_annotations("".join(text), noted, known) if noted else (),
            calls=calls,
            stop=_INCOMPLETE_STOPS.get(reason, reason) if isinstance(reason, str) else None,
            usage=decoded_usage(
                **openai_usage(response.get("usage"), "input_tokens", "output_tokens", "input_tokens_details")
            ),
        )

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """`{"error": {"message", "type", "param", "code"}}` with the status and an `x-request-id`."""
        return openai_error(spec, record)

    def stream_error(self, spec: StreamError, record: RecordedRequest) -> Frame:
        """`event: error` with `code` (the scripted type) and `message`.

        The raw stream yields it as a `ResponseErrorEvent`; `responses.stream()` then reports that
        no `response.completed` arrived. Its `sequence_number` is the number of events sent before it.
        """
        data = {
            "type": "error",
            "code": spec.type,
            "message": spec.message,
            "param": None,
            "sequence_number": spec.after,
        }
        return Frame("error", encode_event("error", json_dumps(data)))

    # ------------------------------------------------------------------ what the API stores

    def _store(self, record: RecordedRequest, response: dict[str, Any], items: list[Any], turn: Turn) -> None:
        """Keep a rendered response: retrievable, continued by `previous_response_id`; a background stream's job."""
        conversation = [*record.conversation, *items]
        body = record.body if isinstance(record.body, dict) else {}
        with self._stored_lock:
            known = self._stored.get(response["id"])
            if known is not None:  # a background response that ran: its final form
                known.response, known.items = response, conversation
                return
            job = None
            if body.get("background") is True and record.stream:  # it runs as it streams: resumable
                job = Job(response["id"], record, SideScript().jobs, len(BACKGROUND_STATUSES))
                job.finish("done", record.received_at)
                fault = turn.fault
                # A stream the stub cuts is one the app must resume to see its end; else the stream's own watch
                # (`unfinished_stream`) tells whether it was read to its end.
                job.seen = fault is None or (
                    all(getattr(fault, name) is None for name in ("cut_after", "disconnect_after", "timeout_after"))
                    and (fault.stream_error is None and not fault.drop)
                )
                self._jobs.add(job)
            self._stored[response["id"]] = StoredResponse(response, conversation, record, job)

    def settle(self, record: RecordedRequest, draw: Draw) -> None:
        """Start a background response, or move one on: a poll, a cancel, a stream that runs it now."""
        action = _action(record.method, record.path)
        if action is None:  # a background create: queued now, run when its pace says
            response_id = f"resp_{record.index:04d}"
            job = self._jobs.add(Job(response_id, record, draw.side.jobs, len(BACKGROUND_STATUSES)))
            body = record.body if isinstance(record.body, dict) else {}
            queued = _response(body, record, [], TokenCounts(0, 0, 0, 0, 0), None)
            queued.update(status="queued", completed_at=None, usage=None)
            with self._stored_lock:
                self._stored[response_id] = StoredResponse(queued, list(record.conversation), record, job)
            return
        kind, response_id = action
        with self._stored_lock:
            found = self._stored.get(response_id)
        running = found.job if found is not None else None
        if running is None or running.end is not None or kind in ("delete", "input_items"):
            return
        job = running
        streams = kind == "retrieve" and record.query.get("stream") == "true"
        if kind == "cancel":
            job.cancel(draw.now)
        elif not streams:
            job.poll()
        outcome = job.settle(draw.now)
        if outcome is None and streams:  # streamed while it waits: it runs now, and streams as it runs
            job.finish("done", draw.now)
            outcome = "run"
        if outcome == "run":
            job.answers = [draw.run(job.record, self)]

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """A background create's `queued` response; a stored response retrieved, streamed, cancelled, listed."""
        action = _action(record.method, record.path)
        if action is None:
            with self._stored_lock:
                created = self._stored[f"resp_{record.index:04d}"]
            return _json(record, created.response)
        kind, response_id = action
        with self._stored_lock:
            stored = self._stored.get(response_id)
        if stored is None:
            return _not_found(record, response_id)
        if kind == "delete":
            with self._stored_lock:
                self._stored.pop(response_id, None)
            if stored.job is not None:
                self._jobs.pop(response_id)
            return _json(record, {"id": response_id, "object": "response", "deleted": True})
        if kind == "input_items":
            return _json(record, _listing(_input_items(stored.record), record.query))  # built only when listed
        if kind == "cancel" and stored.job is None:
            return _refused(record, "Only responses created with background=true can be cancelled.", None)
        streams = kind == "retrieve" and record.query.get("stream") == "true"
        if streams and record.received_at - stored.record.received_at > STREAM_AGE_LIMIT:
            return _refused(
                record, "This response can no longer be streamed because it is more than 5 minutes old", None
            )
        response = self._now(stored, record.received_at)
        job = stored.job
        if job is not None and job.end is not None:
            job.seen = True  # the app is shown its end
        if not streams:
            return _json(record, response)
        after = _query_int(record.query.get("starting_after"))
        created = stored.record.body
        frames = list(_stream(response, created if isinstance(created, dict) else {}))
        return Rendered(
            200,
            {**SSE_HEADERS, **request_id(record)},
            frames=iter(frames[max(after + 1, 0) :] if after is not None else frames),
        )

    def _now(self, stored: StoredResponse, now: float) -> dict[str, Any]:
        """A stored response as it is at `now`: a background one's status, its final form once it ran."""
        job = stored.job
        if job is None or (job.end == "done" and not job.answers):  # answered at once, or a background stream
            return stored.response
        if job.end is None:
            return {**stored.response, "status": BACKGROUND_STATUSES[job.stage(now)]}
        if job.end == "cancelled":
            return {**stored.response, "status": "cancelled"}
        [answer] = job.answered()
        if answer.status < 400:
            final = json_body(answer.body)
            return final if isinstance(final, dict) else stored.response
        error = json_body(answer.body)
        error = error.get("error") if isinstance(error, dict) else None
        error = error if isinstance(error, dict) else {}
        code = error.get("code") or _FAILED_CODES.get(answer.status, "server_error" if answer.status >= 500 else None)
        return {
            **stored.response,
            "status": "failed",
            "error": {"code": code or "invalid_prompt", "message": str(error.get("message", ""))},
        }

    def unused(self, side: SideScript) -> list[str]:
        """The background responses the app never saw end (never polled to a final status, a cut stream not resumed)."""

        def line(job: Job) -> str:
            state = job.end if job.end is not None else "not run yet"
            return (
                f"{job.id} (background, created by requests[{job.record.index}]): {state}; the app never saw it end. "
                "Poll it (responses.retrieve) until it is completed, failed, cancelled or incomplete, resume its "
                "stream, or cancel it."
            )

        return self._jobs.unseen(line)


_FAILED_CODES = {429: "rate_limit_exceeded", 400: "invalid_prompt"}
"""A failed background response's `error.code` for an error turn's status (`ResponseError.code` in the openai
SDK's `types/responses/response_error.py`), unless the turn scripts its `code`."""


def _json(record: RecordedRequest, value: Any) -> Rendered:
    return Rendered(200, {**JSON_HEADERS, **request_id(record)}, json_answer(value))


def _refused(record: RecordedRequest, message: str, param: str | None, status: int = 400) -> Rendered:
    return openai_error(ErrorSpec(status=status, message=message), record, param=param)


def _not_found(record: RecordedRequest, response_id: str) -> Rendered:
    """OpenAI's 404 for a response it does not hold (its wording follows its `previous_response_id` 404's)."""
    return _refused(record, f"Response with id '{response_id}' not found.", None, 404)


def _query_int(value: str | None) -> int | None:
    """A query parameter's integer (`starting_after=4`), or None when absent or not one."""
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _input_items(record: RecordedRequest) -> list[dict[str, Any]]:
    """The request's input items as `input_items` lists them: each with an id, a message's text as `input_text`."""
    items = []
    for k, item in enumerate(record.messages):
        if not isinstance(item, dict):
            continue
        entry = dict(item)
        if entry.get("type", "message") == "message" and "role" in entry:
            content = entry.get("content")
            if isinstance(content, str):
                kind = "output_text" if entry["role"] == "assistant" else "input_text"
                entry["content"] = [{"type": kind, "text": content}]
            entry.setdefault("type", "message")
            entry.setdefault("status", "completed")
        entry.setdefault("id", f"msg_{record.index:04d}_in{k}")
        items.append(entry)
    return items


def _listing(items: list[dict[str, Any]], query: Mapping[str, str]) -> dict[str, Any]:
    """A cursor page of input items: `order` (`desc` by default), `after`, `limit` (20 by default)."""
    ordered = items if query.get("order") == "asc" else items[::-1]
    limit = _query_int(query.get("limit")) or 20
    chosen, more = page(ordered, [i["id"] for i in ordered], after=query.get("after"), before=None, limit=limit)
    return {
        "object": "list",
        "data": chosen,
        "first_id": chosen[0]["id"] if chosen else None,
        "last_id": chosen[-1]["id"] if chosen else None,
        "has_more": more,
    }


def _wants_encrypted(body: dict[str, Any]) -> bool:
    return "reasoning.encrypted_content" in as_list(body.get("include"))


def _items(turn: Turn, index: int, malformed: bool, complete: bool, body: dict[str, Any]) -> list[dict[str, Any]]:
    status = "completed" if complete else "incomplete"
    encrypted = "include" in body and _wants_encrypted(body)
    items: list[dict[str, Any]] = []
    if turn.thinking is not None:
        reasoning: dict[str, Any] = {
            "id": f"rs_{index:04d}",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": turn.thinking}] if turn.thinking else [],
        }
        if encrypted:
            reasoning["encrypted_content"] = f"wirescript-reasoning-{index:04d}"
        items.append(reasoning)
    if turn.text is not None:
        items.append(
            {
                "id": f"msg_{index:04d}",
                "type": "message",
                "role": "assistant",
                "status": status,
                "content": [{"type": "output_text", "text": turn.text, "annotations": [], "logprobs": []}],
            }
        )
    for k, call in enumerate(turn.tool_calls):
        if call.name == "computer" and builtins.offers_computer(body):  # the computer tool's call
            items.append(builtins.computer_call(call, call_id(call, index, k), index, k, status))
            continue
        items.append(
            {
                "id": f"fc_{index:04d}_{k}",
                "type": "function_call",
                "status": status,
                "call_id": call_id(call, index, k),
                "name": call.name,
                "arguments": arguments(call, malformed),
            }
        )
    return items


def _add_builtins(turn: Turn, index: int, body: dict[str, Any], items: list[dict[str, Any]]) -> None:
    """Put a turn's built-in tool items before its message (or its tool calls), and its citations on its text."""
    at = next((n for n, item in enumerate(items) if item["type"] != "reasoning"), len(items))
    items[at:at] = builtins.server_items(turn, index, body)
    if turn.citations is not None:
        message = next(item for item in items if item["type"] == "message")
        message["content"][0]["annotations"] = builtins.text_annotations(turn)


def _response(
    body: dict[str, Any],
    record: RecordedRequest,
    items: list[dict[str, Any]],
    counts: TokenCounts,
    incomplete_reason: str | None,
) -> dict[str, Any]:
    created = CREATED + record.index
    text = body.get("text")
    reasoning = body.get("reasoning")
    metadata = body.get("metadata")
    instructions = body.get("instructions")
    previous = body.get("previous_response_id")
    return {
        "id": f"resp_{record.index:04d}",
        "object": "response",
        "created_at": created,
        "status": "completed" if incomplete_reason is None else "incomplete",
        "completed_at": created if incomplete_reason is None else None,
        "error": None,
        "incomplete_details": {"reason": incomplete_reason} if incomplete_reason is not None else None,
        "instructions": instructions if isinstance(instructions, str) else None,
        "max_output_tokens": record.max_tokens,
        "model": record.model or DEFAULT_MODEL,
        "output": items,
        "parallel_tool_calls": body.get("parallel_tool_calls") is not False,
        "previous_response_id": previous if isinstance(previous, str) else None,
        "reasoning": reasoning if isinstance(reasoning, dict) else {"effort": None, "summary": None},
        "store": body.get("store") is not False,
        "background": body.get("background") is True,
        "temperature": record.temperature if record.temperature is not None else 1.0,
        "text": text if isinstance(text, dict) else {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": record.tools,
        "top_p": 1.0 if (top_p := body.get("top_p")) is None or (top_p := as_float(top_p)) is None else top_p,
        "truncation": "auto" if body.get("truncation") == "auto" else "disabled",
        "usage": {
            "input_tokens": counts.input,
            "input_tokens_details": {"cached_tokens": counts.cached, "cache_write_tokens": counts.cache_write},
            "output_tokens": counts.output,
            "output_tokens_details": {"reasoning_tokens": counts.reasoning},
            "total_tokens": counts.total,
        },
        "metadata": metadata if isinstance(metadata, dict) else {},
    }


def _stream(response: dict[str, Any], body: dict[str, Any]) -> Iterator[Frame]:
    """`response.created`, `response.in_progress`, each item's events, then `response.completed`.

    A built-in tool's item sends its own events (`builtins.server_events`); a message part with
    annotations sends each as `response.output_text.annotation.added` after its text.
    """
    sequence = itertools.count()

    def event(kind: str, **fields: Any) -> Frame:
        data = {"type": kind, **fields, "sequence_number": next(sequence)}
        return Frame(kind, json_event(kind, data))

    def deltas(kind: str, pieces: list[str], **fields: Any) -> Iterator[Frame]:
        """`event(kind, **fields)` with each piece as `delta` (a `PIECE` in `fields`)."""
        data = {"type": kind, **fields, "sequence_number": SEQUENCE}
        for encoded in encode_deltas(kind, data, pieces, numbers=sequence):
            yield Frame(kind, encoded)

    start = {
        **response,
        "status": "in_progress",
        "completed_at": None,
        "incomplete_details": None,
        "output": [],
        "usage": None,
    }
    started = json_dumps(start)  # in both events: encoded once, each event's JSON around it
    for kind in ("response.created", "response.in_progress"):
        number = next(sequence)
        data = f'{{"type":"{kind}","response":{started},"sequence_number":{number}}}'
        yield Frame(kind, f"event: {kind}\ndata: {data}\n\n".encode())
    for output_index, item in enumerate(response["output"]):
        where = {"item_id": item["id"], "output_index": output_index}
        kind = item["type"]
        if kind == "reasoning":
            yield event("response.output_item.added", output_index=output_index, item={**item, "summary": []})
            for summary_index, part in enumerate(item["summary"]):
                at = {**where, "summary_index": summary_index}
                yield event("response.reasoning_summary_part.added", **at, part={**part, "text": ""})
                yield from deltas("response.reasoning_summary_text.delta", chunks(part["text"]), **at, delta=PIECE)
                yield event("response.reasoning_summary_text.done", **at, text=part["text"])
                yield event("response.reasoning_summary_part.done", **at, part=part)
        elif kind == "message":
            added = {**item, "status": "in_progress", "content": []}
            yield event("response.output_item.added", output_index=output_index, item=added)
            for content_index, part in enumerate(item["content"]):
                at = {**where, "content_index": content_index}
                noted = part["annotations"]
                yield event("response.content_part.added", **at, part={**part, "text": "", "annotations": []})
                yield from deltas("response.output_text.delta", chunks(part["text"]), **at, delta=PIECE, logprobs=[])
                if noted:  # a cited text: each annotation after the text, as the API sends them
                    for number, annotation in enumerate(noted):
                        yield event(
                            "response.output_text.annotation.added",
                            **at,
                            annotation_index=number,
                            annotation=annotation,
                        )
                yield event("response.output_text.done", **at, text=part["text"], logprobs=[])
                yield event("response.content_part.done", **at, part=part)
        elif kind != "function_call":
            yield from builtins.server_events(item, output_index, body, event, deltas)
        else:
            added = {**item, "status": "in_progress", "arguments": ""}
            yield event("response.output_item.added", output_index=output_index, item=added)
            yield from deltas(
                "response.function_call_arguments.delta", chunks(item["arguments"], 32), **where, delta=PIECE
            )
            yield event(
                "response.function_call_arguments.done", **where, name=item["name"], arguments=item["arguments"]
            )
        yield event("response.output_item.done", output_index=output_index, item=item)
    final = _FINAL_EVENTS.get(response["status"])
    if final is not None:
        yield event(final, response=response)


def _text_stream(response: dict[str, Any]) -> bytes | None:
    """`_stream`'s bytes for a Response whose output is messages of plain text, in one pass; None for any other.

    Each event's JSON is written around the encoded values it carries (`json_dumps` of each, the rest
    ASCII), which is the encoding of the whole event: one string for the stream, no generator, no
    dictionary per event.
    """
    final = _FINAL_EVENTS.get(response["status"])
    items = response["output"]
    for item in items:
        if item["type"] != "message" or any(part["annotations"] for part in item["content"]):
            return None
    start = {**response, "status": "in_progress", "completed_at": None, "incomplete_details": None}
    start["output"] = []
    start["usage"] = None
    started = json_dumps(start)
    out = [
        f'event: {kind}\ndata: {{"type":"{kind}","response":{started},"sequence_number":{number}}}\n\n'
        for number, kind in enumerate(("response.created", "response.in_progress"))
    ]
    number = 2
    for output_index, item in enumerate(items):
        added = json_dumps({**item, "status": "in_progress", "content": []})
        out.append(
            "event: response.output_item.added\ndata: "
            f'{{"type":"response.output_item.added","output_index":{output_index},"item":{added},'
            f'"sequence_number":{number}}}\n\n'
        )
        number += 1
        for content_index, part in enumerate(item["content"]):
            at = f'"item_id":{json_string(item["id"])},"output_index":{output_index},"content_index":{content_index}'
            empty = json_dumps({**part, "text": "", "annotations": []})
            out.append(
                "event: response.content_part.added\ndata: "
                f'{{"type":"response.content_part.added",{at},"part":{empty},"sequence_number":{number}}}\n\n'
            )
            number += 1
            delta = f'event: response.output_text.delta\ndata: {{"type":"response.output_text.delta",{at},"delta":'
            for piece in chunks(part["text"]):
                out.append(f'{delta}{json_string(piece)},"logprobs":[],"sequence_number":{number}}}\n\n')
                number += 1
            out.append(
                "event: response.output_text.done\ndata: "
                f'{{"type":"response.output_text.done",{at},"text":{json_dumps(part["text"])},"logprobs":[],'
                f'"sequence_number":{number}}}\n\n'
            )
            out.append(
                "event: response.content_part.done\ndata: "
                f'{{"type":"response.content_part.done",{at},"part":{json_dumps(part)},'
                f'"sequence_number":{number + 1}}}\n\n'
            )
            number += 2
        out.append(
            "event: response.output_item.done\ndata: "
            f'{{"type":"response.output_item.done","output_index":{output_index},"item":{json_dumps(item)},'
            f'"sequence_number":{number}}}\n\n'
        )
        number += 1
    if final is not None:
        ended = json_dumps(response)
        out.append(f'event: {final}\ndata: {{"type":"{final}","response":{ended},"sequence_number":{number}}}\n\n')
    return "".join(out).encode()


_SHORT_CHARS = 1024
"""The most text (summaries, message text, call arguments together) of a streamed Response that `render`
renders at once when it is read in chunks: about a hundred deltas, most often one chunk."""


def _short(items: list[dict[str, Any]]) -> bool:
    """Whether a Response's output is only reasoning, messages and function calls, with little text (`_SHORT_CHARS`)."""
    chars = 0
    for item in items:
        kind = item["type"]
        if kind == "message":
            chars += sum(len(part["text"]) for part in item["content"])
        elif kind == "function_call":
            chars += len(item["arguments"])
        elif kind == "reasoning":
            chars += sum(len(part["text"]) for part in item["summary"])
        else:
            return False
    return chars <= _SHORT_CHARS


_FINAL_EVENTS = {"completed": "response.completed", "incomplete": "response.incomplete", "failed": "response.failed"}
"""The event a stream of a response ends with, by its status (a cancelled one's stream just ends)."""
