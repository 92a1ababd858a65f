"""Anthropic's side endpoints: token counting (Messages and Vertex AI's raw predict) and model listings."""

from __future__ import annotations

from typing import Any

from ...recorded import RecordedRequest
from .._side import SideDialect, data_ids

__all__ = ["ANTHROPIC_SIDE", "AnthropicSide"]

_CREATED_AT = "2025-01-01T00:00:00Z"  # a fixed creation time, so listings are deterministic


class AnthropicSide(SideDialect):
    """`POST /v1/messages/count_tokens` (and Vertex AI's `count-tokens:rawPredict`), `GET /v1/models`."""

    name = "anthropic"
    count_endpoints = (
        "POST /v1/messages/count_tokens",
        "POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/count-tokens:rawPredict",
    )
    model_endpoints = ("GET /v1/models", "GET /v1/models/{model}")
    default_model = "claude-sonnet-4-5"

    def counts(self, path: str) -> bool:
        """`…/v1/messages/count_tokens`, and Vertex AI's `…/publishers/anthropic/models/count-tokens:rawPredict`."""
        return path.endswith(("/v1/messages/count_tokens", "/publishers/anthropic/models/count-tokens:rawPredict"))

    def lists_for(self, record: RecordedRequest) -> bool:
        """The anthropic SDK sends `anthropic-version`; Vertex AI's paths name the publisher."""
        return "anthropic-version" in record.headers or "/publishers/anthropic/" in record.path

    def listing(self, ids: list[str]) -> Any:
        """A page of `ModelInfo` objects."""
        return {"data": [self.model(i) for i in ids], "has_more": False, "first_id": ids[0], "last_id": ids[-1]}

    def model(self, model: str) -> Any:
        """A `ModelInfo`."""
        return {"type": "model", "id": model, "display_name": model, "created_at": _CREATED_AT}

    def listed(self, data: dict[str, Any]) -> list[str] | None:
        """The `data[].id` of a page."""
        return data_ids(data)


ANTHROPIC_SIDE = AnthropicSide()
