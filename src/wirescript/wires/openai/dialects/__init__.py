"""Host dialects of Chat Completions: the OpenAI-compatible servers' documented differences, as wires.

- `base`: `ChatDialect` (the seam an outside dialect subclasses) and `Quirk`;
- `ollama`, `local` (vLLM, SGLang, LM Studio), `mistral`, `deepseek`, `openrouter`, `hosted` (Groq,
  Together AI, xAI, Gemini's OpenAI layer, Azure's content filter): one wire per host.
"""

from __future__ import annotations

from .base import ChatDialect, Quirk
from .deepseek import DeepSeekWire
from .hosted import AzureWire, GeminiOpenAIWire, GroqWire, TogetherWire, XAIWire
from .local import LMStudioWire, SGLangWire, VLLMWire
from .mistral import MistralWire
from .ollama import OllamaChatWire
from .openrouter import OpenRouterWire

__all__ = [
    "AzureWire",
    "ChatDialect",
    "DeepSeekWire",
    "GeminiOpenAIWire",
    "GroqWire",
    "LMStudioWire",
    "MistralWire",
    "OllamaChatWire",
    "OpenRouterWire",
    "Quirk",
    "SGLangWire",
    "TogetherWire",
    "VLLMWire",
    "XAIWire",
]
