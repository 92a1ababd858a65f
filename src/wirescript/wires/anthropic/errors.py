"""The Anthropic error catalog: every documented error of the Messages API, as a turn and the exception it raises."""

from __future__ import annotations

from .._catalog import SDK, ErrorCase, case
from .wire import AnthropicWire

__all__ = ["ANTHROPIC_SDK", "anthropic_errors"]


ANTHROPIC_SDK = SDK(
    "anthropic",
    module="anthropic",
    package="anthropic",
    retried=AnthropicWire.retryable,
    retries=2,
    reads_retries=True,
    stream_error_after=4,
)
"""The anthropic SDK: it retries by default (`max_retries`, 2), and raises from the `anthropic` module."""

# Anthropic: https://docs.anthropic.com/en/api/errors. Classes: anthropic >= 1 first, then 0.x.
_ANTHROPIC = (
    case(ANTHROPIC_SDK, 400, "invalid_request_error", "The request is malformed.", "BadRequestError"),
    case(ANTHROPIC_SDK, 401, "authentication_error", "The API key is invalid.", "AuthenticationError"),
    case(
        ANTHROPIC_SDK,
        402,
        "billing_error",
        "Check your billing details.",
        "PaymentRequiredError",
        legacy="APIStatusError",
    ),
    case(ANTHROPIC_SDK, 403, "permission_error", "The API key may not use this resource.", "PermissionDeniedError"),
    case(ANTHROPIC_SDK, 404, "not_found_error", "The resource was not found.", "NotFoundError"),
    case(
        ANTHROPIC_SDK,
        413,
        "request_too_large",
        "The request is too large.",
        "ContentTooLargeError",
        legacy="RequestTooLargeError",
    ),
    case(ANTHROPIC_SDK, 429, "rate_limit_error", "Your account hit a rate limit.", "RateLimitError"),
    case(ANTHROPIC_SDK, 500, "api_error", "An internal error occurred.", "InternalServerError"),
    case(
        ANTHROPIC_SDK,
        504,
        "timeout_error",
        "The request timed out.",
        "GatewayTimeoutError",
        legacy="InternalServerError",
    ),
    case(ANTHROPIC_SDK, 529, "overloaded_error", "The API is temporarily overloaded.", "OverloadedError"),
    # An error event in a 200 stream: the class comes from the HTTP status (200), so it is the base class.
    case(ANTHROPIC_SDK, 200, "overloaded_error", "Overloaded", "APIStatusError", in_stream=True),
)


def anthropic_errors(*, in_stream: bool = True) -> list[ErrorCase]:
    """Every documented Anthropic API error, and an `overloaded_error` inside a stream.

    Args:
        in_stream: Include the in-stream case (only a streaming request can get it).

    """
    return [case for case in _ANTHROPIC if in_stream or not case.in_stream]
