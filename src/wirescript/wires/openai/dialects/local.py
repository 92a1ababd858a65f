"""Self-hosted servers with an OpenAI-compatible Chat Completions: vLLM, SGLang, LM Studio."""

from __future__ import annotations

import uuid

from ....recorded import RecordedRequest
from ....script import ToolCall
from ..chat import ChatShape
from .base import ChatDialect, Quirk

__all__ = ["LMStudioWire", "SGLangWire", "VLLMWire"]

VLLM_REASONING = Quirk(
    "vllm.reasoning-field",
    "answer",
    "Thinking is sent as `reasoning`; `reasoning_content` (the older name) is no longer sent.",
    "github.com/vllm-project/vllm/pull/27752 ('reasoning_content -> reasoning', Nov 2025) and "
    "github.com/vllm-project/vllm/pull/33402 (the old field removed, Jan 2026); "
    "github.com/vllm-project/router/pull/115",
)
VLLM_CALL_IDS = Quirk(
    "vllm.tool-call-ids",
    "answer",
    "Tool-call ids are `chatcmpl-tool-` and 32 hex digits.",
    "github.com/vllm-project/vllm vllm/entrypoints/chat_utils.py `make_tool_call_id`: "
    'f"chatcmpl-tool-{random_uuid()}" (random_uuid: uuid4().hex)',
)


def _vllm_call_id(call: ToolCall, index: int, k: int) -> str:
    return call.id or f"chatcmpl-tool-{uuid.uuid5(uuid.NAMESPACE_URL, f'vllm:{index}:{k}').hex}"


def _vllm_completion_id(record: RecordedRequest) -> str:
    return f"chatcmpl-{uuid.uuid5(uuid.NAMESPACE_URL, f'vllm:{record.index}').hex}"


class VLLMWire(ChatDialect):
    """vLLM's `vllm serve`: chosen with `dialect="vllm"` only.

    Its default address, `localhost:8000`, is every local development server's too (a proxy, an app
    of your own): a stub without `dialect=` keeps answering there as OpenAI does.
    """

    name = "vllm"
    label = "vLLM's OpenAI-compatible Chat Completions (POST /v1/chat/completions)"
    quirks = (VLLM_REASONING, VLLM_CALL_IDS)

    def shaped(self, active: frozenset[str]) -> ChatShape:
        """`reasoning`, and its tool-call ids."""
        return ChatShape(reasoning_key="reasoning", call_id=_vllm_call_id, completion_id=_vllm_completion_id)


class SGLangWire(ChatDialect):
    """SGLang's `sglang.launch_server` (default address `localhost:30000`).

    No difference from OpenAI's answers is verified yet: it answers as the default chat wire does,
    at its own address, under its own provider id.
    """

    name = "sglang"
    label = "SGLang's OpenAI-compatible Chat Completions (POST /v1/chat/completions)"
    addresses = ("localhost:30000", "127.0.0.1:30000")


class LMStudioWire(ChatDialect):
    """LM Studio's local server (default address `localhost:1234`).

    No difference from OpenAI's answers is verified yet: it answers as the default chat wire does.
    """

    name = "lmstudio"
    label = "LM Studio's OpenAI-compatible Chat Completions (POST /v1/chat/completions)"
    addresses = ("localhost:1234", "127.0.0.1:1234")
