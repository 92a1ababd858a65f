"""Gemini's side endpoints: `countTokens`, embeddings (`embedContent`, `batchEmbedContents`), model listings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import unquote

from ..._text import text_of
from ...recorded import RecordedRequest
from .._decode import as_list
from .._side import SideDialect, VectorOf
from ..base import Parsed

__all__ = ["GEMINI_SIDE", "GeminiSide"]

_GOOGLE_HEADERS = ("x-goog-api-key", "x-goog-api-client")


class GeminiSide(SideDialect):
    """`POST …/models/{model}:countTokens`, `:embedContent`, `:batchEmbedContents`, `GET /v1beta/models`."""

    name = "gemini"
    count_endpoints = ("POST /v1beta/models/{model}:countTokens",)
    embedding_endpoints = ("POST /v1beta/models/{model}:embedContent", "POST /v1beta/models/{model}:batchEmbedContents")
    model_endpoints = ("GET /v1beta/models", "GET /v1beta/models/{model}")
    default_model = "gemini-2.5-flash"
    dimensions: ClassVar[Mapping[str, int]] = {
        # ai.google.dev/gemini-api/docs/embeddings: gemini-embedding-001 outputs 3072 dimensions by
        # default; text-embedding-004 and embedding-001 output 768 (ai.google.dev/gemini-api/docs/models).
        "gemini-embedding-001": 3072,
        "text-embedding-004": 768,
        "embedding-001": 768,
    }
    fallback_dimensions = 3072

    def counts(self, path: str) -> bool:
        """`…:countTokens`."""
        return path.endswith(":countTokens")

    def count_parse(self, body: Any, path: str) -> Parsed:
        """The model from the path, the `contents` counted."""
        return Parsed(model=_model(path), messages=as_list(body.get("contents")))

    def count_answer(self, count: int) -> dict[str, Any]:
        """`{"totalTokens": n}`."""
        return {"totalTokens": count}

    def count_of(self, data: dict[str, Any]) -> Any:
        """`totalTokens`."""
        return data.get("totalTokens")

    def embeds(self, path: str) -> bool:
        """`…:embedContent` and `…:batchEmbedContents`."""
        return path.endswith((":embedContent", ":batchEmbedContents"))

    def embedding_parse(self, body: Any, path: str) -> Parsed:
        """The model from the path, and the text of each `content` (one, or one per batched request)."""
        if path.endswith(":embedContent"):
            return Parsed(model=_model(path), messages=[_content_text(body.get("content"))])
        requests = [r for r in as_list(body.get("requests")) if isinstance(r, dict)]
        return Parsed(model=_model(path), messages=[_content_text(r.get("content")) for r in requests])

    def embedding_answer(self, record: RecordedRequest, vector: VectorOf) -> dict[str, Any]:
        """`{"embedding": {"values"}}`, or `{"embeddings": [...]}` for a batch (each request may name its model)."""
        body = record.body if isinstance(record.body, dict) else {}
        texts = [str(t) for t in record.messages]
        model = record.model or ""
        if record.path.endswith(":embedContent"):
            return {"embedding": {"values": vector(texts[0], body.get("outputDimensionality"), model)}}
        requests = [r for r in as_list(body.get("requests")) if isinstance(r, dict)]
        vectors = []
        for text, request in zip(texts, requests, strict=True):
            own = request.get("model")
            size = request.get("outputDimensionality")
            vectors.append({"values": vector(text, size, _model(own) if isinstance(own, str) else model)})
        return {"embeddings": vectors}

    def embeddings_of(self, record: RecordedRequest, data: dict[str, Any]) -> list[Any]:
        """`embedding.values`, or each `embeddings[i].values`."""
        if record.path.endswith(":embedContent"):
            embedded = data.get("embedding")
            return [embedded.get("values") if isinstance(embedded, dict) else None]
        return [e.get("values") if isinstance(e, dict) else None for e in as_list(data.get("embeddings"))]

    def lists_for(self, record: RecordedRequest) -> bool:
        """google-genai sends `x-goog-api-key` (or `?key=`) and `x-goog-api-client`, on `/v1beta/` paths."""
        return (
            any(name in record.headers for name in _GOOGLE_HEADERS)
            or "key" in record.query
            or "/v1beta/" in record.path
        )

    def listing(self, ids: list[str]) -> Any:
        """`{"models": [...]}`."""
        return {"models": [self.model(i) for i in ids]}

    def model(self, model: str) -> Any:
        """A `Model` resource."""
        methods = ["embedContent"] if "embedding" in model else ["generateContent", "countTokens"]
        return {
            "name": f"models/{model}",
            "version": "001",
            "displayName": model,
            "inputTokenLimit": 1048576,
            "outputTokenLimit": 65536,
            "supportedGenerationMethods": methods,
        }

    def listed(self, data: dict[str, Any]) -> list[str] | None:
        """`models[].name`, without its `models/` prefix."""
        if "models" not in data:
            return None
        names = [m.get("name") for m in as_list(data.get("models")) if isinstance(m, dict)]
        return [n.removeprefix("models/") for n in names if isinstance(n, str)]


def _model(path: str) -> str:
    """`gemini-embedding-001` from `/v1beta/models/gemini-embedding-001:embedContent` or `models/x`."""
    name = path.rpartition("/models/")[2] if "/models/" in path else path.removeprefix("models/")
    return unquote(name.split(":", 1)[0])


def _content_text(content: Any) -> str:
    """The text of a `Content` (its parts' texts joined)."""
    if isinstance(content, dict):
        return text_of(content.get("parts")) or ""
    return text_of(content) or ""


GEMINI_SIDE = GeminiSide()
