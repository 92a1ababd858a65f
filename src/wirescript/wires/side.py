"""Side endpoints: token counting, embeddings and model listings, for every provider that has them.

They never consume a generation turn (`turnless` wires). Each wire here is provider-neutral: it
serves the side endpoints of the providers' dialects it is given (`SideDialect`, declared in each
provider's package: `wires/anthropic/side.py`, `wires/openai/side.py`, `wires/gemini/side.py`).
Without a side script they answer deterministically from the request; `SideScript` overrides what
it names.

- **Token counts**: about four characters a token of the request's JSON without its `model`
  (keys sorted, so the same request always counts the same; more text counts more), at least 1.
- **Embeddings**: a unit vector per input text, from SHA-256 of the text: the same text always
  gets the same vector, different texts different ones. Its length is the `dimensions`
  (`outputDimensionality`) asked for, else the model's documented default size
  (`DEFAULT_DIMENSIONS`). Float32 values, so the float and base64 encodings carry the same vector.
- **Models**: a listing of the side script's models (the models the script's queues name, then
  `SideScript.models`), then the provider's `DEFAULT_MODELS` entry; any id can be retrieved.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from ..recorded import RecordedRequest
from ..side import SideScript
from ._decode import as_int, json_body
from ._render import json_answer
from ._side import SideDialect, count_tokens, embedding
from .anthropic.side import ANTHROPIC_SIDE
from .base import Parsed, Rendered, TurnlessWire
from .gemini.side import GEMINI_SIDE
from .openai.side import OPENAI_SIDE

__all__ = [
    "DEFAULT_DIMENSIONS",
    "DEFAULT_MODELS",
    "DIALECTS",
    "EmbeddingsWire",
    "ModelsWire",
    "SideDialect",
    "TokenCountWire",
    "count_tokens",
    "embedding",
]

DIALECTS: tuple[SideDialect, ...] = (ANTHROPIC_SIDE, GEMINI_SIDE, OPENAI_SIDE)
"""The built-in providers' side endpoints. A model listing is answered by the first whose SDK the request
reads as; OpenAI's, last, answers the rest (OpenAI-compatible servers speak its shape)."""

DEFAULT_DIMENSIONS: dict[str, int] = {model: size for d in DIALECTS for model, size in d.dimensions.items()}
"""The documented default embedding size per model; any other model gets its provider's `fallback_dimensions`."""

MAX_DIMENSIONS = 16384
"""The largest vector a request may ask for; beyond it (or below 1) the request is `unreadable`."""

DEFAULT_MODELS = {d.name: d.default_model for d in DIALECTS if d.default_model is not None}
"""The model each provider's listing ends with, so a listing is never empty."""

_LISTERS = tuple(d for d in DIALECTS if d.default_model is not None)
_JSON = {"content-type": "application/json"}


def _endpoints(dialects: Sequence[SideDialect], kind: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(e for d in dialects for e in getattr(d, f"{kind}_endpoints")))


class TokenCountWire(TurnlessWire):
    """Token counting: Anthropic (and Anthropic on Vertex), OpenAI Responses and Gemini (its `dialects`)."""

    name = "count_tokens"
    endpoint = "POST …/v1/messages/count_tokens"
    endpoints = _endpoints(DIALECTS, "count")

    def __init__(self, dialects: Sequence[SideDialect] = DIALECTS) -> None:
        self.dialects = dialects if isinstance(dialects, tuple) else tuple(dialects)
        self._served = 0
        self._lock = threading.Lock()

    def _dialect(self, path: str) -> SideDialect | None:
        return next((d for d in self.dialects if d.counts(path)), None)

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """A dialect's count endpoint, under any prefix."""
        return method == "POST" and self._dialect(path) is not None

    def parse(self, body: Any, path: str) -> Parsed:
        """The model (Gemini's from the path) and the messages counted."""
        dialect = self._dialect(path)
        assert dialect is not None  # matches() said so
        return dialect.count_parse(body, path)

    def unused(self, side: SideScript) -> list[str]:
        """The scripted counts of a `count_tokens` list that no count request has taken."""
        if not isinstance(side.count_tokens, list):
            return []
        with self._lock:
            served = self._served
        return [f"side['count_tokens'][{i}]: {n}" for i, n in enumerate(side.count_tokens) if i >= served]

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """`{"input_tokens": n}`, `{"object": "response.input_tokens", …}` or `{"totalTokens": n}`."""
        scripted = side.count_tokens
        if isinstance(scripted, list):
            with self._lock:
                position, self._served = self._served, self._served + 1
            if position >= len(scripted):
                raise LookupError(
                    f"is past the end of the side script's count_tokens: it has {len(scripted)} count(s), all served"
                )
            count = scripted[position]
        else:
            count = scripted if scripted is not None else count_tokens(record.body)
        dialect = self._dialect(record.path)
        assert dialect is not None  # matched when the request arrived
        return Rendered(200, dict(_JSON), json_answer(dialect.count_answer(count)))

    def decode_side(
        self, record: RecordedRequest, status: int, headers: Mapping[str, str], body: bytes
    ) -> dict[str, Any] | None:
        """`{"count_tokens": [n]}` from `input_tokens` (Anthropic, OpenAI) or `totalTokens` (Gemini)."""
        data = json_body(body) if status < 400 else None
        dialect = self._dialect(record.path)
        if not isinstance(data, dict) or dialect is None:
            return None
        count = as_int(dialect.count_of(data))
        return {"count_tokens": [count]} if count is not None and count >= 0 else None


class EmbeddingsWire(TurnlessWire):
    """Embeddings: OpenAI (and Azure OpenAI deployments), float and base64; Gemini, single and batched."""

    name = "embeddings"
    endpoint = "POST …/v1/embeddings"
    endpoints = _endpoints(DIALECTS, "embedding")

    def __init__(self, dialects: Sequence[SideDialect] = DIALECTS) -> None:
        self.dialects = dialects if isinstance(dialects, tuple) else tuple(dialects)
        self._dimensions = (
            DEFAULT_DIMENSIONS
            if self.dialects is DIALECTS
            else {model: size for d in self.dialects for model, size in d.dimensions.items()}
        )

    def _dialect(self, path: str) -> SideDialect | None:
        return next((d for d in self.dialects if d.embeds(path)), None)

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """A dialect's embeddings endpoint, under any prefix."""
        return method == "POST" and self._dialect(path) is not None

    def parse(self, body: Any, path: str) -> Parsed:
        """The model (an Azure deployment or Gemini's from the path) and the input texts, as `messages`."""
        dialect = self._dialect(path)
        assert dialect is not None  # matches() said so
        return dialect.embedding_parse(body, path)

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """The vectors, one per input, in the provider's shape."""
        dialect = self._dialect(record.path)
        assert dialect is not None  # matched when the request arrived

        def vector(text: str, asked: Any, model: str) -> list[float]:
            size = as_int(asked)
            if size is None:
                size = self._dimensions.get(model.removeprefix("models/"), dialect.fallback_dimensions)
            if not 1 <= size <= MAX_DIMENSIONS:
                raise ValueError(f"the request asks for {size} dimensions; wirescript serves 1 to {MAX_DIMENSIONS}")
            scripted = side.embeddings.get(text)
            return list(scripted) if scripted is not None else embedding(text, size)

        return Rendered(200, dict(_JSON), json_answer(dialect.embedding_answer(record, vector)))

    def decode_side(
        self, record: RecordedRequest, status: int, headers: Mapping[str, str], body: bytes
    ) -> dict[str, Any] | None:
        """`{"embeddings": {text: vector}}`: each input text of the request with the vector it got.

        OpenAI's `data[i].embedding` (a list of floats, or base64 float32 as the openai SDK asks by
        default), Gemini's `embedding.values` and `embeddings[i].values`.
        """
        data = json_body(body) if status < 400 else None
        dialect = self._dialect(record.path)
        if not isinstance(data, dict) or dialect is None:
            return None
        texts = [str(t) for t in record.messages]
        vectors = dialect.embeddings_of(record, data)
        if len(vectors) != len(texts) or not all(_is_vector(v) for v in vectors):
            return None
        found: dict[str, list[float]] = {}
        for text, vector in zip(texts, vectors, strict=True):
            found[text] = [float(x) for x in vector or ()]
        return {"embeddings": found}


class ModelsWire(TurnlessWire):
    """Model listings and look-ups: Anthropic and OpenAI (`/v1/models`), Gemini (`/v1beta/models`).

    The path is shared, so the request's headers and path say whose SDK asks (`SideDialect.lists_for`):
    the first of its `dialects` with a listing that reads the request as its own answers it.
    """

    name = "models"
    endpoint = "GET …/v1/models"
    endpoints = _endpoints(DIALECTS, "model")

    def __init__(self, dialects: Sequence[SideDialect] = DIALECTS) -> None:
        self.dialects = _LISTERS if dialects is DIALECTS else tuple(d for d in dialects if d.default_model is not None)

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """`GET …/models` and `GET …/models/{id}`."""
        if method != "GET":
            return False
        head, _, tail = path.rstrip("/").rpartition("/models")
        return bool(head) and (tail == "" or (tail.startswith("/") and "/" not in tail[1:] and tail != "/"))

    def parse(self, body: Any, path: str) -> Parsed:
        """The model looked up, if any."""
        return Parsed(model=_model_id(path))

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """A listing of the script's models, or the model looked up."""
        dialect = next((d for d in self.dialects if d.lists_for(record)), self.dialects[-1])
        if record.model is not None:
            return Rendered(200, dict(_JSON), json_answer(dialect.model(record.model)))
        assert dialect.default_model is not None  # only dialects with a listing are kept
        ids = list(dict.fromkeys([*side.models, dialect.default_model]))
        return Rendered(200, dict(_JSON), json_answer(dialect.listing(ids)))

    def decode_side(
        self, record: RecordedRequest, status: int, headers: Mapping[str, str], body: bytes
    ) -> dict[str, Any] | None:
        """`{"models": [ids]}` from a listing (`data[].id`, Gemini's `models[].name`); `{}` for a look-up.

        A look-up replays as it is (any id is found); the model's details (its display name,
        limits) are not kept, as the side script has no field for them.
        """
        data = json_body(body) if status < 400 else None
        if not isinstance(data, dict):
            return None
        if record.model is not None:
            return {}
        ids = next((found for d in self.dialects if (found := d.listed(data)) is not None), [])
        return {"models": ids}


def _is_vector(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in value)
    )


def _model_id(path: str) -> str | None:
    tail = path.rstrip("/").rpartition("/models")[2]
    return unquote(tail[1:]) if tail.startswith("/") else None
