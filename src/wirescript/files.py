"""Scripts as files: JSON and YAML, validated by the same models as a script written in Python.

A script file holds either a list of turns, served in arrival order, or a mapping of model name
to a list of turns (one queue per model, `"*"` serving every other model). A turn is written
exactly as in Python: a mapping such as `{"text": "Hi"}` or a bare string. In the mapping form a
top-level `"$schema"` key is editor metadata (it points an editor at the JSON Schema) and is
not a queue, and a top-level `"$side"` key holds what the side endpoints answer (a `SideScript`:
token counts, embeddings, model listings).

Every problem is a `ScriptError` whose message starts with the file name: a file that cannot be
read, a syntax error (with its line and column), a value JSON cannot carry, or a turn that does
not validate (with its index and field). YAML needs PyYAML (`pip install 'wirescript[yaml]'`);
only JSON-compatible YAML is accepted (timestamps stay strings; `!!binary`, `!!set`, `!!omap`
and `!!pairs` are refused), and aliases may not expand a file beyond `MAX_VALUES` values.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import json
import math
import os
import pathlib
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias

from pydantic import TypeAdapter

from . import script as script_module
from . import side as side_module
from ._core.cursor import check_turns
from ._readfile import NotReadable, read_regular
from .errors import ScriptError
from .script import DEFAULT_QUEUE, MAX_DEPTH, Turn, parse_turns, queue_label
from .side import SIDE_KEY, SideScript, parse_side
from .wires import default_wires

if TYPE_CHECKING:
    import yaml

__all__ = [
    "MAX_DEPTH",
    "MAX_SCRIPT_BYTES",
    "MAX_VALUES",
    "LoadedScript",
    "load_script",
    "script_format",
    "script_json_schema",
]

MAX_VALUES = 1_000_000
"""The most values (turns, fields, list items…) a script file may expand to, YAML aliases included."""

MAX_SCRIPT_BYTES = 64 * 1024 * 1024
"""The largest script file read (64 MiB); a larger one, a FIFO or a device is refused as a `ScriptError`."""


LoadedScript: TypeAlias = list[Turn] | dict[str, list[Turn] | SideScript]
"""What `load_script` returns: a list of turns, or per-model queues keyed by model name (and the
`SideScript` under `"$side"`, when the file has one)."""

_SCHEMA_KEY = "$schema"
_SUFFIXES = {".json": "JSON", ".yaml": "YAML", ".yml": "YAML"}


def script_format(path: str | os.PathLike[str]) -> str | None:
    """`"JSON"` or `"YAML"`, as a script file's suffix says (`.json`; `.yaml`, `.yml`), or None for another suffix."""
    return _SUFFIXES.get(pathlib.PurePath(os.fspath(path)).suffix.lower())


def load_script(path: str | os.PathLike[str]) -> LoadedScript:
    """Load and validate a JSON or YAML script file.

    The format is chosen by the suffix: `.json`, or `.yaml`/`.yml` (which needs PyYAML, the
    `wirescript[yaml]` extra). `ScriptTransport` also accepts a `pathlib.Path` and calls this.

    Args:
        path: The script file.

    Returns:
        The validated turns: a list served in arrival order, or a dict of per-model queues.

    Raises:
        ScriptError: The file is missing or unreadable, is not valid JSON/YAML, or a turn is
            malformed. The message starts with the file name and names the line, or the turn's
            index and field.

    """
    name = os.fspath(path)
    fmt = script_format(name)
    if fmt is None:
        suffix = pathlib.PurePath(name).suffix or "(none)"
        raise ScriptError(f"{name}: unknown script file type {suffix}; expected .json, .yaml or .yml")
    text = _read_text(name)
    data = _parse_json(text, name) if fmt == "JSON" else _parse_yaml(text, name)
    _check_values(data, name)
    return _validate(data, name)


def script_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a script file, generated from the turn models.

    Point an editor at it to complete and check script files: `python -m wirescript schema`
    prints it. It accepts both forms, a list of turns and a mapping of model name to turns.
    """
    turns = TypeAdapter(list[Turn | str]).json_schema()
    defs: dict[str, Any] = turns.pop("$defs")
    for name, docs in _field_docstrings(script_module).items():
        for field, doc in docs.items():
            prop = defs.get(name, {}).get("properties", {}).get(field)
            if prop is not None:
                prop.setdefault("description", doc)
    items = turns["items"]
    side = SideScript.model_json_schema()
    side["description"] = (
        "What the side endpoints answer (token counts, embeddings, model listings); they never consume a turn."
    )
    for field, doc in _field_docstrings(side_module).get("SideScript", {}).items():
        side["properties"][field].setdefault("description", doc)
    defs["SideScript"] = side
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "wirescript script",
        "description": (
            "Scripted model turns for wirescript's ScriptTransport: a list of turns served in arrival order, "
            'or a mapping of model name to a list of turns ("*" serves every other model). A turn is an '
            'object such as {"text": "Hi"} or a string (a text-only turn).'
        ),
        "anyOf": [
            {"type": "array", "description": "Turns served in arrival order.", "items": items},
            {
                "type": "object",
                "description": f'One queue of turns per model name; "{DEFAULT_QUEUE}" serves every other model.',
                "properties": {
                    _SCHEMA_KEY: {"type": "string", "description": "The JSON Schema this file follows (for editors)."},
                    SIDE_KEY: {"$ref": "#/$defs/SideScript"},
                },
                "additionalProperties": {"type": "array", "items": items},
            },
        ],
        "$defs": defs,
    }


def _field_docstrings(module: ModuleType) -> dict[str, dict[str, str]]:
    """The attribute docstrings of every class in `module`'s source: `{class: {field: docstring}}`."""
    tree = ast.parse(inspect.getsource(module))
    found: dict[str, dict[str, str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        docs = found.setdefault(node.name, {})
        for statement, following in itertools.pairwise(node.body):
            if (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                docs[statement.target.id] = inspect.cleandoc(following.value.value)
    return found


# ---------------------------------------------------------------------------------------- reading


def _read_text(name: str) -> str:
    try:
        data = read_regular(name, MAX_SCRIPT_BYTES)
    except FileNotFoundError:
        raise ScriptError(f"{name}: no such script file") from None
    except NotReadable as exc:
        if str(exc).startswith("is a directory"):
            raise ScriptError(f"{name}: is a directory, not a script file") from None
        if str(exc).startswith("cannot be read"):
            raise ScriptError(f"{name}: cannot read the script file: {str(exc)[16:-1]}") from None
        raise ScriptError(f"{name}: {exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ScriptError(
            f"{name}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _parse_json(text: str, name: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise ScriptError(f"{name}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except _DuplicateKey as exc:
        raise ScriptError(f"{name}: invalid JSON: duplicate key {exc.key!r} in one object") from None
    except RecursionError:
        raise ScriptError(f"{name}: invalid JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit
        raise ScriptError(f"{name}: invalid JSON: {exc}") from None


def _parse_yaml(text: str, name: str) -> Any:
    try:
        import yaml
    except ImportError:
        raise ScriptError(
            f"{name}: reading YAML scripts needs PyYAML; install the extra: pip install 'wirescript[yaml]'"
        ) from None
    try:
        data = yaml.load(text, Loader=_yaml_loader())  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark is not None else name
        what = ", ".join(part for part in (exc.context, exc.problem) if part) or "malformed"
        raise ScriptError(f"{where}: invalid YAML: {what}") from None
    except yaml.YAMLError as exc:
        raise ScriptError(f"{name}: invalid YAML: {exc}") from None
    except RecursionError:
        raise ScriptError(f"{name}: invalid YAML: nested too deeply") from None
    except Exception as exc:  # PyYAML's constructors fail on some odd input (`!!int` alone: IndexError)
        raise ScriptError(f"{name}: invalid YAML: {type(exc).__name__}: {exc}") from None
    if data is None:  # an empty file, only comments, or an explicit null
        raise ScriptError(
            f"{name}: the file holds no script; expected a list of turns or a mapping of model name to turns"
        )
    return data


@functools.cache
def _yaml_loader() -> type[yaml.SafeLoader]:
    """A SafeLoader that builds only JSON-compatible values and refuses duplicate keys."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue  # a collection as a key: the base class refuses it as unhashable
                key = self.construct_object(key_node)
                if key in seen:
                    raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

        def construct_as_string(self, node: yaml.Node) -> Any:
            return self.construct_scalar(node)  # type: ignore[arg-type]

        def refuse(self, node: yaml.Node) -> Any:
            raise yaml.constructor.ConstructorError(
                None, None, f"the YAML tag {node.tag.rsplit(':', 1)[-1]!r} has no JSON equivalent", node.start_mark
            )

    Loader.add_constructor("tag:yaml.org,2002:timestamp", Loader.construct_as_string)
    for tag in ("binary", "set", "omap", "pairs"):
        Loader.add_constructor(f"tag:yaml.org,2002:{tag}", Loader.refuse)
    return Loader


# ---------------------------------------------------------------------------------------- checking


def _check_values(data: Any, name: str) -> None:
    """Refuse what the models cannot see: too many values (alias bombs), cycles, depth, non-finite floats."""
    budget = MAX_VALUES
    on_path: set[int] = set()
    # (value, depth, location) to visit, or (container, -1, None) to leave it.
    stack: list[tuple[Any, int, Any]] = [(data, 0, None)]
    while stack:
        value, depth, loc = stack.pop()
        if depth < 0:
            on_path.discard(id(value))
            continue
        budget -= 1
        if budget < 0:
            raise ScriptError(
                f"{name}: the script expands to more than {MAX_VALUES:,} values (YAML aliases?); "
                "a script file this large is refused"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ScriptError(f"{name}: {_where(loc)}: {value!r} is not a finite number (JSON has no infinity or NaN)")
        if isinstance(value, (list, dict)):
            if id(value) in on_path:
                raise ScriptError(f"{name}: {_where(loc)}: a YAML alias refers to itself (a recursive structure)")
            if depth >= MAX_DEPTH:
                raise ScriptError(f"{name}: {_where(loc)}: nested more than {MAX_DEPTH} levels deep")
            on_path.add(id(value))
            stack.append((value, -1, None))
            children = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((child, depth + 1, (loc, key)) for key, child in reversed(list(children)))


def _where(loc: Any) -> str:
    """`invalid script[2]: field 'tool.input'`, the way `parse_turns` names a place, from a (parent, key) chain."""
    keys: list[Any] = []
    while loc is not None:
        loc, key = loc
        keys.append(key)
    keys.reverse()
    head = "script"
    if keys and isinstance(keys[0], str):  # per-model queues
        head += f"[{keys.pop(0)!r}]"
    if keys:
        head += f"[{keys.pop(0)}]"
    field = f": field {'.'.join(map(str, keys))!r}" if keys else ""
    return f"invalid {head}{field}"


def _validate(data: Any, name: str) -> LoadedScript:
    loaded = _turns(data, name)
    queues = {DEFAULT_QUEUE: loaded} if isinstance(loaded, list) else loaded
    try:
        check_turns(
            (
                (f"{queue_label(q)}[{i}]", turn)
                for q, turns in queues.items()
                if isinstance(turns, list)
                for i, turn in enumerate(turns)
            ),
            default_wires(),
        )
    except ScriptError as exc:
        raise ScriptError(f"{name}: {exc}") from None
    return loaded


def _turns(data: Any, name: str) -> LoadedScript:
    try:
        if isinstance(data, list):
            return parse_turns(data, "script")
        if isinstance(data, Mapping):
            queues: dict[str, list[Turn] | SideScript] = {}
            for key, turns in data.items():
                if not isinstance(key, str):
                    raise ScriptError(f"script: queue keys are model names (strings), got {type(key).__name__} {key!r}")
                if key == _SCHEMA_KEY:
                    if not isinstance(turns, str):
                        raise ScriptError(f"script: {_SCHEMA_KEY!r} names the JSON Schema (a string), not a queue")
                    continue
                if key == SIDE_KEY:
                    queues[key] = parse_side(turns, f"script[{SIDE_KEY!r}]")
                    continue
                queues[key] = parse_turns(turns, f"script[{key!r}]")
            return queues
    except ScriptError as exc:
        raise ScriptError(f"{name}: {exc}") from None
    raise ScriptError(
        f"{name}: expected a list of turns or a mapping of model name to a list of turns, got {type(data).__name__}"
    )
