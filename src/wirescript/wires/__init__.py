"""Wires: one package per provider (`anthropic`, `openai`, `gemini`, `bedrock`), each pure and self-contained.

A provider's package parses its requests and renders turns as bytes, and holds everything
wirescript knows of that provider (its rules, errors, renderings, side endpoints).

`Wire` is the base a new provider API subclasses (see `wirescript.wires.base`); give instances to
`ScriptTransport(script, wires=[...])`. The side endpoints (`side`) and routes (`routes`) are wires
of their own; the private modules here (`_render`, `_decode`, `_rules`, `_messages`, …) are the
helpers the provider packages share, so that none of them imports another.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import UsageError
from ._hosts import host_matcher
from .anthropic import AnthropicWire
from .base import Frame, Parsed, Rendered, TurnlessWire, Wire, bind_stops
from .bedrock import BedrockWire
from .gemini import GeminiWire
from .openai import OpenAIChatWire, OpenAIResponsesWire
from .routes import RouteWire
from .side import EmbeddingsWire, ModelsWire, TokenCountWire

__all__ = [
    "AnthropicWire",
    "BedrockWire",
    "EmbeddingsWire",
    "Frame",
    "GeminiWire",
    "ModelsWire",
    "OpenAIChatWire",
    "OpenAIResponsesWire",
    "Parsed",
    "Rendered",
    "RouteWire",
    "TokenCountWire",
    "TurnlessWire",
    "Wire",
    "default_wires",
    "merge_wires",
]


def default_wires() -> list[Wire]:
    """A fresh instance of every wire, in matching order (wires keep per-stub state)."""
    side: list[Wire] = [TokenCountWire(), EmbeddingsWire(), ModelsWire()]  # no path of theirs is a generation wire's
    return [AnthropicWire(), OpenAIChatWire(), OpenAIResponsesWire(), GeminiWire(), BedrockWire(), *side]


def merge_wires(extra: Sequence[Wire] | None) -> list[Wire]:
    """One stub's wires: `extra` first, then every default wire whose `name` none of them takes.

    Each wire is given the stop map of them all (`Wire.stop_map`): what one stub's wires say a
    stop reason means is theirs alone, whatever another stub's wires say.

    Raises:
        UsageError: An entry is not a `Wire` instance, two share a name, a wire's `hosts` are not host
            patterns, or two map a stop reason to different canonical ones.

    """
    given = list(extra or ())
    names: set[str] = set()
    for index, wire in enumerate(given):
        if isinstance(wire, type):
            raise UsageError(f"wires[{index}]: expected a Wire instance, got the class {wire.__name__}; call it")
        if not isinstance(wire, Wire):
            raise UsageError(f"wires[{index}]: expected a wirescript.wires.Wire instance, got {type(wire).__name__}")
        if wire.name in names:
            raise UsageError(f"wires[{index}]: two wires are named {wire.name!r}; each name serves once")
        names.add(wire.name)
        try:
            host_matcher(wire.hosts)  # checked now: a bad pattern must not fail a request that asks its hosts
        except UsageError as exc:
            raise UsageError(f"wires[{index}]: the {wire.name} wire's hosts: {exc}") from None
    wires = [*given, *(wire for wire in default_wires() if wire.name not in names)]
    bind_stops(wires)
    return wires
