"""The three contenders, each able to serve a workload for one round and to be set up for one test.

* ``floor``: ``httpx2.MockTransport`` returning the pre-built bytes wirescript produced.
* ``floor-copy``: the floor again, the A/A control.
* ``wirescript``: ``ScriptTransport`` serving the workload's turns.
* ``httpx2-pytest``: its ``HTTPXMock`` behind the real ``httpx2.HTTPTransport``, patched exactly as
  its ``httpx2_mock`` fixture patches it, serving the same pre-built bytes through its own matching.

A round serves one warm-up sample and then the timed samples, on one SDK client; whatever a
contender must do between samples (the peer re-registers its responses, as a fresh test would) is
done outside the timed region.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import httpx2

from wirescript import ScriptTransport

from .providers import Provider
from .workloads import Workload

STRICT = os.environ.get("WIRESCRIPT_BENCH_STRICT", "1") != "0"
"""Whether the wirescript contender checks the strict rules (its default); `WIRESCRIPT_BENCH_STRICT=0`
measures it without them, to price the checks in the same kind of run."""

# Set by the transport for a streamed body, not by wirescript: the floor's bytes get their own.
_TRANSPORT_HEADERS = frozenset({"content-length", "transfer-encoding"})


class Canned(NamedTuple):
    """One response exactly as wirescript sent it."""

    status: int
    headers: dict[str, str]
    body: bytes


class _Capture(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """Wraps a stub and keeps a copy of every response it sends."""

    def __init__(self, stub: ScriptTransport) -> None:
        self.stub = stub
        self.responses: list[Canned] = []

    def _keep(self, response: Any, body: bytes, request: Any) -> httpx2.Response:
        headers = {k: v for k, v in response.headers.items() if k.lower() not in _TRANSPORT_HEADERS}
        self.responses.append(Canned(response.status_code, headers, body))
        return httpx2.Response(response.status_code, headers=headers, content=body, request=request)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self.stub.handle_request(request)
        return self._keep(response, response.read(), request)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.stub.handle_async_request(request)
        return self._keep(response, await response.aread(), request)

    def close(self) -> None:
        self.stub.close()

    async def aclose(self) -> None:
        await self.stub.aclose()


def capture(provider: Provider, workload: Workload) -> tuple[list[Canned], Any]:
    """Run one sample on wirescript and keep its responses and its result; check the delta counts."""
    stub = ScriptTransport(list(workload.turns))
    recorder = _Capture(stub)
    if workload.is_async:
        client = provider.async_client(httpx2.AsyncClient(transport=recorder))
        result = asyncio.run(_run_and_close(workload.async_run(provider), client))
    else:
        with provider.sync_client(httpx2.Client(transport=recorder)) as client:
            result = workload.sync_run(provider)(client)
    stub.check()
    counts = tuple(provider.deltas(r.body) for r in recorder.responses)
    if counts != workload.deltas:
        raise AssertionError(
            f"{provider.name} {workload.key}: expected {workload.deltas} deltas per response, "
            f"wirescript streamed {counts}"
        )
    if any(r.status != 200 for r in recorder.responses):
        raise AssertionError(f"{provider.name} {workload.key}: wirescript answered {recorder.responses}")
    return recorder.responses, result


async def _run_and_close(run: Callable[[Any], Any], client: Any) -> Any:
    try:
        return await run(client)
    finally:
        await client.close()


@dataclass
class Round:
    """One contender's state for one round: an SDK client and what runs between samples."""

    client: Any
    before_sample: Callable[[], None] = lambda: None
    """Untimed, before the warm-up and before every timed sample."""
    finish: Callable[[], None] = lambda: None
    """Untimed, after the client is closed: check the round served what it should have."""


@dataclass
class Contender:
    """A way to serve the SDK: a name, a round factory and a set-up factory."""

    name: str
    start: Callable[[Provider, Workload, list[Canned], int], Round]
    """(provider, workload, canned responses, timed samples) -> a round."""
    build: Callable[[Provider, list[Canned]], Callable[[], Callable[[], None]]]
    """(provider, canned) -> a function that sets up one test (timed) and returns its teardown."""


def _http(workload: Workload, transport: Any = None) -> Any:
    if workload.is_async:
        return httpx2.AsyncClient(transport=transport)
    return httpx2.Client(transport=transport)


def _client(provider: Provider, workload: Workload, http: Any) -> Any:
    return provider.async_client(http) if workload.is_async else provider.sync_client(http)


# ---------------------------------------------------------------------------------------------- the floor


def _floor_transport(canned: list[Canned], served: list[int]) -> httpx2.MockTransport:
    responses = itertools.cycle(canned)

    def handler(request: httpx2.Request) -> httpx2.Response:
        status, headers, body = next(responses)
        served[0] += 1
        return httpx2.Response(status, headers=headers, content=body)

    return httpx2.MockTransport(handler)


def _floor_start(provider: Provider, workload: Workload, canned: list[Canned], samples: int) -> Round:
    served = [0]
    client = _client(provider, workload, _http(workload, _floor_transport(canned, served)))

    def finish() -> None:
        expected = len(workload.warmup_turns) + samples * workload.requests
        if served[0] != expected:
            raise AssertionError(f"floor served {served[0]} requests, expected {expected}")

    return Round(client, finish=finish)


def _floor_build(provider: Provider, canned: list[Canned]) -> Callable[[], Callable[[], None]]:
    def build() -> Callable[[], None]:
        served = [0]
        client = provider.sync_client(httpx2.Client(transport=_floor_transport(canned, served)))
        teardown: Callable[[], None] = client.close
        return teardown

    return build


# ---------------------------------------------------------------------------------------------- wirescript


def _wirescript_start(provider: Provider, workload: Workload, canned: list[Canned], samples: int) -> Round:
    stub = ScriptTransport([*workload.warmup_turns, *(list(workload.turns) * samples)], strict=STRICT)
    client = _client(provider, workload, _http(workload, stub))

    def finish() -> None:
        stub.check()  # every turn served, no overflow, no problem

    return Round(client, finish=finish)


def _wirescript_build(provider: Provider, canned: list[Canned]) -> Callable[[], Callable[[], None]]:
    from .workloads import SETUP_SCRIPT

    def build() -> Callable[[], None]:
        stub = ScriptTransport(list(SETUP_SCRIPT), strict=STRICT)
        client = provider.sync_client(httpx2.Client(transport=stub))
        teardown: Callable[[], None] = client.close
        return teardown

    return build


# ---------------------------------------------------------------------------------------------- the peer


class PeerFixture:
    """httpx2-pytest's `httpx2_mock` fixture, outside pytest: its own code, step for step.

    A pytest fixture cannot be called directly, so this repeats the fixture's body: an `HTTPXMock`
    with default options, `httpx2.HTTPTransport.handle_request` and
    `httpx2.AsyncHTTPTransport.handle_async_request` patched to consult it, and its teardown checks.
    """

    def __init__(self) -> None:
        import pytest
        from pytest_httpx2 import HTTPXMock
        from pytest_httpx2._options import _HTTPXMockOptions

        options = _HTTPXMockOptions()
        self.mock = mock = HTTPXMock(options)
        self._patch = pytest.MonkeyPatch()
        real_handle_request = httpx2.HTTPTransport.handle_request

        def mocked_handle_request(transport: httpx2.HTTPTransport, request: httpx2.Request) -> httpx2.Response:
            if options.should_mock(request):
                return mock._handle_request(transport, request)
            return real_handle_request(transport, request)

        self._patch.setattr(httpx2.HTTPTransport, "handle_request", mocked_handle_request)
        real_handle_async_request = httpx2.AsyncHTTPTransport.handle_async_request

        async def mocked_handle_async_request(
            transport: httpx2.AsyncHTTPTransport, request: httpx2.Request
        ) -> httpx2.Response:
            if options.should_mock(request):
                return await mock._handle_async_request(transport, request)
            return await real_handle_async_request(transport, request)

        self._patch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", mocked_handle_async_request)

    def close(self, *, check: bool = True) -> None:
        """The fixture's teardown: check every response was requested and no request was unexpected."""
        try:
            if check:
                self.mock._assert_options()
        finally:
            self.mock.reset()
            self._patch.undo()


def _peer_register(mock: Any, provider: Provider, canned: list[Canned], *, reusable: bool) -> None:
    for status, headers, body in canned:
        mock.add_response(
            status_code=status, headers=headers, content=body, url=provider.url, method="POST", is_reusable=reusable
        )


def _peer_start(provider: Provider, workload: Workload, canned: list[Canned], samples: int) -> Round:
    fixture = PeerFixture()
    # Concurrent identical requests: one reusable response (registering 200 would make its matching
    # quadratic). Otherwise one response per request, in order, as a test registers them.
    reusable = workload.is_async
    served = canned[:1] if reusable else canned
    client = _client(provider, workload, _http(workload))

    def before_sample() -> None:
        fixture.mock.reset()
        _peer_register(fixture.mock, provider, served, reusable=reusable)

    def finish() -> None:
        fixture.close()

    return Round(client, before_sample=before_sample, finish=finish)


def _peer_build(provider: Provider, canned: list[Canned]) -> Callable[[], Callable[[], None]]:
    def build() -> Callable[[], None]:
        fixture = PeerFixture()
        _peer_register(fixture.mock, provider, canned, reusable=False)
        client = provider.sync_client(httpx2.Client())

        def teardown() -> None:
            client.close()
            fixture.close(check=False)

        return teardown

    return build


FLOOR = Contender("floor", _floor_start, _floor_build)
FLOOR_COPY = Contender("floor-copy", _floor_start, _floor_build)
"""The floor again: the A/A control (its ratio to the floor is what the machine's noise alone makes of a ratio)."""
WIRESCRIPT = Contender("wirescript", _wirescript_start, _wirescript_build)
PEER = Contender("httpx2-pytest", _peer_start, _peer_build)
CONTENDERS = (FLOOR, FLOOR_COPY, WIRESCRIPT, PEER)
