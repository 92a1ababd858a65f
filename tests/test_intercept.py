"""`stub.intercept()`: SDK clients built with no `http_client`, by the app or a framework, reach the stub."""

from __future__ import annotations

import asyncio
import importlib
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import anthropic
import openai
import pytest

from _loopback import loopback_server
from _support import ANTHROPIC_HX, STACKS
from wirescript import KNOWN_HOSTS, ScriptTransport, UsageError, _hooks
from wirescript._hooks import TARGETS
from wirescript.guard import NetworkGuard, _hold, hold_patches, release_patches
from wirescript.intercept import host_matcher, open_interception

pytest_plugins = ["pytester"]

USER = [{"role": "user", "content": "Hi"}]
REQUIRE_ENV = "WIRESCRIPT_REQUIRE_FRAMEWORKS"


def patched_functions() -> list[Any]:
    """The exact function objects the interception patches, as the classes hold them now."""
    installed = {hx.__name__: hx for hx in STACKS}
    return [getattr(installed[module], cls).__dict__[name] for module, cls, name in TARGETS if module in installed]


ORIGINALS = patched_functions()


def as_before() -> list[bool]:
    """Per patched method: the original, or the session hold's wrapper laid right on it (nothing open)."""
    laid = _hold.laid if _hold.on else ()
    return [
        now is before or (now in laid and now.__wrapped__ is before)
        for now, before in zip(patched_functions(), ORIGINALS, strict=True)
    ]


@pytest.fixture(autouse=True)
def _nothing_left_patched() -> Any:
    yield
    assert open_interception() is None
    assert _hooks.transports.route is None
    assert as_before() == [True] * len(ORIGINALS)


# ---------------------------------------------------------------------------------------- the SDKs


def test_anthropic_with_no_http_client_sync_and_async() -> None:
    stub = ScriptTransport(["Sync hello.", "Async hello."])
    with stub.intercept():
        client = anthropic.Anthropic(api_key="test-key")
        assert client.messages.create(model="claude-test", max_tokens=64, messages=USER).content[0].text == (
            "Sync hello."
        )

        async def ask() -> str:
            client = anthropic.AsyncAnthropic(api_key="test-key")
            async with client, client.messages.stream(model="claude-async", max_tokens=64, messages=USER) as stream:
                return await stream.get_final_text()

        assert asyncio.run(ask()) == "Async hello."
    assert [(r.path, r.model, r.stream) for r in stub.requests] == [
        ("/v1/messages", "claude-test", False),
        ("/v1/messages", "claude-async", True),
    ]
    assert [r.api_key for r in stub.requests] == ["test-key", "test-key"]


def test_openai_with_no_http_client_sync_and_async() -> None:
    stub = ScriptTransport(["Chat.", "Streamed chat.", "Responses."])
    with stub.intercept():
        client = openai.OpenAI(api_key="test-key")
        chat = client.chat.completions.create(model="gpt-test", messages=USER)  # type: ignore[arg-type]
        assert chat.choices[0].message.content == "Chat."

        async def ask() -> tuple[str, str]:
            async with openai.AsyncOpenAI(api_key="test-key") as client:
                stream = await client.chat.completions.create(model="gpt-test", messages=USER, stream=True)  # type: ignore[arg-type]
                streamed = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
                response = await client.responses.create(model="gpt-test", input="Hi")
                return streamed, response.output_text

        assert asyncio.run(ask()) == ("Streamed chat.", "Responses.")
    assert [(r.path, r.stream) for r in stub.requests] == [
        ("/v1/chat/completions", False),
        ("/v1/chat/completions", True),
        ("/v1/responses", False),
    ]


def test_google_genai_with_no_http_options() -> None:
    genai = pytest.importorskip("google.genai")
    stub = ScriptTransport(["From Gemini."])
    with stub.intercept():
        client = genai.Client(api_key="test-key")  # held: a collected genai.Client closes its HTTP client
        assert client.models.generate_content(model="gemini-2.5-flash", contents="Hi").text == "From Gemini."
    assert stub.requests[0].path.endswith("/models/gemini-2.5-flash:generateContent")


def test_a_client_built_before_the_block_is_reached_and_released_after_it() -> None:
    client = anthropic.Anthropic(api_key="test-key", max_retries=0, http_client=anthropic.DefaultHttpxClient())
    stub = ScriptTransport(["Reached."])
    with stub.intercept():
        assert client.messages.create(model="claude-test", max_tokens=64, messages=USER).content[0].text == "Reached."
    with NetworkGuard() as guard, pytest.raises(anthropic.PermissionDeniedError, match="wirescript: blocked"):
        client.messages.create(model="claude-test", max_tokens=64, messages=USER)  # the network again: refused
    assert len(stub.requests) == 1
    assert [str(b) for b in guard.blocked] == ["connection to api.anthropic.com:443"]


@pytest.mark.parametrize("hx", STACKS, ids=[hx.__name__ for hx in STACKS])
def test_plain_httpx_and_httpx2_clients_sync_and_async(hx: ModuleType) -> None:
    body = {"model": "claude-test", "max_tokens": 64, "messages": USER}
    stub = ScriptTransport(["Sync.", "Async."])
    with stub.intercept():
        with hx.Client() as client:
            assert client.post("https://api.anthropic.com/v1/messages", json=body).json()["content"][0]["text"] == (
                "Sync."
            )

        async def ask() -> str:
            async with hx.AsyncClient() as client:
                response = await client.post("https://API.Anthropic.com./v1/messages", json=body)
                return str(response.json()["content"][0]["text"])

        assert asyncio.run(ask()) == "Async."
    assert len(stub.requests) == 2


def test_a_client_with_a_transport_of_another_class_keeps_it() -> None:
    seen: list[str] = []

    def handler(request: Any) -> Any:
        seen.append(str(request.url))
        return ANTHROPIC_HX.Response(200, json={"from": "mock"})

    stub = ScriptTransport([])
    with stub.intercept(), ANTHROPIC_HX.Client(transport=ANTHROPIC_HX.MockTransport(handler)) as client:
        assert client.get("https://api.anthropic.com/v1/models").json() == {"from": "mock"}
    assert seen == ["https://api.anthropic.com/v1/models"]
    assert stub.requests == []


# ---------------------------------------------------------------------------------------- hosts


def test_other_hosts_go_where_they_were_going() -> None:
    stub = ScriptTransport(["Never."])
    with loopback_server() as (url, paths), stub.intercept():
        with STACKS[0].Client() as client:
            assert client.post(f"{url}/v1/messages", json={}).json() == {"served_by": "loopback"}

        async def ask() -> Any:
            async with STACKS[-1].AsyncClient() as client:
                return (await client.get(f"{url}/async")).json()

        assert asyncio.run(ask()) == {"served_by": "loopback"}
    assert paths == ["/v1/messages", "/async"]
    assert stub.requests == []


def test_every_host_with_the_star() -> None:
    stub = ScriptTransport(["From the stub."])
    with (
        loopback_server() as (url, paths),
        stub.intercept(hosts="*") as interception,
        anthropic.Anthropic(api_key="test-key", base_url=url) as client,
    ):
        assert client.messages.create(model="claude-test", max_tokens=64, messages=USER).content[0].text == (
            "From the stub."
        )
    assert paths == []
    assert interception.hosts == frozenset({"*"})
    assert "every host" in repr(interception)


def test_hosts_replace_the_known_hosts() -> None:
    stub = ScriptTransport(["Internal gateway."])
    with NetworkGuard() as guard, stub.intercept(hosts=["llm.internal.example"]):
        gateway = openai.OpenAI(api_key="test-key", base_url="https://llm.internal.example/v1")
        assert gateway.chat.completions.create(model="m", messages=USER).choices[0].message.content == (  # type: ignore[arg-type]
            "Internal gateway."
        )
        with pytest.raises(openai.PermissionDeniedError, match=r"blocked a connection to api\.openai\.com:443"):
            openai.OpenAI(api_key="test-key").chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert len(stub.requests) == 1
    assert len(guard.blocked) == 1


def test_known_hosts() -> None:
    known = host_matcher(KNOWN_HOSTS)
    for host in [
        "api.anthropic.com",
        "api.openai.com",
        "my-resource.openai.azure.com",
        "my-resource.services.ai.azure.com",
        "generativelanguage.googleapis.com",
        "aiplatform.googleapis.com",
        "us-central1-aiplatform.googleapis.com",
        "bedrock-runtime.us-east-1.amazonaws.com",
        "api.groq.com",
        "api.mistral.ai",
        "api.deepseek.com",
        "openrouter.ai",
        "API.ANTHROPIC.COM.",
    ]:
        assert known(host), host
    for host in [
        "anthropic.com",
        "openai.azure.com",
        "a.b.openai.azure.com",
        "bedrock-runtime.amazonaws.com",
        "s3.us-east-1.amazonaws.com",
        "api.anthropic.com.evil.example",
        "localhost",
        "127.0.0.1",
    ]:
        assert not known(host), host


def test_wildcards_match_within_one_label() -> None:
    matches = host_matcher(["*.example.com", "api-*.example.org", "10.0.0.1", "::1"])
    assert matches("a.example.com")
    assert matches("a-b.example.com")
    assert not matches("example.com")
    assert not matches("a.b.example.com")
    assert matches("api-eu.example.org")
    assert not matches("api-.example.org")
    assert not matches("api-eu.x.example.org")
    assert matches("10.0.0.1")
    assert matches("::1")
    assert host_matcher(["*"])("anything.at.all")
    assert not host_matcher([])("api.anthropic.com")


@pytest.mark.parametrize(
    ("hosts", "message"),
    [
        (["https://api.anthropic.com"], "'https://api.anthropic.com' is not a host name"),
        (["api.anthropic.com:443"], "is not a host name"),
        ([""], "is not a host name"),
        ([443], "a host pattern must be a string, got int 443"),
    ],
)
def test_a_bad_host_is_a_usage_error(hosts: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ScriptTransport([]).intercept(hosts=hosts)


def test_a_single_string_is_one_host() -> None:
    assert ScriptTransport([]).intercept(hosts="llm.internal").hosts == frozenset({"llm.internal"})
    assert ScriptTransport([]).intercept().hosts == KNOWN_HOSTS


# ---------------------------------------------------------------------------------------- lifecycle


@pytest.mark.usefixtures("unheld")
def test_exit_restores_the_exact_functions_even_on_error() -> None:
    stub = ScriptTransport([])
    interception = stub.intercept()
    seen: list[bool] = []

    def app() -> None:
        with interception:
            seen.append(interception.active)
            seen.append(all(a is not b for a, b in zip(patched_functions(), ORIGINALS, strict=True)))
            raise RuntimeError("the app broke")

    with pytest.raises(RuntimeError, match="the app broke"):
        app()
    assert seen == [True, True]
    assert not interception.active
    assert all(a is b for a, b in zip(patched_functions(), ORIGINALS, strict=True))
    # Reusable, and a second exit is harmless.
    with interception:
        pass
    interception.__exit__(None, None, None)
    assert all(a is b for a, b in zip(patched_functions(), ORIGINALS, strict=True))


def test_two_stubs_at_once_is_a_usage_error_naming_both() -> None:
    first, second = ScriptTransport(["One"]), ScriptTransport(["Two", "Three"])
    with first.intercept():
        with pytest.raises(UsageError) as info, second.intercept():
            pass
        message = str(info.value)
        assert repr(first) in message
        assert repr(second) in message
        assert "is already intercepting" in message
    with second.intercept():  # the first one is closed: fine now
        pass


def test_the_same_interception_twice_is_a_usage_error() -> None:
    interception = ScriptTransport([]).intercept()
    with interception, pytest.raises(UsageError, match="this very interception"), interception:
        pass


@pytest.mark.usefixtures("unheld")
def test_concurrent_entries_one_wins_and_everything_is_restored() -> None:
    stubs = [ScriptTransport([]) for _ in range(8)]
    barrier = threading.Barrier(len(stubs))
    outcomes: list[str] = []
    reported = threading.Condition()

    def report(outcome: str) -> None:
        with reported:
            outcomes.append(outcome)
            reported.notify_all()

    def contend(stub: ScriptTransport) -> None:
        barrier.wait()
        try:
            with stub.intercept():
                report("entered")
                with reported:  # hold it until every other thread was refused, however slow they are
                    reported.wait_for(lambda: len(outcomes) == len(stubs), 30)
        except UsageError:
            report("refused")

    threads = [threading.Thread(target=contend, args=(stub,)) for stub in stubs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(40)
    assert sorted(outcomes) == ["entered"] + ["refused"] * (len(stubs) - 1)
    assert all(a is b for a, b in zip(patched_functions(), ORIGINALS, strict=True))


@pytest.mark.usefixtures("unheld")
def test_intercept_and_guard_nest_in_any_order() -> None:
    stub = ScriptTransport(["Intercepted."])
    interception = stub.intercept()
    guard = NetworkGuard()
    interception.__enter__()
    guard.__enter__()
    interception.__exit__(None, None, None)  # out of order: the guard still holds the patch
    assert patched_functions() != ORIGINALS
    guard.__exit__(None, None, None)
    assert all(a is b for a, b in zip(patched_functions(), ORIGINALS, strict=True))


def test_a_library_importable_only_after_the_first_use_is_patched_from_then_on() -> None:
    # The patch targets are built once and reused (the guard enters them for every test): a library
    # that could not be imported at the first use, then is, must be patched from then on.
    pytest.importorskip("httpx2", reason="the late library is httpx2, which the legacy majors do not install")
    code = textwrap.dedent(
        """
        import sys
        import wirescript._hooks as hooks
        from wirescript import ScriptTransport

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "httpx2":
                    raise ImportError("not yet")  # find_spec of a missing package answers None; this is harsher
                return None

        blocker = Block()
        sys.meta_path.insert(0, blocker)
        stub = ScriptTransport(["Hello."])
        with stub.intercept():
            print("first", "httpx2" in sys.modules)
        sys.meta_path.remove(blocker)
        import httpx2
        with stub.intercept(), httpx2.Client() as http:
            http.post("https://api.anthropic.com/v1/messages", json={"model": "m", "max_tokens": 1, "messages": []})
            print("then", len(stub.requests))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "first False\nthen 1\n"  # routed to the stub, not to the network


@pytest.mark.parametrize("hx", STACKS, ids=lambda hx: hx.__name__)
def test_a_patch_someone_made_since_the_last_use_is_wrapped_not_lost(hx: ModuleType, monkeypatch: Any) -> None:
    with ScriptTransport([]).intercept():  # the targets are built from the originals here
        pass
    seen: list[str] = []
    original = hx.HTTPTransport.handle_request

    def theirs(self: Any, request: Any) -> Any:  # as pytest-httpx patches it
        seen.append(str(request.url))
        return hx.Response(204, request=request)

    monkeypatch.setattr(hx.HTTPTransport, "handle_request", theirs)
    with ScriptTransport([]).intercept(), hx.Client() as http:
        assert http.get("https://example.org/x").status_code == 204  # not a known host: theirs answers
    assert seen == ["https://example.org/x"]
    assert hx.HTTPTransport.__dict__["handle_request"] is theirs  # and theirs is back after
    monkeypatch.undo()
    assert hx.HTTPTransport.__dict__["handle_request"] is original


@pytest.mark.usefixtures("unheld")
@pytest.mark.parametrize("hx", STACKS, ids=lambda hx: hx.__name__)
def test_under_the_session_hold_a_patch_made_since_is_wrapped_and_left_on_top(hx: ModuleType) -> None:
    hold_patches()
    try:
        held = hx.HTTPTransport.__dict__["handle_request"]
        stub = ScriptTransport(["Intercepted."])
        with stub.intercept():
            assert hx.HTTPTransport.__dict__["handle_request"] is held  # the hold's wrapper: nothing laid
        seen: list[str] = []

        def theirs(self: Any, request: Any) -> Any:  # as pytest-httpx patches it: never calls what it replaced
            seen.append(str(request.url))
            return hx.Response(204, request=request)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(hx.HTTPTransport, "handle_request", theirs)
            with stub.intercept(), hx.Client() as http:
                assert http.get("https://example.org/x").status_code == 204  # not a known host: theirs answers
                body = {"model": "m", "max_tokens": 8, "messages": USER}
                answer = http.post("https://api.anthropic.com/v1/messages", json=body).json()
                assert answer["content"][0]["text"] == "Intercepted."  # a known host: the stub, over theirs
            assert hx.HTTPTransport.__dict__["handle_request"] is theirs  # the interception took its own away
        assert hx.HTTPTransport.__dict__["handle_request"] is held
        assert seen == ["https://example.org/x"]
    finally:
        release_patches()


def test_importing_wirescript_intercept_imports_neither_http_library() -> None:
    code = (
        "import sys, wirescript, wirescript.intercept, wirescript.guard\n"
        "wirescript.Interception, wirescript.KNOWN_HOSTS, wirescript.NetworkBlockedError\n"
        "print(sorted(m for m in ('httpx', 'httpx2') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"


# ---------------------------------------------------------------------------------------- the fixture


def test_the_fixture_intercepts_until_teardown(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_app=textwrap.dedent(
            """
            import anthropic, pytest
            from wirescript import UsageError

            hx = __import__("httpx2" if int(anthropic.__version__.split(".")[0]) >= 1 else "httpx")

            USER = [{"role": "user", "content": "Hi"}]


            def test_app(wirescript):
                stub = wirescript(["Hello!"], intercept=True)
                client = anthropic.Anthropic(api_key="test-key")
                assert client.messages.create(model="m", max_tokens=8, messages=USER).content[0].text == "Hello!"
                assert stub.requests[0].path == "/v1/messages"
                with pytest.raises(UsageError, match="is already intercepting"):
                    wirescript(["Other"], intercept=True)


            def test_hosts(wirescript):
                stub = wirescript(["Gateway."], intercept=["llm.internal.example"])
                with hx.Client() as client:
                    body = {"model": "m", "max_tokens": 8, "messages": USER}
                    response = client.post("https://llm.internal.example/v1/messages", json=body)
                assert response.json()["content"][0]["text"] == "Gateway."


            def test_after(wirescript):
                from wirescript.intercept import open_interception

                assert open_interception() is None  # the previous test's ended at its teardown
                with pytest.raises(anthropic.PermissionDeniedError, match="blocked a connection"):
                    anthropic.Anthropic(api_key="test-key").models.list()
                wirescript.guard._blocked.clear()  # refused, as it should be: not a failure of this test
            """
        )
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        result = pytester.runpytest("-p", "wirescript.pytest_plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


# ---------------------------------------------------------------------------------------- frameworks


def require_framework(module: str, distribution: str) -> ModuleType:
    """Import a framework of the `frameworks` group; skip without it, unless CI requires it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(
                f"{distribution} is not importable ({exc}), and {REQUIRE_ENV}=1 requires it: "
                "install the 'frameworks' dependency group (uv sync --group frameworks)",
                pytrace=False,
            )
        pytest.skip(f"{distribution} is not installed: this test needs the 'frameworks' dependency group")


def test_an_untouched_chat_anthropic_invokes_and_streams(wirescript: Any) -> None:
    langchain_anthropic = require_framework("langchain_anthropic", "langchain-anthropic")
    stub = wirescript(["Invoked.", "Streamed, chunk by chunk."], intercept=True)
    llm = langchain_anthropic.ChatAnthropic(model="claude-sonnet-5", api_key="test-key")
    assert llm.invoke("Hi").content == "Invoked."
    chunks = [chunk.content for chunk in llm.stream("Stream, please")]
    assert len(chunks) > 1
    assert "".join(c if isinstance(c, str) else "".join(p.get("text", "") for p in c) for c in chunks) == (
        "Streamed, chunk by chunk."
    )
    first, second = stub.requests
    assert (first.model, first.stream, first.last_user_text) == ("claude-sonnet-5", False, "Hi")
    assert (second.stream, second.last_user_text) == (True, "Stream, please")
    # ChatAnthropic's large default, sent with its own timeout=None: the SDK's long-request guard stays quiet.
    assert first.max_tokens is not None
    assert first.max_tokens >= 64000


def test_the_hooks_know_nothing_of_who_holds_them() -> None:
    """The process-wide patches call back what the layer above registered; they import no wirescript module."""
    import ast

    tree = ast.parse(Path(_hooks.__file__).read_text(encoding="utf-8"))
    imported = {
        node.module or "."
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.level or "wirescript" in (node.module or ""))
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if "wirescript" in alias.name
    }
    assert imported == set()  # TYPE_CHECKING blocks included
    assert not hasattr(_hooks, "state")
