"""The scripted MCP server (`MCPScript`), driven by the real MCP SDK client over the stub.

Each test runs `mcp.ClientSession` over `streamable_http_client(url, http_client=httpx2.AsyncClient(transport=stub))`
(or over the loopback server, or `intercept()`), and checks what the SDK got and what the stub recorded.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from wirescript import MCPScript, RecordedRequest, ScriptError, ScriptTransport
from wirescript.wires.mcp import MCPWire

mcp = pytest.importorskip("mcp")
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp_types import methods  # noqa: E402

httpx2 = pytest.importorskip("httpx2")  # the legacy run (anthropic 0.x, openai 2.x on httpx) has none

pytest_plugins = ["pytester"]

URL = "http://mcp.test/mcp"
SEARCH = {
    "name": "search",
    "description": "Search the docs.",
    "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
}
WEATHER = {
    "name": "weather",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    "outputSchema": {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]},
}


class Tap:
    """The stub as a client's transport, keeping each answer's content type and body (read for the SDK too)."""

    def __init__(self, stub: ScriptTransport) -> None:
        self.stub = stub
        self.answers: list[tuple[str, bytes]] = []

    async def handle_async_request(self, request: Any) -> Any:
        response = await self.stub.handle_async_request(request)
        await response.aread()
        self.answers.append((response.headers.get("content-type", ""), response.content))
        return response

    async def aclose(self) -> None:
        await self.stub.aclose()


@asynccontextmanager
async def session(stub: ScriptTransport | Tap | None, url: str = URL) -> AsyncIterator[ClientSession]:
    http = httpx2.AsyncClient(transport=stub) if stub is not None else None  # type: ignore[arg-type]
    async with streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        yield s
    if http is not None:
        await http.aclose()


def run(stub: ScriptTransport | Tap, body: Callable[[ClientSession], Awaitable[Any]], url: str = URL) -> Any:
    async def main() -> Any:
        async with session(stub, url) as s:
            return await body(s)

    return asyncio.run(main())


def failing(call: Callable[[ClientSession], Awaitable[Any]]) -> Callable[[ClientSession], Awaitable[MCPError]]:
    """A body that returns the `MCPError` the call raises (raised, it would leave the SDK's task group as a group)."""

    async def body(s: ClientSession) -> MCPError:
        try:
            await call(s)
        except MCPError as exc:
            return exc
        raise AssertionError("the call did not fail")

    return body


def message_of(content_type: str, body: bytes) -> Any:
    """The JSON-RPC message of an answer: the JSON body, or the data of the SSE stream's one event."""
    if content_type.startswith("text/event-stream"):
        [data] = [line[6:] for line in body.decode().splitlines() if line.startswith("data: ")]
        return json.loads(data)
    return json.loads(body)


def posts(stub: ScriptTransport) -> list[str | None]:
    """The JSON-RPC methods of the MCP POSTs, in order (the GET stream is opened concurrently)."""
    return [r.mcp_method for r in stub.requests if r.provider == "mcp" and r.method == "POST"]


# ---------------------------------------------------------------------- the loop


@pytest.mark.parametrize("sse", [False, True], ids=["json", "sse"])
def test_list_tools_and_call_tool_get_the_scripted_tools_and_results(sse: bool) -> None:
    stub = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=["Found: wirescript"], sse=sse))
    tap = Tap(stub)

    async def body(s: ClientSession) -> Any:
        return await s.list_tools(), await s.call_tool("search", {"query": "wirescript"})

    tools, result = run(tap, body)
    assert [(t.name, t.description, t.input_schema) for t in tools.tools] == [
        ("search", "Search the docs.", SEARCH["inputSchema"])
    ]
    assert [c.text for c in result.content] == ["Found: wirescript"]
    assert result.is_error is False
    assert posts(stub) == ["initialize", "notifications/initialized", "tools/list", "tools/call"]
    [call] = [r for r in stub.requests if r.mcp_method == "tools/call"]
    assert (call.provider, call.tool_name, call.arguments) == ("mcp", "search", {"query": "wirescript"})
    assert call.turn_index is None
    assert stub.pending == []
    answered = "text/event-stream" if sse else "application/json"
    kinds = {
        kind
        for (kind, _), r in zip(tap.answers, stub.requests, strict=True)
        if r.mcp_method in ("tools/call", "tools/list")
    }
    assert kinds == {answered}
    assert [r.method for r in stub.requests].count("GET") == 1
    assert [r.method for r in stub.requests][-1] == "DELETE"
    stub.check()


def test_every_mcp_request_is_recorded_with_its_session() -> None:
    stub = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=["hit"]))
    run(stub, lambda s: s.call_tool("search", {"query": "q"}))
    initialize, *rest = stub.requests
    assert initialize.mcp_method == "initialize"
    assert "mcp-session-id" not in initialize.headers
    assert {r.headers.get("mcp-session-id") for r in rest} == {"wirescript-session-1"}
    assert {(r.method, r.mcp_method) for r in rest} >= {("GET", None), ("DELETE", None)}
    assert all(r.provider == "mcp" for r in stub.requests)
    assert initialize.mcp_params["protocolVersion"] == "2025-11-25"
    # the non-MCP fields stay empty, and non-MCP records have no MCP fields
    assert (initialize.model, initialize.tool_name, initialize.arguments) == (None, None, None)


def test_the_initialize_answer_negotiates_the_version_and_declares_what_the_script_has() -> None:
    stub = ScriptTransport(
        [], mcp=MCPScript(tools=[SEARCH], prompts=[{"name": "p", "messages": ["hi"]}], instructions="Be brief.")
    )

    async def body(s: ClientSession) -> Any:
        return s.initialize_result

    result = run(stub, body)
    assert result.protocol_version == "2025-11-25"
    assert (result.server_info.name, result.instructions) == ("wirescript", "Be brief.")
    caps = result.capabilities
    assert (caps.tools is not None, caps.prompts is not None, caps.resources is None) == (True, True, True)
    pinned = ScriptTransport([], mcp=MCPScript(protocol_version="2025-03-26"))
    assert run(pinned, body).protocol_version == "2025-03-26"


def test_the_answers_are_valid_results_of_the_negotiated_version() -> None:
    """Each answer validates against the MCP SDK's own schema of its method's result, at the negotiated version."""
    for sse in (False, True):
        stub = ScriptTransport(
            [],
            mcp=MCPScript(
                tools=[SEARCH, WEATHER],
                results={
                    "search": [
                        "a",
                        {
                            "content": [
                                {"type": "image", "data": base64.b64encode(b"png").decode(), "mimeType": "image/png"}
                            ]
                        },
                        {"text": "b", "isError": True},
                    ],
                    "weather": [{"structuredContent": {"celsius": 21}}],
                },
                resources=[
                    {"uri": "file:///a.txt", "name": "a", "mimeType": "text/plain", "text": "hello"},
                    {"uri": "mem://b", "name": "b", "blob": base64.b64encode(b"\0").decode()},
                ],
                resource_templates=[{"uriTemplate": "file:///{name}", "name": "files"}],
                prompts=[
                    {
                        "name": "greet",
                        "description": "Greets.",
                        "messages": ["Hi", {"role": "assistant", "content": "Hello"}],
                    }
                ],
                sse=sse,
            ),
        )
        tap = Tap(stub)

        async def body(s: ClientSession) -> Any:
            await s.list_tools()
            text = await s.call_tool("search", {"query": "x"})
            image = await s.call_tool("search", {"query": "y"})
            failed = await s.call_tool("search", {"query": "z"})
            weather = await s.call_tool("weather", {"city": "Paris"})
            await s.list_resources()
            await s.list_resource_templates()
            read = await s.read_resource("file:///a.txt")
            blob = await s.read_resource("mem://b")
            await s.list_prompts()
            prompt = await s.get_prompt("greet")
            await s.send_ping()
            return text, image, failed, weather, read, blob, prompt

        text, image, failed, weather, read, blob, prompt = run(tap, body)
        assert text.content[0].text == "a"
        assert (image.content[0].type, image.content[0].mime_type, image.content[0].data) == (
            "image",
            "image/png",
            base64.b64encode(b"png").decode(),
        )
        assert (failed.is_error, failed.content[0].text) == (True, "b")
        assert weather.structured_content == {"celsius": 21}
        assert json.loads(weather.content[0].text) == {"celsius": 21}  # the spec's serialized copy
        assert (read.contents[0].text, read.contents[0].mime_type) == ("hello", "text/plain")
        assert base64.b64decode(blob.contents[0].blob) == b"\0"
        assert prompt.description == "Greets."
        assert [(m.role, m.content.text) for m in prompt.messages] == [("user", "Hi"), ("assistant", "Hello")]
        validated = []
        for record, (kind, raw) in zip(stub.requests, tap.answers, strict=True):
            if record.method != "POST" or record.mcp_method.startswith("notifications/"):
                continue
            answer = message_of(kind, raw)
            assert answer["id"] == record.body["id"]
            methods.validate_server_result(record.mcp_method, "2025-11-25", answer["result"])
            validated.append(record.mcp_method)
        assert len(validated) == 13
        assert validated[0] == "initialize"
        stub.check()


def test_results_per_tool_and_from_a_function() -> None:
    per_tool = ScriptTransport(
        [],
        mcp=MCPScript(
            tools=[SEARCH, WEATHER], results={"search": ["s1"], "weather": [{"structuredContent": {"celsius": 3}}]}
        ),
    )

    async def body(s: ClientSession) -> Any:
        w = await s.call_tool("weather", {"city": "Oslo"})
        q = await s.call_tool("search", {"query": "x"})
        return w.structured_content, q.content[0].text

    assert run(per_tool, body) == ({"celsius": 3}, "s1")
    per_tool.check()

    def answer(record: RecordedRequest) -> Any:
        return f"{record.tool_name}: {record.arguments['query']}"

    function = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=answer))
    assert run(function, lambda s: s.call_tool("search", {"query": "cats"})).content[0].text == "search: cats"
    function.check()


def test_a_scripted_json_rpc_error_reaches_the_client_as_an_mcp_error() -> None:
    stub = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=[{"error": {"code": -32000, "message": "down"}}]))
    error = run(stub, failing(lambda s: s.call_tool("search", {"query": "x"})))
    assert (error.error.code, error.error.message) == (-32000, "down")
    assert stub.problems == []
    stub.check()


# ---------------------------------------------------------------------- loud


def test_an_unused_result_fails_check() -> None:
    stub = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=["first", {"text": "second", "isError": True}]))
    run(stub, lambda s: s.call_tool("search", {"query": "x"}))
    with pytest.raises(AssertionError) as caught:
        stub.check()
    assert str(caught.value) == (
        "wirescript: 1 MCP tool result(s) were never requested:\n  - mcp results[1]: isError text 'second'"
    )
    stub.check(unused_turns=False)


def test_a_call_past_the_end_of_the_results_is_unscripted() -> None:
    stub = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=["only"]))

    async def body(s: ClientSession) -> Any:
        await s.call_tool("search", {"query": "x"})
        return await s.call_tool("search", {"query": "y"})

    error = run(stub, failing(body))
    assert error.error.code == -32603
    assert "past the end of the MCP script's results" in error.error.message
    [problem] = stub.problems
    assert problem.kind == "unscripted"
    assert "calls the tool 'search' past the end" in problem.reason


def test_a_call_to_a_tool_never_listed_is_a_json_rpc_error_and_a_problem() -> None:
    stub = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=["kept"]))
    error = run(stub, failing(lambda s: s.call_tool("delete_repo", {"repo": "x"})))
    assert error.error.code == -32602
    assert error.error.message.startswith("Unknown tool: delete_repo (the MCP script lists: search).")
    [problem] = stub.problems
    assert (problem.kind, "strict rule mcp.unknown-tool" in problem.reason) == ("strict", True)
    [call] = [r for r in stub.requests if r.mcp_method == "tools/call"]
    assert (call.tool_name, call.arguments, call.problem) == ("delete_repo", {"repo": "x"}, problem)
    with pytest.raises(AssertionError, match=r"mcp=tools/call tool='delete_repo'"):
        stub.check()
    assert len(stub.pending) == 0
    assert "results[0]" in _unused(stub)


def test_arguments_that_break_the_input_schema_get_an_is_error_result_and_a_problem() -> None:
    stub = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=["kept"]))
    result = run(stub, lambda s: s.call_tool("search", {"q": "typo"}))
    assert result.is_error is True
    assert result.content[0].text.startswith("Input validation error: 'query' is a required property.")
    [problem] = stub.problems
    assert problem.kind == "strict"
    assert "mcp.tool-arguments" in problem.reason
    assert "results[0]" in _unused(stub)


def test_the_rules_can_be_skipped_or_turned_off() -> None:
    stub = ScriptTransport(
        [], mcp=MCPScript(tools=[SEARCH], results=["a", "b"]), strict_skip=["mcp.unknown-tool", "mcp.tool-arguments"]
    )

    async def body(s: ClientSession) -> Any:
        return await s.call_tool("other", {}), await s.call_tool("search", {"q": 1})

    first, second = run(stub, body)
    assert (first.content[0].text, second.content[0].text) == ("a", "b")
    stub.check()
    lenient = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=["a"]), strict=False)
    assert run(lenient, lambda s: s.call_tool("search", {})).content[0].text == "a"
    lenient.check()


def test_unknown_resources_prompts_and_methods_are_problems_with_the_specs_errors() -> None:
    stub = ScriptTransport(
        [],
        mcp=MCPScript(
            tools=[SEARCH],
            resources=[{"uri": "file:///a", "name": "a", "text": "x"}],
            prompts=[{"name": "greet", "arguments": [{"name": "who", "required": True}], "messages": ["Hi"]}],
        ),
    )
    codes: list[int] = []

    async def body(s: ClientSession) -> None:
        for call in (
            lambda: s.read_resource("file:///missing"),
            lambda: s.get_prompt("nope"),
            lambda: s.get_prompt("greet"),
            lambda: s.complete(
                mcp.types.PromptReference(type="ref/prompt", name="greet"), {"name": "who", "value": ""}
            ),
        ):
            try:
                await call()
            except MCPError as exc:
                codes.append(exc.error.code)

    run(stub, body)
    assert codes == [-32002, -32602, -32602, -32601]
    kinds = [(p.kind, p.reason.split(" (")[0][:40]) for p in stub.problems]
    assert [k for k, _ in kinds] == ["unscripted", "unscripted", "strict", "unscripted"]
    assert "asks the MCP method 'completion/complete'" in stub.problems[3].reason


def test_a_request_of_an_ended_or_unknown_session_gets_404_and_is_a_problem() -> None:
    stub = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=["x"]))
    run(stub, lambda s: s.send_ping())  # the session ends with the client's DELETE

    async def late() -> list[int]:
        async with httpx2.AsyncClient(transport=stub) as http:
            headers = {"accept": "application/json, text/event-stream", "mcp-session-id": "wirescript-session-1"}
            ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
            ended = await http.post(URL, json=ping, headers=headers)
            unknown = await http.post(URL, json=ping, headers={**headers, "mcp-session-id": "forged"})
            missing = await http.post(URL, json=ping, headers={"accept": "application/json"})
            assert ended.json()["error"]["code"] == -32600
            assert ended.json()["id"] == 7
            return [ended.status_code, unknown.status_code, missing.status_code]

    assert asyncio.run(late()) == [404, 404, 400]
    reasons = [p.reason for p in stub.problems]
    assert "Session has been terminated" in reasons[0]
    assert "Invalid or expired session ID" in reasons[1]
    assert "Missing session ID" in reasons[2]


def test_a_stateless_server_issues_no_session() -> None:
    stub = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=["x"], sessions=False))
    run(stub, lambda s: s.call_tool("search", {"query": "x"}))
    # no GET stream, no DELETE (the SDK lists the tools after a call of one it has not listed)
    assert [(r.method, r.mcp_method) for r in stub.requests] == [
        ("POST", "initialize"),
        ("POST", "notifications/initialized"),
        ("POST", "tools/call"),
        ("POST", "tools/list"),
    ]
    assert all("mcp-session-id" not in r.headers for r in stub.requests)
    stub.check()


def test_malformed_messages_are_unreadable_with_json_rpc_errors() -> None:
    stub = ScriptTransport([], mcp=MCPScript(sessions=False))

    async def main() -> list[tuple[int, int]]:
        async with httpx2.AsyncClient(transport=stub) as http:
            answers = [
                await http.post(URL, content=b"{not json", headers={"content-type": "application/json"}),
                await http.post(URL, json=[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
                await http.post(URL, json={"id": 1, "method": "ping"}),
            ]
            return [(a.status_code, a.json()["error"]["code"]) for a in answers]

    assert asyncio.run(main()) == [(400, -32700), (400, -32600), (400, -32600)]
    assert [p.kind for p in stub.problems] == ["unreadable"] * 3
    assert "a JSON-RPC batch" in stub.problems[1].reason


def test_a_discover_probe_falls_back_to_initialize_without_a_problem() -> None:
    from mcp.client.client import Client

    stub = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=["found"]))

    async def main() -> Any:
        async with (
            httpx2.AsyncClient(transport=stub) as http,
            Client(streamable_http_client(URL, http_client=http)) as c,
        ):
            return c.protocol_version, (await c.call_tool("search", {"query": "x"})).content[0].text

    assert asyncio.run(main()) == ("2025-11-25", "found")
    assert posts(stub)[:2] == ["server/discover", "initialize"]
    stub.check()


def test_a_results_function_that_fails_is_a_script_error() -> None:
    def broken(record: RecordedRequest) -> Any:
        raise RuntimeError("no answer")

    stub = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=broken))
    assert (
        "raised RuntimeError: no answer"
        in run(stub, failing(lambda s: s.call_tool("search", {"query": "x"}))).error.message
    )
    assert [p.kind for p in stub.problems] == ["script_error"]
    bad = ScriptTransport([], mcp=MCPScript(tools=[WEATHER], results=[{"structuredContent": {"celsius": "warm"}}]))
    assert "breaks the tool's outputSchema" in run(bad, failing(lambda s: s.call_tool("weather", {}))).error.message
    assert [p.kind for p in bad.problems] == ["script_error"]


# ---------------------------------------------------------------------- other ways in


def test_the_same_script_over_the_loopback_server() -> None:
    stub = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=["over http"], sse=True))
    with stub.serve() as base:

        async def main() -> Any:
            async with session(None, base + "/mcp") as s:
                return await s.call_tool("search", {"query": "x"})

        result = asyncio.run(main())
    assert result.content[0].text == "over http"
    assert posts(stub) == ["initialize", "notifications/initialized", "tools/call", "tools/list"]
    assert {r.method for r in stub.requests} == {"POST", "GET", "DELETE"}
    stub.check()


def test_the_same_script_through_intercept_on_its_hosts() -> None:
    stub = ScriptTransport([], mcp=MCPScript(tools=[SEARCH], results=["intercepted"], hosts="mcp.test"))
    assert "mcp.test" in stub.intercept().hosts

    async def main() -> Any:
        async with session(None) as s:  # the SDK builds its own httpx2 client
            return await s.call_tool("search", {"query": "x"})

    with stub.intercept():
        result = asyncio.run(main())
    assert result.content[0].text == "intercepted"
    assert not MCPWire(MCPScript(hosts="mcp.test")).matches("POST", "/mcp", host="other.test")
    stub.check()


def test_the_fixture_fails_the_test_on_an_unused_result(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from wirescript import MCPScript

        def test_it(wirescript):
            wirescript([], mcp=MCPScript(tools=[{"name": "t"}], results=["never served"]))
        """
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        result = pytester.runpytest("-p", "wirescript.pytest_plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*1 MCP tool result(s) were never requested*", "*mcp results?0?: text 'never served'*"]
    )


def test_a_stub_without_mcp_has_no_mcp_wire() -> None:
    assert all(w.name != "mcp" for w in ScriptTransport([]).wires)
    stub = ScriptTransport([], mcp=MCPScript(), routes={"GET /v1/x": lambda r: {}})
    assert [w.name for w in stub.wires][:2] == ["routes", "mcp"]
    plain = ScriptTransport([])
    response = httpx2.Client(transport=plain).post(URL, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 404
    assert plain.problems[0].kind == "unknown_endpoint"


# ---------------------------------------------------------------------- the script, validated when built


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tools": [{"description": "x"}]}, "tools[0]: missing required field 'name'"),
        ({"tools": [{"name": "a"}, {"name": "a"}]}, "tools[1].name: 'a' is already tools[0]'s"),
        ({"tools": [{"name": "a", "input_schema": {}}]}, "did you mean 'inputSchema'?"),
        (
            {"tools": [{"name": "a", "inputSchema": {"type": "array"}}]},
            "tools[0].inputSchema: expected a schema of type 'object'",
        ),
        (
            {"tools": [{"name": "a", "inputSchema": {"type": "object", "properties": {"q": {"type": "strin"}}}}]},
            "tools[0].inputSchema['properties']['q']['type']: not a valid JSON Schema",
        ),
        ({"tools": [SEARCH], "results": [{"txt": "x"}]}, "results[0]: unknown field 'txt'"),
        ({"tools": [SEARCH], "results": [{"structured_content": {}}]}, "did you mean 'structuredContent'?"),
        (
            {"tools": [SEARCH], "results": [{"content": [{"type": "video"}]}]},
            "results[0].content[0].type: expected one of",
        ),
        (
            {"tools": [SEARCH], "results": [{"content": [{"type": "image", "data": "!!", "mimeType": "image/png"}]}]},
            "base64",
        ),
        ({"tools": [SEARCH], "results": [{"error": {"code": "x", "message": "m"}}]}, "results[0].error.code"),
        ({"tools": [SEARCH], "results": [{"error": {"code": 1, "message": "m"}, "text": "t"}]}, "takes no 'text'"),
        ({"tools": [SEARCH], "results": {"serch": ["x"]}}, "results['serch']: no tool of that name"),
        ({"tools": [WEATHER], "results": {"weather": ["plain text"]}}, "must carry structuredContent"),
        (
            {"tools": [WEATHER], "results": {"weather": [{"structuredContent": {"celsius": "x"}}]}},
            "results['weather'][0].structuredContent.celsius",
        ),
        ({"results": ["x"]}, "tools lists no tool"),
        ({"resources": [{"uri": "u", "name": "n"}]}, "resources[0]: expected its contents as one of 'text'"),
        ({"prompts": [{"name": "p"}]}, "prompts[0]: missing required field 'messages'"),
        ({"prompts": [{"name": "p", "messages": [{"role": "system", "content": "x"}]}]}, "prompts[0].messages[0].role"),
        ({"path": "mcp"}, "path: expected a URL path"),
        ({"protocol_version": "2026-07-28"}, "protocol_version: expected one of"),
        ({"sse": "yes"}, "sse: expected True or False"),
        ({"hosts": ["http://x"]}, "hosts:"),
    ],
)
def test_a_malformed_script_is_refused_naming_the_field(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ScriptError) as caught:
        MCPScript(**kwargs)
    assert message in str(caught.value)


def test_the_stub_refuses_an_mcp_that_is_not_a_script() -> None:
    with pytest.raises(ScriptError, match=r"mcp: expected a wirescript\.MCPScript, got dict"):
        ScriptTransport([], mcp={"tools": []})  # type: ignore[arg-type]


def test_tools_may_be_the_sdks_own_models() -> None:
    tool = mcp.types.Tool(name="search", input_schema=SEARCH["inputSchema"])
    script = MCPScript(tools=[tool])
    assert script.tools == ({"name": "search", "inputSchema": SEARCH["inputSchema"]},)


def test_importing_wirescript_does_not_import_jsonschema() -> None:
    import subprocess
    import sys

    code = "import sys, wirescript; wirescript.ScriptTransport([]); print('jsonschema' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def _unused(stub: ScriptTransport) -> str:
    try:
        stub.check(problems=False)
    except AssertionError as exc:
        return str(exc)
    return ""
