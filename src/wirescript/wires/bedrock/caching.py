"""Amazon Bedrock's prompt caching: Converse's cache points, and Claude's Messages body on InvokeModel.

What the rules are (each with its source in `SOURCES`, shown on `docs/usage.md`):

- Converse: a `{"cachePoint": {"type": "default"}}` block in `toolConfig.tools`, `system` or a message's
  `content` ends a cache checkpoint at the block before it (`ttl: "1h"` for one hour, else 5 minutes,
  refreshed on each hit); the prefix is the tools, the system blocks, then the messages.
- Each checkpoint needs the model's minimum of tokens since the last one that cached (the first
  after 1,024 tokens of Claude 3.7 Sonnet, the second after 2,048); below it the request succeeds
  and nothing is cached. Claude models look back 20 blocks from a checkpoint, as on Anthropic's API.
- Usage: `inputTokens` is the uncached part; `cacheReadInputTokens`, `cacheWriteInputTokens`, and
  `cacheDetails` (the writes by ttl, 1 hour first) when something was written.
- InvokeModel with Claude's Messages body caches by Anthropic's rules (`wires/_messages_caching.py`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..._cache_store import CacheStore, Counter, Moment
from ..._text import text_of
from ...recorded import RecordedRequest
from ...script import Usage
from .._caching import LIFETIMES, Caching, Prompt, PromptBuilder, Tally
from .._decode import as_list
from .._messages_caching import SOURCES as MESSAGES_SOURCES
from .._messages_caching import breakpoint_tally, breakpoint_usage, cache_minimum, claude_model_id, messages_prompt
from ..base import Wire

__all__ = ["BEDROCK_CACHING", "NOVA_MINIMUM", "SOURCES", "BedrockCaching", "converse_prompt"]

_DOCS = "https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html"

NOVA_MINIMUM = 1000
"""The minimum tokens per cache checkpoint of Amazon Nova models."""

SOURCES: Mapping[str, str] = {
    "cache_point": f"'For the Converse API, you can set cache checkpoints in the messages, system, or tools fields' "
    f"with a cachePoint block ({_DOCS}); botocore's bedrock-runtime model: CachePointBlock (type, ttl '5m' | '1h')",
    "minimum": "'the Anthropic Claude 3.7 Sonnet model requires at least 1,024 tokens per cache checkpoint. That "
    "means that your first cache checkpoint can be defined after 1,024 tokens and your second cache checkpoint "
    "can be defined after 2,048 tokens. If you try to add a cache checkpoint before meeting the minimum number "
    f"of tokens, your inference will still succeed, but your prefix will not be cached' ({_DOCS}); Claude models "
    f"take Anthropic's minimums; Amazon Nova 1K tokens per checkpoint ({_DOCS}, Supported models)",
    "ttl": f"'The cache has a Time To Live (TTL) that resets with each successful cache hit' (5 minutes; 1 hour "
    f"for the models with the extended TTL) ({_DOCS})",
    "lookback": "Claude on Bedrock: a single cachePoint, 'Bedrock checks ~20 preceding blocks automatically' "
    "(aws/agent-toolkit-for-aws, skills/core-skills/amazon-bedrock/references/prompt-caching.md)",
    "usage": "botocore's bedrock-runtime model, TokenUsage: cacheReadInputTokens, cacheWriteInputTokens, "
    "cacheDetails ('Sorted by TTL duration (1h before 5m)'); inputTokens counts the uncached part (genai-prices' "
    "Bedrock extractor adds the cache counts to it for the total input)",
    "invoke": f"InvokeModel's Claude body: Anthropic's rules ({MESSAGES_SOURCES['order']})",
}
"""Where each rule of Bedrock's prompt caching is documented or observed."""


def _cache_point(block: Any) -> str | None:
    """The lifetime label of a `cachePoint` block (`"5m"` unless it names `"1h"`), or None for another block."""
    if not isinstance(block, dict) or not isinstance(block.get("cachePoint"), dict):
        return None
    ttl = block["cachePoint"].get("ttl")
    return ttl if ttl in LIFETIMES else "5m"


def _counted(block: Any) -> str | None:
    if not isinstance(block, dict):
        return None
    if isinstance(block.get("text"), str):
        return str(block["text"])
    if isinstance(block.get("toolResult"), dict):
        return text_of(block["toolResult"].get("content")) or None
    return None


def converse_prompt(body: Mapping[str, Any], counter: Counter, scope: Any, model: str | None) -> Prompt:
    """The prompt of a Converse body: tools, system blocks, then messages; a cache point marks the block before it."""
    builder = PromptBuilder(counter)
    blocks = builder.blocks

    def run(where: str, items: list[Any], salt: Any = None) -> None:
        for index, item in enumerate(items):
            ttl = _cache_point(item)
            if ttl is not None:
                if blocks:
                    blocks[-1] = dataclasses.replace(blocks[-1], ttl=ttl)
                continue
            builder.add(f"{where}[{index}]", item if salt is None else [salt, item], text=_counted(item))

    tool_config = body.get("toolConfig")
    run("toolConfig.tools", as_list(tool_config.get("tools")) if isinstance(tool_config, dict) else [])
    run("system", as_list(body.get("system")))
    for index, message in enumerate(as_list(body.get("messages"))):
        if isinstance(message, dict):
            run(f"messages[{index}].content", as_list(message.get("content")), message.get("role"))
    return builder.build(scope, model=model)


class BedrockCaching(Caching):
    """Bedrock's prompt caching (this module's rules): Converse's cache points, Claude's body on InvokeModel."""

    input_includes_cache = False
    price_provider = "aws"
    sources = SOURCES

    def prompt(self, wire: Wire, record: RecordedRequest, counter: Counter) -> Prompt:
        """The Converse prompt, or for InvokeModel the Messages prompt; scoped by the model id."""
        body = record.body if isinstance(record.body, dict) else {}
        if _invoke(record):
            prompt = messages_prompt(body, counter, record.model, messages=record.conversation)
            prompt.model = record.model
            return prompt
        return converse_prompt(body, counter, record.model, record.model)

    def tally(self, wire: Wire, record: RecordedRequest, prompt: Prompt, store: CacheStore, moment: Moment) -> Tally:
        """Claude: Anthropic's breakpoint rules (Converse: per checkpoint); Nova: its minimum, no lookback."""
        claude = claude_model_id(record.model).startswith("claude")
        minimum = cache_minimum(record.model) if claude else NOVA_MINIMUM
        if _invoke(record):
            return breakpoint_tally(wire.name, prompt, store, moment, minimum=minimum)
        return breakpoint_tally(
            wire.name, prompt, store, moment, minimum=minimum, lookback=20 if claude else None, per_checkpoint=True
        )

    def usage(self, tally: Tally, output_tokens: int, scripted: Usage | None) -> Usage:
        """The uncached `inputTokens`, the cache counts and their split by lifetime (`cacheDetails`)."""
        return breakpoint_usage(tally, output_tokens, scripted)


def _invoke(record: RecordedRequest) -> bool:
    return record.path.endswith(("/invoke", "/invoke-with-response-stream"))


BEDROCK_CACHING = BedrockCaching()
"""The Bedrock wire's caching rules (`BedrockWire.caching`)."""
