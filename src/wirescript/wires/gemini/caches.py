"""Gemini's explicit caches: `…/cachedContents` (create, list) and `…/cachedContents/{id}` (get, update, delete).

A turnless wire: it consumes no turn, and its requests are recorded. The caches live on the stub's
Gemini wire (`GeminiWire.cached_contents`), which reads them when a `generateContent` names one, and
they expire on the stub's clock (`record.received_at`): `stub.clock.advance("2h")` expires a cache of
the default 1-hour ttl. Shapes: google-genai's `CachedContent` (`name`, `model`, `displayName`,
`createTime`, `updateTime`, `expireTime`, `usageMetadata.totalTokenCount`) and
`ListCachedContentsResponse` (`cachedContents`); errors in Google's envelope.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from ...recorded import RecordedRequest
from ...script import ErrorSpec
from ...side import SideScript
from ...sse import json_dumps
from .._caching import Counting
from .._render import alphanumeric, error_message, retry_headers
from ..base import Parsed, Rendered, TurnlessWire
from .caching import DEFAULT_TTL, GEMINI_CACHING, CachedContent, CachedContents

__all__ = ["GeminiCachesWire"]

_JSON = {"content-type": "application/json; charset=UTF-8"}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)s$")
_LOWER = "0123456789abcdefghijklmnopqrstuvwxyz"
_STATUSES = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}


def _time(seconds: float) -> str:
    """An RFC 3339 timestamp (UTC, microseconds), as the API writes its times."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _error(status: int, message: str) -> Rendered:
    body = {"error": {"code": status, "message": message, "status": _STATUSES.get(status, "UNKNOWN")}}
    return Rendered(status, dict(_JSON), json_dumps(body).encode())


def _expiry(body: dict[str, Any], now: float) -> float | str:
    """When a cache asked for in `body` expires: `expireTime`, else now plus `ttl`, else the default; or why not."""
    expire = body.get("expireTime", body.get("expire_time"))
    ttl = body.get("ttl")
    if isinstance(expire, str):
        try:
            return datetime.fromisoformat(expire.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return f"Invalid value at 'expire_time' (type.googleapis.com/google.protobuf.Timestamp), {expire!r}"
    if isinstance(ttl, str):
        found = _DURATION.match(ttl.strip())
        if found is None:
            return f"Invalid value at 'ttl' (type.googleapis.com/google.protobuf.Duration), {ttl!r}"
        return now + float(found[1])
    return now + DEFAULT_TTL


class GeminiCachesWire(Counting, TurnlessWire):
    """Gemini's `cachedContents` endpoints, over the caches of the stub's Gemini wire.

    Args:
        caches: The Gemini wire's caches (`GeminiWire().cached_contents`), which its requests read.

    """

    name = "gemini_caches"
    endpoint = "POST …/cachedContents"
    endpoints = (
        "POST /v1beta/cachedContents",
        "GET /v1beta/cachedContents",
        "GET /v1beta/cachedContents/{cache}",
        "PATCH /v1beta/cachedContents/{cache}",
        "DELETE /v1beta/cachedContents/{cache}",
    )
    credential_headers = ("x-goog-api-key",)
    credential_query = ("key",)
    any_body = True  # a DELETE or GET carries none

    def __init__(self, caches: CachedContents | None = None) -> None:
        self.caches = caches if caches is not None else CachedContents()

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """`POST`/`GET …/cachedContents`, `GET`/`PATCH`/`DELETE …/cachedContents/{id}`."""
        if path.endswith("/cachedContents"):
            return method in ("POST", "GET")
        _, found, tail = path.rpartition("/cachedContents/")
        return bool(found) and bool(tail) and "/" not in tail and method in ("GET", "PATCH", "DELETE")

    def parse(self, body: Any, path: str) -> Parsed:
        """The model a cache is created for (without `models/`), if any."""
        model = body.get("model") if isinstance(body, dict) else None
        return Parsed(model=model.removeprefix("models/") if isinstance(model, str) else None)

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """Create, list, get, update or delete a cache, on the stub's clock."""
        now = record.received_at
        body = record.body if isinstance(record.body, dict) else {}
        if record.path.endswith("/cachedContents"):
            return self._create(body, now) if record.method == "POST" else self._list(now)
        name = "cachedContents/" + record.path.rpartition("/cachedContents/")[2]
        cache = self.caches.live(name, now)
        if cache is None:
            return _error(404, f"CachedContent not found (or permission denied): {name}")
        if record.method == "DELETE":
            self.caches.remove(name)
            return Rendered(200, dict(_JSON), b"{}")
        if record.method == "PATCH":
            expires = _expiry(body, now) if ("ttl" in body or "expireTime" in body) else cache.expires
            if isinstance(expires, str):
                return _error(400, expires)
            cache.expires, cache.updated = expires, now
        return Rendered(200, dict(_JSON), json_dumps(_shown(cache)).encode())

    def _create(self, body: dict[str, Any], now: float) -> Rendered:
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return _error(400, "model: a cached content needs the model it is for (models/…)")
        expires = _expiry(body, now)
        if isinstance(expires, str):
            return _error(400, expires)
        tokens = GEMINI_CACHING.count(body, self.counter)
        display = body.get("displayName", body.get("display_name"))
        kept = {k: v for k, v in body.items() if k not in ("ttl", "expireTime", "expire_time")}

        def make(number: int) -> CachedContent:
            return CachedContent(
                name=f"cachedContents/{alphanumeric(f'gemini-cache:{number}', 12, _LOWER)}",
                model=model.removeprefix("models/"),
                body=kept,
                tokens=tokens,
                created=now,
                updated=now,
                expires=expires,
                display_name=display if isinstance(display, str) else None,
            )

        cache = self.caches.add(make)
        return Rendered(200, dict(_JSON), json_dumps(_shown(cache)).encode())

    def _list(self, now: float) -> Rendered:
        shown = [_shown(cache) for cache in self.caches.all_live(now)]
        return Rendered(200, dict(_JSON), json_dumps({"cachedContents": shown} if shown else {}).encode())

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """Google's error envelope (`{"error": {"code", "message", "status"}}`)."""
        rendered = _error(spec.status, error_message(spec))
        rendered.headers.update(retry_headers(spec, self.retryable))
        return rendered


def _shown(cache: CachedContent) -> dict[str, Any]:
    """A cache as the API shows it (its contents are not shown back)."""
    shown: dict[str, Any] = {"name": cache.name, "model": f"models/{cache.model}"}
    if cache.display_name is not None:
        shown["displayName"] = cache.display_name
    shown.update(
        {
            "createTime": _time(cache.created),
            "updateTime": _time(cache.updated),
            "expireTime": _time(cache.expires),
            "usageMetadata": {"totalTokenCount": cache.tokens},
        }
    )
    return shown
