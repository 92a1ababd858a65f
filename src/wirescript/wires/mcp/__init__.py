"""MCP: a scripted MCP server on the Streamable HTTP transport, served by a stub next to the model.

`MCPScript` (its tools, their results, resources and prompts) is what a test writes;
`MCPWire` serves it at its path and consumes no model turn (`ScriptTransport(script, mcp=...)`
builds one per stub). Its strict rules are in `rules`.
"""

from __future__ import annotations

from .rules import RULES
from .script import HANDSHAKE_VERSIONS, LATEST_VERSION, MCPResult, MCPScript
from .wire import MCPWire

__all__ = ["HANDSHAKE_VERSIONS", "LATEST_VERSION", "RULES", "MCPResult", "MCPScript", "MCPWire"]
