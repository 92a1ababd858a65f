"""Side endpoints: token counting, embeddings and model listings, for Anthropic, OpenAI and Gemini.

They never consume a generation turn (`turnless` wires). Without a side script they answer
deterministically from the request; `SideScript` overrides what it names.

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

import base64
import hashlib
import json
import math
import struct
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from .._text import text_of
from ..recorded import RecordedRequest
from ..side import SideScript
from ._decode import as_int, as_list, json_body
from ._render import json_answer
from .base import Parsed, Rendered, TurnlessWire

__all__ = [
    "DEFAULT_DIMENSIONS",
    "DEFAULT_MODELS",
    "EmbeddingsWire",
    "ModelsWire",
    "TokenCountWire",
    "count_tokens",
    "embedding",
]

DEFAULT_DIMENSIONS: dict[str, int] = {
    # platform.openai.com/docs/guides/embeddings: "By default, the length of the embedding vector is
    # 1536 for text-embedding-3-small or 3072 for text-embedding-3-large"; ada-002 is 1536.
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    # ai.google.dev/gemini-api/docs/embeddings: gemini-embedding-001 outputs 3072 dimensions by
    # default; text-embedding-004 and embedding-001 output 768 (ai.google.dev/gemini-api/docs/models).
    "gemini-embedding-001": 3072,
    "text-embedding-004": 768,
    "embedding-001": 768,
}
"""The documented default embedding size per model; any other model gets `FALLBACK_DIMENSIONS`."""

MAX_DIMENSIONS = 16384
"""The largest vector a request may ask for; beyond it (or below 1) the request is `unreadable`."""

FALLBACK_DIMENSIONS = {"openai": 1536, "gemini": 3072}
"""The size for a model `DEFAULT_DIMENSIONS` does not know: the provider's current default model's."""

DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4o-mini", "gemini": "gemini-2.5-flash"}
"""The model each provider's listing ends with, so a listing is never empty."""

_JSON = {"content-type": "application/json"}
_CREATED = 1735689600  # 2025-01-01T00:00:00Z: a fixed creation time, so listings are deterministic
_CREATED_AT = "2025-01-01T00:00:00Z"


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


def _family(record: RecordedRequest) -> str:
    """Which provider's shape a shared path (`/v1/models`) answers in, from the request's headers and path."""
    if "anthropic-version" in record.headers or "/publishers/anthropic/" in record.path:
        return "anthropic"
    google = ("x-goog-api-key", "x-goog-api-client")
    if any(name in record.headers for name in google) or "key" in record.query or "/v1beta/" in record.path:
        return "gemini"
    return "openai"


class TokenCountWire(TurnlessWire):
    """Token counting: Anthropic (and Anthropic on Vertex), OpenAI Responses and Gemini."""

    name = "count_tokens"
    endpoint = "POST …/v1/messages/count_tokens"
    endpoints = (
        "POST /v1/messages/count_tokens",
        "POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/count-tokens:rawPredict",
        "POST /v1/responses/input_tokens",
        "POST /v1beta/models/{model}:countTokens",
    )

    def __init__(self) -> None:
        self._served = 0
        self._lock = threading.Lock()

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """The count endpoints above, under any prefix."""
        if method != "POST":
            return False
        if path.endswith(("/v1/messages/count_tokens", "/responses/input_tokens", ":countTokens")):
            return True
        return path.endswith("/publishers/anthropic/models/count-tokens:rawPredict")

    def parse(self, body: Any, path: str) -> Parsed:
        """The model (Gemini's from the path) and the messages counted."""
        if path.endswith(":countTokens"):
            return Parsed(model=_gemini_model(path), messages=as_list(body.get("contents")))
        model = body.get("model")
        messages = as_list(body.get("messages")) or as_list(body.get("input"))
        if isinstance(body.get("input"), str):
            messages = [{"role": "user", "content": body["input"]}]
        model = model if isinstance(model, str) else None
        return Parsed(model=model, system=text_of(body.get("system"), sep="\n"), messages=messages)

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
        if record.path.endswith(":countTokens"):
            return Rendered(200, dict(_JSON), json_answer({"totalTokens": count}))
        if record.path.endswith("/input_tokens"):
            return Rendered(200, dict(_JSON), json_answer({"object": "response.input_tokens", "input_tokens": count}))
        return Rendered(200, dict(_JSON), json_answer({"input_tokens": count}))

    def decode_side(
        self, record: RecordedRequest, status: int, headers: Mapping[str, str], body: bytes
    ) -> dict[str, Any] | None:
        """`{"count_tokens": [n]}` from `input_tokens` (Anthropic, OpenAI) or `totalTokens` (Gemini)."""
        data = json_body(body) if status < 400 else None
        if not isinstance(data, dict):
            return None
        count = data.get("totalTokens") if record.path.endswith(":countTokens") else data.get("input_tokens")
        count = as_int(count)
        return {"count_tokens": [count]} if count is not None and count >= 0 else None


class EmbeddingsWire(TurnlessWire):
    """Embeddings: OpenAI (and Azure OpenAI deployments), float and base64; Gemini, single and batched."""

    name = "embeddings"
    endpoint = "POST …/v1/embeddings"
    endpoints = (
        "POST /v1/embeddings",
        "POST /openai/deployments/{deployment}/embeddings",
        "POST /v1beta/models/{model}:embedContent",
        "POST /v1beta/models/{model}:batchEmbedContents",
    )

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """The embeddings endpoints above, under any prefix."""
        return method == "POST" and path.endswith(("/embeddings", ":embedContent", ":batchEmbedContents"))

    def parse(self, body: Any, path: str) -> Parsed:
        """The model (an Azure deployment or Gemini's from the path) and the input texts, as `messages`."""
        if path.endswith(":embedContent"):
            return Parsed(model=_gemini_model(path), messages=[_content_text(body.get("content"))])
        if path.endswith(":batchEmbedContents"):
            requests = [r for r in as_list(body.get("requests")) if isinstance(r, dict)]
            return Parsed(model=_gemini_model(path), messages=[_content_text(r.get("content")) for r in requests])
        model = body.get("model")
        if "/openai/deployments/" in path:
            model = unquote(path.split("/openai/deployments/", 1)[1].split("/", 1)[0])
        return Parsed(model=model if isinstance(model, str) else None, messages=_openai_inputs(body.get("input")))

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """The vectors, one per input, in the provider's shape."""
        body = record.body if isinstance(record.body, dict) else {}
        texts = [str(t) for t in record.messages]
        model = record.model or ""
        if record.path.endswith(":embedContent"):
            size = _size(body.get("outputDimensionality"), model, "gemini")
            vector = self._vector(texts[0], size, side)
            return Rendered(200, dict(_JSON), json_answer({"embedding": {"values": vector}}))
        if record.path.endswith(":batchEmbedContents"):
            requests = [r for r in as_list(body.get("requests")) if isinstance(r, dict)]
            vectors = []
            for text, request in zip(texts, requests, strict=True):
                own = request.get("model")
                size = _size(
                    request.get("outputDimensionality"), _gemini_model(own) if isinstance(own, str) else model, "gemini"
                )
                vectors.append({"values": self._vector(text, size, side)})
            return Rendered(200, dict(_JSON), json_answer({"embeddings": vectors}))
        size = _size(body.get("dimensions"), model, "openai")
        encoded = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = self._vector(text, size, side)
            value: Any = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode() if encoded else vector
            data.append({"object": "embedding", "index": index, "embedding": value})
        tokens = sum(max(1, math.ceil(len(t) / 4)) for t in texts)
        answer = {
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        return Rendered(200, dict(_JSON), json_answer(answer))

    def decode_side(
        self, record: RecordedRequest, status: int, headers: Mapping[str, str], body: bytes
    ) -> dict[str, Any] | None:
        """`{"embeddings": {text: vector}}`: each input text of the request with the vector it got.

        OpenAI's `data[i].embedding` (a list of floats, or base64 float32 as the openai SDK asks by
        default), Gemini's `embedding.values` and `embeddings[i].values`.
        """
        data = json_body(body) if status < 400 else None
        if not isinstance(data, dict):
            return None
        texts = [str(t) for t in record.messages]
        if record.path.endswith(":embedContent"):
            embedded = data.get("embedding")
            vectors = [embedded.get("values") if isinstance(embedded, dict) else None]
        elif record.path.endswith(":batchEmbedContents"):
            vectors = [e.get("values") if isinstance(e, dict) else None for e in as_list(data.get("embeddings"))]
        else:
            items = sorted(
                (item for item in as_list(data.get("data")) if isinstance(item, dict)),
                key=lambda item: as_int(item.get("index")) or 0,
            )
            vectors = [_vector_of(item.get("embedding")) for item in items]
        if len(vectors) != len(texts) or not all(_is_vector(v) for v in vectors):
            return None
        found: dict[str, list[float]] = {}
        for text, vector in zip(texts, vectors, strict=True):
            found[text] = [float(x) for x in vector or ()]
        return {"embeddings": found}

    @staticmethod
    def _vector(text: str, size: int, side: SideScript) -> list[float]:
        if not 1 <= size <= MAX_DIMENSIONS:
            raise ValueError(f"the request asks for {size} dimensions; wirescript serves 1 to {MAX_DIMENSIONS}")
        scripted = side.embeddings.get(text)
        return list(scripted) if scripted is not None else embedding(text, size)


class ModelsWire(TurnlessWire):
    """Model listings and look-ups: Anthropic and OpenAI (`/v1/models`), Gemini (`/v1beta/models`)."""

    name = "models"
    endpoint = "GET …/v1/models"
    endpoints = (
        "GET /v1/models",
        "GET /v1/models/{model}",
        "GET /v1beta/models",
        "GET /v1beta/models/{model}",
    )

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
        family = _family(record)
        wanted = record.model
        ids = [wanted] if wanted is not None else list(dict.fromkeys([*side.models, DEFAULT_MODELS[family]]))
        if family == "anthropic":
            objects: list[dict[str, Any]] = [
                {"type": "model", "id": i, "display_name": i, "created_at": _CREATED_AT} for i in ids
            ]
            if wanted is not None:
                return Rendered(200, dict(_JSON), json_answer(objects[0]))
            page = {"data": objects, "has_more": False, "first_id": ids[0], "last_id": ids[-1]}
            return Rendered(200, dict(_JSON), json_answer(page))
        if family == "gemini":
            objects = [_gemini_model_object(i) for i in ids]
            answer: Any = objects[0] if wanted is not None else {"models": objects}
            return Rendered(200, dict(_JSON), json_answer(answer))
        objects = [{"id": i, "object": "model", "created": _CREATED, "owned_by": "wirescript"} for i in ids]
        answer = objects[0] if wanted is not None else {"object": "list", "data": objects}
        return Rendered(200, dict(_JSON), json_answer(answer))

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
        if "models" in data:
            names = [m.get("name") for m in as_list(data.get("models")) if isinstance(m, dict)]
            ids = [n.removeprefix("models/") for n in names if isinstance(n, str)]
        else:
            ids = [m["id"] for m in as_list(data.get("data")) if isinstance(m, dict) and isinstance(m.get("id"), str)]
        return {"models": ids}


def _vector_of(value: Any) -> Any:
    """An OpenAI `embedding`: a list of floats, or base64 of little-endian float32."""
    if not isinstance(value, str):
        return value
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:
        return None
    if not raw or len(raw) % 4:
        return None
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def _is_vector(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in value)
    )


def _gemini_model_object(model: str) -> dict[str, Any]:
    methods = ["embedContent"] if "embedding" in model else ["generateContent", "countTokens"]
    return {
        "name": f"models/{model}",
        "version": "001",
        "displayName": model,
        "inputTokenLimit": 1048576,
        "outputTokenLimit": 65536,
        "supportedGenerationMethods": methods,
    }


def _model_id(path: str) -> str | None:
    tail = path.rstrip("/").rpartition("/models")[2]
    return unquote(tail[1:]) if tail.startswith("/") else None


def _gemini_model(path: str) -> str:
    """`gemini-embedding-001` from `/v1beta/models/gemini-embedding-001:embedContent` or `models/x`."""
    name = path.rpartition("/models/")[2] if "/models/" in path else path.removeprefix("models/")
    return unquote(name.split(":", 1)[0])


def _size(asked: Any, model: str, family: str) -> int:
    """The dimensions asked for (an int), else the model's documented default."""
    size = as_int(asked)
    return (
        size if size is not None else DEFAULT_DIMENSIONS.get(model.removeprefix("models/"), FALLBACK_DIMENSIONS[family])
    )


def _content_text(content: Any) -> str:
    """The text of a Gemini `Content` (its parts' texts joined)."""
    if isinstance(content, dict):
        return text_of(content.get("parts")) or ""
    return text_of(content) or ""


def _openai_inputs(value: Any) -> list[str]:
    """OpenAI's `input`: a string, a list of strings, or token arrays (each kept as its JSON)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        if value and all(isinstance(v, int) for v in value):
            return [json.dumps(value)]
        return [v if isinstance(v, str) else json.dumps(v) for v in value]
    return []
