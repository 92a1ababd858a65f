"""aiohttp's reach: `intercept()` serves aiohttp sessions, and the network guard answers their refused requests.

google-genai's async client sends over aiohttp whenever aiohttp is installed (as it is with most
frameworks); the stub's answer must be a real `aiohttp.ClientResponse` that the SDK reads, streams
included, with the faults a dropped connection or a read timeout would cause.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest

aiohttp = pytest.importorskip("aiohttp")

from wirescript import ScriptTransport  # noqa: E402
from wirescript._adapters import aiohttp as _aiohttp  # noqa: E402

# google-genai subclasses aiohttp's ClientSession, which aiohttp discourages with a warning.
pytestmark = pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")

HI = [{"role": "user", "content": "Hi"}]
MESSAGES = "https://api.anthropic.com/v1/messages"
HEADERS = {"x-api-key": "test-key", "anthropic-version": "2023-06-01"}


def post(body: dict[str, Any], *, read: str = "json") -> Any:
    """POST `body` to the Messages API with a plain aiohttp session; what the response reads as."""

    async def run() -> Any:
        async with aiohttp.ClientSession() as session, session.post(MESSAGES, json=body, headers=HEADERS) as resp:
            if read == "lines":
                return resp.status, resp.headers["content-type"], [line async for line in resp.content]
            return resp.status, await resp.json()

    return asyncio.run(run())


def streamed(**extra: Any) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 64, "messages": HI, "stream": True, **extra}


def test_the_installed_aiohttp_is_one_the_adapter_supports() -> None:
    # The adapter builds the response with aiohttp pieces below its public API; they are the same from
    # 3.12 (client middlewares) to 3.14. A release outside the range is left unpatched: check it, then widen.
    assert _aiohttp.SUPPORTED == ((3, 12), (4, 0))
    assert _aiohttp.supported(aiohttp), f"aiohttp {aiohttp.__version__} is outside {_aiohttp.SUPPORTED}"
    from aiohttp.client_proto import ResponseHandler

    assert callable(ResponseHandler.set_response_params)
    assert callable(aiohttp.ClientRequest.send)
    assert callable(aiohttp.ClientResponse.start)
    assert "middlewares" in inspect.signature(aiohttp.ClientSession.__init__).parameters


def test_google_genais_async_client_over_aiohttp_is_served(wirescript: Any) -> None:
    genai = pytest.importorskip("google.genai")
    stub = wirescript(["Served over aiohttp.", "Streamed over aiohttp, piece by piece."], intercept=True)

    async def run() -> tuple[str | None, list[str | None], bool]:
        client = genai.Client(api_key="test-key")  # built by the app: no http_options
        reply = await client.aio.models.generate_content(model="gemini-2.5-flash", contents="Hi")
        stream = await client.aio.models.generate_content_stream(model="gemini-2.5-flash", contents="Again")
        pieces = [chunk.text async for chunk in stream]
        return reply.text, pieces, client._api_client._use_aiohttp()

    text, pieces, over_aiohttp = asyncio.run(run())
    assert over_aiohttp  # the premise: google-genai chose aiohttp, as it does whenever aiohttp is installed
    assert text == "Served over aiohttp."
    assert len(pieces) > 1
    assert "".join(p or "" for p in pieces) == "Streamed over aiohttp, piece by piece."
    plain, sse = stub.requests
    assert (plain.provider, plain.stream, plain.last_user_text) == ("gemini", False, "Hi")
    assert (sse.stream, sse.query, sse.last_user_text) == (True, {"alt": "sse"}, "Again")
    assert plain.headers["x-goog-api-key"] != "test-key"  # recorded, and redacted as the httpx path redacts it


def test_a_stream_arrives_event_by_event_as_a_real_client_response() -> None:
    stub = ScriptTransport([{"text": "One two three four.", "fault": {"delay": 0.05}}])
    with stub.intercept():

        async def run() -> tuple[Any, list[float]]:
            async with (
                aiohttp.ClientSession() as session,
                session.post(MESSAGES, json=streamed(), headers=HEADERS) as resp,
            ):
                assert isinstance(resp, aiohttp.ClientResponse)
                assert resp.headers["content-type"].startswith("text/event-stream")
                arrivals = [time.perf_counter() async for line in resp.content if line.startswith(b"event:")]
                return resp.status, arrivals

        status, arrivals = asyncio.run(run())
    assert status == 200
    assert len(arrivals) >= 6  # message_start ... message_stop
    assert arrivals[-1] - arrivals[0] >= 0.2  # each event waited for its delay: read as it was sent
    assert stub.requests[0].stream is True
    stub.check()  # read to its end: no unfinished stream


def test_a_json_answer_and_an_error_turn_read_as_aiohttp_reads_them() -> None:
    stub = ScriptTransport(["Hello.", {"error": {"status": 529, "type": "overloaded_error"}}])
    with stub.intercept():
        ok = post({"model": "claude-test", "max_tokens": 64, "messages": HI})
        failed = post({"model": "claude-test", "max_tokens": 64, "messages": HI})
    assert ok[0] == 200
    assert ok[1]["content"][0]["text"] == "Hello."
    assert failed[0] == 529
    assert failed[1]["error"]["type"] == "overloaded_error"


def test_a_scripted_disconnect_fails_the_read_as_a_dropped_connection() -> None:
    stub = ScriptTransport(
        [
            {"text": "Cut short.", "fault": {"disconnect_after": 2}},
            {"text": "Never sent.", "fault": {"disconnect_after": 0}},
        ]
    )
    with stub.intercept():
        with pytest.raises(aiohttp.ClientPayloadError, match="Response payload is not completed"):
            post(streamed(), read="lines")
        with pytest.raises(aiohttp.ServerDisconnectedError):
            post(streamed(), read="lines")
    assert len(stub.requests) == 2


def test_a_scripted_read_timeout_fails_the_read_as_a_socket_timeout() -> None:
    stub = ScriptTransport(
        [{"text": "Stalls.", "fault": {"timeout_after": 1}}, {"text": "Never.", "fault": {"timeout_after": 0}}]
    )
    with stub.intercept():
        with pytest.raises(aiohttp.SocketTimeoutError):
            post(streamed(), read="lines")
        with pytest.raises(aiohttp.SocketTimeoutError):
            post(streamed(), read="lines")


def test_a_response_closed_early_stops_the_answer() -> None:
    stub = ScriptTransport([{"text": "A long answer, " * 20, "fault": {"delay": 0.01}}])
    with stub.intercept():

        async def run() -> bytes:
            async with aiohttp.ClientSession() as session:
                resp = await session.post(MESSAGES, json=streamed(), headers=HEADERS)
                first = await resp.content.readline()
                resp.close()
                return first

        assert asyncio.run(run()).startswith(b"event: message_start")
    # the stub saw the stream left unread, as it sees an httpx client's
    with pytest.raises(AssertionError, match="a stream that the app never read"):
        stub.check()


def test_other_hosts_and_a_closed_interception_are_left_to_aiohttp() -> None:
    stub = ScriptTransport(["Not for you."])

    async def get(url: str) -> int:
        async with aiohttp.ClientSession() as session, session.get(url) as resp:
            return resp.status

    from aiohttp import web

    async def serve_and_get() -> int:
        app = web.Application()

        async def ping(request: Any) -> Any:
            return web.json_response({"pong": True})

        app.router.add_get("/ping", ping)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        try:
            return await get(f"http://127.0.0.1:{port}/ping")
        finally:
            await runner.cleanup()

    with stub.intercept():
        assert asyncio.run(serve_and_get()) == 200  # a loopback service, not an intercepted host
    assert stub.requests == []


def test_the_guard_answers_a_forgotten_aiohttp_request_at_once(wirescript: Any) -> None:
    genai = pytest.importorskip("google.genai")
    client = genai.Client(api_key="test-key")  # no stub given, no interception

    async def ask() -> None:
        await client.aio.models.generate_content(model="gemini-2.5-flash", contents="Hi")

    started = time.perf_counter()
    with pytest.raises(genai.errors.ClientError) as info:
        asyncio.run(ask())
    # google-genai sleeps one to ten seconds before it retries a connection error: the guard's answer is a 403
    assert time.perf_counter() - started < 1.0
    assert info.value.code == 403
    assert "wirescript: blocked a DNS lookup of generativelanguage.googleapis.com:443" in str(info.value)
    assert "intercept=True" in str(info.value)
    assert [str(b) for b in wirescript.guard.blocked] == ["DNS lookup of generativelanguage.googleapis.com:443"]
    wirescript.guard._blocked.clear()  # expected here: not a failure of this test


def test_an_interception_reaches_aiohttp_imported_inside_it_and_lets_go_after() -> None:
    code = textwrap.dedent(
        """
        import asyncio, json, sys
        from wirescript import ScriptTransport
        assert "aiohttp" not in sys.modules
        stub = ScriptTransport(["Reached."])
        with stub.intercept():
            import aiohttp  # imported (by the interception already) where it is installed
            async def ask():
                async with aiohttp.ClientSession() as session:
                    async with session.post(
                        "https://api.anthropic.com/v1/messages",
                        json={"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]},
                        headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
                    ) as resp:
                        return (await resp.json())["content"][0]["text"]
            print(json.dumps(asyncio.run(ask())))
        print(aiohttp.ClientSession.__init__ is aiohttp.client.ClientSession.__dict__["__init__"])
        print(getattr(aiohttp.ClientSession.__init__, "__wrapped__", None) is None)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [json.dumps("Reached."), "True", "True"]  # put back exactly when the block closed


def test_aiohttp_is_not_imported_by_the_guard_or_by_wirescript() -> None:
    code = textwrap.dedent(
        """
        import sys
        import wirescript
        from wirescript.guard import NetworkGuard
        with NetworkGuard():
            pass
        print("aiohttp" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "False\n"
