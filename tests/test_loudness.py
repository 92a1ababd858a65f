"""The loudness matrix: every way a test could pass while the app misbehaved (issue 14), tried both ways.

Each scenario is a piece of test code that builds its stubs with `make(...)`. It runs twice:

- without the plugin: `make` is `ScriptTransport`, and every stub the code built is `check()`ed
  afterwards (with the scenario's `allow`), as a user without pytest would;
- under the plugin (pytester, all scenarios in one run): `make` is the `wirescript` fixture (or the
  code builds `ScriptTransport`s by hand), with `@pytest.mark.wirescript(allow=...)`.

Either way the run must fail with a message matching `expect` (`direct`/`plugin` when the two ways
word it differently), or, for a scenario whose fix is to serve what used to break (`expect=None`),
pass with the assertions inside it holding. Reverting any fix makes its row pass silently, or fail
with another message, and so fails here.
"""

from __future__ import annotations

import importlib.util
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import pytest

import wirescript.server
from _support import ANTHROPIC_HX, STACKS
from wirescript import ScriptTransport
from wirescript._core import ledger as _ledger

pytest_plugins = ["pytester"]

# pytester restores `sys.modules` after each run: what the temporary tests import stays loaded.
assert anthropic
assert ANTHROPIC_HX
assert wirescript.server

# `hx` is the HTTP library the installed anthropic runs on: httpx2 for anthropic >= 1, httpx for 0.x.
# Only the first part is an f-string: the rest holds literal braces.
PRELUDE = (
    f"""
import asyncio, contextlib, gzip, json, math, os, socket, threading, time
import anthropic, pytest
import {ANTHROPIC_HX.__name__} as hx
"""
    """from wirescript import ScriptTransport, ScriptError
from wirescript.server import ScriptServer

P = dict(model="claude-test", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
URL = "https://api.anthropic.com/v1/messages"


def client(stub, **kw):
    kw.setdefault("max_retries", 0)
    return anthropic.Anthropic(api_key="test-key", http_client=hx.Client(transport=stub), **kw)


def aclient(stub, **kw):
    kw.setdefault("max_retries", 0)
    return anthropic.AsyncAnthropic(api_key="test-key", http_client=hx.AsyncClient(transport=stub), **kw)


def in_thread(function, *args, **kwargs):
    def run():
        with contextlib.suppress(Exception):
            function(*args, **kwargs)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
"""
)


@dataclass(frozen=True)
class Scenario:
    """One silent-pass scenario: its issue item, the code, and what the user now sees."""

    id: str
    item: str
    code: str
    expect: str | None
    """A regex the failure message must match; None: the scenario passes (its fix serves it)."""
    direct: str | None = None
    """`expect` for the run without the plugin, when it differs."""
    allow: tuple[str, ...] = ()
    marker: dict[str, Any] = field(default_factory=dict)
    needs: tuple[str, ...] = ()
    """Modules the scenario imports beyond the prelude's; without one it is skipped."""

    def wanted(self, plugin: bool) -> str | None:
        return self.expect if plugin or self.direct is None else self.direct

    @property
    def missing(self) -> list[str]:
        return [name for name in self.needs if importlib.util.find_spec(name) is None]


S = Scenario
HELD_AND_GAVE_UP = r"requests\[0\] POST /v1/messages.*\n\s+was held and its client gave up waiting"
SCENARIOS = [
    # 1 — exceptions that escaped the transport are refused at construction, naming the field
    S(
        "error-header-not-latin1",
        "1",
        """
        stub = make([{"error": {"status": 529, "headers": {"x-detail": "Überlastet"}}}, "Recovered."])
        with pytest.raises(anthropic.APIStatusError) as caught:
            client(stub).messages.create(**P)
        assert caught.value.status_code == 529        # the 529 is sent, not a retried connection error
        assert client(stub).messages.create(**P).content[0].text == "Recovered."
        """,
        None,
    ),
    S(
        "error-header-crlf",
        "1",
        'make([{"error": {"status": 400, "headers": {"x-note": "a\\r\\nInjected: 1"}}}, "next turn"])',
        r"headers.*x-note",
    ),
    S(
        "error-header-framing",
        "1",
        'make([{"error": {"status": 400, "headers": {"content-length": "3"}}}])',
        "content-length",
    ),
    S("int-beyond-4300-digits", "1", 'make([{"tool": {"name": "t", "input": {"n": 10**5000}}}])', r"input"),
    S("hold-timeout-inf", "1", 'make(["a"], hold_timeout=float("inf"))', "hold_timeout"),
    S("hold-timeout-nan", "1", 'make(["a"], hold_timeout=float("nan"))', "hold_timeout"),
    S(
        "render-backstop",
        "1",
        """
        from wirescript.wires.anthropic import AnthropicWire
        class Broken(AnthropicWire):
            def render(self, *args, **kwargs):
                raise RuntimeError("boom")
        stub = make(["hi"], wires=[Broken()])
        with pytest.raises(anthropic.BadRequestError):
            client(stub, max_retries=2).messages.create(**P)
        assert len(stub.requests) == 1   # not retried as a connection error
        """,
        r"wirescript failed while rendering the answer \(RuntimeError: boom\)",
    ),
    # 2 — a held request never released is listed, then released at teardown
    S(
        "held-never-released",
        "2",
        """
        stub = make(["one"])
        stub.hold()
        in_thread(client(stub).messages.create, **P)
        stub.wait_for_requests(1)
        """,
        r"1 request\(s\) are still held, waiting for release\(\):\n  - requests\[0\] POST /v1/messages",
    ),
    # 3 — a held request whose client gave up
    S(
        "held-wait-for-cancelled",
        "3, 12",
        """
        stub = make(["one"])
        async def main():
            stub.hold()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(aclient(stub).messages.create(**P), 0.2)
            waiter = asyncio.ensure_future(stub.wait_for_requests_async(10))
            await asyncio.sleep(0.01)
            waiter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiter
        asyncio.run(main())
        assert not stub._ledger.signal.waiting   # 12: no cancelled waiter keeps its closed loop alive
        stub.release()
        """,
        HELD_AND_GAVE_UP,
    ),
    S(
        "held-server-client-timeout",
        "3",
        """
        stub = make(["one"])
        with stub.serve() as base:
            stub.hold()
            with pytest.raises(hx.ReadTimeout):
                hx.post(base + "/v1/messages", json=P, timeout=hx.Timeout(5, read=0.2))
            for _ in range(50):  # recorded when the client goes, not only when the server stops
                if stub.problems:
                    break
                time.sleep(0.05)
            assert [p.kind for p in stub.problems] == ["abandoned"]
        stub.release()
        """,
        HELD_AND_GAVE_UP,
    ),
    S(
        "held-server-stopped",
        "3",
        """
        stub = make(["one"])
        answers = []
        with stub.serve() as base:
            stub.hold()
            thread = in_thread(lambda: answers.append(hx.post(base + "/v1/messages", json=P, timeout=5)))
            stub.wait_for_requests(1)
        thread.join(5)
        assert answers[0].status_code == 503
        stub.release()
        """,
        r"was held and its client gave up waiting \(cancelled, timed out or disconnected, or the loopback server "
        r"stopped\)",
    ),
    # 4 — the loopback server never answers a bare, unrecorded 500
    S(
        "server-utf8-header",
        "4",
        """
        stub = make(["one"])
        with stub.serve() as base:
            with hx.Client(headers={"x-user": "José".encode()}) as http:
                sdk = anthropic.Anthropic(base_url=base, api_key="test-key", http_client=http)
                reply = sdk.messages.create(**P)
        assert reply.content[0].text == "one"
        assert stub.requests[0].headers["x-user"] == "José"
        """,
        None,
    ),
    S(
        "server-malformed-host",
        "4",
        """
        stub = make(["one"])
        with stub.serve() as base:
            sock = socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])))
            sock.sendall(b"POST /v1/messages HTTP/1.1\\r\\nHost: [::1\\r\\ncontent-length: 2\\r\\n\\r\\n{}")
            head = sock.recv(4096)
            sock.close()
        assert head.startswith(b"HTTP/1.1 400") and b"x-should-retry: false" in head
        """,
        r"requests\[0\] POST /v1/messages\n    the loopback server could not read this request "
        r"\(its Host header '\[::1' names no IPv6 address\)",
    ),
    # 5 — a retry is not blamed on the app
    S(
        "retry-blamed-on-the-app",
        "5",
        """
        stub = make([{"error": {"status": 429}}])
        with contextlib.suppress(anthropic.APIError):
            client(stub, max_retries=2).messages.create(**P)
        """,
        r"It is not an extra call of the app: it is the SDK's retry 1 \(2nd attempt of requests\[0\], header "
        r"x-stainless-retry-count: 1\)\. The client retries 429, 5xx and connection errors on its own .*"
        r"max_retries=0, or script one turn per attempt",
    ),
    S(
        "catalog-in-stream-case-on-a-json-app",
        "5",
        """
        from wirescript.catalog import anthropic_errors
        err = [e for e in anthropic_errors() if e.in_stream][0]
        stub = make(err.turns())
        with contextlib.suppress(anthropic.APIError):
            client(stub).messages.create(**P)
        """,
        r"in_stream=False, e\.g\. anthropic_errors\(in_stream=False\)",
    ),
    # 6 — a stub built by hand is checked too
    S(
        "hand-built-stub",
        "6",
        """
        stub = ScriptTransport(["one", "never asked"])
        assert client(stub).messages.create(**P).content[0].text == "one"
        """,
        r"1 scripted turn\(s\) were never requested:\n  - script\[1\]: text 'never asked'",
    ),
    # 7 — a stub that received no request at all
    S(
        "stub-never-reached",
        "7",
        'make(["one"])',
        r"This stub received no request at all: is it the client's transport\? "
        r"http_client=httpx2\.Client\(transport=stub\), or wirescript\(script, intercept=True\)",
        direct=r"1 scripted turn\(s\) were never requested",
    ),
    # 8 — each problem kind has its own switch; a fallback's answers are marked
    S(
        "allow-overflow-does-not-hide-a-crash",
        "8",
        """
        def answer(record):
            raise KeyError("the function's bug")
        stub = make(answer)
        with contextlib.suppress(anthropic.APIError):
            client(stub).messages.create(**P)
        """,
        r"the script function raised KeyError",
        allow=("unscripted", "unknown_endpoint", "unreadable"),
    ),
    S(
        "fallback-answers-are-marked",
        "8",
        """
        stub = make(["one"], fallback=lambda record: "extra")
        for _ in range(3):
            client(stub).messages.create(**P)
        assert [r.answered_by for r in stub.requests] == ["script", "fallback", "fallback"]
        assert sum(r.answered_by == "fallback" for r in stub.requests) == 2
        """,
        None,
    ),
    # 10 — trio: many held requests, cancel scopes, the async wait
    S(
        "trio-held-and-cancelled",
        "10",
        """
        import trio
        stub = make(lambda record: "ok", hold_timeout=5)
        async def main():
            stub.hold()
            async with hx.AsyncClient(transport=stub) as http, trio.open_nursery() as nursery:
                for _ in range(45):
                    nursery.start_soon(lambda: http.post(URL, json=P))
                await stub.wait_for_requests_async(45, 3)
                with trio.move_on_after(0.2) as scope:
                    await http.post(URL, json=P)
                assert scope.cancelled_caught
                stub.release()
        started = time.monotonic()
        trio.run(main)
        assert time.monotonic() - started < 3
        """,
        r"requests\[45\] POST /v1/messages.*\n\s+was held and its client gave up waiting",
        needs=("trio",),
    ),
    # 11 — timeout_after over the server is bounded
    S(
        "server-timeout-after-bounded",
        "11",
        """
        import wirescript.server
        stub = make([{"fault": {"timeout_after": 0}}, "b"])
        stall, wirescript.server.STALL_TIMEOUT = wirescript.server.STALL_TIMEOUT, 0.2  # the bound, shorter
        try:
            with stub.serve() as base:
                started = time.monotonic()
                with anthropic.Anthropic(base_url=base, api_key="test-key") as sdk:
                    reply = sdk.messages.create(**P)
        finally:
            wirescript.server.STALL_TIMEOUT = stall
        assert reply.content[0].text == "b"
        assert time.monotonic() - started < 10    # not the SDK's 600 s read timeout
        """,
        None,
    ),
    # 13 — files that are not regular
    S(
        "load-script-fifo",
        "13",
        """
        fifo = tmp_path / "script.json"
        os.mkfifo(fifo)
        from wirescript import load_script
        make(load_script(fifo))
        """,
        r"script\.json: is a FIFO, not a regular file",
    ),
    # 14 — a bound on the records that keeps counts and problems
    S(
        "max-records-keeps-problems",
        "14",
        """
        stub = make({"claude-test": ["a"] * 9}, max_records=3)
        with contextlib.suppress(anthropic.APIError):
            client(stub).messages.create(**{**P, "model": "other"})
        for _ in range(9):
            client(stub).messages.create(**P)
        assert (len(stub.requests), stub.request_count, stub.overflow) == (3, 10, 1)
        """,
        r"requests\[0\] POST /v1/messages model='other'",
    ),
    # 15 — deep tool input
    S(
        "deep-tool-input",
        "15",
        """
        value = 1
        for _ in range(1000):
            value = {"a": value}
        make([{"tool": {"name": "t", "input": value}}])
        """,
        r"tool\.input.*(deep|depth|nested)",
    ),
    # 16 — compressed bodies
    S(
        "compressed-bodies",
        "16",
        """
        stub = make(["a", "b"])
        body = json.dumps(P).encode()
        http = hx.Client(transport=stub)
        assert http.post(URL, content=gzip.compress(body), headers={"content-encoding": "gzip"}).status_code == 200
        assert http.post(URL, content=b"\\x1b\\x00", headers={"content-encoding": "br"}).status_code == 400
        lone = body.replace(b'"hi"', b'"\\\\ud800"')   # a lone surrogate, as JSON allows
        assert http.post(URL, content=lone).status_code == 200
        assert "\\\\ud800" in stub.requests[2].model_dump_json()
        for record in stub.requests:
            json.loads(record.model_dump_json())
        """,
        r"the body is br-compressed \(content-encoding: br\); wirescript decompresses gzip and deflate only",
    ),
    # 17 — the audit reads UTF-16 and binary files
    S(
        "audit-utf16-env",
        "17",
        """
        from wirescript.audit import audit_paths
        key = "sk-ant-api03-" + "Q7vK2mX9pL4rT8wZ3nB6cF1hJ5dS0gY" * 3
        (tmp_path / ".env").write_bytes(f"ANTHROPIC_API_KEY={key}\\n".encode("utf-16"))
        report = audit_paths([tmp_path])
        assert [f.code for f in report.findings] == ["WS101"], report.findings
        """,
        None,
    ),
    # 18 — credential headers by pattern, also over the control API
    S(
        "credential-headers-control-api",
        "18",
        """
        stub = make(["a"])
        with ScriptServer(stub) as server:
            base = server.base_url
            hx.post(base + "/v1/messages?Key=q-secret", json=P,
                        headers={"x-amz-security-token": "tok-secret", "ocp-apim-subscription-key": "sub-secret"})
            listed = hx.get(base + "/_wirescript/requests", headers=server.control_headers).text
        assert "secret" not in listed and "<redacted>" in listed
        """,
        None,
    ),
    # 19 — the exhaustion message counts as a person does
    S(
        "exhaustion-counts",
        "19",
        """
        stub = make(["one"])
        client(stub).messages.create(**P)
        with contextlib.suppress(anthropic.APIError):
            client(stub).messages.create(**P)
        """,
        r"It is the 2nd request \(requests\[1\]\)\.",
    ),
    # 20 — listings are truncated, repr is cheap, waits point the right way, the control API refuses NaN
    S(
        "long-listings-truncated",
        "20",
        """
        stub = make(["t"] * 20_000)
        started = time.perf_counter()
        for _ in range(100):
            repr(stub)
        assert time.perf_counter() - started < 0.5
        """,
        r"20000 scripted turn\(s\) were never requested:(\n  - script\[\d+\]: text 't'){50}\n  … and 19950 more",
    ),
    S(
        "sync-wait-in-a-loop",
        "20",
        """
        stub = make([])
        async def main():
            stub.wait_for_requests(1, timeout=0.05)
        asyncio.run(main())
        """,
        r"use `await stub\.wait_for_requests_async\(n\)`",
    ),
    S(
        "control-api-nan",
        "20",
        """
        stub = make([])
        with ScriptServer(stub) as server:
            for value in ("nan", "inf"):
                url = f"{server.base_url}/_wirescript/requests?wait=1&timeout={value}"
                answer = hx.get(url, headers=server.control_headers)
                assert answer.status_code == 400, answer.text
                assert "positive number of seconds below 3600" in answer.text
        """,
        None,
    ),
]


RUNNABLE = [s for s in SCENARIOS if not s.missing]
"""The scenarios whose modules are installed (trio is not, in the legacy SDKs' run)."""


def _body(scenario: Scenario) -> str:
    return textwrap.dedent(scenario.code).strip("\n")


def _run_direct(scenario: Scenario, tmp_path: Path) -> str | None:
    """Run the scenario as a user without the plugin would; the failure's message, or None."""
    stubs: list[ScriptTransport] = []
    previous = _ledger.watch(_ledger.Watch(lambda stub, first: stubs.append(stub) if first is None else None))
    namespace: dict[str, Any] = {"make": ScriptTransport, "tmp_path": tmp_path}
    try:
        exec(compile(PRELUDE + "\n" + _body(scenario), f"<{scenario.id}>", "exec"), namespace)
        for stub in stubs:
            stub.check(allow=scenario.allow)  # type: ignore[arg-type]
    except Exception as exc:  # AssertionError from check(), ScriptError from construction, …
        return f"{type(exc).__name__}: {exc}"
    finally:
        _ledger.watch(previous)
        for stub in stubs:
            stub.release()
    return None


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_without_the_plugin(scenario: Scenario, tmp_path: Path) -> None:
    if scenario.missing:
        pytest.skip(f"{', '.join(scenario.missing)} is not installed")
    message = _run_direct(scenario, tmp_path)
    wanted = scenario.wanted(plugin=False)
    if wanted is None:
        assert message is None
    else:
        assert message is not None, "passed silently"
        assert re.search(wanted, message), message


def _plugin_module() -> str:
    tests = []
    for scenario in RUNNABLE:
        marker = f"@pytest.mark.wirescript(allow={list(scenario.allow)!r})\n" if scenario.allow else ""
        name = scenario.id.replace("-", "_")
        tests.append(
            f"{marker}def test_{name}(wirescript, tmp_path):\n    make = wirescript\n"
            + textwrap.indent(_body(scenario), "    ")
            + "\n"
        )
    return PRELUDE + "\n\n" + "\n\n".join(tests)


def test_under_the_plugin(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_scenarios=_plugin_module())
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        recorded = pytester.inline_run("-p", "wirescript.pytest_plugin", "-p", "no:cacheprovider")
    failures: dict[str, str] = {}
    for report in recorded.getreports("pytest_runtest_logreport"):
        if report.failed:
            name = report.nodeid.split("::test_")[-1]
            failures[name] = failures.get(name, "") + str(report.longrepr)
    wrong = []
    for scenario in RUNNABLE:
        name = scenario.id.replace("-", "_")
        wanted = scenario.wanted(plugin=True)
        got = failures.get(name)
        if wanted is None and got is not None:
            wrong.append(f"{scenario.id}: should pass, failed:\n{got}")
        elif wanted is not None and got is None:
            wrong.append(f"{scenario.id}: passed silently")
        elif wanted is not None and got is not None and not re.search(wanted, got):
            wrong.append(f"{scenario.id}: {wanted!r} not in:\n{got}")
    assert not wrong, "\n\n".join(wrong)


def test_every_item_of_the_issue_has_a_row() -> None:
    covered = {part.strip() for s in SCENARIOS for part in s.item.split(",")}
    # 9 (wrong-wire bodies, wrongly typed fields) is the strict-requests work's: see docs/strict-requests.md.
    assert covered == {str(n) for n in range(1, 21)} - {"9"}


def test_bad_switches_are_refused_naming_the_field() -> None:
    from wirescript import ScriptError, UsageError

    stub = ScriptTransport([])
    with pytest.raises(UsageError, match=r"^allow: 'faults' is not a problem kind; did you mean 'fault'\?"):
        stub.check(allow=["faults"])  # type: ignore[list-item]
    for bad in (0, True, 2.5):
        with pytest.raises(ScriptError, match=r"^max_records: expected a positive int or None, got "):
            ScriptTransport([], max_records=bad)  # type: ignore[arg-type]


def test_a_misspelt_problem_kind_in_the_marker_fails_the_setup(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_typo="""
        import pytest

        @pytest.mark.wirescript(allow=["held"])
        def test_app(wirescript):
            pass
        """
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        result = pytester.runpytest("-p", "wirescript.pytest_plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*allow must be a list of problem kinds (unscripted, *), got list ?'held'?"])


def test_check_hand_built_false_leaves_hand_built_stubs_to_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_opt_out="""
        import pytest
        from wirescript import ScriptTransport

        @pytest.mark.wirescript(check_hand_built=False)
        def test_app(wirescript):
            ScriptTransport(["checked by the test itself, or not at all"])
        """
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        result = pytester.runpytest("-p", "wirescript.pytest_plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_a_failure_inside_the_server_is_a_non_retried_400_not_a_bare_500(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Any, scope: Any, body: bytes) -> Any:
        raise RuntimeError("a bug in the server")

    monkeypatch.setattr(wirescript.server.ScriptApp, "_request", broken)
    stub = ScriptTransport(["unused"])
    with stub.serve() as base:
        answer = STACKS[0].post(f"{base}/v1/messages", json={"model": "m"})
    assert answer.status_code == 400
    assert answer.headers["x-should-retry"] == "false"
    assert answer.json()["error"]["message"] == (
        "wirescript: the loopback server failed (RuntimeError: a bug in the server); please report it"
    )


def test_teardown_releases_a_held_request_so_its_thread_ends(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_held=PRELUDE
        + """
THREADS = []


def test_forgot_release(wirescript):
    stub = wirescript(["one"], hold_timeout=30)
    stub.hold()
    THREADS.append(in_thread(client(stub).messages.create, **P))
    stub.wait_for_requests(1)


def test_the_next_test():
    THREADS[0].join(5)
    assert not THREADS[0].is_alive()  # answered at teardown, not after hold_timeout's 30 s
"""
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        recorded = pytester.inline_run("-p", "wirescript.pytest_plugin", "-p", "no:cacheprovider")
    recorded.assertoutcome(passed=2, failed=1)  # both calls passed; the first teardown failed
    reports = recorded.getreports("pytest_runtest_logreport")
    (teardown,) = [r for r in reports if r.when == "teardown" and r.failed]
    assert "1 request(s) are still held, waiting for release()" in str(teardown.longrepr)


def test_a_client_that_goes_before_its_body_logs_one_line_not_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    import logging
    import socket
    import time

    stub = ScriptTransport([])
    with caplog.at_level(logging.INFO), stub.serve() as base:
        sock = socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])))
        sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-length: 100\r\n\r\n{")
        sock.close()
        for _ in range(50):
            if any("went away" in r.getMessage() for r in caplog.records):
                break
            time.sleep(0.05)
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO and "wirescript" in r.getMessage()]
    assert lines == ["wirescript: POST /v1/messages: the client went away before sending its body"]
    assert not [r for r in caplog.records if r.exc_info]  # no traceback
    assert stub.requests == []  # nothing arrived: nothing recorded, nothing consumed


def test_error_case_turns_follow_the_installed_sdks_default_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    from wirescript.catalog import anthropic_errors

    overloaded = next(e for e in anthropic_errors() if e.status == 529)
    assert len(overloaded.turns()) == 1 + anthropic.DEFAULT_MAX_RETRIES
    monkeypatch.setattr(anthropic, "DEFAULT_MAX_RETRIES", 5)  # a future SDK that retries more
    assert len(overloaded.turns()) == 6
    stub = ScriptTransport([*overloaded.turns(max_retries=2), "Recovered."])
    sdk = anthropic.Anthropic(api_key="test-key", max_retries=2, http_client=ANTHROPIC_HX.Client(transport=stub))
    with pytest.raises(overloaded.exception):
        sdk.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    assert (stub.problems, len(stub.pending)) == ([], 1)  # every attempt met its turn


def test_files_over_the_size_cap_are_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import wirescript.audit
    import wirescript.files
    from wirescript import ScriptError, load_script

    script = tmp_path / "big.json"
    script.write_text('["' + "x" * 100 + '"]')
    monkeypatch.setattr(wirescript.files, "MAX_SCRIPT_BYTES", 64)
    with pytest.raises(ScriptError, match=r"big\.json: is larger than 64 bytes, the most wirescript reads$"):
        load_script(script)
    monkeypatch.setattr(wirescript.audit, "MAX_AUDIT_BYTES", 64)
    (finding,) = wirescript.audit.audit_paths([script]).findings
    assert (finding.code, finding.message) == (
        "WS100",
        "is larger than 64 bytes, the most wirescript reads, so it was not audited",
    )
