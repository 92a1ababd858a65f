"""OpenAI's Conversations API and the Agents SDK's tracing ingest: side endpoints that keep or take state.

- **Conversations** (`client.conversations`, openai-agents' `OpenAIConversationsSession`):
  `POST /v1/conversations` creates one (with its first `items`), `GET`, `POST` (metadata) and
  `DELETE /v1/conversations/{id}`, `POST` and `GET /v1/conversations/{id}/items` add and list
  items (`order`, `limit`, `after`, as the API pages them), `GET` and `DELETE …/items/{item_id}`.
  Each stub keeps its own conversations: what was created is listed back, with the ids and
  `status` the API adds (a message's string content becomes `input_text` parts, `output_text`
  for the assistant's), and a Responses request with `conversation=` reads them and adds its input
  and output to them, as the API does. An unknown id is the API's 404.
- **Tracing ingest** (`POST /v1/traces/ingest`, where openai-agents' default exporter sends its
  traces and spans): answered `{}`, the exporter reads only the status; `record.messages` holds the
  exported items (`{"object": "trace" | "trace.span", ...}`).

They answer from the request and the stub's state and consume no turn (`turnless`). Shapes: the
openai SDK's types (`openai.types.conversations`: `Conversation`, `ConversationItemList`,
`ConversationDeletedResource`) and openai-agents' `BackendSpanExporter` (`agents/tracing/processors.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from ...recorded import RecordedRequest
from ...side import SideScript
from .._decode import as_dict, as_list
from .._render import json_answer
from ..base import Parsed, Rendered, TurnlessWire
from .common import CREATED, HOSTS, JSON_HEADERS

__all__ = ["ConversationStore", "OpenAIConversationsWire", "OpenAITracesWire", "conversation_id"]

_PREFIXES = {"message": "msg", "function_call": "fc", "function_call_output": "fco", "reasoning": "rs"}
"""The id prefix of each item type the API gives (`msg_…`, `fc_…`); other types get `item_…`."""


def conversation_id(value: Any) -> str | None:
    """The conversation a Responses request names: `conversation="conv_…"` or `{"id": "conv_…"}`."""
    if isinstance(value, Mapping):
        value = value.get("id")
    return value if isinstance(value, str) and value else None


class ConversationStore:
    """One stub's conversations: their metadata and items, in order (thread-safe).

    Shared by the Conversations wire and the Responses wire (`conversation=`), so a conversation an
    app created is the one its responses read and extend.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conversations: dict[str, dict[str, Any]] = {}
        self._items: dict[str, list[dict[str, Any]]] = {}
        self._made = 0
        self._ids = 0

    def create(self, metadata: Any, items: list[Any]) -> dict[str, Any]:
        """A new conversation holding `items` (normalized); its `Conversation` object."""
        with self._lock:
            conversation_id = f"conv_{self._made:04d}"
            self._made += 1
            conversation = {
                "id": conversation_id,
                "object": "conversation",
                "created_at": CREATED,
                "metadata": metadata if isinstance(metadata, dict) else {},
            }
            self._conversations[conversation_id] = conversation
            self._items[conversation_id] = []
        self.extend(conversation_id, items)
        return dict(conversation)

    def get(self, conversation_id: str) -> dict[str, Any] | None:
        """The `Conversation` object, or None when there is none by that id."""
        with self._lock:
            conversation = self._conversations.get(conversation_id)
            return dict(conversation) if conversation is not None else None

    def update(self, conversation_id: str, metadata: Any) -> dict[str, Any] | None:
        """Replace its metadata; the `Conversation` object, or None."""
        with self._lock:
            conversation = self._conversations.get(conversation_id)
            if conversation is None:
                return None
            conversation["metadata"] = metadata if isinstance(metadata, dict) else {}
            return dict(conversation)

    def delete(self, conversation_id: str) -> bool:
        """Delete it; whether it was there."""
        with self._lock:
            self._items.pop(conversation_id, None)
            return self._conversations.pop(conversation_id, None) is not None

    def items(self, conversation_id: str) -> list[dict[str, Any]] | None:
        """Its items, oldest first, or None when there is no such conversation."""
        with self._lock:
            items = self._items.get(conversation_id)
            return list(items) if items is not None else None

    def extend(self, conversation_id: str, items: list[Any]) -> list[dict[str, Any]] | None:
        """Add `items` (normalized: ids and `status` as the API gives them); the items added, or None."""
        with self._lock:
            stored = self._items.get(conversation_id)
            if stored is None:
                return None
            added = []
            for item in items:
                self._ids += 1
                added.append(_normalized(item, self._ids))
            stored.extend(added)
            return added

    def remove(self, conversation_id: str, item_id: str) -> bool:
        """Remove one item; whether it was there."""
        with self._lock:
            stored = self._items.get(conversation_id) or []
            for index, item in enumerate(stored):
                if item.get("id") == item_id:
                    del stored[index]
                    return True
            return False


def _normalized(given: Any, number: int) -> dict[str, Any]:
    """An input item as the API stores it: `type`, `id` and `status` filled in, a message's string content as parts."""
    item: dict[str, Any] = dict(given) if isinstance(given, Mapping) else {"role": "user", "content": str(given)}
    kind = item.setdefault("type", "message")
    if kind == "message" and isinstance(item.get("content"), str):
        part = "output_text" if item.get("role") == "assistant" else "input_text"
        text = {"type": part, "text": item["content"], **({"annotations": []} if part == "output_text" else {})}
        item["content"] = [text]
    if not isinstance(item.get("id"), str):
        item["id"] = f"{_PREFIXES.get(str(kind), 'item')}_c{number:04d}"
    item.setdefault("status", "completed")
    return item


def _not_found(what: str, found_id: str) -> Rendered:
    message = f"{what} with id '{found_id}' not found."
    body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
    return Rendered(404, dict(JSON_HEADERS), json_answer(body))


def _ok(value: Any) -> Rendered:
    return Rendered(200, dict(JSON_HEADERS), json_answer(value))


def _page(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": items,
        "first_id": items[0]["id"] if items else None,
        "last_id": items[-1]["id"] if items else None,
        "has_more": False,
    }


class OpenAIConversationsWire(TurnlessWire):
    """`…/conversations` and `…/conversations/{id}/items`: the stub's conversations (`ConversationStore`)."""

    name = "openai_conversations"
    endpoint = "POST …/v1/conversations"
    endpoints = (
        "POST /v1/conversations",
        "GET /v1/conversations/{conversation_id}",
        "POST /v1/conversations/{conversation_id}",
        "DELETE /v1/conversations/{conversation_id}",
        "POST /v1/conversations/{conversation_id}/items",
        "GET /v1/conversations/{conversation_id}/items",
        "GET /v1/conversations/{conversation_id}/items/{item_id}",
        "DELETE /v1/conversations/{conversation_id}/items/{item_id}",
    )
    hosts = HOSTS
    any_body = True  # `GET` and `DELETE` send none

    def __init__(self, store: ConversationStore | None = None) -> None:
        self.store = store if store is not None else ConversationStore()
        """The conversations (shared with the stub's Responses wire, for `conversation=`)."""

    @staticmethod
    def _parts(path: str) -> list[str] | None:
        """The path's segments from `conversations` on, or None when it is not a Conversations path."""
        segments = path.rstrip("/").split("/")
        if "conversations" not in segments:
            return None
        tail = segments[len(segments) - 1 - segments[::-1].index("conversations") :]
        return tail if len(tail) <= 4 and (len(tail) < 3 or tail[2] == "items") else None

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """A Conversations API path and method, under any prefix."""
        parts = self._parts(path)
        if parts is None:
            return False
        allowed = {1: ("POST",), 2: ("GET", "POST", "DELETE"), 3: ("GET", "POST"), 4: ("GET", "DELETE")}
        return method in allowed[len(parts)]

    def parse(self, body: Any, path: str) -> Parsed:
        """The items a request adds, as its `messages`."""
        return Parsed(messages=as_list(body.get("items")) if isinstance(body, dict) else [])

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """The API's answer, from and to the stub's conversations."""
        parts = self._parts(record.path) or []
        body = record.body if isinstance(record.body, dict) else {}
        method = record.method
        if len(parts) == 1:
            return _ok(self.store.create(body.get("metadata"), as_list(body.get("items"))))
        conversation = unquote(parts[1])
        if self.store.get(conversation) is None:
            return _not_found("Conversation", conversation)
        if len(parts) == 2:
            if method == "DELETE":
                self.store.delete(conversation)
                return _ok({"id": conversation, "object": "conversation.deleted", "deleted": True})
            if method == "POST":
                return _ok(self.store.update(conversation, body.get("metadata")))
            return _ok(self.store.get(conversation))
        if len(parts) == 3:
            if method == "POST":
                return _ok(_page(self.store.extend(conversation, as_list(body.get("items"))) or []))
            return _ok(_listing(self.store.items(conversation) or [], record.query))
        item_id = unquote(parts[3])
        if method == "DELETE":
            if not self.store.remove(conversation, item_id):
                return _not_found("Item", item_id)
            return _ok(self.store.get(conversation))
        found = next((item for item in self.store.items(conversation) or [] if item.get("id") == item_id), None)
        return _ok(found) if found is not None else _not_found("Item", item_id)


def _listing(items: list[dict[str, Any]], query: Mapping[str, str]) -> dict[str, Any]:
    """A page of items as the API lists them: `order` (default `desc`), `after` (an item id), `limit` (default 20)."""
    ordered = items if query.get("order") == "asc" else items[::-1]
    after = query.get("after")
    if after is not None:
        ids = [item.get("id") for item in ordered]
        ordered = ordered[ids.index(after) + 1 :] if after in ids else []
    asked = query.get("limit", "")
    limit = min(max(int(asked) if asked.isdigit() else 20, 1), 100)
    page = _page(ordered[:limit])
    page["has_more"] = len(ordered) > limit
    return page


class OpenAITracesWire(TurnlessWire):
    """`POST …/v1/traces/ingest`: the Agents SDK's tracing exporter (openai-agents' default), answered `{}`."""

    name = "openai_traces"
    endpoint = "POST …/v1/traces/ingest"
    endpoints = ("POST /v1/traces/ingest",)
    hosts = HOSTS

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """`POST …/traces/ingest`, under any prefix."""
        return method == "POST" and path.rstrip("/").endswith("/traces/ingest")

    def parse(self, body: Any, path: str) -> Parsed:
        """The exported traces and spans (`data`), as its `messages`."""
        return Parsed(messages=[as_dict(item) for item in as_list(body.get("data"))] if isinstance(body, dict) else [])

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """`{}`: the exporter reads only the status (a 2xx)."""
        return _ok({})
