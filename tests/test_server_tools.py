"""Server tools, built-in tools and citations as turn fields, through the real SDKs.

Each provider's own blocks, items and parts, parsed by its SDK into its own typed objects: Anthropic
`server_tool_use` and result blocks, cited text, MCP connector blocks, `pause_turn`; OpenAI Responses
built-in tool items and annotations, Chat Completions annotations; Gemini grounding metadata and code
execution parts. A server tool the request did not enable is an `impossible_answer` problem.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from anthropic.types import (
    BashCodeExecutionToolResultBlock,
    CitationsWebSearchResultLocation,
    CodeExecutionToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    TextEditorCodeExecutionToolResultBlock,
    ToolSearchToolResultBlock,
    ToolUseBlock,
    WebFetchToolResultBlock,
    WebSearchToolResultBlock,
)
from anthropic.types.beta import BetaMCPToolResultBlock, BetaMCPToolUseBlock
from openai.types.chat.chat_completion_message import Annotation as ChatAnnotation
from openai.types.responses import (
    ResponseCodeInterpreterToolCall,
    ResponseComputerToolCall,
    ResponseFileSearchToolCall,
    ResponseFunctionWebSearch,
    ResponseOutputMessage,
)
from openai.types.responses.response_output_item import ImageGenerationCall, McpCall, McpListTools
from openai.types.responses.response_output_text import AnnotationFileCitation, AnnotationURLCitation
from pydantic import BaseModel

from _support import ANTHROPIC_HX, anthropic_client, httpx2, openai_client
from wirescript import Citation, ScriptError, ScriptTransport, ServerTool, Turn, validate_anthropic_stream
from wirescript.wires import AnthropicWire, GeminiWire, OpenAIChatWire, OpenAIResponsesWire

try:  # openai >= 3 types an MCP call's error; openai 2 declared a string
    from openai.types.responses.mcp_tool_call_error import McpToolExecutionError
except ImportError:  # pragma: no cover - the legacy SDKs' run

    class McpToolExecutionError(BaseModel):  # type: ignore[no-redef]
        """The shape openai 3 types, for the legacy SDKs' run."""

        type: str
        content: object


OPENAI_MAJOR = int(openai.__version__.split(".")[0])

try:  # anthropic >= 1 (the MCP connector's pinned tool lists, beta mcp-client-2026-09-15)
    from anthropic.types.beta import BetaMCPToolListingBlock
except ImportError:  # pragma: no cover - the legacy SDKs' run
    BetaMCPToolListingBlock = None
needs_listing = pytest.mark.skipif(BetaMCPToolListingBlock is None, reason="this anthropic has no MCP tool listing")

WEB_SEARCH_TOOL = {"type": "web_search_20250305", "name": "web_search"}
HI = [{"role": "user", "content": "Who wrote Dune?"}]
RESULTS = [
    {"url": "https://en.wikipedia.org/wiki/Dune_(novel)", "title": "Dune (novel)", "page_age": "2 days ago"},
    {"url": "https://www.dunenovels.com", "title": "Dune Novels"},
]
SEARCH = {"name": "web_search", "input": {"query": "Dune author"}, "result": RESULTS}
CITED = {
    "server_tools": [SEARCH],
    "text": "Dune was written by Frank Herbert. It came out in 1965.",
    "citations": [
        {"source": 0, "span": "Frank Herbert", "cited_text": "Frank Herbert's Dune"},
        {"source": 1, "span": "It came out in 1965."},
    ],
}


def ask(stub: ScriptTransport, **params: Any) -> Any:
    client = anthropic_client(stub, max_retries=0)
    return client.messages.create(model="claude-test", max_tokens=256, messages=HI, **params)


# ---------------------------------------------------------------------------- the script models


def test_the_simple_case_is_one_search_one_text_one_citation() -> None:
    turn = Turn.model_validate(
        {"server_tools": [{"name": "web_search", "input": {"query": "q"}, "result": [{"url": "u"}]}], "text": "x"}
        | {"citations": [0]}
    )
    assert turn.citations == (Citation(source=0),)
    assert turn.server_tools == (ServerTool(name="web_search", input={"query": "q"}, result=[{"url": "u"}]),)
    assert turn.describe() == "server tool web_search, text 'x'"


@pytest.mark.parametrize(
    ("turn", "message"),
    [
        (
            {"server_tools": [{"name": "web_serch", "result": []}]},
            "field 'server_tools.0': unknown server tool 'web_serch'; did you mean 'web_search'?",
        ),
        (
            {"server_tools": [{"name": "web_search", "result": [{"uri": "x"}]}]},
            (
                "field 'server_tools.0.result[0]': a web_search result has no field 'uri' (expected: url, title, "
                "page_age); did you mean 'url'?"
            ),
        ),
        (
            {"server_tools": [{"name": "code_execution", "result": {"stdout": 1}}]},
            "field 'server_tools.0.result.stdout': expected a string, got int",
        ),
        (
            {"server_tools": [{"name": "web_fetch", "error": "max_use_exceeded"}]},
            "field 'server_tools.0.error': web_fetch's error codes are ",
        ),
        (
            {"server_tools": [{"name": "web_search", "result": [], "error": "unavailable"}]},
            "field 'server_tools.0': give either 'result' (the tool's answer) or 'error' (its failure), not both",
        ),
        (
            {"server_tools": [{"name": "web_search", "input": {"query": "q"}}], "text": "x"},
            (
                "field 'server_tools.0': web_search has neither a 'result' nor an 'error'. A server tool is left "
                "unanswered only in a turn that also calls a client tool"
            ),
        ),
        (
            {"server_tools": [SEARCH], "text": "Dune.", "citations": [2]},
            (
                "field 'citations.0.source': 2 names no search result: the turn's web_search and file_search server "
                "tools give 2 result(s)"
            ),
        ),
        ({"citations": [{"url": "https://a.example"}]}, "'citations' are the sources of the turn's text"),
        (
            {"text": "Dune.", "citations": [{"url": "https://a.example", "span": "Arrakis"}]},
            "field 'citations.0.span': 'Arrakis' is not in the turn's text 'Dune.'",
        ),
        (
            {"text": "Dune is long.", "citations": [{"url": "u", "span": "Dune is"}, {"url": "v", "span": "is long"}]},
            "field 'citations': the spans 'Dune is' and 'is long' overlap",
        ),
        (
            {"text": "Dune.", "citations": [{"url": "u", "file_id": "file_1"}]},
            (
                "field 'citations.0': a citation names its source once: 'source' (an index into the turn's search "
                "results), 'url' or 'file_id'; got 'url' and 'file_id'"
            ),
        ),
        (
            {"error": {"status": 500}, "server_tools": [SEARCH]},
            "an 'error' turn answers with an HTTP error, so it cannot also have 'server_tools'",
        ),
    ],
)
def test_a_malformed_server_tool_or_citation_fails_at_construction_naming_the_field(
    turn: dict[str, Any], message: str
) -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport([turn])
    assert f"invalid script[0]: {message}" in str(info.value)


def test_the_script_schema_describes_server_tools_and_citations() -> None:
    from wirescript import script_json_schema

    defs = script_json_schema()["$defs"]
    turn = defs["Turn"]["properties"]
    assert "search results" in turn["citations"]["description"]
    assert "web search" in turn["server_tools"]["description"]
    assert "result" in defs["ServerTool"]["properties"]
    # a citation is written as a Citation or as a bare number (the source's index)
    items = turn["citations"]["anyOf"][0]["items"]
    assert {"$ref": "#/$defs/Citation"} in items["anyOf"]
    assert {"minimum": 0, "type": "integer"} in items["anyOf"]


# ---------------------------------------------------------------------------- Anthropic


def test_an_anthropic_web_search_renders_the_call_its_results_then_cited_text() -> None:
    stub = ScriptTransport([CITED])
    message = ask(stub, tools=[WEB_SEARCH_TOOL])
    assert [b.type for b in message.content] == ["server_tool_use", "web_search_tool_result", *["text"] * 4]
    use, result, before, herbert, between, year = message.content
    assert isinstance(use, ServerToolUseBlock)
    assert isinstance(result, WebSearchToolResultBlock)
    assert (use.name, use.input) == ("web_search", {"query": "Dune author"})
    assert result.tool_use_id == use.id == "srvtoolu_0000_0"
    assert isinstance(result.content, list)
    assert [(r.url, r.title, r.page_age) for r in result.content] == [
        (RESULTS[0]["url"], "Dune (novel)", "2 days ago"),
        (RESULTS[1]["url"], "Dune Novels", None),
    ]
    texts = [before, herbert, between, year]
    assert all(isinstance(b, TextBlock) for b in texts)
    assert [b.text for b in texts] == ["Dune was written by ", "Frank Herbert", ". ", "It came out in 1965."]  # type: ignore[union-attr]
    assert before.citations is None
    assert between.citations is None
    [first] = herbert.citations or ()  # type: ignore[union-attr]
    [second] = year.citations or ()  # type: ignore[union-attr]
    assert isinstance(first, CitationsWebSearchResultLocation)
    assert isinstance(second, CitationsWebSearchResultLocation)
    assert (first.url, first.title, first.cited_text) == (RESULTS[0]["url"], "Dune (novel)", "Frank Herbert's Dune")
    assert (second.url, second.title, second.cited_text) == (RESULTS[1]["url"], "Dune Novels", "It came out in 1965.")
    assert message.usage.server_tool_use is not None
    assert (message.usage.server_tool_use.web_search_requests, message.usage.server_tool_use.web_fetch_requests) == (
        1,
        0,
    )
    assert message.stop_reason == "end_turn"
    assert stub.problems == []


def test_a_citation_of_the_whole_text_cites_one_block() -> None:
    stub = ScriptTransport([{"server_tools": [SEARCH], "text": "Frank Herbert.", "citations": [1, 0]}])
    message = ask(stub, tools=[WEB_SEARCH_TOOL])
    text = message.content[2]
    assert isinstance(text, TextBlock)
    assert text.text == "Frank Herbert."
    assert [c.url for c in text.citations or ()] == [RESULTS[1]["url"], RESULTS[0]["url"]]
    assert [c.cited_text for c in text.citations or ()] == ["Frank Herbert."] * 2


def test_an_anthropic_web_search_streams_and_the_sdk_accumulates_the_same_message() -> None:
    stub = ScriptTransport([CITED, CITED])
    plain = ask(stub, tools=[WEB_SEARCH_TOOL])
    client = anthropic_client(stub)
    with client.messages.stream(model="claude-test", max_tokens=256, messages=HI, tools=[WEB_SEARCH_TOOL]) as stream:
        events = list(stream)
        final = stream.get_final_message()
    deltas = [e.delta.type for e in events if e.type == "content_block_delta"]
    assert "citations_delta" in deltas
    assert "input_json_delta" in deltas
    assert deltas.index("citations_delta") < len(deltas) - 1
    streamed = final.model_dump(exclude={"id"})
    answered = plain.model_dump(exclude={"id"})
    streamed["content"][0]["id"] = answered["content"][0]["id"]
    streamed["content"][1]["tool_use_id"] = answered["content"][1]["tool_use_id"]
    for block in (*streamed["content"], *answered["content"]):
        for key in ("encrypted_content", "encrypted_index"):
            for item in [*(block.get("content") or []), *(block.get("citations") or [])]:
                if isinstance(item, dict):
                    item.pop(key, None)
        block.pop("parsed_output", None)
    assert streamed == answered
    assert isinstance(final.content[0], ServerToolUseBlock)
    assert final.content[0].input == {"query": "Dune author"}
    assert isinstance(final.content[1], WebSearchToolResultBlock)
    assert final.content[1].tool_use_id == final.content[0].id
    assert final.usage.server_tool_use is not None
    assert final.usage.server_tool_use.web_search_requests == 1


def test_the_raw_stream_passes_the_stream_validator_with_its_citations() -> None:
    stub = ScriptTransport([CITED])
    client = anthropic_client(stub)
    raw = client.messages.with_raw_response.create(
        model="claude-test", max_tokens=256, messages=HI, tools=[WEB_SEARCH_TOOL], stream=True
    )
    message = validate_anthropic_stream(raw.http_response.read())
    assert message["content"][3]["citations"][0]["url"] == RESULTS[0]["url"]
    assert message["content"][5]["citations"][0]["url"] == RESULTS[1]["url"]
    assert message["usage"]["server_tool_use"] == {"web_search_requests": 1, "web_fetch_requests": 0}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_server_tool_the_request_did_not_enable_is_an_impossible_answer(stream: bool) -> None:
    stub = ScriptTransport([CITED])
    client = anthropic_client(stub)  # the SDK's default retries: the refusal is not retried
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(model="claude-test", max_tokens=256, messages=HI, stream=stream)
    [problem] = stub.problems
    assert problem.kind == "impossible_answer"
    assert len(stub.requests) == 1
    assert problem.reason == (
        "was answered with script[0], which the real API could not give to this request: it runs the server tool "
        "'web_search', which the request did not enable: its `tools` has no `web_search_*` tool (the API runs only "
        'the server tools a request enables). Add one to the request (`{"type": "web_search_20250305", "name": '
        '"web_search"}`), or take the server tool out of the turn.'
    )
    assert info.value.body["error"]["message"] == f"wirescript: {problem}"  # type: ignore[index]
    with pytest.raises(AssertionError, match=r"the real API could not give to this request"):
        stub.check()


def test_a_turn_without_server_tools_renders_exactly_as_before() -> None:
    stub = ScriptTransport(["Plain text.", "Plain text."])
    message = ask(stub, tools=[WEB_SEARCH_TOOL])
    assert message.usage.server_tool_use is None
    assert [b.type for b in message.content] == ["text"]
    assert message.content[0].citations is None  # type: ignore[union-attr]


def test_pause_turn_continues_in_a_second_request_that_resends_the_paused_content() -> None:
    paused = {
        "server_tools": [SEARCH, {"name": "web_search", "input": {"query": "Dune sequels"}}],
        "stop_reason": "pause_turn",
    }
    resumed = {
        "text": "Frank Herbert wrote Dune.",
        "citations": [{"url": RESULTS[0]["url"], "title": "Dune (novel)", "span": "Frank Herbert"}],
    }
    stub = ScriptTransport([paused, resumed])
    client = anthropic_client(stub, max_retries=0)
    messages: list[Any] = list(HI)
    answer = client.messages.create(model="claude-test", max_tokens=256, messages=messages, tools=[WEB_SEARCH_TOOL])
    turns = 1
    while answer.stop_reason == "pause_turn":  # the documented loop: resend the paused content as it came
        messages = [*HI, {"role": "assistant", "content": answer.content}]
        answer = client.messages.create(model="claude-test", max_tokens=256, messages=messages, tools=[WEB_SEARCH_TOOL])
        turns += 1
    assert turns == 2
    assert stub.problems == []  # strict accepts the resend, an unanswered server_tool_use included
    first, second = stub.requests
    resent = second.messages[-1]
    assert resent["role"] == "assistant"
    assert [b["type"] for b in resent["content"]] == ["server_tool_use", "web_search_tool_result", "server_tool_use"]
    assert resent["content"][0]["id"] == "srvtoolu_0000_0"
    assert resent["content"][1]["tool_use_id"] == "srvtoolu_0000_0"
    assert "pause_turn" not in json.dumps(first.body)
    herbert, rest = answer.content
    assert isinstance(herbert, TextBlock)
    assert isinstance(rest, TextBlock)
    assert (herbert.text, rest.text) == ("Frank Herbert", " wrote Dune.")
    assert [c.url for c in herbert.citations or ()] == [RESULTS[0]["url"]]


def test_a_turn_mixing_a_server_tool_with_a_client_tool_ends_tool_use_with_the_server_call_unanswered() -> None:
    weather = {"name": "weather", "description": "Weather.", "input_schema": {"type": "object"}}
    stub = ScriptTransport(
        [
            {
                "server_tools": [{"name": "web_search", "input": {"query": "Paris weather"}}],
                "tool": {"name": "weather", "input": {"city": "Paris"}},
            },
            {"server_tools": [SEARCH], "text": "Sunny, and Dune is Herbert's.", "citations": [0]},
        ]
    )
    client = anthropic_client(stub, max_retries=0)
    tools: list[Any] = [WEB_SEARCH_TOOL, weather]
    first = client.messages.create(model="claude-test", max_tokens=256, messages=HI, tools=tools)
    assert [b.type for b in first.content] == ["server_tool_use", "tool_use"]
    assert first.stop_reason == "tool_use"
    call = first.content[1]
    assert isinstance(call, ToolUseBlock)
    second = client.messages.create(
        model="claude-test",
        max_tokens=256,
        tools=tools,
        messages=[
            *HI,
            {"role": "assistant", "content": first.content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "Sunny"}]},
        ],
    )
    assert stub.problems == []
    assert second.content[-1].citations[0].url == RESULTS[0]["url"]  # type: ignore[union-attr]
    assert stub.requests[1].tool_results[0]["tool_use_id"] == call.id


CODE_TOOL = {"type": "code_execution_20250825", "name": "code_execution"}


@pytest.mark.parametrize(
    ("tool", "server", "block", "content"),
    [
        (
            {"type": "web_fetch_20250910", "name": "web_fetch"},
            {
                "name": "web_fetch",
                "input": {"url": "https://example.com/a"},
                "result": {"content": "Page text.", "title": "A", "retrieved_at": "2026-01-01T00:00:00Z"},
            },
            WebFetchToolResultBlock,
            "web_fetch_result",
        ),
        (
            {"type": "web_fetch_20250910", "name": "web_fetch"},
            {"name": "web_fetch", "input": {"url": "https://example.com/a"}, "error": "url_not_accessible"},
            WebFetchToolResultBlock,
            "web_fetch_tool_result_error",
        ),
        (
            {"type": "web_search_20250305", "name": "web_search"},
            {"name": "web_search", "input": {"query": "q"}, "error": "max_uses_exceeded"},
            WebSearchToolResultBlock,
            "web_search_tool_result_error",
        ),
        (
            {"type": "code_execution_20250522", "name": "code_execution"},
            {"name": "code_execution", "input": {"code": "print(1)"}, "result": {"stdout": "1\n"}},
            CodeExecutionToolResultBlock,
            "code_execution_result",
        ),
        (
            CODE_TOOL,
            {"name": "code_execution", "input": {"code": "1/0"}, "error": "execution_time_exceeded"},
            CodeExecutionToolResultBlock,
            "code_execution_tool_result_error",
        ),
        (
            CODE_TOOL,
            {"name": "bash_code_execution", "input": {"command": "ls"}, "result": {"stdout": "a.csv\n"}},
            BashCodeExecutionToolResultBlock,
            "bash_code_execution_result",
        ),
        (
            CODE_TOOL,
            {"name": "bash_code_execution", "input": {"command": "cat big"}, "error": "output_file_too_large"},
            BashCodeExecutionToolResultBlock,
            "bash_code_execution_tool_result_error",
        ),
        (
            CODE_TOOL,
            {
                "name": "text_editor_code_execution",
                "input": {"command": "view", "path": "a.json"},
                "result": {"content": "{}", "num_lines": 1},
            },
            TextEditorCodeExecutionToolResultBlock,
            "text_editor_code_execution_view_result",
        ),
        (
            CODE_TOOL,
            {"name": "text_editor_code_execution", "input": {"command": "create", "path": "b.txt"}, "result": {}},
            TextEditorCodeExecutionToolResultBlock,
            "text_editor_code_execution_create_result",
        ),
        (
            CODE_TOOL,
            {
                "name": "text_editor_code_execution",
                "input": {"command": "str_replace", "path": "a.json"},
                "result": {"lines": ["-a", "+b"], "old_start": 1},
            },
            TextEditorCodeExecutionToolResultBlock,
            "text_editor_code_execution_str_replace_result",
        ),
        (
            CODE_TOOL,
            {
                "name": "text_editor_code_execution",
                "input": {"command": "view", "path": "x"},
                "error": "file_not_found",
            },
            TextEditorCodeExecutionToolResultBlock,
            "text_editor_code_execution_tool_result_error",
        ),
        (
            {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
            {"name": "tool_search_tool_regex", "input": {"pattern": "weather"}, "result": ["get_weather"]},
            ToolSearchToolResultBlock,
            "tool_search_tool_search_result",
        ),
        (
            {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
            {"name": "tool_search_tool_bm25", "input": {"query": "weather"}, "error": "unavailable"},
            ToolSearchToolResultBlock,
            "tool_search_tool_result_error",
        ),
    ],
)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_each_anthropic_server_tool_parses_into_the_sdks_own_result_block(
    tool: dict[str, Any], server: dict[str, Any], block: type, content: str, stream: bool
) -> None:
    stub = ScriptTransport([{"server_tools": [server], "text": "Done."}])
    client = anthropic_client(stub, max_retries=0)
    if stream:
        with client.messages.stream(model="claude-test", max_tokens=256, messages=HI, tools=[tool]) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(model="claude-test", max_tokens=256, messages=HI, tools=[tool])
    assert stub.problems == []
    use, result, text = message.content
    assert isinstance(use, ServerToolUseBlock)
    assert use.name == server["name"]
    assert use.input == server["input"]
    assert isinstance(result, block)
    assert result.tool_use_id == use.id  # type: ignore[attr-defined]
    got = result.content  # type: ignore[attr-defined]
    assert (got[0] if isinstance(got, list) else got).type == content
    if "error" in server:
        assert got.error_code == server["error"]
    fetches = int(server["name"] == "web_fetch" and "error" not in server)
    assert message.usage.server_tool_use.web_fetch_requests == fetches
    assert isinstance(text, TextBlock)
    assert text.text == "Done."


def test_code_execution_tools_are_enabled_by_a_dynamic_web_search_too() -> None:
    turn = {"server_tools": [{"name": "bash_code_execution", "input": {"command": "ls"}, "result": {}}]}
    stub = ScriptTransport([turn, turn])
    ask(stub, tools=[{"type": "web_search_20260209", "name": "web_search"}])  # runs code itself
    assert stub.problems == []
    with pytest.raises(anthropic.BadRequestError):
        ask(stub, tools=[WEB_SEARCH_TOOL])
    assert "no `code_execution_*` tool" in stub.problems[0].reason


MCP_SERVERS = [{"type": "url", "url": "https://mcp.example/mcp", "name": "docs"}]
MCP_TOOLS = [{"type": "mcp_toolset", "mcp_server_name": "docs"}]
MCP_TURN = {
    "server_tools": [
        {"name": "mcp_list_tools", "server": "docs", "result": [{"name": "search", "description": "Search."}]},
        {"name": "search", "server": "docs", "input": {"q": "Dune"}, "result": "Dune, 1965."},
        {"name": "search", "server": "docs", "input": {"q": ""}, "error": "empty query"},
    ],
    "text": "Found it.",
}


@needs_listing
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_mcp_connector_blocks_parse_into_the_sdks_beta_types(stream: bool) -> None:
    stub = ScriptTransport([MCP_TURN])
    client = anthropic_client(stub, max_retries=0)
    params: dict[str, Any] = {
        "model": "claude-test",
        "max_tokens": 256,
        "messages": HI,
        "mcp_servers": MCP_SERVERS,
        "tools": MCP_TOOLS,
        "betas": ["mcp-client-2026-09-15"],
    }
    if stream:
        with client.beta.messages.stream(**params) as events:
            message = events.get_final_message()
    else:
        message = client.beta.messages.create(**params)
    assert stub.problems == []
    listing, use, result, failed_use, failed, text = message.content
    assert isinstance(listing, BetaMCPToolListingBlock)
    assert listing.mcp_server_name == "docs"
    assert [t.name for t in listing.tools] == ["search"]
    assert isinstance(use, BetaMCPToolUseBlock)
    assert (use.id, use.name, use.server_name, use.input) == ("mcptoolu_0000_1", "search", "docs", {"q": "Dune"})
    assert isinstance(result, BetaMCPToolResultBlock)
    assert result.tool_use_id == use.id
    assert (result.is_error, result.content[0].text) == (False, "Dune, 1965.")  # type: ignore[union-attr]
    assert isinstance(failed, BetaMCPToolResultBlock)
    assert failed.tool_use_id == failed_use.id
    assert (failed.is_error, failed.content[0].text) == (True, "empty query")  # type: ignore[union-attr]
    assert text.text == "Found it."  # type: ignore[union-attr]


def test_an_mcp_tool_of_a_server_the_request_does_not_connect_is_an_impossible_answer() -> None:
    stub = ScriptTransport([MCP_TURN])
    client = anthropic_client(stub, max_retries=0)
    with pytest.raises(anthropic.BadRequestError):
        client.beta.messages.create(model="claude-test", max_tokens=256, messages=HI, betas=["mcp-client-2025-11-20"])
    [problem] = stub.problems
    assert problem.kind == "impossible_answer"
    assert "the MCP server 'docs', which the request does not connect: its `mcp_servers` names none" in problem.reason


@needs_listing
def test_an_mcp_tool_listing_needs_the_beta_that_records_it() -> None:
    stub = ScriptTransport([MCP_TURN, MCP_TURN])
    client = anthropic_client(stub, max_retries=0)
    params: dict[str, Any] = {"model": "claude-test", "max_tokens": 256, "messages": HI}
    params |= {"mcp_servers": MCP_SERVERS, "tools": MCP_TOOLS}
    with pytest.raises(anthropic.BadRequestError):
        client.beta.messages.create(**params, betas=["mcp-client-2025-11-20"])
    [problem] = stub.problems
    assert problem.kind == "impossible_answer"
    assert "which the API sends only with the beta `mcp-client-2026-09-15`" in problem.reason
    message = client.beta.messages.create(**params, betas=["mcp-client-2026-09-15", "other-beta"])
    assert isinstance(message.content[0], BetaMCPToolListingBlock)


def test_a_file_search_or_a_file_citation_is_not_anthropics() -> None:
    turn = {"text": "See the notes.", "citations": [{"file_id": "file_1", "filename": "notes.md"}]}
    stub = ScriptTransport([turn])
    with pytest.raises(anthropic.BadRequestError):
        ask(stub)
    assert "cites the file 'file_1': Anthropic cites web pages here" in stub.problems[0].reason


def test_a_scripted_search_count_overrides_the_counted_one() -> None:
    stub = ScriptTransport([{**CITED, "usage": {"web_search_requests": 3, "web_fetch_requests": 2}}])
    message = ask(stub, tools=[WEB_SEARCH_TOOL])
    assert (message.usage.server_tool_use.web_search_requests, message.usage.server_tool_use.web_fetch_requests) == (
        3,
        2,
    )


# ---------------------------------------------------------------------------- Bedrock (Claude via InvokeModel)


def anthropic_bedrock(stub: ScriptTransport) -> Any:
    pytest.importorskip("botocore")  # AnthropicBedrock signs its requests with it
    return anthropic.AnthropicBedrock(
        aws_access_key="AKIDTEST",
        aws_secret_key="test-secret",
        aws_region="us-east-1",
        http_client=ANTHROPIC_HX.Client(transport=stub),
        max_retries=0,
    )


def test_bedrock_invoke_renders_tool_search_and_refuses_web_search() -> None:
    search = {"name": "tool_search_tool_regex", "input": {"pattern": "weather"}, "result": ["get_weather"]}
    stub = ScriptTransport([{"server_tools": [search], "text": "Loaded."}, CITED])
    claude = anthropic_bedrock(stub)
    tools: list[Any] = [{"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}]
    with claude.messages.stream(model="anthropic.claude-x", max_tokens=64, messages=HI, tools=tools) as stream:
        message = stream.get_final_message()
    assert isinstance(message.content[1], ToolSearchToolResultBlock)
    assert message.content[1].content.tool_references[0].tool_name == "get_weather"  # type: ignore[union-attr]
    with pytest.raises(anthropic.BadRequestError):
        claude.messages.create(model="anthropic.claude-x", max_tokens=64, messages=HI, tools=[WEB_SEARCH_TOOL])
    [problem] = stub.problems
    assert problem.kind == "impossible_answer"
    assert "Claude on Amazon Bedrock does not run" in problem.reason


# ---------------------------------------------------------------------------- OpenAI Responses


def respond(stub: ScriptTransport, **params: Any) -> Any:
    return openai_client(stub, max_retries=0).responses.create(model="gpt-test", input="Who wrote Dune?", **params)


def test_a_responses_web_search_has_its_call_item_before_the_message_and_the_scripted_text() -> None:
    stub = ScriptTransport([CITED])
    response = respond(stub, tools=[{"type": "web_search"}], include=["web_search_call.action.sources"])
    call, message = response.output
    assert isinstance(call, ResponseFunctionWebSearch)
    assert (call.id, call.status, call.action.type) == ("ws_0000_0", "completed", "search")
    assert call.action.query == "Dune author"  # type: ignore[union-attr]
    assert [s.url for s in call.action.sources or ()] == [r["url"] for r in RESULTS]  # type: ignore[union-attr]
    assert isinstance(message, ResponseOutputMessage)
    assert response.output_text == CITED["text"]
    herbert, year = message.content[0].annotations  # type: ignore[union-attr]
    assert isinstance(herbert, AnnotationURLCitation)
    assert isinstance(year, AnnotationURLCitation)
    text = str(CITED["text"])
    assert text[herbert.start_index : herbert.end_index] == "Frank Herbert"
    assert (herbert.url, herbert.title) == (RESULTS[0]["url"], "Dune (novel)")
    assert (text[year.start_index : year.end_index], year.url) == ("It came out in 1965.", RESULTS[1]["url"])


def test_a_responses_web_search_streams_its_events_and_annotations() -> None:
    stub = ScriptTransport([CITED])
    client = openai_client(stub, max_retries=0)
    with client.responses.stream(model="gpt-test", input="Who?", tools=[{"type": "web_search"}]) as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    search = [k for k in kinds if k.startswith("response.web_search_call.")]
    assert search == [
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
    ]
    added = [e for e in events if e.type == "response.output_text.annotation.added"]
    assert [e.annotation_index for e in added] == [0, 1]
    assert isinstance(final.output[0], ResponseFunctionWebSearch)
    assert final.output[0].action.sources is None  # the sources only come with `include`
    assert final.output_text == CITED["text"]
    assert [e.sequence_number for e in events] == list(range(len(events)))


def test_a_responses_web_search_the_request_did_not_offer_is_an_impossible_answer() -> None:
    stub = ScriptTransport([CITED])
    with pytest.raises(openai.BadRequestError):
        respond(stub, tools=[{"type": "function", "name": "f", "parameters": {"type": "object"}}])
    [problem] = stub.problems
    assert problem.kind == "impossible_answer"
    assert "its `tools` has no `web_search` or `web_search_2025_08_26` tool" in problem.reason
    assert '`{"type": "web_search"}`' in problem.reason


RESPONSES_TOOLS: list[Any] = [
    {"type": "file_search", "vector_store_ids": ["vs_1"]},
    {"type": "code_interpreter", "container": "cntr_fixed"},
    {"type": "image_generation", "partial_images": 2},
    {"type": "mcp", "server_label": "docs", "server_url": "https://mcp.example/mcp"},
]
BUILTINS = {
    "server_tools": [
        {
            "name": "file_search",
            "input": {"queries": ["refund policy"]},
            "result": [{"file_id": "file_1", "filename": "policy.md", "text": "30 days.", "score": 0.9}],
        },
        {"name": "code_execution", "input": {"code": "print(6*7)"}, "result": {"stdout": "42\n"}},
        {"name": "image_generation", "result": "aW1hZ2U="},
        {
            "name": "mcp_list_tools",
            "server": "docs",
            "result": [{"name": "search", "input_schema": {"type": "object"}}],
        },
        {"name": "search", "server": "docs", "input": {"q": "refunds"}, "result": "30 days."},
    ],
    "text": "Refunds take 30 days.",
    "citations": [{"source": 0, "span": "30 days"}],
}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_responses_built_in_tools_parse_into_the_sdks_own_items(stream: bool) -> None:
    stub = ScriptTransport([BUILTINS])
    client = openai_client(stub, max_retries=0)
    include: list[Any] = ["file_search_call.results", "code_interpreter_call.outputs"]
    params = {"model": "gpt-test", "input": "Refunds?", "tools": RESPONSES_TOOLS, "include": include}
    if stream:
        with client.responses.stream(**params) as events:
            kinds = [e.type for e in events]
            response = events.get_final_response()
        for expected in (
            "response.file_search_call.searching",
            "response.code_interpreter_call_code.delta",
            "response.code_interpreter_call.interpreting",
            "response.image_generation_call.partial_image",
            "response.mcp_list_tools.completed",
            "response.mcp_call_arguments.done",
            "response.mcp_call.completed",
        ):
            assert expected in kinds, expected
        assert kinds.count("response.image_generation_call.partial_image") == 2
    else:
        response = client.responses.create(**params)
    assert stub.problems == []
    files, code, image, listing, mcp, message = response.output
    assert isinstance(files, ResponseFileSearchToolCall)
    assert files.id == "fs_0000_0"
    assert files.queries == ["refund policy"]
    assert [(r.file_id, r.filename, r.score) for r in files.results or ()] == [("file_1", "policy.md", 0.9)]
    assert isinstance(code, ResponseCodeInterpreterToolCall)
    assert code.id == "ci_0000_1"
    assert (code.code, code.container_id) == ("print(6*7)", "cntr_fixed")
    assert [o.logs for o in code.outputs or ()] == ["42\n"]  # type: ignore[union-attr]
    assert isinstance(image, ImageGenerationCall)
    assert (image.id, image.result) == ("ig_0000_2", "aW1hZ2U=")
    assert isinstance(listing, McpListTools)
    assert listing.id == "mcpl_0000_3"
    assert [t.name for t in listing.tools] == ["search"]
    assert isinstance(mcp, McpCall)
    assert (mcp.id, mcp.server_label, mcp.name) == ("mcp_0000_4", "docs", "search")
    assert (json.loads(mcp.arguments), mcp.output, mcp.error) == ({"q": "refunds"}, "30 days.", None)
    assert isinstance(message, ResponseOutputMessage)
    [annotation] = message.content[0].annotations  # type: ignore[union-attr]
    assert isinstance(annotation, AnnotationFileCitation)
    assert (annotation.file_id, annotation.filename, annotation.index) == ("file_1", "policy.md", 20)
    assert response.output_text == "Refunds take 30 days."


def test_a_failed_built_in_tool_is_a_failed_item() -> None:
    turn = {
        "server_tools": [
            {"name": "file_search", "input": {"query": "x"}, "error": "unavailable"},
            {"name": "search", "server": "docs", "input": {}, "error": "server down"},
        ],
        "text": "Sorry.",
    }
    stub = ScriptTransport([turn])
    response = respond(stub, tools=RESPONSES_TOOLS)
    files, mcp, _ = response.output
    assert isinstance(files, ResponseFileSearchToolCall)
    assert files.status == "failed"
    assert files.queries == ["x"]
    assert isinstance(mcp, McpCall)
    assert mcp.status == "failed"
    assert mcp.output is None
    assert mcp.error is not None
    # openai 3 types the error (`McpToolCallError`); openai 2 declared it a string, so it keeps the object as it came
    error = mcp.error if OPENAI_MAJOR >= 3 else McpToolExecutionError.model_validate(mcp.error)
    assert isinstance(error, McpToolExecutionError)
    assert error.content == [{"type": "text", "text": "server down"}]


def test_a_computer_call_is_answered_by_the_clients_computer_call_output_in_the_next_request() -> None:
    computer = {"type": "computer_use_preview", "display_width": 1024, "display_height": 768, "environment": "browser"}
    stub = ScriptTransport([{"tool": {"name": "computer", "input": {"type": "screenshot"}}}, "Done."])
    client = openai_client(stub, max_retries=0)
    first = client.responses.create(model="computer-use-preview", input="Look.", tools=[computer], truncation="auto")
    [call] = first.output
    assert isinstance(call, ResponseComputerToolCall)
    assert (call.id, call.call_id, call.action.type) == ("cu_0000_0", "call_0000_0", "screenshot")  # type: ignore[union-attr]
    output = {
        "type": "computer_call_output",
        "call_id": call.call_id,
        "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,aW1n"},
    }
    second = client.responses.create(
        model="computer-use-preview",
        previous_response_id=first.id,
        input=[output],  # type: ignore[list-item]
        tools=[computer],
        truncation="auto",
    )
    assert second.output_text == "Done."
    assert stub.problems == []
    assert stub.requests[1].tool_results == [output]


def test_a_tool_named_computer_is_a_function_call_when_the_request_offers_no_computer() -> None:
    stub = ScriptTransport([{"tool": {"name": "computer", "input": {"type": "screenshot"}}}])
    function = {"type": "function", "name": "computer", "parameters": {"type": "object"}}
    [call] = respond(stub, tools=[function]).output
    assert call.type == "function_call"


# ---------------------------------------------------------------------------- OpenAI Chat Completions


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_chat_search_model_answers_with_url_citation_annotations(stream: bool) -> None:
    stub = ScriptTransport([CITED])
    client = openai_client(stub, max_retries=0)
    params: dict[str, Any] = {"model": "gpt-4o-search-preview", "messages": HI, "web_search_options": {}}
    if stream:
        with client.chat.completions.stream(**params) as events:
            message = events.get_final_completion().choices[0].message
    else:
        message = client.chat.completions.create(**params).choices[0].message
    assert message.content == CITED["text"]
    herbert, year = message.annotations or ()
    assert isinstance(herbert, ChatAnnotation)
    assert herbert.type == "url_citation"
    text = str(CITED["text"])
    assert text[herbert.url_citation.start_index : herbert.url_citation.end_index] == "Frank Herbert"
    assert (year.url_citation.url, year.url_citation.title) == (RESULTS[1]["url"], "Dune Novels")


def test_a_chat_web_search_the_request_did_not_ask_for_is_an_impossible_answer() -> None:
    stub = ScriptTransport([CITED, {"server_tools": [{"name": "file_search", "result": []}]}])
    client = openai_client(stub, max_retries=0)
    for _ in range(2):
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(model="gpt-test", messages=HI)
    assert [p.kind for p in stub.problems] == ["impossible_answer"] * 2
    assert "it has no `web_search_options` and its model 'gpt-test' is not a search model" in stub.problems[0].reason
    assert "Chat Completions does not have" in stub.problems[1].reason


# ---------------------------------------------------------------------------- Gemini

try:  # google-genai is not in every environment the suite runs in (the legacy SDKs' has none)
    from google import genai
    from google.genai import types
except ImportError:  # pragma: no cover
    genai = None
needs_genai = pytest.mark.skipif(genai is None, reason="google-genai is not installed")


def gemini(stub: ScriptTransport) -> Any:
    assert httpx2 is not None
    return genai.Client(api_key="test-key", http_options=types.HttpOptions(httpx_client=httpx2.Client(transport=stub)))


GROUNDED = {
    "server_tools": [
        {"name": "web_search", "input": {"query": "Dune author"}, "result": RESULTS},
        {"name": "code_execution", "input": {"code": "print(2026 - 1965)"}, "result": {"stdout": "61\n"}},
    ],
    "text": "Dune (1965) is by Frank Herbert, 61 years ago. Überall.",
    "citations": [{"source": 0, "span": "Frank Herbert"}, {"source": 1, "span": "Überall"}],
}


@needs_genai
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_gemini_grounding_and_code_execution_parse_into_google_genais_types(stream: bool) -> None:
    stub = ScriptTransport([GROUNDED])
    client = gemini(stub)
    grounding = [types.Tool(google_search=types.GoogleSearch()), types.Tool(code_execution=types.ToolCodeExecution())]
    config = types.GenerateContentConfig(tools=grounding)
    if stream:
        chunks = list(client.models.generate_content_stream(model="gemini-test", contents="Dune?", config=config))
        candidate = chunks[-1].candidates[0]
        parts = [p for c in chunks for p in c.candidates[0].content.parts or ()]
        assert all(c.candidates[0].grounding_metadata is None for c in chunks[:-1])
    else:
        candidate = client.models.generate_content(model="gemini-test", contents="Dune?", config=config).candidates[0]
        parts = candidate.content.parts or []
    assert stub.problems == []
    metadata = candidate.grounding_metadata
    assert isinstance(metadata, types.GroundingMetadata)
    assert metadata.web_search_queries == ["Dune author"]
    assert [(c.web.uri, c.web.title) for c in metadata.grounding_chunks or ()] == [
        (RESULTS[0]["url"], "Dune (novel)"),
        (RESULTS[1]["url"], "Dune Novels"),
    ]
    text = str(GROUNDED["text"])
    encoded = text.encode()
    herbert, overall = metadata.grounding_supports or ()
    assert herbert.grounding_chunk_indices == [0]
    assert overall.grounding_chunk_indices == [1]
    for support, words in ((herbert, "Frank Herbert"), (overall, "Überall")):
        segment = support.segment
        assert segment is not None
        assert segment.text == words
        assert encoded[segment.start_index or 0 : segment.end_index].decode() == words  # offsets in UTF-8 bytes
    code = next(p.executable_code for p in parts if p.executable_code is not None)
    executed = next(p.code_execution_result for p in parts if p.code_execution_result is not None)
    assert isinstance(code, types.ExecutableCode)
    assert code.code == "print(2026 - 1965)"
    assert code.language == types.Language.PYTHON
    assert isinstance(executed, types.CodeExecutionResult)
    assert (executed.outcome, executed.output) == (types.Outcome.OUTCOME_OK, "61\n")
    assert "".join(p.text for p in parts if p.text) == text


@needs_genai
def test_gemini_grounding_without_google_search_is_an_impossible_answer() -> None:
    stub = ScriptTransport([GROUNDED])
    with pytest.raises(genai.errors.ClientError):
        gemini(stub).models.generate_content(model="gemini-test", contents="Dune?")
    [problem] = stub.problems
    assert problem.kind == "impossible_answer"
    assert "its `tools` has no `googleSearch` tool" in problem.reason


# ---------------------------------------------------------------------------- record mode

CHAT_CITED = {"text": CITED["text"], "citations": [{"url": RESULTS[0]["url"], "title": "T", "span": "Frank Herbert"}]}
"""A Chat search answer: no server tool shows, only its citations (explicit: Chat has no search results)."""


@pytest.mark.parametrize(
    ("wire", "turn", "body"),
    [
        (AnthropicWire, CITED, {"tools": [WEB_SEARCH_TOOL]}),
        (AnthropicWire, MCP_TURN, {"mcp_servers": MCP_SERVERS, "tools": MCP_TOOLS}),
        (
            OpenAIResponsesWire,
            CITED,
            {"tools": [{"type": "web_search"}], "include": ["web_search_call.action.sources"]},
        ),
        (OpenAIResponsesWire, BUILTINS, {"tools": RESPONSES_TOOLS, "include": ["file_search_call.results"]}),
        (OpenAIChatWire, CHAT_CITED, {}),
        (GeminiWire, GROUNDED, {"tools": [{"googleSearch": {}}, {"codeExecution": {}}]}),
    ],
    ids=["anthropic-search", "anthropic-mcp", "responses-search", "responses-builtins", "chat", "gemini"],
)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_record_mode_decodes_server_tools_and_citations_into_a_turn_that_renders_the_same(
    wire: type, turn: dict[str, Any], body: dict[str, Any], stream: bool
) -> None:
    first = _answer(wire, turn, body, stream)
    decoded = wire().decode(200, first[0], first[1])
    assert decoded is not None
    again = Turn.model_validate(decoded)
    assert (again.server_tools is None) == ("server_tools" not in turn)
    assert (again.citations is None) == ("citations" not in turn)
    assert _answer(wire, decoded, body, stream) == first


def _answer(wire: type, turn: dict[str, Any], body: dict[str, Any], stream: bool) -> tuple[dict[str, str], bytes]:
    """What `wire` sends for `turn` to a request with `body`: its headers and its body bytes."""
    from wirescript.recorded import RecordedRequest

    path = {
        AnthropicWire: "/v1/messages",
        OpenAIResponsesWire: "/v1/responses",
        OpenAIChatWire: "/v1/chat/completions",
        GeminiWire: "/v1beta/models/gemini-test:" + ("streamGenerateContent" if stream else "generateContent"),
    }[wire]
    served = wire()
    payload = {"model": "m", "messages": HI, "input": "x", **body, "stream": stream}
    betas = {"anthropic-beta": "mcp-client-2026-09-15"} if wire is AnthropicWire else {}  # for a tool listing
    record = RecordedRequest(index=0, method="POST", path=path, body=payload, headers=betas)
    parsed = served.parse(payload, path)
    for field in parsed._fields:  # as a NamedTuple's: the fields, in order
        value = getattr(parsed, field)
        if value is not None:
            setattr(record, field, value)
    parsed_turn = Turn.model_validate(turn)
    assert served.server_tools_problem(parsed_turn, record) is None
    rendered = served.render(parsed_turn, record)
    data = rendered.body if rendered.frames is None else b"".join(frame.data for frame in rendered.frames)
    return rendered.headers, data


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_recorded_web_search_replays_the_same_answer(tmp_path: Any, stream: bool) -> None:
    from wirescript import RecordingTransport, load_script

    recorder = RecordingTransport(tmp_path / "search.yaml", upstream=ScriptTransport([CITED]))

    def search(transport: Any) -> Any:
        client = anthropic_client(transport, max_retries=0)
        params: dict[str, Any] = {"model": "claude-test", "max_tokens": 256, "messages": HI, "tools": [WEB_SEARCH_TOOL]}
        if not stream:
            return client.messages.create(**params)
        with client.messages.stream(**params) as events:
            return events.get_final_message()

    live = search(recorder)
    [recorded] = recorder.turns
    assert [t.name for t in recorded.server_tools or ()] == ["web_search"]
    assert recorded.server_tools[0].result == RESULTS  # type: ignore[index]
    assert recorded.citations == Turn.model_validate(CITED).citations
    replay = ScriptTransport(load_script(recorder.save()))
    assert search(replay).model_dump(exclude={"id"}) == live.model_dump(exclude={"id"})
    assert replay.problems == []
