"""Appending turns to a recorded YAML script without touching a byte of what is already there.

`new_episodes` replays a script and records what runs past its end. The new turns go at the end
of the queue that would serve them (the plain list; the model's queue, else `"*"`; else a new
queue at the end of the file), so the file's comments and hand edits stay as they were. Pure: text
in, text out; PyYAML's composer gives the positions.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..errors import UsageError
from ..script import DEFAULT_QUEUE
from ..side import SIDE_KEY

__all__ = ["append_json", "append_yaml", "check_appendable", "queue_for"]

_META = (SIDE_KEY, "$schema")
"""Top-level keys of a mapping script that are not queues."""

DEFAULT = DEFAULT_QUEUE


def queue_for(model: str | None, queues: Sequence[str]) -> str:
    """The queue a new turn goes to: the one that serves its model now (its own, else `"*"`), else a new one."""
    if model in queues:
        assert model is not None
        return model
    return DEFAULT if DEFAULT in queues else (model or DEFAULT)


def append_json(text: str, new: Sequence[tuple[str | None, Any]], where: str) -> str:
    """A JSON script with each new turn appended to the queue that serves its model.

    JSON has no comments to keep: the file's own values are kept as they are (hand edits
    included) and written again with two-space indentation.

    Raises:
        UsageError: The text is not a JSON list or object of turns.

    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{where}: cannot append to it, it is not JSON ({exc})") from None
    if isinstance(data, list):
        data.extend(turn for _, turn in new)
    elif isinstance(data, dict):
        for model, turn in new:
            queues = [k for k, v in data.items() if k not in _META and isinstance(v, list)]
            data.setdefault(queue_for(model, queues), []).append(turn)
    else:
        raise UsageError(f"{where}: cannot append turns to it: it is not a list or object of turns")
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _root(text: str, where: str) -> Any:
    import yaml

    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise UsageError(f"{where}: cannot append to it, it is not YAML ({exc})") from None


def _queues(root: Any) -> dict[str, Any]:
    """The queue sequences of a mapping root, by key."""
    import yaml

    return {
        key.value: value
        for key, value in root.value
        if isinstance(key, yaml.ScalarNode) and key.value not in _META and isinstance(value, yaml.SequenceNode)
    }


def check_appendable(text: str, where: str) -> None:
    """Raise when new turns cannot be appended to this script text as block items.

    Appendable: a block list of turns, or a block mapping of queues that are block lists; an
    empty flow list (`[]`, what a recording without turns writes) too, which the new items replace.

    Raises:
        UsageError: Naming the list (and its line) that is written as a flow collection.

    """
    import yaml

    root = _root(text, where)
    if root is None:
        return
    if isinstance(root, yaml.SequenceNode):
        _block(root, "the script", where)
    elif isinstance(root, yaml.MappingNode):
        if root.flow_style:
            raise UsageError(
                f"{where}: the script (line {root.start_mark.line + 1}) is a flow mapping ({{...}}); new_episodes "
                "appends turns to its queues as block items: write it one key a line, or record afresh "
                "(--wirescript-record=all)"
            )
        for key, queue in _queues(root).items():
            _block(queue, f"script[{key!r}]", where)
    else:
        raise UsageError(f"{where}: cannot append turns to it: it is not a list or mapping of turns")


def _block(seq: Any, label: str, where: str) -> None:
    if seq.flow_style and seq.value:
        raise UsageError(
            f"{where}: {label} (line {seq.start_mark.line + 1}) is a flow list ([...]); new_episodes appends turns "
            "to it as block items: write it one '- ' item a line, or record afresh (--wirescript-record=all)"
        )


def _content_end(node: Any) -> Any:
    """The mark just after a node's last character of content.

    A block collection's own end mark lies past the comments that follow it, so its last scalar's is used.
    """
    import yaml

    while isinstance(node, (yaml.SequenceNode, yaml.MappingNode)) and not node.flow_style and node.value:
        node = node.value[-1][1] if isinstance(node, yaml.MappingNode) else node.value[-1]
    return node.end_mark


def _after_line(text: str, mark: Any) -> int:
    """The index of the start of the line after `mark` (the end of the text when it is on the last line)."""
    if mark.column == 0:  # a block scalar ends with its line break, at the start of the next line
        return int(mark.index)
    newline = text.find("\n", mark.index)
    return len(text) if newline < 0 else newline + 1


def append_yaml(text: str, new: Sequence[tuple[str | None, list[str]]], note: str, where: str) -> str:
    """`text` with each new turn appended to the queue that serves its model, all else unchanged.

    Args:
        text: The recorded YAML script (`check_appendable` passed).
        new: Each new turn: the model its request named, and its lines (summary comment, then the
            `- ` item) without indentation.
        note: A comment line (without `# `) written before each run of appended turns.
        where: The file, for messages.

    Returns:
        The new text. Nothing of `text` is removed or changed, except an empty flow list (`[]`)
        that the new items replace.

    """
    import yaml

    if not new:
        return text
    eol = "\r\n" if "\r\n" in text else "\n"
    root = _root(text, where)
    # (start, end) of the span replaced (start == end: an insertion) -> indent, lines
    edits: dict[tuple[int, int], tuple[str, list[list[str]]]] = {}
    tail: dict[str, list[list[str]]] = {}  # queues the file does not have yet, added at its end

    def at_end() -> tuple[int, int]:
        return (len(text), len(text))

    if root is None or isinstance(root, yaml.SequenceNode):
        if root is not None and root.flow_style:  # `[]`
            span = (int(root.start_mark.index), int(root.end_mark.index))
            indent = " " * root.start_mark.column
        else:
            span, indent = at_end(), ""
        edits[span] = (indent, [lines for _, lines in new])
    else:
        queues = _queues(root)
        key_column = root.value[0][0].start_mark.column if root.value else 0
        for model, lines in new:
            target = queue_for(model, [*queues, *tail])
            seq = queues.get(target)
            if seq is None:
                tail.setdefault(target, []).append(lines)
                continue
            if seq.flow_style:  # `"m": []`
                span = (int(seq.start_mark.index), int(seq.end_mark.index))
                indent = " " * (key_column + 2)
            else:
                position = _after_line(text, _content_end(seq))
                span, indent = (position, position), " " * seq.start_mark.column
            edits.setdefault(span, (indent, []))[1].append(lines)

    def block(indent: str, items: list[list[str]]) -> list[str]:
        return [f"{indent}# {note}", *(f"{indent}{line}" if line else line for lines in items for line in lines)]

    out = text
    for (start, end), (indent, items) in sorted(edits.items(), reverse=True):
        lines = block(indent, items)
        if start != end:  # an empty flow list, replaced by block items on the lines below its key
            own_line = start == 0 or out[start - 1] == "\n"  # a root `[]`; else after its key, as `"m": []`
            head = out[:start] if own_line else out[:start].rstrip(" ") + eol  # no space left after the key's colon
            out = head + eol.join(lines) + out[end:]
        else:
            lead = "" if start == 0 or out[start - 1] == "\n" else eol
            out = out[:start] + lead + eol.join(lines) + eol + out[start:]
    if tail:
        lead = "" if not out or out.endswith("\n") else eol
        added = []
        for model, items in tail.items():
            added.append(f"{' ' * key_column}{json.dumps(model, ensure_ascii=False)}:")
            added.extend(block(" " * (key_column + 2), items))
        out = out + lead + eol.join(added) + eol
    return out
