"""`RecordedRequest`, what the app really sent, and `Problem`, why a request was not answered as scripted."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any, Literal, NoReturn, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from ._text import shown
from ._text import text_of as _text_of

__all__ = [
    "OVERFLOW_KINDS",
    "REDACTED",
    "SENSITIVE_HEADERS",
    "AnsweredBy",
    "Problem",
    "ProblemKind",
    "RecordedRequest",
    "Secret",
    "is_sensitive_header",
    "request_head",
    "text_of",
]

SENSITIVE_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
"""Headers that carry credentials whatever the provider; each wire adds its own (`Wire.credential_headers`),
and any name that looks like a credential (`is_sensitive_header`) is redacted too."""

REDACTED = "<redacted>"

_CREDENTIAL_WORDS = frozenset(
    {"auth", "key", "apikey", "token", "secret", "password", "passwd", "credential", "credentials"}
    | {"signature", "sig", "cookie", "jwt", "bearer"}
)
_CREDENTIAL_ENDINGS = ("token", "apikey", "secret", "password", "signature")
_NOT_CREDENTIALS = ("idempotency", "page")
"""`Idempotency-Key` names a request, `pageToken` a page of a listing: neither is a secret."""
_WORDS = re.compile(r"[-_.\s]+")


@functools.lru_cache(maxsize=1024)
def is_sensitive_header(name: str) -> bool:
    """Whether a (lower-cased) header or query name looks like a credential.

    It does when one of its words (split at `-`, `_`, `.`) is `auth`, `key`, `apikey`, `token`,
    `secret`, `password`, `passwd`, `credential(s)`, `signature`, `sig`, `cookie`, `jwt` or
    `bearer`, or starts with `authoriz`/`authentic`; when it ends with `token`, `apikey`,
    `secret`, `password` or `signature` written as one word (`accesstoken`); or when it holds
    `secret` or `password` anywhere. So `x-api-key`, `helicone-auth`, `cf-aig-authorization`,
    `x-auth`, `api_key`, `access_token`, `X-Amz-Signature`, `X-Amz-Security-Token` and `sig` are,
    and `x-stainless-retry-count`, `anthropic-version`, `content-type`, `max_tokens`,
    `Idempotency-Key` and `pageToken` are not.
    """
    if any(word in name for word in _NOT_CREDENTIALS):
        return False
    words = _WORDS.split(name)
    if any(w in _CREDENTIAL_WORDS or w.startswith(("authoriz", "authentic")) for w in words):
        return True
    return "".join(words).endswith(_CREDENTIAL_ENDINGS) or "secret" in name or "password" in name


AnsweredBy: TypeAlias = Literal["script", "function", "fallback"]
"""What answered a request with a turn (`RecordedRequest.answered_by`)."""

ProblemKind: TypeAlias = Literal[
    "unscripted",
    "unknown_endpoint",
    "unreadable",
    "script_error",
    "hold_timeout",
    "abandoned",
    "fault",
    "render_error",
    "strict",
    "unfinished_stream",
    "impossible_answer",
]
"""What went wrong with a request:

- `unscripted`: no turn for it (past the end of the script, no queue for its model, the script
  function or the fallback returned None);
- `unknown_endpoint`: no wire serves its method and path;
- `unreadable`: its body is not the JSON object its wire reads (or the wire failed to parse it);
- `script_error`: the script function or the fallback raised, or answered with an invalid turn;
- `hold_timeout`: it was held and never released;
- `abandoned`: it was held and its client gave up waiting (a cancelled task, a client timeout or
  disconnect, the loopback server stopping): the turn it consumed was never delivered;
- `fault`: its turn's fault cannot take effect on the answer at hand;
- `render_error`: wirescript failed while building the answer (a bug: please report it);
- `strict`: the real API would refuse it (a strict rule, named in the reason, found it invalid); it
  got the provider's own error and consumed no turn (see `docs/strict-requests.md`);
- `unfinished_stream`: it was answered with a stream that the app never read to its end (a loop that
  breaks early, a `stream=True` result dropped unread, a client gone mid-stream); found by `check()`,
  so at the fixture's teardown. A stream the stub's own fault cuts is not one;
- `impossible_answer`: its turn is an answer the real API could not give to it (a tool or a server
  tool the request did not offer, input or text breaking a schema the provider guarantees, text
  where the tool choice forces a call); it got a loud error instead (see `docs/answers.md`).
"""

OVERFLOW_KINDS: frozenset[str] = frozenset({"unscripted", "unknown_endpoint", "unreadable", "script_error", "strict"})
"""The kinds counted by `ScriptTransport.overflow`: requests that got no scripted turn (a strict refusal
consumes none, like an unreadable body)."""


def request_head(index: int, method: str, path: str) -> str:
    """`requests[3] POST /v1/messages`: how every message names a request."""
    return f"requests[{index}] {method} {path}"


class Problem(str):
    """Why a request was not answered as scripted: the message itself, with its parts as attributes.

    A `Problem` is the string it prints (`str(problem)`, `problem == "requests[1] POST …"`, `in`),
    so messages read and compare as text, while `index`, `method`, `path`, `kind` and `reason` let
    a test or a report pick it apart.
    """

    # `index` names the request's position, as on `RecordedRequest`; it hides `str.index`, which a
    # problem's text has no use for (`str(problem).index(...)` still works).
    index: int  # type: ignore[assignment]
    """The request's position in `stub.requests`."""
    method: str
    """The request's HTTP method."""
    path: str
    """The request's URL path."""
    kind: ProblemKind
    """What went wrong (see `ProblemKind`)."""
    reason: str
    """The message without the request's head: what went wrong and how to fix it."""

    def __new__(
        cls, index: int, method: str, path: str, kind: ProblemKind, reason: str, *, lead: str = ": "
    ) -> Problem:
        """A problem of `requests[index]`; `lead` joins the head and the reason (`": "`, or `" "` before a verb)."""
        self = super().__new__(cls, f"{request_head(index, method, path)}{lead}{reason}")
        self.index, self.method, self.path, self.kind, self.reason = index, method, path, kind, reason
        return self

    def __reduce__(self) -> Any:
        return (_problem, (self.index, self.method, self.path, self.kind, self.reason, str(self)))

    @property
    def head(self) -> str:
        """`requests[3] POST /v1/messages`."""
        return request_head(self.index, self.method, self.path)


def _problem(index: int, method: str, path: str, kind: ProblemKind, reason: str, text: str) -> Problem:
    head = request_head(index, method, path)
    return Problem(index, method, path, kind, reason, lead=text[len(head) : len(text) - len(reason)])


class Secret(SecretStr):
    """An API key that never shows itself in `repr`, `str`, logs or error messages.

    It compares equal to the plain string it holds (`request.api_key == "test-key"`), so tests stay
    short; `get_secret_value()` returns the string itself.
    """

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return self.get_secret_value() == other
        return super().__eq__(other)

    def __hash__(self) -> int:
        return hash(self.get_secret_value())

    def __repr__(self) -> str:
        return "Secret('**********')"


_SHARED_EMPTY = (
    "wirescript: this field of a record is empty, and every record shares its one empty {kind} (a record "
    "holds no fresh empty containers); copy it to change it: {copy}"
)


class _EmptyList(list[Any]):
    """The one empty list every record holds for a list field its request left empty: it takes no items.

    A record of a request with no tools, no tool results and no query would otherwise keep six fresh
    empty containers, a sixth of its memory, each one more object for the garbage collector's count.
    It is a `list` (it equals `[]` and dumps as one). `copy.copy` gives a plain, fresh empty list; a deep
    copy or a pickle is this list again, as a tuple's deep copy is the tuple itself (a fresh one would be
    memoised by identity, so every empty field of the records copied together would share it).
    """

    __slots__ = ()

    def _refused(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError(_SHARED_EMPTY.format(kind="list", copy="list(record.tools)"))

    append = extend = insert = __setitem__ = __iadd__ = __imul__ = _refused

    def __copy__(self) -> list[Any]:
        return []

    def __deepcopy__(self, memo: object) -> list[Any]:
        return self

    def __reduce__(self) -> tuple[Callable[[], list[Any]], tuple[()]]:
        return _empty_list, ()


class _EmptyDict(dict[str, str]):
    """The one empty dict every record holds for `query` or `path_params` when the request had none.

    `copy.copy` gives a plain, fresh empty dict; a deep copy or a pickle is this dict again (see `_EmptyList`).
    """

    __slots__ = ()

    def _refused(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError(_SHARED_EMPTY.format(kind="dict", copy="dict(record.query)"))

    __setitem__ = update = setdefault = __ior__ = _refused

    def __copy__(self) -> dict[str, str]:
        return {}

    def __deepcopy__(self, memo: object) -> dict[str, str]:
        return self

    def __reduce__(self) -> tuple[Callable[[], dict[str, str]], tuple[()]]:
        return _empty_dict, ()


_EMPTY_LIST: list[Any] = _EmptyList()
"""What a record holds for a list field its request left empty (`tools`, `tool_names`, `tool_results`, ...)."""
_EMPTY_DICT: dict[str, str] = _EmptyDict()
"""What a record holds for `query` and `path_params` when the request had none."""


def _empty_list() -> list[Any]:
    """The shared empty list, for unpickling (a pickle of a record holds the name of this function)."""
    return _EMPTY_LIST


def _empty_dict() -> dict[str, str]:
    """The shared empty dict, for unpickling."""
    return _EMPTY_DICT


class RecordedRequest(BaseModel):
    """One request as the stub received it: the evidence of what the app asked.

    Fields the provider's API does not have are empty (`None`, `[]`). `messages` is what the request
    carried; `conversation` is the whole conversation the model was given, which differs only when
    the SDK continues a server-held thread (anthropic 2.x `tool_runner` sends just the new messages).
    An empty `query`, `path_params`, `tools`, `tool_names`, `tool_results` or `all_tool_results` is one
    empty container every record shares: it refuses items (`TypeError`); copy it to change it
    (`list(record.tools)`). A deep copy or a pickle of a record keeps it.
    """

    # JSON mode (`model_dump_json`, `model_dump(mode="json")`) writes the raw `content` as base64, so a
    # gzip or UTF-16 body serializes too. The stub builds records with `model_construct`, so the
    # validator and serializer are built only when something validates or dumps one (`defer_build`).
    model_config = ConfigDict(arbitrary_types_allowed=True, ser_json_bytes="base64", defer_build=True)

    index: int
    """The request's position in `stub.requests` (0-based, arrival order)."""
    provider: str | None = None
    """The wire that understood it: `anthropic`, `anthropic_vertex`, `openai_chat`, `azure_openai_chat`,
    `openai_responses`, `gemini`, `count_tokens`, `embeddings`, `models`, `routes`, `mcp` (the scripted
    MCP server), `anthropic_batches`, `openai_batches`, `gemini_batches` (the batch APIs); None if none did."""
    method: str
    """The HTTP method."""
    path: str
    """The URL path, e.g. `/v1/messages`."""
    query: dict[str, str] = Field(default_factory=dict)
    """The URL query parameters (credentials redacted), e.g. Azure OpenAI's `api-version`."""
    path_params: dict[str, str] = Field(default_factory=dict)
    """The values of a route's `{name}` placeholders (`ScriptTransport(routes=...)`), else empty."""
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    """Request headers, lower-cased names; credential values are redacted (use `api_key`)."""
    content: bytes = Field(default=b"", repr=False)
    """The raw request body (base64 in JSON mode)."""
    body: Any = Field(default=None, repr=False)
    """The body parsed as JSON, or None when it is empty or not JSON (see `body_error`)."""
    body_error: str | None = None
    """Why the body could not be parsed, when it could not."""
    model: str | None = None
    """The model the request names."""
    system: str | None = None
    """The system prompt as text (Anthropic `system`, OpenAI system/developer messages or `instructions`)."""
    messages: list[Any] = Field(default_factory=list, repr=False)
    """The messages (OpenAI Responses: input items) exactly as sent."""
    conversation: list[Any] = Field(default_factory=list, repr=False)
    """The whole conversation the model was given, including a continued thread's earlier messages."""
    tools: list[Any] = Field(default_factory=list, repr=False)
    """The tool definitions offered (for a continued thread: the thread's tools)."""
    tool_names: list[str] = Field(default_factory=list)
    """The names of the tools offered."""
    tool_results: list[Any] = Field(default_factory=list, repr=False)
    """The tool results of the request's newest message, as sent: what it answers the model's last
    tool calls with (Anthropic: the last user message's `tool_result` blocks; OpenAI Chat: the `tool`
    messages after the last assistant message; Responses: the `function_call_output` items after the
    last assistant message or call item, which with `previous_response_id` is every one the input
    holds; Gemini: the last `user` or `function` content's `functionResponse` parts; Bedrock Converse:
    the last user message's `toolResult` blocks). Empty when the newest message answers no tool call."""
    all_tool_results: list[Any] = Field(default_factory=list, repr=False)
    """Every tool result the request's messages carry, the newest message's last, in the shapes of
    `tool_results`; a continued thread's or stored response's earlier ones are not in the body, so not here."""
    stream: bool = False
    """Whether a streamed answer was asked for."""
    max_tokens: int | None = None
    """The output token limit (`max_tokens`, `max_completion_tokens`, `max_output_tokens`)."""
    temperature: float | None = None
    """The sampling temperature, when sent."""
    api_key: Secret | None = None
    """The credential (`x-api-key`, `Authorization: Bearer`, `x-goog-api-key`, `?key=`); never displayed."""
    retry_count: int | None = None
    """The attempt number: 0 for a first attempt. The SDK's `x-stainless-retry-count` when sent; for
    clients that send none (google-genai, litellm's own handlers), derived by the stub: one more
    than an identical earlier request (method, URL, body bytes) it answered with a retryable error
    or a connection fault before the response, else 0 (see `docs/requests.md`)."""
    turn_index: int | None = None
    """Which turn of its queue answered it (None for a function script or an unanswered request)."""
    queue: str | None = None
    """The queue that answered it: the model's name, or `"*"` for the default queue."""
    answered_by: AnsweredBy | None = None
    """What answered it with a turn: `"script"` (a queue's turn), `"function"` (the script function) or
    `"fallback"` (the `fallback=` function, past the end of the script); None when no turn answered it.
    Count the fallback's answers with `sum(r.answered_by == "fallback" for r in stub.requests)`."""
    received_at: float = Field(default=0.0, repr=False)
    """When it arrived, on the stub's clock (`stub.clock.now()`: seconds since the epoch, plus every
    `stub.clock.advance()`); what cache lifetimes, background jobs and batches are measured against."""
    problem: str | None = None
    """Why the stub could not answer with a scripted turn, when it could not: the `Problem` also
    listed in `stub.problems`."""
    custom_id: str | None = None
    """For a batch's item: its id within the batch (Anthropic's and OpenAI's `custom_id`, Gemini's `key`).
    Each item is recorded as a request of its own, parsed as its API reads it (`docs/async-surfaces.md`)."""
    batch: str | None = None
    """For a batch's item: the batch it belongs to (`msgbatch_…`, `batch_…`, `batches/…`); else None."""

    def model_dump_json(self, **kwargs: Any) -> str:
        """The record as JSON; text that is not valid Unicode (a lone surrogate in the body) is escaped."""
        try:
            return super().model_dump_json(**kwargs)
        except ValueError:  # PydanticSerializationError: a lone surrogate cannot be UTF-8
            indent = kwargs.pop("indent", None)
            data = self.model_dump(mode="json", **kwargs)
            separators = (",", ":") if indent is None else None
            text = json.dumps(data, indent=indent, separators=separators, ensure_ascii=False)
            return text.encode("utf-8", "backslashreplace").decode()

    @property
    def mcp_method(self) -> str | None:
        """The JSON-RPC method of an MCP request (`"tools/call"`, `"initialize"`, `"notifications/initialized"`).

        None for any other request, and for the MCP endpoint's GET (the server's stream) and DELETE
        (the session's end), which carry no message: `method` tells those apart.
        """
        if self.provider != "mcp" or not isinstance(self.body, dict):
            return None
        method = self.body.get("method")
        return method if isinstance(method, str) else None

    @property
    def mcp_params(self) -> dict[str, Any]:
        """The `params` of an MCP request (`{"name": "search", "arguments": {...}}`); empty for any other."""
        if self.provider != "mcp" or not isinstance(self.body, dict):
            return {}
        params = self.body.get("params")
        return params if isinstance(params, dict) else {}

    @property
    def tool_name(self) -> str | None:
        """The tool an MCP `tools/call` calls; None for any other request."""
        name = self.mcp_params.get("name") if self.mcp_method == "tools/call" else None
        return name if isinstance(name, str) else None

    @property
    def arguments(self) -> Any:
        """The arguments of an MCP `tools/call` or `prompts/get` as sent (`{}` when none); None for any other."""
        if self.mcp_method not in ("tools/call", "prompts/get"):
            return None
        arguments = self.mcp_params.get("arguments")
        return {} if arguments is None else arguments

    @property
    def last_message(self) -> Any:
        """The last message (or input item) of the conversation, or None."""
        return self.conversation[-1] if self.conversation else None

    @property
    def last_user_text(self) -> str | None:
        """The text of the last user message that has text (tool results are skipped), or None."""
        for message in reversed(self.conversation):
            if isinstance(message, dict) and message.get("role") == "user":
                text = _text_of(message.get("content", message.get("parts")))
                if text:
                    return text
        return None

    def summary(self) -> str:
        """One line for failure messages: number, method, path, model and the last message in short."""
        head = request_head(self.index, self.method, self.path)
        if self.batch is not None:
            head += f" batch={self.batch!r} custom_id={self.custom_id!r}"
        if self.model:
            head += f" model={self.model!r}"
        if self.provider == "mcp" and (mcp_method := self.mcp_method) is not None:
            head += f" mcp={mcp_method}"
            if (tool := self.tool_name) is not None:
                head += f" tool={tool!r} arguments={shown(self.arguments)}"
        last = self.last_message
        if last is not None:
            head += f" last={_describe_message(last)}"
        return head


def text_of(content: Any) -> str:
    """The text of a message's content in any provider's shape: a string, or text blocks/parts joined."""
    return _text_of(content) or ""


def _describe_message(message: Any) -> str:
    if not isinstance(message, dict):
        return shown(message)
    role = message.get("role") or message.get("type") or "?"
    content = message.get("content", message.get("output", message.get("parts")))
    if isinstance(content, str):
        return f"{role}:{shown(content)}"
    if isinstance(content, list):
        # A Gemini part has no `type`: its kind is its first key (`text`, `functionCall`, …).
        kinds = [(b.get("type") or next(iter(b), "?")) if isinstance(b, dict) else type(b).__name__ for b in content]
        texts = [b.get("text") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        extra = f" {shown(texts[0])}" if texts else ""
        return f"{role}[{','.join(str(k) for k in kinds)}]{extra}"
    return str(role)
