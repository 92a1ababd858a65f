"""`MCPWire`: a scripted MCP server on the Streamable HTTP transport (JSON-RPC 2.0), answering without turns.

It speaks the handshake era of MCP (protocol versions 2024-11-05 to 2025-11-25): one endpoint,
each JSON-RPC message a POST; `initialize` issues the `Mcp-Session-Id` the session's later requests
carry, notifications and client responses get `202 Accepted`, requests one JSON body or an SSE
stream of one `message` event (the server's choice, within the client's `Accept`), a GET opens the
session's server-to-client stream (this server has nothing to send on it: the stream ends at once,
with a `retry` long enough that the client does not poll it again) and a DELETE ends the session
(https://modelcontextprotocol.io/specification/2025-11-25/basic/transports).

The `server/discover` probe of 2026-07-28 clients is answered as a handshake-era server answers a
method it does not know (JSON-RPC `-32601`), so the client falls back to `initialize`, as that
revision's backward-compatibility rules have it; it is not a problem.

A request the script cannot answer (past the end of the results, an unknown resource or prompt, a
method the server does not offer, a malformed message) is a problem of the stub, answered with the
JSON-RPC error the specification names for it, carrying wirescript's reason.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import ScriptError
from ...recorded import RecordedRequest
from ...script import ErrorSpec
from ...side import SideScript
from ...sse import encode_event, json_dumps
from .._hosts import host_matcher
from ..base import Parsed, Rendered, TurnlessWire, Violation
from .rules import ACCEPT, PROMPT_ARGUMENTS, RULES, SESSION_MISSING, SESSION_UNKNOWN, TOOL_ARGUMENTS, UNKNOWN_TOOL
from .script import HANDSHAKE_VERSIONS, LATEST_VERSION, MCPResult, MCPScript

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
    "SESSION_HEADER",
    "MCPWire",
    "rpc_message",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002
"""The JSON-RPC error codes the server answers with (JSON-RPC 2.0's, and MCP's resource-not-found)."""

SESSION_HEADER = "mcp-session-id"
"""The session header (`Mcp-Session-Id`), as the records hold header names: lower-case."""

GET_RETRY_MS = 3_600_000
"""The `retry` of the GET stream's one event: the client waits this long before it opens the stream again,
so it asks once per session (it closes the session long before)."""

_JSON = "application/json"
_SSE = "text/event-stream"
_METHODS = frozenset({"POST", "GET", "DELETE"})
_DISCOVER = "server/discover"
_CAPABILITY_OF = {
    "tools/list": "tools",
    "tools/call": "tools",
    "resources/list": "resources",
    "resources/read": "resources",
    "resources/templates/list": "resources",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
}


@dataclass(frozen=True, slots=True)
class Message:
    """A POST body read as one JSON-RPC 2.0 message."""

    kind: str
    """`request`, `notification`, `response` (the client answering a server request), or `invalid`."""
    id: Any = None
    method: str | None = None
    params: dict[str, Any] | None = None
    problem: str = ""
    """Why it is not a JSON-RPC message, for an `invalid` one."""


def rpc_message(body: Any) -> Message:
    """Read a parsed body as one JSON-RPC message (a batch is not one: the 2025-06-18 revision removed them)."""
    if isinstance(body, list):
        return Message(
            "invalid", problem="a JSON-RPC batch (an array); MCP sends one message per POST since 2025-06-18"
        )
    if not isinstance(body, dict):
        return Message("invalid", problem="not a JSON object")
    if body.get("jsonrpc") != "2.0":
        return Message("invalid", problem=f'"jsonrpc": expected "2.0", got {body.get("jsonrpc")!r}')
    method = body.get("method")
    params = body.get("params")
    if params is not None and not isinstance(params, dict):
        return Message("invalid", problem=f'"params": expected an object, got {type(params).__name__}')
    if isinstance(method, str):
        if "id" not in body:
            return Message("notification", method=method, params=params)
        request_id = body["id"]
        if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
            return Message("invalid", problem=f'"id": expected a string or an integer, got {request_id!r}')
        return Message("request", id=request_id, method=method, params=params)
    if "id" in body and ("result" in body or "error" in body):
        return Message("response", id=body["id"])
    return Message("invalid", problem='neither a request, a notification nor a response (no "method")')


class MCPWire(TurnlessWire):
    """Serves one stub's `MCPScript`: the MCP endpoint at its path, on any host (or its `hosts`).

    Keeps the stub's MCP state: the sessions issued and ended, and how many results were served.
    """

    name = "mcp"
    endpoint = "POST …/mcp (an MCP server, Streamable HTTP)"
    endpoints = ("POST /mcp", "GET /mcp", "DELETE /mcp")
    any_body = True
    rules = RULES
    unused_label = "MCP tool result(s)"

    def __init__(self, script: MCPScript) -> None:
        self.script = script
        # A stub's MCP server is reached on the hosts its script names, so intercept() takes them.
        self.hosts = script.hosts  # type: ignore[misc]
        self._host: Callable[[str], bool] | None = host_matcher(script.hosts) if script.hosts else None
        self._path = script.path
        self._lock = threading.Lock()
        self._served = 0
        self._served_of: dict[str, int] = {}
        self._sessions: dict[str, bool] = {}
        """Each session id issued, and whether it is still open."""
        self._failures: dict[int, tuple[int, int, str | None]] = {}
        """Per record (by id) that `respond` refused: the status, JSON-RPC code and wording of its answer."""

    # ------------------------------------------------------------------ recognising requests

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """POST, GET and DELETE on the script's path (a trailing `/` too), on any host or its `hosts`."""
        if method not in _METHODS or (path != self._path and path != self._path + "/"):
            return False
        return self._host is None or self._host(host)

    def claims(self, host: str) -> bool:
        """Only the script's own `hosts` (a server on every host claims none of them)."""
        return self._host is not None and self._host(host)

    def parse(self, body: Any, path: str) -> Parsed:
        """Nothing of the model's: the MCP fields are read from the body (`record.mcp_method`, `tool_name`, ...)."""
        return Parsed()

    # ------------------------------------------------------------------ strict rules

    def check(self, record: RecordedRequest, *, skip: frozenset[str]) -> Violation | None:
        """The transport's rules (`Accept`, the session), then the method's (the tool, its arguments, a prompt's)."""
        method = record.method
        message = rpc_message(record.body) if method == "POST" else None
        accepts_json, accepts_sse = _accepts(record.headers.get("accept", ""))
        if ACCEPT.id not in skip and (
            (method == "POST" and not (accepts_json or accepts_sse)) or (method == "GET" and not accepts_sse)
        ):
            wanted = "text/event-stream" if method == "GET" else "application/json or text/event-stream"
            return Violation(ACCEPT, f"Not Acceptable: Client must accept {wanted}.", "accept")
        handshake = message is not None and message.method in ("initialize", _DISCOVER)
        if self.script.sessions and not handshake and (message is None or message.kind != "invalid"):
            violation = self._session_violation(record, skip)
            if violation is not None:
                return violation
        if message is None or message.kind != "request":
            return None
        params = message.params or {}
        if message.method == "tools/call" and isinstance(params.get("name"), str):
            return self._call_violation(params["name"], params.get("arguments"), skip)
        if message.method == "prompts/get" and PROMPT_ARGUMENTS.id not in skip and isinstance(params.get("name"), str):
            prompt = next((p for p in self.script.prompts if p["name"] == params["name"]), None)
            given = params.get("arguments") or {}
            if prompt is not None and isinstance(given, dict):
                missing = [
                    a["name"] for a in prompt.get("arguments", []) if a.get("required") and a["name"] not in given
                ]
                if missing:
                    return Violation(
                        PROMPT_ARGUMENTS,
                        f"Missing required arguments: {', '.join(missing)}.",
                        f"params.arguments.{missing[0]}",
                    )
        return None

    def _session_violation(self, record: RecordedRequest, skip: frozenset[str]) -> Violation | None:
        session = record.headers.get(SESSION_HEADER)
        if session is None:
            if SESSION_MISSING.id in skip:
                return None
            return Violation(
                SESSION_MISSING,
                "Bad Request: Missing session ID (send the Mcp-Session-Id the initialize answer carried).",
                SESSION_HEADER,
            )
        with self._lock:
            state = self._sessions.get(session)
        if state or SESSION_UNKNOWN.id in skip:
            return None
        why = "Session has been terminated" if state is False else "Invalid or expired session ID"
        return Violation(SESSION_UNKNOWN, f"Not Found: {why} ({session!r}).", SESSION_HEADER)

    def _call_violation(self, name: str, arguments: Any, skip: frozenset[str]) -> Violation | None:
        tool = self.script.tool(name)
        if tool is None:
            if UNKNOWN_TOOL.id in skip:
                return None
            listed = ", ".join(t["name"] for t in self.script.tools) or "none"
            return Violation(UNKNOWN_TOOL, f"Unknown tool: {name} (the MCP script lists: {listed}).", "params.name")
        if TOOL_ARGUMENTS.id in skip:
            return None
        given = {} if arguments is None else arguments
        if not isinstance(given, dict):
            return Violation(
                TOOL_ARGUMENTS,
                f"Invalid params: arguments must be an object, got {type(given).__name__}.",
                "params.arguments",
            )
        errors = self.script.input_errors(name, given)
        if not errors:
            return None
        text, path = errors[0]
        return Violation(TOOL_ARGUMENTS, f"Input validation error: {text}.", f"params.arguments{path[1:]}")

    def strict_error(self, violation: Violation, message: str, record: RecordedRequest) -> Rendered:
        """The refusal the specification gives each rule: an error, a status, or a tool execution error."""
        rule = violation.rule
        request = rpc_message(record.body) if record.method == "POST" else None
        request_id = request.id if request is not None and request.kind == "request" else None
        if rule is TOOL_ARGUMENTS and violation.message.startswith("Input validation error"):
            result = {"content": [{"type": "text", "text": message}], "isError": True}
            return self._reply(record, {"jsonrpc": "2.0", "id": request_id, "result": result})
        if rule in (UNKNOWN_TOOL, TOOL_ARGUMENTS, PROMPT_ARGUMENTS):
            return self._reply(record, _error(request_id, INVALID_PARAMS, message))
        return _http_error(rule.status, INVALID_REQUEST, message, request_id)

    # ------------------------------------------------------------------ answers

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """The answer to one MCP request.

        Raises:
            LookupError: The script has no answer for it (past the end of the results, an unknown
                resource, prompt or method): an `unscripted` problem.
            ScriptError: The results function failed, or its result (or a listed result) does not fit the tool.
            ValueError: The body is not one JSON-RPC message, or its params are malformed: `unreadable`.

        """
        if record.method == "GET":
            return self._stream(record)
        if record.method == "DELETE":
            return self._end(record)
        message = rpc_message(record.body)
        if message.kind == "invalid":
            code = PARSE_ERROR if record.body is None else INVALID_REQUEST
            self._refuse(record, 400, code, "Parse error" if record.body is None else "Invalid Request")
            raise ValueError(
                f"the body is not JSON ({record.body_error})"
                if record.body is None
                else f"the body is not a JSON-RPC 2.0 message: {message.problem}"
            )
        if message.kind != "request":  # a notification, or the client's answer to a server request
            return Rendered(202, self._session_headers(record))
        method = message.method
        assert method is not None
        params = message.params or {}
        if method == "initialize":
            return self._initialize(record, message.id, params)
        if method == "ping":
            return self._reply(record, _ok(message.id, {}))
        if method == _DISCOVER:  # a 2026-07-28 client's probe: a handshake-era server does not know it
            return self._reply(record, _error(message.id, METHOD_NOT_FOUND, "Method not found"))
        capability = _CAPABILITY_OF.get(method)
        if capability is None or capability not in self.script.capabilities:
            self._refuse(record, 200, METHOD_NOT_FOUND, "Method not found")
            offered = ", ".join(sorted(m for m, c in _CAPABILITY_OF.items() if c in self.script.capabilities))
            why = (
                "which MCP servers do not serve"
                if capability is None
                else f"but the MCP script has no {capability} (it declares only what it has)"
            )
            raise LookupError(f"asks the MCP method {method!r}, {why}; it serves initialize, ping, {offered or '…'}")
        return self._answer(record, message.id, method, params)

    def _answer(self, record: RecordedRequest, request_id: Any, method: str, params: dict[str, Any]) -> Rendered:
        script = self.script
        if method == "tools/list":
            return self._reply(record, _ok(request_id, {"tools": list(script.tools)}))
        if method == "resources/list":
            listed = [{k: v for k, v in r.items() if k not in ("text", "blob")} for r in script.resources]
            return self._reply(record, _ok(request_id, {"resources": listed}))
        if method == "resources/templates/list":
            return self._reply(record, _ok(request_id, {"resourceTemplates": list(script.resource_templates)}))
        if method == "prompts/list":
            listed = [{k: v for k, v in p.items() if k != "messages"} for p in script.prompts]
            return self._reply(record, _ok(request_id, {"prompts": listed}))
        name_key = "uri" if method == "resources/read" else "name"
        name = params.get(name_key)
        if not isinstance(name, str):
            self._refuse(record, 200, INVALID_PARAMS, "Invalid params")
            raise ValueError(f"{method}: params.{name_key}: expected a string, got {name!r}")
        if method == "tools/call":
            return self._call(record, request_id, name, params)
        if method == "resources/read":
            resource = next((r for r in script.resources if r["uri"] == name), None)
            if resource is None:
                self._refuse(record, 200, RESOURCE_NOT_FOUND, "Resource not found")
                uris = ", ".join(r["uri"] for r in script.resources) or "none"
                raise LookupError(
                    f"reads the resource {name!r}, which the MCP script does not have (resources: {uris})"
                )
            contents: dict[str, Any] = {
                "uri": resource["uri"],
                **{k: resource[k] for k in ("mimeType", "text", "blob") if k in resource},
            }
            return self._reply(record, _ok(request_id, {"contents": [contents]}))
        prompt = next((p for p in script.prompts if p["name"] == name), None)
        if prompt is None:
            self._refuse(record, 200, INVALID_PARAMS, f"Invalid prompt name: {name}")
            names = ", ".join(p["name"] for p in script.prompts)
            raise LookupError(f"gets the prompt {name!r}, which the MCP script does not have (prompts: {names})")
        answer: dict[str, Any] = {"messages": prompt["messages"]}
        if "description" in prompt:
            answer = {"description": prompt["description"], **answer}
        return self._reply(record, _ok(request_id, answer))

    def _call(self, record: RecordedRequest, request_id: Any, name: str, params: dict[str, Any]) -> Rendered:
        result = self._next(record, name)
        if result.error is not None:  # a scripted JSON-RPC error: the answer asked for, not a problem
            return self._reply(record, {"jsonrpc": "2.0", "id": request_id, "error": dict(result.error)})
        assert result.result is not None
        if self.script.tool(name) is not None and not result.result.get("isError"):
            if "structuredContent" in result.result:
                errors = self.script.output_errors(name, result.result["structuredContent"])
            elif self.script.has_output_schema(name):
                errors = [("the result carries none, and the tool declares an outputSchema", "$")]
            else:
                errors = []
            if errors:
                self._refuse(record, 200, INTERNAL_ERROR, None)
                text, path = errors[0]
                raise ScriptError(
                    f"the result served to tools/call {name!r} breaks the tool's outputSchema "
                    f"(structuredContent{path[1:]}: {text}); the MCP SDK's client refuses it"
                )
        return self._reply(record, _ok(request_id, dict(result.result)))

    def _next(self, record: RecordedRequest, name: str) -> MCPResult:
        """The result this call takes: the next in order, the tool's next, or the function's."""
        results = self.script.results
        if callable(results) and not isinstance(results, (tuple, dict)):
            try:
                value = results(record)
            except Exception as exc:
                self._refuse(record, 200, INTERNAL_ERROR, None)
                raise ScriptError(f"the MCP results function raised {type(exc).__name__}: {exc}") from exc
            if value is None:
                self._refuse(record, 200, INTERNAL_ERROR, None)
                raise LookupError(f"calls the tool {name!r}, and the MCP results function returned None for it")
            try:
                return self.script.served_result(value, "the MCP results function's result")
            except ScriptError:
                self._refuse(record, 200, INTERNAL_ERROR, None)
                raise
        if isinstance(results, dict):
            queue = results.get(name, ())
            with self._lock:
                position = self._served_of.get(name, 0)
                if position < len(queue):
                    self._served_of[name] = position + 1
            if position < len(queue):
                return queue[position]
            self._refuse(record, 200, INTERNAL_ERROR, None)
            raise LookupError(
                f"calls the tool {name!r} past the end of its results in the MCP script: "
                f"it has {len(queue)}, all served. Script another, or check why the agent called it again"
            )
        with self._lock:
            position = self._served
            if position < len(results):
                self._served = position + 1
        if position < len(results):
            return results[position]
        self._refuse(record, 200, INTERNAL_ERROR, None)
        raise LookupError(
            f"calls the tool {name!r} past the end of the MCP script's results: it has {len(results)}, all served. "
            "Script another, or check why the agent called it again"
        )

    def _initialize(self, record: RecordedRequest, request_id: Any, params: dict[str, Any]) -> Rendered:
        script = self.script
        asked = params.get("protocolVersion")
        version = script.protocol_version or (asked if asked in HANDSHAKE_VERSIONS else LATEST_VERSION)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": script.capabilities,
            "serverInfo": {"name": script.name, "version": script.version},
        }
        if script.instructions is not None:
            result["instructions"] = script.instructions
        headers: dict[str, str] = {}
        if script.sessions:
            with self._lock:
                session = f"wirescript-session-{len(self._sessions) + 1}"
                self._sessions[session] = True
            headers[SESSION_HEADER] = session
        return self._reply(record, _ok(request_id, result), headers)

    def _stream(self, record: RecordedRequest) -> Rendered:
        """GET: the session's server-to-client stream. Nothing to send: one `retry` event, and it ends."""
        if not self.script.sessions:
            return Rendered(405, {"allow": "POST"})
        headers = {"content-type": _SSE, "cache-control": "no-cache", **self._session_headers(record)}
        return Rendered(200, headers, f"retry: {GET_RETRY_MS}\n\n".encode())

    def _end(self, record: RecordedRequest) -> Rendered:
        """DELETE: the session ends; later requests with its id get 404."""
        if not self.script.sessions:
            return Rendered(405, {"allow": "POST"})
        session = record.headers.get(SESSION_HEADER)
        with self._lock:
            if session in self._sessions:
                self._sessions[session] = False
        return Rendered(200, {})

    # ------------------------------------------------------------------ rendering

    def _session_headers(self, record: RecordedRequest) -> dict[str, str]:
        session = record.headers.get(SESSION_HEADER)
        if session is None or not self.script.sessions:
            return {}
        with self._lock:
            live = self._sessions.get(session, False)
        return {SESSION_HEADER: session} if live else {}

    def _reply(
        self, record: RecordedRequest, message: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> Rendered:
        """One JSON-RPC message answering a request: one JSON body, or an SSE stream of one `message` event."""
        accepts_json, accepts_sse = _accepts(record.headers.get("accept", ""))
        head = {**self._session_headers(record), **(headers or {})}
        data = json_dumps(message)
        if accepts_sse and (self.script.sse or not accepts_json):
            head = {"content-type": _SSE, "cache-control": "no-cache", **head}
            return Rendered(200, head, encode_event("message", data))
        return Rendered(200, {"content-type": _JSON, **head}, data.encode())

    def _refuse(self, record: RecordedRequest, status: int, code: int, wording: str | None) -> None:
        """Remember how the refusal `respond` is about to raise is answered (`unscripted` renders it)."""
        self._failures[id(record)] = (status, code, wording)

    def unscripted(self, message: str, record: RecordedRequest, *, status: int = 400) -> Rendered:
        """A request the script cannot answer: the JSON-RPC error its case calls for, carrying `message`."""
        failure = self._failures.pop(id(record), None)
        request = rpc_message(record.body) if record.method == "POST" else None
        request_id = request.id if request is not None and request.kind == "request" else None
        if failure is None:  # held too long, a wirescript failure: an internal error
            failure = (200 if request_id is not None else 500, INTERNAL_ERROR, None)
        answer_status, code, wording = failure
        text = f"{wording} ({message})" if wording else message
        if answer_status == 200 and request_id is not None:
            return self._reply(record, _error(request_id, code, text))
        return _http_error(answer_status, code, text, request_id)

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """An error as a JSON-RPC error body (code -32603), with the status asked for."""
        request = rpc_message(record.body) if record.method == "POST" else None
        request_id = request.id if request is not None and request.kind == "request" else None
        return _http_error(spec.status, INTERNAL_ERROR, spec.message or "Internal error", request_id)

    # ------------------------------------------------------------------ check()

    def unused(self, side: SideScript) -> list[str]:
        """The scripted results no call has taken, one line each."""
        results = self.script.results
        with self._lock:
            served, served_of = self._served, dict(self._served_of)
        if isinstance(results, tuple):
            return [f"mcp results[{i}]: {r.describe()}" for i, r in enumerate(results) if i >= served]
        if isinstance(results, dict):
            return [
                f"mcp results[{name!r}][{i}]: {r.describe()}"
                for name, queue in results.items()
                for i, r in enumerate(queue)
                if i >= served_of.get(name, 0)
            ]
        return []


def _accepts(accept: str) -> tuple[bool, bool]:
    """Whether an `Accept` header takes JSON, and SSE (no header, or `*/*`: both)."""
    if not accept.strip():
        return True, True
    kinds = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    every = "*/*" in kinds
    return every or _JSON in kinds or "application/*" in kinds, every or _SSE in kinds or "text/*" in kinds


def _ok(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _http_error(status: int, code: int, message: str, request_id: Any = None) -> Rendered:
    """A transport-level refusal: the status, and a JSON-RPC error body (the MCP SDK's client reads it)."""
    body = json_dumps(_error(request_id, code, message)).encode()
    return Rendered(status, {"content-type": _JSON}, body)
