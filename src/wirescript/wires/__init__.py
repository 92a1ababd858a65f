"""Wires: one package per provider (`anthropic`, `openai`, `gemini`, `bedrock`), each pure and self-contained.

A provider's package parses its requests and renders turns as bytes, and holds everything
wirescript knows of that provider (its rules, errors, renderings, side endpoints).

`Wire` is the base a new provider API subclasses (see `wirescript.wires.base`); give instances to
`ScriptTransport(script, wires=[...])`. The side endpoints (`side`) and routes (`routes`) are wires
of their own; the private modules here (`_render`, `_decode`, `_rules`, `_messages`, …) are the
helpers the provider packages share, so that none of them imports another.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ._dialects import Addresses, dialect_wires, dialects, hosted_wires
from ._hosts import host_matcher
from ._later import Later, LaterWires, become
from .base import Frame, Parsed, Rendered, TurnlessWire, Wire, _stop_map, bind_stops

if TYPE_CHECKING:
    from ._caching import Caching
    from ._dialects import DIALECTS
    from .anthropic import AnthropicWire
    from .anthropic.batches import AnthropicBatchesWire
    from .bedrock import BedrockWire
    from .gemini import GeminiCachesWire, GeminiWire
    from .gemini.batches import GeminiBatchesWire
    from .ollama import OllamaWire
    from .openai import OpenAIChatWire, OpenAIResponsesWire
    from .openai.batches import OpenAIBatchesWire
    from .openai.conversations import OpenAIConversationsWire, OpenAITracesWire
    from .openai.dialects import ChatDialect, Quirk
    from .routes import RouteWire
    from .side import EmbeddingsWire, ModelsWire, TokenCountWire

__all__ = [
    "DIALECTS",
    "Addresses",
    "AnthropicBatchesWire",
    "AnthropicWire",
    "BedrockWire",
    "Caching",
    "ChatDialect",
    "EmbeddingsWire",
    "Frame",
    "GeminiBatchesWire",
    "GeminiCachesWire",
    "GeminiWire",
    "ModelsWire",
    "OllamaWire",
    "OpenAIBatchesWire",
    "OpenAIChatWire",
    "OpenAIConversationsWire",
    "OpenAIResponsesWire",
    "OpenAITracesWire",
    "Parsed",
    "Quirk",
    "Rendered",
    "RouteWire",
    "TokenCountWire",
    "TurnlessWire",
    "Wire",
    "default_wires",
    "dialect_wires",
    "dialects",
    "hosted_wires",
    "merge_wires",
    "stub_wires",
]


_LAZY = {
    "Caching": "._caching",
    "DIALECTS": "._dialects",
    "AnthropicWire": ".anthropic",
    "AnthropicBatchesWire": ".anthropic.batches",
    "BedrockWire": ".bedrock",
    "GeminiCachesWire": ".gemini",
    "GeminiWire": ".gemini",
    "GeminiBatchesWire": ".gemini.batches",
    "OllamaWire": ".ollama",
    "OpenAIChatWire": ".openai",
    "OpenAIResponsesWire": ".openai",
    "OpenAIBatchesWire": ".openai.batches",
    "OpenAIConversationsWire": ".openai.conversations",
    "OpenAITracesWire": ".openai.conversations",
    "ChatDialect": ".openai.dialects",
    "Quirk": ".openai.dialects",
    "RouteWire": ".routes",
    "EmbeddingsWire": ".side",
    "ModelsWire": ".side",
    "TokenCountWire": ".side",
}
"""Where each provider's wire class lives: imported when first asked for (or by the first stub built), so that
importing wirescript and its transport loads none of the provider packages."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def default_wires() -> list[Wire]:
    """A fresh instance of every wire, in matching order (wires keep per-stub state)."""
    from .anthropic import AnthropicWire
    from .anthropic.batches import AnthropicBatchesWire
    from .bedrock import BedrockWire
    from .gemini import GeminiCachesWire, GeminiWire
    from .gemini.batches import GeminiBatchesWire
    from .openai import OpenAIChatWire, OpenAIResponsesWire
    from .openai.batches import OpenAIBatchesWire
    from .openai.conversations import OpenAIConversationsWire, OpenAITracesWire
    from .side import EmbeddingsWire, ModelsWire, TokenCountWire

    responses = OpenAIResponsesWire()
    side: list[Wire] = [TokenCountWire(), EmbeddingsWire(), ModelsWire()]  # no path of theirs is a generation wire's
    side += [OpenAIConversationsWire(responses.conversations), OpenAITracesWire()]
    gemini = GeminiWire()
    caches = GeminiCachesWire(gemini.cached_contents)  # the explicit caches its generateContent reads
    # The batch APIs last: only a request no other wire serves walks them.
    jobs: list[Wire] = [AnthropicBatchesWire(), OpenAIBatchesWire(), GeminiBatchesWire()]
    return [AnthropicWire(), OpenAIChatWire(), responses, gemini, BedrockWire(), *side, caches, *jobs]


def merge_wires(extra: Sequence[Wire] | None, *, bind: bool = True) -> list[Wire]:
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
    if given:  # the default wires come paired (`default_wires`): only a given one needs pairing
        _share_conversations(wires)
        _pair_caches(wires, given)
    if bind:
        bind_stops(wires)
    return wires


def _share_conversations(wires: list[Wire]) -> None:
    """Give the Conversations wire the conversations of the Responses wire that serves `conversation=`."""
    from .openai import OpenAIResponsesWire
    from .openai.conversations import OpenAIConversationsWire

    responses = next((wire for wire in wires if isinstance(wire, OpenAIResponsesWire)), None)
    for wire in wires:
        if responses is not None and isinstance(wire, OpenAIConversationsWire):
            wire.store = responses.conversations


def stub_wires(extra: Sequence[Wire] | None, dialect: object = None) -> tuple[Sequence[Wire], Sequence[Wire]]:
    """One stub's wires: those walked in order (`merge_wires`), and those served by address.

    With a `dialect` (an id of `dialects()`, `"ollama@0.20.4"`, or a `Wire` instance) its wires
    come right after `extra`, before the defaults, and answer on any host; nothing is served by
    address. Without one, the built-in dialects that have default addresses (`localhost:11434`,
    `api.mistral.ai`, …) answer there (`hosted_wires`), less those whose name a wire of `extra` takes.

    Raises:
        UsageError: As `merge_wires`; an unknown dialect (naming the closest) or one of `extra`'s names.

    """
    if not extra and dialect is None:  # the common stub: its wires are built when a request reaches them
        return later_wires()
    chosen = dialect_wires(dialect) if dialect is not None else []
    given = list(extra or ())
    taken = {wire.name for wire in given if isinstance(wire, Wire)}
    for wire in chosen:
        if wire.name in taken:
            raise UsageError(f"dialect: its {wire.name!r} wire has the name of one of wires=; each name serves once")
    walked = merge_wires([*given, *chosen], bind=False)
    names = {wire.name for wire in walked}
    addressed = [] if dialect is not None else [wire for wire in hosted_wires() if wire.name not in names]
    bind_stops([*walked, *addressed])
    return walked, addressed


def later_wires() -> tuple[LaterWires, LaterWires]:
    """`stub_wires(None)` as stand-ins (`wirescript.wires._later`): each wire is built when a request reaches it.

    The same wires, in the same order, with the same stop map: each stand-in has its class's
    declarations, and becomes its wire (in place) before any of its own methods runs. The two runs
    (`LaterWires`) make each stand-in when it is first asked for: a stub's tables hold them by place,
    so a stub makes only those of the wires its requests reach.
    """
    kinds, walked, partners = _later_runs()
    made: list[Wire | None] = [None] * len(kinds)
    return LaterWires(kinds, partners, made, 0, walked), LaterWires(kinds, partners, made, walked, len(kinds))


@functools.cache
def _later_runs() -> tuple[tuple[type[Later], ...], int, dict[int, int]]:
    """`_later_plan` as `LaterWires` reads it: every stand-in class, how many are walked, each partner's place."""
    walked, addressed, partners = _later_plan()
    return (*walked, *addressed), len(walked), dict(partners)


@functools.cache
def _later_plan() -> tuple[tuple[type[Later], ...], tuple[type[Later], ...], tuple[tuple[int, int], ...]]:
    """The stand-in classes of `default_wires()` and `hosted_wires()`, in order, and who pairs with whom (made once)."""
    walked = [type(wire) for wire in default_wires()]
    addressed = [type(wire) for wire in hosted_wires()]
    stops = _stop_map((*walked, *addressed))  # what `bind_stops` gives the eager wires
    makers = {
        "OpenAIConversationsWire": (_conversations, "OpenAIResponsesWire"),
        "GeminiCachesWire": (_caches, "GeminiWire"),
    }
    names = [kind.__name__ for kind in walked]
    partners = tuple((at, names.index(makers[name][1])) for at, name in enumerate(names) if name in makers)
    kinds = []
    for kind in (*walked, *addressed):
        later = Later.of(kind, makers[kind.__name__][0] if kind.__name__ in makers else None)
        later._stop_map = stops  # the stand-in classes serve this plan alone: its stop map is theirs
        kinds.append(later)
    return tuple(kinds[: len(walked)]), tuple(kinds[len(walked) :]), partners


def _conversations(stand_in: Wire) -> Wire:
    """The Conversations wire, on the conversations of the stub's Responses wire (as `default_wires` makes it)."""
    from .openai.conversations import OpenAIConversationsWire

    responses = become(stand_in._partner)  # type: ignore[attr-defined]
    return OpenAIConversationsWire(responses.conversations)  # type: ignore[attr-defined]


def _caches(stand_in: Wire) -> Wire:
    """The `cachedContents` endpoints, on the explicit caches of the stub's Gemini wire."""
    from .gemini import GeminiCachesWire

    gemini = become(stand_in._partner)  # type: ignore[attr-defined]
    return GeminiCachesWire(gemini.cached_contents)  # type: ignore[attr-defined]


def _pair_caches(wires: Sequence[Wire], given: Sequence[Wire]) -> None:
    """Give the default `cachedContents` endpoints the explicit caches of the stub's Gemini wire (a given one too)."""
    from .gemini import GeminiCachesWire, GeminiWire

    gemini = next((w for w in wires if isinstance(w, GeminiWire)), None)
    if gemini is None:
        return
    for wire in wires:
        if isinstance(wire, GeminiCachesWire) and not any(wire is mine for mine in given):
            wire.caches = gemini.cached_contents
