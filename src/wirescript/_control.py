"""The loopback server's control API (`/_wirescript/...`): the recorded requests, status, check, hold, release.

It answers only a request that carries the server's token in `X-Wirescript-Token` and whose `Host`
names this machine (`localhost`, a loopback address, the server's own): a web page cannot reach it
by a rebound DNS name, and with no CORS header on its answers a page on another origin cannot read
them nor send it the token. On the recording server (`wirescript record`) it reports the recording:
there is no script to check, hold or release.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from ._adapters.asgi import Scope
from ._adapters.asgi import Send as MessageSend
from .errors import WaitTimeoutError
from .recorded import REDACTED, RecordedRequest
from .recording import RecordingTransport

if TYPE_CHECKING:
    from .transport import ScriptTransport

__all__ = [
    "CONTROL_PREFIX",
    "TOKEN_HEADER",
    "Control",
    "MessageSend",
    "Scope",
    "host_of",
    "json_response",
    "loopback_name",
    "request_json",
    "status_of",
]

CONTROL_PREFIX = "/_wirescript"
"""The path prefix of the control API, which is never recorded as a model request.

Every control request carries the server's token (`ScriptServer.token`, printed by `wirescript
serve` and `wirescript record`) in the `X-Wirescript-Token` header; without it the answer is 401.

- `GET /_wirescript/requests` — the recorded requests as JSON (credentials redacted, raw `content`
  left out). `?wait=N&timeout=S` first waits up to S seconds (default 5) for N requests; 504 if
  they do not arrive.
- `GET /_wirescript/status` — request count, overflow count, problems, pending turns, hold state
  (on `wirescript record`: the file, the request and turn counts, and the notes).
- `GET /_wirescript/check` — 200 `{"ok": true}`, or 409 with `stub.check()`'s message.
- `POST /_wirescript/hold`, `POST /_wirescript/release` — `stub.hold()`, `stub.release()`.
"""

TOKEN_HEADER = "X-Wirescript-Token"
"""The header a control API request carries the server's token in."""

_TOKEN = TOKEN_HEADER.lower().encode()
_ROUTES = {"requests": "GET", "status": "GET", "check": "GET", "hold": "POST", "release": "POST"}
_MAX_WAIT = 3600.0  # the longest wait: `timeout=inf` would wait forever
_POLL = 0.05  # how often a recording server's `?wait=N` looks again


class Control:
    """The control API of one server, for a stub or a recorder, guarded by the server's token."""

    def __init__(self, target: ScriptTransport | RecordingTransport, token: str) -> None:
        self._target = target
        self._token = token.encode()

    async def serve(self, scope: Scope, send: MessageSend) -> None:
        """Answer one control request (the path starts with `CONTROL_PREFIX`)."""
        path: str = scope["path"]
        host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
        own = (scope.get("server") or ("",))[0]
        if host is not None and not (loopback_name(host_of(host)) or host_of(host) == own):
            message = (
                f"wirescript: the control API answers requests for this machine only (Host: localhost, 127.0.0.1, "
                f"::1 or {own}), got Host: {host}"
            )
            await json_response(send, 403, {"error": message})
            return
        sent = next((v for k, v in scope["headers"] if k == _TOKEN), None)
        if sent is None or not hmac.compare_digest(sent, self._token):
            why = "needs" if sent is None else "got a wrong token in"
            message = (
                f"wirescript: the control API {why} the {TOKEN_HEADER} header: send the token `wirescript serve` "
                "(or `wirescript record`) prints on the second line of its stdout (ScriptServer.token in Python)"
            )
            await json_response(send, 401, {"error": message}, [(b"www-authenticate", TOKEN_HEADER.encode())])
            return
        name = path[len(CONTROL_PREFIX) + 1 :]
        method = _ROUTES.get(name)
        if method is None:
            known = ", ".join(f"{m} {CONTROL_PREFIX}/{n}" for n, m in _ROUTES.items())
            await json_response(send, 404, {"error": f"wirescript: no control endpoint {path}; known: {known}"})
            return
        if scope["method"] != method:
            message = f"wirescript: {scope['method']} {path} is not allowed; use {method}"
            await json_response(send, 405, {"error": message}, [(b"allow", method.encode())])
            return
        if name == "requests":
            await self._requests(scope, send)
        elif isinstance(self._target, RecordingTransport):
            await self._recording(self._target, name, send)
        else:
            await self._stub(self._target, name, send)

    async def _stub(self, stub: ScriptTransport, name: str, send: MessageSend) -> None:
        if name == "hold":
            stub.hold()
            await json_response(send, 200, {"held": True})
        elif name == "release":
            stub.release()
            await json_response(send, 200, {"held": False})
        elif name == "status":
            await json_response(send, 200, status_of(stub))
        else:
            try:
                stub.check()
            except AssertionError as exc:
                await json_response(send, 409, {"ok": False, "message": str(exc)})
            else:
                await json_response(send, 200, {"ok": True})

    async def _recording(self, rec: RecordingTransport, name: str, send: MessageSend) -> None:
        if name == "status":
            status = {"recording": str(rec.path), "requests": len(rec.requests), "turns": len(rec.turns)}
            await json_response(send, 200, {**status, "notes": rec.notes})
        elif name == "check":  # nothing is scripted: the notes say which requests were not recorded, and why
            await json_response(send, 200, {"ok": True, "notes": rec.notes})
        else:
            message = (
                f"wirescript: wirescript record forwards each request as it arrives and cannot {name} it; "
                "hold and release need a script: wirescript serve"
            )
            await json_response(send, 409, {"error": message})

    async def _requests(self, scope: Scope, send: MessageSend) -> None:
        query = dict(parse_qsl(scope["query_string"].decode("latin-1")))
        unknown = sorted(set(query) - {"wait", "timeout"})
        if unknown:
            message = f"wirescript: unknown query parameter(s) {', '.join(unknown)}; known: wait, timeout"
            await json_response(send, 400, {"error": message})
            return
        try:
            wait = _number(query, "wait", int, 0)
            timeout = _number(query, "timeout", float, 5.0)
        except ValueError as exc:
            await json_response(send, 400, {"error": f"wirescript: {exc}"})
            return
        target = self._target
        if wait:
            try:
                if isinstance(target, RecordingTransport):
                    await _wait_for(target, wait, timeout)
                else:
                    await target.wait_for_requests_async(wait, timeout)
            except WaitTimeoutError as exc:
                await json_response(send, 504, {"error": str(exc)})
                return
        await json_response(send, 200, [request_json(r) for r in target.requests])


async def _wait_for(rec: RecordingTransport, n: int, timeout: float) -> None:
    """Wait for `n` requests to reach a recorder (it has no signal to wait on: it is looked at every 50 ms)."""
    deadline = time.monotonic() + timeout
    while len(rec.requests) < n:
        if time.monotonic() >= deadline:
            raise WaitTimeoutError(f"wirescript: waited {timeout:g} s for {n} request(s), {len(rec.requests)} arrived")
        await asyncio.sleep(_POLL)


def request_json(record: RecordedRequest) -> dict[str, Any]:
    """A recorded request as JSON data: every field but the raw `content`, the credential redacted."""
    data: dict[str, Any] = record.model_dump(mode="json", exclude={"content", "api_key"})
    data["api_key"] = REDACTED if record.api_key is not None else None
    return data


def status_of(stub: ScriptTransport) -> dict[str, Any]:
    """The stub's state as JSON data, for `GET /_wirescript/status`."""
    return {
        "requests": stub.request_count,
        "overflow": stub.overflow,
        "problems": stub.problems,
        "pending": [{"queue": p.queue, "position": p.position, "turn": p.turn.describe()} for p in stub.pending],
        "held": stub.held,
    }


def host_of(netloc: str) -> str:
    """The host of a `Host` header's value or an origin's `host[:port]`: `[::1]:80` -> `::1`."""
    if netloc.startswith("["):
        end = netloc.find("]")
        return netloc[1:end] if end > 0 else netloc
    return netloc.rsplit(":", 1)[0] if netloc.count(":") == 1 else netloc


def loopback_name(host: str) -> bool:
    """Whether `host` (no port) names this machine: `localhost` or a loopback address."""
    host = host.lower().rstrip(".")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _number(query: dict[str, str], name: str, kind: type[int] | type[float], default: float) -> Any:
    raw = query.get(name)
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = -1
    if not value >= 0 or (kind is float and not 0 < value < _MAX_WAIT):  # NaN fails every comparison
        what = "a non-negative integer" if kind is int else f"a positive number of seconds below {_MAX_WAIT:g}"
        raise ValueError(f"{name}: expected {what}, got {raw!r}")
    return value


async def json_response(
    send: MessageSend, status: int, data: Any, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    """Send `data` as a JSON response, with `extra` headers."""
    body = json.dumps(data).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body, "more_body": False})
