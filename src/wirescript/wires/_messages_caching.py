"""Prompt caching of the Anthropic Messages body, by Anthropic's rules: the Anthropic wire's and Bedrock's invoke.

What the rules are (each with its source in `SOURCES`, shown on `docs/usage.md`):

- The prefix is `tools`, then `system`, then `messages`, block by block; an entry covers everything up
  to and including the block that carries `cache_control` (a breakpoint); `cache_control` at the top
  level of the request (automatic caching) puts one on the last cacheable block.
- Each breakpoint reads the longest entry it finds at its own block or at most 20 blocks before it
  (the lookback); what lies between the entry read and the last breakpoint is written, each stretch
  with the lifetime of the breakpoint that ends it.
- A breakpoint whose prefix has fewer tokens than the model's minimum (`CACHE_MINIMUMS`) caches
  nothing, and no error is raised.
- An entry lives 5 minutes (`ttl: "5m"`, the default), refreshed each time it is read, or 1 hour
  (`"1h"`); entries are the model's own; an entry is readable only by the requests that arrived after
  the answer that wrote it began (parallel cold requests all write).
- Usage: `input_tokens` is the uncached part; `cache_creation_input_tokens`, `cache_read_input_tokens`
  and `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`.
- `tool_choice` and `thinking` are part of the prefix from the messages on: changing them keeps the
  tools' and system prompt's entries and misses the messages'.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from typing import Any

from .._cache_store import CacheStore, Counter, Moment
from .._text import text_of
from ..recorded import RecordedRequest
from ..script import Turn, Usage
from ._caching import LIFETIMES, Caching, Prompt, PromptBuilder, Tally, merged
from ._decode import as_list

__all__ = [
    "CACHE_MINIMUMS",
    "CACHE_MINIMUMS_AS_OF",
    "DEFAULT_MINIMUM",
    "LOOKBACK",
    "SOURCES",
    "MessagesCaching",
    "breakpoint_tally",
    "breakpoint_usage",
    "cache_minimum",
    "claude_model_id",
    "messages_prompt",
]

_DOCS = "https://platform.claude.com/docs/en/build-with-claude/prompt-caching"

LOOKBACK = 20
"""How many blocks before its own a breakpoint looks back for an entry to read."""

CACHE_MINIMUMS_AS_OF = "2026-12-02"
"""When `CACHE_MINIMUMS` was checked against the sources it cites."""

_TABLE_SOURCE = (
    f"{_DOCS} (Cache limitations), as quoted in github.com/anthropics/anthropic-sdk-python/issues/1194: "
    "'4096 tokens for Claude Opus 4.6, Claude Opus 4.5; 1024 tokens for Claude Sonnet 4.6, Claude Sonnet 4.5, "
    "Claude Opus 4.1, Claude Opus 4, Claude Sonnet 4, and Claude Sonnet 3.7; 4096 tokens for Claude Haiku 4.5; "
    "2048 tokens for Claude Haiku 3.5 and Claude Haiku 3'"
)
_LATER_SOURCE = (
    "the later models, as docs.litellm.ai/docs/completion/prompt_caching (2026-10-07) and "
    "dev.to/creeta/claudes-prompt-cache-fails-silently-below-1024-tokens-1ch1 give the docs: 512 for Claude "
    "Opus 5; 1,024 for Claude Opus 4.8 and Sonnet 5; Opus 4.7: 4,096 (LiteLLM's Bedrock table, "
    "clawdemy.org's cheatsheet; dev.to says 2,048)"
)

CACHE_MINIMUMS: Mapping[str, int] = {
    "claude-opus-5": 512,
    "claude-sonnet-5": 1024,
    "claude-opus-4-8": 1024,
    "claude-opus-4-7": 4096,
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-sonnet-4-6": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4": 1024,
    "claude-sonnet-4": 1024,
    "claude-3-7-sonnet": 1024,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}
"""The minimum cacheable prefix of each Claude model, in tokens, keyed by model id prefix (the longest key a
model id starts with, at a `-` or `@` boundary, names it: `claude-sonnet-4` is not `claude-sonnet-4-5`).
As of `CACHE_MINIMUMS_AS_OF`, from the sources in `SOURCES["minimum"]`. A model it does not list gets
`DEFAULT_MINIMUM`; give a table of your own with `MessagesCaching(minimums={...})`."""

DEFAULT_MINIMUM = 1024
"""The minimum of a Claude model `CACHE_MINIMUMS` does not list (the most common one)."""

SOURCES: Mapping[str, str] = {
    "order": f"'tools, system, and messages (in that order) up to and including the block designated with "
    f"cache_control' ({_DOCS}, How prompt caching works)",
    "breakpoints": f"at most 4 blocks with cache_control (the strict rule anthropic.cache-control-limit); "
    f"top-level cache_control: 'the system automatically applies the cache breakpoint to the last cacheable "
    f"block' ({_DOCS}, automatic caching)",
    "lookback": f"a breakpoint checks for hits at earlier block boundaries, up to 20 blocks before it ({_DOCS}; "
    "dev.to/ji_ai/claude-prompt-caching-why-agent-loops-miss-the-20-block-lookback-d36)",
    "minimum": f"{_TABLE_SOURCE}; {_LATER_SOURCE}; 'Shorter prompts cannot be cached, even if marked with "
    "cache_control. Any requests to cache fewer than this number of tokens will be processed without caching'",
    "ttl": f"'The cache has a minimum 5-minute lifetime', refreshed each time it is used; ttl '1h' for one hour "
    f"({_DOCS}, 1-hour cache duration)",
    "first_response": f"'processes the full prompt and caches the prefix once the response begins'; a cache entry "
    f"only becomes available after the first response begins, so parallel requests all miss ({_DOCS})",
    "scope": f"entries are per model; changing tools misses everything, system misses system and messages, "
    f"tool_choice and thinking miss the messages ({_DOCS}, What invalidates the cache)",
    "usage": "anthropic SDK types/usage.py (input_tokens, cache_creation_input_tokens, cache_read_input_tokens), "
    "cache_creation.py (ephemeral_5m_input_tokens, ephemeral_1h_input_tokens); 'total input tokens = "
    f"cache_read_input_tokens + cache_creation_input_tokens + input_tokens' ({_DOCS}, Tracking cache performance)",
}
"""Where each rule of Anthropic's prompt caching is documented or observed."""

_BEDROCK_ID = re.compile(r"^(?:[a-z]{2,6}\.)?anthropic\.")
_BOUNDARY = re.compile(r"[-@:.]")


def claude_model_id(model: str | None) -> str:
    """The Claude model id of a model name: Bedrock's `us.anthropic.claude-…-v1:0` is `claude-…-v1:0`."""
    return _BEDROCK_ID.sub("", (model or "").lower())


def cache_minimum(model: str | None, minimums: Mapping[str, int] = CACHE_MINIMUMS) -> int:
    """The model's minimum cacheable prefix: its entry of `minimums` (the longest key it starts with), else 1,024."""
    name = claude_model_id(model)
    named = [
        key for key in minimums if name.startswith(key) and (len(name) == len(key) or _BOUNDARY.match(name, len(key)))
    ]
    best = max(named, key=len, default=None)
    return minimums[best] if best is not None else DEFAULT_MINIMUM


def _ttl(control: Any) -> str | None:
    """The lifetime label of a `cache_control` value (`"5m"` when it names none), or None for no breakpoint."""
    if not isinstance(control, dict):
        return None
    ttl = control.get("ttl")
    return ttl if ttl in LIFETIMES else "5m"


def _nested_ttl(block: dict[str, Any]) -> str | None:
    """A `cache_control` on the block, or inside a `tool_result`'s content (which the API counts as one)."""
    found = _ttl(block.get("cache_control"))
    if found is None and isinstance(block.get("content"), list):
        for inner in block["content"]:
            if isinstance(inner, dict) and (found := _ttl(inner.get("cache_control"))) is not None:
                break
    return found


def _without_control(block: Any) -> Any:
    """The block as hashed: without its `cache_control` (moving a breakpoint does not change the prefix)."""
    if not isinstance(block, dict) or ("cache_control" not in block and not isinstance(block.get("content"), list)):
        return block
    out = {k: v for k, v in block.items() if k != "cache_control"}
    if isinstance(out.get("content"), list):
        out["content"] = [
            {k: v for k, v in inner.items() if k != "cache_control"} if isinstance(inner, dict) else inner
            for inner in out["content"]
        ]
    return out


def _counted(block: Any) -> str | None:
    """What of a block is counted: its text (thinking, a tool result's), else its JSON (None: the JSON)."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return str(block["text"])
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        return str(block["thinking"])
    if kind == "tool_result":
        return text_of(block.get("content")) or ""
    return None


def messages_prompt(
    body: Mapping[str, Any], counter: Counter, scope: Hashable, *, messages: list[Any] | None = None
) -> Prompt:
    """The prompt of a Messages body, block by block: tools, system, then messages (`messages`: the conversation)."""
    builder = PromptBuilder(counter)
    for index, tool in enumerate(as_list(body.get("tools"))):
        ttl = _ttl(tool.get("cache_control")) if isinstance(tool, dict) else None
        builder.add(f"tools[{index}]", _without_control(tool), ttl=ttl)
    system = body.get("system")
    if isinstance(system, str):
        if system:
            builder.add("system", system, text=system)
    else:
        for index, block in enumerate(as_list(system)):
            ttl = _ttl(block.get("cache_control")) if isinstance(block, dict) else None
            builder.add(f"system[{index}]", _without_control(block), text=_counted(block), ttl=ttl)
    builder.mark({"tool_choice": body.get("tool_choice"), "thinking": body.get("thinking")})
    conversation = as_list(body.get("messages")) if messages is None else messages
    for index, message in enumerate(conversation):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = message.get("content")
        if isinstance(content, str):
            builder.add(f"messages[{index}]", [role, content], text=content)
            continue
        for position, block in enumerate(as_list(content)):
            ttl = _nested_ttl(block) if isinstance(block, dict) else None
            kind = block.get("type") if isinstance(block, dict) else None
            cacheable = kind not in ("thinking", "redacted_thinking") and not (kind == "text" and not block.get("text"))
            builder.add(
                f"messages[{index}].content[{position}]",
                [role, position, _without_control(block)],
                text=_counted(block),
                ttl=ttl,
                cacheable=cacheable,
            )
    automatic = _ttl(body.get("cache_control"))
    return builder.build(
        scope, automatic=automatic, model=body.get("model") if isinstance(body.get("model"), str) else None
    )


class MessagesCaching(Caching):
    """Anthropic's prompt caching of a Messages body (the module's rules), with its minimum table.

    Args:
        minimums: The minimum cacheable prefix per model id prefix (default `CACHE_MINIMUMS`); a
            wire of your own may declare an updated table (`MessagesCaching({**CACHE_MINIMUMS, …})`).
        price_provider: The `genai-prices` provider id (`anthropic`; Bedrock's invoke: `aws`).

    """

    input_includes_cache = False
    sources = SOURCES

    def __init__(self, minimums: Mapping[str, int] = CACHE_MINIMUMS, *, price_provider: str = "anthropic") -> None:
        self.minimums = dict(minimums)
        self.price_provider = price_provider

    def prompt(self, wire: Any, record: RecordedRequest, counter: Counter) -> Prompt:
        """The Messages prompt (a continued thread's earlier messages included), scoped by the model."""
        body = record.body if isinstance(record.body, dict) else {}
        return messages_prompt(body, counter, record.model, messages=record.conversation)

    def tally(self, wire: Any, record: RecordedRequest, prompt: Prompt, store: CacheStore, moment: Moment) -> Tally:
        """Reads at each breakpoint (20 blocks back at most), writes up to the last one at or above the minimum."""
        return breakpoint_tally(
            wire.name, prompt, store, moment, minimum=cache_minimum(prompt.model or record.model, self.minimums)
        )

    def usage(self, tally: Tally, output_tokens: int, scripted: Usage | None) -> Usage:
        """Anthropic's usage: the uncached `input_tokens`, the cache counts and their split by lifetime."""
        return breakpoint_usage(tally, output_tokens, scripted)

    def sent(self, wire: Any, turn: Turn, record: RecordedRequest) -> Usage:
        """What the Messages answer sends without derivation (`_messages.message`)."""
        return super().sent(wire, turn, record)


def breakpoint_usage(tally: Tally, output_tokens: int, scripted: Usage | None) -> Usage:
    """Breakpoint caching's usage (Anthropic's, Bedrock's): uncached input, cache counts, the writes' 1-hour part."""
    derived = Usage(
        input_tokens=tally.uncached,
        output_tokens=output_tokens,
        cache_read_input_tokens=tally.read,
        cache_creation_input_tokens=tally.written,
        cache_creation_1h_input_tokens=tally.written_1h,
    )
    return merged(derived, scripted)


def breakpoint_tally(
    provider: str,
    prompt: Prompt,
    store: CacheStore,
    moment: Moment,
    *,
    minimum: int,
    lookback: int | None = LOOKBACK,
    per_checkpoint: bool = False,
) -> Tally:
    """The cache reads and writes of a prompt with breakpoints (Anthropic's rules; Bedrock's cache points).

    Args:
        provider: The wire, whose entries these are.
        prompt: The prompt, its breakpoints on its blocks (and `automatic`).
        store: The stub's cache.
        moment: The request's arrival, number and the stub's count of arrivals.
        minimum: The fewest tokens a breakpoint's prefix caches (below: nothing, no error).
        lookback: How many blocks before its own a breakpoint looks back (None: to the start).
        per_checkpoint: Bedrock's rule: each breakpoint needs `minimum` tokens since the last one that cached.

    """
    blocks = prompt.blocks
    total = max(1, prompt.total)
    marks = [(i, b.ttl) for i, b in enumerate(blocks) if b.ttl is not None]
    if prompt.automatic is not None:
        last = next((i for i in range(len(blocks) - 1, -1, -1) if blocks[i].cacheable), None)
        if last is not None and all(i != last for i, _ in marks):
            marks.append((last, prompt.automatic))
            marks.sort()
    if not marks:
        return Tally(total, note="it has no cache breakpoint (cache_control on a block, or at the request's top level)")
    cumulative = prompt.cumulative()
    best = -1
    best_hit: tuple[str, Any] | None = None
    for position, ttl in marks:
        reach = -1 if lookback is None else max(-1, position - lookback - 1)
        for candidate in range(position, reach, -1):
            if candidate <= best:
                break
            found = store.find(provider, prompt.scope, blocks[candidate].prefix, (ttl, *LIFETIMES), moment)
            if found is not None:
                best, best_hit = candidate, found
                break
    read = cumulative[best] if best >= 0 else 0
    if best_hit is not None:
        store.refresh(best_hit[1], LIFETIMES[best_hit[0]], moment)
    note = None
    if read == 0:
        last_position = marks[-1][0]
        if cumulative[last_position] < minimum:
            where = blocks[last_position].where
            note = (
                f"its prefix up to its last breakpoint ({where}) is {cumulative[last_position]:,} tokens, below "
                f"the {minimum:,} tokens {prompt.model or 'the model'} caches at least: nothing is cached"
            )
        else:
            note = _miss(provider, prompt, store, moment, [p for p, _ in marks], lookback)
    written = written_1h = 0
    cached_at = best
    since = read
    for position, ttl in marks:
        if position <= best:
            continue
        up_to = cumulative[position]
        if up_to < minimum or (per_checkpoint and up_to - since < minimum):
            continue
        stretch = up_to - (cumulative[cached_at] if cached_at >= 0 else 0)
        written += stretch
        if ttl == "1h":
            written_1h += stretch
        store.write(provider, prompt.scope, blocks[position].prefix, ttl, up_to, LIFETIMES[ttl], moment)
        cached_at, since = position, up_to
    return Tally(total, read, written, written_1h, note)


def _miss(
    provider: str, prompt: Prompt, store: CacheStore, moment: Moment, marks: list[int], lookback: int | None
) -> str | None:
    """Why no entry was read, when the store can tell: one expired, one not readable yet, one beyond the lookback."""
    blocks = prompt.blocks
    for position in range(len(blocks) - 1, -1, -1):
        peeked = store.peek(provider, prompt.scope, blocks[position].prefix, tuple(LIFETIMES))
        if peeked is None or peeked[1].written_by == moment.index:  # none, or the one this request just wrote
            continue
        ttl, entry = peeked
        where = blocks[position].where
        if entry.expires_at <= moment.now:
            return (
                f"the entry of its prefix up to {where} (written by requests[{entry.written_by}]) expired "
                f"{moment.now - entry.expires_at:,.0f} s before it arrived: its lifetime is {ttl}, refreshed "
                "when read"
            )
        if entry.visible_from > moment.index:
            return (
                f"the entry of its prefix up to {where} was written by requests[{entry.written_by}], whose answer "
                "began after this request arrived: an entry is readable only once the answer that writes it "
                "has begun, so parallel requests all write"
            )
        nearest = min((m for m in marks if m > position), default=None)
        if lookback is not None and nearest is not None and nearest - position > lookback:
            return (
                f"the entry of its prefix up to {where} is {nearest - position} blocks before its breakpoint at "
                f"{blocks[nearest].where}, and a breakpoint looks back {lookback}: add a breakpoint nearer to it"
            )
        return None
    return None
