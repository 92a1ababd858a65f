"""What the side endpoints share: the dialect a provider declares for them, and their deterministic answers.

The side wires (`wirescript.wires.side`: token counts, embeddings, model listings) are provider-neutral:
each provider's package declares a `SideDialect` (which of the side paths are its, how their bodies
read, the shape of their answers), and the wires serve the dialects they are given. The answers
without a side script are computed here, the same for every provider:

- **Token counts**: about four characters a token of the request's JSON without its `model`
  (keys sorted, so the same request always counts the same; more text counts more), at least 1.
- **Embeddings**: a unit vector per input text, from SHA-256 of the text: the same text always
  gets the same vector, different texts different ones. Float32 values, so the float and base64
  encodings carry the same vector.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from .._text import text_of
from ..recorded import RecordedRequest
from ._decode import as_list
from .base import Parsed

__all__ = ["SideDialect", "VectorOf", "body_count", "count_tokens", "data_ids", "embedding"]

VectorOf = Callable[[str, Any, str], list[float]]
"""`vector(text, dimensions asked (any JSON), model)`: the vector a side wire answers for `text`."""


class SideDialect:
    """One provider's side endpoints: which paths are its, how their bodies read, and the shape of their answers.

    Each part has a default that claims nothing, so a provider declares only the endpoints its API
    has. `endpoints` are the coverage table's rows, as `Wire.endpoints`.
    """

    name: ClassVar[str] = ""
    """The provider (`anthropic`, …)."""
    count_endpoints: ClassVar[tuple[str, ...]] = ()
    embedding_endpoints: ClassVar[tuple[str, ...]] = ()
    model_endpoints: ClassVar[tuple[str, ...]] = ()
    default_model: ClassVar[str | None] = None
    """The model its listing ends with, so a listing is never empty; None: it has no listing."""
    dimensions: ClassVar[Mapping[str, int]] = {}
    """The documented default embedding size of its models."""
    fallback_dimensions: ClassVar[int] = 1536
    """The size for a model no dialect documents: its current default model's."""

    # ------------------------------------------------------------------ token counts

    def counts(self, path: str) -> bool:
        """Whether `path` is its token-count endpoint."""
        return False

    def count_parse(self, body: Any, path: str) -> Parsed:
        """The model and messages of a count request."""
        return body_count(body)

    def count_answer(self, count: int) -> dict[str, Any]:
        """Its count endpoint's answer."""
        return {"input_tokens": count}

    def count_of(self, data: dict[str, Any]) -> Any:
        """The count a real answer of its count endpoint reports (record mode)."""
        return data.get("input_tokens")

    # ------------------------------------------------------------------ embeddings

    def embeds(self, path: str) -> bool:
        """Whether `path` is one of its embeddings endpoints."""
        return False

    def embedding_parse(self, body: Any, path: str) -> Parsed:
        """The model and the input texts (as `messages`) of an embeddings request."""
        return Parsed()

    def embedding_answer(self, record: RecordedRequest, vector: VectorOf) -> dict[str, Any]:
        """Its embeddings answer to `record`, one vector (from `vector`) per input text."""
        raise NotImplementedError(f"the {self.name} dialect has no embeddings")

    def embeddings_of(self, record: RecordedRequest, data: dict[str, Any]) -> list[Any]:
        """The vectors a real embeddings answer carries, in the order of the request's texts (record mode)."""
        return []

    # ------------------------------------------------------------------ model listings

    def lists_for(self, record: RecordedRequest) -> bool:
        """Whether a `GET …/models` request is its SDK's (the path is shared): by its headers and path."""
        return False

    def listing(self, ids: list[str]) -> Any:
        """Its listing of `ids`."""
        raise NotImplementedError(f"the {self.name} dialect has no model listing")

    def model(self, model: str) -> Any:
        """Its answer to a look-up of `model`."""
        raise NotImplementedError(f"the {self.name} dialect has no model listing")

    def listed(self, data: dict[str, Any]) -> list[str] | None:
        """The model ids of a real listing in its shape (record mode), or None: not its shape."""
        return None


def body_count(body: Any) -> Parsed:
    """A count request that carries its model in the body: its `messages` (or `input`) and `system`."""
    model = body.get("model")
    messages = as_list(body.get("messages")) or as_list(body.get("input"))
    if isinstance(body.get("input"), str):
        messages = [{"role": "user", "content": body["input"]}]
    model = model if isinstance(model, str) else None
    return Parsed(model=model, system=text_of(body.get("system"), sep="\n"), messages=messages)


def data_ids(data: dict[str, Any]) -> list[str] | None:
    """The `data[].id` of a listing in the shape Anthropic and OpenAI share, or None: not that shape."""
    items = data.get("data")
    if not isinstance(items, list):
        return None
    return [m["id"] for m in items if isinstance(m, dict) and isinstance(m.get("id"), str)]


def count_tokens(body: Any) -> int:
    """The deterministic token count of a request body: a token per four characters of its JSON, at least 1.

    The JSON has its keys sorted and leaves out the top-level `model` and `anthropic_version`.
    """
    fields = body.items() if isinstance(body, dict) else ()
    payload = {k: v for k, v in fields if k not in ("model", "anthropic_version")}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return max(1, math.ceil(len(text) / 4))


def embedding(text: str, dimensions: int) -> list[float]:
    """The deterministic unit vector of `text`: float32 values from SHA-256 of the text, normalised."""
    values: list[float] = []
    counter = 0
    while len(values) < dimensions:
        digest = hashlib.sha256(f"{counter}\0{text}".encode("utf-8", "surrogatepass")).digest()
        values.extend(int.from_bytes(digest[i : i + 4], "little") / 2**31 - 1.0 for i in range(0, 32, 4))
        counter += 1
    values = values[:dimensions]
    norm = math.sqrt(sum(x * x for x in values)) or 1.0
    return _float32([x / norm for x in values])


def _float32(values: list[float]) -> list[float]:
    return list(struct.unpack(f"<{len(values)}f", struct.pack(f"<{len(values)}f", *values)))
