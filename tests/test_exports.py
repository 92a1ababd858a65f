"""The public API: `wirescript.__all__`, the lazy `_EXPORTS` table and the version, pinned.

`import wirescript` loads its names on first use (PEP 562): a name must be in `__all__`, in `_EXPORTS`
(where it lives) and in the `TYPE_CHECKING` block (what type checkers see). These tests fail when the
three disagree, or when a listed name does not resolve. (That importing the package loads none of its
modules is pinned in test_plugin.py, with the plugin.) `public_names()` is the one list the other
checks compare against: a check of the documented API reference extends it there.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import inspect

import pytest

import wirescript


def public_names() -> list[str]:
    """The public names: every lazily exported name, plus `__version__`, sorted."""
    return sorted([*wirescript._EXPORTS, "__version__"])


def type_checking_imports() -> dict[str, str]:
    """Each name the `if TYPE_CHECKING:` block of `wirescript/__init__.py` imports, and its module."""
    tree = ast.parse(inspect.getsource(wirescript))
    [block] = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    ]
    imported: dict[str, str] = {}
    for statement in block.body:
        assert isinstance(statement, ast.ImportFrom), ast.dump(statement)
        assert (statement.level, statement.module is not None) == (1, True), ast.dump(statement)
        for alias in statement.names:
            assert alias.asname is None, ast.dump(statement)
            imported[alias.name] = str(statement.module)
    return imported


def test_all_is_the_sorted_public_names() -> None:
    # The order is ruff's (RUF022: constants first, then isort's order), checked by `ruff check`.
    assert sorted(wirescript.__all__) == public_names()
    assert len(set(wirescript.__all__)) == len(wirescript.__all__)


def test_type_checkers_see_each_name_from_the_module_it_is_loaded_from() -> None:
    assert type_checking_imports() == wirescript._EXPORTS


@pytest.mark.parametrize("name", public_names())
def test_each_public_name_resolves_to_the_object_in_its_module(name: str) -> None:
    value = getattr(wirescript, name)
    if name == "__version__":
        assert isinstance(value, str)
        return
    module = importlib.import_module(f"wirescript.{wirescript._EXPORTS[name]}")
    assert value is getattr(module, name)
    if name in TYPE_ALIASES:  # a `Literal[...]` alias belongs to `typing`, wherever it is defined
        return
    assert getattr(value, "__module__", module.__name__).startswith("wirescript.")


TYPE_ALIASES = {"ProblemKind"}


def test_a_wire_of_ones_own_and_the_problem_kinds_are_public_names() -> None:
    from wirescript.recorded import ProblemKind
    from wirescript.wires import Wire

    assert wirescript.Wire is Wire
    assert wirescript.ProblemKind is ProblemKind
    assert {"Wire", "ProblemKind"} <= set(wirescript.__all__)


def test_star_import_gives_exactly_the_public_names() -> None:
    namespace: dict[str, object] = {}
    exec("from wirescript import *", namespace)
    assert sorted(name for name in namespace if name != "__builtins__") == public_names()


def test_dir_lists_every_public_name_and_an_unknown_name_is_an_attribute_error() -> None:
    assert set(public_names()) <= set(dir(wirescript))
    with pytest.raises(AttributeError) as caught:
        wirescript.NoSuchName  # noqa: B018
    assert str(caught.value) == "module 'wirescript' has no attribute 'NoSuchName'"


def test_the_installed_metadata_carries_the_version_from_init() -> None:
    # pyproject's version is dynamic, read by hatch from `__version__`: the two cannot drift apart.
    assert importlib.metadata.version("wirescript") == wirescript.__version__


def test_the_former_name_of_wait_timeout_error_resolves_with_a_deprecation_warning() -> None:
    # `HoldTimeoutError` was the name in 0.1.0: it is no longer a public name of its own (not in
    # `__all__` nor in a star import), but old code still gets the class, warned at its own line.
    from wirescript.errors import WaitTimeoutError

    assert "HoldTimeoutError" not in wirescript.__all__
    with pytest.warns(
        DeprecationWarning, match=r"wirescript\.HoldTimeoutError is deprecated, use wirescript\.WaitTimeoutError"
    ) as caught:
        assert wirescript.HoldTimeoutError is WaitTimeoutError
    with pytest.warns(DeprecationWarning, match="will be removed in 0.3.0"):
        from wirescript.errors import HoldTimeoutError
    assert HoldTimeoutError is WaitTimeoutError
    assert [w.filename for w in caught] == [__file__]  # the user's line, not wirescript's
    # Each use warns: the former name is not cached as a public one.
    with pytest.warns(DeprecationWarning, match="HoldTimeoutError"):
        assert wirescript.HoldTimeoutError is WaitTimeoutError
    with pytest.raises(AttributeError, match=r"module 'wirescript\.errors' has no attribute 'NoSuchError'"):
        wirescript.errors.NoSuchError  # noqa: B018
