"""The MCP server's strict rules: what a real MCP server refuses, as the 2025-11-25 specification says.

Checked on every MCP request (`MCPWire.check`) while the stub is strict, before any result is
taken; a refused request consumes none and is a `strict` problem, answered as the specification
says a server answers it (`MCPWire.strict_error`): an unknown tool with the JSON-RPC error
`-32602`, arguments that break the tool's `inputSchema` with an `isError` result (a tool execution
error the model can correct), a request of an unknown or ended session with `404`.
"""

from __future__ import annotations

from ..base import Rule

__all__ = [
    "ACCEPT",
    "PROMPT_ARGUMENTS",
    "RULES",
    "SESSION_MISSING",
    "SESSION_UNKNOWN",
    "TOOL_ARGUMENTS",
    "UNKNOWN_TOOL",
]

_SPEC = "https://modelcontextprotocol.io/specification/2025-11-25"

UNKNOWN_TOOL = Rule(
    "mcp.unknown-tool",
    "mcp",
    "A `tools/call` names a tool the server does not list.",
    f"{_SPEC}/server/tools#error-handling: unknown tools are protocol errors, a JSON-RPC error "
    '(`{"code": -32602, "message": "Unknown tool: invalid_tool_name"}`)',
)
TOOL_ARGUMENTS = Rule(
    "mcp.tool-arguments",
    "mcp",
    "A `tools/call`'s arguments break the tool's `inputSchema` (or are not an object).",
    f"{_SPEC}/server/tools#error-handling: input validation errors are tool execution errors, a result with "
    "`isError: true` the model can correct; arguments that are not an object fail the CallToolRequest schema "
    "(a JSON-RPC error -32602)",
)
PROMPT_ARGUMENTS = Rule(
    "mcp.prompt-arguments",
    "mcp",
    "A `prompts/get` leaves out an argument the prompt marks `required`.",
    f"{_SPEC}/server/prompts#error-handling: missing required arguments: -32602 (Invalid params)",
)
SESSION_MISSING = Rule(
    "mcp.session-missing",
    "mcp",
    "A request after `initialize` carries no `Mcp-Session-Id` although the server issued one.",
    f"{_SPEC}/basic/transports#session-management: servers that require a session ID SHOULD respond to "
    "requests without an MCP-Session-Id header (other than initialization) with HTTP 400 Bad Request",
)
SESSION_UNKNOWN = Rule(
    "mcp.session-unknown",
    "mcp",
    "A request carries an `Mcp-Session-Id` the server never issued, or one whose session was ended (`DELETE`).",
    f"{_SPEC}/basic/transports#session-management: after the session is terminated the server MUST respond "
    "to requests containing that session ID with HTTP 404 Not Found",
    status=404,
)
ACCEPT = Rule(
    "mcp.accept",
    "mcp",
    "A POST accepts neither `application/json` nor `text/event-stream` (a GET: not `text/event-stream`).",
    f"{_SPEC}/basic/transports#sending-messages-to-the-server: the client MUST include an Accept header "
    "listing both application/json and text/event-stream; the MCP SDK's server answers 406 Not Acceptable",
    status=406,
)

RULES = (UNKNOWN_TOOL, TOOL_ARGUMENTS, PROMPT_ARGUMENTS, SESSION_MISSING, SESSION_UNKNOWN, ACCEPT)
"""Every rule of the MCP wire, in the order they are checked (the transport's first, then the method's)."""
