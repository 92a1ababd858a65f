"""What Anthropic documents of each Claude model that decides whether the Messages API accepts a request.

The table is dated (`CLAUDE_MODELS.as_of`) and keyed by model id: a key names the model and its dated
snapshots (`claude-sonnet-4` is also `claude-sonnet-4-20250514`). A model it does not list is never
refused by a rule that reads it, so an out-of-date table only errs toward acceptance. Shared by the wires
that take the Messages body (Anthropic's, Bedrock's InvokeModel); a wire of your own declares an updated
table (`AnthropicWire.models`; see `wirescript.wires.anthropic.models`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._rules import ModelTable

__all__ = ["CLAUDE_MODELS", "ClaudeModel"]

_DOCS = "https://platform.claude.com/docs/en"


@dataclass(frozen=True, slots=True)
class ClaudeModel:
    """The documented facts of one Claude model that a strict rule reads.

    Attributes:
        max_output_tokens: The most `max_tokens` the model takes (its "Max output"); None: not listed.
        prefill: Whether it accepts a conversation that ends with an assistant message (a prefill).
        sampling_exclusive: Whether it refuses `temperature` and `top_p` in one request.
        budget_below_max_tokens: Whether it refuses `thinking.budget_tokens` not below `max_tokens`
            (without the interleaved-thinking beta, which lets the budget span a whole tool loop).
        source: Where the facts are documented or observed.

    """

    max_output_tokens: int | None = None
    prefill: bool = True
    sampling_exclusive: bool = False
    budget_below_max_tokens: bool = False
    source: str = ""


def _page(slug: str) -> str:
    return f"{_DOCS}/models/{slug}/overview"


_PREFILL_46 = (
    "'Prefilling assistant messages returns a 400 error on Claude 4.6 models' "
    f"({_DOCS}/about-claude/models/whats-new-claude-4-6#prefill-removal)"
)
_PREFILL_LATER = (
    "observed 'This model does not support assistant message prefill. The conversation must end with a user "
    "message.' (github.com/ericc-ch/copilot-api/pull/261: claude-opus-4-6/4-7/4-8, claude-sonnet-4-6; "
    "github.com/cortexkit/magic-context/issues/511: Sonnet 4.6, Sonnet 5)"
)
_SAMPLING_45 = (
    "'Use only temperature or top_p, not both' (migration to Claude 4.5, "
    f"{_DOCS}/about-claude/models/migrating-to-claude-4)"
)
_BUDGET = (
    "anthropic SDK `ThinkingConfigEnabledParam.budget_tokens`: 'Must be ≥1024 and less than `max_tokens`'; "
    "interleaved thinking (beta `interleaved-thinking-2025-05-14`) lets the budget exceed it"
)

CLAUDE_MODELS: ModelTable[ClaudeModel] = ModelTable(
    {
        "claude-sonnet-4": ClaudeModel(
            max_output_tokens=64_000,
            budget_below_max_tokens=True,
            source="observed 'max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for "
            "claude-sonnet-4-20250514' (github.com/OpenHands/OpenHands/issues/11090); " + _BUDGET,
        ),
        "claude-sonnet-4-0": ClaudeModel(max_output_tokens=64_000, budget_below_max_tokens=True, source="alias"),
        "claude-opus-4-1": ClaudeModel(
            sampling_exclusive=True,
            budget_below_max_tokens=True,
            source="observed '`temperature` and `top_p` cannot both be specified for this model' for Claude Opus 4.1 "
            "(github.com/open-webui/functions/pull/9); " + _BUDGET,
        ),
        "claude-sonnet-4-5": ClaudeModel(
            max_output_tokens=64_000,
            sampling_exclusive=True,
            budget_below_max_tokens=True,
            source=f"Max output: 64K tokens ({_page('sonnet-4-5')}); {_SAMPLING_45}; {_BUDGET}",
        ),
        "claude-haiku-4-5": ClaudeModel(
            max_output_tokens=64_000,
            budget_below_max_tokens=True,
            source=f"Max output: 64K tokens ({_DOCS}/models/overview); {_BUDGET}",
        ),
        "claude-opus-4-5": ClaudeModel(
            max_output_tokens=64_000,
            budget_below_max_tokens=True,
            source=f"Max output: 64K tokens ({_page('opus-4-5')}); {_BUDGET}",
        ),
        "claude-opus-4-6": ClaudeModel(
            max_output_tokens=128_000,
            prefill=False,
            source=f"Max output: 128K tokens ({_page('opus-4-6')}); {_PREFILL_46}",
        ),
        "claude-sonnet-4-6": ClaudeModel(
            max_output_tokens=128_000,
            prefill=False,
            sampling_exclusive=True,
            source=f"Max output: 128K tokens ({_page('sonnet-4-6')}); {_PREFILL_46}; observed '`temperature` and "
            "`top_p` cannot both be specified for this model' (github.com/skydiscover-ai/skydiscover/issues/15)",
        ),
        "claude-opus-4-7": ClaudeModel(
            max_output_tokens=128_000,
            prefill=False,
            source="128000 output tokens for Opus 4.6, 4.7, 4.8 and Sonnet 4.6 "
            f"(github.com/Effect-TS/effect, @effect/ai-anthropic 4.0.0-beta.106); {_PREFILL_LATER}",
        ),
        "claude-opus-4-8": ClaudeModel(
            max_output_tokens=128_000,
            prefill=False,
            source=f"Max output: 128K tokens ({_page('opus-4-8')}); {_PREFILL_LATER}",
        ),
        "claude-sonnet-5": ClaudeModel(
            max_output_tokens=128_000,
            prefill=False,
            source=f"Max output: 128K tokens ({_page('sonnet-5')}); {_PREFILL_LATER}",
        ),
        "claude-opus-5": ClaudeModel(max_output_tokens=128_000, source=f"Max output: 128K tokens ({_page('opus-5')})"),
    },
    as_of="2026-12-01",
)
"""The Claude models the strict rules know, as Anthropic's model pages gave them on `CLAUDE_MODELS.as_of`."""
