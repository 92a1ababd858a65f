"""Wires: one module per provider API. Each is pure: it parses requests and renders turns as bytes."""

from __future__ import annotations

from .anthropic import AnthropicWire
from .base import Frame, Parsed, Rendered, Wire

__all__ = ["AnthropicWire", "Frame", "Parsed", "Rendered", "Wire", "default_wires"]


def default_wires() -> list[Wire]:
    """A fresh instance of every wire, in matching order (wires keep per-stub state)."""
    return [AnthropicWire()]
