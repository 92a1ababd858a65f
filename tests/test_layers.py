"""The package's imports point down its layers, as DESIGN.md draws them; a new module must say where it sits.

Every `import` of a wirescript module is read from the source (function-level imports included,
`if TYPE_CHECKING:` blocks left out), so a lazy import cannot hide an upward edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "wirescript"

LAYERS: list[set[str]] = [
    # 0: leaf helpers, no wirescript imports but each other
    {"errors", "_text", "_steps", "_exchange", "sse", "_readfile", "_hooks", "_adapters.aiohttp", "_clock"}
    | {"_cache_store", "_models", "_plain"},
    # 1: the script models and the record
    {"script", "recorded", "side"},
    # 2: the wires: one package per provider, on their shared base and private helpers
    {
        "wires",
        "wires.base",
        "wires._render",
        "wires._decode",
        "wires._rules",
        "wires._messages",
        "wires._messages_tools",
        "wires._server",
        "wires._messages_rules",
        "wires._messages_caching",
        "wires._caching",
        "wires._claude_models",
        "wires._catalog",
        "wires._hosts",
        "wires._side",
        "wires._jobs",
        "wires.side",
        "wires.routes",
        "wires.mcp",
        "wires.mcp.script",
        "wires.mcp.wire",
        "wires.mcp.rules",
        "wires._dialects",
        "wires._later",
        "wires._declared",
        "wires._answers",
        "wires._schema",
        "wires._messages_answers",
        *(
            f"wires.{provider}{module}"
            for provider, modules in {
                "anthropic": (
                    *(".wire", ".rules", ".models", ".errors", ".stream_check", ".side", ".caching", ".batches"),
                ),
                "openai": (
                    *(".chat", ".responses", ".common", ".builtins", ".rules", ".models", ".errors", ".side"),
                    *(".caching", ".dialects", ".conversations", ".batches"),
                    ".answers",
                    *(f".dialects.{name}" for name in ("base", "ollama", "local", "mistral", "deepseek")),
                    *(".dialects.openrouter", ".dialects.hosted"),
                ),
                "ollama": (".wire",),
                "gemini": (
                    *(".wire", ".grounding", ".rules", ".errors", ".side", ".caching", ".caches", ".batches"),
                    ".answers",
                ),
                "bedrock": (".wire", ".converse", ".rules", ".eventstream", ".caching", ".answers"),
            }.items()
            for module in ("", *modules)
        ),
    },
    # 3: the strict engine over a stub's wires, and the public doors to the providers' catalogs and checks
    {"strict", "validate", "catalog"},
    # 4: the sans-IO core
    {"_core", *(f"_core.{name}" for name in ("faults", "cursor", "record", "answer", "signal", "report", "bill"))}
    | {"_core.ledger"},
    # 5: the adapters: httpx/httpx2, botocore and ASGI requests into the core's neutral request, its answer out
    {"_adapters", "_adapters.http", "_adapters.botocore", "_adapters.asgi"},
    # 6: the reach: intercept() and the network guard
    {"intercept", "guard"},
    # 7: the transport shell
    {"transport"},
    # 8: conveniences on top
    {"builder", "files", "audit", "pytest_plugin", "cli", "__main__", "__init__"}
    # the loopback server and record mode
    | {"server", "_control", "_uvicorn"}
    | {"recording", "recording._transport", "recording._forward", "recording._files", "recording._append"}
    | {"recording._drift", "recording._secrets"},
]
LAYER = {module: number for number, modules in enumerate(LAYERS) for module in modules}

UPWARD_CONVENIENCES = {
    ("transport", "server"): "ScriptTransport.serve() starts a ScriptServer",
    ("server", "cli"): "wirescript.server.serve_command, deprecated until 0.3.0, resolves to the CLI's",
}
"""Lazy imports that point up on purpose: a method of a lower layer that is a shortcut to a higher one."""

COMPOSERS = {"wires", "wires.side", "wires._dialects"}
"""The modules of `wires/` that put several providers together: the facade (`default_wires`) and the side
endpoints (each provider's token counts, embeddings and listings), and the host dialects' registry (the OpenAI
package's Chat Completions dialects with Ollama's native wire). Every other module of `wires/` is one
provider's package or a provider-neutral helper they share (`_render`, `_decode`, `_rules`, `_server`, and
`_messages`, `_messages_tools`, `_messages_rules`, `_claude_models`: the Anthropic Messages answer, its server
tool blocks, the rules of its body and the Claude models they read, used by the Anthropic wire and by Bedrock's
InvokeModel for Claude)."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts).removesuffix(".__init__") if parts != ("__init__",) else "__init__"


def _imports(path: Path, name: str) -> set[str]:
    """The wirescript modules `path` imports, resolved to dotted names relative to the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name.split(".")[:-1] if path.name != "__init__.py" else name.split(".")
    if name == "__init__":
        package = []
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
                if node.module is None:  # `from . import x`: a module, or a name of the package itself
                    for alias in node.names:
                        module = ".".join([*base, alias.name])
                        found.add(module if module in MODULES else ".".join(base) or "__init__")
                else:
                    found.add(target)
            elif node.module == "wirescript":  # `from wirescript import x`: a module, or a name of the package
                found.update(alias.name if alias.name in MODULES else "__init__" for alias in node.names)
            elif node.module and node.module.startswith("wirescript."):
                found.add(node.module.removeprefix("wirescript."))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("wirescript."):
                    found.add(alias.name.removeprefix("wirescript."))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {module for module in found if module != name}


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def test_every_module_has_a_layer() -> None:
    assert sorted(set(MODULES) - set(LAYER)) == [], "add the new module to LAYERS (and to DESIGN.md's picture)"
    assert sorted(set(LAYER) - set(MODULES)) == [], "LAYERS names a module that no longer exists"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down(name: str) -> None:
    upward = []
    for target in sorted(_imports(MODULES[name], name)):
        target = target if target in LAYER else target.rsplit(".", 1)[0]  # `from .wires import base`
        if LAYER[target] > LAYER[name] and (name, target) not in UPWARD_CONVENIENCES:
            upward.append(f"{name} (layer {LAYER[name]}) imports {target} (layer {LAYER[target]})")
    assert upward == []


def _provider(module: str) -> str | None:
    """The provider package a module belongs to (`wires.openai.chat`: `openai`), or None."""
    parts = module.split(".")
    if parts[0] != "wires" or len(parts) < 2:
        return None
    package = PACKAGE.joinpath("wires", parts[1])
    return parts[1] if package.is_dir() else None


PROVIDERS = sorted({p for name in MODULES if (p := _provider(name)) is not None})


def test_every_provider_is_a_package() -> None:
    assert PROVIDERS == ["anthropic", "bedrock", "gemini", "mcp", "ollama", "openai"]


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith("wires") and m not in COMPOSERS))
def test_no_provider_package_imports_another(name: str) -> None:
    own = _provider(name)
    others = {t for t in _imports(MODULES[name], name) if _provider(t) not in (None, own)}
    assert others == set(), f"{name} imports {sorted(others)}: share the piece through a private module of wires/"


def test_a_provider_importing_another_is_caught(tmp_path: Path) -> None:
    """The check can fail: Bedrock's wire importing the Anthropic package is another provider's import."""
    module = tmp_path / "wire.py"
    module.write_text("from ..anthropic import wire\nfrom .. import _messages\n", encoding="utf-8")
    found = _imports(module, "wires.bedrock.wire")
    assert {_provider(t) for t in found} == {"anthropic", None}


def test_the_import_graph_has_no_cycle() -> None:
    graph = {
        name: {t if t in LAYER else t.rsplit(".", 1)[0] for t in _imports(path, name)} for name, path in MODULES.items()
    }
    for edge in UPWARD_CONVENIENCES:
        graph[edge[0]].discard(edge[1])
    graph["wires"] -= set(LAYERS[2])  # the package facade imports its modules; they import its parts
    state: dict[str, int] = {}

    def walk(node: str, trail: list[str]) -> None:
        if state.get(node) == 2:
            return
        assert state.get(node) != 1, f"import cycle: {' -> '.join([*trail, node])}"
        state[node] = 1
        for target in sorted(graph.get(node, ())):
            walk(target, [*trail, node])
        state[node] = 2

    for name in sorted(graph):
        walk(name, [])


def test_an_upward_import_is_caught(tmp_path: Path) -> None:
    """The check can fail: a core module importing the transport is an upward edge."""
    module = tmp_path / "cursor.py"
    module.write_text("def f():\n    from ..transport import ScriptTransport\n", encoding="utf-8")
    assert "transport" in _imports(module, "_core.cursor")
    assert LAYER["transport"] > LAYER["_core.cursor"]


def test_the_transport_stays_a_thin_shell() -> None:
    """`ScriptTransport` holds the public API and the two entry points; the work is the core's (issue 13)."""
    import inspect

    from wirescript import ScriptTransport

    lines = inspect.getsource(ScriptTransport).count("\n")
    # 270 until the stub took `usage=`, `prices=` and `bill`, 285 until `check_tool_input=`: public API, the
    # work of which is the core's (`_bill`, the answer rules)
    assert lines <= 300, f"ScriptTransport is {lines} lines: move what is not its public API down to the core"


def _provider_host_names() -> set[str]:
    """The names in the default wires' declared hosts (`Wire.hosts`), pattern pieces included (`bedrock-runtime`)."""
    from wirescript.wires import default_wires

    names = set()
    for wire in default_wires():
        for pattern in wire.hosts:
            names.update(piece.strip(".-") for piece in pattern.lower().split("*") if len(piece.strip(".-")) >= 8)
    return names


HOST_NAMES = _provider_host_names()


def _host_names_in(source: str) -> list[str]:
    """The string constants of `source` that name a provider host, docstrings left out."""
    tree = ast.parse(source)
    # A string alone as a statement is a docstring: of a module, class or function, or of the attribute before it.
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and any(name in node.value.lower() for name in HOST_NAMES)
    ]


def test_the_host_names_are_the_default_wires() -> None:
    assert {"api.anthropic.com", "api.openai.com", "generativelanguage.googleapis.com"} <= HOST_NAMES
    assert {"aiplatform.googleapis.com", "openai.azure.com", "bedrock-runtime", "amazonaws.com"} <= HOST_NAMES


@pytest.mark.parametrize("name", sorted(m for m in MODULES if not m.startswith("wires")))
def test_provider_hosts_are_named_only_under_wires(name: str) -> None:
    found = _host_names_in(MODULES[name].read_text(encoding="utf-8"))
    assert found == [], f"{name} names a provider host outside wires/: declare it on the wire (Wire.hosts)"


def test_a_provider_host_outside_wires_is_caught() -> None:
    """The check can fail: a host in a constant is caught, the same host in a docstring is not."""
    source = (
        '"""Talks to api.openai.com."""\nHOSTS = ("api.openai.com",)\n"""The hosts of api.openai.com."""\n'
        'SERVICE = f"{x}.bedrock-runtime"\n'
    )
    assert _host_names_in(source) == ["api.openai.com", ".bedrock-runtime"]
