"""The Gemini error catalog: every documented error of the Gemini API, as a turn and the class google-genai raises."""

from __future__ import annotations

from .._catalog import SDK, ErrorCase, case
from .wire import GeminiWire

__all__ = ["GEMINI_SDK", "gemini_errors"]


GEMINI_SDK = SDK(
    "gemini",
    module="google.genai.errors",
    package="google-genai",
    retried=GeminiWire.retryable,
    retries=0,
    reads_retries=False,
    stream_error_after=1,
)
"""google-genai: it retries only when `HttpOptions(retry_options=...)` is given; it raises from `google.genai.errors`.
"""

# Gemini: https://ai.google.dev/gemini-api/docs/troubleshooting. google-genai raises ClientError
# for 4xx and ServerError for 5xx; an error chunk in a stream raises by its `code` the same way.
_GEMINI = (
    case(GEMINI_SDK, 400, "INVALID_ARGUMENT", "Request contains an invalid argument.", "ClientError"),
    case(GEMINI_SDK, 400, "FAILED_PRECONDITION", "The free tier is not available in your country.", "ClientError"),
    case(GEMINI_SDK, 403, "PERMISSION_DENIED", "The caller does not have permission.", "ClientError"),
    case(GEMINI_SDK, 404, "NOT_FOUND", "The requested entity was not found.", "ClientError"),
    case(GEMINI_SDK, 429, "RESOURCE_EXHAUSTED", "Resource has been exhausted.", "ClientError"),
    case(GEMINI_SDK, 500, "INTERNAL", "An internal error has occurred.", "ServerError"),
    case(GEMINI_SDK, 503, "UNAVAILABLE", "The model is overloaded.", "ServerError"),
    case(GEMINI_SDK, 504, "DEADLINE_EXCEEDED", "The request deadline was exceeded.", "ServerError"),
    case(GEMINI_SDK, 200, "UNAVAILABLE", "The model is overloaded.", "ServerError", in_stream=True),
)


def gemini_errors(*, in_stream: bool = True) -> list[ErrorCase]:
    """Every documented Gemini API error, and an `UNAVAILABLE` error chunk inside a stream.

    Args:
        in_stream: Include the in-stream case (only a streaming request can get it).

    """
    return [case for case in _GEMINI if in_stream or not case.in_stream]
