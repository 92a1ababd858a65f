"""What wires render with: JSON bodies, streamed text pieces, default usage, error messages and retry headers.

Private helpers of the wires in this package, provider-neutral: a wire of its own may use them
(`wirescript.wires.base` re-exports the ones its docs name), but they are not a public API.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..script import ErrorSpec, Turn
from ..sse import json_dumps

__all__ = [
    "DEFAULT_INPUT_TOKENS",
    "RETRYABLE",
    "alphanumeric",
    "break_json",
    "chunks",
    "default_usage",
    "error_message",
    "json_answer",
    "plain_text",
    "retry_headers",
]

RETRYABLE = frozenset({408, 409, 429}) | frozenset(range(500, 600))
"""The statuses the anthropic and openai SDKs retry (`_should_retry`): 408, 409, 429 and every 5xx."""

DEFAULT_INPUT_TOKENS = 10


def json_answer(value: Any) -> bytes:
    """A JSON response body."""
    return json_dumps(value).encode()


def chunks(text: str, most: int = 8) -> list[str]:
    """Split text for streaming: several pieces whenever it has two or more characters.

    Pieces are at most `most` characters long and cut at fixed positions, mid-word included, so
    a consumer that assumes whole words per delta is caught.
    """
    if len(text) < 2:  # nothing to split: no comprehension for a one-character answer
        return [text] if text else []
    size = max(1, min(most, len(text) // 2))
    return [text[i : i + size] for i in range(0, len(text), size)]


def plain_text(turn: Turn) -> bool:
    """Whether a turn is text alone: no thinking, tool calls, usage, server tools or citations (a stop reason may be).

    Its answer then depends on its text, stop reason and the request alone, so a wire may keep it encoded.
    """
    return (
        turn.text is not None
        and turn.tool is None
        and turn.tools is None
        and turn.thinking is None
        and turn.usage is None
        and turn.server_tools is None
        and turn.citations is None
    )


def default_usage(turn: Turn, output_chars: int) -> tuple[int, int]:
    """The (input, output) token counts for a turn: scripted values, else deterministic defaults."""
    usage = turn.usage
    if usage is None:  # most turns: the defaults (a quarter of the characters, rounded up; at least 1)
        return DEFAULT_INPUT_TOKENS, (output_chars + 3) // 4 or 1
    input_tokens = usage.input_tokens if usage.input_tokens is not None else DEFAULT_INPUT_TOKENS
    output_tokens = usage.output_tokens if usage.output_tokens is not None else (output_chars + 3) // 4 or 1
    return input_tokens, output_tokens


def error_message(spec: ErrorSpec) -> str:
    """The scripted error message, or one naming the status."""
    return spec.message if spec.message is not None else f"wirescript: scripted {spec.status} error"


def retry_headers(spec: ErrorSpec, retryable: frozenset[int] = RETRYABLE) -> dict[str, str]:
    """Headers for an error response: the scripted ones, plus `retry-after-ms: 1` when retryable.

    The SDKs honour a server delay only when it is positive (0 falls back to their backoff of
    0.375 s or more), so 1 ms lets their real retry loop run without sleeping.
    """
    headers = {k.lower(): v for k, v in (spec.headers or {}).items()}
    if spec.status in retryable and "retry-after" not in headers and "retry-after-ms" not in headers:
        headers["retry-after-ms"] = "1"
    return headers


def break_json(arguments: str) -> str:
    """Tool arguments made into text that is not JSON (`Fault.malformed_tool_json`)."""
    return arguments[:-1] + ', "oops": }' if len(arguments) > 2 else '{"oops": }'


_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def alphanumeric(seed: str, length: int, alphabet: str = _ALNUM) -> str:
    """`length` characters of `alphabet`, the same for the same `seed` (deterministic ids)."""
    number = int.from_bytes(hashlib.blake2b(seed.encode(), digest_size=16).digest(), "big")
    out = []
    for _ in range(length):
        number, digit = divmod(number, len(alphabet))
        out.append(alphabet[digit])
    return "".join(out)
