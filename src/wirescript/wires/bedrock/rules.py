"""Strict rules for Amazon Bedrock's Converse API (`converse`, `converse_stream`): what it refuses.

Each rule's source is the ValidationException text Bedrock answers with, as users have reported it.
Only the conversation's shape is checked; model-specific limits are left to the models.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._rules import Rule, Violation, dicts, first_violation

__all__ = [
    "ROLES_ALTERNATE",
    "RULES",
    "TOOL_CONFIG_MISSING",
    "TOOL_RESULT_WITHOUT_USE",
    "TOOL_USE_WITHOUT_RESULT",
    "check_converse",
]

ROLES_ALTERNATE = Rule(
    "bedrock.roles-must-alternate",
    "bedrock",
    "Two consecutive messages of the same role in a Converse conversation.",
    "Observed: 'A conversation must alternate between user and assistant roles. Make sure the conversation "
    "alternates between user and assistant roles and try again.' (github.com/langchain-ai/langchain-aws/issues/130, "
    "github.com/microsoft/semantic-kernel/issues/10281)",
)
TOOL_USE_WITHOUT_RESULT = Rule(
    "bedrock.tool-use-without-result",
    "bedrock",
    "An assistant `toolUse` not answered by a `toolResult` in the next (user) message.",
    "Observed: 'Expected toolResult blocks at messages.2.content for the following Ids: tooluse_…' "
    "(github.com/camel-ai/camel/issues/3954, github.com/genkit-ai/aws-bedrock-js-plugin/issues/664)",
)
TOOL_RESULT_WITHOUT_USE = Rule(
    "bedrock.tool-result-without-use",
    "bedrock",
    "More `toolResult` blocks in a message than `toolUse` blocks in the assistant message before it.",
    "Observed: 'The number of toolResult blocks at messages.{n}.content exceeds the number of toolUse blocks of "
    "previous turn.' (github.com/strands-agents/harness-sdk/issues/1435)",
)
TOOL_CONFIG_MISSING = Rule(
    "bedrock.tool-config-missing",
    "bedrock",
    "`toolUse` or `toolResult` blocks in the conversation without a `toolConfig`.",
    "Observed: 'The toolConfig field must be defined when using toolUse and toolResult content blocks.' "
    "(github.com/vxcontrol/pentagi/pull/196)",
)

RULES: tuple[Rule, ...] = (ROLES_ALTERNATE, TOOL_USE_WITHOUT_RESULT, TOOL_RESULT_WITHOUT_USE, TOOL_CONFIG_MISSING)


def check_converse(body: dict[str, Any], *, skip: frozenset[str] = frozenset()) -> Violation | None:
    """The first Converse rule the request breaks, or None (`body` is a `converse` request's JSON)."""
    messages = [m for _, m in dicts(body.get("messages"))]
    checks: list[tuple[Rule, Callable[[], Violation | None]]] = [
        (ROLES_ALTERNATE, lambda: _alternate(messages)),
        (TOOL_USE_WITHOUT_RESULT, lambda: _unanswered(messages)),
        (TOOL_RESULT_WITHOUT_USE, lambda: _extra_results(messages)),
        (TOOL_CONFIG_MISSING, lambda: _tool_config(body, messages)),
    ]
    return first_violation(checks, skip)


def _blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """The `kind` (`toolUse`, `toolResult`) blocks of a message's content."""
    return [b[kind] for _, b in dicts(message.get("content")) if isinstance(b.get(kind), dict)]


def _alternate(messages: list[dict[str, Any]]) -> Violation | None:
    for i in range(1, len(messages)):
        role = messages[i].get("role")
        if isinstance(role, str) and role == messages[i - 1].get("role"):
            return Violation(
                ROLES_ALTERNATE,
                "A conversation must alternate between user and assistant roles. Make sure the conversation "
                "alternates between user and assistant roles and try again.",
                f"messages.{i}.role",
            )
    return None


def _unanswered(messages: list[dict[str, Any]]) -> Violation | None:
    for i, message in enumerate(messages[:-1]):
        if message.get("role") != "assistant":
            continue
        used = [str(u["toolUseId"]) for u in _blocks(message, "toolUse") if isinstance(u.get("toolUseId"), str)]
        answered = {r.get("toolUseId") for r in _blocks(messages[i + 1], "toolResult")}
        missing = [tool_id for tool_id in used if tool_id not in answered]
        if missing:
            return Violation(
                TOOL_USE_WITHOUT_RESULT,
                f"Expected toolResult blocks at messages.{i + 1}.content for the following Ids: {', '.join(missing)}",
                f"messages.{i + 1}.content",
            )
    return None


def _extra_results(messages: list[dict[str, Any]]) -> Violation | None:
    for i, message in enumerate(messages):
        results = _blocks(message, "toolResult")
        if not results:
            continue
        uses = _blocks(messages[i - 1], "toolUse") if i > 0 and messages[i - 1].get("role") == "assistant" else []
        if len(results) > len(uses):
            return Violation(
                TOOL_RESULT_WITHOUT_USE,
                f"The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of "
                "previous turn.",
                f"messages.{i}.content",
            )
    return None


def _tool_config(body: dict[str, Any], messages: list[dict[str, Any]]) -> Violation | None:
    if isinstance(body.get("toolConfig"), dict):
        return None
    if any(_blocks(m, "toolUse") or _blocks(m, "toolResult") for m in messages):
        return Violation(
            TOOL_CONFIG_MISSING,
            "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
            "toolConfig",
        )
    return None
