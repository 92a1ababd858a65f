r"""`wirescript audit`: find the ways a test suite can reach a real provider.

A test that holds a real key, reads one from the environment, or builds a client that talks to
the network can spend money, leak a key into a log and go flaky, all while looking green. The
audit scans a tree of tests and examples and reports each such line as `file:line: CODE message`.

Codes:

```
WS100  a file that could not be audited: unreadable, or Python that does not parse
WS101  a real-looking provider key in any text file (code, cassettes, .env, YAML, JSON…)
WS102  a read of a provider-key environment variable, or a .env file loaded (Python)
WS103  a provider SDK client built without a scripted HTTP client (Python)
WS104  an httpx/httpx2 client built without a scripted transport (Python)
WS105  an httpx/httpx2 module-level request function, which always uses the network (Python)
```

**WS101, keys.** A key is reported when it has a provider's shape *and* its random part looks
random. The shapes (after a character that cannot be part of a key, or after a JSON/YAML escape
such as `\n` or `\t`, as in a notebook's output or a JSON cassette):

```
Anthropic           sk-ant-<kind><2 digits>-<32+ of A-Z a-z 0-9 _ ->      sk-ant-api03-…, sk-ant-admin01-…
OpenAI project etc. sk-(proj|svcacct|admin|None)-<32+ of A-Z a-z 0-9 _ ->
OpenRouter          sk-or-v1-<32+ hex>
OpenAI-style        sk-<32+ of A-Z a-z 0-9>                                 legacy OpenAI, DeepSeek, …
Google              AIza<35 of A-Z a-z 0-9 _ ->
Groq                gsk_<40+ of A-Z a-z 0-9>
xAI                 xai-<40+ of A-Z a-z 0-9>
Hugging Face        hf_<30+ of A-Z a-z 0-9>
Perplexity          pplx-<40+ of A-Z a-z 0-9>
Replicate           r8_<30+ of A-Z a-z 0-9>
AWS (Bedrock)       (AKIA|ASIA)<16 of A-Z 0-9>
Google OAuth token  ya29.<30+ of A-Z a-z 0-9 _ ->
```

Two kinds of key have no shape of their own, so they are found by the name they are given: an
AWS secret key (40 of `A-Z a-z 0-9 / +`) after `aws_secret_access_key`, `AWS_SECRET_ACCESS_KEY`,
`SecretAccessKey` or `secret_access_key` and `=` or `:`, and an Azure OpenAI key (32 hex digits)
after `api-key`, `api_key`, `apikey`, `AZURE_OPENAI_API_KEY`, `azure_openai_key` or
`ocp-apim-subscription-key` and `=` or `:` (quotes allowed). A 32-hex string alone is an id, a
hash or a trace, not a finding.

The random part looks random when it contains at least two of lowercase, uppercase and digits,
carries at least 3 bits of entropy per character, is not one run repeated, and contains none of
the placeholder words
`example`, `placeholder`, `your`, `fake`, `dummy`, `xxxx`, `redacted`, `sample`, `changeme`,
`replace`, `invalid`. The short markers `test`, `mock`, `0000` and `1234` occur in real keys by
chance, so they mark a placeholder only when they make up a quarter or more of the random part.
So `test-key`, `sk-ant-xxxx`, `sk-proj-...`, `sk-` followed by one repeated letter, or
`AKIAIOSFODNN7EXAMPLE` pass.

**WS102, key reads.** `os.environ[NAME]`, `os.environ.get(NAME)`, `os.environ.setdefault(NAME, …)`,
`os.getenv(NAME)` and `NAME in os.environ`, where NAME is a string literal naming a credential:
it ends in `API_KEY`, `APIKEY`, `API_TOKEN`, `AUTH_TOKEN`, `ADMIN_KEY` or `ACCESS_TOKEN`, or is
`HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` or
`GOOGLE_APPLICATION_CREDENTIALS`. Also `dotenv.load_dotenv()` and `dotenv.dotenv_values()`.
Writing or deleting such a variable (`monkeypatch.setenv`, `delenv`) is not a read; a real-looking
key written into it is WS101.

**WS103, SDK clients.** `anthropic.Anthropic`/`AsyncAnthropic` (and the Bedrock, Vertex and
Foundry variants), `openai.OpenAI`/`AsyncOpenAI`/`AzureOpenAI`/`AsyncAzureOpenAI` and
`google.genai.Client` built with no `http_client=` (`http_options=` for google-genai) and no
`base_url=`; a `base_url=` literal naming a host other than the loopback is reported too. The
pydantic-ai providers (`AnthropicProvider`, `OpenAIProvider`, `GoogleProvider`) need a client or a
base URL; its models (`AnthropicModel`, `OpenAIChatModel`, `GoogleModel`, …) need a `provider=`
object; `Agent("provider:model")` with a model name builds a real client. Names are resolved
through the file's imports (`from openai import OpenAI as O` is seen).

**WS104, httpx clients.** `httpx.Client`/`AsyncClient`, the same in `httpx2`, and the SDKs'
`DefaultHttpxClient`/`DefaultAsyncHttpxClient`/`DefaultHttpx2Client`/`DefaultAsyncHttpx2Client`
built without `transport=` (or `mounts=`), or with `transport=httpx.HTTPTransport(…)`.
**WS105** is `httpx.get(…)`, `httpx.post(…)`, `httpx.stream(…)` and their siblings. WS104 and
WS105 are not reported in a file that imports `respx` or `pytest_httpx` or takes a `respx_mock` or
`httpx_mock` fixture: those intercept every httpx client. They do not intercept httpx2, which is
why WS103 still applies there. WS103, WS104 and WS105 are not reported in a file that intercepts
with wirescript (`stub.intercept(…)`, `Interception(…)`, or a call passing `intercept=` other than
False or None, as in `wirescript(script, intercept=True)`): that reaches every httpx and httpx2
client, the SDKs' own included.

A call that passes `**kwargs` is not reported: what it passes cannot be known.

**Silencing a line.** A deliberate line carries the comment `# wirescript: allow` (every code) or
`# wirescript: allow[WS102]` (those codes, comma-separated) on the line the finding names. Any
comment syntax works in other files (`// wirescript: allow`). `--exclude GLOB` leaves out files or
directories whose name or path matches.

Directories are walked recursively, into hidden ones (`.github`, `.devcontainer`, `.vscode`, …)
and through symbolic links (each directory once), skipping only version control (`.git`, `.hg`,
`.svn`), caches (`__pycache__`, `.mypy_cache`, `.pytest_cache`, `.ruff_cache`, `.hypothesis`,
`.cache`, `.tox`, `.nox`, `.eggs`), `node_modules`, `*.egg-info` and virtual environments.
UTF-16/32 files are decoded, with a byte-order mark or without one (UTF-16 whose every other byte
is NUL). gzip, bzip2 and xz files, zip archives and tar archives (compressed or not) are opened
and each file inside audited as `archive.zip!inner/file.json`, two levels deep, at most
`MAX_AUDIT_BYTES` of each. Other binary files (a NUL byte in the first 8 KiB: images, zstd, 7z,
rar, an encrypted zip member) still have their printable bytes searched for keys, but what they
compress or encode cannot be seen: `AuditReport.unseen` lists them, and `wirescript audit` says so.
Only regular files are read (a FIFO or a device is WS100), at most `MAX_AUDIT_BYTES` of each;
Python larger than `MAX_PYTHON_BYTES` is searched for keys but not parsed (WS100).
"""

from __future__ import annotations

import ast
import bz2
import fnmatch
import io
import lzma
import math
import os
import re
import tarfile
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ._readfile import NotReadable, read_regular

__all__ = ["CODES", "AuditReport", "Finding", "audit_paths", "audit_text"]

MAX_AUDIT_BYTES = 32 * 1024 * 1024
"""The most bytes read of one file (32 MiB); a larger file is WS100 "larger than …", not skipped."""

MAX_PYTHON_BYTES = 4 * 1024 * 1024
"""Python files larger than this (4 MiB) are searched for keys but not parsed (parsing would take GBs)."""

_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)

CODES = {
    "WS100": "file that could not be audited",
    "WS101": "real-looking provider key",
    "WS102": "provider-key environment variable read",
    "WS103": "SDK client without a scripted HTTP client",
    "WS104": "httpx client without a scripted transport",
    "WS105": "httpx request function (always the network)",
}
"""Every finding code with a short title."""


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One line the audit reports."""

    path: str
    """The file, as reached from the audited path."""
    line: int
    """The 1-based line number."""
    code: str
    """The finding code, `WS100`-`WS105` (see `CODES`)."""
    message: str
    """What was found and what to do instead."""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.code} {self.message}"


@dataclass(slots=True)
class AuditReport:
    """What `audit_paths` found."""

    findings: list[Finding] = field(default_factory=list)
    """The findings, path by path as given, then by file and line."""
    files: int = 0
    """How many files were scanned."""
    unseen: list[str] = field(default_factory=list)
    """`path: why` of each file the audit could not see all of: binary files whose printable bytes
    were searched but whose compressed or encoded content was not, archives read in part."""


# ------------------------------------------------------------------------------------------- keys

_B = r"(?:(?<![A-Za-z0-9_-])|(?<=\\[nrtbfv])|(?<=\\x[0-9A-Fa-f]{2})|(?<=\\u[0-9A-Fa-f]{4}))"
"""Before a key: a character that cannot be part of it, or an escape (`\\n`, `\\t`, `\\u0022`) of JSON or YAML text."""
_KEY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(_B + pattern))
    for label, pattern in (
        ("an Anthropic API key", r"sk-ant-[a-z]{2,8}\d{2}-(?P<body>[A-Za-z0-9_-]{32,})"),
        ("an OpenAI project/service key", r"sk-(?:proj|svcacct|admin|None)-(?P<body>[A-Za-z0-9_-]{32,})"),
        ("an OpenRouter key", r"sk-or-v1-(?P<body>[0-9a-f]{32,})"),
        ("an OpenAI-style secret key", r"sk-(?P<body>[A-Za-z0-9]{32,})"),
        ("a Google API key", r"AIza(?P<body>[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])"),
        ("a Groq key", r"gsk_(?P<body>[A-Za-z0-9]{40,})"),
        ("an xAI key", r"xai-(?P<body>[A-Za-z0-9]{40,})"),
        ("a Hugging Face token", r"hf_(?P<body>[A-Za-z0-9]{30,})"),
        ("a Perplexity key", r"pplx-(?P<body>[A-Za-z0-9]{40,})"),
        ("a Replicate token", r"r8_(?P<body>[A-Za-z0-9]{30,})"),
        ("an AWS access key id", r"(?:AKIA|ASIA)(?P<body>[0-9A-Z]{16})(?![0-9A-Za-z])"),
        ("a Google OAuth access token", r"ya29\.(?P<body>[0-9A-Za-z_-]{30,})"),
        (
            "an AWS secret access key",
            (
                r"(?i:aws_?secret_?access_?key|secret_?access_?key|aws_?secret_?key)[\"']?\s*[:=]\s*[\"']?"
                r"(?P<body>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
            ),
        ),
        (
            "an Azure OpenAI key",
            (
                r"(?i:azure_?openai_?api_?key|azure_?openai_?key|ocp-apim-subscription-key|api[_-]?key)[\"']?"
                r"\s*[:=]\s*[\"']?(?P<body>[0-9a-fA-F]{32})(?![0-9A-Za-z])"
            ),
        ),
    )
)
_PLACEHOLDER_WORDS = (
    "example",
    "placeholder",
    "your",
    "fake",
    "dummy",
    "xxxx",
    "redacted",
    "sample",
    "changeme",
    "replace",
    "invalid",
)
"""Words nobody's random key contains by chance: anywhere in the body, they mark a placeholder."""
_SHORT_PLACEHOLDERS = ("test", "mock", "0000", "1234")
"""Short enough to occur by chance in a real key: they mark a placeholder only when they make up much of it."""
_MIN_ENTROPY = 3.0
_REPEATED = re.compile(r"(.{1,16}?)\1+.{0,16}", re.DOTALL)
"""One run written again and again (`0123456789abcdef0123456789abcdef`): a placeholder."""


def _looks_random(body: str) -> bool:
    lowered = body.lower()
    if any(word in lowered for word in _PLACEHOLDER_WORDS):
        return False
    rest = lowered
    for word in _SHORT_PLACEHOLDERS:
        rest = rest.replace(word, "")
    if len(rest) < 0.75 * len(lowered):
        return False
    classes = any(c.islower() for c in body) + any(c.isupper() for c in body) + any(c.isdigit() for c in body)
    if classes < 2 or _REPEATED.fullmatch(body):
        return False
    counts = Counter(body)
    entropy = -sum(n / len(body) * math.log2(n / len(body)) for n in counts.values())
    return entropy >= _MIN_ENTROPY


def _key_findings(path: str, lines: Sequence[str]) -> Iterator[Finding]:
    for number, line in enumerate(lines, 1):
        for label, pattern in _KEY_PATTERNS:
            for match in pattern.finditer(line):
                if _looks_random(match["body"]):
                    shown = line[match.start() : match.start("body")] + "…"  # the prefix only: no secret in logs
                    yield Finding(
                        path,
                        number,
                        "WS101",
                        f'{label} ({shown}): a test never needs a real key; use api_key="test-key" '
                        "and revoke this one if it is real",
                    )


# ------------------------------------------------------------------------------------------- code

_CREDENTIAL_VAR = re.compile(
    r"[A-Z0-9_]*(?:API_KEY|APIKEY|API_TOKEN|AUTH_TOKEN|ADMIN_KEY|ACCESS_TOKEN)"
    r"|HF_TOKEN|HUGGING_FACE_HUB_TOKEN|AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|GOOGLE_APPLICATION_CREDENTIALS"
)
_SDK_CLIENTS = {
    "anthropic": frozenset(
        {
            "Anthropic",
            "AsyncAnthropic",
            "AnthropicBedrock",
            "AsyncAnthropicBedrock",
            "AnthropicVertex",
            "AsyncAnthropicVertex",
            "AnthropicFoundry",
            "AsyncAnthropicFoundry",
        }
    ),
    "openai": frozenset({"OpenAI", "AsyncOpenAI", "AzureOpenAI", "AsyncAzureOpenAI"}),
}
_SDK_HTTP_CLIENTS = frozenset(
    {"DefaultHttpxClient", "DefaultAsyncHttpxClient", "DefaultHttpx2Client", "DefaultAsyncHttpx2Client"}
)
_HTTPX = frozenset({"httpx", "httpx2"})
_HTTPX_FUNCTIONS = frozenset({"get", "post", "put", "patch", "delete", "head", "options", "request", "stream"})
_PAI_PROVIDERS = frozenset({"AnthropicProvider", "OpenAIProvider", "GoogleProvider"})
_PAI_MODELS = frozenset(
    {"AnthropicModel", "OpenAIModel", "OpenAIChatModel", "OpenAIResponsesModel", "GoogleModel", "GeminiModel"}
)
_INTERCEPTORS = frozenset({"respx", "pytest_httpx"})
_INTERCEPTOR_FIXTURES = frozenset({"respx_mock", "httpx_mock"})
_INTERCEPTED_CODES = frozenset({"WS103", "WS104", "WS105"})
_LOOPBACK = re.compile(r"localhost|127(?:\.\d{1,3}){3}|::1|0\.0\.0\.0|.*\.localhost")
_CLIENT_KEYWORD = re.compile(r"(?:.*_)?client|http_options")
_STUB_CLIENT = "<an httpx/httpx2 client with transport=ScriptTransport(...)>"


class _CodeAudit:
    """The AST checks of one Python module."""

    def __init__(self, path: str, tree: ast.Module) -> None:
        self.path = path
        self.tree = tree
        self.aliases: dict[str, str] = {}
        self.intercepted = False
        self.stub_intercepts = False
        self.findings: list[Finding] = []

    def run(self) -> list[Finding]:
        nodes = list(ast.walk(self.tree))
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname is not None:
                        self.aliases[alias.asname] = alias.name
                    self.intercepted |= alias.name.partition(".")[0] in _INTERCEPTORS
            elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
                for alias in node.names:
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                self.intercepted |= node.module.partition(".")[0] in _INTERCEPTORS
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
                self.intercepted |= bool(names & _INTERCEPTOR_FIXTURES)
            elif isinstance(node, ast.Call):
                self.stub_intercepts |= _intercepts(node)
        for node in nodes:
            if isinstance(node, ast.Call):
                self._call(node)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                if self._is_environ(node.value):
                    self._env_read(node, node.slice, "reads")
            elif isinstance(node, ast.Compare):
                for op, right in zip(node.ops, node.comparators, strict=True):
                    if isinstance(op, (ast.In, ast.NotIn)) and self._is_environ(right):
                        self._env_read(node, node.left, "checks for")
        return self.findings

    # -- names

    def qualname(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None

    def _is_environ(self, node: ast.expr) -> bool:
        return self.qualname(node) == "os.environ"

    def _add(self, node: ast.AST, code: str, message: str) -> None:
        if self.stub_intercepts and code in _INTERCEPTED_CODES:
            return
        self.findings.append(Finding(self.path, getattr(node, "lineno", 1), code, message))

    # -- checks

    def _env_read(self, node: ast.AST, name_node: ast.expr, verb: str) -> None:
        if isinstance(name_node, ast.Constant) and isinstance(name_node.value, str):
            name = name_node.value
            if _CREDENTIAL_VAR.fullmatch(name.upper()):
                self._add(
                    node,
                    "WS102",
                    f"{verb} the key variable {name}: a test that uses a real key can reach the real API; "
                    'pass api_key="test-key" to a client on a ScriptTransport',
                )

    def _call(self, call: ast.Call) -> None:
        name = self.qualname(call.func)
        if name is None:
            return
        head, _, last = name.rpartition(".")
        root = name.partition(".")[0]
        if name in ("os.getenv", "os.environ.get", "os.environ.setdefault") and call.args:
            self._env_read(call, call.args[0], "reads")
        elif name in ("dotenv.load_dotenv", "dotenv.dotenv_values"):
            self._add(call, "WS102", f"{last}() loads a .env file, where real keys live; tests need none")
        elif last in _SDK_CLIENTS.get(root, ()):
            self._sdk_client(call, name, "http_client", f"http_client={_STUB_CLIENT}")
        elif last == "Client" and (head in ("genai", "google.genai") or head.startswith("google.genai.")):
            self._sdk_client(call, name, "http_options", f"http_options=types.HttpOptions(httpx_client={_STUB_CLIENT})")
        elif (root in _HTTPX and head == root and last in ("Client", "AsyncClient")) or (
            root in ("anthropic", "openai") and last in _SDK_HTTP_CLIENTS
        ):
            self._http_client(call, name)
        elif root in _HTTPX and head == root and last in _HTTPX_FUNCTIONS:
            if not self.intercepted:
                self._add(
                    call,
                    "WS105",
                    f"{name}() always uses the real network; send through a client with transport=ScriptTransport(...)",
                )
        elif root == "pydantic_ai":
            self._pydantic_ai(call, name, last)

    def _keywords(self, call: ast.Call) -> dict[str, ast.expr] | None:
        """The call's keywords (those passed None left out), or None when it spreads `**kwargs`."""
        keywords: dict[str, ast.expr] = {}
        for kw in call.keywords:
            if kw.arg is None:
                return None
            if not (isinstance(kw.value, ast.Constant) and kw.value.value is None):
                keywords[kw.arg] = kw.value
        return keywords

    def _real_base_url(self, value: ast.expr) -> str | None:
        """The URL when `value` is a literal naming a host other than the loopback."""
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            host = urlsplit(value.value).hostname or ""
            if not _LOOPBACK.fullmatch(host):
                return value.value
        return None

    def _sdk_client(self, call: ast.Call, name: str, keyword: str, advice: str) -> None:
        keywords = self._keywords(call)
        if keywords is None:
            return
        if "base_url" in keywords:
            url = self._real_base_url(keywords["base_url"])
            if url is not None:
                self._add(call, "WS103", f"{name}(base_url={url!r}) talks to a real host; pass {advice}")
            return
        if not any(_CLIENT_KEYWORD.fullmatch(k) for k in keywords):
            self._add(call, "WS103", f"{name}() without {keyword}= talks to the real API; pass {advice}")

    def _http_client(self, call: ast.Call, name: str) -> None:
        if self.intercepted:
            return
        keywords = self._keywords(call)
        if keywords is None or "mounts" in keywords:
            return
        transport = keywords.get("transport")
        if transport is None:
            self._add(
                call,
                "WS104",
                f"{name}() without transport= uses the real network; pass transport=ScriptTransport(...)",
            )
            return
        if isinstance(transport, ast.Call):
            inner = self.qualname(transport.func) or ""
            root, _, last = inner.rpartition(".")
            if root in _HTTPX and last in ("HTTPTransport", "AsyncHTTPTransport"):
                self._add(call, "WS104", f"{name}(transport={inner}(...)) is the real network; pass a ScriptTransport")

    def _pydantic_ai(self, call: ast.Call, name: str, last: str) -> None:
        keywords = self._keywords(call)
        if keywords is None:
            return
        if last in _PAI_PROVIDERS:
            if call.args or any(_CLIENT_KEYWORD.fullmatch(k) or k == "base_url" for k in keywords):
                return
            self._add(
                call, "WS103", f"{last}() without a client talks to the real API; pass http_client={_STUB_CLIENT}"
            )
        elif last in _PAI_MODELS:
            provider = keywords.get("provider")
            if provider is None or isinstance(provider, ast.Constant):
                self._add(
                    call,
                    "WS103",
                    f"{last}() without a provider object builds a real client; "
                    "pass provider=<a provider whose client has transport=ScriptTransport(...)>",
                )
        elif last == "Agent":
            model = call.args[0] if call.args else keywords.get("model")
            if isinstance(model, ast.Constant) and isinstance(model.value, str) and ":" in model.value:
                self._add(
                    call,
                    "WS103",
                    f"Agent({model.value!r}) builds a real client from a model name; "
                    "pass a model whose provider's client has transport=ScriptTransport(...)",
                )


# ------------------------------------------------------------------------------------------- files

_ALLOW = re.compile(r"wirescript:\s*allow(?:\[(?P<codes>[A-Z0-9,\s]*)\])?")
_SKIP_DIRS = frozenset(
    {
        "__pycache__",
        "node_modules",
        ".git",
        ".hg",
        ".svn",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".cache",
        ".tox",
        ".nox",
        ".eggs",
    }
)
"""Directories never walked: version control, caches and installed packages (virtual environments too)."""
_PYTHON_SUFFIXES = frozenset({".py", ".pyi"})


def _intercepts(call: ast.Call) -> bool:
    """Whether a call opens a wirescript interception: `….intercept(…)`, `Interception(…)`, `…(intercept=…)`."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name in ("intercept", "Interception"):
        return True
    return any(
        kw.arg == "intercept" and not (isinstance(kw.value, ast.Constant) and kw.value.value in (False, None))
        for kw in call.keywords
    )


def _allowed(line: str, code: str) -> bool:
    for match in _ALLOW.finditer(line):
        codes = match["codes"]
        if codes is None or code in {c.strip() for c in codes.split(",")}:
            return True
    return False


def audit_text(text: str, path: str = "<text>", *, python: bool | None = None) -> list[Finding]:
    """Audit one file's text; `python` (default: from the `.py`/`.pyi` suffix) adds the code checks.

    Returns:
        The findings not silenced by a `# wirescript: allow` comment, sorted by line.

    """
    lines = text.splitlines()
    findings = list(_key_findings(path, lines))
    if python is None:
        python = Path(path).suffix in _PYTHON_SUFFIXES
    if python:
        try:
            tree = ast.parse(text, filename=path)
        except SyntaxError as exc:
            findings.append(
                Finding(path, exc.lineno or 1, "WS100", f"does not parse ({exc.msg}), so its code was not audited")
            )
        except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, nesting the parser refuses
            reason = str(exc) or type(exc).__name__
            findings.append(Finding(path, 1, "WS100", f"does not parse ({reason}), so its code was not audited"))
        else:
            findings.extend(_CodeAudit(path, tree).run())
    kept = {f for f in findings if not (0 < f.line <= len(lines) and _allowed(lines[f.line - 1], f.code))}
    return sorted(kept)


def _excluded(path: Path, shown: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(path.name, p) or fnmatch.fnmatch(shown, p) for p in patterns)


def _walk(root: Path, exclude: Sequence[str]) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    seen: set[tuple[int, int]] = set()  # (device, inode) of each directory walked: a link loop is walked once
    for directory, dirnames, filenames in os.walk(root, followlinks=True):
        here = Path(directory)
        try:
            info = os.stat(here)
        except OSError:
            dirnames[:] = []
            continue
        if (info.st_dev, info.st_ino) in seen:
            dirnames[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not (d in _SKIP_DIRS or d.endswith(".egg-info"))
            and not (here / d / "pyvenv.cfg").exists()
            and not _excluded(here / d, (here / d).as_posix(), exclude)
        )
        for name in sorted(filenames):
            path = here / name
            if not _excluded(path, path.as_posix(), exclude):
                yield path


def audit_paths(paths: Iterable[str | os.PathLike[str]], *, exclude: Sequence[str] = ()) -> AuditReport:
    """Audit files and directory trees.

    Args:
        paths: Files and directories; directories are walked recursively.
        exclude: Glob patterns; a file or directory whose name or path matches one is left out.

    Returns:
        The findings of every text file, in the order of `paths`, then by file and line, and how
        many files were scanned.

    Raises:
        FileNotFoundError: A path does not exist.

    """
    report = AuditReport()
    for given in paths:
        root = Path(given)
        if not root.exists():
            raise FileNotFoundError(f"no such file or directory: {os.fspath(given)}")
        start = len(report.findings)
        for path in _walk(root, exclude):
            try:
                data = read_regular(path, MAX_AUDIT_BYTES)
            except (OSError, NotReadable) as exc:
                reason = str(exc) if isinstance(exc, NotReadable) else f"cannot be read ({exc.strerror or exc})"
                report.findings.append(Finding(path.as_posix(), 1, "WS100", f"{reason}, so it was not audited"))
                continue
            report.files += 1
            _audit_data(report, path.as_posix(), data, 0)
        report.findings[start:] = sorted(report.findings[start:])
    return report


def _audit_data(report: AuditReport, shown: str, data: bytes, depth: int) -> None:
    """Audit one file's bytes: text, an archive (each member in turn), or binary (its printable runs)."""
    opened = _opened(shown, data, depth)
    if opened is not None:
        members, unseen = opened
        report.unseen.extend(unseen)
        for name, content in members:
            _audit_data(report, name, content, depth + 1)
        return
    text = _decoded(data)
    if text is None:  # binary: its bytes are still searched for keys
        report.findings.extend(_binary_findings(data, shown))
        report.unseen.append(f"{shown}: {_binary_kind(data)}; its printable bytes were searched, not what it encodes")
        return
    if shown.endswith((".py", ".pyi")) and len(data) > MAX_PYTHON_BYTES:
        report.findings.extend(audit_text(text, shown, python=False))
        report.findings.append(
            Finding(
                shown,
                1,
                "WS100",
                f"is larger than {MAX_PYTHON_BYTES:,} bytes: searched for keys, but its code was not audited",
            )
        )
        return
    report.findings.extend(audit_text(text, shown, python=shown.endswith((".py", ".pyi"))))


_MAX_DEPTH = 2
"""Archives inside archives are opened this many levels deep (a tar.gz is one level: the tar)."""
_MAGIC_COMPRESSED = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
)
_MAGIC_OTHER = (
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive"),
    (b"Rar!\x1a\x07", "a rar archive"),
    (b"%PDF", "a PDF"),
    (b"\x89PNG", "a PNG image"),
)


def _opened(shown: str, data: bytes, depth: int) -> tuple[list[tuple[str, bytes]], list[str]] | None:
    """The members of a compressed file or archive (`archive!member`) and what was read in part; None: not one."""
    kind = next((name for magic, name in _MAGIC_COMPRESSED if data.startswith(magic)), None)
    is_zip = data.startswith((b"PK\x03\x04", b"PK\x05\x06"))
    is_tar = data[257:262] == b"ustar"
    if kind is None and not is_zip and not is_tar:
        return None
    if depth >= _MAX_DEPTH:
        return [], [f"{shown}: an archive inside archives, more than {_MAX_DEPTH} levels deep; not opened"]
    unseen: list[str] = []
    try:
        if kind is not None:
            inner, missing = _decompressed(kind, data)
            if missing is not None:
                unseen.append(f"{shown}: {missing}")
            if inner[257:262] == b"ustar":  # .tar.gz and friends: the tar's members
                return _tar_members(shown, inner, unseen), unseen
            return [(f"{shown}!{_stripped(shown)}", inner)], unseen
        if is_zip:
            return _zip_members(shown, data, unseen), unseen
        return _tar_members(shown, data, unseen), unseen
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError, zipfile.BadZipFile, tarfile.TarError) as exc:
        return [], [f"{shown}: a damaged {kind or ('zip' if is_zip else 'tar')} file ({exc}); not audited"]


def _decompressed(kind: str, data: bytes) -> tuple[bytes, str | None]:
    """The uncompressed bytes (every stream), at most `MAX_AUDIT_BYTES`; and what was not read, if anything."""
    out: list[bytes] = []
    left = MAX_AUDIT_BYTES
    rest = data
    while rest:
        if kind == "gzip":
            gz = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out.append(gz.decompress(rest, left))
            ended, rest = gz.eof, gz.unused_data
        else:
            decompressor = bz2.BZ2Decompressor() if kind == "bzip2" else lzma.LZMADecompressor()
            out.append(decompressor.decompress(rest, left))
            ended, rest = decompressor.eof, decompressor.unused_data
        left -= len(out[-1])
        if not ended:
            if left <= 0:
                return b"".join(out), f"only its first {MAX_AUDIT_BYTES:,} bytes uncompressed were audited"
            return b"".join(out), f"a truncated {kind} file: what it holds up to the cut was audited"
    return b"".join(out), None


def _zip_members(shown: str, data: bytes, unseen: list[str]) -> list[tuple[str, bytes]]:
    members = []
    budget = MAX_AUDIT_BYTES
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            if info.is_dir():
                continue
            name = f"{shown}!{info.filename}"
            if info.flag_bits & 0x1:
                unseen.append(f"{name}: encrypted; not audited")
                continue
            if budget <= 0:
                unseen.append(f"{name}: past the first {MAX_AUDIT_BYTES:,} bytes of the archive; not audited")
                continue
            with archive.open(info) as member:
                content = member.read(budget)
            budget -= len(content)
            members.append((name, content))
    return members


def _tar_members(shown: str, data: bytes, unseen: list[str]) -> list[tuple[str, bytes]]:
    members = []
    budget = MAX_AUDIT_BYTES
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        for info in archive:
            if not info.isfile():
                continue
            name = f"{shown}!{info.name}"
            if budget <= 0:
                unseen.append(f"{name}: past the first {MAX_AUDIT_BYTES:,} bytes of the archive; not audited")
                continue
            member = archive.extractfile(info)
            if member is None:
                continue
            content = member.read(budget)
            budget -= len(content)
            members.append((name, content))
    return members


def _stripped(shown: str) -> str:
    """The name of what a compressed file holds: `cassette.json.gz` holds `cassette.json`."""
    name = shown.rpartition("!")[2].rpartition("/")[2]
    for suffix in (".gz", ".tgz", ".bz2", ".xz"):
        if name.endswith(suffix):
            return name[: -len(suffix)] + (".tar" if suffix == ".tgz" else "")
    return name


def _binary_kind(data: bytes) -> str:
    return next((name for magic, name in _MAGIC_OTHER if data.startswith(magic)), "a binary file")


def _decoded(data: bytes) -> str | None:
    """A file's text: UTF-16/32 after a byte-order mark or UTF-16 without one, else UTF-8 (errors replaced).

    None when binary (a NUL byte in the first 8 KiB that is not UTF-16's).
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError:
                break
    sample = data[:8192]
    if b"\0" not in sample:
        return data.decode("utf-8", errors="replace")
    utf16 = _utf16_without_bom(sample)
    if utf16 is not None:
        return data[: len(data) - len(data) % 2].decode(utf16, errors="replace")
    return None


def _utf16_without_bom(sample: bytes) -> str | None:
    """`utf-16-le` or `utf-16-be` when most text characters are ASCII: a NUL in every other byte, and only there."""
    even, odd = sample[0::2], sample[1::2]
    if len(odd) < 2:
        return None
    even_nul, odd_nul = even.count(0) / len(even), odd.count(0) / len(odd)
    if odd_nul > 0.9 and even_nul < 0.1:
        return "utf-16-le"
    if even_nul > 0.9 and odd_nul < 0.1:
        return "utf-16-be"
    return None


def _binary_findings(data: bytes, path: str) -> list[Finding]:
    """The keys in a binary file's printable runs (line numbers count newline bytes)."""
    text = "".join(chr(b) if 32 <= b < 127 or b == 10 else " " for b in data)
    return list(_key_findings(path, text.split("\n")))
