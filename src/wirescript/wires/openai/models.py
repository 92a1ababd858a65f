"""What OpenAI documents of its models that decides whether Chat Completions accepts a request.

Dated (`OPENAI_MODELS.as_of`) and keyed by model id: a key names the model and its dated snapshots
(`o3` is also `o3-2025-04-16`, not `o3-mini`, a model of its own). A model it does not list is never
refused by a rule that reads it. A wire of your own declares an updated table
(`OpenAIChatWire.models`, `OPENAI_MODELS.updated({...})`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .._rules import ModelTable

__all__ = ["OPENAI_MODELS", "OpenAIModel"]


@dataclass(frozen=True, slots=True)
class OpenAIModel:
    """The documented facts of one OpenAI model that a strict rule reads.

    Attributes:
        reasoning: A reasoning model (the o-series): it refuses `max_tokens` (it takes
            `max_completion_tokens`) and any `temperature` but the default 1.
        source: Where the facts are documented or observed.

    """

    reasoning: bool = False
    source: str = ""


_REASONING = OpenAIModel(
    reasoning=True,
    source="OpenAI reasoning guide: reasoning models take `max_completion_tokens` "
    '(https://platform.openai.com/docs/guides/reasoning); observed for o1, o1-mini, o3, o3-mini: "Unsupported '
    "parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.\" "
    '(github.com/teilomillet/gollm/issues/33, github.com/memochou1993/gpt-ai-assistant/issues/361) and "Unsupported '
    "value: 'temperature' does not support 0.0 with this model. Only the default (1) value is supported.\" "
    "(github.com/OpenHands/OpenHands/issues/4131)",
)

OPENAI_MODELS: ModelTable[OpenAIModel] = ModelTable(
    {
        "o1": _REASONING,
        "o1-mini": _REASONING,
        "o1-preview": _REASONING,
        "o1-pro": _REASONING,
        "o3": _REASONING,
        "o3-mini": _REASONING,
        "o3-pro": _REASONING,
        "o4-mini": _REASONING,
    },
    as_of="2026-12-01",
)
"""The OpenAI models the strict rules know (the o-series reasoning models), as checked on `OPENAI_MODELS.as_of`."""
