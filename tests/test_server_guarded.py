"""The loopback server against what it must not serve: other origins, other hosts, floods, stalls and blocking code.

The control API answers only its own token and its own host, with no CORS grant; the model
endpoints keep what a page under test needs. Bodies are capped, request heads are timed, HTTP/2
and proxy requests are refused as problems, and a script function that blocks delays only its
own request, for at most the stub's `hold_timeout`.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from _support import ANTHROPIC_HX as hx
from wirescript import RecordingTransport, ScriptTransport, UsageError
from wirescript.server import HEADER_TIMEOUT, MAX_BODY, ScriptServer

pytest.importorskip("uvicorn")

PARAMS: dict[str, Any] = {"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}
HEADERS = {"x-api-key": "test-key", "anthropic-version": "2023-06-01", "content-type": "application/json"}
BODY = b'{"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}'


@pytest.fixture
def server() -> Iterator[ScriptServer]:
    with ScriptServer(ScriptTransport(["Hi."] * 3)) as running:
        yield running


def _raw(port: int, data: bytes, *, wait: float = 5.0) -> bytes:
    """Send `data` on a new connection and read until the server closes it (or `wait` passes)."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(data)
        sock.settimeout(wait)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except TimeoutError:
            received += b"<still open>"
    return received


def _access_control(response: Any) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.startswith("access-control-")}


def _preflight(url: str, origin: str, headers: str) -> Any:
    """A browser's CORS preflight, asking for private-network access too (Chrome's)."""
    asked = {"access-control-request-method": "POST", "access-control-request-headers": headers}
    return hx.request(
        "OPTIONS", url, headers={"origin": origin, **asked, "access-control-request-private-network": "true"}
    )


# ---------------------------------------------------------------------- the control API


def test_the_control_api_answers_only_requests_with_the_servers_token(server: ScriptServer) -> None:
    url = f"{server.base_url}/_wirescript/status"
    missing = hx.get(url)
    wrong = hx.get(url, headers={"X-Wirescript-Token": "guessed"})
    right = hx.get(url, headers={"X-Wirescript-Token": server.token})
    assert (missing.status_code, wrong.status_code, right.status_code) == (401, 401, 200)
    assert missing.json() == {
        "error": (
            "wirescript: the control API needs the X-Wirescript-Token header: send the token `wirescript serve` (or "
            "`wirescript record`) prints on the second line of its stdout (ScriptServer.token in Python)"
        )
    }
    assert wrong.json()["error"].startswith("wirescript: the control API got a wrong token in the X-Wirescript-Token")
    assert right.json()["requests"] == 0
    for refused in ("hold", "release"):  # nothing is driven without the token either
        assert hx.post(f"{server.base_url}/_wirescript/{refused}").status_code == 401
    assert not server.stub.held
    assert server.control_headers == {"X-Wirescript-Token": server.token}


def test_each_server_has_its_own_random_token() -> None:
    tokens = {ScriptServer(ScriptTransport([])).token for _ in range(3)}
    assert len(tokens) == 3
    assert all(len(token) >= 32 for token in tokens)


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:{port}", "127.0.0.1.nip.io:{port}"])
def test_the_control_api_refuses_a_host_that_is_not_this_machine(server: ScriptServer, host: str) -> None:
    # DNS rebinding: a page of attacker.example whose name now resolves to 127.0.0.1 sends its own Host.
    header = host.format(port=server.port)
    response = hx.get(f"{server.base_url}/_wirescript/requests", headers={**server.control_headers, "host": header})
    assert response.status_code == 403
    assert response.json()["error"] == (
        "wirescript: the control API answers requests for this machine only (Host: localhost, 127.0.0.1, ::1 or "
        f"127.0.0.1), got Host: {header}"
    )


@pytest.mark.parametrize("host", ["localhost:{port}", "127.0.0.1:{port}", "LOCALHOST", "127.0.0.2:{port}", "[::1]:1"])
def test_the_control_api_accepts_every_name_of_this_machine(server: ScriptServer, host: str) -> None:
    headers = {**server.control_headers, "host": host.format(port=server.port)}
    assert hx.get(f"{server.base_url}/_wirescript/status", headers=headers).status_code == 200


def test_the_control_api_grants_no_cors_and_no_private_network_access(server: ScriptServer) -> None:
    preflight = _preflight(f"{server.base_url}/_wirescript/requests", "https://attacker.example", "x-wirescript-token")
    listed = hx.get(
        f"{server.base_url}/_wirescript/requests",
        headers={**server.control_headers, "origin": "https://attacker.example"},
    )
    assert preflight.status_code == 401
    assert (_access_control(preflight), _access_control(listed)) == ({}, {})
    assert listed.status_code == 200  # a non-browser runner with the token still gets its answer


def test_the_model_endpoints_let_a_page_under_test_call_them_but_grant_no_private_network_access(
    server: ScriptServer,
) -> None:
    preflight = _preflight(
        f"{server.base_url}/v1/messages", "http://127.0.0.1:1", "x-api-key,anthropic-version,content-type"
    )
    answer = hx.post(
        f"{server.base_url}/v1/messages", content=BODY, headers={**HEADERS, "origin": "http://127.0.0.1:1"}
    )
    assert (preflight.status_code, preflight.content) == (204, b"")
    assert _access_control(preflight) == {
        "access-control-allow-origin": "*",
        "access-control-expose-headers": "*",
        "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
        "access-control-allow-headers": "x-api-key,anthropic-version,content-type",
        "access-control-max-age": "600",
    }
    assert _access_control(answer) == {"access-control-allow-origin": "*", "access-control-expose-headers": "*"}
    assert answer.json()["content"][0]["text"] == "Hi."
    assert len(server.stub.requests) == 1  # the preflight took no turn


# ---------------------------------------------------------------------- the recording server


def test_the_recording_servers_control_api_reports_the_recording(tmp_path: Path) -> None:
    provider = ScriptTransport(["Recorded."])
    rec = RecordingTransport(tmp_path / "rec.json", upstream=provider)
    with ScriptServer(rec) as server, hx.Client(base_url=f"{server.base_url}/_wirescript") as control:
        assert control.get("/status").status_code == 401  # the same token as a stub's server
        control.headers.update(server.control_headers)
        with anthropic.Anthropic(api_key="test-key", base_url=server.base_url, max_retries=0) as client:
            client.messages.create(**PARAMS)  # closed here: a pooled connection left open warns in a later test
        hx.get(f"{server.base_url}/favicon.ico")
        status, check = control.get("/status"), control.get("/check")
        waited = control.get("/requests", params={"wait": 2, "timeout": 5})
        held = control.post("/hold")
    note = "requests[1] GET /favicon.ico: not recorded: no wire serves this endpoint"
    assert status.status_code == 200
    assert status.json()["recording"] == str(tmp_path / "rec.json")
    assert (status.json()["requests"], status.json()["turns"]) == (2, 1)
    assert [n[: len(note)] for n in status.json()["notes"]] == [note]
    assert (check.status_code, check.json()["ok"], len(check.json()["notes"])) == (200, True, 1)
    assert [r["path"] for r in waited.json()] == ["/v1/messages", "/favicon.ico"]
    assert held.status_code == 409
    assert held.json()["error"] == (
        "wirescript: wirescript record forwards each request as it arrives and cannot hold it; "
        "hold and release need a script: wirescript serve"
    )


def test_the_recording_server_forwards_no_request_from_a_page_on_another_origin(tmp_path: Path) -> None:
    provider = ScriptTransport(["From the page under test."])
    rec = RecordingTransport(tmp_path / "rec.json", upstream=provider)
    with ScriptServer(rec) as server:
        url = f"{server.base_url}/v1/messages"
        foreign = hx.post(url, content=BODY, headers={**HEADERS, "origin": "https://attacker.example"})
        local = hx.post(url, content=BODY, headers={**HEADERS, "origin": "http://localhost:5173"})
    assert foreign.status_code == 400
    assert foreign.headers["x-should-retry"] == "false"
    assert "a request from the web page at https://attacker.example" in foreign.json()["error"]["message"]
    assert local.json()["content"][0]["text"] == "From the page under test."
    assert len(provider.requests) == 1  # the foreign one never reached the provider, nor the file
    assert [t.text for t in rec.turns] == ["From the page under test."]
    assert any("https://attacker.example" in note for note in rec.notes)


# ---------------------------------------------------------------------- floods and stalls


def test_a_body_over_the_cap_is_refused_unread_as_a_problem() -> None:
    stub = ScriptTransport(["Never sent."])
    with ScriptServer(stub, max_body=1000) as server:
        declared = hx.post(f"{server.base_url}/v1/messages", content=b"x" * 5000, headers=HEADERS)

        def chunks() -> Iterator[bytes]:  # no content-length: counted as it arrives
            yield from [b"y" * 600, b"y" * 600]

        streamed = hx.post(f"{server.base_url}/v1/messages", content=chunks(), headers=HEADERS)
        served = hx.post(f"{server.base_url}/v1/messages", content=BODY, headers=HEADERS)
    assert (declared.status_code, streamed.status_code) == (400, 400)
    assert declared.headers["connection"] == "close"  # what was not read cannot be skipped on a kept connection
    reason = (
        "the body is larger than the loopback server's limit of 1,000 bytes (ScriptServer(max_body=...)); "
        "it was not read, and nothing was consumed from the script."
    )
    assert [(p.kind, p.reason) for p in stub.problems] == [("unreadable", reason)] * 2
    assert [r.content for r in stub.requests[:2]] == [b"", b""]
    assert served.json()["content"][0]["text"] == "Never sent."  # the turn was still there
    assert MAX_BODY == 64 * 1024 * 1024


def test_a_request_head_trickled_in_slower_than_the_header_timeout_is_cut_off() -> None:
    stub = ScriptTransport(["Kept alive.", "Too slow for this one."])
    with ScriptServer(stub, header_timeout=0.3) as server:
        started = time.monotonic()
        assert _raw(server.port, b"POST /v1/messages HTTP/1.1\r\nhost: x\r\n") == b""  # closed, unanswered
        assert 0.25 < time.monotonic() - started < 3
        # A kept-alive connection is timed from the first byte of each head: one answer, then a stall.
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            head = b"POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: k\r\nanthropic-version: 2023-06-01\r\n"
            sock.sendall(head + b"content-length: %d\r\n\r\n" % len(BODY) + BODY)
            sock.settimeout(3)
            answer = b""
            while not answer.endswith(b"0\r\n\r\n"):  # the whole chunked answer
                answer += sock.recv(65536)
            assert b"Kept alive." in answer
            time.sleep(0.5)  # idle is not slow: the timer starts with the next head's first byte
            sock.sendall(b"POST /v1/messages HTTP/1.1\r\n")
            started = time.monotonic()
            assert sock.recv(65536) == b""
            assert time.monotonic() - started < 3
    assert [r.turn_index for r in stub.requests] == [0]
    assert HEADER_TIMEOUT == 10.0


@pytest.mark.parametrize(
    ("request_line", "reason"),
    [
        (
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
            (
                "an HTTP/2 connection preface (PRI * HTTP/2.0): the loopback server speaks HTTP/1.1 only; let the "
                "client use HTTP/1.1 (httpx2.Client(http2=False), the default)."
            ),
        ),
        (
            b"CONNECT api.anthropic.com:443 HTTP/1.1\r\nhost: api.anthropic.com:443\r\n\r\n",
            (
                "a proxy tunnel (CONNECT api.anthropic.com:443): the loopback server is not a proxy; point the SDK's "
                "base URL at it (ANTHROPIC_BASE_URL, OPENAI_BASE_URL) instead of HTTPS_PROXY."
            ),
        ),
        (
            b"GET http://api.openai.com/v1/models HTTP/1.1\r\nhost: api.openai.com\r\n\r\n",
            (
                "a proxy request for 'http://api.openai.com/v1/models': the loopback server is not a proxy; point the "
                "SDK's base URL at it (ANTHROPIC_BASE_URL, OPENAI_BASE_URL) instead of HTTP_PROXY."
            ),
        ),
    ],
    ids=["http2-preface", "connect", "absolute-url"],
)
def test_http2_and_proxy_requests_are_refused_as_problems(request_line: bytes, reason: str) -> None:
    stub = ScriptTransport(["Untouched."])
    with ScriptServer(stub) as server:
        answer = _raw(server.port, request_line)
    method = request_line.split(b" ", 1)[0].decode()
    assert answer.startswith(b"HTTP/1.1 404 ")  # no wire serves it: the envelope every SDK reads
    assert b"x-should-retry: false" in answer
    [problem] = stub.problems
    assert (problem.kind, problem.method, problem.path, problem.reason) == ("unreadable", method, "/", reason)
    assert len(stub.pending) == 1


@pytest.mark.parametrize(
    ("option", "value", "error"),
    [
        ("max_body", 0, "max_body: expected a positive number of bytes, got 0"),
        ("max_body", 1.5, "max_body: expected a positive number of bytes, got 1.5"),
        ("header_timeout", 0, "header_timeout: expected a positive, finite number of seconds, got 0"),
        ("header_timeout", float("inf"), "header_timeout: expected a positive, finite number of seconds, got inf"),
        ("header_timeout", True, "header_timeout: expected a positive, finite number of seconds, got True"),
    ],
)
def test_the_limits_must_be_positive(option: str, value: Any, error: str) -> None:
    with pytest.raises(UsageError) as caught:
        ScriptServer(ScriptTransport([]), **{option: value})
    assert str(caught.value) == error


# ---------------------------------------------------------------------- blocking script code


def test_a_blocking_script_function_delays_only_its_own_request() -> None:
    go = threading.Event()

    def answer(request: Any) -> str:
        if request.last_user_text == "slow":
            go.wait(10)
        return f"Answer to {request.last_user_text}."

    stub = ScriptTransport(answer)
    slow: list[str] = []
    with ScriptServer(stub) as server:
        sdk = anthropic.Anthropic(api_key="test-key", base_url=server.base_url, max_retries=0, timeout=5)
        asking = threading.Thread(
            target=lambda: slow.append(
                sdk.messages.create(**{**PARAMS, "messages": [{"role": "user", "content": "slow"}]}).content[0].text
            )
        )
        asking.start()
        try:
            stub.wait_for_requests(1, timeout=5)
            started = time.monotonic()
            fast = sdk.messages.create(**{**PARAMS, "messages": [{"role": "user", "content": "fast"}]})
            status = hx.get(f"{server.base_url}/_wirescript/status", headers=server.control_headers)
            elapsed = time.monotonic() - started
        finally:
            go.set()
            asking.join(10)
        sdk.close()
    assert fast.content[0].text == "Answer to fast."
    assert status.json()["requests"] == 2
    assert elapsed < 2.0  # not after the slow function's 10 s
    assert slow == ["Answer to slow."]
    assert stub.problems == []


@pytest.mark.parametrize("where", ["function", "fallback", "route"])
def test_script_code_that_does_not_return_is_cut_off_at_the_hold_timeout(where: str) -> None:
    never = threading.Event()

    def blocked(request: Any) -> Any:
        never.wait(30)
        return {"late": True} if where == "route" else "Too late."

    options: dict[str, Any] = {
        "function": {"script": blocked},
        "fallback": {"script": [], "fallback": blocked},
        "route": {"script": [], "routes": {"GET /v1/slow": blocked}},
    }[where]
    stub = ScriptTransport(options.pop("script"), hold_timeout=0.5, **options)
    server = ScriptServer(stub)
    server.start()
    try:
        started = time.monotonic()
        if where == "route":
            response = hx.get(f"{server.base_url}/v1/slow", timeout=10)
        else:
            response = hx.post(f"{server.base_url}/v1/messages", content=BODY, headers=HEADERS, timeout=10)
        elapsed = time.monotonic() - started
        stopping = time.monotonic()
        server.stop()
        stopped = time.monotonic() - stopping
    finally:
        never.set()
        server.stop()
    what = {"function": "script function", "fallback": "fallback", "route": "route handler"}[where]
    assert response.status_code == 400
    assert response.headers["x-should-retry"] == "false"
    [problem] = stub.problems
    assert problem.kind == "script_error"
    assert problem.reason == (
        f"the {what} did not return within 0.5 s (the stub's hold_timeout, which bounds it over the loopback "
        "server); the request was answered with this error. Make it return sooner, or raise hold_timeout."
    )
    assert problem.reason in response.text
    assert 0.4 < elapsed < 5
    assert stopped < 2.0  # the blocked function holds up neither the server's loop nor its stop
