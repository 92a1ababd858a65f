"""Writing a recorded script: its YAML (with comments) or JSON text, and the file, atomically.

Pure text functions over `Item`s (a turn's data, the model its request named, the comment above
it), and `write`, which replaces a file so that a reader never sees half of it. `load_script`
reads what these write; `_append` appends to it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import pathlib
import re
import tempfile
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..script import DEFAULT_QUEUE, Turn
from ..side import SIDE_KEY
from ._drift import NOT_IN_COMMENT

__all__ = ["Item", "file_stem", "json_text", "queues", "turn_data", "write", "yaml_item", "yaml_text"]


class Item(NamedTuple):
    """One recorded turn as the file writes it."""

    model: str | None
    """The model its request named: the queue it goes under when several models were called."""
    summary: str
    """The comment above it (YAML only): the request it answered."""
    data: Any
    """The turn's data (`turn_data`)."""


def turn_data(turn: Turn) -> Any:
    """A turn as the file writes it: only the fields it sets; a text-only turn as its text."""
    data = turn.model_dump(mode="json", exclude_defaults=True)
    return data["text"] if list(data) == ["text"] else data


def queues(items: Sequence[Item]) -> dict[str, list[Item]] | None:
    """The items by model when more than one model was called (an unnamed one under `"*"`), else None."""
    queues: dict[str, list[Item]] = {}
    for item in items:
        queues.setdefault(item.model or DEFAULT_QUEUE, []).append(item)
    return queues if len(queues) > 1 else None


def json_text(items: Sequence[Item], side: dict[str, Any] | None = None) -> str:
    """The JSON script of `items` (and the side answers as `"$side"`)."""
    grouped = queues(items)
    if side is not None and grouped is None:  # a plain list has no room for "$side": the default queue
        grouped = {DEFAULT_QUEUE: list(items)} if items else {}
    data: Any
    if grouped is None:
        data = [item.data for item in items]
    else:
        data = {model: [item.data for item in group] for model, group in grouped.items()}
        if side is not None:
            data[SIDE_KEY] = side
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def yaml_text(items: Sequence[Item], header: Sequence[str], side: dict[str, Any] | None = None) -> str:
    """The YAML script of `items`: the header comment, each turn after its summary, then `"$side"`."""
    lines = [f"# {NOT_IN_COMMENT.sub('?', line)}" for line in header]
    grouped = queues(items)
    if side is not None and grouped is None:  # a plain list has no room for "$side": the default queue serves all
        grouped = {DEFAULT_QUEUE: list(items)} if items else {}
    if grouped is None:
        if not items:
            return "\n".join([*lines, "[]", ""])
        for item in items:
            lines.extend(yaml_item(item, ""))
    else:
        for model, group in grouped.items():
            lines.append(f"{json.dumps(model, ensure_ascii=False)}:")
            for item in group:
                lines.extend(yaml_item(item, "  "))
    if side is not None:
        lines.extend(_yaml_side(side))
    return "\n".join([*lines, ""])


def _yaml_side(side: dict[str, Any]) -> list[str]:
    import yaml

    dumped = yaml.dump(side, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100, default_flow_style=None)
    return [
        "# What the side endpoints answered: token counts in arrival order, a vector per embedded text,",
        "# the model ids listed.",
        f"{json.dumps(SIDE_KEY)}:",
        *(f"  {line}" for line in dumped.rstrip("\n").split("\n")),
    ]


def yaml_item(item: Item, indent: str) -> list[str]:
    """The lines of one turn: its summary comment, then the turn as a one-item YAML list."""
    lines = _plain_item(item.data)
    if lines is None:
        import yaml

        dumped = yaml.dump([item.data], Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100)
        lines = dumped.rstrip("\n").split("\n")
    return [f"{indent}# {item.summary}", *(f"{indent}{line}" for line in lines)]


_WIDTH = 100
"""The line width PyYAML is given: a plain scalar that would reach it may be folded, so it is PyYAML's to write."""
_PLAIN_TEXT = re.compile(r"[A-Za-z0-9_(][A-Za-z0-9_()'/.+=;<>$^~ -]*")
"""A string PyYAML writes as it is, unquoted, when it is not read back as another type: ASCII letters, digits and
punctuation that is no YAML indicator (no `:`, `#`, `,`, `?`, brackets, quotes, `&*!|>%@` or backslash), not
starting with `-`, no line break."""


class _NotPlain(Exception):
    """A value `_plain_item` leaves to PyYAML."""


def _plain_item(data: Any) -> list[str] | None:
    """The lines PyYAML writes for `[data]`, for a turn of plain values only (None: anything else).

    Most turns hold short texts, names, ids and counts; PyYAML's pure-Python emitter spends a
    hundred microseconds on each. What this writes is exactly what `yaml.dump` writes for them
    (a property test compares the two); a float, a quoted or folded string, a non-ASCII one, a
    list in a list, or a key that is no plain string is left to PyYAML.
    """
    lines: list[str] = []
    try:
        if isinstance(data, dict) and data:
            _mapping(data, "- ", "  ", lines)
        else:
            lines.append(f"- {_scalar(data, 2)}")
    except _NotPlain:
        return None
    return lines


def _mapping(data: dict[Any, Any], first: str, indent: str, lines: list[str]) -> None:
    """The keys of a non-empty mapping, the first after `first`, the others after `indent`."""
    lead = first
    for key, value in data.items():
        name = _plain_text(key, len(lead))
        if isinstance(value, dict) and value:
            lines.append(f"{lead}{name}:")
            _mapping(value, indent + "  ", indent + "  ", lines)
        elif isinstance(value, list) and value:
            lines.append(f"{lead}{name}:")
            for element in value:  # a list in a mapping is not indented
                if isinstance(element, dict) and element:
                    _mapping(element, f"{indent}- ", indent + "  ", lines)
                elif isinstance(element, list) and element:
                    raise _NotPlain
                else:
                    lines.append(f"{indent}- {_scalar(element, len(indent) + 2)}")
        else:
            lines.append(f"{lead}{name}: {_scalar(value, len(lead) + len(name) + 2)}")
        lead = indent


def _scalar(value: Any, column: int) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return str(value)
    if isinstance(value, str):
        return _plain_text(value, column)
    if value == {} and isinstance(value, dict):
        return "{}"
    if value == [] and isinstance(value, list):
        return "[]"
    raise _NotPlain


def _plain_text(value: Any, column: int) -> str:
    """`value` as PyYAML writes a plain string starting at `column`, or `_NotPlain`."""
    if type(value) is not str or column + len(value) >= _WIDTH or not _PLAIN_TEXT.fullmatch(value):
        raise _NotPlain
    if value[-1] == " " or _resolved(value) != _STR:
        raise _NotPlain
    return value


_STR = "tag:yaml.org,2002:str"


@functools.lru_cache(maxsize=4096)
def _resolved(value: str) -> str:
    """The tag PyYAML reads a plain `value` as (`yes` is a bool, `12` an int, `~` null, `2026-12-01` a date)."""
    import yaml

    return str(_resolver().resolve(yaml.ScalarNode, value, (True, False)))


@functools.cache
def _resolver() -> Any:
    """The resolver of the dumper's (`yaml.SafeDumper` resolves as `yaml.resolver.Resolver`)."""
    import yaml

    assert issubclass(_dumper(), yaml.resolver.Resolver)
    return yaml.resolver.Resolver()


@functools.cache
def _dumper() -> Any:
    """PyYAML's safe dumper, writing text of several lines as a literal block (`|`), as a person would.

    Made once: a dumper class holds no state of its own (each `yaml.dump` makes its own instance).
    """
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return Dumper


def write(path: pathlib.Path, text: str) -> None:
    """Replace `path` with `text` atomically: a reader sees the old file or the new one, never half of it.

    The text is written to a file of its own next to `path` first, so two writers of one path (two
    recorders, two processes) never take each other's: the last one to finish wins, whole.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_PLAIN = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*(?:\[[A-Za-z0-9_.-]+\])?")
"""A name `file_stem` keeps as it is: a test's name, with its parameters' id in brackets."""
_LONGEST = 120
"""The longest file stem written (a file name may have 255 bytes; a test id may be far longer)."""


def file_stem(name: str) -> str:
    """A file name (without suffix) for a test's recording, `name` being the test's name or the one given.

    Characters other than letters, digits, `_`, `.` and `-` become `_`; a name that loses more than
    its parametrization brackets that way (`a/b`, `a b`, `a:b` all become `a_b`) gets a short hash
    of itself, and so does one longer than 120 characters, so that two names never share a file.
    """
    safe = _UNSAFE.sub("_", name).strip("_.") or "script"
    if _PLAIN.fullmatch(name) and len(safe) <= _LONGEST:
        return safe
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe[: _LONGEST - 9]}-{digest}"
