"""OpenAI's prompt caching, for Chat Completions and Responses (Azure OpenAI's too), by OpenAI's rules.

What the rules are (each with its source in `SOURCES`, shown on `docs/usage.md`):

- Caching is automatic: a prompt of at least 1,024 tokens is cached whole, and a later request whose
  prompt starts with it reads the longest cached prefix, in steps of 128 tokens from 1,024 on
  (1,024, 1,152, 1,280, …); below 1,024 tokens nothing is read. `cached_tokens` reports it (Chat:
  `usage.prompt_tokens_details`, Responses: `usage.input_tokens_details`), and the prompt's count
  (`prompt_tokens`, `input_tokens`) includes it.
- The prefix is the tools, the response format, then the messages (Responses: `instructions`, then
  the input items, a stored conversation's included), in order; wirescript matches whole blocks (a
  tool, a message), so a message that changes part-way counts as changed from its start.
- `prompt_cache_key` steers routing: requests with different keys share no entries. Retention
  (`prompt_cache_retention`): `in_memory` (the default) keeps an entry 5 minutes from its last use
  (OpenAI: cleared after 5 to 10 minutes of inactivity), `24h` for 24 hours.
- Models before the GPT-5.6 family write for free and report no writes; from GPT-5.6 on, the tokens
  newly cached are reported in `cache_write_tokens` (billed at 1.25 times the input rate), hits are not
  rounded to 128 tokens, and entries live `prompt_cache_options.ttl` (`30m` by default, or `12h`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..._cache_store import CacheStore, Counter, Moment
from ..._text import text_of
from ...recorded import RecordedRequest
from ...script import Turn, Usage
from .._caching import Caching, Prompt, PromptBuilder, Tally, find_longest, merged, scripted_usage
from .._decode import as_list
from ..base import Wire
from .common import arguments

__all__ = ["MINIMUM", "OPENAI_CACHING", "SOURCES", "STEP", "OpenAICaching", "cached_in_steps", "writes_reported"]

_GUIDE = "https://developers.openai.com/api/docs/guides/prompt-caching"

MINIMUM = 1024
"""The fewest prompt tokens OpenAI caches."""
STEP = 128
"""Cache hits above the minimum grow in steps of this many tokens (before GPT-5.6)."""

SOURCES: Mapping[str, str] = {
    "automatic": f"'Caching is enabled automatically for prompts that are 1024 tokens or longer' ({_GUIDE})",
    "steps": "'cache hits occurring in increments of 128 tokens' (OpenAI cookbook, Prompt Caching 201, for models "
    f"before GPT-5.6); 'For requests under 1024 tokens, cached_tokens will be zero' ({_GUIDE})",
    "prefix": f"'Cache hits are only possible for exact prefix matches within a prompt … This also applies to images "
    f"and tools, which must be identical between requests' ({_GUIDE})",
    "key": f"'prompt_cache_key … combined with the prefix hash' routes requests that share it ({_GUIDE})",
    "retention": "prompt_cache_retention: 'in_memory' (caches 'typically cleared within 5 to 10 minutes of "
    "inactivity and always removed within one hour of the cache's last use') or '24h' "
    f"({_GUIDE}; learn.microsoft.com/azure/foundry/openai/how-to/prompt-caching)",
    "usage": "openai SDK types/completion_usage.py (prompt_tokens_details.cached_tokens, cache_write_tokens), "
    "types/responses/response_usage.py (input_tokens_details.cached_tokens, cache_write_tokens); 'prompt_tokens' "
    "counts every prompt token, cached ones included",
    "gpt-5.6": "'Cache writes have no additional fee on models before the GPT-5.6 family. For GPT-5.6 models and "
    f"later model families, cache writes cost 1.25x … OpenAI reports writes in cache_write_tokens' ({_GUIDE}); "
    "GPT-5.6 'no longer relies on 128-token rounding' (github.com/openai/codex/issues/35300, quoting the "
    "migration guide); prompt_cache_options.ttl '30m' (default) or '12h' (openai SDK "
    "InputTokensDetailsCacheWriteTokensDetails: ttl_30m_tokens, ttl_12h_tokens)",
}
"""Where each rule of OpenAI's prompt caching is documented or observed."""

_RETENTION = {"in_memory": 300.0, "24h": 86_400.0}
_OPTIONS_TTL = {"30m": 1_800.0, "12h": 43_200.0}
_FAMILY = re.compile(r"gpt-(\d+)(?:\.(\d+))?")


def writes_reported(model: str | None) -> bool:
    """Whether the model is of the GPT-5.6 family or later: its cache writes are reported (and billed)."""
    found = _FAMILY.search((model or "").lower())
    if found is None:
        return False
    major, minor = int(found[1]), int(found[2] or 0)
    return (major, minor) >= (5, 6)


def cached_in_steps(tokens: int) -> int:
    """A prefix of `tokens` as OpenAI reads it before GPT-5.6: 0 below 1,024, else 1,024 plus whole steps of 128."""
    if tokens < MINIMUM:
        return 0
    return MINIMUM + (tokens - MINIMUM) // STEP * STEP


def _counted(message: Any) -> str | None:
    """A message's text (its content's), or None to count its JSON (a tool call, an item of another kind)."""
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str) and not message.get("tool_calls"):
        return content
    if isinstance(content, list) and not message.get("tool_calls"):
        text = text_of(content)
        return text if text is not None else None
    return None


class OpenAICaching(Caching):
    """OpenAI's automatic prompt caching (this module's rules), for Chat Completions and Responses."""

    input_includes_cache = True
    price_provider = "openai"
    sources = SOURCES

    def provider_for_prices(self, record: RecordedRequest) -> str | None:
        """`azure` for an Azure OpenAI path, else `openai`."""
        return "azure" if record.path.startswith("/openai/") else "openai"

    def prompt(self, wire: Wire, record: RecordedRequest, counter: Counter) -> Prompt:
        """Tools, the response format, then the messages (Responses: instructions, then the input items)."""
        body = record.body if isinstance(record.body, dict) else {}
        builder = PromptBuilder(counter)
        for index, tool in enumerate(as_list(body.get("tools"))):
            builder.add(f"tools[{index}]", tool)
        text = body.get("text")
        shape = body.get("response_format") or (text.get("format") if isinstance(text, dict) else None)
        if shape:
            builder.add("response_format", shape)
        instructions = body.get("instructions")
        if isinstance(instructions, str) and instructions:
            builder.add("instructions", instructions, text=instructions)
        name = "input" if "input" in body else "messages"
        for index, message in enumerate(record.conversation):
            builder.add(f"{name}[{index}]", message, text=_counted(message))
        key = body.get("prompt_cache_key")
        return builder.build((record.model, key if isinstance(key, str) else None), model=record.model)

    def tally(self, wire: Wire, record: RecordedRequest, prompt: Prompt, store: CacheStore, moment: Moment) -> Tally:
        """The longest cached prefix read (in steps before GPT-5.6), the whole prompt cached when long enough."""
        body = record.body if isinstance(record.body, dict) else {}
        total = max(1, prompt.total)
        newer = writes_reported(prompt.model)
        lifetime = _lifetime(body, newer)
        cumulative = prompt.cumulative()
        hit = find_longest(store, wire.name, prompt, ("openai",), moment)
        read = 0
        if hit is not None:
            position, _, entry = hit
            read = cumulative[position] if newer else cached_in_steps(cumulative[position])
            store.refresh(entry, lifetime, moment)
        written = 0
        if total >= MINIMUM:
            for position, up_to in enumerate(cumulative):
                if up_to >= MINIMUM and (hit is None or position > hit[0]):
                    store.write(
                        wire.name, prompt.scope, prompt.blocks[position].prefix, "openai", up_to, lifetime, moment
                    )
            if newer:
                written = max(0, (cumulative[-1] if cumulative else 0) - (cumulative[hit[0]] if hit else 0))
        note = None
        if read == 0:
            note = (
                f"its prompt is {total:,} tokens, below the {MINIMUM:,} OpenAI caches"
                if total < MINIMUM
                else "no earlier request's cached prompt is a prefix of it (or its entry expired, or was made "
                "under another prompt_cache_key)"
            )
        return Tally(total, read, written, 0, note)

    def usage(self, tally: Tally, output_tokens: int, scripted: Usage | None) -> Usage:
        """`prompt_tokens` (`input_tokens`) counts every prompt token; `cached_tokens`, `cache_write_tokens`."""
        derived = Usage(
            input_tokens=tally.prompt,
            output_tokens=output_tokens,
            cache_read_input_tokens=tally.read,
            cache_creation_input_tokens=tally.written,
        )
        return merged(derived, scripted)

    def sent(self, wire: Wire, turn: Turn, record: RecordedRequest) -> Usage:
        """The counts `token_counts` sends: tool arguments as sent (broken ones, with `malformed_tool_json`)."""
        malformed = turn.fault is not None and turn.fault.malformed_tool_json
        if not malformed or not turn.tool_calls:
            return scripted_usage(turn)
        chars = len(turn.text or "") + len(turn.thinking or "")
        chars += sum(len(arguments(call, True)) for call in turn.tool_calls)
        usage = scripted_usage(turn)
        if turn.usage is None or turn.usage.output_tokens is None:
            usage = usage.model_copy(update={"output_tokens": max(1, -(-chars // 4))})
        return usage


def _lifetime(body: Mapping[str, Any], newer: bool) -> float:
    """How long an entry lives from its last use: the retention asked for, else the default."""
    if newer:
        options = body.get("prompt_cache_options")
        ttl = options.get("ttl") if isinstance(options, dict) else None
        return _OPTIONS_TTL.get(ttl, _OPTIONS_TTL["30m"]) if isinstance(ttl, str) else _OPTIONS_TTL["30m"]
    retention = body.get("prompt_cache_retention")
    return _RETENTION.get(retention, _RETENTION["in_memory"]) if isinstance(retention, str) else _RETENTION["in_memory"]


OPENAI_CACHING = OpenAICaching()
"""The OpenAI wires' caching rules (`OpenAIChatWire.caching`, `OpenAIResponsesWire.caching`)."""
