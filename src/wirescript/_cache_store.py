"""The neutral machinery of derived usage: the token counter, and the prompt cache a stub's requests share.

Nothing here knows a provider. A token counter is a function from text to a number of tokens; the
default one, `approximate_tokens`, is the rule wirescript counts with everywhere else (one token per
four characters): a deterministic proxy, not any provider's tokenizer, so the numbers it gives are
the same on every run and every machine, and only approximately what a provider would bill.

The cache holds entries keyed by `(provider, scope, prefix hash, ttl)`: `scope` is what a provider
scopes its cache by (the model; OpenAI's `prompt_cache_key` too), the prefix hash names the exact
prompt prefix, the ttl its lifetime label. Times are the stub's clock (`wirescript.Clock`), and an
entry written while answering a request is visible only to the requests that arrived after that
answer began (`written_before`): requests sent in parallel, before any answer, all miss.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

__all__ = ["CacheEntry", "CacheStore", "Counter", "Moment", "approximate_tokens"]

Counter = Callable[[str], int]
"""A token counter: the number of tokens of a text (`usage=` takes one)."""


def approximate_tokens(text: str) -> int:
    """The default token counter: one token per four characters, rounded up (0 for no text)."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True, slots=True)
class Moment:
    """When a request is answered: its arrival on the stub's clock, its number, and how many had arrived.

    Attributes:
        now: The request's arrival time on the stub's clock (`RecordedRequest.received_at`).
        index: The request's number (`RecordedRequest.index`).
        arrived: How many requests had arrived when its answer began (the stub's count then): an entry
            written now is visible to the requests numbered from `arrived` on.

    """

    now: float
    index: int
    arrived: int


@dataclass(slots=True)
class CacheEntry:
    """One cached prefix: its tokens, until when it lives, and from which request on it is visible."""

    tokens: int
    expires_at: float
    visible_from: int
    """The first request number that may read it: requests that arrived before its answer began may not."""
    written_by: int
    """The request whose answer wrote it."""


class CacheStore:
    """The prompt cache of a stub: entries by `(provider, scope, prefix hash, ttl)`, on the stub's clock.

    Thread-safe: requests of several threads (or tasks) read and write it while they are answered.
    """

    __slots__ = ("_entries", "_lock")

    def __init__(self) -> None:
        self._entries: dict[tuple[str, Hashable, bytes, str], CacheEntry] = {}
        self._lock = threading.Lock()

    def find(
        self, provider: str, scope: Hashable, prefix: bytes, ttls: Iterable[str], moment: Moment
    ) -> tuple[str, CacheEntry] | None:
        """The live entry of this prefix that `moment`'s request may read (the first of `ttls` found), or None."""
        with self._lock:
            for ttl in ttls:
                entry = self._entries.get((provider, scope, prefix, ttl))
                if entry is not None and moment.now < entry.expires_at and entry.visible_from <= moment.index:
                    return ttl, entry
        return None

    def peek(self, provider: str, scope: Hashable, prefix: bytes, ttls: Iterable[str]) -> tuple[str, CacheEntry] | None:
        """The entry of this prefix whatever its life and visibility (to say why it was not read), or None."""
        with self._lock:
            for ttl in ttls:
                entry = self._entries.get((provider, scope, prefix, ttl))
                if entry is not None:
                    return ttl, entry
        return None

    def write(
        self, provider: str, scope: Hashable, prefix: bytes, ttl: str, tokens: int, lifetime: float, moment: Moment
    ) -> None:
        """Store (or replace) the entry of this prefix, living `lifetime` seconds from `moment`."""
        entry = CacheEntry(tokens, moment.now + lifetime, moment.arrived, moment.index)
        with self._lock:
            self._entries[(provider, scope, prefix, ttl)] = entry

    def refresh(self, entry: CacheEntry, lifetime: float, moment: Moment) -> None:
        """Extend a read entry's life to `lifetime` seconds from `moment` (a 5-minute entry refreshed on a hit)."""
        with self._lock:
            entry.expires_at = max(entry.expires_at, moment.now + lifetime)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
