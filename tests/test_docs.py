"""The documentation runs: every ```python block of README.md and every examples/*.py.

Blocks are collected by parsing the README at test time, one test per block with the id
`README.md:<line of the opening fence>`. Each block runs in a fresh namespace as `__main__`, in a
temporary working directory, with its line numbers kept, so a traceback points into the README.
A block that defines `test_*` functions is a pytest example: it is written to a temporary file and
run by pytest in a subprocess, and must pass. A block preceded by the HTML comment
`<!-- skip-test -->` (or `<!-- skip-test: reason -->`) on the line before is skipped, visibly.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from _support import ANTHROPIC_MAJOR

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
EXAMPLES = ROOT / "examples"

# The documentation is written for the current SDK majors on httpx2 (anthropic >= 1, openai >= 3).
CURRENT_SDKS = importlib.util.find_spec("httpx2") is not None and ANTHROPIC_MAJOR >= 1
needs_current_sdks = pytest.mark.skipif(
    not CURRENT_SDKS, reason="the documentation targets anthropic >= 1 and openai >= 3 on httpx2"
)

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*)$")
_SKIP = re.compile(r"^\s*<!--\s*skip-test(?:\s*:\s*(?P<reason>.*?))?\s*-->\s*$")
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
                error=None if end is not None else f"the {fence} fence opened on line {i + 1} is never closed",
            )
        )
        i = (end if end is not None else len(lines)) + 1
    return blocks


def readme_params() -> list[object]:
    if not README.exists():
        return []
    params: list[object] = []
    for block in code_blocks(README.read_text(encoding="utf-8")):
        if block.language not in _PYTHON:
            continue
        marks = [pytest.mark.skip(reason=block.skip)] if block.skip else []
        params.append(pytest.param(block, id=f"README.md:{block.line}", marks=marks))
    return params


def defines_tests(tree: ast.Module) -> bool:
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.name.startswith(("test_", "Test"))
        for node in tree.body
    )


def run_block(block: Block, path: Path, tmp_path: Path, *, autoload: bool = True) -> None:
    """Run one block: exec it as a script, or run it with pytest when it defines tests.

    The pytest run loads every installed plugin, as the reader's would; `autoload=False` (for the
    harness's own tests) skips them, which starts several times faster.
    """
    assert block.error is None, f"{path.name}:{block.line}: {block.error}"
    # Pad with blank lines so that the code keeps its line numbers in tracebacks.
    source = "\n" * block.line + block.code
    tree = ast.parse(source, filename=str(path))
    if not defines_tests(tree):
        exec(compile(tree, str(path), "exec"), {"__name__": "__main__", "__file__": str(path)})
        return
    test_file = tmp_path / f"test_{path.stem.lower()}_{block.line}.py"
    test_file.write_text(block.code, encoding="utf-8")
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)  # the outer run's options (e.g. xdist's -n) are not this run's
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", test_file.name],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{path.name}:{block.line}: its tests failed:\n{done.stdout}\n{done.stderr}"
    assert re.search(r"\b\d+ passed\b", done.stdout), done.stdout


def test_the_readme_has_python_examples() -> None:
    assert README.exists(), "README.md is missing"
    assert readme_params(), "README.md has no ```python block: the docs test would check nothing"


@needs_current_sdks
@pytest.mark.parametrize("block", readme_params())
def test_readme_block(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    run_block(block, README, tmp_path)


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


def test_an_unclosed_fence_fails_its_test(tmp_path: Path) -> None:
    [block] = code_blocks("text\n```python\nx = 1\n")
    assert block.error == "the ``` fence opened on line 2 is never closed"
    with pytest.raises(AssertionError, match=r"README\.md:2: the ``` fence opened on line 2 is never closed"):
        run_block(block, README, tmp_path)


def test_a_failing_block_points_at_its_readme_line(tmp_path: Path) -> None:
    [block] = code_blocks("intro\n\n```python\nx = 1\nassert x == 2, 'boom'\n```\n")
    with pytest.raises(AssertionError, match="boom") as info:
        run_block(block, README, tmp_path)
    frame = info.traceback[-1]
    assert (Path(str(frame.path)).name, frame.lineno + 1) == ("README.md", 5)


def test_a_block_with_tests_is_run_by_pytest_and_must_pass(tmp_path: Path) -> None:
    passing = Block(line=1, language="python", code="def test_ok():\n    assert 1 + 1 == 2\n")
    run_block(passing, README, tmp_path, autoload=False)
    failing = Block(line=9, language="python", code="def test_bad():\n    assert 1 + 1 == 3\n")
    with pytest.raises(AssertionError, match=r"README\.md:9: its tests failed:\n"):
        run_block(failing, README, tmp_path, autoload=False)
