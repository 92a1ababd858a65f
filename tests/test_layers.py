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
    {"errors", "_text", "_steps", "sse", "eventstream", "_readfile", "_hooks"},
    # 1: the script models and the record
    {"script", "recorded", "side"},
    # 2: the wires: one module per provider API, on their shared base
    {
        "wires",
        "wires.base",
        "wires._openai",
        "wires._messages",
        "wires.anthropic",
        "wires.bedrock",
        "wires.openai_chat",
        "wires.openai_responses",
        "wires.gemini",
        "wires.side",
        "wires.routes",
        # provider rules and renderings the wires use
        "_converse",
        "strict",
        "_strict_base",
        "_strict_anthropic",
        "_strict_openai",
        "_strict_gemini",
        "_strict_bedrock",
    },
    # 3: the sans-IO core, the HTTP adapter and the validators
    {"_faults", "_cursor", "_record", "_answer", "_signal", "_report", "_ledger", "_http", "_botocore"}
    | {"validate", "catalog", "_append"}
    | {"intercept", "guard"},
    # 4: the transport shell
    {"transport"},
    # 5: conveniences on top
    {"builder", "files", "audit", "server", "recording", "pytest_plugin", "cli", "__main__", "__init__"},
]
LAYER = {module: number for number, modules in enumerate(LAYERS) for module in modules}

UPWARD_CONVENIENCES = {("transport", "server"): "ScriptTransport.serve() starts a ScriptServer"}
"""Lazy imports that point up on purpose: a method of a lower layer that is a shortcut to a higher one."""

WIRES_SHARED = {"wires.base", "wires._openai", "wires._messages"}
"""What a wire may import of the other wire modules: the base, the OpenAI wires' shared helpers and the
Anthropic Messages answer (sent by the Anthropic wire and by Bedrock's invoke)."""


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


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith("wires.") and m not in WIRES_SHARED))
def test_no_wire_imports_another_wire(name: str) -> None:
    others = {t for t in _imports(MODULES[name], name) if t.startswith("wires") and t not in WIRES_SHARED}
    assert others == set()


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
    module = tmp_path / "_cursor.py"
    module.write_text("def f():\n    from .transport import ScriptTransport\n", encoding="utf-8")
    assert "transport" in _imports(module, "_cursor")
    assert LAYER["transport"] > LAYER["_cursor"]


def test_the_transport_stays_a_thin_shell() -> None:
    """`ScriptTransport` holds the public API and the two entry points; the work is the core's (issue 13)."""
    import inspect

    from wirescript import ScriptTransport

    lines = inspect.getsource(ScriptTransport).count("\n")
    assert lines <= 250, f"ScriptTransport is {lines} lines: move what is not its public API down to the core"
