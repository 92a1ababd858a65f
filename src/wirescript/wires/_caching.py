"""What a wire declares of its provider's usage: how a request's prompt is counted and cached, and how it bills.

A `Caching` is declared on a wire (`Wire.caching`); a stub made with `usage="derive"` asks it, for each
request its wire answers, for the request's prompt (`prompt`: its blocks in the provider's order, each
counted and hashed with its prefix), for what the provider's cache rules make of it (`tally`: the
tokens read from the cache and written to it, on the stub's cache store and clock), and for the usage
the wire sends (`usage`). Each provider's package declares its own (`wires/anthropic/caching.py`, …);
this base counts the request's messages, system prompt and tools and caches nothing, which is what a
wire of your own gets unless it declares one.

The counting is a deterministic proxy (the stub's token counter), never billing-exact: see
`docs/usage.md`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from .._cache_store import CacheStore, Counter, Moment, approximate_tokens
from ..recorded import RecordedRequest
from ..script import Turn, Usage
from ..sse import json_dumps
from ._render import default_usage

if TYPE_CHECKING:
    from .base import Wire

__all__ = [
    "LIFETIMES",
    "Block",
    "Caching",
    "Counting",
    "Prompt",
    "PromptBuilder",
    "Tally",
    "canonical",
    "output_text",
    "scripted_usage",
]

LIFETIMES: Mapping[str, float] = {"5m": 300.0, "1h": 3600.0}
"""The lifetimes, in seconds, of the ttl labels Anthropic and Bedrock cache entries carry."""


def canonical(value: Any) -> bytes:
    """The compact JSON (UTF-8) of a value, its keys in the order sent: what a block is hashed and counted by.

    The key order is kept (an SDK sends the same block in the same order every time), which costs a
    fifth of sorting the keys of every block of every request.
    """
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    try:
        return to_json(value, serialize_unknown=True)
    except ValueError:  # a lone surrogate, which a JSON body can carry and UTF-8 cannot
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str).encode()


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a request's prompt, in its provider's order.

    Attributes:
        where: Where it is in the request, as messages name it (`system[0]`, `tools[2]`, `messages[3].content[1]`).
        tokens: Its tokens, by the stub's counter.
        prefix: The hash of the prompt up to and including it: two requests share a cacheable prefix
            up to a block exactly when these agree.
        digest: The hash of the block alone (what changed, when two prefixes part).
        ttl: The lifetime label of a cache breakpoint it ends (`"5m"`, `"1h"`), or None.
        cacheable: Whether a breakpoint may sit on it (a thinking block may not).

    """

    where: str
    tokens: int
    prefix: bytes
    digest: bytes
    ttl: str | None = None
    cacheable: bool = True


@dataclass(slots=True)
class Prompt:
    """A request's prompt as its provider caches it: the blocks in order, and what its cache is scoped by.

    Attributes:
        blocks: The blocks, in the provider's prefix order.
        scope: What the provider scopes cache entries by besides the provider (the model; a cache key).
        automatic: The lifetime label of automatic caching (a breakpoint on the last cacheable block), or None.
        extra: Tokens of the prompt that are in no block (counted, never cached).
        model: The model, for messages.

    """

    blocks: list[Block] = field(default_factory=list)
    scope: Hashable = None
    automatic: str | None = None
    extra: int = 0
    model: str | None = None

    @property
    def total(self) -> int:
        """All the prompt's tokens."""
        return sum(b.tokens for b in self.blocks) + self.extra

    def cumulative(self) -> list[int]:
        """The tokens of the prompt up to and including each block."""
        out: list[int] = []
        running = 0
        for block in self.blocks:
            running += block.tokens
            out.append(running)
        return out


class PromptBuilder:
    """Builds a `Prompt` block by block: each block counted with the stub's counter and chained into the prefix hash."""

    __slots__ = ("_chain", "blocks", "counter")

    def __init__(self, counter: Counter) -> None:
        self.counter = counter
        self.blocks: list[Block] = []
        self._chain = b""

    def add(
        self,
        where: str,
        value: Any,
        *,
        text: str | None = None,
        ttl: str | None = None,
        cacheable: bool = True,
    ) -> Block:
        """Add a block: `value` is what it is hashed by, `text` what is counted (default: `value`'s JSON)."""
        encoded = canonical(value)
        digest = hashlib.blake2b(encoded, digest_size=16).digest()
        self._chain = hashlib.blake2b(self._chain + digest, digest_size=16).digest()
        counted = encoded.decode("utf-8", "surrogatepass") if text is None else text
        block = Block(where, max(0, int(self.counter(counted))) if counted else 0, self._chain, digest, ttl, cacheable)
        self.blocks.append(block)
        return block

    def mark(self, value: Any) -> None:
        """Chain `value` into the prefix hash without a block: settings that part the cache from here on."""
        self._chain = hashlib.blake2b(self._chain + b"\0" + canonical(value), digest_size=16).digest()

    def build(
        self, scope: Hashable, *, automatic: str | None = None, extra: int = 0, model: str | None = None
    ) -> Prompt:
        """The prompt of the blocks added."""
        return Prompt(self.blocks, scope, automatic, extra, model)


@dataclass(frozen=True, slots=True)
class Tally:
    """What a request's prompt came to under its provider's cache rules.

    Attributes:
        prompt: All its prompt tokens: uncached, written to the cache and read from it.
        read: Tokens read from the cache.
        written: Tokens written to the cache.
        written_1h: Of `written`, those written with a 1-hour lifetime.
        note: When nothing was read, why (in words, for a budget's failure message).

    """

    prompt: int
    read: int = 0
    written: int = 0
    written_1h: int = 0
    note: str | None = None

    @property
    def uncached(self) -> int:
        """The prompt tokens neither read from the cache nor written to it."""
        return max(0, self.prompt - self.read - self.written)


def output_text(turn: Turn) -> str:
    """The text a turn's answer is made of, as its output tokens are counted: thinking, text, tool inputs."""
    parts = [turn.thinking or "", turn.text or ""]
    parts.extend(json_dumps(call.input) for call in turn.tool_calls)
    return "".join(parts)


def scripted_usage(turn: Turn) -> Usage:
    """The usage a wire sends for a turn that derives nothing: the scripted counts, else the defaults."""
    chars = len(turn.text or "") + len(turn.thinking or "") + sum(len(json_dumps(c.input)) for c in turn.tool_calls)
    input_tokens, output_tokens = default_usage(turn, chars)
    usage = turn.usage
    return Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_input_tokens=(usage.cache_read_input_tokens or 0) if usage else 0,
        cache_creation_input_tokens=(usage.cache_creation_input_tokens or 0) if usage else 0,
        cache_creation_1h_input_tokens=usage.cache_creation_1h_input_tokens if usage else None,
    )


class Counting:
    """A wire that counts tokens of its own (Gemini's `cachedContents`): the stub gives it its counter."""

    counter: Counter = staticmethod(approximate_tokens)
    """The stub's token counter (`usage=`), set when the stub is made; the default one until then."""


class Caching:
    """A provider's usage rules, declared on its wire (`Wire.caching`): counting, caching and pricing.

    This base counts a request's system prompt, messages and tools (`RecordedRequest` fields, one block
    each) and caches nothing; a provider's package subclasses it. Every method is pure but for the
    cache store it is given, which it reads and writes on the stub's clock (`Moment`).
    """

    input_includes_cache: bool = False
    """Whether the wire's input count includes cached tokens (OpenAI's `prompt_tokens`, Gemini's
    `promptTokenCount`), or counts only the uncached ones (Anthropic's and Bedrock's `input_tokens`)."""
    price_provider: str | None = None
    """The provider id `genai-prices` prices its requests under (`anthropic`, `openai`, `google`, `aws`)."""
    sources: Mapping[str, str] = {}
    """Each rule it applies, in a few words, and where the provider documents it (for `docs/usage.md`)."""

    def provider_for_prices(self, record: RecordedRequest) -> str | None:
        """The `genai-prices` provider id of this request (Azure's hosts are `azure`)."""
        return self.price_provider

    def prompt(self, wire: Wire, record: RecordedRequest, counter: Counter) -> Prompt:
        """The request's prompt in blocks: its tools, system prompt and messages, in that order."""
        builder = PromptBuilder(counter)
        for index, tool in enumerate(record.tools):
            builder.add(f"tools[{index}]", tool)
        if record.system:
            builder.add("system", record.system, text=record.system)
        for index, message in enumerate(record.conversation):
            builder.add(f"messages[{index}]", message)
        return builder.build(record.model)

    def tally(self, wire: Wire, record: RecordedRequest, prompt: Prompt, store: CacheStore, moment: Moment) -> Tally:
        """What the prompt comes to: by default all of it uncached (this base caches nothing)."""
        return Tally(prompt=max(1, prompt.total), note=f"the {wire.name} wire declares no prompt caching")

    def usage(self, tally: Tally, output_tokens: int, scripted: Usage | None) -> Usage:
        """The usage the wire sends: the tally in its own fields' terms, a count the turn scripts winning."""
        derived = Usage(
            input_tokens=tally.prompt if self.input_includes_cache else tally.uncached,
            output_tokens=output_tokens,
            cache_read_input_tokens=tally.read,
            cache_creation_input_tokens=tally.written,
        )
        return merged(derived, scripted)

    def sent(self, wire: Wire, turn: Turn, record: RecordedRequest) -> Usage:
        """The usage the wire sends for a turn when nothing is derived (what its bill row reads)."""
        return scripted_usage(turn)


def merged(derived: Usage, scripted: Usage | None) -> Usage:
    """`derived` with every count `scripted` gives in its place: scripted usage wins field by field."""
    if scripted is None:
        return derived
    given = {
        name: value
        for name in scripted.model_fields_set
        if name != "derive" and (value := getattr(scripted, name)) is not None
    }
    if not given:
        return derived
    values = {**derived.model_dump(exclude={"derive"}), **given}
    hour, created = values.get("cache_creation_1h_input_tokens"), values.get("cache_creation_input_tokens")
    if hour is not None and created is not None and hour > created:
        values["cache_creation_1h_input_tokens"] = created  # a scripted write count below the derived 1-hour part
    return Usage(**values)


def find_longest(
    store: CacheStore,
    provider: str,
    prompt: Prompt,
    ttls: Sequence[str],
    moment: Moment,
    *,
    positions: Sequence[int] | None = None,
) -> tuple[int, str, Any] | None:
    """The last block position (of `positions`, default every block) whose prefix has a live entry, or None."""
    candidates = range(len(prompt.blocks) - 1, -1, -1) if positions is None else sorted(positions, reverse=True)
    for position in candidates:
        found = store.find(provider, prompt.scope, prompt.blocks[position].prefix, ttls, moment)
        if found is not None:
            return position, found[0], found[1]
    return None
