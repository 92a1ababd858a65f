"""Anthropic's prompt caching: the public names of the Messages caching rules (shared with Bedrock's invoke).

The rules themselves live in `wirescript.wires._messages_caching`, beside the Messages answer both
wires send; this module is where the Anthropic package names them. `AnthropicWire.caching` is a
`MessagesCaching`; a wire of your own declares one with an updated minimum table::

    class MyWire(AnthropicWire):
        caching = MessagesCaching({**CACHE_MINIMUMS, "claude-next": 2048})
"""

from __future__ import annotations

from .._messages_caching import (
    CACHE_MINIMUMS,
    CACHE_MINIMUMS_AS_OF,
    DEFAULT_MINIMUM,
    LOOKBACK,
    SOURCES,
    MessagesCaching,
    cache_minimum,
)

__all__ = [
    "ANTHROPIC_CACHING",
    "CACHE_MINIMUMS",
    "CACHE_MINIMUMS_AS_OF",
    "DEFAULT_MINIMUM",
    "LOOKBACK",
    "SOURCES",
    "MessagesCaching",
    "cache_minimum",
]

ANTHROPIC_CACHING = MessagesCaching()
"""The Anthropic wire's caching rules (`AnthropicWire.caching`)."""
