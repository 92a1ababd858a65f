"""The network guard: a wirescript test that forgot the transport fails fast and loud, never on the network."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from _loopback import loopback_proxy, loopback_server
from _support import ANTHROPIC_HX, STACKS
from wirescript import NetworkBlockedError, ScriptTransport, UsageError, WirescriptError, _hooks
from wirescript.guard import NetworkGuard, _hold, active_guard, hold_patches, release_patches

pytest_plugins = ["pytester"]

USER = [{"role": "user", "content": "Hi"}]
SOCKET_FUNCTIONS = (
    (socket.socket, "connect"),
    (socket.socket, "connect_ex"),
    (socket, "create_connection"),
    (socket.socket, "send"),
    (socket.socket, "sendall"),
    (socket.socket, "sendto"),
    (socket.socket, "sendmsg"),
    (socket, "getaddrinfo"),
    (socket, "gethostbyname"),
    (socket, "gethostbyname_ex"),
    (socket, "gethostbyaddr"),
)


def socket_state() -> list[Any]:
    """What the guard patches, as `__dict__` holds it (`connect` is inherited from `_socket.socket`)."""
    return [owner.__dict__.get(name) for owner, name in SOCKET_FUNCTIONS]


ORIGINAL_SOCKET = socket_state()
ORIGINAL_FUNCTIONS = [getattr(owner, name) for owner, name in SOCKET_FUNCTIONS]


def as_before() -> list[bool]:
    """Per socket function: the original, or the session hold's wrapper laid right on it (no guard active)."""
    laid = _hold.laid if _hold.on else ()
    return [
        now is before or (now in laid and now.__wrapped__ is function)
        for now, before, function in zip(socket_state(), ORIGINAL_SOCKET, ORIGINAL_FUNCTIONS, strict=True)
    ]


@pytest.fixture(autouse=True)
def _nothing_left_patched() -> Any:
    yield
    assert active_guard() is None
    assert _hooks.transports.rescue is None
    assert all(as_before())


def run(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_app="import anthropic, pytest, time\n" + textwrap.dedent(body))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        return pytester.runpytest("-p", "wirescript.pytest_plugin", "-p", "no:cacheprovider", *args)


# ---------------------------------------------------------------------------------------- in a test


def test_a_forgotten_transport_fails_fast_even_when_the_app_swallows_it(pytester: pytest.Pytester) -> None:
    started = time.perf_counter()
    result = run(
        pytester,
        """
        def test_forgot_transport(wirescript):
            stub = wirescript(["Order A1 has shipped."])
            client = anthropic.Anthropic(api_key="test-key")  # no http_client=, default retries
            started = time.perf_counter()
            try:
                client.messages.create(model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "Hi"}])
            except anthropic.APIError as exc:
                print("the app swallowed:", type(exc).__name__)
            elapsed = time.perf_counter() - started
            print(f"failed after {elapsed:.4f} s")
            assert elapsed < 5.0  # generous for a loaded machine: the SDK's two retries are not run
        """,
        "-s",
    )
    elapsed = time.perf_counter() - started
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*the app swallowed: PermissionDeniedError*", "failed after * s*"])
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at teardown of test_forgot_transport _*",
            "wirescript: the test tried to reach the network (1 attempt(s) refused by the guard):",
            "  - connection to api.anthropic.com:443",
            (
                "Give the app's client the stub (http_client=httpx2.Client(transport=stub)), or intercept the clients "
                "the app builds itself (stub = wirescript(script, intercept=True)); to let this host through, mark "
                "the test @pytest.mark.wirescript(allowed_hosts=[...]) or @pytest.mark.wirescript(allow_network=True)."
            ),
            "wirescript: 1 scripted turn(s) were never requested:",
            "  - script[0]: text 'Order A1 has shipped.'",
            (
                "(This stub received no request at all: is it the client's transport? "
                "http_client=httpx2.Client(transport=stub), or wirescript(script, intercept=True).)"
            ),
        ],
        consecutive=True,
    )
    assert elapsed < 10  # the whole inner session, collection included


def test_the_error_names_the_host_and_both_ways_in(wirescript: Any) -> None:
    client = anthropic.Anthropic(api_key="test-key")
    started = time.perf_counter()
    with pytest.raises(anthropic.PermissionDeniedError) as info:
        client.messages.create(model="claude-test", max_tokens=64, messages=USER)
    assert time.perf_counter() - started < 5.0  # no backoff: a retried call sleeps 0.75 s or more
    message = str(info.value)
    assert "wirescript: blocked a connection to api.anthropic.com:443" in message
    assert "http_client=httpx2.Client(transport=stub)" in message
    assert "wirescript(script, intercept=True)" in message
    assert info.value.response.headers["x-should-retry"] == "false"
    assert len(wirescript.guard.blocked) == 1  # one attempt: the SDK did not retry
    wirescript.guard._blocked.clear()  # expected here: not a failure of this test


def test_the_fix_names_the_sdks_own_parameter(wirescript: Any) -> None:
    genai = pytest.importorskip("google.genai")
    client = genai.Client(api_key="test-key")  # no http_options: the guard refuses its request
    with pytest.raises(genai.errors.APIError) as info:
        client.models.generate_content(model="gemini-2.5-flash", contents="Hi")
    fix = (
        "Give the app's client the stub (google-genai: http_options=types.HttpOptions("
        "httpx_client=httpx2.Client(transport=stub), httpx_async_client=httpx2.AsyncClient(transport=stub)))"
    )
    assert fix in str(info.value)
    report = wirescript.guard.report()
    assert "generativelanguage.googleapis.com:443" in report
    assert fix in report
    assert "http_client=" not in report
    wirescript.guard._blocked.clear()


def test_openai_sync_and_async_fail_without_retries(wirescript: Any) -> None:
    started = time.perf_counter()
    with pytest.raises(openai.PermissionDeniedError, match="wirescript: blocked"):
        openai.OpenAI(api_key="test-key").chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]

    async def ask() -> None:
        async with openai.AsyncOpenAI(api_key="test-key") as client:
            await client.responses.create(model="m", input="Hi")

    with pytest.raises(openai.PermissionDeniedError, match="wirescript: blocked"):
        asyncio.run(ask())
    assert time.perf_counter() - started < 5.0  # no backoff (the attempts are counted below)
    # httpcore connects by name (sync); anyio resolves the name first (async): refused at the lookup.
    assert [str(b) for b in wirescript.guard.blocked] == [
        "connection to api.openai.com:443",
        "DNS lookup of api.openai.com:443",
    ]
    wirescript.guard._blocked.clear()


@pytest.mark.wirescript(allow_network=True)
def test_allow_network_turns_the_guard_off(wirescript: Any) -> None:
    assert wirescript.guard is None
    assert active_guard() is None  # the wrappers the session holds (if any) pass everything through
    assert all(as_before())


def test_loopback_is_allowed(wirescript: Any) -> None:
    stub = wirescript(["Served in-process."])
    with loopback_server() as (url, paths):
        assert STACKS[0].get(f"{url}/by-address").json() == {"served_by": "loopback"}
        assert STACKS[-1].get(url.replace("127.0.0.1", "localhost") + "/by-name").json() == {"served_by": "loopback"}
        client = anthropic.Anthropic(api_key="test-key", max_retries=0, http_client=ANTHROPIC_HX.Client(transport=stub))
        assert client.messages.create(model="m", max_tokens=8, messages=USER).content[0].text == "Served in-process."
    assert paths == ["/by-address", "/by-name"]
    assert wirescript.guard.blocked == []


def test_a_unix_socket_is_allowed(wirescript: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "s")
        with socket.socket(socket.AF_UNIX) as server, socket.socket(socket.AF_UNIX) as client:
            server.bind(path)
            server.listen()
            client.connect(path)
    assert wirescript.guard.blocked == []


def test_the_loopback_server_fixture_runs_under_the_guard(wirescript_server: Any, wirescript: Any) -> None:
    server = wirescript_server(["Over loopback HTTP."])
    with anthropic.Anthropic(api_key="test-key", base_url=server.base_url, max_retries=0) as client:
        assert client.messages.create(model="m", max_tokens=8, messages=USER).content[0].text == "Over loopback HTTP."
    assert wirescript.guard.active


def test_a_respx_route_still_answers_under_the_guard(wirescript: Any) -> None:
    respx = pytest.importorskip("respx")
    httpx = pytest.importorskip("httpx")

    stub = wirescript(["Through respx."])
    with respx.mock:
        respx.route(host="api.openai.com").mock(side_effect=stub.handle_request)
        client = openai.OpenAI(api_key="test-key", max_retries=0, http_client=httpx.Client())
        assert client.chat.completions.create(model="m", messages=USER).choices[0].message.content == "Through respx."  # type: ignore[arg-type]


def test_intercepted_requests_never_meet_the_guard(wirescript: Any) -> None:
    wirescript(["Intercepted."], intercept=True)
    assert anthropic.Anthropic(api_key="test-key").messages.create(model="m", max_tokens=8, messages=USER).content[
        0
    ].text == ("Intercepted.")
    assert wirescript.guard.blocked == []


# ---------------------------------------------------------------------------------------- the guard itself


@pytest.fixture
def fake_network() -> Iterator[list[Any]]:
    """A resolver and a connect that never touch the network, installed before the guard wraps them."""
    reached: list[Any] = []

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        reached.append(("resolve", host))
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("203.0.113.7", port))]

    def connect(self: socket.socket, address: Any) -> None:
        reached.append(("connect", address))
        raise ConnectionRefusedError("the fake network refuses")

    with pytest.MonkeyPatch.context() as patch:  # its own: undone before the check that nothing is left patched
        patch.setattr(socket, "getaddrinfo", getaddrinfo)
        patch.setattr(socket.socket, "connect", connect)
        yield reached


def test_the_error_type_and_the_record() -> None:
    with NetworkGuard() as guard, pytest.raises(NetworkBlockedError) as info:
        socket.create_connection(("192.0.2.1", 80), timeout=5)
    error = info.value
    assert isinstance(error, ConnectionError)
    assert isinstance(error, WirescriptError)
    assert (error.host, error.port) == ("192.0.2.1", 80)
    assert str(error).startswith("wirescript: blocked a connection to 192.0.2.1:80: ")
    assert [tuple(b) for b in guard.blocked] == [("connection", "192.0.2.1", 80, None)]
    report = guard.report()
    assert report is not None
    assert "  - connection to 192.0.2.1:80" in report


def test_every_way_to_connect_is_refused_at_once() -> None:
    with NetworkGuard() as guard:
        started = time.perf_counter()
        with socket.socket() as sock, pytest.raises(NetworkBlockedError):
            sock.connect(("198.51.100.1", 443))
        with socket.socket() as sock, pytest.raises(NetworkBlockedError):
            sock.connect_ex(("198.51.100.1", 443))
        with socket.socket(socket.AF_INET6) as sock, pytest.raises(NetworkBlockedError, match=r"\[2001:db8::1\]:443"):
            sock.connect(("2001:db8::1", 443, 0, 0))
        with pytest.raises(NetworkBlockedError, match=r"DNS lookup of api\.openai\.com:443"):
            socket.getaddrinfo("api.openai.com", 443)
        with pytest.raises(NetworkBlockedError, match=r"DNS lookup of generativelanguage\.googleapis\.com"):
            socket.getaddrinfo(b"generativelanguage.googleapis.com", None)
        assert time.perf_counter() - started < 5.0  # refused at once, nothing waits on a network
    assert len(guard.blocked) == 5
    assert guard.report() is not None


def test_a_resolved_name_is_named_when_its_address_is_refused(fake_network: list[Any]) -> None:
    with NetworkGuard():
        address = socket.getaddrinfo("search.example", 443)[0][4]
        with (
            socket.socket() as sock,
            pytest.raises(NetworkBlockedError, match=r"search\.example:443 \(203\.0\.113\.7\)"),
        ):
            sock.connect(address)
    assert fake_network == [("resolve", "search.example")]


def test_allowed_hosts_go_through(fake_network: list[Any]) -> None:
    with NetworkGuard(allowed_hosts=["api.anthropic.com", "*.internal.example", "198.51.100.9"]) as guard:
        assert guard.allows("api.anthropic.com")
        assert guard.allows("search.internal.example")
        assert guard.allows("198.51.100.9")
        assert not guard.allows("api.openai.com")
        socket.getaddrinfo("api.anthropic.com", 443)  # a known host, but allowed: resolved
        with pytest.raises(ConnectionRefusedError, match="the fake network"):  # the resolved address is let through
            socket.create_connection(("api.anthropic.com", 443))
        with socket.socket() as sock, pytest.raises(ConnectionRefusedError, match="the fake network"):
            sock.connect(("198.51.100.9", 80))
        with pytest.raises(NetworkBlockedError):
            socket.getaddrinfo("api.openai.com", 443)
    assert ("connect", ("203.0.113.7", 443)) in fake_network
    assert [str(b) for b in guard.blocked] == ["DNS lookup of api.openai.com:443"]


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.8.9.10", "::1", "localhost", "app.localhost", "0.0.0.0", "::ffff:127.0.0.1"]
)
def test_loopback_addresses_and_names(host: str) -> None:
    assert NetworkGuard().allows(host)


def test_two_guards_at_once_is_a_usage_error() -> None:
    with NetworkGuard(), pytest.raises(UsageError, match="already active"), NetworkGuard():
        pass


@pytest.mark.usefixtures("unheld")
def test_exit_restores_the_exact_socket_functions_even_on_error() -> None:
    seen: list[bool] = []

    def app() -> None:
        with NetworkGuard():
            seen.append(all(a is not b for a, b in zip(socket_state(), ORIGINAL_SOCKET, strict=True)))
            raise RuntimeError("the app broke")

    with pytest.raises(RuntimeError):
        app()
    assert seen == [True]
    assert "connect" not in socket.socket.__dict__  # inherited again, as before
    assert socket.socket.connect is socket.SocketType.connect


def test_a_socket_patch_made_since_the_last_guard_is_wrapped_and_one_left_behind_passes_through() -> None:
    # The guard's socket wrappers are built once and reused while the functions they wrap are there.
    with NetworkGuard():
        pass
    reached: list[Any] = []

    def theirs(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        reached.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("203.0.113.7", port))]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket, "getaddrinfo", theirs)
        with NetworkGuard() as guard:
            assert socket.getaddrinfo("search.example", 443)[0][4] == ("203.0.113.7", 443)  # theirs, wrapped
            with pytest.raises(NetworkBlockedError):
                socket.getaddrinfo("api.openai.com", 443)  # still guarded
            ours = socket.getaddrinfo

            def over(*args: Any, **kwargs: Any) -> Any:
                return ours(*args, **kwargs)

            patch.setattr(socket, "getaddrinfo", over)  # someone patches over the guard's wrapper ...
        assert socket.getaddrinfo is over  # ... so exiting leaves ours under theirs, and it guards nothing now
        assert socket.getaddrinfo("api.openai.com", 443)[0][4] == ("203.0.113.7", 443)
    assert reached == ["search.example", "api.openai.com"]
    assert [str(b) for b in guard.blocked] == ["DNS lookup of api.openai.com:443"]


# ---------------------------------------------------------------------------------------- the session's hold


def transport_state() -> list[Any]:
    """The transport methods the guard patches, as the classes hold them."""
    return [getattr(hx, cls).__dict__[name] for hx in STACKS for cls, name in TRANSPORT_METHODS]


TRANSPORT_METHODS = (("HTTPTransport", "handle_request"), ("AsyncHTTPTransport", "handle_async_request"))
ORIGINAL_TRANSPORTS = transport_state()


def same(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


@pytest.mark.usefixtures("unheld")
def test_the_session_hold_lays_once_and_its_release_puts_back_the_exact_functions() -> None:
    assert same(socket_state(), ORIGINAL_SOCKET)
    assert same(transport_state(), ORIGINAL_TRANSPORTS)
    assert hold_patches() is True
    try:
        assert hold_patches() is False  # one hold: the plugin registers one release
        laid = socket_state() + transport_state()
        assert not any(a is b for a, b in zip(laid, ORIGINAL_SOCKET + ORIGINAL_TRANSPORTS, strict=True))
        with NetworkGuard() as guard:
            assert same(socket_state() + transport_state(), laid)  # entering lays nothing ...
            with pytest.raises(NetworkBlockedError):
                socket.getaddrinfo("api.openai.com", 443)  # ... and the laid wrappers guard
        assert same(socket_state() + transport_state(), laid)  # leaving takes nothing away
        assert [str(b) for b in guard.blocked] == ["DNS lookup of api.openai.com:443"]
    finally:
        release_patches()
    assert same(socket_state(), ORIGINAL_SOCKET)
    assert same(transport_state(), ORIGINAL_TRANSPORTS)
    assert "connect" not in socket.socket.__dict__  # inherited again, as before the hold
    release_patches()  # a second release is harmless


@pytest.mark.usefixtures("unheld")
def test_the_laid_wrappers_pass_everything_through_while_no_guard_is_active(fake_network: list[Any]) -> None:
    hold_patches()  # over the fake network: what the wrappers pass through to is visible
    try:
        assert not same(socket_state(), ORIGINAL_SOCKET)

        def reach() -> None:
            assert socket.getaddrinfo("api.openai.com", 443)[0][4] == ("203.0.113.7", 443)
            with socket.socket() as sock, pytest.raises(ConnectionRefusedError, match="the fake network"):
                sock.connect(("203.0.113.7", 443))
            with pytest.raises(ConnectionRefusedError, match="the fake network"):
                socket.create_connection(("203.0.113.8", 443))

        reach()
        with NetworkGuard() as guard:
            with pytest.raises(NetworkBlockedError):
                socket.getaddrinfo("api.openai.com", 443)
            with socket.socket() as sock, pytest.raises(NetworkBlockedError):
                sock.connect(("203.0.113.7", 443))
        reach()  # the guard is gone, the wrappers stay: they pass through again
        assert len(guard.blocked) == 2
        assert (
            fake_network
            == [
                ("resolve", "api.openai.com"),
                ("connect", ("203.0.113.7", 443)),
                ("resolve", "203.0.113.8"),
                ("connect", ("203.0.113.7", 443)),  # where the fake resolver sends every name
            ]
            * 2
        )
    finally:
        release_patches()


@pytest.mark.usefixtures("unheld")
def test_a_patch_laid_over_the_held_wrappers_is_wrapped_for_the_test_and_left_as_found() -> None:
    hold_patches()
    try:
        reached: list[Any] = []

        def theirs(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:  # does not call what it replaced
            reached.append(host)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("203.0.113.7", port))]

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(socket, "getaddrinfo", theirs)
            with NetworkGuard():
                assert socket.getaddrinfo is not theirs  # the guard laid its own on top, for this test
                with pytest.raises(NetworkBlockedError):
                    socket.getaddrinfo("api.openai.com", 443)
                assert socket.getaddrinfo("search.example", 443)[0][4] == ("203.0.113.7", 443)
            assert socket.getaddrinfo is theirs  # and took it away when it left
        assert reached == ["search.example"]
        with NetworkGuard():  # theirs is gone: the hold's wrappers are in place again, and guard
            assert socket.getaddrinfo in _hold.laid
            with pytest.raises(NetworkBlockedError):
                socket.getaddrinfo("api.openai.com", 443)
    finally:
        release_patches()


@pytest.mark.usefixtures("unheld")
def test_a_guard_active_when_the_hold_ends_keeps_guarding_until_it_exits() -> None:
    hold_patches()
    with NetworkGuard():
        release_patches()
        with pytest.raises(NetworkBlockedError):
            socket.getaddrinfo("api.openai.com", 443)  # what the hold laid is the guard's now ...
        assert not same(socket_state(), ORIGINAL_SOCKET)
    assert same(socket_state(), ORIGINAL_SOCKET)  # ... and it put it back when it exited
    assert same(transport_state(), ORIGINAL_TRANSPORTS)


def test_a_library_imported_after_the_hold_is_patched_by_the_next_guard() -> None:
    pytest.importorskip("httpx2", reason="the late library is httpx2, which the legacy majors do not install")
    code = textwrap.dedent(
        """
        import sys
        from wirescript.guard import NetworkGuard, hold_patches

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "httpx2":
                    raise ImportError("not yet")
                return None

        blocker = Block()
        sys.meta_path.insert(0, blocker)
        hold_patches()  # httpx2 cannot be imported: its transports are not patched
        sys.meta_path.remove(blocker)
        import httpx2
        with NetworkGuard() as guard, httpx2.Client() as http:
            response = http.get("https://api.anthropic.com/v1/models")  # refused before any lookup
            print(response.status_code, response.headers["x-should-retry"], [str(b) for b in guard.blocked])
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "403 false ['connection to api.anthropic.com:443']\n"  # the guard's answer: its wrapper is there


@pytest.fixture
def fake_datagrams() -> Iterator[list[Any]]:
    """Datagram sends and name lookups that never touch the network, installed before the guard wraps them."""
    reached: list[Any] = []

    def sendto(self: socket.socket, data: Any, *args: Any) -> int:
        reached.append(("sendto", args[-1]))
        return len(data)

    def sendmsg(self: socket.socket, buffers: Any, *args: Any) -> int:
        reached.append(("sendmsg", args[2] if len(args) > 2 else None))
        return sum(len(b) for b in buffers)

    def gethostbyname(host: str) -> str:
        reached.append(("gethostbyname", host))
        return "203.0.113.7"

    def gethostbyname_ex(host: str) -> tuple[str, list[str], list[str]]:
        reached.append(("gethostbyname_ex", host))
        return host, [], ["203.0.113.8"]

    def gethostbyaddr(host: str) -> tuple[str, list[str], list[str]]:
        reached.append(("gethostbyaddr", host))
        return "search.example", [], [host]

    with pytest.MonkeyPatch.context() as patch:
        for owner, function in (
            (socket.socket, sendto),
            (socket.socket, sendmsg),
            (socket, gethostbyname),
            (socket, gethostbyname_ex),
            (socket, gethostbyaddr),
        ):
            patch.setattr(owner, function.__name__, function)
        yield reached


def test_datagrams_fast_open_and_every_name_lookup_of_a_provider_host_are_refused(
    fake_datagrams: list[Any], fake_network: list[Any]
) -> None:
    with NetworkGuard() as guard:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            with pytest.raises(NetworkBlockedError, match=r"blocked a datagram to 192\.0\.2\.1:53"):
                udp.sendto(b"query", ("192.0.2.1", 53))
            with pytest.raises(NetworkBlockedError):
                udp.sendto(b"query", 0, ("192.0.2.1", 53))
            with pytest.raises(NetworkBlockedError):
                udp.sendmsg([b"query"], [], 0, ("192.0.2.1", 53))
            assert udp.sendto(b"local", ("127.0.0.1", 9)) == 5  # loopback: sent
            assert udp.sendmsg(iter([b"lo", b"cal"]), [], 0, ("::ffff:127.0.0.1", 9)) == 5
        if hasattr(socket, "MSG_FASTOPEN"):  # TCP Fast Open: sendto opens the connection, no connect()
            with socket.socket() as tcp, pytest.raises(NetworkBlockedError, match=r"connection to 198\.51\.100\.1:80"):
                tcp.sendto(b"GET / HTTP/1.1\r\n\r\n", socket.MSG_FASTOPEN, ("198.51.100.1", 80))
        with pytest.raises(NetworkBlockedError, match=r"DNS lookup of api\.anthropic\.com"):
            socket.gethostbyname("api.anthropic.com")
        with pytest.raises(NetworkBlockedError, match=r"DNS lookup of api\.openai\.com"):
            socket.gethostbyname_ex(b"api.openai.com")
        with pytest.raises(NetworkBlockedError, match=r"DNS lookup of generativelanguage\.googleapis\.com"):
            socket.gethostbyaddr("generativelanguage.googleapis.com")
        assert socket.gethostbyname("search.example") == "203.0.113.7"  # not a provider host: looked up
        assert socket.gethostbyname_ex("other.example")[2] == ["203.0.113.8"]
        assert socket.gethostbyaddr("203.0.113.7")[0] == "search.example"  # an address is looked up as asked
        with (
            socket.socket() as sock,
            pytest.raises(NetworkBlockedError, match=r"search\.example:443 \(203\.0\.113\.7\)"),
        ):
            sock.connect(("203.0.113.7", 443))  # named by the lookup that found it
    assert fake_datagrams == [
        ("sendto", ("127.0.0.1", 9)),
        ("sendmsg", ("::ffff:127.0.0.1", 9)),
        ("gethostbyname", "search.example"),
        ("gethostbyname_ex", "other.example"),
        ("gethostbyaddr", "203.0.113.7"),
    ]
    assert fake_network == []
    assert [attempt.kind for attempt in guard.blocked] == ["datagram"] * 3 + ["connection"] * hasattr(
        socket, "MSG_FASTOPEN"
    ) + ["DNS lookup"] * 3 + ["connection"]


def test_loopback_datagrams_go_through_under_the_fixture(wirescript: Any) -> None:
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client,
    ):
        server.bind(("127.0.0.1", 0))
        server.settimeout(5)
        client.sendto(b"ping", server.getsockname())
        client.sendmsg([b"pi", b"ng"], [], 0, server.getsockname())
        assert [server.recvfrom(10)[0] for _ in range(2)] == [b"ping", b"ping"]
    assert socket.gethostbyname("localhost").startswith("127.")
    assert wirescript.guard.blocked == []


# ---------------------------------------------------------------------------------------- through a proxy

PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy")


@pytest.fixture
def env_proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[bytes]]]:
    """A forward proxy on loopback, set in every proxy variable the HTTP stacks read (cntlm, px, mitmproxy, ssh -D)."""
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    with loopback_proxy() as (url, received):
        for name in PROXY_VARIABLES:
            monkeypatch.setenv(name, url)
        yield url, received


def refused_through(guard: NetworkGuard, url: str) -> list[str]:
    """The guard's refusals, with the proxy's port made readable; cleared (the test expects them)."""
    shown = [str(attempt).replace(url.removeprefix("http://"), "PROXY") for attempt in guard.blocked]
    guard._blocked.clear()
    return shown


THROUGH = "connection to api.anthropic.com:443 through the proxy at PROXY"


@pytest.mark.parametrize("hx", STACKS, ids=lambda hx: hx.__name__)
def test_a_forgotten_client_behind_a_loopback_proxy_is_refused(
    wirescript: Any, env_proxy: tuple[str, list[bytes]], hx: Any
) -> None:
    url, received = env_proxy
    with hx.Client() as http:  # trust_env: the proxy mounts come from HTTPS_PROXY
        response = http.get("https://api.anthropic.com/v1/models")
    assert response.status_code == 403  # the guard's answer: the CONNECT never left
    assert response.headers["x-should-retry"] == "false"
    assert "blocked a connection to api.anthropic.com:443 through the proxy at" in response.json()["error"]["message"]

    async def asynchronously() -> int:
        async with hx.AsyncClient() as http:
            return (await http.get("https://api.anthropic.com/v1/models")).status_code

    assert asyncio.run(asynchronously()) == 403
    assert received == []
    assert refused_through(wirescript.guard, url) == [THROUGH, THROUGH]


def test_the_sdk_behind_a_loopback_proxy_fails_fast_and_is_reported(
    pytester: pytest.Pytester, env_proxy: tuple[str, list[bytes]]
) -> None:
    url, received = env_proxy
    result = run(
        pytester,
        """
        def test_forgot_transport(wirescript):
            client = anthropic.Anthropic(api_key="test-key")  # no http_client: HTTPS_PROXY is on loopback
            try:
                client.messages.create(model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "Hi"}])
            except anthropic.APIError as exc:
                print("the app swallowed:", type(exc).__name__)
        """,
        "-s",
    )
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*the app swallowed: PermissionDeniedError*",
            "wirescript: the test tried to reach the network (1 attempt(s) refused by the guard):",
            f"  - connection to api.anthropic.com:443 through the proxy at {url.removeprefix('http://')}",
        ]
    )
    assert received == []


def test_requests_behind_a_loopback_proxy_is_refused(wirescript: Any, env_proxy: tuple[str, list[bytes]]) -> None:
    requests = pytest.importorskip("requests")
    url, received = env_proxy
    with pytest.raises(requests.exceptions.ConnectionError) as info:
        requests.get("https://api.openai.com/v1/models", timeout=5)  # CONNECT, through urllib3 and http.client
    assert "wirescript: blocked a connection to api.openai.com:443 through the proxy" in str(info.value)
    with pytest.raises(requests.exceptions.ConnectionError):
        requests.get("http://api.openai.com/v1/models", timeout=5)  # plain http: an absolute URI to the proxy
    assert received == []
    assert refused_through(wirescript.guard, url) == [
        "connection to api.openai.com:443 through the proxy at PROXY",
        "connection to api.openai.com:80 through the proxy at PROXY",
    ]


def test_urllib_behind_a_loopback_proxy_is_refused(wirescript: Any, env_proxy: tuple[str, list[bytes]]) -> None:
    import urllib.error
    import urllib.request

    url, received = env_proxy
    # What `urlopen` opens with, built now: `urlopen` keeps the opener of its first call in the
    # process, whose proxies are the environment's at that moment (another test's, another library's).
    opener = urllib.request.build_opener()
    for target in ("https://api.openai.com/v1/models", "http://api.openai.com/v1/models"):
        with pytest.raises(urllib.error.URLError, match=r"wirescript: blocked a connection to api\.openai\.com"):
            opener.open(target, timeout=5)
    assert received == []
    assert refused_through(wirescript.guard, url) == [
        "connection to api.openai.com:443 through the proxy at PROXY",
        "connection to api.openai.com:80 through the proxy at PROXY",
    ]


def test_aiohttp_behind_a_loopback_proxy_is_refused(wirescript: Any, env_proxy: tuple[str, list[bytes]]) -> None:
    aiohttp = pytest.importorskip("aiohttp")
    url, received = env_proxy

    async def get(target: str) -> tuple[int, str, str]:
        async with aiohttp.ClientSession(trust_env=True) as session, session.get(target) as response:
            return response.status, response.headers["x-should-retry"], await response.text()

    for target in ("https://api.openai.com/v1/models", "http://api.openai.com/v1/models"):
        status, retry, text = asyncio.run(get(target))  # the guard's answer, not a connection error to retry
        assert (status, retry) == (403, "false")
        assert "wirescript: blocked a connection to api.openai.com" in text
    assert received == []
    assert list(dict.fromkeys(refused_through(wirescript.guard, url))) == [
        "connection to api.openai.com:443 through the proxy at PROXY",
        "connection to api.openai.com:80 through the proxy at PROXY",
    ]


def test_a_proxy_asked_for_loopback_or_an_allowed_host_is_left_alone(env_proxy: tuple[str, list[bytes]]) -> None:
    url, received = env_proxy
    httpx2 = pytest.importorskip("httpx2")
    with (
        NetworkGuard(allowed_hosts=["search.internal.example"]) as guard,
        httpx2.Client() as http,
        pytest.raises(httpx2.ProxyError, match="502 Bad Gateway"),  # the proxy's own answer: it was asked
    ):
        http.get("https://127.0.0.1:9/")
    assert guard.blocked == []
    assert received == [b"CONNECT 127.0.0.1:9 HTTP/1.1"]
    with (
        NetworkGuard(allowed_hosts=["search.internal.example"]) as guard,
        socket.create_connection(("127.0.0.1", int(url.rpartition(":")[2]))) as sock,
    ):
        sock.sendall(b"CONNECT search.internal.example:443 HTTP/1.1\r\nHost: search.internal.example:443\r\n\r\n")
        assert sock.recv(100).startswith(b"HTTP/1.1 502")
    assert guard.blocked == []


@pytest.mark.parametrize(
    ("sent", "target"),
    [
        (b"CONNECT api.openai.com:443 HTTP/1.1\r\n\r\n", "api.openai.com:443"),
        (b"CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n", "[2001:db8::1]:8443"),
        (b"GET http://user@api.openai.com/v1/models HTTP/1.1\r\n\r\n", "api.openai.com:80"),
        (b"POST https://api.anthropic.com:8443?x HTTP/1.1\r\n\r\n", "api.anthropic.com:8443"),
        (b"\x05\x01\x00\x03\x11api.anthropic.com\x01\xbb", "api.anthropic.com:443"),  # SOCKS5, by name
        (b"\x05\x01\x00\x01\xcb\x00\x71\x07\x01\xbb", "203.0.113.7:443"),  # SOCKS5, IPv4
        (b"\x04\x01\x01\xbb\xcb\x00\x71\x07me\x00", "203.0.113.7:443"),  # SOCKS4
        (b"\x04\x01\x01\xbb\x00\x00\x00\x01me\x00api.openai.com\x00", "api.openai.com:443"),  # SOCKS4a
    ],
)
@pytest.mark.parametrize("way", ["send", "sendall", "sendmsg"])
def test_every_proxy_request_form_is_read(sent: bytes, target: str, way: str) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        with NetworkGuard() as guard, socket.create_connection(listener.getsockname()) as sock:
            sock.sendall(b"GET /v1/models HTTP/1.1\r\n\r\n")  # origin form: a request to the loopback server itself
            sock.sendall(b"\x05\x01\x00")  # the SOCKS5 greeting names no host
            sock.send(memoryview(b"HTTP/1.1 200 OK\r\n\r\n"))
            sock.sendall(b"")
            with pytest.raises(
                NetworkBlockedError, match=rf"blocked a connection to {re.escape(target)} through the proxy"
            ):
                getattr(sock, way)([sent] if way == "sendmsg" else sent)
            with pytest.raises(OSError, match="Broken pipe"):
                sock.sendall(b"more")  # the refused tunnel is shut: a client reading on gets EOF at once
    assert [attempt.kind for attempt in guard.blocked] == ["connection through a proxy"]


def test_a_thread_the_test_starts_is_guarded_too(wirescript: Any) -> None:
    caught: list[BaseException] = []

    def lookup() -> None:
        try:
            socket.getaddrinfo("api.anthropic.com", 443)
        except BaseException as exc:
            caught.append(exc)

    thread = threading.Thread(target=lookup)
    thread.start()
    thread.join(10)
    assert [type(exc) for exc in caught] == [NetworkBlockedError]
    assert [str(b) for b in wirescript.guard.blocked] == ["DNS lookup of api.anthropic.com:443"]
    wirescript.guard._blocked.clear()


def test_a_test_without_the_fixture_after_a_guarded_one_is_untouched(pytester: pytest.Pytester) -> None:
    # A fake network installed before anything else, so that what the wrappers pass through to shows.
    pytester.makeconftest(
        """
        import atexit, socket

        def fake_getaddrinfo(host, port, *args, **kwargs):
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("203.0.113.7", port))]

        def fake_connect(self, address):
            raise ConnectionRefusedError(f"the fake network refuses {address}")

        socket.getaddrinfo = fake_getaddrinfo
        socket.socket.connect = fake_connect
        atexit.register(
            lambda: print(
                "after the session, as before it:",
                socket.getaddrinfo is fake_getaddrinfo and socket.socket.__dict__["connect"] is fake_connect,
            )
        )
        """
    )
    pytester.makepyfile(
        test_app="""
        import socket, pytest
        from wirescript import NetworkBlockedError

        def refused(wirescript):
            with pytest.raises(NetworkBlockedError):
                socket.getaddrinfo("api.openai.com", 443)
            with socket.socket() as sock, pytest.raises(NetworkBlockedError):
                sock.connect(("203.0.113.7", 443))
            assert len(wirescript.guard.blocked) == 2
            wirescript.guard._blocked.clear()

        def reached():
            assert getattr(socket.getaddrinfo, "__wrapped__", None) is not None  # laid, and ...
            assert socket.getaddrinfo("api.openai.com", 443)[0][4] == ("203.0.113.7", 443)  # ... passing through
            with socket.socket() as sock, pytest.raises(ConnectionRefusedError, match="the fake network"):
                sock.connect(("203.0.113.7", 443))

        def test_guarded(wirescript):
            refused(wirescript)

        def test_plain():
            reached()

        @pytest.mark.wirescript(allow_network=True)
        def test_unguarded(wirescript):
            reached()

        def test_guarded_again(wirescript):
            refused(wirescript)
        """
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        result = pytester.runpytest_subprocess("-p", "wirescript.pytest_plugin", "-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["after the session, as before it: True"])


def test_a_connection_error_that_is_not_the_guards_is_left_alone() -> None:
    stub = ScriptTransport([])
    with NetworkGuard() as guard, loopback_server() as (url, _):
        closed = url.rsplit(":", 1)[0] + ":1"  # nothing listens on port 1
        with pytest.raises(ANTHROPIC_HX.ConnectError):
            ANTHROPIC_HX.get(closed)
    assert guard.blocked == []
    assert stub.requests == []


# ---------------------------------------------------------------------------------------- marker options


def test_marker_options_are_validated_and_the_closest_wins(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        pytestmark = pytest.mark.wirescript(allow_network=True)


        def test_module_allows(wirescript):
            assert wirescript.guard is None


        @pytest.mark.wirescript(allow_network=False, allowed_hosts=["search.internal"])
        def test_closest_guards(wirescript):
            assert wirescript.guard.allowed_hosts == ("search.internal",)


        @pytest.mark.wirescript(allow_netwrok=True)
        def test_typo(wirescript):
            pass


        @pytest.mark.wirescript(allowed_hosts="search.internal")
        def test_not_a_list(wirescript):
            pass


        @pytest.mark.wirescript(allowed_hosts=["https://search.internal"])
        def test_a_url(wirescript):
            pass


        @pytest.mark.wirescript(allow_network="yes")
        def test_not_a_bool():
            pass
        """,
    )
    result.assert_outcomes(passed=2, errors=4)
    result.stdout.fnmatch_lines_random(
        [
            (
                "*unknown option 'allow_netwrok'; did you mean 'allow_network'? "
                "(options: check_overflow, check_unused, allow_network, allowed_hosts, strict, strict_skip, "
                "check_tool_input, dialect, match_recorded, allow, check_hand_built, usage, prices, max_cost_usd, "
                "min_cache_hit, cache_from_request)"
            ),
            "*allowed_hosts must be a list of host names, got str 'search.internal'",
            "*allowed_hosts: 'https://search.internal' is not a host name*",
            "*allow_network must be True or False, got str 'yes'",
        ]
    )


def test_an_instance_metadata_lookup_names_the_credentials_botocore_was_not_given(
    wirescript: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    boto3 = pytest.importorskip("boto3")
    for name in [name for name in os.environ if name.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    boto3.Session().client("bedrock", region_name="us-east-1")  # no credentials given: botocore asks the IMDS
    report = wirescript.guard.report()
    assert "connection to 169.254.169.254:80" in report
    assert "169.254.169.254 is the EC2 instance metadata service" in report
    assert "AWS_EC2_METADATA_DISABLED=true" in report
    assert "http_client=" not in report  # not a provider host: the stub is not the fix
    wirescript.guard._blocked.clear()
