"""Small text helpers every layer shares: clipping, "did you mean", the text of message content."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["clip", "did_you_mean", "ordinal", "shown", "text_of"]


def clip(text: str, limit: int = 60) -> str:
    """`text`, cut to at most `limit` characters with an ellipsis when longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown(value: object, limit: int = 60) -> str:
    """`repr(value)` clipped to `limit`, for an error message: never raises.

    What a script holds is the user's, so its `repr` may fail: an int past Python's limit of
    digits written as text raises `ValueError` (`sys.get_int_max_str_digits`), and a class's own
    `__repr__` may raise anything. The message then says what the value is instead.
    """
    try:
        return clip(repr(value), limit)
    except Exception:
        if isinstance(value, int):
            return f"<an int of {value.bit_length()} bits>"
        return f"<{type(value).__name__} whose repr fails>"


def ordinal(n: int) -> str:
    """`1st`, `2nd`, `3rd`, `4th`, `11th`, `21st`: how a person counts."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def did_you_mean(value: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str:
    """`"; did you mean 'x'?"` for the closest of `choices`, or `""` when none is close."""
    import difflib  # only a mistake pays for it: not imported with the stub

    close = difflib.get_close_matches(value, sorted(choices), n=1, cutoff=cutoff)
    return f"; did you mean {close[0]!r}?" if close else ""


def text_of(content: Any, *, sep: str = "") -> str | None:
    """The text of message content in any provider's shape, or None when it holds no text.

    A string is its own text; a list of blocks or parts gives the `text` of each (thought parts
    left out), joined by `sep`. Anything else has no text.
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            b["text"]
            for b in content
            if isinstance(b, dict) and isinstance(b.get("text"), str) and not b.get("thought")
        ]
        return sep.join(texts) if texts else None
    return None
