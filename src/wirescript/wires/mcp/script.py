"""`MCPScript`: what a scripted MCP server lists and answers, validated when it is built.

The server's tools, the results of their calls (in order, per tool, or from a function of the
call), its resources, resource templates and prompts. Tools, resources and prompts are written as
the MCP specification writes them on the wire (`inputSchema`, `mimeType`, ...), or given as the MCP
SDK's own models (anything with `model_dump`). A tool result is a string (one text block), or a
`CallToolResult` as the wire carries it (`content`, `structuredContent`, `isError`) with `text` as a
shorthand for one text block, or `{"error": {"code": ..., "message": ...}}` for a JSON-RPC error.

Every mistake is a `ScriptError` naming the field when the script is built: a tool without a name,
two tools of one name, an `inputSchema` that is not a JSON Schema, a content block of an unknown
type, structured content that breaks the tool's `outputSchema`, a result for a tool never listed.
The JSON Schemas are checked with the `jsonschema` library (the `wirescript[mcp]` extra), imported
only when an `MCPScript` is built.
"""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from ..._text import did_you_mean, shown
from ...errors import ScriptError, UsageError
from ...recorded import RecordedRequest
from ...script import _not_json
from ...sse import json_dumps
from .._hosts import host_matcher

if TYPE_CHECKING:  # pragma: no cover - typing only
    from jsonschema.protocols import Validator

__all__ = [
    "HANDSHAKE_VERSIONS",
    "LATEST_VERSION",
    "MCPResult",
    "MCPScript",
    "ResultLike",
    "ResultsLike",
]

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The MCP protocol versions negotiated by the `initialize` handshake, oldest first: the ones the scripted
server speaks (https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle)."""

LATEST_VERSION = HANDSHAKE_VERSIONS[-1]
"""What the server answers an `initialize` that asks for a version it does not know (the spec's rule:
a version it supports, its latest)."""

ResultLike: TypeAlias = "str | Mapping[str, Any] | MCPResult"
"""A tool result: text, a `CallToolResult` mapping (`content`, `structuredContent`, `isError`, `text`),
`{"error": {"code": int, "message": str}}`, or an `MCPResult`."""

ResultsLike: TypeAlias = (
    "Sequence[ResultLike] | Mapping[str, Sequence[ResultLike]] | Callable[[RecordedRequest], ResultLike | None]"
)
"""The results of the tool calls: one list served in order to every call, a list per tool name, or a
function of the call's record (None: the call is unscripted)."""

_TOOL_KEYS = (
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
    "execution",
    "_meta",
)
_RESULT_KEYS = ("text", "content", "structuredContent", "isError", "_meta", "error")
_RESOURCE_KEYS = ("uri", "name", "title", "description", "mimeType", "size", "annotations", "icons", "_meta")
_TEMPLATE_KEYS = ("uriTemplate", "name", "title", "description", "mimeType", "annotations", "icons", "_meta")
_PROMPT_KEYS = ("name", "title", "description", "arguments", "icons", "_meta", "messages")
_ARGUMENT_KEYS = ("name", "title", "description", "required")
_BLOCK_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # type: (required keys, optional keys), as the 2025-11-25 schema's content blocks have them
    "text": (("text",), ("annotations", "_meta")),
    "image": (("data", "mimeType"), ("annotations", "_meta")),
    "audio": (("data", "mimeType"), ("annotations", "_meta")),
    "resource_link": (
        ("uri", "name"),
        ("title", "description", "mimeType", "size", "annotations", "icons", "_meta"),
    ),
    "resource": (("resource",), ("annotations", "_meta")),
}
_ROLES = ("user", "assistant")


@dataclass(frozen=True, slots=True)
class MCPResult:
    """One scripted answer to a `tools/call`: a `CallToolResult`, or a JSON-RPC error.

    Attributes:
        result: The `CallToolResult` as the wire carries it (`content`, and `structuredContent`,
            `isError`, `_meta` when given), or None for an error.
        error: The JSON-RPC error object (`code`, `message`, `data`), or None for a result.

    """

    result: Mapping[str, Any] | None = None
    error: Mapping[str, Any] | None = None

    def describe(self) -> str:
        """One line for `check()`'s list of unused results."""
        if self.error is not None:
            return f"error {self.error['code']} {shown(self.error['message'], 50)}"
        assert self.result is not None
        kinds = [str(block.get("type")) for block in self.result["content"]]
        texts = [block["text"] for block in self.result["content"] if block.get("type") == "text"]
        head = "isError " if self.result.get("isError") else ""
        first = f" {shown(texts[0], 50)}" if texts else ""
        structured = " + structuredContent" if "structuredContent" in self.result else ""
        return f"{head}{'/'.join(kinds) or 'no content'}{first}{structured}"


class MCPScript:
    """A scripted MCP server: its tools and their results, resources and prompts (Streamable HTTP, JSON-RPC 2.0).

    Give it to a stub (`ScriptTransport(script, mcp=MCPScript(...))`, or the fixture's
    `wirescript(script, mcp=...)`): the stub then answers MCP requests at `path` (on any host, or
    on `hosts`) next to the model's, in-process, consuming no model turn. Each request is recorded
    (`record.provider == "mcp"`, `record.mcp_method`, `record.tool_name`, `record.arguments`).

    Args:
        tools: The tools `tools/list` lists, each `{"name", "description", "inputSchema", ...}` as the
            MCP specification writes them (an SDK `Tool` model too). `inputSchema` defaults to
            `{"type": "object"}` (any arguments); a call's arguments are validated against it.
        results: What the `tools/call` requests get: a list served in arrival order to every call,
            `{tool_name: [results]}` served per tool, or a function `(RecordedRequest) -> result |
            None` (None: the call is unscripted). A result is text, a `CallToolResult` mapping
            (`content` blocks, `structuredContent`, `isError`; `text` for one text block), or
            `{"error": {"code": -32000, "message": "..."}}` for a JSON-RPC error. A result never
            served fails `check()`, as an unused turn does.
        resources: What `resources/list` lists and `resources/read` reads: `{"uri", "name", "mimeType",
            ..., "text": "..."}` (or `"blob"`: base64).
        resource_templates: What `resources/templates/list` lists: `{"uriTemplate", "name", ...}`.
        prompts: What `prompts/list` lists and `prompts/get` answers: `{"name", "description",
            "arguments": [{"name", "required"}], "messages": [...]}`; a message is text (a user
            message) or `{"role", "content"}` with one content block.
        path: The MCP endpoint's URL path.
        hosts: Host patterns the server answers on (`intercept()` then takes them too); None: every
            host, at `path`.
        sse: Answer each request as a Server-Sent Events stream (as most servers do) instead of one
            JSON body, when the client accepts both (the spec lets the server choose).
        sessions: Issue an `Mcp-Session-Id` at `initialize` and require it on the session's later
            requests (`DELETE` ends the session). False: a stateless server.
        protocol_version: The protocol version `initialize` always answers (one of
            `HANDSHAKE_VERSIONS`); None: the version the client asks for when the server knows it,
            else `LATEST_VERSION`.
        name: The server's name in `serverInfo`.
        version: The server's version in `serverInfo`.
        instructions: The `instructions` of the `initialize` result, if any.

    Raises:
        ScriptError: A field is malformed; the message names it and what was expected.
        UsageError: The `jsonschema` library is not installed (`pip install 'wirescript[mcp]'`).

    """

    __slots__ = (
        "_input_validators",
        "_output_validators",
        "capabilities",
        "hosts",
        "instructions",
        "name",
        "path",
        "prompts",
        "protocol_version",
        "resource_templates",
        "resources",
        "results",
        "sessions",
        "sse",
        "tools",
        "version",
    )

    def __init__(
        self,
        *,
        tools: Sequence[Mapping[str, Any] | Any] = (),
        results: ResultsLike = (),
        resources: Sequence[Mapping[str, Any] | Any] = (),
        resource_templates: Sequence[Mapping[str, Any] | Any] = (),
        prompts: Sequence[Mapping[str, Any] | Any] = (),
        path: str = "/mcp",
        hosts: Iterable[str] | str | None = None,
        sse: bool = False,
        sessions: bool = True,
        protocol_version: str | None = None,
        name: str = "wirescript",
        version: str = "1.0.0",
        instructions: str | None = None,
    ) -> None:
        validator_for = _jsonschema()
        self.tools: tuple[dict[str, Any], ...] = tuple(_tools(tools))
        """The tools `tools/list` lists, as the wire carries them."""
        self._input_validators = {t["name"]: _schema(t, "inputSchema", i, validator_for) for i, t in _each(self.tools)}
        self._output_validators = {
            t["name"]: _schema(t, "outputSchema", i, validator_for) for i, t in _each(self.tools) if "outputSchema" in t
        }
        self.results: tuple[MCPResult, ...] | dict[str, tuple[MCPResult, ...]] | Callable[[RecordedRequest], Any]
        """The scripted results: in order, per tool, or the function."""
        self.results = self._results(results)
        self.resources: tuple[dict[str, Any], ...] = tuple(_resources(resources))
        """The resources, each with its `text` or `blob` (left out of `resources/list`)."""
        self.resource_templates: tuple[dict[str, Any], ...] = tuple(
            _entries(resource_templates, "resource_templates", _TEMPLATE_KEYS, ("uriTemplate", "name"))
        )
        """The resource templates `resources/templates/list` lists."""
        self.prompts: tuple[dict[str, Any], ...] = tuple(_prompts(prompts))
        """The prompts, each with its `messages` (left out of `prompts/list`)."""
        self.path: str = _path(path)
        """The MCP endpoint's URL path."""
        self.hosts: tuple[str, ...] = _hosts(hosts)
        """The host patterns it answers on; empty: every host."""
        self.sse: bool = _flag(sse, "sse")
        """Whether requests are answered as SSE streams when the client accepts them."""
        self.sessions: bool = _flag(sessions, "sessions")
        """Whether `initialize` issues an `Mcp-Session-Id` that later requests must carry."""
        if protocol_version is not None and protocol_version not in HANDSHAKE_VERSIONS:
            raise ScriptError(
                f"protocol_version: expected one of {', '.join(HANDSHAKE_VERSIONS)} (or None), got {protocol_version!r}"
            )
        self.protocol_version: str | None = protocol_version
        """The version `initialize` always answers, or None: the client's, when known."""
        self.name: str = _text(name, "name")
        """The server's name (`serverInfo.name`)."""
        self.version: str = _text(version, "version")
        """The server's version (`serverInfo.version`)."""
        if instructions is not None:
            _text(instructions, "instructions", empty=True)
        self.instructions: str | None = instructions
        """The `instructions` of the `initialize` result."""
        capabilities: dict[str, Any] = {}
        if self.tools:
            capabilities["tools"] = {"listChanged": False}
        if self.resources or self.resource_templates:
            capabilities["resources"] = {"subscribe": False, "listChanged": False}
        if self.prompts:
            capabilities["prompts"] = {"listChanged": False}
        self.capabilities: dict[str, Any] = capabilities
        """The capabilities `initialize` declares: those the script has something for."""

    # ------------------------------------------------------------------ lookups the wire makes

    def tool(self, name: str) -> dict[str, Any] | None:
        """The listed tool called `name`, or None."""
        return next((tool for tool in self.tools if tool["name"] == name), None)

    def input_errors(self, name: str, arguments: Any) -> list[tuple[str, str]]:
        """How `arguments` break the tool's `inputSchema`: (message, JSON path) pairs, the most relevant first."""
        return _errors(self._input_validators[name], arguments)

    def has_output_schema(self, name: str) -> bool:
        """Whether the tool called `name` declares an `outputSchema`."""
        return name in self._output_validators

    def output_errors(self, name: str, structured: Any) -> list[tuple[str, str]]:
        """How structured content breaks the tool's `outputSchema` (nothing when it has none)."""
        validator = self._output_validators.get(name)
        return [] if validator is None else _errors(validator, structured)

    def served_result(self, value: Any, where: str) -> MCPResult:
        """A result the script function returned, validated as a scripted one (`ScriptError` naming `where`)."""
        return _result(value, where)

    def __repr__(self) -> str:
        names = ", ".join(tool["name"] for tool in self.tools)
        return f"<MCPScript {self.path} tools: {names or 'none'}>"

    # ------------------------------------------------------------------ construction

    def _results(
        self, results: Any
    ) -> tuple[MCPResult, ...] | dict[str, tuple[MCPResult, ...]] | Callable[[RecordedRequest], Any]:
        if callable(results) and not isinstance(results, (Mapping, list, tuple, str)):
            if not self.tools:
                raise ScriptError("results: a function of the call, but tools lists no tool a call could name")
            function: Callable[[RecordedRequest], Any] = results
            return function
        if isinstance(results, (str, bytes)) or not isinstance(results, (Sequence, Mapping)):
            raise ScriptError(
                "results: expected a list of results, a mapping of tool name to a list of results, or a function "
                f"of the call, got {type(results).__name__}"
            )
        if results and not self.tools:
            raise ScriptError("results: given, but tools lists no tool a call could take them with")
        if isinstance(results, Mapping):
            queues: dict[str, tuple[MCPResult, ...]] = {}
            names = [tool["name"] for tool in self.tools]
            for key, queue in results.items():
                if not isinstance(key, str) or key not in names:
                    raise ScriptError(
                        f"results[{key!r}]: no tool of that name is listed (tools: {', '.join(names)})"
                        f"{did_you_mean(str(key), names)}"
                    )
                if isinstance(queue, (str, bytes, Mapping)) or not isinstance(queue, Sequence):
                    raise ScriptError(f"results[{key!r}]: expected a list of results, got {type(queue).__name__}")
                served = tuple(_result(item, f"results[{key!r}][{i}]") for i, item in enumerate(queue))
                for i, result in enumerate(served):
                    self._check_output(key, result, f"results[{key!r}][{i}]")
                queues[key] = served
            return queues
        return tuple(_result(item, f"results[{i}]") for i, item in enumerate(results))

    def _check_output(self, name: str, result: MCPResult, where: str) -> None:
        """A successful result of a tool with an `outputSchema` carries structured content that fits it."""
        if result.result is None or result.result.get("isError") or name not in self._output_validators:
            return
        if "structuredContent" not in result.result:
            raise ScriptError(
                f"{where}: the tool {name!r} declares an outputSchema, so a result must carry structuredContent "
                "(the MCP SDK's client refuses one without it)"
            )
        errors = self.output_errors(name, result.result["structuredContent"])
        if errors:
            message, path = errors[0]
            raise ScriptError(f"{where}.structuredContent{path[1:]}: breaks the tool's outputSchema: {message}")


# ---------------------------------------------------------------------- validation helpers


@functools.cache
def _jsonschema() -> Callable[..., Any]:
    """`jsonschema.validators.validator_for`, imported on first use."""
    try:
        from jsonschema.validators import validator_for
    except ImportError:  # pragma: no cover - the extra is installed in every test environment
        raise UsageError(
            "MCPScript validates JSON Schemas with the jsonschema library: pip install 'wirescript[mcp]'"
        ) from None
    return validator_for  # type: ignore[no-any-return]


def _schema(tool: dict[str, Any], key: str, index: int, validator_for: Callable[..., Any]) -> Validator:
    """A compiled validator for a tool's schema (JSON Schema 2020-12 unless `$schema` says otherwise)."""
    from jsonschema import Draft202012Validator, SchemaError

    schema = tool[key]
    where = f"tools[{index}].{key}"
    if not isinstance(schema, Mapping):
        raise ScriptError(f"{where}: expected a JSON Schema object, got {type(schema).__name__}")
    if schema.get("type") != "object":
        raise ScriptError(
            f"{where}: expected a schema of type 'object', as the MCP schema has it, got {schema.get('type')!r}"
        )
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        path = "".join(f"[{part!r}]" for part in exc.absolute_path)
        raise ScriptError(f"{where}{path}: not a valid JSON Schema: {exc.message}") from None
    validator: Validator = cls(schema)
    return validator


def _errors(validator: Validator, value: Any) -> list[tuple[str, str]]:
    from jsonschema.exceptions import relevance

    found = sorted(validator.iter_errors(value), key=relevance, reverse=True)
    return [(error.message, error.json_path) for error in found]


def _each(items: Sequence[dict[str, Any]]) -> Iterable[tuple[int, dict[str, Any]]]:
    return enumerate(items)


def _plain(value: Any, where: str) -> dict[str, Any]:
    """A mapping entry as a dict: an SDK model is dumped as the wire carries it."""
    if not isinstance(value, Mapping) and callable(getattr(value, "model_dump", None)):
        value = value.model_dump(by_alias=True, mode="json", exclude_none=True)
    if not isinstance(value, Mapping):
        raise ScriptError(f"{where}: expected a mapping, got {type(value).__name__}")
    for key in value:
        if not isinstance(key, str):
            raise ScriptError(f"{where}: keys are strings, got {type(key).__name__} {key!r}")
    return dict(value)


def _known(entry: Mapping[str, Any], where: str, keys: Sequence[str]) -> None:
    for key in entry:
        if key not in keys:
            raise ScriptError(f"{where}: unknown field {key!r} (expected one of: {', '.join(keys)}){_hint(key, keys)}")


def _hint(key: str, keys: Sequence[str]) -> str:
    """`did you mean` for a field, also across spellings: `input_schema` is `inputSchema`."""
    folded = key.replace("_", "").lower()
    same = next((k for k in keys if k.replace("_", "").lower() == folded), None)
    return f"; did you mean {same!r}?" if same is not None else did_you_mean(key, keys)


def _required(entry: Mapping[str, Any], where: str, keys: Sequence[str]) -> None:
    for key in keys:
        if key not in entry:
            raise ScriptError(f"{where}: missing required field {key!r}")
        _text(entry[key], f"{where}.{key}")


def _text(value: Any, where: str, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ScriptError(f"{where}: expected a string, got {type(value).__name__} {shown(value, 40)}")
    if not value and not empty:
        raise ScriptError(f"{where}: expected a non-empty string")
    return value


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ScriptError(f"{where}: expected True or False, got {type(value).__name__} {value!r}")
    return value


def _json(value: Any, where: str) -> None:
    problem = _not_json(value, "", set(), 1)
    if problem is not None:
        raise ScriptError(f"{where}: not JSON: {problem}")


def _list(value: Any, where: str) -> Sequence[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise ScriptError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _entries(
    items: Any, where: str, keys: Sequence[str], required: Sequence[str], extra: Sequence[str] = ()
) -> Iterable[dict[str, Any]]:
    """Each entry of a list of wire objects, checked: known fields, required strings, JSON values, unique names."""
    seen: dict[str, int] = {}
    unique = required[0]
    for index, item in enumerate(_list(items, where)):
        at = f"{where}[{index}]"
        entry = _plain(item, at)
        _known(entry, at, (*keys, *extra))
        _required(entry, at, required)
        _json(entry, at)
        key = entry[unique]
        if key in seen:
            raise ScriptError(f"{at}.{unique}: {key!r} is already {where}[{seen[key]}]'s; each is listed once")
        seen[key] = index
        yield entry


def _tools(tools: Any) -> Iterable[dict[str, Any]]:
    for index, tool in enumerate(_entries(tools, "tools", _TOOL_KEYS, ("name",))):
        tool.setdefault("inputSchema", {"type": "object"})
        if "description" in tool:
            _text(tool["description"], f"tools[{index}].description", empty=True)
        yield tool


def _resources(resources: Any) -> Iterable[dict[str, Any]]:
    for index, resource in enumerate(
        _entries(resources, "resources", _RESOURCE_KEYS, ("uri", "name"), ("text", "blob"))
    ):
        where = f"resources[{index}]"
        given = [key for key in ("text", "blob") if key in resource]
        if len(given) != 1:
            raise ScriptError(
                f"{where}: expected its contents as one of 'text' (a string) or 'blob' (base64), "
                f"got {' and '.join(repr(k) for k in given) or 'neither'}"
            )
        if "text" in resource:
            _text(resource["text"], f"{where}.text", empty=True)
        else:
            _base64(resource["blob"], f"{where}.blob")
        yield resource


def _prompts(prompts: Any) -> Iterable[dict[str, Any]]:
    for index, prompt in enumerate(_entries(prompts, "prompts", _PROMPT_KEYS, ("name",))):
        where = f"prompts[{index}]"
        names: set[str] = set()
        for i, argument in enumerate(_list(prompt.get("arguments", []), f"{where}.arguments")):
            at = f"{where}.arguments[{i}]"
            argument = _plain(argument, at)
            _known(argument, at, _ARGUMENT_KEYS)
            _required(argument, at, ("name",))
            if "required" in argument:
                _flag(argument["required"], f"{at}.required")
            if argument["name"] in names:
                raise ScriptError(f"{at}.name: {argument['name']!r} is listed twice")
            names.add(argument["name"])
        if "messages" not in prompt:
            raise ScriptError(f"{where}: missing required field 'messages' (what prompts/get answers)")
        prompt["messages"] = [
            _message(m, f"{where}.messages[{i}]") for i, m in enumerate(_list(prompt["messages"], f"{where}.messages"))
        ]
        yield prompt


def _message(message: Any, where: str) -> dict[str, Any]:
    if isinstance(message, str):
        return {"role": "user", "content": {"type": "text", "text": message}}
    entry = _plain(message, where)
    _known(entry, where, ("role", "content"))
    if entry.get("role") not in _ROLES:
        raise ScriptError(f"{where}.role: expected 'user' or 'assistant', got {entry.get('role')!r}")
    if "content" not in entry:
        raise ScriptError(f"{where}: missing required field 'content' (one content block)")
    content = entry["content"]
    entry["content"] = (
        {"type": "text", "text": content} if isinstance(content, str) else _block(content, f"{where}.content")
    )
    return entry


def _block(block: Any, where: str) -> dict[str, Any]:
    """One content block (text, image, audio, resource_link, resource), checked as the schema has it."""
    entry = _plain(block, where)
    kind = entry.get("type")
    if kind not in _BLOCK_KEYS:
        raise ScriptError(f"{where}.type: expected one of {', '.join(_BLOCK_KEYS)}, got {kind!r}")
    required, optional = _BLOCK_KEYS[kind]
    _known(entry, where, ("type", *required, *optional))
    for key in required:
        if key not in entry:
            raise ScriptError(f"{where}: a {kind} block needs {key!r}")
    if kind == "text":
        _text(entry["text"], f"{where}.text", empty=True)
    elif kind in ("image", "audio"):
        _base64(entry["data"], f"{where}.data")
        _text(entry["mimeType"], f"{where}.mimeType")
    elif kind == "resource_link":
        _text(entry["uri"], f"{where}.uri")
        _text(entry["name"], f"{where}.name")
    else:
        resource = _plain(entry["resource"], f"{where}.resource")
        _text(resource.get("uri"), f"{where}.resource.uri")
        if ("text" in resource) == ("blob" in resource):
            raise ScriptError(f"{where}.resource: expected one of 'text' or 'blob'")
    _json(entry, where)
    return entry


def _base64(value: Any, where: str) -> None:
    _text(value, where, empty=True)
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ScriptError(f"{where}: expected base64-encoded bytes (base64.b64encode(data).decode())") from None


def _result(value: Any, where: str) -> MCPResult:
    """A tool result in its wire shape, from any `ResultLike` (`ScriptError` naming `where`)."""
    if isinstance(value, MCPResult):
        return value
    if isinstance(value, str):
        return MCPResult(result={"content": [{"type": "text", "text": value}]})
    entry = _plain(value, where) if value is not None else None
    if entry is None:
        raise ScriptError(f"{where}: expected a result (text, a CallToolResult mapping or an error), got None")
    _known(entry, where, _RESULT_KEYS)
    if "error" in entry:
        if len(entry) != 1:
            others = ", ".join(repr(k) for k in entry if k != "error")
            raise ScriptError(f"{where}: an 'error' result is a JSON-RPC error; it takes no {others}")
        return MCPResult(error=_rpc_error(entry["error"], f"{where}.error"))
    content: list[dict[str, Any]] = []
    if "text" in entry:
        content.append({"type": "text", "text": _text(entry["text"], f"{where}.text", empty=True)})
    if "content" in entry:
        blocks = _list(entry["content"], f"{where}.content")
        content.extend(_block(block, f"{where}.content[{i}]") for i, block in enumerate(blocks))
    result: dict[str, Any] = {"content": content}
    if "structuredContent" in entry:
        structured = entry["structuredContent"]
        if not isinstance(structured, Mapping):
            raise ScriptError(f"{where}.structuredContent: expected a JSON object, got {type(structured).__name__}")
        _json(structured, f"{where}.structuredContent")
        result["structuredContent"] = dict(structured)
        if "text" not in entry and "content" not in entry:
            # The spec: a tool that returns structured content SHOULD also return it serialized, as text.
            content.append({"type": "text", "text": json_dumps(structured)})
    elif "text" not in entry and "content" not in entry:
        raise ScriptError(f"{where}: expected 'text', 'content' or 'structuredContent' (or 'error')")
    if "isError" in entry:
        result["isError"] = _flag(entry["isError"], f"{where}.isError")
    if "_meta" in entry:
        if not isinstance(entry["_meta"], Mapping):
            raise ScriptError(f"{where}._meta: expected a JSON object")
        _json(entry["_meta"], f"{where}._meta")
        result["_meta"] = dict(entry["_meta"])
    return MCPResult(result=result)


def _rpc_error(value: Any, where: str) -> dict[str, Any]:
    error = _plain(value, where)
    _known(error, where, ("code", "message", "data"))
    code = error.get("code")
    if isinstance(code, bool) or not isinstance(code, int):
        raise ScriptError(f"{where}.code: expected a JSON-RPC error code (an int such as -32000), got {code!r}")
    _text(error.get("message"), f"{where}.message")
    _json(error, where)
    return error


def _path(path: Any) -> str:
    _text(path, "path")
    if not path.startswith("/") or "?" in path or "#" in path or (path != "/" and path.endswith("/")):
        raise ScriptError(f"path: expected a URL path such as '/mcp' (no query, no trailing '/'), got {path!r}")
    return str(path)


def _hosts(hosts: Any) -> tuple[str, ...]:
    if hosts is None:
        return ()
    chosen = (hosts,) if isinstance(hosts, str) else tuple(hosts)
    for host in chosen:
        if not isinstance(host, str):
            raise ScriptError(f"hosts: expected host names or patterns, got {type(host).__name__} {host!r}")
    try:
        host_matcher(chosen)
    except UsageError as exc:
        raise ScriptError(f"hosts: {exc}") from None
    return chosen
