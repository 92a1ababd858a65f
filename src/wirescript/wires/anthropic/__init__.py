"""Anthropic: the Messages API (and Claude on Vertex AI's raw predict), its strict rules, errors and stream check.

- `wire`: `AnthropicWire`, the Messages API as the anthropic SDK calls it;
- `rules`: its strict rules (`check_anthropic`);
- `errors`: its error catalog (`anthropic_errors`);
- `stream_check`: `validate_anthropic_stream`, a strict reader of a Messages SSE stream;
- `side`: its side endpoints (token counting, model listings).

The Messages answer itself (a `Message` and its events) is `wires/_messages.py`, shared with the
Bedrock wire, whose InvokeModel sends it for Claude on Bedrock.
"""

from __future__ import annotations

from .wire import ANTHROPIC_ERROR_TYPES, AnthropicWire

__all__ = ["ANTHROPIC_ERROR_TYPES", "AnthropicWire"]
