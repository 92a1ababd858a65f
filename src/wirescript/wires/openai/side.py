"""OpenAI's side endpoints: embeddings (Azure OpenAI deployments too), model listings, Responses token counts."""

from __future__ import annotations

import base64
import json
import math
import struct
from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import unquote

from ...recorded import RecordedRequest
from .._decode import as_int, as_list
from .._side import SideDialect, VectorOf, data_ids
from ..base import Parsed

__all__ = ["OPENAI_SIDE", "OpenAISide"]

_CREATED = 1735689600  # 2025-01-01T00:00:00Z: a fixed creation time, so listings are deterministic


class OpenAISide(SideDialect):
    """`POST /v1/responses/input_tokens`, `POST /v1/embeddings`, `GET /v1/models`."""

    name = "openai"
    count_endpoints = ("POST /v1/responses/input_tokens",)
    embedding_endpoints = ("POST /v1/embeddings", "POST /openai/deployments/{deployment}/embeddings")
    model_endpoints = ("GET /v1/models", "GET /v1/models/{model}")
    default_model = "gpt-4o-mini"
    dimensions: ClassVar[Mapping[str, int]] = {
        # platform.openai.com/docs/guides/embeddings: "By default, the length of the embedding vector is
        # 1536 for text-embedding-3-small or 3072 for text-embedding-3-large"; ada-002 is 1536.
        "text-embedding-3-small": 1536,
        "text-embedding-3-large": 3072,
        "text-embedding-ada-002": 1536,
    }
    fallback_dimensions = 1536

    def counts(self, path: str) -> bool:
        """`…/responses/input_tokens`."""
        return path.endswith("/responses/input_tokens")

    def count_answer(self, count: int) -> dict[str, Any]:
        """`{"object": "response.input_tokens", "input_tokens": n}`."""
        return {"object": "response.input_tokens", "input_tokens": count}

    def embeds(self, path: str) -> bool:
        """`…/embeddings` (any prefix: Azure's `/openai/deployments/{name}/embeddings` too)."""
        return path.endswith("/embeddings")

    def embedding_parse(self, body: Any, path: str) -> Parsed:
        """The model (an Azure deployment's from the path) and the `input` texts."""
        model = body.get("model")
        if "/openai/deployments/" in path:
            model = unquote(path.split("/openai/deployments/", 1)[1].split("/", 1)[0])
        return Parsed(model=model if isinstance(model, str) else None, messages=_inputs(body.get("input")))

    def embedding_answer(self, record: RecordedRequest, vector: VectorOf) -> dict[str, Any]:
        """A list of `embedding` objects, floats or base64 float32 (`encoding_format`), and the usage."""
        body = record.body if isinstance(record.body, dict) else {}
        texts = [str(t) for t in record.messages]
        model = record.model or ""
        encoded = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            values = vector(text, body.get("dimensions"), model)
            value: Any = base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode() if encoded else values
            data.append({"object": "embedding", "index": index, "embedding": value})
        tokens = sum(max(1, math.ceil(len(t) / 4)) for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def embeddings_of(self, record: RecordedRequest, data: dict[str, Any]) -> list[Any]:
        """`data[i].embedding`: a list of floats, or base64 float32 as the openai SDK asks by default."""
        items = sorted(
            (item for item in as_list(data.get("data")) if isinstance(item, dict)),
            key=lambda item: as_int(item.get("index")) or 0,
        )
        return [_vector_of(item.get("embedding")) for item in items]

    def lists_for(self, record: RecordedRequest) -> bool:
        """Every listing the other providers' SDKs do not claim: the OpenAI shape is what compatible servers speak."""
        return True

    def listing(self, ids: list[str]) -> Any:
        """`{"object": "list", "data": [...]}`."""
        return {"object": "list", "data": [self.model(i) for i in ids]}

    def model(self, model: str) -> Any:
        """A `Model` object."""
        return {"id": model, "object": "model", "created": _CREATED, "owned_by": "wirescript"}

    def listed(self, data: dict[str, Any]) -> list[str] | None:
        """The `data[].id` of a listing."""
        return data_ids(data)


def _inputs(value: Any) -> list[str]:
    """`input`: a string, a list of strings, or token arrays (each kept as its JSON)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        if value and all(isinstance(v, int) for v in value):
            return [json.dumps(value)]
        return [v if isinstance(v, str) else json.dumps(v) for v in value]
    return []


def _vector_of(value: Any) -> Any:
    """An `embedding`: a list of floats, or base64 of little-endian float32."""
    if not isinstance(value, str):
        return value
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:
        return None
    if not raw or len(raw) % 4:
        return None
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


OPENAI_SIDE = OpenAISide()
