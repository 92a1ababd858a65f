"""Gemini's context caching, by Google's rules: implicit caching, and explicit caches (`cachedContents`).

What the rules are (each with its source in `SOURCES`, shown on `docs/usage.md`):

- Implicit caching is on by default: a request whose prompt starts with an earlier request's prompt
  (the system instruction, the tools, then the contents, content by content) reads that prefix from
  the cache, when it has at least the model's minimum (`CACHE_MINIMUMS`). Google guarantees no hit;
  wirescript hits whenever the rule allows, and keeps an implicit entry `IMPLICIT_LIFETIME` seconds
  from its last use (the API documents no lifetime). Writing costs nothing and is not reported.
- An explicit cache (`caches.create`: `POST …/cachedContents`) holds contents, a system instruction
  and tools for its `ttl` (default 1 hour) or until its `expireTime`, on the stub's clock; a
  `generateContent` that names it (`cachedContent: "cachedContents/…"`) reads all its tokens.
- `usageMetadata.cachedContentTokenCount` reports the tokens read; `promptTokenCount` includes them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..._cache_store import CacheStore, Counter, Moment
from ..._text import text_of
from ...recorded import RecordedRequest
from ...script import Usage
from .._caching import Caching, Prompt, PromptBuilder, Tally, find_longest, merged
from .._decode import as_list
from ..base import Wire

__all__ = [
    "CACHE_MINIMUMS",
    "CACHE_MINIMUMS_AS_OF",
    "DEFAULT_MINIMUM",
    "DEFAULT_TTL",
    "GEMINI_CACHING",
    "IMPLICIT_LIFETIME",
    "SOURCES",
    "CachedContent",
    "CachedContents",
    "GeminiCaching",
    "gemini_minimum",
]

_DOCS = "https://ai.google.dev/gemini-api/docs/caching"

CACHE_MINIMUMS_AS_OF = "2026-12-02"
CACHE_MINIMUMS: Mapping[str, int] = {
    "gemini-3.8-flash": 4096,
    "gemini-3.7-flash": 4096,
    "gemini-3.6-flash": 4096,
    "gemini-3.5-flash": 4096,
    "gemini-3.1-pro": 4096,
    "gemini-3-pro": 4096,
    "gemini-3-flash": 1024,
    "gemini-2.5-flash": 2048,
    "gemini-2.5-pro": 2048,
}
"""The minimum input of each Gemini model for context caching, in tokens, keyed by model id prefix (the longest
key a model id starts with names it). As of `CACHE_MINIMUMS_AS_OF`, from `SOURCES["minimum"]`; a model it does
not list gets `DEFAULT_MINIMUM`."""

DEFAULT_MINIMUM = 4096
"""The minimum of a model `CACHE_MINIMUMS` does not list (the current models')."""
IMPLICIT_LIFETIME = 300.0
"""How long wirescript keeps an implicit entry from its last use: Google documents none (no hit is guaranteed)."""
DEFAULT_TTL = 3600.0
"""An explicit cache's lifetime when its request gives neither `ttl` nor `expireTime`: 1 hour."""

SOURCES: Mapping[str, str] = {
    "implicit": f"'Implicit caching is enabled by default for all Gemini 2.5 and newer models … no cost saving "
    f"guarantee' ({_DOCS})",
    "minimum": f"the minimum input token count per model ({_DOCS}, last updated 2026-07-07): Gemini 3.5 Flash 4096, "
    "3.1 Pro Preview 4096, 2.5 Flash 2048, 2.5 Pro 2048; the page in Korean lists Gemini 3.6, 3.7 and 3.8 Flash at "
    "4096; an earlier revision: Gemini 3 Flash Preview 1024, 3 Pro Preview 4096",
    "prefix": f"'Try putting large and common contents at the beginning of your prompt' ({_DOCS})",
    "explicit": f"caches.create, then cachedContent on generateContent; 'If you don't set a TTL, it defaults to 1 "
    f"hour'; ttl or expireTime ({_DOCS}, Explicit caching)",
    "usage": "google-genai GenerateContentResponseUsageMetadata: cached_content_token_count ('The number of tokens "
    "in the cached content'), prompt_token_count ('When cached_content is set, this also includes the number of "
    "tokens in the cached content')",
}
"""Where each rule of Gemini's context caching is documented."""


def gemini_minimum(model: str | None, minimums: Mapping[str, int] = CACHE_MINIMUMS) -> int:
    """The model's minimum for caching: its entry of `minimums` (the longest key it starts with), else the default."""
    name = (model or "").lower().removeprefix("models/")
    best = max((key for key in minimums if name.startswith(key)), key=len, default=None)
    return minimums[best] if best is not None else DEFAULT_MINIMUM


def _field(message: Mapping[str, Any], camel: str, snake: str) -> Any:
    value = message.get(camel)
    return message.get(snake) if value is None else value


def _counted(content: Any) -> str | None:
    """A content's text (its parts' text), or None to count its JSON (function calls and responses)."""
    if not isinstance(content, dict):
        return None
    parts = as_list(content.get("parts"))
    if parts and all(isinstance(p, dict) and set(p) <= {"text", "thought", "thoughtSignature"} for p in parts):
        return text_of(parts) or ""
    return None


def gemini_prompt(builder: PromptBuilder, body: Mapping[str, Any], contents: list[Any] | None = None) -> None:
    """Add a body's system instruction, tools and contents to `builder`, in that order."""
    system = _field(body, "systemInstruction", "system_instruction")
    if system:
        text = text_of(system.get("parts") if isinstance(system, dict) else system, sep="\n")
        builder.add("systemInstruction", system, text=text)
    for index, tool in enumerate(as_list(body.get("tools"))):
        builder.add(f"tools[{index}]", tool)
    for index, content in enumerate(as_list(body.get("contents")) if contents is None else contents):
        builder.add(f"contents[{index}]", content, text=_counted(content))


@dataclass(slots=True)
class CachedContent:
    """An explicit cache: what it holds, its tokens, and its times on the stub's clock."""

    name: str
    model: str
    body: dict[str, Any]
    tokens: int
    created: float
    updated: float
    expires: float
    display_name: str | None = None


class CachedContents:
    """The explicit caches of one stub's Gemini wire, by name (`cachedContents/…`), shared with its endpoints."""

    __slots__ = ("_caches", "_lock", "_made")

    def __init__(self) -> None:
        self._caches: dict[str, CachedContent] = {}
        self._lock = threading.Lock()
        self._made = 0

    def add(self, make: Any) -> CachedContent:
        """Store the cache `make(number)` builds (its number names it deterministically)."""
        with self._lock:
            number = self._made
            self._made += 1
            cache: CachedContent = make(number)
            self._caches[cache.name] = cache
        return cache

    def live(self, name: str, now: float) -> CachedContent | None:
        """The cache named `name`, if it has not expired by `now`."""
        with self._lock:
            cache = self._caches.get(name)
        return cache if cache is not None and now < cache.expires else None

    def get(self, name: str) -> CachedContent | None:
        """The cache named `name`, expired or not."""
        with self._lock:
            return self._caches.get(name)

    def remove(self, name: str) -> CachedContent | None:
        """Delete a cache; the one deleted, or None."""
        with self._lock:
            return self._caches.pop(name, None)

    def all_live(self, now: float) -> Iterator[CachedContent]:
        """The caches that have not expired by `now`, oldest first."""
        with self._lock:
            caches = list(self._caches.values())
        return (cache for cache in caches if now < cache.expires)


class GeminiCaching(Caching):
    """Gemini's implicit caching and its explicit caches (this module's rules), with the minimum table."""

    input_includes_cache = True
    price_provider = "google"
    sources = SOURCES

    def __init__(self, minimums: Mapping[str, int] = CACHE_MINIMUMS) -> None:
        self.minimums = dict(minimums)

    def prompt(self, wire: Wire, record: RecordedRequest, counter: Counter) -> Prompt:
        """System instruction, tools, then contents; an explicit cache's tokens counted in `extra`."""
        body = record.body if isinstance(record.body, dict) else {}
        builder = PromptBuilder(counter)
        gemini_prompt(builder, body, record.conversation)
        return builder.build(record.model, model=record.model)

    def tally(self, wire: Wire, record: RecordedRequest, prompt: Prompt, store: CacheStore, moment: Moment) -> Tally:
        """An explicit cache's tokens read; else the longest implicit prefix at or above the minimum."""
        body = record.body if isinstance(record.body, dict) else {}
        named = _field(body, "cachedContent", "cached_content")
        own = prompt.total
        if isinstance(named, str):
            caches: CachedContents | None = getattr(wire, "cached_contents", None)
            cache = caches.live(named, moment.now) if caches is not None else None
            if cache is not None:
                return Tally(cache.tokens + own, cache.tokens)
            known = caches.get(named) if caches is not None else None
            missing = (
                f"its cachedContent {named!r} expired before it arrived"
                if known is not None
                else f"its cachedContent {named!r} is not one this stub created"
            )
            return Tally(max(1, own), note=missing)
        minimum = gemini_minimum(record.model, self.minimums)
        cumulative = prompt.cumulative()
        hit = find_longest(store, wire.name, prompt, ("implicit",), moment)
        read = 0
        if hit is not None and cumulative[hit[0]] >= minimum:
            read = cumulative[hit[0]]
            store.refresh(hit[2], IMPLICIT_LIFETIME, moment)
        for position, up_to in enumerate(cumulative):
            if up_to >= minimum:
                store.write(
                    wire.name,
                    prompt.scope,
                    prompt.blocks[position].prefix,
                    "implicit",
                    up_to,
                    IMPLICIT_LIFETIME,
                    moment,
                )
        note = None
        if read == 0:
            note = (
                f"its prompt is {own:,} tokens, below the {minimum:,} {record.model} caches"
                if own < minimum
                else "no earlier request's prompt is a prefix of it (implicit caching), and it names no cachedContent"
            )
        return Tally(max(1, own), read, 0, 0, note)

    def usage(self, tally: Tally, output_tokens: int, scripted: Usage | None) -> Usage:
        """`promptTokenCount` counts every prompt token; `cachedContentTokenCount` only when some were read."""
        derived = Usage(
            input_tokens=tally.prompt,
            output_tokens=output_tokens,
            cache_read_input_tokens=tally.read or None,
        )
        return merged(derived, scripted)

    def count(self, body: Mapping[str, Any], counter: Counter) -> int:
        """The tokens of an explicit cache's contents, system instruction and tools."""
        builder = PromptBuilder(counter)
        gemini_prompt(builder, body)
        return builder.build(None).total


GEMINI_CACHING = GeminiCaching()
"""The Gemini wire's caching rules (`GeminiWire.caching`)."""
