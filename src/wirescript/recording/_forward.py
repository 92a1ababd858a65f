"""The forwarding shell the three record-mode transports share, and the two that only forward.

`Forwarding` holds what `RecordingTransport`, `Episodes` and `Rehost` have in common: the
upstream a request goes on to (a given transport, or the real network transport of the request's
library, built on first use and closed with the shell), and the close and context-manager methods.
Each subclass writes its own `handle_request` / `handle_async_request`.
"""

from __future__ import annotations

import contextvars
import json
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .._adapters import http as _http
from ..wires import Wire, merge_wires

__all__ = ["FORWARDING", "Episodes", "Forwarding", "Rehost"]

if TYPE_CHECKING:  # pragma: no cover - typing only: lets `httpx2.Client(transport=rec)` type-check
    import httpx
    import httpx2

    class _TransportBase(  # type: ignore[misc]
        httpx2.BaseTransport, httpx2.AsyncBaseTransport, httpx.BaseTransport, httpx.AsyncBaseTransport
    ):
        pass

else:
    _TransportBase = object  # as `ScriptTransport`: the clients duck-type their transport

_Self = TypeVar("_Self", bound="Forwarding")

FORWARDING: contextvars.ContextVar[bool] = contextvars.ContextVar("wirescript_forwarding", default=False)
"""True while a record-mode transport hands a request on upstream: an open interception of a
recorder lets such a request through to the network instead of routing it back to the recorder."""


class Forwarding(_TransportBase):
    """A transport that hands requests on to an upstream transport, by default the real network.

    Args:
        upstream: Any httpx or httpx2 transport of the requests' library, or None: the network,
            an `HTTPTransport`/`AsyncHTTPTransport` of each request's library, built on first use
            and closed by `close()`/`aclose()`. A given upstream is the caller's to close.

    """

    def __init__(self, upstream: Any = None) -> None:
        self._upstream = upstream
        self._network: dict[tuple[str, bool], Any] = {}
        self._lock = threading.Lock()

    def _upstream_for(self, request: Any, *, is_async: bool) -> Any:
        if self._upstream is not None:
            return self._upstream
        key = (_http.http_module(request).__name__, is_async)
        with self._lock:
            transport = self._network.get(key)
            if transport is None:
                transport = self._network[key] = _http.network_transport(request, is_async=is_async)
        return transport

    def _send(self, request: Any) -> Any:
        """`request` sent upstream from a sync client."""
        mark = FORWARDING.set(True)
        try:
            return self._upstream_for(request, is_async=False).handle_request(request)
        finally:
            FORWARDING.reset(mark)

    async def _send_async(self, request: Any) -> Any:
        """`request` sent upstream from an async client."""
        mark = FORWARDING.set(True)
        try:
            return await self._upstream_for(request, is_async=True).handle_async_request(request)
        finally:
            FORWARDING.reset(mark)

    def close(self) -> None:
        """Close the network transports built here (a sync client's; an async one's need `aclose()`)."""
        with self._lock:
            network, self._network = list(self._network.values()), {}
        for transport in network:
            if callable(getattr(transport, "close", None)):
                transport.close()

    async def aclose(self) -> None:
        """Close the network transports built here."""
        with self._lock:
            network, self._network = list(self._network.values()), {}
        for transport in network:
            if callable(getattr(transport, "aclose", None)):
                await transport.aclose()
            elif callable(getattr(transport, "close", None)):
                transport.close()

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self: _Self) -> _Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class Episodes(Forwarding):
    """Replay a script, and forward what runs past its end (pytest-recording's `new_episodes`).

    Each request goes to `stub` first; one the stub cannot answer as scripted (its script ran
    out, no queue serves its model) is forwarded to `upstream` instead (by default the real
    network, as `RecordingTransport`'s). Give it to a `RecordingTransport` of the file the stub
    replays, as its upstream: `save()` then appends the forwarded turns to that file, whose own
    bytes stay as they are.
    """

    def __init__(self, stub: Any, upstream: Any = None) -> None:
        super().__init__(upstream)
        self.stub = stub
        self._forwarded: weakref.WeakSet[Any] = weakref.WeakSet()  # the requests sent upstream, until asked

    def was_forwarded(self, request: Any) -> bool:
        """Whether `request` (answered already) went upstream rather than being answered from the script.

        Asked once per request, by the `RecordingTransport` this is the upstream of.
        """
        with self._lock:
            if request in self._forwarded:
                self._forwarded.discard(request)
                return True
            return False

    def _refused(self, before: int, response: Any) -> bool:
        """Whether the stub refused this request: a problem was recorded, and its answer is the error that says so.

        The status is looked at too, so that a replayed answer is not forwarded because another
        request, at the same time, ran past the end.
        """
        return len(self.stub.problems) > before and response.status_code >= 400

    def handle_request(self, request: Any) -> Any:
        """Answer from the script, or forward a sync request past its end."""
        before = len(self.stub.problems)
        response = self.stub.handle_request(request)
        if not self._refused(before, response):
            return response
        response.close()
        with self._lock:
            self._forwarded.add(request)
        return self._send(request)

    async def handle_async_request(self, request: Any) -> Any:
        """Answer from the script, or forward an async request past its end."""
        before = len(self.stub.problems)
        response = await self.stub.handle_async_request(request)
        if not self._refused(before, response):
            return response
        await response.aclose()
        with self._lock:
            self._forwarded.add(request)
        return await self._send_async(request)


class Rehost(Forwarding):
    """Send each request to its provider's host instead of the loopback address it arrived at.

    For the recording server: a request for `127.0.0.1:8123/v1/messages` goes to
    `https://api.anthropic.com/v1/messages`, the first host of the wire that serves it (or to
    `base_url` when given: a stand-in provider). The path and query are kept.
    """

    def __init__(
        self, upstream: Any = None, *, base_url: str | None = None, wires: Sequence[Wire] | None = None
    ) -> None:
        super().__init__(upstream)
        self._wires = merge_wires(wires)
        self._base = base_url.rstrip("/") if base_url else None

    def _moved(self, request: Any) -> Any:
        url = request.url
        if self._base is not None:
            target = type(url)(self._base)
        else:
            wire = next((w for w in self._wires if w.matches(request.method, url.path, host=url.host)), None)
            hosts = [h for h in (wire.hosts if wire is not None else ()) if "*" not in h]
            if not hosts:
                return None
            target = type(url)(f"https://{hosts[0]}")
        request.url = url.copy_with(scheme=target.scheme, host=target.host, port=target.port)
        request.headers["host"] = target.netloc.decode("ascii")
        return request

    def handle_request(self, request: Any) -> Any:
        """Forward a sync request to its provider (a request no wire serves gets a 404)."""
        moved = self._moved(request)
        return _not_found(request) if moved is None else self._send(moved)

    async def handle_async_request(self, request: Any) -> Any:
        """Forward an async request to its provider (a request no wire serves gets a 404)."""
        moved = self._moved(request)
        return _not_found(request) if moved is None else await self._send_async(moved)


def _not_found(request: Any) -> Any:
    hx = _http.http_module(request)
    body = json.dumps(
        {"error": {"type": "not_found_error", "message": "wirescript record: no provider serves this path"}}
    )
    return hx.Response(404, headers={"content-type": "application/json"}, content=body.encode(), request=request)
