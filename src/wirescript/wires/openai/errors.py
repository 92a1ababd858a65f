"""The OpenAI error catalog: every documented error of Chat Completions and Responses, as a turn and its exception."""

from __future__ import annotations

from typing import Literal

from .._catalog import SDK, ErrorCase, case
from .chat import OpenAIChatWire

__all__ = ["OPENAI_SDK", "openai_errors"]


OPENAI_SDK = SDK(
    "openai",
    module="openai",
    package="openai",
    retried=OpenAIChatWire.retryable,
    retries=2,
    reads_retries=True,
    stream_error_after=2,
)
"""The openai SDK: it retries by default (`max_retries`, 2), and raises from the `openai` module."""

# OpenAI (Chat Completions and Responses alike): https://platform.openai.com/docs/guides/error-codes.
_OPENAI = (
    case(OPENAI_SDK, 400, "invalid_request_error", "The request is invalid.", "BadRequestError"),
    case(
        OPENAI_SDK,
        401,
        "invalid_request_error",
        "Incorrect API key provided.",
        "AuthenticationError",
        code="invalid_api_key",
    ),
    case(
        OPENAI_SDK,
        403,
        "request_forbidden",
        "Country, region, or territory not supported.",
        "PermissionDeniedError",
        code="unsupported_country_region_territory",
    ),
    case(
        OPENAI_SDK, 404, "invalid_request_error", "The model does not exist.", "NotFoundError", code="model_not_found"
    ),
    case(OPENAI_SDK, 422, "invalid_request_error", "The request could not be processed.", "UnprocessableEntityError"),
    case(OPENAI_SDK, 429, "requests", "Rate limit reached for requests.", "RateLimitError", code="rate_limit_exceeded"),
    case(
        OPENAI_SDK,
        429,
        "insufficient_quota",
        "You exceeded your current quota.",
        "RateLimitError",
        code="insufficient_quota",
    ),
    case(OPENAI_SDK, 500, "server_error", "The server had an error processing your request.", "InternalServerError"),
    case(OPENAI_SDK, 503, "server_error", "The engine is currently overloaded.", "InternalServerError"),
)
# A Chat Completions stream chunk `{"error": {...}}`: the base `APIError`, with no status.
_OPENAI_CHAT_STREAM = (
    case(OPENAI_SDK, 200, "server_error", "The server had an error while streaming.", "APIError", in_stream=True),
)


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
