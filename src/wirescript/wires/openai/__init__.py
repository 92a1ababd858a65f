"""OpenAI: Chat Completions and Responses (Azure OpenAI's deployments too), their strict rules and errors.

- `chat`: `OpenAIChatWire`; `responses`: `OpenAIResponsesWire` (stored responses, chains);
- `common`: what the two wires share (error envelope, ids, token counts, tool arguments);
- `rules`: their strict rules (`check_openai_chat`, `check_openai_responses`);
- `errors`: the error catalog (`openai_errors`);
- `side`: the side endpoints (embeddings, model listings, Responses input token counts);
- `dialects`: the OpenAI-compatible hosts' Chat Completions (`ChatDialect`, one wire per host).
"""

from __future__ import annotations

from .chat import FINISH_REASONS, ChatShape, OpenAIChatWire
from .responses import INCOMPLETE_REASONS, OpenAIResponsesWire

__all__ = ["FINISH_REASONS", "INCOMPLETE_REASONS", "ChatShape", "OpenAIChatWire", "OpenAIResponsesWire"]
