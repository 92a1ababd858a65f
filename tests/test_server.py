"""The loopback HTTP server: a script served to apps in other processes, over a real socket."""

from __future__ import annotations

import asyncio
import io
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from _blocked import BLOCK_HTTPX
from _support import ANTHROPIC_HX as hx
from wirescript import RecordingTransport, ScriptTransport, UsageError
from wirescript.cli import main, serve_command
from wirescript.server import ScriptServer

pytest.importorskip("uvicorn")

pytest_plugins = ["pytester"]

APPS = pathlib.Path(__file__).parent / "apps"
PYTHON = sys.executable
USER = [{"role": "user", "content": "Hi"}]
PARAMS: dict[str, Any] = {
    "model": "claude-test",
    "max_tokens": 64,
    "messages": USER,
    "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
}
WEATHER_TOOL = {"tool": {"name": "get_weather", "input": {"city": "Paris"}}}
WEATHER_RESULT = '{"city": "Paris", "sky": "sunny", "celsius": 21}'


@pytest.fixture(autouse=True)
def _server_logs_nothing(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Scripted disconnects, stalls and stops are deliberate: uvicorn must not log them as errors."""
    yield
    assert [r.getMessage() for r in caplog.records if r.name.startswith("uvicorn")] == []


def app_env(**variables: str) -> dict[str, str]:
    """The test process's environment (provider variables already cleared) plus `variables`."""
    return {**os.environ, **variables}


def run_app(name: str, question: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, str(APPS / name), question], env=env, capture_output=True, text=True, timeout=60, check=False
    )


_CLIENTS: list[Any] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    """Close the test's clients: a pooled socket left to the garbage collector warns in a later test."""
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


def client(base_url: str, **kwargs: Any) -> Any:
    """A real anthropic client that reaches the server over the network stack, no transport of ours."""
    kwargs.setdefault("max_retries", 0)
    sdk = anthropic.Anthropic(api_key="test-key", base_url=base_url, **kwargs)
    _CLIENTS.append(sdk)
    return sdk


def _control(server: ScriptServer) -> dict[str, Any]:
    """The arguments of an httpx client of the server's control API: its base URL and its token."""
    return {"base_url": f"{server.base_url}/_wirescript", "headers": server.control_headers}


def refused(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


# ---------------------------------------------------------------------- apps in other processes


# The tests that start an app in another Python are among the slowest: each child imports its SDK (about
# 1.8 s of CPU for anthropic 2.x with bytecode compiled, twice that without). A child per app is what they
# prove: the app reaches the stub only through its environment.


# Slow as the others above: two children, importing their SDKs at once. Two processes are the claim; the same two
# children prove each app's whole tool loop from its environment (a child more would cost 1-3 s of CPU).
def test_an_anthropic_and_an_openai_app_in_other_processes_are_held_then_run_their_tool_loops() -> None:
    def answer(request: Any) -> Any:
        return WEATHER_TOOL if not request.tool_results else f"Answer to {request.last_user_text}."

    stub = ScriptTransport(answer)
    stub.hold()
    with stub.serve() as base_url:
        env = app_env(ANTHROPIC_BASE_URL=base_url, OPENAI_BASE_URL=f"{base_url}/v1")
        env.update(ANTHROPIC_API_KEY="dummy-key", OPENAI_API_KEY="dummy-key")
        apps = [
            subprocess.Popen(
                [PYTHON, str(APPS / app), question],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for app, question in (("anthropic_agent.py", "one"), ("openai_agent.py", "two"))
        ]
        try:
            held = stub.wait_for_requests(2, timeout=30)
            # both asked, neither answered: both processes are still waiting on their response
            assert sorted(r.last_user_text or "" for r in held) == ["one", "two"]
            assert [app.poll() for app in apps] == [None, None]
            stub.release()
            outputs = [app.communicate(timeout=30) for app in apps]
        finally:
            for app in apps:
                app.kill()
                app.wait()
    assert outputs == [("Answer to one.\n", ""), ("Answer to two.\n", "")]
    assert [app.returncode for app in apps] == [0, 0]
    assert len(stub.requests) == 4
    wires = {
        "one": ("anthropic", "/v1/messages", "claude-test", True),
        "two": ("openai_chat", "/v1/chat/completions", "gpt-test", False),
    }
    for question, (provider, path, model, stream) in wires.items():
        first, second = (r for r in stub.requests if r.last_user_text == question)
        assert (first.provider, first.path, first.model, first.system) == (provider, path, model, "Be brief.")
        assert (first.stream, first.tool_names, first.tool_results) == (stream, ["get_weather"], [])
        assert first.api_key == "dummy-key"
        assert "dummy-key" not in repr(first.headers)
        # the app ran the tool and sent its result back: the loop really closed over the wire
        assert [result["content"] for result in second.tool_results] == [WEATHER_RESULT]
    anthropic_result, openai_result = (
        next(r for r in stub.requests if r.last_user_text == q and r.tool_results).tool_results[0] for q in wires
    )
    first_anthropic = next(r for r in stub.requests if r.last_user_text == "one")
    assert anthropic_result == {
        "type": "tool_result",
        "tool_use_id": f"toolu_{first_anthropic.index:04d}_0",
        "content": WEATHER_RESULT,
    }
    first_openai = next(r for r in stub.requests if r.last_user_text == "two")
    assert openai_result == {
        "role": "tool",
        "tool_call_id": f"call_{first_openai.index:04d}_0",
        "content": WEATHER_RESULT,
    }
    stub.check()


# ---------------------------------------------------------------------- the stub's semantics over HTTP


def test_overflow_over_http_is_a_loud_non_retried_error_counted_on_the_stub() -> None:
    stub = ScriptTransport(["Only turn."])
    with ScriptServer(stub) as server:
        sdk = client(server.base_url, max_retries=2)
        assert sdk.messages.create(**PARAMS).content[0].text == "Only turn."
        with pytest.raises(anthropic.BadRequestError) as caught:
            sdk.messages.create(**PARAMS)
        status = hx.get(f"{server.base_url}/_wirescript/status", headers=server.control_headers).json()
    problem = (
        "requests[1] POST /v1/messages (model 'claude-test') is past the end of the script: it has 1 turn(s), "
        "all served. The app made a model call the script does not expect; add a turn for it or find the extra call. "
        "It is the 2nd request (requests[1])."
    )
    assert caught.value.status_code == 400
    assert f"wirescript: {problem}" in str(caught.value)
    assert (stub.overflow, stub.problems, len(stub.requests)) == (1, [problem], 2)  # not retried
    assert status == {"requests": 2, "overflow": 1, "problems": [problem], "pending": [], "held": False}


def test_streamed_events_are_flushed_one_by_one_and_a_scripted_read_timeout_stalls() -> None:
    # `timeout_after: 1`: one event goes out, then nothing. Reading that first event proves it was
    # flushed on its own; the client's own read timeout then fires, as on a network.
    stub = ScriptTransport([{"text": "Never finished.", "fault": {"timeout_after": 1}}])
    with stub.serve() as base_url, hx.Client(timeout=hx.Timeout(5.0, read=0.5)) as http:
        body = {**PARAMS, "stream": True}
        headers = {"x-api-key": "test-key", "anthropic-version": "2023-06-01"}
        with http.stream("POST", f"{base_url}/v1/messages", json=body, headers=headers) as response:
            lines = response.iter_lines()
            first = [next(lines), next(lines), next(lines)]
            with pytest.raises(hx.ReadTimeout):
                next(lines)
    assert response.status_code == 200
    assert first[0] == "event: message_start"
    assert json.loads(first[1].removeprefix("data: "))["type"] == "message_start"
    assert first[2] == ""


def test_a_streamed_answer_does_not_wait_on_the_clients_delayed_ack() -> None:
    # A streamed answer is several small writes. Without TCP_NODELAY on the accepted socket, each one
    # after the first waits for the client's delayed ACK: never under 40 ms on Linux (more elsewhere),
    # so all but one or two of 15 requests on a kept-alive connection took 40-50 ms. Fixed, one takes
    # a few ms. Load only adds time, so the test asks for 6 of the 15 under 30 ms: below any stall,
    # far above the fixed cost of the fastest few, however busy the machine.
    requests = 15
    stub = ScriptTransport(["Hi."] * (requests + 1))
    elapsed = []
    with stub.serve() as base_url:
        sdk = client(base_url)
        with sdk.messages.stream(**PARAMS) as stream:  # connects; the rest reuse this connection
            stream.get_final_message()
        for _ in range(requests):
            started = time.perf_counter()
            with sdk.messages.stream(**PARAMS) as stream:
                assert stream.get_final_message().content[0].text == "Hi."
            elapsed.append(time.perf_counter() - started)
    assert sum(t < 0.030 for t in elapsed) >= 6, sorted(round(t * 1e3, 1) for t in elapsed)


def test_a_scripted_disconnect_closes_the_connection_mid_stream_as_in_process() -> None:
    turn = {"text": "Hello there, friend.", "fault": {"disconnect_after": 4}}
    stub = ScriptTransport([turn, turn])
    in_process = anthropic.Anthropic(api_key="test-key", http_client=hx.Client(transport=stub), max_retries=0)
    received: list[list[str]] = [[], []]
    with pytest.raises(hx.RemoteProtocolError) as local:  # noqa: SIM117
        with in_process.messages.stream(**PARAMS) as stream:
            received[0].extend(stream.text_stream)
    with stub.serve() as base_url, pytest.raises(hx.RemoteProtocolError) as remote:  # noqa: SIM117
        with client(base_url).messages.stream(**PARAMS) as stream:
            received[1].extend(stream.text_stream)
    # message_start, ping, content_block_start and one text delta arrived, then the connection dropped
    assert received == [["Hello th"], ["Hello th"]]
    assert str(local.value) == "wirescript: scripted disconnect after 4 events"
    assert str(remote.value) == "peer closed connection without sending complete message body (incomplete chunked read)"
    assert len(stub.requests) == 2


def test_a_disconnect_before_the_response_drops_the_connection_without_answering() -> None:
    stub = ScriptTransport([{"text": "Lost.", "fault": {"disconnect_after": 0}}, "Next."])
    with stub.serve() as base_url:
        sdk = client(base_url)
        with pytest.raises(anthropic.APIConnectionError) as caught:
            sdk.messages.create(**PARAMS)
        assert sdk.messages.create(**PARAMS).content[0].text == "Next."  # the server is still serving
    assert isinstance(caught.value.__cause__, hx.RemoteProtocolError)
    assert str(caught.value.__cause__) == "Server disconnected without sending a response."
    assert [r.turn_index for r in stub.requests] == [0, 1]


def test_latency_beyond_the_client_timeout_is_a_real_client_timeout() -> None:
    stub = ScriptTransport([{"text": "Too late.", "fault": {"first_byte_delay": 30}}])
    with stub.serve() as base_url, pytest.raises(anthropic.APITimeoutError):
        client(base_url, timeout=0.3).messages.create(**PARAMS)
    # the server stopped at once although the stub was still sleeping on the request
    assert len(stub.requests) == 1


def test_the_same_stub_serves_in_process_and_over_http_with_one_record() -> None:
    stub = ScriptTransport(["In process.", "Over HTTP."])
    in_process = anthropic.Anthropic(api_key="test-key", http_client=hx.Client(transport=stub))
    with stub.serve() as base_url:
        assert in_process.messages.create(**PARAMS).content[0].text == "In process."
        assert client(base_url).messages.create(**PARAMS).content[0].text == "Over HTTP."
    assert [r.turn_index for r in stub.requests] == [0, 1]
    assert stub.requests[1].headers["host"] == base_url.removeprefix("http://")


def test_an_async_client_streams_over_http_while_the_stub_holds_and_releases() -> None:
    stub = ScriptTransport(lambda request: f"Streamed to {request.last_user_text}.")

    async def main(base_url: str) -> list[str]:
        async with anthropic.AsyncAnthropic(api_key="test-key", base_url=base_url, max_retries=0) as sdk:

            async def ask(who: str) -> str:
                params = {**PARAMS, "messages": [{"role": "user", "content": who}]}
                async with sdk.messages.stream(**params) as stream:
                    return "".join([text async for text in stream.text_stream])

            stub.hold()
            tasks = [asyncio.create_task(ask(who)) for who in ("a", "b", "c")]
            await stub.wait_for_requests_async(3, timeout=10)
            assert not any(task.done() for task in tasks)
            stub.release()
            return list(await asyncio.gather(*tasks))

    with stub.serve() as base_url:
        answers = asyncio.run(main(base_url))
    assert answers == ["Streamed to a.", "Streamed to b.", "Streamed to c."]
    assert sorted(r.last_user_text or "" for r in stub.requests) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("host", "target"),
    [
        (b"127.0.0.1:8123", b"/v1/messages"),
        (b"LocalHost", b"/v1/models/claude%2Dtest?limit=2&after=x%20y"),
        (b"[::1]:80", b"/v1beta/models/gemini-test:streamGenerateContent?alt=sse"),
        (b"api.example:443", b"/model/anthropic.claude-3%3A0/./converse"),
        (b"stub", b"/v1/files/../chat/completions"),
        (None, b"/v1/../../responses"),
    ],
)
def test_the_asgi_adapter_reads_a_url_as_an_httpx_client_would(host: bytes | None, target: bytes) -> None:
    """The server's requests reach the core as they did through an httpx request: host, port, path, query."""
    from wirescript._adapters import asgi as _asgi
    from wirescript._adapters import http as _http

    httpx2 = pytest.importorskip("httpx2")
    raw_path, _, query = target.partition(b"?")
    headers = [(b"content-type", b"application/json")] + ([(b"host", host)] if host is not None else [])
    scope = {
        "type": "http",
        "method": "POST",
        "path": raw_path.decode(),
        "raw_path": raw_path,
        "query_string": query,
        "headers": headers,
        "server": ("127.0.0.1", 8123),
    }
    netloc = (host or b"127.0.0.1:8123").decode()
    url = f"http://{netloc}{raw_path.decode()}" + (f"?{query.decode()}" if query else "")
    expected = _http.read(httpx2.Request("POST", url, headers=headers, content=b"{}"))
    got = _asgi.read(scope, b"{}")
    assert (got.method, got.host, got.port, got.path, got.query) == (
        expected.method,
        expected.host,
        expected.port,
        expected.path,
        expected.query,
    )
    assert (got.headers, got.body, got.per_event, got.unreadable) == (headers, b"{}", True, None)


# ---------------------------------------------------------------------- control API


def test_control_api_reports_holds_and_releases_without_being_recorded() -> None:
    stub = ScriptTransport(["First.", "Second."])
    with ScriptServer(stub) as server, hx.Client(**_control(server)) as control:
        base_url = server.base_url
        assert control.post("/hold").json() == {"held": True}
        assert stub.held
        answers: list[str] = []
        worker = threading.Thread(
            target=lambda: answers.append(client(base_url).messages.create(**PARAMS).content[0].text)
        )
        worker.start()
        waited = control.get("/requests", params={"wait": 1, "timeout": 10})
        assert [r["index"] for r in waited.json()] == [0]
        assert answers == []  # recorded, still held
        assert control.get("/status").json() == {
            "requests": 1,
            "overflow": 0,
            "problems": [],
            "pending": [{"queue": "*", "position": 1, "turn": "text 'Second.'"}],
            "held": True,
        }
        assert control.post("/release").json() == {"held": False}
        worker.join(10)
        assert answers == ["First."]
        check = control.get("/check")
        assert (check.status_code, check.json()) == (
            409,
            {
                "ok": False,
                "message": "wirescript: 1 scripted turn(s) were never requested:\n  - script[1]: text 'Second.'",
            },
        )
        listed = control.get("/requests")
    [record] = listed.json()
    assert (record["path"], record["model"], record["messages"], record["api_key"]) == (
        "/v1/messages",
        "claude-test",
        USER,
        "<redacted>",
    )
    assert record["headers"]["authorization" if "authorization" in record["headers"] else "x-api-key"] == ("<redacted>")
    assert "test-key" not in listed.text
    assert "content" not in record
    assert len(stub.requests) == 1  # no control call was recorded


def test_control_api_check_passes_when_the_script_was_used_up() -> None:
    stub = ScriptTransport(["Only."])
    with ScriptServer(stub) as server:
        client(server.base_url).messages.create(**PARAMS)
        check = hx.get(f"{server.base_url}/_wirescript/check", headers=server.control_headers)
    assert (check.status_code, check.json()) == (200, {"ok": True})


@pytest.fixture(scope="module")
def idle_server() -> Iterator[ScriptServer]:
    """One stub served for every control-API error case: a failed control call changes nothing, so the
    cases need no server each (starting and stopping one costs about 0.2 s)."""
    with ScriptServer(ScriptTransport(["Unused."])) as server:
        yield server


@pytest.mark.parametrize(
    ("method", "path", "status", "error"),
    [
        (
            "GET",
            "/_wirescript/nope",
            404,
            (
                "wirescript: no control endpoint /_wirescript/nope; known: GET /_wirescript/requests, "
                "GET /_wirescript/status, GET /_wirescript/check, POST /_wirescript/hold, POST /_wirescript/release"
            ),
        ),
        ("GET", "/_wirescript/hold", 405, "wirescript: GET /_wirescript/hold is not allowed; use POST"),
        ("POST", "/_wirescript/status", 405, "wirescript: POST /_wirescript/status is not allowed; use GET"),
        (
            "GET",
            "/_wirescript/requests?wait=two",
            400,
            "wirescript: wait: expected a non-negative integer, got 'two'",
        ),
        (
            "GET",
            "/_wirescript/requests?wait=1&timeout=0",
            400,
            "wirescript: timeout: expected a positive number of seconds below 3600, got '0'",
        ),
        (
            "GET",
            "/_wirescript/requests?since=3",
            400,
            "wirescript: unknown query parameter(s) since; known: wait, timeout",
        ),
        (
            "GET",
            "/_wirescript/requests?wait=1&timeout=0.05",
            504,
            (
                "wirescript: waited 0.05 s for 1 request(s), 0 arrived. Is the app still running, or did it send "
                "fewer requests than the test expects?"
            ),
        ),
    ],
)
def test_control_api_errors_name_what_was_expected(
    idle_server: ScriptServer, method: str, path: str, status: int, error: str
) -> None:
    stub = idle_server.stub
    response = hx.request(method, f"{idle_server.base_url}{path}", headers=idle_server.control_headers)
    assert (response.status_code, response.json()) == (status, {"error": error})
    if status == 405:
        assert response.headers["allow"] == ("POST" if "hold" in path else "GET")
    assert stub.requests == []  # shared by every case: no control call, failed or not, was ever recorded
    assert len(stub.pending) == 1  # nor consumed a turn


# ---------------------------------------------------------------------- lifecycle


def test_stop_leaves_no_thread_and_no_listening_port_behind() -> None:
    before = set(threading.enumerate())
    stub = ScriptTransport(["One."])
    server = ScriptServer(stub)
    base_url = server.start()
    port = server.port
    assert base_url == f"http://127.0.0.1:{port}"
    assert server.running
    assert client(base_url).messages.create(**PARAMS).content[0].text == "One."
    server.stop()
    assert not server.running
    assert set(threading.enumerate()) <= before  # no thread left behind
    assert refused(port)
    server.stop()  # idempotent
    assert len(stub.requests) == 1  # the stub keeps its records


def test_stop_returns_at_once_when_a_client_reads_nothing_of_a_long_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    # From Python 3.12 on, closing a listener waits for its every connection: one whose client reads nothing
    # held stop() past the grace period, and it raised with the server's thread left behind.
    import wirescript._uvicorn

    monkeypatch.setattr(wirescript._uvicorn, "_STOP_TIMEOUT", 2.0)
    before = set(threading.enumerate())
    stub = ScriptTransport([{"text": "x" * 16_000_000}])
    server = ScriptServer(stub)
    server.start()
    body = json.dumps(PARAMS).encode()
    with socket.socket() as reader:
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        reader.connect(("127.0.0.1", server.port))
        reader.sendall(
            b"POST /v1/messages HTTP/1.1\r\nhost: stub\r\nx-api-key: test-key\r\nanthropic-version: 2023-06-01\r\n"
            b"content-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body) + body
        )
        stub.wait_for_requests(1)
        time.sleep(0.3)  # the answer is being written; the client reads none of it
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 2.0  # within the grace period, not after it
    assert set(threading.enumerate()) <= before  # no thread left behind


def test_stop_answers_a_request_still_held_with_an_error_that_says_so() -> None:
    before = set(threading.enumerate())
    stub = ScriptTransport(["Never sent."])
    stub.hold()
    errors: list[BaseException] = []

    def ask(base_url: str) -> None:
        try:
            client(base_url).messages.create(**PARAMS)
        except anthropic.APIError as exc:
            errors.append(exc)

    with stub.serve() as base_url:
        worker = threading.Thread(target=ask, args=(base_url,))
        worker.start()
        stub.wait_for_requests(1)
    worker.join(10)
    [error] = errors
    assert isinstance(error, anthropic.APIStatusError)
    assert error.status_code == 503
    assert error.body == {
        "type": "error",
        "error": {
            "type": "api_error",
            "message": "wirescript: the server stopped before answering POST /v1/messages",
        },
    }
    assert len(stub.requests) == 1  # the SDK did not retry: x-should-retry is false
    assert set(threading.enumerate()) <= before  # no thread left behind


def test_a_server_can_start_again_after_stopping() -> None:
    stub = ScriptTransport(["One.", "Two."])
    server = ScriptServer(stub)
    for expected in ("One.", "Two."):
        with server:
            assert client(server.base_url).messages.create(**PARAMS).content[0].text == expected


def test_an_explicit_port_and_the_ipv6_loopback_are_served() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    stub = ScriptTransport(["v4.", "v6."])
    with stub.serve(port=free) as base_url:
        assert base_url == f"http://127.0.0.1:{free}"
        assert client(base_url).messages.create(**PARAMS).content[0].text == "v4."
    if not socket.has_ipv6:  # pragma: no cover
        return
    try:
        with stub.serve(host="::1") as base_url:
            assert base_url.startswith("http://[::1]:")
            assert client(base_url).messages.create(**PARAMS).content[0].text == "v6."
    except UsageError as exc:  # pragma: no cover - a host without IPv6 loopback
        pytest.skip(str(exc))


def test_localhost_binds_the_ipv4_loopback() -> None:
    server = ScriptServer(ScriptTransport([]), host="localhost")
    with server:
        assert server.base_url == f"http://127.0.0.1:{server.port}"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com", ""])
def test_only_loopback_addresses_are_served(host: str) -> None:
    with pytest.raises(UsageError) as caught:
        ScriptServer(ScriptTransport([]), host=host)
    assert str(caught.value) == (
        f"host: wirescript serves on a loopback address only (127.0.0.1, ::1 or localhost), got {host!r}"
    )


@pytest.mark.parametrize("port", [-1, 65536, "8080", True, 1.5])
def test_the_port_must_be_an_integer_in_range(port: Any) -> None:
    with pytest.raises(UsageError) as caught:
        ScriptServer(ScriptTransport([]), port=port)
    assert str(caught.value) == f"port: expected an integer from 0 (a free port) to 65535, got {port!r}"


def test_a_port_in_use_is_refused_clearly() -> None:
    with ScriptServer(ScriptTransport([])) as first:
        port = first.port
        second = ScriptServer(ScriptTransport([]), port=port)
        with pytest.raises(UsageError) as caught:
            second.start()
    assert str(caught.value) == (
        f"port: cannot listen on 127.0.0.1:{port}: [Errno {98 if sys.platform == 'linux' else 48}] "
        "Address already in use"
    )
    assert not second.running


def test_a_server_that_fails_to_start_says_why_and_frees_the_port(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    async def broken(self: Any, sockets: Any = None) -> None:
        raise OSError("no event loop for you")

    monkeypatch.setattr(uvicorn.Server, "startup", broken)
    before = set(threading.enumerate())
    server = ScriptServer(ScriptTransport([]))
    with pytest.raises(RuntimeError) as caught:
        server.start()
    assert str(caught.value) == "wirescript: the server did not start: OSError('no event loop for you')"
    assert not server.running
    assert set(threading.enumerate()) <= before  # no thread left behind


def test_misuse_of_the_lifecycle_says_what_to_do() -> None:
    server = ScriptServer(ScriptTransport([]))
    with pytest.raises(UsageError) as caught:
        server.base_url  # noqa: B018
    assert str(caught.value) == "the server is not running: call start() or use it as a context manager"
    with server:
        with pytest.raises(UsageError) as caught:
            server.start()
        assert str(caught.value) == "the server is already running; stop() it first"
        assert repr(server) == f"<ScriptServer {server.base_url} <ScriptTransport requests=0 pending=0 overflow=0>>"
    assert repr(server) == "<ScriptServer stopped <ScriptTransport requests=0 pending=0 overflow=0>>"


def test_the_uvicorn_steps_overridden_are_those_of_the_versions_tested() -> None:
    """`wirescript._uvicorn` relies on four things of uvicorn beyond its documented API; checked for 0.30 to 0.54.

    `Server.serve()` runs `startup`, `main_loop` and `shutdown`, in that order (the last two are
    overridden, to stop in about 5 ms instead of 170 ms); `startup` keeps its asyncio servers in
    `servers` (closed by the shutdown); and the HTTP/1.1 protocol `http="h11"` names takes
    uvicorn's four constructor arguments (it is wrapped, to give the app each connection's transport).
    A uvicorn outside the range fails here first: check these four, then widen the range.
    """
    import inspect

    import uvicorn
    from uvicorn.protocols.http.h11_impl import H11Protocol

    version = tuple(int(part) for part in uvicorn.__version__.split(".")[:2])
    assert (0, 30) <= version < (0, 55), f"uvicorn {uvicorn.__version__}: check wirescript._uvicorn against it"
    serve = inspect.getsource(uvicorn.Server._serve)
    steps = [serve.index(step) for step in ("self.startup(", "self.main_loop()", "self.shutdown(")]
    assert steps == sorted(steps)
    assert "self.servers" in inspect.getsource(uvicorn.Server.startup)
    assert list(inspect.signature(H11Protocol).parameters) == ["config", "server_state", "app_state", "_loop"]
    assert inspect.signature(uvicorn.Server.shutdown).parameters.keys() == {"self", "sockets"}


def test_without_uvicorn_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    with pytest.raises(UsageError) as caught:
        ScriptServer(ScriptTransport([]))
    assert str(caught.value) == "serving a script over HTTP needs uvicorn: pip install 'wirescript[server]'"


def test_without_an_http_library_a_script_is_still_served_and_record_mode_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    monkeypatch.setitem(sys.modules, "httpx2", None)
    monkeypatch.setitem(sys.modules, "httpx", None)
    assert ScriptServer(ScriptTransport([])).app.stub is not None  # a stub's server reads ASGI requests itself
    with pytest.raises(UsageError) as caught:  # a recorder forwards each request with one of them
        ScriptServer(RecordingTransport(tmp_path / "rec.json"))
    assert str(caught.value) == (
        "record mode needs httpx2 or httpx to forward requests: pip install 'wirescript[httpx2]'"
    )


# ---------------------------------------------------------------------- the `wirescript serve` command


@pytest.fixture
def script_file(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([WEATHER_TOOL, "Sunny, 21 °C in Paris.", "Unused turn."]))
    return path


@pytest.fixture
def served(script_file: pathlib.Path) -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    """`python -m wirescript serve SCRIPT` running, with the base URL and the control API's token it printed."""
    process = subprocess.Popen(
        [PYTHON, "-m", "wirescript", "serve", str(script_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        token = process.stdout.readline().strip()
        yield process, base_url, token
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


# Slow: two children, `wirescript serve` and an anthropic app (see the app tests above).
def test_cli_serve_prints_the_url_serves_an_app_and_stops_cleanly_on_sigint(
    served: tuple[subprocess.Popen[str], str, str], script_file: pathlib.Path
) -> None:
    process, base_url, token = served
    assert base_url.startswith("http://127.0.0.1:")
    port = int(base_url.rpartition(":")[2])
    # the openai app: its SDK imports in half the CPU time of anthropic's; the anthropic app is served above
    done = run_app(
        "openai_agent.py", "Weather in Paris?", app_env(OPENAI_BASE_URL=f"{base_url}/v1", OPENAI_API_KEY="dummy")
    )
    assert (done.returncode, done.stdout) == (0, "Sunny, 21 °C in Paris.\n")
    with hx.Client(base_url=f"{base_url}/_wirescript", headers={"X-Wirescript-Token": token}) as control:
        records = control.get("/requests").json()
        status = control.get("/status").json()
        check = control.get("/check").json()
    assert [(r["index"], r["turn_index"], r["tool_names"]) for r in records] == [
        (0, 0, ["get_weather"]),
        (1, 1, ["get_weather"]),
    ]
    assert records[1]["tool_results"][0]["content"] == WEATHER_RESULT
    assert "dummy" not in json.dumps(records)
    assert status == {
        "requests": 2,
        "overflow": 0,
        "problems": [],
        "pending": [{"queue": "*", "position": 2, "turn": "text 'Unused turn.'"}],
        "held": False,
    }
    assert check["ok"] is False
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=15)
    assert (process.returncode, out) == (0, "")
    assert err.splitlines() == [
        (
            f"wirescript serve: {script_file} (3 turn(s)) at {base_url}; control API at {base_url}/_wirescript/ "
            "(requests, status, check, hold, release; send the token printed on stdout as X-Wirescript-Token); "
            "stop with Ctrl-C"
        ),
        "wirescript serve: stopped after 2 request(s), overflow 0",
        "wirescript: 1 scripted turn(s) were never requested:",
        "  - script[2]: text 'Unused turn.'",
    ]
    assert refused(port)


def test_cli_serve_stops_cleanly_on_sigterm(served: tuple[subprocess.Popen[str], str, str]) -> None:
    process, base_url, _ = served
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=15)
    assert (process.returncode, out) == (0, "")
    assert err.splitlines()[1:3] == [
        "wirescript serve: stopped after 0 request(s), overflow 0",
        "wirescript: 3 scripted turn(s) were never requested:",
    ]
    assert refused(int(base_url.rpartition(":")[2]))


def test_cli_serve_holds_releases_and_reports_overflow_for_a_runner_in_another_language(
    served: tuple[subprocess.Popen[str], str, str],
) -> None:
    process, base_url, token = served
    answers: list[str] = []
    with hx.Client(base_url=f"{base_url}/_wirescript", headers={"X-Wirescript-Token": token}, timeout=30) as control:
        assert control.post("/hold").json() == {"held": True}
        asking = threading.Thread(target=lambda: answers.append(client(base_url).messages.create(**PARAMS).stop_reason))
        asking.start()
        assert len(control.get("/requests", params={"wait": 1, "timeout": 30}).json()) == 1
        assert (answers, control.get("/status").json()["held"]) == ([], True)
        assert control.post("/release").json() == {"held": False}
        asking.join(30)
        assert answers == ["tool_use"]
        sdk = client(base_url)
        sdk.messages.create(**PARAMS)
        sdk.messages.create(**PARAMS)
        with pytest.raises(anthropic.BadRequestError):
            sdk.messages.create(**PARAMS)
        status = control.get("/status").json()
        check = control.get("/check")
    assert (status["requests"], status["overflow"], status["pending"]) == (4, 1, [])
    assert status["problems"] == [
        (
            "requests[3] POST /v1/messages (model 'claude-test') is past the end of the script: it has 3 "
            "turn(s), all served. The app made a model call the script does not expect; add a turn for it or "
            "find the extra call. It is the 4th request (requests[3])."
        )
    ]
    assert check.status_code == 409
    assert check.json()["message"].startswith("wirescript: 1 request(s) were not answered as scripted:")
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=15) == 0


_SERVE_WITHOUT_HTTPX = (
    BLOCK_HTTPX
    + """
from wirescript.cli import main

status = main(["serve", sys.argv[1]])
assert not {"httpx", "httpx2", "anyio"} & set(sys.modules), sorted(sys.modules)
print("served without httpx, httpx2 or anyio", file=sys.stderr)
sys.exit(status)
"""
)


# Slow: a child importing uvicorn and wirescript (no SDK). Its claim needs a process of its own: one that cannot import
# httpx, httpx2 or anyio at all, served to a real SDK.
def test_cli_serve_needs_neither_httpx_nor_httpx2(tmp_path: pathlib.Path) -> None:
    """`wirescript serve` with httpx, httpx2 and anyio blocked: answers, streams, faults, holds and the control API."""
    script = tmp_path / "script.json"
    turns = [
        "Hello without httpx.",
        {"text": "Streamed event by event.", "fault": {"delay": 0.001, "first_byte_delay": 0.01}},
        {"text": "Hello there, friend.", "fault": {"disconnect_after": 4}},
        {"text": "Never sent.", "fault": {"disconnect_after": 0}},
        "Held, then released.",
    ]
    script.write_text(json.dumps(turns))
    process = subprocess.Popen(
        [PYTHON, "-c", _SERVE_WITHOUT_HTTPX, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        token = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:"), process.communicate(timeout=15)
        sdk = client(base_url)
        assert sdk.messages.create(**PARAMS).content[0].text == "Hello without httpx."
        with sdk.messages.stream(**PARAMS) as stream:
            pieces = list(stream.text_stream)
        assert ("".join(pieces), len(pieces) > 1) == ("Streamed event by event.", True)
        cut: list[str] = []
        with pytest.raises(hx.RemoteProtocolError), sdk.messages.stream(**PARAMS) as stream:
            cut.extend(stream.text_stream)
        assert cut == ["Hello th"]
        with pytest.raises(anthropic.APIConnectionError):
            sdk.messages.create(**PARAMS)
        answers: list[str] = []
        control_url = f"{base_url}/_wirescript"
        with hx.Client(base_url=control_url, headers={"X-Wirescript-Token": token}, timeout=30) as control:
            assert control.post("/hold").json() == {"held": True}
            asking = threading.Thread(target=lambda: answers.append(sdk.messages.create(**PARAMS).content[0].text))
            asking.start()
            assert len(control.get("/requests", params={"wait": 5, "timeout": 30}).json()) == 5
            assert answers == []
            assert control.post("/release").json() == {"held": False}
            asking.join(30)
            status = control.get("/status").json()
            check = control.get("/check").json()
        assert answers == ["Held, then released."]
        assert (status["requests"], status["overflow"], status["problems"], status["pending"]) == (5, 0, [], [])
        assert check == {"ok": True}
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert (process.returncode, out) == (0, "")
    assert err.splitlines()[1:] == [
        "wirescript serve: stopped after 5 request(s), overflow 0",
        "served without httpx, httpx2 or anyio",
    ]


def test_cli_serve_reports_a_bad_script_file_before_printing_any_url(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"txt": "Hi"}]')
    assert main(["serve", str(bad)]) == 2
    assert capsys.readouterr() == (
        "",
        (
            f"wirescript serve: {bad}: invalid script[0]: unknown field 'txt' (expected one of: text, citations, "
            "server_tools, tool, tools, "
            "thinking, thinking_signature, usage, stop_reason, error, fault, unchecked); did you mean 'text'?\n"
        ),
    )


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (
            ["--host", "0.0.0.0"],
            "host: wirescript serves on a loopback address only (127.0.0.1, ::1 or localhost), got '0.0.0.0'",
        ),
        (["--port", "70000"], "port: expected an integer from 0 (a free port) to 65535, got 70000"),
        (["--hold-timeout", "0"], "hold_timeout: expected a positive number of seconds, got 0.0"),
        (["--max-records", "0"], "max_records: expected a positive int or None, got 0"),
    ],
)
def test_cli_serve_refuses_bad_options_before_printing_any_url(
    script_file: pathlib.Path, capsys: pytest.CaptureFixture[str], options: list[str], error: str
) -> None:
    assert main(["serve", str(script_file), *options]) == 2
    assert capsys.readouterr() == ("", f"wirescript serve: {error}\n")


def test_cli_serve_keeps_the_records_of_the_last_10000_requests_by_default(
    script_file: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import wirescript.server

    served: list[ScriptTransport] = []

    class Unstarted(ScriptServer):
        def start(self) -> str:
            assert isinstance(self.stub, ScriptTransport)
            served.append(self.stub)
            raise UsageError("not started by this test")

    monkeypatch.setattr(wirescript.server, "ScriptServer", Unstarted)
    for options in ([], ["--max-records", "3"], ["--max-records", "all"]):
        assert main(["serve", str(script_file), *options]) == 2
    assert serve_command(script_file) == 2
    assert [stub.max_records for stub in served] == [10_000, 3, None, 10_000]
    assert wirescript.server.MAX_RECORDS == 10_000
    for stub in served:
        stub.check(unused_turns=False)
    assert main(["serve", str(script_file), "--max-records", "many"]) == 2
    assert capsys.readouterr().err.endswith(
        "wirescript serve: error: argument --max-records: expected a positive integer or 'all', got 'many'\n"
    )


def test_a_bounded_stub_over_http_lists_its_last_records_and_keeps_every_problem() -> None:
    stub = ScriptTransport(["One.", "Two.", "Three."], max_records=2)
    with ScriptServer(stub) as server, hx.Client(**_control(server)) as control:
        sdk = client(server.base_url)
        assert hx.get(f"{server.base_url}/favicon.ico").status_code == 404  # requests[0]: a problem
        assert [sdk.messages.create(**PARAMS).content[0].text for _ in range(3)] == ["One.", "Two.", "Three."]
        listed = control.get("/requests", params={"wait": 4, "timeout": 5}).json()
        status = control.get("/status").json()
    assert [r["index"] for r in listed] == [2, 3]  # the last two
    assert status["requests"] == 4
    [problem] = stub.problems
    assert (problem.index, problem.kind, problem.path) == (0, "unknown_endpoint", "/favicon.ico")
    assert status["problems"] == [problem]
    stub.check(allow=["unknown_endpoint"])


def test_serve_command_at_its_former_place_still_works_with_a_deprecation_warning() -> None:
    import wirescript.cli
    import wirescript.server

    with pytest.warns(DeprecationWarning, match=r"use wirescript\.cli\.serve_command .* removed .* in 0\.3\.0"):
        former = wirescript.server.serve_command
    assert former is wirescript.cli.serve_command
    with pytest.raises(AttributeError):
        wirescript.server.record_command  # noqa: B018 - never released there


def test_serve_command_writes_to_the_streams_it_is_given(tmp_path: pathlib.Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert serve_command(tmp_path / "missing.json", out=out, err=err) == 2
    assert out.getvalue() == ""
    assert err.getvalue() == f"wirescript serve: {tmp_path / 'missing.json'}: no such script file\n"


# ---------------------------------------------------------------------- the `wirescript_server` fixture


def test_the_fixture_serves_a_script_made_by_the_wirescript_fixture(wirescript: Any, wirescript_server: Any) -> None:
    server = wirescript_server(["Served over HTTP."], hold_timeout=5.0)
    assert server.running
    assert wirescript.stubs == [server.stub]  # checked at teardown, after the server stopped
    assert server.stub.hold_timeout == 5.0
    assert client(server.base_url).messages.create(**PARAMS).content[0].text == "Served over HTTP."
    assert [r.turn_index for r in server.stub.requests] == [0]


def test_the_fixture_serves_an_existing_stub_but_refuses_options_for_it(
    wirescript: Any, wirescript_server: Any
) -> None:
    stub = wirescript(["Served."])
    server = wirescript_server(stub)
    assert server.stub is stub
    assert client(server.base_url).messages.create(**PARAMS).content[0].text == "Served."
    with pytest.raises(UsageError) as caught:
        wirescript_server(stub, hold_timeout=1.0)
    assert str(caught.value) == (
        "wirescript_server: options (hold_timeout) configure a new stub; pass a script with them, "
        "or the ScriptTransport alone"
    )


def test_the_fixture_fails_the_test_when_the_app_swallowed_an_overflow(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_app="""
        import anthropic

        def test_app(wirescript_server):
            server = wirescript_server(["Only turn."])
            with anthropic.Anthropic(api_key="test-key", base_url=server.base_url, max_retries=0) as sdk:
                for question in ("first", "second"):
                    try:
                        sdk.messages.create(
                            model="claude-test", max_tokens=64, messages=[{"role": "user", "content": question}]
                        )
                    except anthropic.BadRequestError:
                        pass  # the app swallows the error: only the fixture can notice
            assert server.running

        def test_stopped(wirescript_server):
            server = wirescript_server([])
            pytest_server.append(server)

        pytest_server = []

        def test_after():
            assert not pytest_server[0].running
        """
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        result = pytester.runpytest("-p", "wirescript.pytest_plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        [
            "wirescript: 1 request(s) were not answered as scripted:",
            "  - requests[1] POST /v1/messages model='claude-test' last=user:'second'",
            "    is past the end of the script: it has 1 turn(s), all served.*",
        ],
        consecutive=True,
    )
