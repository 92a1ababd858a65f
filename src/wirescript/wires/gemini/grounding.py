"""Gemini's built-in tools: Grounding with Google Search (`groundingMetadata`) and code execution parts.

A turn's `web_search` server tools become the candidate's `groundingMetadata`: their queries
`webSearchQueries`, their results `groundingChunks`, its citations `groundingSupports` (each span
of the text, in UTF-8 bytes as the API measures them, with the chunks backing it). A
`code_execution` server tool becomes an `executableCode` part and its `codeExecutionResult`. The
shapes are google-genai's own types (`types.GroundingMetadata`, `ExecutableCode`,
`CodeExecutionResult`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...recorded import RecordedRequest
from ...script import ServerTool, Turn, sources
from .._decode import as_dict, as_list
from .._server import citations_from_spans, cited

__all__ = ["code_parts", "decoded_code", "decoded_grounding", "grounding_metadata", "server_tools_problem"]

_SEARCH_TOOLS = ("googleSearch", "google_search", "googleSearchRetrieval", "google_search_retrieval")
_CODE_TOOLS = ("codeExecution", "code_execution")
_OUTCOMES = {"ran": "OUTCOME_OK", "failed": "OUTCOME_FAILED", "execution_time_exceeded": "OUTCOME_DEADLINE_EXCEEDED"}


def code_parts(turn: Turn) -> list[dict[str, Any]]:
    """The parts of the turn's code execution: each `executableCode`, then its `codeExecutionResult`."""
    parts: list[dict[str, Any]] = []
    for tool in turn.server_tools or ():
        if tool.name != "code_execution":
            continue
        parts.append({"executableCode": {"language": "PYTHON", "code": str(tool.input.get("code", ""))}})
        if tool.pending:
            continue
        result = tool.result if isinstance(tool.result, dict) else {}
        if tool.error is not None:
            outcome = _OUTCOMES.get(tool.error, "OUTCOME_FAILED")
        else:
            outcome = "OUTCOME_OK" if result.get("return_code", 0) == 0 else "OUTCOME_FAILED"
        output = str(result.get("stdout", "")) + ("" if outcome == "OUTCOME_OK" else str(result.get("stderr", "")))
        executed: dict[str, Any] = {"outcome": outcome}
        if output:
            executed["output"] = output
        parts.append({"codeExecutionResult": executed})
    return parts


def grounding_metadata(turn: Turn) -> dict[str, Any] | None:
    """The candidate's `groundingMetadata` for the turn's web searches and citations, or None when it has neither."""
    searches = [t for t in turn.server_tools or () if t.name == "web_search" and t.server is None]
    if not searches and turn.citations is None:
        return None
    queries: list[str] = []
    for tool in searches:
        asked = tool.input.get("queries")
        queries += [q for q in asked if isinstance(q, str)] if isinstance(asked, list) else []
        if isinstance(tool.input.get("query"), str):
            queries.append(tool.input["query"])
    chunks = [
        {"web": {"uri": result["url"], "title": result.get("title", result["url"])}} for _, result in sources(turn)
    ]
    text = turn.text or ""
    supports: dict[tuple[int, int], list[int]] = {}
    for cite in cited(turn):
        if cite.source is not None:
            chunk = cite.source
        else:
            chunk = len(chunks)
            chunks.append({"web": {"uri": cite.url, "title": cite.title}})
        supports.setdefault((cite.start, cite.end), []).append(chunk)
    metadata: dict[str, Any] = {}
    if queries:
        metadata["webSearchQueries"] = queries
    if chunks:
        metadata["groundingChunks"] = chunks
    if supports:
        metadata["groundingSupports"] = [
            {"segment": _segment(text, start, end), "groundingChunkIndices": indices}
            for (start, end), indices in sorted(supports.items())
        ]
    return metadata


def _segment(text: str, start: int, end: int) -> dict[str, Any]:
    """A `Segment`: its offsets in UTF-8 bytes (proto3 JSON leaves out a zero), and its text."""
    segment: dict[str, Any] = {}
    first = len(text[:start].encode())
    if first:
        segment["startIndex"] = first
    segment["endIndex"] = first + len(text[start:end].encode())
    segment["text"] = text[start:end]
    return segment


def server_tools_problem(turn: Turn, record: RecordedRequest) -> str | None:
    """Why Gemini could not have answered `record` with the turn's server tools and citations, or None.

    Grounding needs a `googleSearch` tool in the request, code execution a `codeExecution` tool;
    Gemini grounds on web pages, so a file citation, and the other server tools, are not its own.
    """
    keys = {key for tool in record.tools if isinstance(tool, dict) for key in tool}
    for tool in turn.server_tools or ():
        problem = _tool_problem(tool, keys)
        if problem is not None:
            return problem
    for n, citation in enumerate(turn.citations or ()):
        if citation.file_id is not None:
            return f"citations[{n}] cites the file {citation.file_id!r}: Gemini grounds on web pages; cite a url"
    return None


def _tool_problem(tool: ServerTool, keys: set[str]) -> str | None:
    if tool.server is None and tool.name == "web_search":
        if keys.intersection(_SEARCH_TOOLS):
            return None
        return (
            "it grounds on a web search, which the request did not enable: its `tools` has no `googleSearch` tool. "
            'Add `{"googleSearch": {}}` (google-genai: `types.Tool(google_search=types.GoogleSearch())`), or take '
            "the server tool out of the turn"
        )
    if tool.server is None and tool.name == "code_execution":
        if keys.intersection(_CODE_TOOLS):
            return None
        return (
            "it runs code, which the request did not enable: its `tools` has no `codeExecution` tool. Add "
            '`{"codeExecution": {}}` (google-genai: `types.Tool(code_execution=types.ToolCodeExecution())`), or '
            "take the server tool out of the turn"
        )
    what = f"an MCP server's tool ({tool.server!r})" if tool.server is not None else f"the server tool {tool.name!r}"
    return (
        f"it runs {what}, which wirescript's Gemini wire does not render (it renders web_search as Google Search "
        "grounding and code_execution); take it out of the turn for Gemini"
    )


def decoded_code(parts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The code execution parts of an answer as `code_execution` server tools: each code with its result."""
    tools: list[dict[str, Any]] = []
    for part in parts:
        code = part.get("executableCode")
        executed = part.get("codeExecutionResult")
        if isinstance(code, dict):
            tools.append({"name": "code_execution", "input": {"code": str(code.get("code", ""))}})
        elif isinstance(executed, dict) and tools and "result" not in tools[-1] and "error" not in tools[-1]:
            output = executed.get("output") if isinstance(executed.get("output"), str) else ""
            outcome = executed.get("outcome")
            if outcome == "OUTCOME_DEADLINE_EXCEEDED":
                tools[-1]["error"] = "execution_time_exceeded"
            elif outcome == "OUTCOME_FAILED":
                tools[-1]["result"] = {"stderr": output, "return_code": 1}
            else:
                tools[-1]["result"] = {"stdout": output} if output else {}
    return tools


def decoded_grounding(metadata: Any, text: str) -> tuple[list[dict[str, Any]], list[Any]]:
    """A candidate's `groundingMetadata` as `web_search` server tools (one per query) and the text's citations."""
    metadata = as_dict(metadata)
    queries = [q for q in as_list(metadata.get("webSearchQueries")) if isinstance(q, str)]
    results: list[dict[str, Any]] = []
    for chunk in as_list(metadata.get("groundingChunks")):
        web = as_dict(as_dict(chunk).get("web"))
        if isinstance(web.get("uri"), str):
            results.append({k: v for k, v in (("url", web["uri"]), ("title", web.get("title"))) if isinstance(v, str)})
    if not queries and not results:
        return [], []
    tools: list[dict[str, Any]] = [{"name": "web_search", "input": {"query": q}, "result": []} for q in queries or [""]]
    tools[0]["result"] = results
    if not queries:
        tools[0]["input"] = {}
    encoded = text.encode()
    spans: list[tuple[int, int, dict[str, Any]]] = []
    for support in as_list(metadata.get("groundingSupports")):
        segment = as_dict(as_dict(support).get("segment"))
        start_byte = segment.get("startIndex", 0)
        end_byte = segment.get("endIndex")
        if not (isinstance(start_byte, int) and isinstance(end_byte, int)):
            continue
        start = len(encoded[:start_byte].decode(errors="ignore"))
        end = len(encoded[:end_byte].decode(errors="ignore"))
        for index in as_list(as_dict(support).get("groundingChunkIndices")):
            if isinstance(index, int) and 0 <= index < len(results):
                spans.append((start, end, results[index]))
    return tools, list(citations_from_spans(text, spans, results))
