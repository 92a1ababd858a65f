"""DeepSeek's Chat Completions (`api.deepseek.com`): thinking mode wants its reasoning back."""

from __future__ import annotations

from typing import Any

from ..._rules import Rule, Violation, dicts
from .base import ChatDialect, Quirk

__all__ = ["DeepSeekWire"]

REASONING_RULE = Rule(
    "deepseek.reasoning-content-passed-back",
    "deepseek",
    "In thinking mode, an assistant message with `tool_calls` resent without its `reasoning_content`.",
    'api-docs.deepseek.com/guides/thinking_mode: thinking mode is on by default (`thinking: {"type": '
    '"disabled"}` turns it off), and \'for turns that do perform tool calls, the reasoning_content must be fully '
    'passed back to the API in all subsequent requests\' or the API answers 400. Observed: 400 {"error": '
    '{"message": "The `reasoning_content` in the thinking mode must be passed back to the API.", "type": '
    '"invalid_request_error", "code": "invalid_request_error"}} (github.com/endolith/open-interpreter/issues/215, '
    "github.com/the-open-agent/openagent/issues/2206, github.com/anomalyco/opencode/issues/24722)",
    code="invalid_request_error",
)
PASSED_BACK = Quirk.refusal(REASONING_RULE)
REASONING = Quirk(
    "deepseek.reasoning-content",
    "answer",
    "Thinking is sent as `reasoning_content`, beside `content` (as wirescript's default chat wire sends it).",
    "api-docs.deepseek.com/guides/thinking_mode (the chain of thought comes back in `reasoning_content`, at the "
    "same level as `content`)",
)

_NON_THINKING_MODELS = ("deepseek-chat",)
"""The legacy alias of the non-thinking mode (`deepseek-reasoner` is the thinking one)."""


def thinking(body: dict[str, Any]) -> bool:
    """Whether a request runs in thinking mode: its `thinking` field, else on except for `deepseek-chat`."""
    setting = body.get("thinking")
    if isinstance(setting, dict) and setting.get("type") in ("enabled", "disabled"):
        return bool(setting.get("type") == "enabled")
    return body.get("model") not in _NON_THINKING_MODELS


class DeepSeekWire(ChatDialect):
    """DeepSeek's `api.deepseek.com/chat/completions`."""

    name = "deepseek"
    label = "DeepSeek Chat Completions (POST /chat/completions)"
    hosts = ("api.deepseek.com",)
    addresses = ("api.deepseek.com",)
    quirks = (REASONING, PASSED_BACK)

    def refuse(self, rule: Rule, body: dict[str, Any]) -> Violation | None:
        """In thinking mode, the first assistant tool-call message that carries no `reasoning_content`."""
        if not thinking(body):
            return None
        for i, message in dicts(body.get("messages")):
            if (
                message.get("role") == "assistant"
                and message.get("tool_calls")
                and message.get("reasoning_content") is None
            ):
                text = "The `reasoning_content` in the thinking mode must be passed back to the API."
                return Violation(rule, text, f"messages.[{i}].reasoning_content")
        return None
