"""What a scripted MCP server costs: an MCP tool loop on the stub, against the MCP SDK on canned answers.

``python -m benchmarks.mcp [--quick]``. One sample is one `ClientSession.call_tool` in an open
session (the SDK's JSON-RPC dispatcher, its streamable HTTP transport, httpx2, and the answer).

* ``floor``: the same session over an ``httpx2.MockTransport`` that answers each request with the
  bytes the stub answered it with (captured once): what the SDK and httpx2 cost on their own.
* ``wirescript``: the session on the stub (`ScriptTransport([], mcp=MCPScript(...))`): reading the
  request, the strict rules (the tool is listed, its arguments fit the `inputSchema`), taking the
  next result, recording the request, rendering the JSON-RPC answer.

The gate is the ratio of the medians (CPU time per call), measured in the same run, interleaved
round by round: `MCP_TARGET`. A stub without `mcp=` has no MCP wire at all (tests/test_mcp.py pins
it), so the model's requests pay nothing for it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from wirescript import MCPScript, ScriptTransport

from .paired import PairedRow, paired_row
from .timing import Stats

MCP_TARGET = 2.0
"""The stub's MCP tool call over the SDK's own on canned answers, CPU time per call: at most 2x."""

URL = "http://mcp.bench/mcp"
TOOL = {
    "name": "search",
    "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
}
ARGUMENTS = {"query": "wirescript"}


def _stub(calls: int) -> ScriptTransport:
    results = [f"result {i}" for i in range(calls)]
    return ScriptTransport([], mcp=MCPScript(tools=[TOOL], results=results))


async def _session_run(transport: Any, calls: int) -> list[float]:
    """Per-call CPU times of `calls` tool calls in one session on `transport`."""
    times: list[float] = []
    async with (
        httpx2.AsyncClient(transport=transport) as http,
        streamable_http_client(URL, http_client=http) as (read, write),
        ClientSession(read, write) as s,
    ):
        await s.initialize()
        await s.list_tools()
        for _ in range(calls):
            started = time.process_time()
            await s.call_tool("search", ARGUMENTS)
            times.append(time.process_time() - started)
    return times


class _Canned:
    """The floor's transport: the stub's answers, replayed by the JSON-RPC method (and the request id)."""

    def __init__(self, stub: ScriptTransport) -> None:
        self.stub = stub
        self.answers: dict[tuple[str, str | None], tuple[int, dict[str, str], bytes]] = {}
        self.ids: dict[tuple[str, str | None], bytes] = {}

    async def capture(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.stub.handle_async_request(request)
        body = await response.aread()
        self.answers[_key(request)] = (response.status_code, dict(response.headers), body)
        if b'"id":' in request.content:
            self.ids[_key(request)] = _id(request.content)
        return httpx2.Response(response.status_code, headers=response.headers, content=body)

    def replay(self, request: httpx2.Request) -> httpx2.Response:
        key = _key(request)
        status, headers, body = self.answers[key]
        if key in self.ids:  # the answer carries this request's id
            body = body.replace(b'"id":' + self.ids[key], b'"id":' + _id(request.content), 1)
        return httpx2.Response(status, headers=headers, content=body)


def _key(request: httpx2.Request) -> tuple[str, str | None]:
    if request.method != "POST":
        return request.method, None
    content = request.content
    method = content.split(b'"method":"', 1)[1].split(b'"', 1)[0].decode() if b'"method":"' in content else None
    return "POST", method


def _id(content: bytes) -> bytes:
    return content.split(b'"id":', 1)[1].split(b",", 1)[0].split(b"}", 1)[0]


async def _capture() -> _Canned:
    canned = _Canned(_stub(1))
    async with (
        httpx2.AsyncClient(transport=httpx2.MockTransport(canned.capture)) as http,
        streamable_http_client(URL, http_client=http) as (read, write),
        ClientSession(read, write) as s,
    ):
        await s.initialize()
        await s.list_tools()
        await s.call_tool("search", ARGUMENTS)
    return canned


def measure(rounds: int, calls: int) -> tuple[float, float, float]:
    """The ratio of the medians, and the two medians (seconds of CPU per call)."""
    canned = asyncio.run(_capture())
    mine: list[float] = []
    floor: list[float] = []
    for _ in range(rounds):
        floor.append(statistics.median(asyncio.run(_session_run(httpx2.MockTransport(canned.replay), calls))))
        stub = _stub(calls)
        mine.append(statistics.median(asyncio.run(_session_run(stub, calls))))
        stub.check()
    low, high = statistics.median(floor), statistics.median(mine)
    return high / low, high, low


def measure_row(rounds: int, calls: int) -> PairedRow:
    """The tool call as a row of `python -m benchmarks`: the stub and the floor's copy (A/A) over the floor.

    The three take turns round by round, each round a fresh session of `calls` calls.
    """
    canned = asyncio.run(_capture())
    times: dict[str, list[tuple[float, ...]]] = {"floor": [], "floor-copy": [], "wirescript": []}
    order = list(times)
    for number in range(rounds):
        for name in order[number % 3 :] + order[: number % 3]:
            if name == "wirescript":
                stub = _stub(calls)
                times[name].append(tuple(asyncio.run(_session_run(stub, calls))))
                stub.check()
            else:
                times[name].append(tuple(asyncio.run(_session_run(httpx2.MockTransport(canned.replay), calls))))
    stats = {name: Stats(tuple(kept), tuple(kept)) for name, kept in times.items()}
    return paired_row("mcp", "MCP tool loop: ClientSession.call_tool in an open session", MCP_TARGET, stats)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few rounds: that it runs, not a measurement")
    options = parser.parse_args(argv)
    rounds, calls = (2, 20) if options.quick else (9, 200)
    ratio, mine, floor = measure(rounds, calls)
    verdict = "ok" if ratio <= MCP_TARGET else "MISS"
    print(
        f"MCP tool call: wirescript {mine * 1e6:.0f} µs, floor {floor * 1e6:.0f} µs a call: "
        f"{ratio:.2f}x, target ≤ {MCP_TARGET:.2f}x  {verdict}"
    )
    return 0 if verdict == "ok" or options.quick else 1


if __name__ == "__main__":
    sys.exit(main())
