"""The documentation runs: every ```python block of README.md and docs/**/*.md, and every examples/*.py.

Blocks are collected by parsing the markdown at test time, one test per block with the id
`<file>:<line of the opening fence>` (`README.md:12`, `docs/errors.md:40`). A block runs in a fresh
namespace as `__main__`, in a temporary working directory, with its line numbers kept, so a
traceback points into the markdown file.

A block that defines `test_*` functions is a pytest example. All of them, from every file, are
written into one temporary project and run by a single pytest subprocess (starting one per block
cost 7-11 s each); each block's test then reports the outcome of its own tests, and must have at
least one that passed. The run starts in the background before the session's first test (the
session fixture of conftest.py) and those tests run last, so it overlaps the rest of the suite;
under pytest-xdist the workers share it (a lock file in the session's shared temporary directory).

A block preceded by the HTML comment `<!-- skip-test -->` (or `<!-- skip-test: reason -->`) on the
line before is skipped, visibly. A block preceded by `<!-- file: PATH -->` is a file of that pytest
project instead (a `conftest.py`, a script file under `scripts/`): it is written there before the run,
for the blocks with tests to use, and is not run by itself. A block that imports a package that is
not installed (an agent framework of the `agents` group) is skipped, unless
`WIRESCRIPT_REQUIRE_AGENTS=1` (CI), which makes it fail.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from _support import ANTHROPIC_MAJOR

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
REQUIRE_ENV = "WIRESCRIPT_REQUIRE_AGENTS"
GROUP_ENV = "WIRESCRIPT_DOCS_GROUP"
# Pages whose packages conflict with the main environment's (llama-index pins openai<3): their blocks
# run only in that group's own environment, with WIRESCRIPT_DOCS_GROUP=<group> (.ci/run), and only they do.
OWN_GROUP = {
    "docs/frameworks/llama-index.md": "llama-index",
    # crewai and semantic-kernel pin mcp<2, google-adk google-genai<3, mirascope[anthropic] anthropic<1
    **{f"docs/frameworks/{page}.md": "compat" for page in ("crewai", "semantic-kernel", "google-adk", "mirascope")},
}

# The documentation is written for the current SDK majors on httpx2 (anthropic >= 1, openai >= 3); a group's
# own pages (WIRESCRIPT_DOCS_GROUP) are written for the SDKs its environment has.
CURRENT_SDKS = importlib.util.find_spec("httpx2") is not None and ANTHROPIC_MAJOR >= 1
needs_current_sdks = pytest.mark.skipif(
    not CURRENT_SDKS and not os.environ.get("WIRESCRIPT_DOCS_GROUP"),
    reason="the documentation targets anthropic >= 1 and openai >= 3 on httpx2",
)

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*)$")
_SKIP = re.compile(r"^\s*<!--\s*skip-test(?:\s*:\s*(?P<reason>.*?))?\s*-->\s*$")
_FILE = re.compile(r"^\s*<!--\s*file:\s*(?P<path>[\w.-]+(?:/[\w.-]+)*)\s*-->\s*$")
_PYTHON = frozenset({"python", "py", "python3"})


@dataclass(frozen=True)
class Block:
    """A fenced code block of a markdown file."""

    line: int
    """The 1-based line of the opening fence."""
    language: str
    code: str
    skip: str | None = None
    """Why the block is skipped, when it is."""
    file: str | None = None
    """The path (relative to the docs' pytest project) the block is written to, when it is a file."""
    error: str | None = None
    """A problem with the markdown itself (an unclosed fence)."""


def code_blocks(text: str) -> list[Block]:
    """Every fenced block (CommonMark rules: ``` or ~~~, closed by a fence at least as long)."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None or (opening["fence"][0] == "`" and "`" in opening["info"]):
            i += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        language = (opening["info"].split() or [""])[0].lower()
        closing = re.compile(rf"^ *{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        previous = next((line for line in reversed(lines[:i]) if line.strip()), "")
        skip = _SKIP.match(previous)
        file = _FILE.match(previous)
        end = next((j for j in range(i + 1, len(lines)) if closing.match(lines[j])), None)
        body = lines[i + 1 : end if end is not None else len(lines)]
        # Like CommonMark, remove up to the opening fence's indentation from each line.
        code = "\n".join(line[min(indent, len(line) - len(line.lstrip(" "))) :] for line in body) + "\n"
        blocks.append(
            Block(
                line=i + 1,
                language=language,
                code=code,
                skip=(skip["reason"] or "marked <!-- skip-test -->") if skip else None,
                file=file["path"] if file and ".." not in file["path"].split("/") else None,
                error=None if end is not None else f"the {fence} fence opened on line {i + 1} is never closed",
            )
        )
        i = (end if end is not None else len(lines)) + 1
    return blocks


def markdown_files() -> list[Path]:
    """The README and every page of the docs site."""
    return [path for path in [README, *sorted(DOCS.rglob("*.md"))] if path.exists()]


def doc_id(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT).as_posix()}:{line}"


@dataclass(frozen=True)
class DocBlock:
    """A python block of a markdown file, with where it is."""

    path: Path
    block: Block

    @property
    def id(self) -> str:
        return doc_id(self.path, self.block.line)


def python_blocks(paths: list[Path] | None = None) -> list[DocBlock]:
    return [
        DocBlock(path, block)
        for path in (markdown_files() if paths is None else paths)
        for block in code_blocks(path.read_text(encoding="utf-8"))
        if block.language in _PYTHON
    ]


def file_blocks() -> list[DocBlock]:
    """The blocks of every page that are files of the docs' pytest project (`<!-- file: PATH -->`), any language."""
    return [
        DocBlock(path, block)
        for path in markdown_files()
        for block in code_blocks(path.read_text(encoding="utf-8"))
        if block.file is not None
    ]


def own_group(doc: DocBlock) -> str | None:
    """The dependency group whose own environment runs the block, or None for the main one."""
    return OWN_GROUP.get(doc.path.relative_to(ROOT).as_posix())


def elsewhere(doc: DocBlock) -> str | None:
    """Why the block does not run in this environment, or None when it does."""
    group, here = own_group(doc), os.environ.get(GROUP_ENV) or None
    if group == here:
        return None
    if group is not None:
        return f"runs in the {group!r} group's own environment ({GROUP_ENV}={group}, as .ci/run does)"
    return f"this is the {here!r} group's run ({GROUP_ENV}={here}): it runs that group's pages only"


def doc_params() -> list[object]:
    return [
        pytest.param(doc, id=doc.id, marks=[pytest.mark.skip(reason=why)] if why else [])
        for doc in python_blocks()
        for why in [doc.block.skip or elsewhere(doc)]
    ]


def defines_tests(tree: ast.Module) -> bool:
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.name.startswith(("test_", "Test"))
        for node in tree.body
    )


def parse_block(doc: DocBlock) -> ast.Module:
    """The block's code, parsed with its markdown line numbers."""
    assert doc.block.error is None, f"{doc.id}: {doc.block.error}"
    # Pad with blank lines so that the code keeps its line numbers in tracebacks.
    return ast.parse("\n" * doc.block.line + doc.block.code, filename=str(doc.path))


def missing_imports(tree: ast.Module) -> list[str]:
    """The modules the block imports that are not installed."""
    wanted: list[tuple[str, list[str]]] = []  # (module, names imported from it)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            wanted += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            wanted.append((node.module, [alias.name for alias in node.names]))
    missing = []
    for module, names in wanted:
        spec = _find(module)
        # A namespace package (google) is there when a submodule imported from it is; the
        # directory tests/agents is a namespace package too, but it is not openai-agents.
        namespace = spec is not None and spec.origin in (None, "namespace")
        if namespace and names and not any(_find(f"{module}.{name}") is not None for name in names):
            spec = None
        if spec is None and module not in missing:
            missing.append(module)
    return missing


_IMPORTED = importlib.machinery.ModuleSpec("imported already", None, origin="imported already")


def _find(module: str) -> importlib.machinery.ModuleSpec | None:
    """The module's spec, found without importing it or its parents (`find_spec("a.b")` imports `a`).

    Importing the frameworks only to learn that they are installed cost every xdist worker about
    15 s of CPU (litellm alone is several). Each level is looked up in its parent's search path by
    the import system's finders, as an import would.
    """
    if module in sys.modules:  # a lazily loaded module may have no spec of its own (haystack's)
        return getattr(sys.modules[module], "__spec__", None) or _IMPORTED
    parts = module.split(".")
    spec = importlib.util.find_spec(parts[0])  # a top-level name: nothing is imported
    try:
        for depth in range(2, len(parts) + 1):
            if spec is None or spec.submodule_search_locations is None:
                return None
            name, path = ".".join(parts[:depth]), list(spec.submodule_search_locations)
            spec = next((found for finder in sys.meta_path if (found := _finder_spec(finder, name, path))), None)
    except KeyError:
        # A namespace package below the top (llama_index.llms) computes its path from its imported
        # parent: ask the import system, which imports the parents (cheap for a namespace package).
        try:
            return importlib.util.find_spec(module)
        except ModuleNotFoundError:
            return None
    return spec


def _finder_spec(finder: object, name: str, path: list[str]) -> importlib.machinery.ModuleSpec | None:
    find_spec = getattr(finder, "find_spec", None)
    return find_spec(name, path) if callable(find_spec) else None


# Import names that are not their distribution's name, nor a prefix of it (`pydantic_ai` is
# pydantic-ai-slim's, `strands` strands-agents'): openai-agents installs `agents`.
_DISTRIBUTION_OF = {"agents": "openai-agents"}


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def groups_installing(module: str) -> list[str]:
    """The dependency groups of pyproject.toml whose requirements install `module` (its top-level name)."""
    top = _normalized(module.split(".")[0])
    wanted = _DISTRIBUTION_OF.get(top, top)
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["dependency-groups"]
    found = []
    for group, requirements in groups.items():
        names = {_normalized(re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]) for requirement in requirements}
        if any(name == wanted or name.startswith(f"{wanted}-") for name in names):
            found.append(group)
    return found


def check_imports(doc: DocBlock, tree: ast.Module) -> None:
    """Skip a block whose packages are not installed; fail instead under WIRESCRIPT_REQUIRE_AGENTS=1."""
    missing = missing_imports(tree)
    if not missing:
        return
    problem = f"{doc.id} imports {', '.join(missing)}, which is not installed"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{problem}, and {REQUIRE_ENV}=1 requires it (uv sync --all-groups)", pytrace=False)
    groups = sorted({group for module in missing for group in groups_installing(module)})
    where = " or ".join(repr(group) for group in groups)
    if not groups:  # installed with a group's package (langchain_core with langchain-anthropic)
        pytest.skip(f"{problem} (uv sync --all-groups installs every dependency group)")
    pytest.skip(f"{problem} (the {where} dependency group{'s' if len(groups) > 1 else ''})")


def run_script_block(doc: DocBlock) -> None:
    """Run a block that defines no tests: exec it as a script."""
    tree = parse_block(doc)
    exec(compile(tree, str(doc.path), "exec"), {"__name__": "__main__", "__file__": str(doc.path)})


@dataclass
class BlockOutcome:
    """What pytest reported for the tests of one block."""

    passed: int = 0
    problems: list[str] = field(default_factory=list)


def module_name(doc_id: str) -> str:
    """The test module of a block: `README.md:12` is `test_readme_md_12`."""
    return "test_" + re.sub(r"\W+", "_", doc_id.lower()).strip("_")


def run_test_blocks(
    docs: list[DocBlock], project: Path, *, autoload: bool = True, files: list[DocBlock] | None = None
) -> dict[str, BlockOutcome]:
    """Run the tests of every block in one pytest subprocess; the outcome per block id.

    Each block becomes its own module, padded so that its line numbers are the markdown file's; each
    of `files` is first written to its own path in the project.
    The pytest run loads every installed plugin, as the reader's would (but langsmith's, which only
    costs time); `autoload=False` (for the harness's own tests) skips them, which starts several
    times faster.
    """
    for doc in files or []:
        assert doc.block.file is not None, f"{doc.id} is not a file block"
        target = project / doc.block.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(doc.block.code, encoding="utf-8")
    modules: dict[str, str] = {}
    paths: dict[str, str] = {}
    for doc in docs:
        parse_block(doc)  # a fence or syntax problem is the block's own failure, raised here
        name = module_name(doc.id)
        (project / f"{name}.py").write_text("\n" * doc.block.line + doc.block.code, encoding="utf-8")
        modules[name] = doc.id
        paths[name] = doc.path.relative_to(ROOT).as_posix()
    report = project / "report.xml"
    # The outer run's options (e.g. xdist's -n) and its xdist worker's identity are not this run's.
    outer = ("PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST", "PYTEST_XDIST_")
    env = {name: value for name, value in os.environ.items() if not name.startswith(outer)}
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # its imports' bytecode is kept, as the suite's is (conftest.py)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            # langsmith's plugin (the frameworks group) imports its client, 2-3 s of CPU; no block uses it.
            "-p",
            "no:langsmith_plugin",
            "-W",
            "error",
            "--continue-on-collection-errors",
        ]
        + ["--junitxml", report.name]
        + [f"{name}.py" for name in modules],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    outcomes = {doc_id: BlockOutcome() for doc_id in modules.values()}
    if not report.exists():
        raise AssertionError(
            f"the docs' pytest run wrote no report (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    for case in ET.parse(report).getroot().iter("testcase"):
        where = case.get("classname") or case.get("name") or ""
        outcome = outcomes.get(modules.get(where.split(".")[0], ""))
        if outcome is None:
            raise AssertionError(f"the docs' pytest run reported a test of no block ({where!r}):\n{done.stdout}")
        # A strict xfail that failed as expected (a framework's known bug, pinned) counts as passed; one
        # that passed fails as `[XPASS(strict)]`, and any other skip is a problem.
        problems = [child for child in case if child.tag in ("failure", "error", "skipped") and not _xfailed(child)]
        if not problems:
            outcome.passed += 1
        for child in problems:
            text = f"{case.get('name')}: {child.tag}: {child.get('message', '')}\n{child.text or ''}".rstrip()
            # Tracebacks name the module; its line numbers are the markdown file's, so name that.
            outcome.problems.append(text.replace(f"{where.split('.')[0]}.py", paths[where.split(".")[0]]))
    return outcomes


def _xfailed(child: ET.Element) -> bool:
    """Whether a junit `<skipped>` entry is a test that failed as its `xfail` marker expects."""
    return child.tag == "skipped" and child.get("type") == "pytest.xfail"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock across processes (the xdist workers), where the platform has one."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: each worker runs its own subprocess
        yield
        return
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def runnable_test_blocks(docs: list[DocBlock] | None = None) -> list[DocBlock]:
    """The blocks with tests that run (of `docs`, else of every page): not skipped, their packages installed."""
    runnable = []
    for doc in python_blocks() if docs is None else docs:
        if doc.block.skip or doc.block.error or doc.block.file or elsewhere(doc):
            continue
        try:
            tree = parse_block(doc)
        except SyntaxError:
            continue  # the block's own test reports it
        if defines_tests(tree) and not missing_imports(tree):
            runnable.append(doc)
    return runnable


ERROR = "error"
"""The key of the saved outcomes when the run itself failed (a block's id is `path:line`)."""


def _shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's temporary directory, shared by its xdist workers."""
    root = tmp_path_factory.getbasetemp()
    return root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root


def _run_and_save(docs: list[DocBlock], project: Path, saved: Path) -> None:
    """Run the blocks' tests and save their outcomes (or why there are none) for every worker to read."""
    try:
        project.mkdir(exist_ok=True)
        files = [doc for doc in file_blocks() if not doc.block.skip and not elsewhere(doc)]
        outcomes = run_test_blocks(docs, project, files=files)
        result: dict[str, object] = {key: vars(value) for key, value in outcomes.items()}
    except BaseException as exc:  # any failure reaches the blocks' tests as theirs, never a hang
        result = {ERROR: f"{type(exc).__name__}: {exc}"}
    partial = saved.with_suffix(".partial")
    partial.write_text(json.dumps(result), encoding="utf-8")
    partial.replace(saved)  # atomic: a reader sees the whole file or none


@contextmanager
def blocks_run_in_background(tmp_path_factory: pytest.TempPathFactory, items: list[pytest.Item]) -> Iterator[None]:
    """Start the pytest run of the selected blocks with tests, once per session, as the session starts.

    Called by conftest.py's session fixture in every worker; the first to come starts it in a thread
    and waits for it at the end of its session. Those blocks' tests run last (conftest.py), so that
    the run, about 30 s of CPU (it imports every framework), overlaps the rest of the suite instead
    of holding a worker. The tests read the saved outcomes (`docs_test_outcomes`).
    """
    docs = runnable_test_blocks([item.callspec.params["doc"] for item in items]) if CURRENT_SDKS else []
    root = _shared_root(tmp_path_factory)
    thread = None
    with _locked(root / "docs-test-blocks.lock"):
        started = root / "docs-test-blocks.started"
        if docs and not started.exists():
            started.touch()
            thread = threading.Thread(
                target=_run_and_save,
                args=(docs, root / "docs-test-blocks", root / "docs-test-blocks.json"),
                name="docs-test-blocks",
                daemon=True,
            )
            thread.start()
    try:
        yield
    finally:
        if thread is not None:
            thread.join()


@pytest.fixture(scope="session")
def docs_test_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, BlockOutcome]:
    """The outcome of every docs block with tests, from the one pytest run of the session."""
    root = _shared_root(tmp_path_factory)
    saved = root / "docs-test-blocks.json"
    with _locked(root / "docs-test-blocks.lock"):
        if not (root / "docs-test-blocks.started").exists():  # not started (a block selected another way)
            (root / "docs-test-blocks.started").touch()
            _run_and_save(runnable_test_blocks(), root / "docs-test-blocks", saved)
    deadline = time.monotonic() + 900
    while not saved.exists():
        if time.monotonic() > deadline:
            raise AssertionError("the docs' pytest run did not finish in 15 minutes")
        time.sleep(0.1)
    result = json.loads(saved.read_text(encoding="utf-8"))
    if ERROR in result:
        raise AssertionError(f"the docs' pytest run failed: {result[ERROR]}")
    return {key: BlockOutcome(**value) for key, value in result.items()}


def assert_block_passed(doc_id: str, outcome: BlockOutcome | None) -> None:
    """Fail, naming the block, unless its tests ran and passed."""
    if outcome is None:
        raise AssertionError(f"{doc_id}: its tests were not run")
    if outcome.problems:
        raise AssertionError(f"{doc_id}: its tests failed:\n" + "\n\n".join(outcome.problems))
    if not outcome.passed:
        raise AssertionError(f"{doc_id}: no test of the block passed")


def test_the_docs_have_python_examples() -> None:
    assert README.exists(), "README.md is missing"
    assert DOCS.is_dir(), "docs/ is missing"
    files = {doc.path for doc in python_blocks()}
    assert README in files, "README.md has no ```python block: the docs test would check nothing"
    assert any(path.is_relative_to(DOCS) for path in files), "docs/ has no ```python block"


def test_the_readme_stays_short() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines: move the detail to a page of docs/ and link it"


def test_the_readmes_first_screen_has_the_two_commands() -> None:
    """A newcomer's first screen (the first 24 lines) runs the main example and the tests, each as named."""
    lines = README.read_text(encoding="utf-8").splitlines()
    screen = "\n".join(lines[:24])
    example = re.search(r"^uv run (examples/\S+\.py)", screen, re.M)
    assert example is not None, "README's first screen has no `uv run examples/...` command"
    assert (ROOT / example.group(1)).is_file(), f"README's first screen runs {example.group(1)}, which is missing"
    assert re.search(r"^uv run pytest\b", screen, re.M), "README's first screen has no `uv run pytest`"


def test_the_api_reference_documents_every_public_name_from_its_home_module() -> None:
    import wirescript

    documented = re.findall(r"^::: (wirescript(?:\.\w+)+)\.(\w+)$", (DOCS / "api.md").read_text(encoding="utf-8"), re.M)
    homes = wirescript._EXPORTS  # where the package says each public name lives
    public = {(f"wirescript.{homes[name]}", name) for name in wirescript.__all__ if name != "__version__"}
    # Beyond the package's own names, only the two extension namespaces are documented: the wire seam
    # (`wirescript.wires`) and the strict rules a wire declares (`wirescript.strict`).
    seams = ("wirescript.wires", "wirescript.strict")
    extra = [(module, name) for module, name in set(documented) - public if not module.startswith(seams)]
    assert sorted(public - set(documented)) == []
    assert extra == []
    assert len(documented) == len(set(documented)), "a name is documented twice"


# ------------------------------------------------------------------------------------ the newcomer's pages

FIRST_PAGES = (DOCS / "index.md", DOCS / "getting-started.md")
FIRST_COLUMNS = 80
"""The site's content column shows about 80 columns: the first pages' code fits it, every line."""
PYTHON_COLUMNS = 80
"""Python blocks anywhere fit the same column (docs/ruff.toml formats the site's at 80; the README by hand)."""


def too_wide(paths: list[Path], columns: int, *, python_only: bool) -> list[str]:
    """Each code line of `paths` wider than `columns`, as `path:line (width)`."""
    wide = []
    for path in paths:
        for block in code_blocks(path.read_text(encoding="utf-8")):
            if python_only and block.language not in _PYTHON:
                continue
            for offset, line in enumerate(block.code.splitlines(), start=1):
                if len(line) > columns:
                    wide.append(f"{doc_id(path, block.line + offset)} ({len(line)} columns)")
    return wide


def test_the_first_pages_code_fits_the_sites_column() -> None:
    assert too_wide(list(FIRST_PAGES), FIRST_COLUMNS, python_only=False) == []


def test_every_python_block_fits_the_sites_column() -> None:
    assert too_wide(markdown_files(), PYTHON_COLUMNS, python_only=True) == []


def test_the_width_check_sees_a_long_line_where_it_is() -> None:
    page = DOCS / "index.md"
    [block] = code_blocks("intro\n\n```text\nshort\n" + "x" * 81 + "\n```\n")
    assert [line for line in block.code.splitlines() if len(line) > FIRST_COLUMNS] == ["x" * 81]
    assert doc_id(page, block.line + 2) == "docs/index.md:5"  # the fence is line 3, the long line 5


def test_getting_started_says_the_network_guard_is_the_fixtures() -> None:
    text = " ".join((DOCS / "getting-started.md").read_text(encoding="utf-8").split())
    assert "The network guard is the fixture's" in text
    assert "reaches the real network" in text
    assert "wirescript audit tests/" in text


@pytest.mark.parametrize("page", ["record.md", "scripts.md"])
def test_the_yaml_extra_is_named_before_the_first_yaml_example(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    named = text.find("wirescript[yaml]")
    lines = text.splitlines()
    first = min(
        block.line
        for block in code_blocks(text)
        if block.language == "yaml" or ".yaml" in block.code or ".yml" in block.code
    )
    assert named >= 0, f"docs/{page} never names the wirescript[yaml] extra"
    assert text.count("\n", 0, named) + 1 < first, (
        f"docs/{page}:{first} writes YAML before the page names the wirescript[yaml] extra "
        f"(line {text.count(chr(10), 0, named) + 1}): {lines[first - 1]!r}"
    )


MAINTAINER_FIGURES = re.compile(
    r"callgrind|cProfile|\b95 ?% interval|\b\d[\d,.]*k? (?:CPU )?instructions\b|\bKB\b", re.IGNORECASE
)
MAINTAINER_PAGES = {"docs/performance.md", "docs/reliability.md", "docs/architecture.md", "docs/changelog.md"}


def test_maintainer_figures_live_on_the_maintainer_pages() -> None:
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{number}: {match.group()}"
        for path in markdown_files()
        if path.relative_to(ROOT).as_posix() not in MAINTAINER_PAGES
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        for match in [MAINTAINER_FIGURES.search(line)]
        if match
    ]
    assert found == [], "measurements belong on docs/performance.md (link them from the guide)"
    assert MAINTAINER_FIGURES.search("about 17,000 CPU instructions (callgrind), 95% interval 1.00-1.04")


def test_the_site_nav_has_troubleshooting_and_the_changelog() -> None:
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    top = {title: page for entry in config["nav"] for title, page in entry.items()}
    assert top["Troubleshooting"] == "troubleshooting.md"
    assert top["Changelog"] == "changelog.md"
    # The site's changelog is the repository's, included whole (pymdownx.snippets), never a copy.
    assert '--8<-- "CHANGELOG.md"' in (DOCS / "changelog.md").read_text(encoding="utf-8")


def test_the_readme_client_table_has_a_row_per_client_the_stub_serves() -> None:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("## Which client to hand the stub") :].split("\n\n")[1]
    rows = [line.split("|")[1] for line in table.splitlines()[2:]]
    for client in ("`anthropic`", "`openai`", "`google-genai`", "`boto3`"):
        assert any(client in row for row in rows), f"README's client table has no row for {client}"


@needs_current_sdks
@pytest.mark.parametrize("doc", doc_params())
def test_doc_block(
    doc: DocBlock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    tree = parse_block(doc)
    check_imports(doc, tree)
    if doc.block.file is not None:
        return  # a file of the docs' pytest project (a conftest.py): the blocks that use it run it
    if defines_tests(tree):
        outcomes: dict[str, BlockOutcome] = request.getfixturevalue("docs_test_outcomes")
        assert_block_passed(doc.id, outcomes.get(doc.id))
        return
    monkeypatch.chdir(tmp_path)
    run_script_block(doc)


@needs_current_sdks
@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.py")), ids=lambda p: f"examples/{p.name}")
def test_example_runs(example: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(example)], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, f"examples/{example.name} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"


# ------------------------------------------------------------------------------------ the harness


MARKDOWN = """\
# Title

```python
a = 1
```

<!-- skip-test: needs a browser -->
```python
raise SystemExit("skipped")
```

<!-- skip-test -->

~~~py title="x.py"
b = 2
~~~

````markdown
```python
not = a block of its own
```
````

1. A list item:

   ```python
   def f():
       return 3
   ```

```console
$ uv run pytest
```
"""


def test_the_harness_finds_fences_as_commonmark_does() -> None:
    blocks = code_blocks(MARKDOWN)
    assert [(b.line, b.language, b.code, b.skip) for b in blocks] == [
        (3, "python", "a = 1\n", None),
        (8, "python", 'raise SystemExit("skipped")\n', "needs a browser"),
        (14, "py", "b = 2\n", "marked <!-- skip-test -->"),
        (18, "markdown", "```python\nnot = a block of its own\n```\n", None),
        (26, "python", "def f():\n    return 3\n", None),
        (31, "console", "$ uv run pytest\n", None),
    ]


def test_an_unclosed_fence_fails_its_test() -> None:
    [block] = code_blocks("text\n```python\nx = 1\n")
    assert block.error == "the ``` fence opened on line 2 is never closed"
    with pytest.raises(AssertionError, match=r"README\.md:2: the ``` fence opened on line 2 is never closed"):
        run_script_block(DocBlock(README, block))


def test_a_failing_block_points_at_its_markdown_line() -> None:
    page = DOCS / "errors.md"
    [block] = code_blocks("intro\n\n```python\nx = 1\nassert x == 2, 'boom'\n```\n")
    with pytest.raises(AssertionError, match="boom") as info:
        run_script_block(DocBlock(page, block))
    frame = info.traceback[-1]
    assert (Path(str(frame.path)), frame.lineno + 1) == (page, 5)


def test_blocks_with_tests_run_in_one_pytest_run_and_each_block_gets_its_own_outcome(tmp_path: Path) -> None:
    page = DOCS / "pytest-plugin.md"
    text = (
        "```python\ndef test_ok():\n    assert 1 + 1 == 2\n```\n\n"
        "```python\ndef test_fine():\n    pass\n\n\ndef test_bad():\n    assert 1 + 1 == 3\n```\n\n"
        "```python\nimport nowhere_to_be_found\n\n\ndef test_never_collected():\n    pass\n```\n"
    )
    ok, bad, broken = (DocBlock(page, block) for block in code_blocks(text))
    outcomes = run_test_blocks([ok, bad, broken], tmp_path, autoload=False)
    assert set(outcomes) == {"docs/pytest-plugin.md:1", "docs/pytest-plugin.md:6", "docs/pytest-plugin.md:15"}

    assert_block_passed(ok.id, outcomes[ok.id])
    assert outcomes[bad.id].passed == 1
    with pytest.raises(AssertionError, match=r"docs/pytest-plugin\.md:6: its tests failed:\ntest_bad: failure") as info:
        assert_block_passed(bad.id, outcomes[bad.id])
    assert "docs/pytest-plugin.md:12: AssertionError" in str(info.value)  # the markdown file's line
    with pytest.raises(
        AssertionError, match=r"(?s)docs/pytest-plugin\.md:15: its tests failed:\n.*error.*nowhere_to_be_found"
    ):
        assert_block_passed(broken.id, outcomes[broken.id])
    with pytest.raises(AssertionError, match=r"README\.md:3: no test of the block passed"):
        assert_block_passed("README.md:3", BlockOutcome())


def test_an_expected_failure_counts_and_an_unexpected_pass_or_a_skip_does_not(tmp_path: Path) -> None:
    page = DOCS / "frameworks" / "index.md"
    text = (
        "```python\nimport pytest\n\n\n@pytest.mark.xfail(strict=True, raises=ZeroDivisionError)\n"
        "def test_known_bug():\n    1 / 0\n```\n\n"
        "```python\nimport pytest\n\n\n@pytest.mark.xfail(strict=True)\ndef test_fixed():\n    pass\n```\n\n"
        "```python\nimport pytest\n\n\ndef test_skipped():\n    pytest.skip('not here')\n```\n"
    )
    known, fixed, skipped = (DocBlock(page, block) for block in code_blocks(text))
    outcomes = run_test_blocks([known, fixed, skipped], tmp_path, autoload=False)
    assert_block_passed(known.id, outcomes[known.id])
    with pytest.raises(AssertionError, match=r"XPASS\(strict\)"):
        assert_block_passed(fixed.id, outcomes[fixed.id])
    with pytest.raises(AssertionError, match="not here"):
        assert_block_passed(skipped.id, outcomes[skipped.id])


def test_a_block_importing_a_missing_package_is_skipped_or_required(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Namespace packages: one with the submodule a block imports (as google.genai), and one that is
    # only a directory (as tests/agents, which is not openai-agents).
    (tmp_path / "ns_with_sub").mkdir()
    (tmp_path / "ns_with_sub" / "sub.py").write_text("", encoding="utf-8")
    (tmp_path / "ns_dir_only").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    [block] = code_blocks(
        "```python\nimport json\nfrom ns_with_sub import sub\nfrom ns_dir_only import Agent\n"
        "from nowhere_to_be_found.x import y\nfrom json import nowhere_either\n```\n"
    )
    doc = DocBlock(DOCS / "frameworks" / "pydantic-ai.md", block)
    tree = parse_block(doc)
    assert missing_imports(tree) == ["ns_dir_only", "nowhere_to_be_found.x"]
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(
        pytest.skip.Exception, match=r"pydantic-ai\.md:1 imports ns_dir_only, nowhere_to_be_found\.x, which"
    ):
        check_imports(doc, tree)
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="WIRESCRIPT_REQUIRE_AGENTS=1 requires it"):
        check_imports(doc, tree)


def test_a_page_of_its_own_group_runs_only_in_that_groups_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    [page] = [path for path in OWN_GROUP if path.endswith("llama-index.md")]
    own = DocBlock(ROOT / page, Block(1, "python", "pass"))
    main = DocBlock(DOCS / "index.md", Block(1, "python", "pass"))
    monkeypatch.delenv(GROUP_ENV, raising=False)
    assert elsewhere(main) is None
    assert "runs in the 'llama-index' group's own environment" in (elsewhere(own) or "")
    monkeypatch.setenv(GROUP_ENV, "llama-index")
    assert elsewhere(own) is None
    assert "runs that group's pages only" in (elsewhere(main) or "")


def test_a_run_that_cannot_report_is_saved_as_its_error_for_every_block_to_fail_on(tmp_path: Path) -> None:
    [block] = code_blocks("```python\ndef test_x(:\n    pass\n```\n")
    saved = tmp_path / "outcomes.json"
    _run_and_save([DocBlock(DOCS / "errors.md", block)], tmp_path / "project", saved)
    result = json.loads(saved.read_text(encoding="utf-8"))
    assert list(result) == [ERROR]
    assert result[ERROR].startswith("SyntaxError: ")
    assert not saved.with_suffix(".partial").exists()  # written whole, then moved into place


def test_a_file_block_is_written_into_the_project_for_the_test_blocks(tmp_path: Path) -> None:
    page = DOCS / "getting-started.md"
    text = (
        "<!-- file: conftest.py -->\n```python\nimport pytest\n\n\n@pytest.fixture\ndef greeting():\n"
        "    return (__import__('pathlib').Path(__file__).parent / 'data' / 'hello.txt').read_text()\n```\n\n"
        "<!-- file: data/hello.txt -->\n```text\nhello\n```\n\n"
        "```python\ndef test_uses_both(greeting):\n    assert greeting == 'hello\\n'\n```\n"
        "<!-- file: ../escape.txt -->\n```text\nnot a file\n```\n"
    )
    conftest, data, uses, escape = (DocBlock(page, block) for block in code_blocks(text))
    assert (conftest.block.file, data.block.file, uses.block.file, escape.block.file) == (
        "conftest.py",
        "data/hello.txt",
        None,
        None,  # a path out of the project is not a file block
    )
    assert runnable_test_blocks([conftest, uses]) == [uses]  # a file block is never a test module
    outcomes = run_test_blocks([uses], tmp_path, autoload=False, files=[conftest, data])
    assert_block_passed(uses.id, outcomes[uses.id])
    assert (tmp_path / "data" / "hello.txt").read_text(encoding="utf-8") == "hello\n"


def test_a_skipped_blocks_reason_names_the_group_that_installs_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    [block] = code_blocks("```python\nimport boto3\nfrom pydantic_ai import Agent\n```\n")
    doc = DocBlock(DOCS / "record.md", block)
    monkeypatch.setattr(sys.modules[__name__], "_find", lambda module: None)  # as if neither were installed
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception) as info:
        check_imports(doc, parse_block(doc))
    assert str(info.value) == (
        "docs/record.md:1 imports boto3, pydantic_ai, which is not installed "
        "(the 'agents' or 'bedrock' dependency groups)"
    )
    assert groups_installing("botocore.session") == ["bedrock"]
    assert groups_installing("agents") == ["agents"]  # openai-agents' import name
    assert groups_installing("strands") == ["frameworks"]  # strands-agents'
    assert groups_installing("nowhere_to_be_found") == []
    [block] = code_blocks("```python\nimport langchain_core.messages\n```\n")
    doc = DocBlock(DOCS / "side-endpoints.md", block)
    with pytest.raises(pytest.skip.Exception, match=r"\(uv sync --all-groups installs every dependency group\)$"):
        check_imports(doc, parse_block(doc))
