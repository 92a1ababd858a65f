"""The server tool blocks and cited text of the Anthropic Messages answer, shared by the Anthropic and Bedrock wires.

A turn's server tools become `server_tool_use` blocks each followed by its result block
(`web_search_tool_result`, `web_fetch_tool_result`, `code_execution_tool_result`,
`bash_code_execution_tool_result`, `text_editor_code_execution_tool_result`,
`tool_search_tool_result`, or the error variant), an MCP server's tool `mcp_tool_use` and
`mcp_tool_result` (the MCP connector), its listing `mcp_tool_listing`; cited text becomes text
blocks with `web_search_result_location` citations. The shapes are the anthropic SDK's own types
(`types/server_tool_use_block.py`, `types/web_search_tool_result_block.py`, ..., and
`types/beta/beta_mcp_tool_use_block.py` for the MCP connector's).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..recorded import RecordedRequest
from ..script import MCP_LIST_TOOLS, ServerTool, Turn
from ._decode import as_dict, as_list
from ._messages_rules import header_betas
from ._server import citations_from_spans, counts, first_problem, request_tool_types, segments

__all__ = [
    "INPUT_BLOCKS",
    "RESULT_BLOCKS",
    "decoded_billing",
    "decoded_server_tools",
    "decoded_text",
    "rich_blocks",
    "server_tools_problem",
    "server_usage",
]

INPUT_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")
"""The blocks whose `input` is streamed as `input_json_delta` fragments."""

RESULT_BLOCKS = {
    "web_search": "web_search_tool_result",
    "web_fetch": "web_fetch_tool_result",
    "code_execution": "code_execution_tool_result",
    "bash_code_execution": "bash_code_execution_tool_result",
    "text_editor_code_execution": "text_editor_code_execution_tool_result",
    "tool_search_tool_regex": "tool_search_tool_result",
    "tool_search_tool_bm25": "tool_search_tool_result",
}
"""Each Anthropic server tool's result block."""

_RESULT_ERRORS = {
    "web_search_tool_result": "web_search_tool_result_error",
    "web_fetch_tool_result": "web_fetch_tool_result_error",
    "code_execution_tool_result": "code_execution_tool_result_error",
    "bash_code_execution_tool_result": "bash_code_execution_tool_result_error",
    "text_editor_code_execution_tool_result": "text_editor_code_execution_tool_result_error",
    "tool_search_tool_result": "tool_search_tool_result_error",
}
_RESULT_KINDS = (*_RESULT_ERRORS, "mcp_tool_result")


def rich_blocks(turn: Turn, index: int) -> list[dict[str, Any]]:
    """The content of a turn with server tools or citations: thinking, server tools, cited text, tool calls."""
    out: list[dict[str, Any]] = []
    if turn.thinking is not None:
        signature = turn.thinking_signature or f"sig_{index:04d}"
        out.append({"type": "thinking", "thinking": turn.thinking, "signature": signature})
    for k, tool in enumerate(turn.server_tools or ()):
        out.extend(_server_blocks(tool, index, k))
    if turn.text is not None:
        if turn.citations is None:
            out.append({"type": "text", "text": turn.text})
        else:
            for c, (piece, backing) in enumerate(segments(turn)):
                block: dict[str, Any] = {"type": "text", "text": piece}
                if backing:
                    block["citations"] = [
                        {
                            "type": "web_search_result_location",
                            "url": cite.url,
                            "title": cite.title,
                            "encrypted_index": f"ei_{index:04d}_{c}_{n}",
                            "cited_text": cite.cited_text,
                        }
                        for n, cite in enumerate(backing)
                    ]
                out.append(block)
    for k, call in enumerate(turn.tool_calls):
        out.append(
            {"type": "tool_use", "id": call.id or f"toolu_{index:04d}_{k}", "name": call.name, "input": call.input}
        )
    return out


def server_usage(turn: Turn) -> dict[str, int]:
    """`usage.server_tool_use`: the web searches and fetches the turn is billed for."""
    searches, fetches = counts(turn)
    return {"web_search_requests": searches, "web_fetch_requests": fetches}


def _server_blocks(tool: ServerTool, index: int, k: int) -> list[dict[str, Any]]:
    """A server tool's blocks: its use then its result (none while it is unanswered), or an MCP server's listing."""
    if tool.server is not None and tool.name == MCP_LIST_TOOLS:
        tools = [
            {"name": t["name"], "input_schema": t.get("input_schema", {"type": "object"}), **_description(t)}
            for t in tool.result or ()
        ]
        return [{"type": "mcp_tool_listing", "mcp_server_name": tool.server, "tools": tools}]
    if tool.server is not None:
        use_id = tool.id or f"mcptoolu_{index:04d}_{k}"
        use = {"type": "mcp_tool_use", "id": use_id, "name": tool.name, "server_name": tool.server, "input": tool.input}
        if tool.pending:
            return [use]
        said = tool.error if tool.error is not None else tool.result
        result = {
            "type": "mcp_tool_result",
            "tool_use_id": use_id,
            "is_error": tool.error is not None,
            "content": [{"type": "text", "text": said}],
        }
        return [use, result]
    use_id = tool.id or f"srvtoolu_{index:04d}_{k}"
    use = {"type": "server_tool_use", "id": use_id, "name": tool.name, "input": tool.input}
    if tool.pending:
        return [use]
    kind = RESULT_BLOCKS[tool.name]
    if tool.error is not None:
        content: Any = {"type": _RESULT_ERRORS[kind], "error_code": tool.error}
        if kind in ("text_editor_code_execution_tool_result", "tool_search_tool_result"):
            content["error_message"] = None
    else:
        content = _result_content(tool, index, k)
    return [use, {"type": kind, "tool_use_id": use_id, "content": content}]


def _description(tool: Mapping[str, Any]) -> dict[str, Any]:
    return {"description": tool["description"]} if "description" in tool else {}


def _result_content(tool: ServerTool, index: int, k: int) -> Any:
    name, result = tool.name, tool.result
    if name == "web_search":
        return [
            {
                "type": "web_search_result",
                "url": r["url"],
                "title": r.get("title", r["url"]),
                "encrypted_content": f"ec_{index:04d}_{k}_{n}",
                "page_age": r.get("page_age"),
            }
            for n, r in enumerate(result)
        ]
    if name == "web_fetch":
        url = result.get("url") or tool.input.get("url") or ""
        document: dict[str, Any] = {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": result["content"]},
        }
        if "title" in result:
            document["title"] = result["title"]
        return {"type": "web_fetch_result", "url": url, "content": document, "retrieved_at": result.get("retrieved_at")}
    if name.startswith("tool_search_tool_"):
        return {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": n} for n in result],
        }
    if name == "text_editor_code_execution":
        command = tool.input["command"]
        defaults: dict[str, Any] = {"view": {"file_type": "text", "content": ""}, "create": {"is_file_update": False}}
        return {"type": f"text_editor_code_execution_{command}_result", **defaults.get(command, {}), **result}
    kind = "bash_code_execution" if name == "bash_code_execution" else "code_execution"
    return {
        "type": f"{kind}_result",
        "stdout": result.get("stdout", ""),
        "stderr": result.get("stderr", ""),
        "return_code": result.get("return_code", 0),
        "content": [],
    }


_TOOL_TYPE = {
    "web_search": ("web_search_", "`web_search_*` tool", '{"type": "web_search_20250305", "name": "web_search"}'),
    "web_fetch": ("web_fetch_", "`web_fetch_*` tool", '{"type": "web_fetch_20250910", "name": "web_fetch"}'),
    "tool_search_tool_regex": (
        "tool_search_tool_regex",
        "`tool_search_tool_regex*` tool",
        '{"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}',
    ),
    "tool_search_tool_bm25": (
        "tool_search_tool_bm25",
        "`tool_search_tool_bm25*` tool",
        '{"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}',
    ),
}
_CODE_TOOLS = ("code_execution", "bash_code_execution", "text_editor_code_execution")
_DYNAMIC = re.compile(r"web_(search|fetch)_(\d{8})")
"""Web search and fetch tools from `_20260209` run code execution themselves (dynamic filtering)."""
_ON_BEDROCK = ("tool_search_tool_regex", "tool_search_tool_bm25")
_BEDROCK_DOCS = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool"
_MCP_DOCS = "https://platform.claude.com/docs/en/agents-and-tools/mcp-connector#pin-mcp-tool-list"
_LISTING_BETA = "mcp-client-2026-09-15"
"""The beta with which the API records an MCP server's tool list in an `mcp_tool_listing` block."""


def server_tools_problem(turn: Turn, record: RecordedRequest, *, bedrock: bool = False) -> str | None:
    """Why the API could not have answered `record` with the turn's server tools and citations, or None.

    The API runs only the server tools a request enables: a `web_search_*` tool for web search, a
    `code_execution_*` tool (or a web tool of `_20260209` or later, which runs code itself) for
    code execution, a server of `mcp_servers` for an MCP tool. Citations are of web pages: a file
    citation is OpenAI's. Claude on Bedrock (InvokeModel) runs only the tool search tools
    (`bedrock`), as the tool search docs say; its other server tools are the Claude API's.
    """
    types = request_tool_types(record)
    body = record.body if isinstance(record.body, dict) else {}
    servers = [s.get("name") for s in as_list(body.get("mcp_servers")) if isinstance(s, dict)]
    betas = header_betas(record.headers.get("anthropic-beta"))
    return first_problem(
        [
            *(_tool_problem(tool, types, servers, bedrock) for tool in turn.server_tools or ()),
            *(
                f"it lists the tools of the MCP server {tool.server!r} (an `mcp_tool_listing` block), which the API "
                f"sends only with the beta `{_LISTING_BETA}` ({_MCP_DOCS}); add it to the request's betas, or take "
                "the listing out of the turn"
                for tool in turn.server_tools or ()
                if tool.server is not None and tool.name == MCP_LIST_TOOLS and _LISTING_BETA not in betas
            ),
            *(
                f"citations[{n}] cites the file {c.file_id!r}: Anthropic cites web pages here (file citations are "
                "OpenAI's); cite a url or a search result instead"
                for n, c in enumerate(turn.citations or ())
                if c.file_id is not None
            ),
        ]
    )


def _tool_problem(tool: ServerTool, types: Sequence[str], servers: Sequence[Any], bedrock: bool) -> str | None:
    name = tool.name
    if bedrock and name not in _ON_BEDROCK:
        what = f"an MCP server's tool ({tool.server!r})" if tool.server is not None else f"the server tool {name!r}"
        return (
            f"it runs {what}, which Claude on Amazon Bedrock does not run: of the server tools, Bedrock's "
            f"InvokeModel serves only tool search ({_BEDROCK_DOCS}); take it out of the turn for Bedrock"
        )
    if tool.server is not None:
        if tool.server in servers:
            return None
        known = ", ".join(repr(s) for s in servers) or "none"
        return (
            f"it runs a tool of the MCP server {tool.server!r}, which the request does not connect: its "
            f"`mcp_servers` names {known} (the MCP connector, beta `mcp-client-2025-11-20`). Add the server to "
            "the request, or take the call out of the turn"
        )
    if name in _CODE_TOOLS:
        dynamic = any((m := _DYNAMIC.fullmatch(t)) is not None and m.group(2) >= "20260209" for t in types)
        if dynamic or any(t.startswith("code_execution_") for t in types):
            return None
        return (
            f"it runs the server tool {name!r}, which the request did not enable: its `tools` has no "
            "`code_execution_*` tool (nor a web search or fetch tool of `_20260209` or later, which runs code "
            'itself). Add one to the request (`{"type": "code_execution_20250825", "name": "code_execution"}`), '
            "or take the server tool out of the turn"
        )
    found = _TOOL_TYPE.get(name)
    if found is None:
        return (
            f"it runs the server tool {name!r}, which is not an Anthropic server tool (it is OpenAI's); take it "
            "out of the turn for Anthropic"
        )
    prefix, needed, example = found
    if any(t.startswith(prefix) for t in types):
        return None
    return (
        f"it runs the server tool {name!r}, which the request did not enable: its `tools` has no {needed} (the "
        f"API runs only the server tools a request enables). Add one to the request (`{example}`), or take "
        "the server tool out of the turn"
    )


def decoded_server_tools(blocks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The server tool blocks of a Message as a turn's `server_tools`: each use with its result or error."""
    results = {b.get("tool_use_id"): b for b in blocks if b.get("type") in _RESULT_KINDS}
    tools: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "mcp_tool_listing" and isinstance(block.get("mcp_server_name"), str):
            listed = [
                {k: t[k] for k in ("name", "input_schema", "description") if k in t}
                for t in as_list(block.get("tools"))
                if isinstance(t, dict) and isinstance(t.get("name"), str)
            ]
            tools.append({"name": MCP_LIST_TOOLS, "server": block["mcp_server_name"], "result": listed})
            continue
        if kind not in ("server_tool_use", "mcp_tool_use") or not isinstance(block.get("name"), str):
            continue
        entry: dict[str, Any] = {"name": block["name"], "input": as_dict(block.get("input"))}
        if kind == "mcp_tool_use" and isinstance(block.get("server_name"), str):
            entry["server"] = block["server_name"]
        if isinstance(block.get("id"), str):
            entry["id"] = block["id"]
        found = results.get(block.get("id"))
        if found is not None:
            entry.update(_decoded_result(block["name"], found))
        tools.append(entry)
    return tools


def _decoded_result(name: str, block: Mapping[str, Any]) -> dict[str, Any]:
    content = block.get("content")
    if block.get("type") == "mcp_tool_result":
        text = (
            content
            if isinstance(content, str)
            else "".join(b.get("text", "") for b in as_list(content) if isinstance(b, dict))
        )
        return {"error": text or "error"} if block.get("is_error") else {"result": text}
    if isinstance(content, dict) and isinstance(content.get("error_code"), str):
        return {"error": content["error_code"]}
    if name == "web_search":
        return {
            "result": [
                {k: r[k] for k in ("url", "title", "page_age") if isinstance(r.get(k), str)}
                for r in as_list(content)
                if isinstance(r, dict) and isinstance(r.get("url"), str)
            ]
        }
    content = as_dict(content)
    if name == "web_fetch":
        document = as_dict(content.get("content"))
        source = as_dict(document.get("source"))
        fetched = {"url": content.get("url"), "content": source.get("data"), "title": document.get("title")}
        fetched["retrieved_at"] = content.get("retrieved_at")
        return {"result": {k: v for k, v in fetched.items() if isinstance(v, str)}}
    if name.startswith("tool_search_tool_"):
        refs = as_list(content.get("tool_references"))
        return {"result": [r["tool_name"] for r in refs if isinstance(r, dict) and isinstance(r.get("tool_name"), str)]}
    if name == "text_editor_code_execution":
        return {"result": {k: v for k, v in content.items() if k != "type" and v is not None}}
    run = {k: content[k] for k in ("stdout", "stderr") if isinstance(content.get(k), str)}
    if isinstance(content.get("return_code"), int):
        run["return_code"] = content["return_code"]
    return {"result": run}


def decoded_billing(billed: Mapping[str, Any], tools: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """`usage.server_tool_use` counts that differ from what the decoded server tools count (a turn's defaults)."""
    counted = {
        "web_search_requests": sum(t["name"] == "web_search" and "server" not in t and "error" not in t for t in tools),
        "web_fetch_requests": sum(t["name"] == "web_fetch" and "server" not in t and "error" not in t for t in tools),
    }
    return {
        key: value
        for key, value in billed.items()
        if key in counted and isinstance(value, int) and not isinstance(value, bool) and value != counted[key]
    }


def decoded_text(blocks: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> tuple[str, list[Any]]:
    """The text blocks of a Message joined, and their citations as the turn's (spans where a block is cited)."""
    known = [r for t in tools if t.get("name") == "web_search" and "server" not in t for r in t.get("result") or ()]
    text = ""
    spans: list[tuple[int, int, dict[str, Any]]] = []
    for block in blocks:
        if block.get("type") != "text" or not isinstance(block.get("text"), str):
            continue
        start = len(text)
        text += block["text"]
        for citation in as_list(block.get("citations")):
            if isinstance(citation, dict) and isinstance(citation.get("url"), str):
                source = {k: citation.get(k) for k in ("url", "title", "cited_text")}
                spans.append((start, len(text), source))
    return text, list(citations_from_spans(text, spans, known))
