"""The error catalog: every documented error of each provider, as a turn and the exception it raises.

Test an app's error path against all of them in one line::

    @pytest.mark.parametrize("err", anthropic_errors())
    def test_the_app_explains_every_error(wirescript, err): ...

With the wirescript pytest plugin active, each case shows in the test id by its own id
(`test_the_app_explains_every_error[429-rate_limit_error]`).

Each `ErrorCase` holds the turn that produces the error (`case.turn`, or `case.turns()` for one
turn per attempt of the SDK's retry loop) and the exception class the installed SDK raises for it
(`case.exception`), resolved when first asked for: anthropic 2.x and 0.x raise different classes
for several statuses, and the SDK is imported only then.

In-stream errors (an error event inside a 200 stream, after the first text) are cases of their
own, with `in_stream=True`; they only happen to streaming requests.
"""

from __future__ import annotations

import builtins
import importlib
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from .script import ErrorSpec, Fault, StreamError, Turn
from .wires.anthropic import AnthropicWire
from .wires.gemini import GeminiWire
from .wires.openai_chat import OpenAIChatWire

__all__ = ["ErrorCase", "Provider", "anthropic_errors", "gemini_errors", "openai_errors"]

Provider: TypeAlias = Literal["anthropic", "openai", "gemini"]
"""A provider with an error catalog."""

_SDK_MODULE: dict[str, str] = {"anthropic": "anthropic", "openai": "openai", "gemini": "google.genai.errors"}
_SDK_PACKAGE: dict[str, str] = {"anthropic": "anthropic", "openai": "openai", "gemini": "google-genai"}

# The statuses each SDK's retry loop retries, as each wire knows them: anthropic and openai always
# (`max_retries`, default 2); google-genai only when `HttpOptions(retry_options=...)` is given.
_RETRIED: dict[str, frozenset[int]] = {
    "anthropic": AnthropicWire.retryable,
    "openai": OpenAIChatWire.retryable,
    "gemini": GeminiWire.retryable,
}
_DEFAULT_RETRIES: dict[str, int] = {"anthropic": 2, "openai": 2, "gemini": 0}


def _default_retries(provider: str) -> int:
    """The installed SDK's default `max_retries` (`DEFAULT_MAX_RETRIES`), or the documented one without it."""
    if provider == "gemini":
        return _DEFAULT_RETRIES[provider]
    try:
        found = getattr(importlib.import_module(_SDK_MODULE[provider]), "DEFAULT_MAX_RETRIES", None)
    except ImportError:
        found = None
    return found if isinstance(found, int) and not isinstance(found, bool) else _DEFAULT_RETRIES[provider]


# How many stream events go out before an in-stream error: the first text delta has arrived.
_STREAM_ERROR_AFTER: dict[str, int] = {"anthropic": 4, "openai": 2, "gemini": 1}
_PARTIAL_TEXT = "Partial answer"


@dataclass(frozen=True, slots=True)
class ErrorCase:
    """One documented provider error: the turn that produces it and the exception the SDK raises.

    Use `case.turn` in a script (or `case.turns()` when the SDK retries) and compare the exception
    the app saw with `case.exception`, exactly: `type(exc) is case.exception`.
    """

    id: str
    """A readable id, `<status>-<type or code>` (`429-rate_limit_error`), `stream-<type>` in a stream."""
    provider: Provider
    """The provider whose documented error this is."""
    status: int
    """The HTTP status of the response (200 for an in-stream error)."""
    type: str
    """The provider's error type (Gemini: the `google.rpc` status name)."""
    message: str
    """The error message sent."""
    code: str | None = None
    """The provider's error code, when the error has one (OpenAI `code`, e.g. `invalid_api_key`)."""
    in_stream: bool = False
    """The error arrives as an event inside a 200 stream, after the first text: streaming requests only."""
    _names: tuple[str, str] = field(default=("", ""), repr=False, compare=False)
    # The exception class names: for anthropic >= 1 (and every openai / google-genai), for anthropic 0.x.

    @property
    def turn(self) -> Turn:
        """The scripted turn that produces this error."""
        if self.in_stream:
            error = StreamError(type=self.type, message=self.message, after=_STREAM_ERROR_AFTER[self.provider])
            return Turn(text=_PARTIAL_TEXT, fault=Fault(stream_error=error))
        return Turn(error=ErrorSpec(status=self.status, type=self.type, message=self.message, code=self.code))

    @property
    def retried(self) -> bool:
        """Whether the SDK's retry loop retries this error (in-stream errors never are)."""
        return not self.in_stream and self.status in _RETRIED[self.provider]

    def attempts(self, *, max_retries: int | None = None) -> int:
        """How many requests the SDK sends before it raises this error.

        Args:
            max_retries: The client's retry setting; None for the installed SDK's default (its
                `DEFAULT_MAX_RETRIES`: 2 for anthropic and openai today; google-genai: no retries
                unless `retry_options` are given, then pass `attempts - 1`).

        """
        retries = _default_retries(self.provider) if max_retries is None else max_retries
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise ValueError(f"{self.id}: max_retries must be a non-negative int, got {max_retries!r}")
        return 1 + retries if self.retried else 1

    def turns(self, *, max_retries: int | None = None) -> list[Turn]:
        """One error turn per request the SDK sends (see `attempts`), so the error reaches the app.

        With `max_retries=None` the count matches the installed SDK's default retry loop (anthropic
        and openai: 2 retries, so 3 turns for a retried status; google-genai: none). An app whose
        client sets its own `max_retries` passes the same value here. Scripting `case.turn` once
        instead leaves the SDK's retries unscripted: each is then a problem that says it is a retry.
        """
        return [self.turn] * self.attempts(max_retries=max_retries)

    @property
    def exception(self) -> builtins.type[Exception]:
        """The exception class the installed SDK raises for this error (imports the SDK).

        Raises:
            ImportError: The provider's SDK is not installed.

        """
        module_name = _SDK_MODULE[self.provider]
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ImportError(
                f"wirescript: error case {self.id!r} needs the {self.provider} SDK: "
                f"pip install {_SDK_PACKAGE[self.provider]}"
            ) from exc
        current, legacy = self._names
        name = legacy if self.provider == "anthropic" and _major(module) < 1 else current
        found = getattr(module, name)
        if not (isinstance(found, type) and issubclass(found, Exception)):  # pragma: no cover - SDK changed
            raise TypeError(f"{module_name}.{name} is not an exception class")
        return found

    def __str__(self) -> str:
        return self.id


def _major(module: object) -> int:
    version = str(getattr(module, "__version__", "0"))
    return int(version.split(".")[0])


def _case(
    provider: Provider,
    status: int,
    type: str,
    message: str,
    exception: str,
    *,
    legacy: str | None = None,
    code: str | None = None,
    in_stream: bool = False,
) -> ErrorCase:
    head = "stream" if in_stream else str(status)
    return ErrorCase(
        id=f"{head}-{code or type}",
        provider=provider,
        status=200 if in_stream else status,
        type=type,
        message=message,
        code=code,
        in_stream=in_stream,
        _names=(exception, legacy or exception),
    )


# Anthropic: https://docs.anthropic.com/en/api/errors. Classes: anthropic >= 1 first, then 0.x.
_ANTHROPIC = (
    _case("anthropic", 400, "invalid_request_error", "The request is malformed.", "BadRequestError"),
    _case("anthropic", 401, "authentication_error", "The API key is invalid.", "AuthenticationError"),
    _case(
        "anthropic",
        402,
        "billing_error",
        "Check your billing details.",
        "PaymentRequiredError",
        legacy="APIStatusError",
    ),
    _case("anthropic", 403, "permission_error", "The API key may not use this resource.", "PermissionDeniedError"),
    _case("anthropic", 404, "not_found_error", "The resource was not found.", "NotFoundError"),
    _case(
        "anthropic",
        413,
        "request_too_large",
        "The request is too large.",
        "ContentTooLargeError",
        legacy="RequestTooLargeError",
    ),
    _case("anthropic", 429, "rate_limit_error", "Your account hit a rate limit.", "RateLimitError"),
    _case("anthropic", 500, "api_error", "An internal error occurred.", "InternalServerError"),
    _case(
        "anthropic", 504, "timeout_error", "The request timed out.", "GatewayTimeoutError", legacy="InternalServerError"
    ),
    _case("anthropic", 529, "overloaded_error", "The API is temporarily overloaded.", "OverloadedError"),
    # An error event in a 200 stream: the class comes from the HTTP status (200), so it is the base class.
    _case("anthropic", 200, "overloaded_error", "Overloaded", "APIStatusError", in_stream=True),
)

# OpenAI (Chat Completions and Responses alike): https://platform.openai.com/docs/guides/error-codes.
_OPENAI = (
    _case("openai", 400, "invalid_request_error", "The request is invalid.", "BadRequestError"),
    _case(
        "openai",
        401,
        "invalid_request_error",
        "Incorrect API key provided.",
        "AuthenticationError",
        code="invalid_api_key",
    ),
    _case(
        "openai",
        403,
        "request_forbidden",
        "Country, region, or territory not supported.",
        "PermissionDeniedError",
        code="unsupported_country_region_territory",
    ),
    _case("openai", 404, "invalid_request_error", "The model does not exist.", "NotFoundError", code="model_not_found"),
    _case("openai", 422, "invalid_request_error", "The request could not be processed.", "UnprocessableEntityError"),
    _case("openai", 429, "requests", "Rate limit reached for requests.", "RateLimitError", code="rate_limit_exceeded"),
    _case(
        "openai",
        429,
        "insufficient_quota",
        "You exceeded your current quota.",
        "RateLimitError",
        code="insufficient_quota",
    ),
    _case("openai", 500, "server_error", "The server had an error processing your request.", "InternalServerError"),
    _case("openai", 503, "server_error", "The engine is currently overloaded.", "InternalServerError"),
)
# A Chat Completions stream chunk `{"error": {...}}`: the base `APIError`, with no status.
_OPENAI_CHAT_STREAM = (
    _case("openai", 200, "server_error", "The server had an error while streaming.", "APIError", in_stream=True),
)

# Gemini: https://ai.google.dev/gemini-api/docs/troubleshooting. google-genai raises ClientError
# for 4xx and ServerError for 5xx; an error chunk in a stream raises by its `code` the same way.
_GEMINI = (
    _case("gemini", 400, "INVALID_ARGUMENT", "Request contains an invalid argument.", "ClientError"),
    _case("gemini", 400, "FAILED_PRECONDITION", "The free tier is not available in your country.", "ClientError"),
    _case("gemini", 403, "PERMISSION_DENIED", "The caller does not have permission.", "ClientError"),
    _case("gemini", 404, "NOT_FOUND", "The requested entity was not found.", "ClientError"),
    _case("gemini", 429, "RESOURCE_EXHAUSTED", "Resource has been exhausted.", "ClientError"),
    _case("gemini", 500, "INTERNAL", "An internal error has occurred.", "ServerError"),
    _case("gemini", 503, "UNAVAILABLE", "The model is overloaded.", "ServerError"),
    _case("gemini", 504, "DEADLINE_EXCEEDED", "The request deadline was exceeded.", "ServerError"),
    _case("gemini", 200, "UNAVAILABLE", "The model is overloaded.", "ServerError", in_stream=True),
)


def anthropic_errors(*, in_stream: bool = True) -> list[ErrorCase]:
    """Every documented Anthropic API error, and an `overloaded_error` inside a stream.

    Args:
        in_stream: Include the in-stream case (only a streaming request can get it).

    """
    return [case for case in _ANTHROPIC if in_stream or not case.in_stream]


def openai_errors(*, api: Literal["chat", "responses"] = "chat", in_stream: bool = True) -> list[ErrorCase]:
    """Every documented OpenAI API error; for Chat Completions, also an error chunk inside a stream.

    The Responses API reports an in-stream error as an `error` event that the SDK yields instead of
    raising, so `api="responses"` has no in-stream case.

    Args:
        api: The API the app calls: `chat` (Chat Completions) or `responses`.
        in_stream: Include the in-stream case (only a streaming request can get it).

    """
    if api not in ("chat", "responses"):
        raise ValueError(f"openai_errors(api=...): expected 'chat' or 'responses', got {api!r}")
    stream = _OPENAI_CHAT_STREAM if api == "chat" and in_stream else ()
    return [*_OPENAI, *stream]


def gemini_errors(*, in_stream: bool = True) -> list[ErrorCase]:
    """Every documented Gemini API error, and an `UNAVAILABLE` error chunk inside a stream.

    Args:
        in_stream: Include the in-stream case (only a streaming request can get it).

    """
    return [case for case in _GEMINI if in_stream or not case.in_stream]
