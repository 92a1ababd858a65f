"""Google Gemini: the Developer API and Vertex AI's `generateContent`, its strict rules and errors.

- `wire`: `GeminiWire`, as google-genai (and frameworks on it) calls it;
- `rules`: its strict rules (`check_gemini`);
- `errors`: its error catalog (`gemini_errors`);
- `side`: its side endpoints (`countTokens`, embeddings, model listings);
- `caching`: its context caching rules (implicit, and explicit caches); `caches`: the `cachedContents` endpoints.
"""

from __future__ import annotations

from .caches import GeminiCachesWire
from .wire import GEMINI_ERROR_STATUSES, GEMINI_FINISH_REASONS, GeminiWire

__all__ = ["GEMINI_ERROR_STATUSES", "GEMINI_FINISH_REASONS", "GeminiCachesWire", "GeminiWire"]
