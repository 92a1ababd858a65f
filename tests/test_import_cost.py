"""What importing wirescript imports: nothing optional, and for `import wirescript` nothing but itself.

Run in fresh interpreters, so that what the test session has loaded does not hide an import.
`import wirescript` loads only the package (the public names load on first use); a pytest session
loads the plugin, which imports neither pydantic nor the models; a stub, built, imports none of the
optional integrations (MCP, boto3/botocore, aiohttp, PyYAML, jsonschema, uvicorn, the SDKs) and
none of the features a test may not use (record mode, the loopback server, `intercept`, the builder).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_NEW_MODULES = """
import json, sys
before = set(sys.modules)
{code}
print(json.dumps(sorted(set(sys.modules) - before)))
"""

OPTIONAL = (
    "aiohttp",
    "anthropic",
    "boto3",
    "botocore",
    "difflib",
    "google.genai",
    "httpx",
    "httpx2",
    "jsonschema",
    "mcp",
    "openai",
    "uvicorn",
    "yaml",
    "wirescript._core.bill",
    "wirescript.builder",
    "wirescript.intercept",
    "wirescript.recording",
    "wirescript.server",
    "wirescript.wires.mcp",
    "wirescript.wires.routes",
)
"""Nothing a stub that uses none of them needs: each is imported when a test first asks for it."""


def _new_modules(code: str, *, first: str = "") -> list[str]:
    script = first + "\n" + _NEW_MODULES.format(code=code)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_import_wirescript_imports_only_the_package() -> None:
    new = _new_modules("import wirescript", first="import pytest")
    assert [m for m in new if m.startswith("wirescript") or m in ("pydantic", "pydantic_core")] == ["wirescript"]


def test_the_pytest_plugin_imports_no_models() -> None:
    new = _new_modules("import wirescript.pytest_plugin", first="import pytest")
    ours = sorted(m for m in new if m.startswith("wirescript"))
    assert ours == ["wirescript", "wirescript.pytest_plugin"]
    assert "pydantic" not in new


PROVIDERS = tuple(f"wirescript.wires.{name}" for name in ("anthropic", "openai", "gemini", "bedrock", "ollama", "side"))
"""The provider packages: loaded when a stub is first built, not by the import a test session makes."""


def test_the_import_a_test_session_makes_loads_no_provider_package() -> None:
    new = _new_modules("import wirescript, wirescript.pytest_plugin, wirescript.transport", first="import pytest")
    assert "wirescript.transport" in new
    assert "wirescript.strict" in new
    assert sorted(m for m in new if m.startswith(PROVIDERS)) == []
    # nor the usage machinery: the bill, the prompt cache and the caching rules come with the first stub
    assert sorted(m for m in new if m in USAGE) == []


USAGE = ("wirescript._core.bill", "wirescript._cache_store", "wirescript.wires._caching")
"""The usage machinery (`usage="derive"`, `prices`, `stub.bill`): none of it is imported with the transport."""


def test_the_strict_tables_load_the_providers_when_first_read() -> None:
    new = _new_modules("import wirescript.strict as strict\nassert 'anthropic.messages-empty' in strict.RULES")
    assert "wirescript.wires.anthropic.rules" in new


def test_a_stub_imports_nothing_optional() -> None:
    new = _new_modules("import wirescript\nstub = wirescript.ScriptTransport([{'text': 'hi'}])\nstub.check")
    assert "wirescript.transport" in new  # the stub was built: the check below is not vacuous
    assert sorted(m for m in OPTIONAL if m in new) == []


@pytest.mark.parametrize(
    "optional", ["wirescript.wires.mcp", "wirescript.wires.routes", "difflib", "wirescript._core.bill"]
)
def test_each_optional_part_is_imported_when_used(optional: str) -> None:
    if optional == "wirescript.wires.mcp":
        pytest.importorskip("jsonschema")  # MCPScript needs the mcp extra
    use = {
        "wirescript.wires.mcp": "wirescript.ScriptTransport([], mcp=wirescript.MCPScript(tools=[]))",
        "wirescript.wires.routes": "wirescript.ScriptTransport([], routes={'GET /v1/files': lambda r: {}})",
        "difflib": "wirescript._text.did_you_mean('txet', ['text'])",
        "wirescript._core.bill": "wirescript.ScriptTransport([], usage='derive')",
    }[optional]
    new = _new_modules(f"import wirescript, wirescript._text\n{use}")
    assert optional in new


def test_a_plain_test_builds_no_record_or_side_validator() -> None:
    # Records are made with `model_construct`, and a stub given no side script shares one of defaults: their
    # models' validators and serializers are built only when something validates or dumps one (pydantic's
    # `defer_build`), so the import does not pay for them.
    pytest.importorskip("httpx2", reason="the legacy SDKs' environment has no httpx2")
    code = (
        "import anthropic, httpx2, wirescript\n"
        "from wirescript.recorded import RecordedRequest\n"
        "from wirescript.side import JobPace, SideScript\n"
        "stub = wirescript.ScriptTransport([{'text': 'hi'}])\n"
        "client = anthropic.Anthropic(api_key='k', http_client=httpx2.Client(transport=stub), max_retries=0)\n"
        "client.messages.create(model='m', max_tokens=5, messages=[{'role': 'user', 'content': 'q'}])\n"
        "stub.check()\n"
        "built = any(m.__pydantic_complete__ for m in (RecordedRequest, SideScript, JobPace))\n"
        "dumped = stub.requests[0].model_dump(mode='json')['provider']\n"
        "print([built, dumped, RecordedRequest.__pydantic_complete__])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "[False, 'anthropic', True]"


def test_the_dialect_ids_known_without_their_classes_are_theirs() -> None:
    # `dialects()` answers from a table written down, so that listing them imports no dialect's class.
    from wirescript.wires import _dialects

    assert _dialects.dialects() == tuple(_dialects.DIALECTS)
