"""`RecordedRequest`: what the app really sent, parsed per provider."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr

__all__ = ["SENSITIVE_HEADERS", "RecordedRequest", "Secret", "text_of"]

SENSITIVE_HEADERS = frozenset(
    {"authorization", "x-api-key", "x-goog-api-key", "api-key", "proxy-authorization", "cookie", "set-cookie"}
)
"""Headers whose values are credentials; `RecordedRequest.headers` shows them redacted."""

REDACTED = "<redacted>"


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


class RecordedRequest(BaseModel):
    """One request as the stub received it: the evidence of what the app asked.

    Fields the provider's API does not have are empty (`None`, `[]`). `messages` is what the request
    carried; `conversation` is the whole conversation the model was given, which differs only when
    the SDK continues a server-held thread (anthropic 2.x `tool_runner` sends just the new messages).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: int
    """The request's position in `stub.requests` (0-based, arrival order)."""
    provider: str | None = None
    """The wire that understood it: `anthropic`, `openai_chat`, `openai_responses`, `gemini`; None if none did."""
    method: str
    """The HTTP method."""
    path: str
    """The URL path, e.g. `/v1/messages`."""
    query: dict[str, str] = Field(default_factory=dict)
    """The URL query parameters (credentials redacted)."""
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    """Request headers, lower-cased names; credential values are redacted (use `api_key`)."""
    content: bytes = Field(default=b"", repr=False)
    """The raw request body."""
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
    """The tool results this request sent back, as sent (`tool_result` blocks, `tool` messages,
    `function_call_output` items, `functionResponse` parts)."""
    stream: bool = False
    """Whether a streamed answer was asked for."""
    max_tokens: int | None = None
    """The output token limit (`max_tokens`, `max_completion_tokens`, `max_output_tokens`)."""
    temperature: float | None = None
    """The sampling temperature, when sent."""
    api_key: Secret | None = None
    """The credential (`x-api-key`, `Authorization: Bearer`, `x-goog-api-key`, `?key=`); never displayed."""
    retry_count: int | None = None
    """The SDK's retry attempt (`x-stainless-retry-count`): 0 for a first attempt."""
    turn_index: int | None = None
    """Which turn of its queue answered it (None for a function script or an unanswered request)."""
    queue: str | None = None
    """The queue that answered it: the model's name, or `"*"` for the default queue."""
    problem: str | None = None
    """Why the stub could not answer with a scripted turn, when it could not (counted in `overflow`
    or reported by `stub.problems`)."""

    @property
    def last_message(self) -> Any:
        """The last message (or input item) of the conversation, or None."""
        return self.conversation[-1] if self.conversation else None

    @property
    def last_user_text(self) -> str | None:
        """The text of the last user message that has text (tool results are skipped), or None."""
        for message in reversed(self.conversation):
            if isinstance(message, dict) and message.get("role") == "user":
                text = text_of(message.get("content", message.get("parts")))
                if text:
                    return text
        return None

    def summary(self) -> str:
        """One line for failure messages: number, method, path, model and the last message in short."""
        head = f"requests[{self.index}] {self.method} {self.path}"
        if self.model:
            head += f" model={self.model!r}"
        last = self.last_message
        if last is not None:
            head += f" last={_describe_message(last)}"
        return head


def text_of(content: Any) -> str:
    """The text of a message's content in any provider's shape: a string, or text blocks/parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and isinstance(b.get("text"), str) and not b.get("thought")
        )
    return ""


def _describe_message(message: Any) -> str:
    if not isinstance(message, dict):
        return _clip(repr(message))
    role = message.get("role") or message.get("type") or "?"
    content = message.get("content", message.get("output", message.get("parts")))
    if isinstance(content, str):
        return f"{role}:{_clip(repr(content))}"
    if isinstance(content, list):
        # A Gemini part has no `type`: its kind is its first key (`text`, `functionCall`, …).
        kinds = [(b.get("type") or next(iter(b), "?")) if isinstance(b, dict) else type(b).__name__ for b in content]
        texts = [b.get("text") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        extra = f" {_clip(repr(texts[0]))}" if texts else ""
        return f"{role}[{','.join(str(k) for k in kinds)}]{extra}"
    return str(role)


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
