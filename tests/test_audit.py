"""The audit: real keys, key reads and unscripted clients, each reported as `file:line: CODE message`.

The sources audited here are strings and temporary files, and every key-shaped value is built at
run time, so this file itself passes the audit.
"""

from __future__ import annotations

import random
import re
import string
import textwrap
from pathlib import Path

import pytest

import wirescript.audit
from wirescript.audit import CODES, Finding, audit_paths, audit_text

ALNUM = string.ascii_letters + string.digits


def fake_key(prefix: str, length: int, alphabet: str = ALNUM) -> str:
    """A key-shaped random string, assembled at run time so no source line holds one."""
    rng = random.Random(prefix + str(length))
    return prefix + "".join(rng.choice(alphabet) for _ in range(length))


def lines(text: str, path: str = "t.py") -> list[str]:
    return [str(f) for f in audit_text(textwrap.dedent(text), path)]


# ---------------------------------------------------------------------------------------------- keys

KEYS = [
    ("sk-ant-api03-", 95, ALNUM + "-_", "an Anthropic API key"),
    ("sk-ant-admin01-", 95, ALNUM + "-_", "an Anthropic API key"),
    ("sk-proj-", 120, ALNUM + "-_", "an OpenAI project/service key"),
    ("sk-svcacct-", 120, ALNUM + "-_", "an OpenAI project/service key"),
    ("sk-", 48, ALNUM, "an OpenAI-style secret key"),
    ("sk-or-v1-", 64, "0123456789abcdef", "an OpenRouter key"),
    ("AIza", 35, ALNUM + "-_", "a Google API key"),
    ("gsk_", 52, ALNUM, "a Groq key"),
    ("xai-", 80, ALNUM, "an xAI key"),
    ("hf_", 34, ALNUM, "a Hugging Face token"),
    ("pplx-", 48, ALNUM, "a Perplexity key"),
    ("r8_", 37, ALNUM, "a Replicate token"),
    ("AKIA", 16, string.ascii_uppercase + string.digits, "an AWS access key id"),
]


@pytest.mark.parametrize(("prefix", "length", "alphabet", "label"), KEYS, ids=[k[0] for k in KEYS])
def test_a_real_looking_key_is_reported_by_its_prefix_only(prefix: str, length: int, alphabet: str, label: str) -> None:
    key = fake_key(prefix, length, alphabet)
    source = f'client = make(api_key="{key}")\n'
    assert lines(source) == [
        (
            f't.py:1: WS101 {label} ({prefix}…): a test never needs a real key; use api_key="test-key" '
            "and revoke this one if it is real"
        )
    ]
    assert key[len(prefix) :] not in lines(source)[0]  # the secret part never reaches the log


@pytest.mark.parametrize(
    "value",
    [
        "test-key",
        "sk-ant-test",
        "sk-ant-api03-" + "x" * 95,
        "sk-ant-api03-your-key-goes-here-" + "0" * 60,
        "sk-proj-" + "X" * 40,
        "sk-" + "a" * 48,
        "sk-" + "0123456789" * 5,
        "sk-" + "abcdefghijklmnopqrstuvwxyz" * 2,
        "sk-" + fake_key("", 40)[:20] + "EXAMPLE" + fake_key("", 40)[:20],
        "sk-" + fake_key("", 20),
        "AIza" + "Sy" + "A" * 33,
        "AKIAIOSFODNN7EXAMPLE",
        "mysk-" + fake_key("", 48),
        "sk-ant-...",
    ],
)
def test_placeholders_are_not_keys(value: str) -> None:
    assert lines(f'API_KEY = "{value}"\n') == []


def test_keys_are_found_in_any_text_file_and_in_comments() -> None:
    key = fake_key("sk-ant-api03-", 95, ALNUM + "-_")
    cassette = f"request:\n  headers:\n    x-api-key: {key}\n"
    assert [f.line for f in audit_text(cassette, "cassettes/run.yaml")] == [3]
    assert [f.line for f in audit_text(f"# old key: {key}\nx = 1\n", "t.py")] == [1]
    assert [f.line for f in audit_text(f'{{"key": "{key}"}}', "fixture.json")] == [1]


# ---------------------------------------------------------------------------------------- env reads

ENV_SOURCE = """\
import os
from os import environ, getenv
import dotenv
from dotenv import load_dotenv as load

KEY = os.environ["ANTHROPIC_API_KEY"]
KEY = os.getenv("OPENAI_API_KEY")
KEY = os.environ.get("GEMINI_API_KEY", "")
KEY = environ["AZURE_OPENAI_API_KEY"]
KEY = getenv("hf_token")
KEY = os.environ.setdefault("ANTHROPIC_AUTH_TOKEN", "x")
LIVE = "OPENAI_API_KEY" in os.environ
dotenv.load_dotenv()
load()

os.environ["ANTHROPIC_API_KEY"] = "test-key"
del os.environ["OPENAI_API_KEY"]
os.environ.pop("OPENAI_API_KEY", None)
HOME = os.environ["HOME"]
CI = os.getenv("CI")
NAME = os.getenv(NAME)


def test_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
"""


def test_reads_of_key_variables_are_reported_and_writes_are_not() -> None:
    advice = (
        'a test that uses a real key can reach the real API; pass api_key="test-key" to a client on a ScriptTransport'
    )
    assert lines(ENV_SOURCE) == [
        f"t.py:6: WS102 reads the key variable ANTHROPIC_API_KEY: {advice}",
        f"t.py:7: WS102 reads the key variable OPENAI_API_KEY: {advice}",
        f"t.py:8: WS102 reads the key variable GEMINI_API_KEY: {advice}",
        f"t.py:9: WS102 reads the key variable AZURE_OPENAI_API_KEY: {advice}",
        f"t.py:10: WS102 reads the key variable hf_token: {advice}",
        f"t.py:11: WS102 reads the key variable ANTHROPIC_AUTH_TOKEN: {advice}",
        f"t.py:12: WS102 checks for the key variable OPENAI_API_KEY: {advice}",
        "t.py:13: WS102 load_dotenv() loads a .env file, where real keys live; tests need none",
        "t.py:14: WS102 load_dotenv() loads a .env file, where real keys live; tests need none",
    ]


def test_a_real_looking_key_set_into_the_environment_is_a_key_finding() -> None:
    key = fake_key("sk-proj-", 120, ALNUM + "-_")
    found = audit_text(f'def test_x(monkeypatch):\n    monkeypatch.setenv("OPENAI_API_KEY", "{key}")\n', "t.py")
    assert [(f.line, f.code) for f in found] == [(2, "WS101")]


# ------------------------------------------------------------------------------------------ clients

CLIENT_SOURCE = """\
import anthropic, openai, httpx, httpx2
from anthropic import AsyncAnthropic
from openai import AsyncOpenAI as Client
from google import genai
from pydantic_ai import Agent
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

a = anthropic.Anthropic(api_key="test-key")
a = AsyncAnthropic()
a = openai.OpenAI(api_key="test-key", http_client=None)
a = Client(api_key="test-key")
a = genai.Client(api_key="test-key")
a = anthropic.Anthropic(api_key="test-key", base_url="https://api.anthropic.com")
a = AnthropicProvider(api_key="test-key")
a = AnthropicModel("claude-x")
a = Agent("anthropic:claude-x")
a = httpx.Client()
a = httpx2.AsyncClient(timeout=3)
a = anthropic.DefaultHttpxClient()
a = httpx.Client(transport=httpx.HTTPTransport(retries=2))
a = httpx.get("https://example.com")

ok = anthropic.Anthropic(api_key="test-key", http_client=httpx2.Client(transport=stub))
ok = openai.OpenAI(api_key="test-key", base_url=server.url)
ok = openai.OpenAI(api_key="test-key", base_url="http://127.0.0.1:8080/v1")
ok = anthropic.Anthropic(api_key="test-key", base_url="http://localhost:9999")
ok = anthropic.Anthropic(**kwargs)
ok = genai.Client(api_key="test-key", http_options=options)
ok = AnthropicProvider(http_client=client)
ok = AnthropicModel("claude-x", provider=AnthropicProvider(anthropic_client=client))
ok = Agent("test")
ok = Agent(model)
ok = httpx.AsyncClient(transport=stub)
ok = httpx.Client(mounts=mounts)
ok = anthropic.DefaultHttpxClient(transport=stub)
"""


STUB = "<an httpx/httpx2 client with transport=ScriptTransport(...)>"
REAL_API = "talks to the real API; pass"
NETWORK = "uses the real network; pass transport=ScriptTransport(...)"


def test_clients_without_a_scripted_transport_are_reported() -> None:
    assert lines(CLIENT_SOURCE) == [
        f"t.py:9: WS103 anthropic.Anthropic() without http_client= {REAL_API} http_client={STUB}",
        f"t.py:10: WS103 anthropic.AsyncAnthropic() without http_client= {REAL_API} http_client={STUB}",
        f"t.py:11: WS103 openai.OpenAI() without http_client= {REAL_API} http_client={STUB}",
        f"t.py:12: WS103 openai.AsyncOpenAI() without http_client= {REAL_API} http_client={STUB}",
        (
            f"t.py:13: WS103 google.genai.Client() without http_options= {REAL_API} "
            f"http_options=types.HttpOptions(httpx_client={STUB})"
        ),
        (
            "t.py:14: WS103 anthropic.Anthropic(base_url='https://api.anthropic.com') talks to a real host; "
            f"pass http_client={STUB}"
        ),
        f"t.py:15: WS103 AnthropicProvider() without a client {REAL_API} http_client={STUB}",
        (
            "t.py:16: WS103 AnthropicModel() without a provider object builds a real client; "
            "pass provider=<a provider whose client has transport=ScriptTransport(...)>"
        ),
        (
            "t.py:17: WS103 Agent('anthropic:claude-x') builds a real client from a model name; "
            "pass a model whose provider's client has transport=ScriptTransport(...)"
        ),
        f"t.py:18: WS104 httpx.Client() without transport= {NETWORK}",
        f"t.py:19: WS104 httpx2.AsyncClient() without transport= {NETWORK}",
        f"t.py:20: WS104 anthropic.DefaultHttpxClient() without transport= {NETWORK}",
        "t.py:21: WS104 httpx.Client(transport=httpx.HTTPTransport(...)) is the real network; pass a ScriptTransport",
        (
            "t.py:22: WS105 httpx.get() always uses the real network; "
            "send through a client with transport=ScriptTransport(...)"
        ),
    ]


@pytest.mark.parametrize(
    "marker",
    ["import respx", "from pytest_httpx import HTTPXMock", "def test_x(respx_mock): pass", "def t(httpx_mock): pass"],
)
def test_httpx_interceptors_silence_httpx_findings_but_not_sdk_clients(marker: str) -> None:
    source = f"import httpx, openai\n{marker}\nhttpx.Client()\nhttpx.get('https://x.test')\nopenai.OpenAI()\n"
    assert [f.code for f in audit_text(source, "t.py")] == ["WS103"]


@pytest.mark.parametrize(
    "marker",
    [
        "with stub.intercept(): pass",
        "with Interception(stub, hosts='*'): pass",
        "def test_x(wirescript):\n    wirescript(['Hi'], intercept=True)",
        "def test_x(wirescript):\n    wirescript(['Hi'], intercept=['llm.internal'])",
    ],
)
def test_a_wirescript_interception_silences_client_findings(marker: str) -> None:
    source = f"import httpx2, openai\n{marker}\nhttpx2.Client()\nhttpx2.get('https://x.test')\nopenai.OpenAI()\n"
    assert audit_text(source, "t.py") == []
    source = source.replace("intercept=True", "intercept=False").replace("intercept=[", "hosts=[")
    if "wirescript(" in source:
        assert [f.code for f in audit_text(source, "t.py")] == ["WS104", "WS105", "WS103"]


def test_an_unrelated_class_of_the_same_name_is_not_a_client() -> None:
    assert lines("class Anthropic: ...\nclient = Anthropic()\nhttp = Client()\n") == []


# ------------------------------------------------------------------------------------------ allowing


def test_an_allow_comment_silences_its_line_for_all_or_the_named_codes() -> None:
    source = textwrap.dedent(
        """\
        import os, openai
        a = os.environ["OPENAI_API_KEY"]  # wirescript: allow
        b = os.environ["OPENAI_API_KEY"]  # wirescript: allow[WS102]
        c = os.environ["OPENAI_API_KEY"]  # wirescript: allow[WS101, WS103]
        d = openai.OpenAI(api_key=os.environ["OPENAI_API_KEY"])  # wirescript: allow[WS103,WS102]
        e = openai.OpenAI(api_key=os.environ["OPENAI_API_KEY"])  # wirescript: allow[WS102]
        """
    )
    assert [(f.line, f.code) for f in audit_text(source, "t.py")] == [(4, "WS102"), (6, "WS103")]


def test_an_allow_comment_works_in_any_file() -> None:
    key = fake_key("AIza", 35, ALNUM + "-_")
    assert audit_text(f"key: {key}  # wirescript: allow\n", "c.yaml") == []
    assert audit_text(f'"{key}" // wirescript: allow[WS101]\n', "c.js") == []


# ------------------------------------------------------------------------------------------- files


def test_a_python_file_that_does_not_parse_is_a_finding() -> None:
    assert lines("def broken(:\n    pass\n") == [
        "t.py:1: WS100 does not parse (invalid syntax), so its code was not audited"
    ]
    # Its text is still searched for keys.
    key = fake_key("sk-ant-api03-", 95, ALNUM + "-_")
    assert [f.code for f in audit_text(f"x = (\n'{key}'\n", "t.py")] == ["WS100", "WS101"]


@pytest.mark.parametrize("source", ["x = " + "-" * 100_000 + "1\n", "x = 1\0\n", "x = a" + ".b" * 50_000 + "\n"])
def test_python_the_parser_refuses_is_a_finding_not_a_crash(source: str) -> None:
    # The parser's reason depends on the Python version (MemoryError, RecursionError, null bytes).
    [finding] = audit_text(source, "t.py")
    assert (finding.line, finding.code) == (1, "WS100")
    assert re.fullmatch(r"does not parse \(.+\), so its code was not audited", finding.message)


def test_every_code_is_documented() -> None:
    assert sorted(CODES) == ["WS100", "WS101", "WS102", "WS103", "WS104", "WS105"]
    import wirescript.audit

    assert all(code in (wirescript.audit.__doc__ or "") for code in CODES)


def test_a_tree_is_walked_hidden_dirs_included_skipping_caches_venvs_and_exclusions(tmp_path: Path) -> None:
    bad = "import httpx\nhttpx.Client()\n"
    for rel in [
        "tests/test_a.py",
        "tests/sub/test_b.py",
        "tests/.hidden/test_c.py",
        "tests/__pycache__/test_d.py",
        "tests/.pytest_cache/test_d.py",
        "tests/.git/test_d.py",
        "tests/venv/lib/test_e.py",
        "tests/fixtures/test_f.py",
        "tests/test_g.py",
    ]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(bad)
    (tmp_path / "tests/venv/pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "tests/image.png").write_bytes(b"\x89PNG\0\0" + fake_key("sk-ant-api03-", 95).encode())
    (tmp_path / "tests/clean.py").write_text("x = 1\n")
    report = audit_paths([tmp_path / "tests"], exclude=["fixtures", "test_g.py"])
    root = (tmp_path / "tests").as_posix()
    assert [(f.path.removeprefix(root), f.line, f.code) for f in report.findings] == [
        ("/.hidden/test_c.py", 2, "WS104"),
        ("/image.png", 1, "WS101"),  # a binary file's bytes are searched for keys, not skipped
        ("/sub/test_b.py", 2, "WS104"),
        ("/test_a.py", 2, "WS104"),
    ]
    assert report.files == 5  # test_a.py, sub/test_b.py, .hidden/test_c.py, clean.py, image.png
    assert [u.removeprefix(root) for u in report.unseen] == [
        "/image.png: a PNG image; its printable bytes were searched, not what it encodes"
    ]


def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"^no such file or directory: .*nope$"):
        audit_paths([tmp_path / "nope"])


def test_findings_sort_by_file_then_line() -> None:
    findings = [Finding("b.py", 1, "WS101", "x"), Finding("a.py", 9, "WS101", "x"), Finding("a.py", 2, "WS102", "x")]
    assert [str(f) for f in sorted(findings)] == ["a.py:2: WS102 x", "a.py:9: WS101 x", "b.py:1: WS101 x"]


def test_a_short_marker_inside_a_long_random_key_does_not_hide_it() -> None:
    # `1234` or `test` turn up in real keys by chance; only a key made mostly of them is a placeholder.
    key = fake_key("sk-ant-api03-", 40) + "1234" + fake_key("", 20)
    assert len(lines(f'k = "{key}"\n')) == 1
    assert lines('k = "sk-ant-api03-test1234test0000"\n') == []


# ---------------------------------------------------------------------------------------------- what the probe planted


def test_a_key_right_after_a_json_or_yaml_escape_is_found() -> None:
    anthropic_key, openai_key = fake_key("sk-ant-api03-", 95, ALNUM + "-_"), fake_key("sk-proj-", 120, ALNUM + "-_")
    notebook = f'{{"outputs": [{{"text": "keys:\\n{anthropic_key}\\n{openai_key}\\n"}}]}}\n'
    cassette = f'{{"headers": {{"authorization": "Bearer\\t{openai_key}"}}}}\n'
    escaped = f'{{"text": "\\u0022{anthropic_key}\\u0022"}}\n'
    assert [f.code for f in audit_text(notebook, "out.ipynb")] == ["WS101", "WS101"]
    assert [f.code for f in audit_text(cassette, "cassette.json")] == ["WS101"]
    assert [f.code for f in audit_text(escaped, "x.json")] == ["WS101"]
    assert audit_text(f'"token{anthropic_key}"\n', "x.json") == []  # glued to a word: not a key's start


def test_hidden_and_linked_folders_are_walked(tmp_path: Path) -> None:
    key = fake_key("sk-ant-api03-", 95, ALNUM + "-_")
    for rel in (".github/workflows/test.yml", ".devcontainer/devcontainer.json", ".vscode/settings.json"):
        (tmp_path / "repo" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "repo" / rel).write_text(f"ANTHROPIC_API_KEY: {key}\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "k.env").write_text(f"ANTHROPIC_API_KEY={key}\n")
    (tmp_path / "repo" / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere" / "loop").symlink_to(tmp_path / "repo", target_is_directory=True)  # walked once
    report = audit_paths([tmp_path / "repo"])
    root = (tmp_path / "repo").as_posix()
    assert sorted(f.path.removeprefix(root) for f in report.findings) == [
        "/.devcontainer/devcontainer.json",
        "/.github/workflows/test.yml",
        "/.vscode/settings.json",
        "/linked/k.env",
    ]


def test_compressed_files_and_archives_are_opened(tmp_path: Path) -> None:
    import bz2
    import gzip
    import io
    import lzma
    import tarfile
    import zipfile

    key = fake_key("sk-ant-api03-", 95, ALNUM + "-_")
    text = f'{{"request": {{"headers": {{"x-api-key": "{key}"}}}}}}\n'.encode()
    (tmp_path / "cassette.json.gz").write_bytes(gzip.compress(text))
    (tmp_path / "cassette.json.bz2").write_bytes(bz2.compress(text))
    (tmp_path / "cassette.json.xz").write_bytes(lzma.compress(text))
    with zipfile.ZipFile(tmp_path / "bundle.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("cassettes/a.json", b"{}\n" + text)
        archive.writestr("inner.json.gz", gzip.compress(text))  # an archive inside: one level more
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("fixtures/b.yaml")
        info.size = len(text)
        archive.addfile(info, io.BytesIO(text))
    (tmp_path / "fixtures.tar.gz").write_bytes(buffer.getvalue())
    report = audit_paths([tmp_path])
    root = tmp_path.as_posix()
    assert sorted((f.path.removeprefix(root), f.line, f.code) for f in report.findings) == [
        ("/bundle.zip!cassettes/a.json", 2, "WS101"),
        ("/bundle.zip!inner.json.gz!inner.json", 1, "WS101"),
        ("/cassette.json.bz2!cassette.json", 1, "WS101"),
        ("/cassette.json.gz!cassette.json", 1, "WS101"),
        ("/cassette.json.xz!cassette.json", 1, "WS101"),
        ("/fixtures.tar.gz!fixtures/b.yaml", 1, "WS101"),
    ]
    assert report.unseen == []
    (tmp_path / "cut.json.gz").write_bytes(gzip.compress(text)[:-12])
    (tmp_path / "broken.zip").write_bytes(b"PK\x03\x04 not a zip at all")
    assert [u.removeprefix(root) for u in audit_paths([tmp_path / "cut.json.gz", tmp_path / "broken.zip"]).unseen] == [
        "/cut.json.gz: a truncated gzip file: what it holds up to the cut was audited",
        "/broken.zip: a damaged zip file (File is not a zip file); not audited",
    ]


def test_utf16_without_a_byte_order_mark_is_decoded() -> None:
    key = fake_key("sk-ant-api03-", 95, ALNUM + "-_")
    for codec in ("utf-16-le", "utf-16-be"):
        data = f"ANTHROPIC_API_KEY={key}\r\nOTHER=1\r\n".encode(codec)
        assert wirescript.audit._decoded(data) is not None
    report = _audit_bytes(f"ANTHROPIC_API_KEY={key}\r\n".encode("utf-16-le"), ".env")
    assert [(f.line, f.code) for f in report.findings] == [(1, "WS101")]
    assert report.unseen == []


def _audit_bytes(data: bytes, name: str) -> wirescript.audit.AuditReport:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        return audit_paths([path])


AWS_SECRET = fake_key("", 40, ALNUM + "/+")
AZURE_KEY = fake_key("", 32, "0123456789abcdef")


@pytest.mark.parametrize(
    "line",
    [
        f"aws_secret_access_key = {AWS_SECRET}",
        f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}",
        f'"SecretAccessKey": "{AWS_SECRET}"',
        f"ya29.{fake_key('', 120, ALNUM + '-_')}",
        f"AZURE_OPENAI_API_KEY={AZURE_KEY}",
        f'client = AzureOpenAI(api_key="{AZURE_KEY}")',
        f"api-key: {AZURE_KEY}",
        f'{{"Ocp-Apim-Subscription-Key": "{AZURE_KEY}"}}',
    ],
)
def test_aws_secret_keys_google_tokens_and_azure_keys_are_found(line: str) -> None:
    assert [f.code for f in audit_text(line + "\n", "settings.txt")] == ["WS101"]


@pytest.mark.parametrize(
    "line",
    [
        f"commit = {AZURE_KEY}",  # 32 hex alone: an id, a hash, a trace
        f'"request_id": "{AZURE_KEY}"',
        "api_key = 0123456789abcdef0123456789abcdef",  # one run, repeated
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # AWS's documented example
        f"token = {AWS_SECRET}",  # 40 characters under another name
    ],
)
def test_a_hex_or_base64_string_without_its_name_is_not_a_key(line: str) -> None:
    assert audit_text(line + "\n", "settings.txt") == []


def test_the_cli_says_what_it_could_not_see(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from wirescript.cli import main

    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    (tmp_path / "blob.zst").write_bytes(b"\x28\xb5\x2f\xfd\0\0\0")
    (tmp_path / "test_ok.py").write_text("x = 1\n")
    assert main(["audit", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    root = tmp_path.as_posix()
    assert err == (
        "wirescript audit: no findings; 3 file(s) scanned\n"
        "wirescript audit: 2 file(s) seen in part only (their printable bytes were searched for keys):\n"
        f"  {root}/blob.zst: a zstd-compressed file; its printable bytes were searched, not what it encodes\n"
        f"  {root}/logo.png: a PNG image; its printable bytes were searched, not what it encodes\n"
    )
