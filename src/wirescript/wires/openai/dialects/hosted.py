"""Hosted Chat Completions APIs: Groq, Together AI, xAI, Gemini's OpenAI layer, Azure OpenAI's content filter."""

from __future__ import annotations

from typing import Any

from ....recorded import RecordedRequest
from ....sse import encode_event, json_dumps
from ..._render import alphanumeric
from ..chat import ChatShape, OpenAIChatWire
from .base import ChatDialect, Quirk

__all__ = ["AzureWire", "GeminiOpenAIWire", "GroqWire", "TogetherWire", "XAIWire"]

X_GROQ = Quirk(
    "groq.x-groq",
    "answer",
    'A stream\'s first chunk carries `x_groq: {"id": "req_…"}`, Groq\'s request id.',
    "Observed: a recorded Groq stream, 2025-10 (git.secluded.site/fantasy-mirror providertests/testdata/"
    "TestGroqCommon/groq-kimi-k2-0905/multi_tool_streaming.yaml: the first chunk carries "
    '\'"x_groq":{"id":"req_01k88s37gyfaqa5ckqj4t7mrg8"}\', later ones none)',
)

_ULID = "0123456789abcdefghjkmnpqrstvwxyz"


def _x_groq(body: dict[str, Any], where: str, record: RecordedRequest) -> None:
    if where == "first":
        body["x_groq"] = {"id": f"req_{alphanumeric(f'groq:{record.index}', 26, _ULID)}"}


class GroqWire(ChatDialect):
    """Groq's `api.groq.com/openai/v1/chat/completions`."""

    name = "groq"
    label = "Groq Chat Completions (POST /openai/v1/chat/completions)"
    hosts = ("api.groq.com",)
    addresses = ("api.groq.com",)
    quirks = (X_GROQ,)

    def shaped(self, active: frozenset[str]) -> ChatShape:
        """The `x_groq` request id on the first chunk."""
        return ChatShape(decorate=_x_groq)


class TogetherWire(ChatDialect):
    """Together AI's `api.together.xyz/v1/chat/completions`: no difference verified yet (OpenAI's answers)."""

    name = "together"
    label = "Together AI Chat Completions (POST /v1/chat/completions)"
    hosts = ("api.together.xyz",)
    addresses = ("api.together.xyz",)


class XAIWire(ChatDialect):
    """xAI's `api.x.ai/v1/chat/completions`: no difference verified yet (OpenAI's answers)."""

    name = "xai"
    label = "xAI Chat Completions (POST /v1/chat/completions)"
    hosts = ("api.x.ai",)
    addresses = ("api.x.ai",)


GEMINI_FINISH = Quirk(
    "gemini-openai.stream-finish-stop",
    "answer",
    'A stream that carries tool calls ends with `finish_reason: "stop"` (the same request unstreamed says '
    "`tool_calls`).",
    "github.com/googleapis/python-genai/issues/2868 (reproduced with curl against "
    "generativelanguage.googleapis.com/v1beta/openai/, 2026-08); "
    "discuss.ai.google.dev/t/the-finish-reason-is-stop-instead-of-tool-calls-in-openai-compatible-endpoint/112704",
)


class GeminiOpenAIWire(ChatDialect):
    """Gemini's OpenAI compatibility layer, `generativelanguage.googleapis.com/v1beta/openai/chat/completions`.

    The host is Gemini's own: only its `…/chat/completions` path is this dialect's, the rest is the
    Gemini wire's.
    """

    name = "gemini-openai"
    label = "Gemini's OpenAI-compatible Chat Completions (POST /v1beta/openai/chat/completions)"
    addresses = ("generativelanguage.googleapis.com",)
    quirks = (GEMINI_FINISH,)

    def shaped(self, active: frozenset[str]) -> ChatShape:
        """`stop` at the end of a tool-call stream."""
        return ChatShape(streamed_tool_finish="stop")


_CATEGORIES = ("hate", "self_harm", "sexual", "violence")
_LEARN = "learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter-annotations"

PROMPT_FILTER = Quirk(
    "azure.prompt-filter-results",
    "answer",
    "Answers carry `prompt_filter_results` ([{prompt_index, content_filter_results}]); a stream sends them first, "
    'in a chunk with `choices: []`, `id: ""` and `created: 0`.',
    f"{_LEARN}; openai-cookbook examples/azure/chat ('prompt content filter result in \"model_extra\" for azure'); "
    "an observed stream in github.com/dto-btn/ssc-assistant (FrontendChatTestScreen testHelpers/simple_chat.ts)",
)
CONTENT_FILTER = Quirk(
    "azure.content-filter-results",
    "answer",
    "Each choice carries `content_filter_results` (hate, self_harm, sexual, violence: `{filtered, severity}`); "
    "the stream's role chunk carries `{}`.",
    f"{_LEARN}; the same observed stream (github.com/dto-btn/ssc-assistant)",
)


def _safe() -> dict[str, dict[str, Any]]:
    return {category: {"filtered": False, "severity": "safe"} for category in _CATEGORIES}


def _azure(body: dict[str, Any], where: str, record: RecordedRequest) -> None:
    if where == "completion":
        body["prompt_filter_results"] = [{"prompt_index": 0, "content_filter_results": _safe()}]
    if where in ("completion", "chunk"):
        for choice in body["choices"]:
            choice["content_filter_results"] = _safe()
    elif where == "first":
        for choice in body["choices"]:
            choice["content_filter_results"] = {}


def _azure_prelude(head: dict[str, Any], record: RecordedRequest) -> list[bytes]:
    chunk = {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": _safe()}],
    }
    return [encode_event(None, json_dumps(chunk))]


class AzureWire(ChatDialect):
    """Azure OpenAI's chat deployments with content-filter annotations.

    Azure OpenAI is OpenAI's API: the default chat wire serves `*.openai.azure.com` (its
    `/openai/deployments/{deployment}/chat/completions` paths and model) as before. This dialect
    adds what Azure's content filter adds to the same answers; choose it with `dialect="azure"`.
    """

    name = "azure"
    label = "Azure OpenAI Chat Completions (POST /openai/deployments/{deployment}/chat/completions)"
    quirks = (PROMPT_FILTER, CONTENT_FILTER)
    # OpenAI's models and API: Azure documents the same strict function calling and structured outputs
    # (learn.microsoft.com/azure/ai-foundry/openai/how-to/structured-outputs).
    answer_rules = OpenAIChatWire.answer_rules
    answer_fields = OpenAIChatWire.answer_fields

    def shaped(self, active: frozenset[str]) -> ChatShape:
        """The prompt and content filter annotations."""
        return ChatShape(decorate=_azure, prelude=_azure_prelude)
