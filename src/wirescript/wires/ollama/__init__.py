"""Ollama's native API: `POST /api/chat`, JSON or NDJSON lines (its `/v1` layer is a Chat Completions dialect).

- `wire`: `OllamaWire`.
"""

from __future__ import annotations

from .wire import OllamaWire

__all__ = ["OllamaWire"]
