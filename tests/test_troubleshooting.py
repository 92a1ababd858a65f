"""The Troubleshooting page quotes the messages as the library and the SDKs print them.

Each `###` entry of docs/troubleshooting.md opens with a ```text block quoting a message; here each
entry has a reproducer that makes the real SDK over a stub (or a pytest run of the plugin) print it.
A quote matches when, whitespace aside, each of its parts between `…` elisions occurs, in order, in
what the reproducer printed. An entry without a reproducer, or a reproducer without an entry,
fails too, so the page and its proofs cannot drift apart.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import pytest

from test_docs import CURRENT_SDKS, DOCS, code_blocks
from wirescript import ScriptTransport, load_script

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.skipif(
    not CURRENT_SDKS, reason="the documentation targets anthropic >= 1 and openai >= 3 on httpx2"
)

PAGE = DOCS / "troubleshooting.md"
PARAMS: dict[str, Any] = {
    "model": "claude-sonnet-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Hi"}],
}


def quotes() -> dict[str, str]:
    """Each `###` entry's title and the first code block under it."""
    text = PAGE.read_text(encoding="utf-8")
    lines = text.splitlines()
    blocks = code_blocks(text)
    found: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        if line.startswith("### "):
            block = next((b for b in blocks if b.line > number), None)
            assert block is not None, f"docs/troubleshooting.md:{number}: no quoted message under {line!r}"
            assert block.language == "text", f"docs/troubleshooting.md:{block.line}: quote it as ```text"
            found[line[4:].strip()] = block.code
    return found


def matches(quote: str, printed: str) -> bool:
    """Whether each part of `quote` between `…` is in `printed`, in order, whitespace aside."""
    flat = " ".join(printed.split())
    position = 0
    for part in (" ".join(piece.split()) for piece in quote.split("…")):
        if not part:
            continue
        found = flat.find(part, position)
        if found < 0:
            return False
        position = found + len(part)
    return True


def client(stub: ScriptTransport, **options: Any) -> anthropic.Anthropic:
    import httpx2

    options.setdefault("max_retries", 0)
    return anthropic.Anthropic(api_key="test-key", http_client=httpx2.Client(transport=stub), **options)


def raised(call: Callable[[], object]) -> str:
    """What the SDK or wirescript raised, as a traceback's last line prints it (with the API's message)."""
    try:
        call()
    except Exception as exc:
        name = type(exc).__qualname__
        module = type(exc).__module__
        printed = f"{name if module == 'builtins' else f'{module}.{name}'}: {exc}"
        body = getattr(exc, "body", None)
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            printed += "\n" + str(body["error"].get("message"))  # the API error's message, unescaped
        return printed
    raise AssertionError("nothing was raised")


def past_the_end() -> str:
    stub = ScriptTransport(["Hello."])
    client(stub).messages.create(**PARAMS)
    return raised(lambda: client(stub).messages.create(**PARAMS))


def sdk_retry() -> str:
    stub = ScriptTransport([{"error": {"status": 429}}])
    return raised(lambda: client(stub, max_retries=1).messages.create(**PARAMS))


def no_queue() -> str:
    stub = ScriptTransport({"claude-x": ["Hello."]})
    return raised(lambda: client(stub).messages.create(**PARAMS))


def strict_refusal() -> str:
    stub = ScriptTransport(["Hello."])
    system = {**PARAMS, "messages": [{"role": "system", "content": "Be brief."}]}
    return raised(lambda: client(stub).messages.create(**system))


def held_too_long() -> str:
    stub = ScriptTransport(["Hello."], hold_timeout=0.01)
    stub.hold()
    return raised(lambda: client(stub).messages.create(**PARAMS))


def fault_without_effect() -> str:
    stub = ScriptTransport([{"text": "Hi", "fault": {"cut_after": 2}}])
    return raised(lambda: client(stub).messages.create(**PARAMS))


def unknown_endpoint() -> str:
    import httpx2

    stub = ScriptTransport(["Hello."])
    httpx2.Client(transport=stub).post("https://api.anthropic.com/v1/nothing", json={})
    return str(stub.problems[0])


def connection_error() -> str:
    stub = ScriptTransport([{"fault": {"disconnect_after": 0}}])
    return raised(lambda: client(stub).messages.create(**PARAMS))


def stub_as_client() -> str:
    return raised(lambda: anthropic.Anthropic(api_key="test-key", http_client=ScriptTransport([])))  # type: ignore[arg-type]


def sync_client_for_async_sdk() -> str:
    import httpx2

    stub = ScriptTransport([])
    return raised(lambda: anthropic.AsyncAnthropic(api_key="test-key", http_client=httpx2.Client(transport=stub)))  # type: ignore[arg-type]


def unknown_field() -> str:
    return raised(lambda: ScriptTransport([{"txt": "Hello."}]))


def async_script_function() -> str:
    async def answer(request: object) -> str:
        return "Hello."

    return raised(lambda: ScriptTransport(answer))  # type: ignore[arg-type]


def yaml_without_pyyaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "turns.yaml").write_text("- Hello.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "yaml", None)  # as if PyYAML were not installed
    return raised(lambda: load_script("turns.yaml"))


def wait_timed_out() -> str:
    stub = ScriptTransport(["Hello."])
    client(stub).messages.create(**PARAMS)
    return raised(lambda: asyncio.run(stub.wait_for_requests_async(3, timeout=0.01)))


PLUGIN_TESTS = """
import anthropic
import httpx2
import pytest

PARAMS = {"model": "claude-sonnet-5", "max_tokens": 64}


def test_unused(wirescript):
    stub = wirescript(["Checking.", "Filed card #7."])
    client = anthropic.Anthropic(api_key="k", max_retries=0, http_client=httpx2.Client(transport=stub))
    client.messages.create(**PARAMS, messages=[{"role": "user", "content": "File it"}])


def test_forgot_the_transport(wirescript):
    wirescript(["Order A1 has shipped."])
    client = anthropic.Anthropic(api_key="test-key", max_retries=0)
    with pytest.raises(anthropic.PermissionDeniedError) as info:
        client.messages.create(**PARAMS, messages=[{"role": "user", "content": "Hi"}])
    print(info.value.body["error"]["message"])


def test_unchecked():
    from wirescript import ScriptTransport

    stub = ScriptTransport(["Checked.", "Unused."])
    client = anthropic.Anthropic(api_key="k", max_retries=0, http_client=httpx2.Client(transport=stub))
    client.messages.create(**PARAMS, messages=[{"role": "user", "content": "Hi"}])


@pytest.mark.wirescript(match_recorded=True)
def test_drift(wirescript):
    stub = wirescript.recorded()
    client = anthropic.Anthropic(api_key="k", max_retries=0, http_client=httpx2.Client(transport=stub))
    question = {"role": "user", "content": "Where is my order A100, please?"}
    client.messages.create(**PARAMS, messages=[question])
"""

RECORDED = """\
# Recorded by wirescript
# requests[0] POST /v1/messages model='claude-sonnet-5' last=user:'Where is order A100?'
- Shipped.
"""


REPRODUCERS: dict[str, Callable[..., str]] = {
    "Past the end of the script": past_the_end,
    "The SDK's own retry took the next turn": sdk_retry,
    "No queue for the model": no_queue,
    "Refused as the real API would refuse it": strict_refusal,
    "Held and never released": held_too_long,
    "A fault that cannot take effect": fault_without_effect,
    "No wire serves this endpoint": unknown_endpoint,
    "Connection error": connection_error,
    "The stub passed as the client": stub_as_client,
    "The SDK refuses the HTTP client": sync_client_for_async_sdk,
    "An unknown field in a script": unknown_field,
    "Script functions must be plain functions": async_script_function,
    "Reading YAML needs PyYAML": yaml_without_pyyaml,
    "Waiting for requests timed out": wait_timed_out,
}
"""Each entry printed in-process, and what prints its message (with the fixtures its parameters name)."""

BY_THE_PLUGIN = [
    "The network guard blocked a connection",
    "Scripted turns never requested",
    "The stub received no request at all",
    "Nothing checked a stub",
    "The app asks something else than when it was recorded",
    "fixture 'wirescript' not found",
]
"""The entries a pytest run prints: the guard's refusal, the teardown reports and warning, pytest without the plugin."""


def test_every_entry_of_the_page_is_reproduced_and_every_reproduction_has_an_entry() -> None:
    assert sorted(quotes()) == sorted([*REPRODUCERS, *BY_THE_PLUGIN])


@pytest.mark.parametrize("title", list(REPRODUCERS))
def test_the_page_quotes_what_is_printed(title: str, request: pytest.FixtureRequest) -> None:
    reproducer = REPRODUCERS[title]
    names = reproducer.__code__.co_varnames[: reproducer.__code__.co_argcount]
    printed = reproducer(*(request.getfixturevalue(name) for name in names))
    quote = quotes()[title]
    assert matches(quote, printed), (
        f"docs/troubleshooting.md, {title!r}, quotes:\n{quote}\nbut this printed:\n{printed}"
    )


def test_the_page_quotes_what_the_plugin_prints(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_app=PLUGIN_TESTS)
    (pytester.path / "scripts" / "test_app").mkdir(parents=True)
    (pytester.path / "scripts" / "test_app" / "test_drift.yaml").write_text(RECORDED, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        # This suite ignores the warning (pyproject.toml); the run it makes shows it, as a user's would.
        shown = "default::wirescript.errors.UncheckedStubWarning"
        result = pytester.runpytest("-p", "wirescript.pytest_plugin", "-s", "-W", shown)
        without_plugin = pytester.runpytest("-k", "unused")  # no plugin loaded: no fixture
    result.assert_outcomes(passed=4, errors=3, warnings=1)
    without_plugin.assert_outcomes(errors=1)
    printed = "\n".join([*result.outlines, *without_plugin.outlines])
    for title in BY_THE_PLUGIN:
        quote = quotes()[title]
        assert matches(quote, printed), (
            f"docs/troubleshooting.md, {title!r}, quotes:\n{quote}\nbut pytest printed:\n{printed}"
        )


def test_a_quote_matches_only_what_was_printed() -> None:
    printed = "wirescript: requests[1] POST /v1/messages is past the end of\nthe script: it has 1 turn(s)"
    assert matches("requests[1] POST /v1/messages is past the end of the script: it has", printed)
    assert matches("wirescript: … past the end of the script: …", printed)
    assert not matches("is past the end of the queue", printed)
    assert not matches("the script … requests[1]", printed)  # the parts keep their order
