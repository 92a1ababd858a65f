"""OpenAI's built-in tools and citations: Responses output items and annotations, Chat Completions' annotations.

A turn's server tools become Responses output items before its message (`web_search_call`,
`file_search_call`, `code_interpreter_call`, `image_generation_call`, `mcp_call`,
`mcp_list_tools`), with their own stream events (`response.web_search_call.searching`, ...); a
client tool call named `computer`, to a request offering the computer tool, a `computer_call`.
Citations become `url_citation` and `file_citation` annotations of the message's text (Chat
Completions: `url_citation` annotations of the message, as its search models send them). The
shapes are the openai SDK's own types (`types/responses/response_output_item.py`,
`response_output_text.py`, `types/chat/chat_completion_message.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ...recorded import RecordedRequest
from ...script import MCP_LIST_TOOLS, ServerTool, ToolCall, Turn
from ...sse import PIECE, json_dumps
from .._decode import as_dict, as_list, json_body
from .._render import chunks
from .._server import citations_from_spans, cited, first_problem, request_tool_types
from ..base import Frame

__all__ = [
    "BUILTIN_EVENTS",
    "chat_annotations",
    "chat_problem",
    "computer_call",
    "decoded_annotations",
    "decoded_items",
    "offers_computer",
    "responses_problem",
    "server_events",
    "server_items",
    "text_annotations",
]

_ITEMS = {
    "web_search": "web_search_call",
    "file_search": "file_search_call",
    "code_execution": "code_interpreter_call",
    "image_generation": "image_generation_call",
}
"""Each built-in tool's output item."""
_PREFIX = {
    "web_search_call": "ws",
    "file_search_call": "fs",
    "code_interpreter_call": "ci",
    "image_generation_call": "ig",
    "mcp_call": "mcp",
    "mcp_list_tools": "mcpl",
    "computer_call": "cu",
}
"""The id prefix of each item, as the API sends them (`ws_…`, `fs_…`, `ci_…`, `ig_…`, `mcp_…`, `mcpl_…`, `cu_…`)."""
_TOOL_TYPES = {
    "web_search": ("web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11"),
    "file_search": ("file_search",),
    "code_execution": ("code_interpreter",),
    "image_generation": ("image_generation",),
}
"""The request `tools[].type` that enables each built-in (openai SDK `types/responses/tool_param.py`)."""
_EXAMPLES = {
    "web_search": '{"type": "web_search"}',
    "file_search": '{"type": "file_search", "vector_store_ids": [...]}',
    "code_execution": '{"type": "code_interpreter", "container": {"type": "auto"}}',
    "image_generation": '{"type": "image_generation"}',
}
_COMPUTER_TYPES = ("computer", "computer_use_preview")
_STATUS = {"ran": "completed", "failed": "failed", "pending": "in_progress"}
_PHASES = {
    "web_search_call": ("response.web_search_call.in_progress", "response.web_search_call.searching"),
    "file_search_call": ("response.file_search_call.in_progress", "response.file_search_call.searching"),
    "image_generation_call": (
        "response.image_generation_call.in_progress",
        "response.image_generation_call.generating",
    ),
}
_DONE = {
    "web_search_call": "response.web_search_call.completed",
    "file_search_call": "response.file_search_call.completed",
    "image_generation_call": "response.image_generation_call.completed",
    "code_interpreter_call": "response.code_interpreter_call.completed",
}

BUILTIN_EVENTS = frozenset(
    {
        *(name for phases in _PHASES.values() for name in phases),
        *_DONE.values(),
        "response.image_generation_call.partial_image",
        "response.code_interpreter_call.in_progress",
        "response.code_interpreter_call_code.delta",
        "response.code_interpreter_call_code.done",
        "response.code_interpreter_call.interpreting",
        "response.mcp_call.in_progress",
        "response.mcp_call_arguments.delta",
        "response.mcp_call_arguments.done",
        "response.mcp_call.completed",
        "response.mcp_call.failed",
        "response.mcp_list_tools.in_progress",
        "response.mcp_list_tools.completed",
        "response.mcp_list_tools.failed",
        "response.output_text.annotation.added",
    }
)
"""The stream events of built-in tool items and annotations (what `fault.drop` may name)."""


def _state(tool: ServerTool) -> str:
    return "failed" if tool.error is not None else "pending" if tool.pending else "ran"


def _includes(body: Mapping[str, Any]) -> Sequence[Any]:
    return as_list(body.get("include"))


def _tool_of(body: Mapping[str, Any], kind: str) -> dict[str, Any]:
    return next((t for t in as_list(body.get("tools")) if isinstance(t, dict) and t.get("type") == kind), {})


def server_items(turn: Turn, index: int, body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The output items of the turn's server tools, in order (before its message)."""
    items = []
    for k, tool in enumerate(turn.server_tools or ()):
        if tool.server is not None:
            items.append(_mcp_item(tool, index, k))
            continue
        kind = _ITEMS[tool.name]
        item: dict[str, Any] = {"id": tool.id or f"{_PREFIX[kind]}_{index:04d}_{k}", "type": kind}
        status = _STATUS[_state(tool)]
        if kind == "web_search_call":
            action = {"type": "search", **tool.input}
            if "web_search_call.action.sources" in _includes(body) and isinstance(tool.result, list):
                action["sources"] = [{"type": "url", "url": r["url"]} for r in tool.result]
            item.update(status=status, action=action)
        elif kind == "file_search_call":
            queries = tool.input.get("queries")
            if not isinstance(queries, list):
                queries = [tool.input["query"]] if isinstance(tool.input.get("query"), str) else []
            results = None
            if "file_search_call.results" in _includes(body) and isinstance(tool.result, list):
                results = [{"attributes": {}, **r} for r in tool.result]
            item.update(status=status, queries=queries, results=results)
        elif kind == "code_interpreter_call":
            container = _tool_of(body, "code_interpreter").get("container")
            outputs = None
            if "code_interpreter_call.outputs" in _includes(body) and isinstance(tool.result, dict):
                logs = str(tool.result.get("stdout", "")) + str(tool.result.get("stderr", ""))
                outputs = [{"type": "logs", "logs": logs}]
            item.update(
                status=status,
                code=tool.input.get("code"),
                container_id=container if isinstance(container, str) else f"cntr_{index:04d}",
                outputs=outputs,
            )
        else:
            item.update(status="generating" if tool.pending else status, result=tool.result)
        items.append(item)
    return items


def _mcp_item(tool: ServerTool, index: int, k: int) -> dict[str, Any]:
    if tool.name == MCP_LIST_TOOLS:
        listed = [{"input_schema": {"type": "object"}, **t} for t in tool.result or ()]
        return {
            "id": tool.id or f"mcpl_{index:04d}_{k}",
            "type": "mcp_list_tools",
            "server_label": tool.server,
            "tools": listed,
            "error": tool.error,
        }
    error = None
    if tool.error is not None:
        error = {"type": "mcp_tool_execution_error", "content": [{"type": "text", "text": tool.error}]}
    return {
        "id": tool.id or f"mcp_{index:04d}_{k}",
        "type": "mcp_call",
        "name": tool.name,
        "server_label": tool.server,
        "arguments": json_dumps(tool.input),
        "output": tool.result,
        "error": error,
        "status": {"ran": "completed", "failed": "failed", "pending": "calling"}[_state(tool)],
    }


def offers_computer(body: Mapping[str, Any]) -> bool:
    """Whether the request offers the computer tool (and no function of that name)."""
    types = [t.get("type") for t in as_list(body.get("tools")) if isinstance(t, dict)]
    named = any(
        isinstance(t, dict) and t.get("type") == "function" and t.get("name") == "computer"
        for t in as_list(body.get("tools"))
    )
    return not named and any(kind in _COMPUTER_TYPES for kind in types)


def computer_call(call: ToolCall, call_id: str, index: int, k: int, status: str) -> dict[str, Any]:
    """A client call of the computer tool: a `computer_call` item, its `action` the call's input."""
    return {
        "id": f"cu_{index:04d}_{k}",
        "type": "computer_call",
        "call_id": call_id,
        "action": call.input,
        "pending_safety_checks": [],
        "status": status,
    }


def text_annotations(turn: Turn) -> list[dict[str, Any]]:
    """The `output_text` annotations of the turn's citations: `url_citation` or `file_citation`."""
    out = []
    for cite in cited(turn):
        if cite.file_id is not None:
            out.append({"type": "file_citation", "file_id": cite.file_id, "filename": cite.filename, "index": cite.end})
        else:
            out.append(
                {
                    "type": "url_citation",
                    "start_index": cite.start,
                    "end_index": cite.end,
                    "url": cite.url,
                    "title": cite.title,
                }
            )
    return out


def chat_annotations(turn: Turn) -> list[dict[str, Any]]:
    """A Chat message's `annotations`: each citation a `url_citation`, as the search models send them."""
    return [
        {
            "type": "url_citation",
            "url_citation": {"start_index": c.start, "end_index": c.end, "url": c.url, "title": c.title},
        }
        for c in cited(turn)
    ]


def server_events(
    item: dict[str, Any],
    output_index: int,
    body: Mapping[str, Any],
    event: Callable[..., Frame],
    deltas: Callable[..., Iterator[Frame]],
) -> Iterator[Frame]:
    """The events of one built-in tool item, from `response.output_item.added` to before its `.done`."""
    kind = item["type"]
    where = {"item_id": item["id"], "output_index": output_index}
    status = item.get("status")
    if kind == "mcp_call":
        calling = {**item, "status": "in_progress", "arguments": "", "output": None, "error": None}
        yield event("response.output_item.added", output_index=output_index, item=calling)
        yield event("response.mcp_call.in_progress", **where)
        yield from deltas("response.mcp_call_arguments.delta", chunks(item["arguments"], 32), **where, delta=PIECE)
        yield event("response.mcp_call_arguments.done", **where, arguments=item["arguments"])
        if status != "calling":
            yield event("response.mcp_call.failed" if status == "failed" else "response.mcp_call.completed", **where)
        return
    if kind == "mcp_list_tools":
        yield event("response.output_item.added", output_index=output_index, item={**item, "tools": []})
        yield event("response.mcp_list_tools.in_progress", **where)
        failed = item.get("error") is not None
        yield event("response.mcp_list_tools.failed" if failed else "response.mcp_list_tools.completed", **where)
        return
    if kind == "computer_call":
        yield event("response.output_item.added", output_index=output_index, item={**item, "status": "in_progress"})
        return
    added: dict[str, Any] = {**item, "status": "in_progress"}
    if kind == "code_interpreter_call":
        yield event(
            "response.output_item.added", output_index=output_index, item={**added, "code": "", "outputs": None}
        )
        yield event("response.code_interpreter_call.in_progress", **where)
        code = item.get("code") or ""
        yield from deltas("response.code_interpreter_call_code.delta", chunks(code, 32), **where, delta=PIECE)
        yield event("response.code_interpreter_call_code.done", **where, code=code)
        yield event("response.code_interpreter_call.interpreting", **where)
    else:
        for key in ("results", "result"):
            if key in added:
                added[key] = None
        yield event("response.output_item.added", output_index=output_index, item=added)
        for phase in _PHASES[kind]:
            yield event(phase, **where)
        partial = _tool_of(body, "image_generation").get("partial_images")
        if kind == "image_generation_call" and status == "completed" and isinstance(partial, int) and partial > 0:
            for number in range(partial):
                yield event(
                    "response.image_generation_call.partial_image",
                    **where,
                    partial_image_index=number,
                    partial_image_b64=item["result"],
                )
    if status == "completed":
        yield event(_DONE[kind], **where)


def responses_problem(turn: Turn, record: RecordedRequest) -> str | None:
    """Why the Responses API could not have answered `record` with the turn's built-in tools, or None.

    It runs only the tools a request offers: a `web_search` (or `web_search_preview`) tool for a
    web search, `file_search`, `code_interpreter` for code execution, `image_generation`, an `mcp`
    tool of the call's `server_label`. Web fetch, bash, the text editor and tool search are
    Anthropic's server tools.
    """
    types = request_tool_types(record)
    labels = [t.get("server_label") for t in record.tools if isinstance(t, dict) and t.get("type") == "mcp"]
    return first_problem(_responses_tool_problem(tool, types, labels) for tool in turn.server_tools or ())


def _responses_tool_problem(tool: ServerTool, types: Sequence[str], labels: Sequence[Any]) -> str | None:
    if tool.server is not None:
        if tool.server in labels:
            return None
        known = ", ".join(repr(label) for label in labels) or "none"
        return (
            f"it runs a tool of the MCP server {tool.server!r}, which the request does not offer: its `mcp` tools "
            f"have the server_label {known}. Add "
            f'`{{"type": "mcp", "server_label": "{tool.server}", "server_url": ...}}` to the request\'s tools, or '
            "take the call out of the turn"
        )
    allowed = _TOOL_TYPES.get(tool.name)
    if allowed is None:
        return (
            f"it runs the server tool {tool.name!r}, which the Responses API does not have (it is Anthropic's); "
            "take it out of the turn for OpenAI"
        )
    if any(kind in allowed for kind in types):
        return None
    return (
        f"it runs the built-in tool {tool.name!r}, which the request did not offer: its `tools` has no "
        f"{' or '.join(f'`{kind}`' for kind in allowed[:2])} tool (the API runs only the tools a request "
        f"offers). Add `{_EXAMPLES[tool.name]}` to the request's tools, or take the server tool out of the turn"
    )


def chat_problem(turn: Turn, record: RecordedRequest) -> str | None:
    """Why Chat Completions could not have answered `record` with the turn's server tools and citations, or None.

    Its one built-in tool is the web search of its search models (`gpt-4o-search-preview`, ...),
    asked for with `web_search_options`: it shows only as `url_citation` annotations.
    """
    body = record.body if isinstance(record.body, dict) else {}
    searches = "web_search_options" in body or "search" in (record.model or "")
    for tool in turn.server_tools or ():
        if tool.server is not None or tool.name != "web_search":
            return (
                f"it runs the server tool {tool.name!r}, which Chat Completions does not have (its one built-in is "
                "the search models' web search); use the Responses API, or take it out of the turn"
            )
        if not searches:
            return (
                "it runs a web search, which this request did not ask for: it has no `web_search_options` and "
                f"its model {record.model!r} is not a search model. Add `web_search_options: {{}}` (with a search "
                "model such as gpt-4o-search-preview), or take the server tool out of the turn"
            )
    for n, citation in enumerate(turn.citations or ()):
        if citation.file_id is not None:
            return (
                f"citations[{n}] cites the file {citation.file_id!r}: Chat Completions annotates only url citations; "
                "cite a url or a search result"
            )
    return None


def decoded_items(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The built-in tool items of a Response as a turn's `server_tools`, in order."""
    tools: list[dict[str, Any]] = []
    names = {kind: name for name, kind in _ITEMS.items()}
    for item in items:
        kind = item.get("type")
        status = item.get("status")
        entry: dict[str, Any]
        if kind == "mcp_call" and isinstance(item.get("name"), str) and isinstance(item.get("server_label"), str):
            arguments = item.get("arguments")
            parsed = _json_object(arguments)
            entry = {"name": item["name"], "server": item["server_label"], "input": parsed}
            if item.get("error") is not None:
                entry["error"] = _mcp_error_text(item["error"])
            elif isinstance(item.get("output"), str):
                entry["result"] = item["output"]
        elif kind == "mcp_list_tools" and isinstance(item.get("server_label"), str):
            listed = [
                {k: t[k] for k in ("name", "input_schema", "description", "annotations") if t.get(k) is not None}
                for t in as_list(item.get("tools"))
                if isinstance(t, dict) and isinstance(t.get("name"), str)
            ]
            entry = {"name": MCP_LIST_TOOLS, "server": item["server_label"], "result": listed}
            if isinstance(item.get("error"), str) and item["error"]:
                entry = {**entry, "error": item["error"]}
                entry.pop("result")
        elif kind in names:
            entry = {"name": names[kind], **_decoded_builtin(kind, item)}
            if status == "failed":
                entry.pop("result", None)
                entry["error"] = "failed"
        else:
            continue
        if isinstance(item.get("id"), str):
            entry["id"] = item["id"]
        tools.append(entry)
    return tools


def _json_object(text: Any) -> dict[str, Any]:
    value = json_body(text) if isinstance(text, str) and text else {}
    return value if isinstance(value, dict) else {}


def _mcp_error_text(error: Any) -> str:
    if isinstance(error, str):
        return error or "error"
    error = as_dict(error)
    if isinstance(error.get("message"), str):
        return str(error["message"])
    texts = [b.get("text") for b in as_list(error.get("content")) if isinstance(b, dict)]
    return "".join(t for t in texts if isinstance(t, str)) or "error"


def _decoded_builtin(kind: str, item: Mapping[str, Any]) -> dict[str, Any]:
    if kind == "web_search_call":
        action = {k: v for k, v in as_dict(item.get("action")).items() if k not in ("type", "sources")}
        if as_dict(item.get("action")).get("type") not in (None, "search"):
            action["type"] = as_dict(item.get("action"))["type"]
        sources = as_list(as_dict(item.get("action")).get("sources"))
        results = [{"url": s["url"]} for s in sources if isinstance(s, dict) and isinstance(s.get("url"), str)]
        return {"input": action, "result": results}
    if kind == "file_search_call":
        queries = [q for q in as_list(item.get("queries")) if isinstance(q, str)]
        found = [
            {k: r[k] for k in ("file_id", "filename", "text", "score", "attributes") if r.get(k) is not None}
            for r in as_list(item.get("results"))
            if isinstance(r, dict) and isinstance(r.get("file_id"), str) and isinstance(r.get("filename"), str)
        ]
        for result in found:
            if result.get("attributes") == {}:
                result.pop("attributes")
        return {"input": {"queries": queries}, "result": found}
    if kind == "code_interpreter_call":
        logs = "".join(
            o["logs"] for o in as_list(item.get("outputs")) if isinstance(o, dict) and isinstance(o.get("logs"), str)
        )
        code = item.get("code")
        return {"input": {"code": code} if isinstance(code, str) else {}, "result": {"stdout": logs} if logs else {}}
    image = item.get("result")
    return {"result": image} if isinstance(image, str) and image else {}


def decoded_annotations(
    text: str, found: Sequence[Mapping[str, Any]], known: Sequence[Mapping[str, Any]]
) -> list[int | dict[str, Any]]:
    """A text's `url_citation` and `file_citation` annotations (Responses or Chat) as the turn's citations."""
    spans: list[tuple[int, int, dict[str, Any]]] = []
    for annotation in found:
        body: Mapping[str, Any] = as_dict(annotation.get("url_citation")) or annotation  # Chat nests the citation
        kind = annotation.get("type")
        if kind == "url_citation" and isinstance(body.get("url"), str):
            start, end = body.get("start_index"), body.get("end_index")
            if not (isinstance(start, int) and isinstance(end, int)):
                start, end = 0, len(text)
            spans.append((start, end, {"url": body["url"], "title": body.get("title")}))
        elif kind == "file_citation" and isinstance(body.get("file_id"), str):
            # A file citation gives only where it goes (`index`): the span is the text up to there.
            end = body.get("index")
            end = end if isinstance(end, int) and 0 < end <= len(text) else len(text)
            spans.append((0, end, {"file_id": body["file_id"], "filename": body.get("filename")}))
    return list(citations_from_spans(text, spans, known))
