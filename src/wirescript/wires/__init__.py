"""Wires: one module per provider API. Each is pure: it parses requests and renders turns as bytes."""

from __future__ import annotations

from .anthropic import AnthropicWire
from .base import Frame, Parsed, Rendered, Wire
from .gemini import GeminiWire
from .openai_chat import OpenAIChatWire
from .openai_responses import OpenAIResponsesWire

__all__ = [
    "AnthropicWire",
    "Frame",
    "GeminiWire",
    "OpenAIChatWire",
    "OpenAIResponsesWire",
    "Parsed",
    "Rendered",
    "Wire",
    "default_wires",
]


def default_wires() -> list[Wire]:
    """A fresh instance of every wire, in matching order (wires keep per-stub state)."""
    return [AnthropicWire(), OpenAIChatWire(), OpenAIResponsesWire(), GeminiWire()]
