"""A script of plain turns (text, one tool call) is built without validation: the same turns validation makes.

`parse_turns` takes a list whose every turn is plain (`wirescript.script._plain`) straight to its
`Turn`s; any other list is validated whole, as before. So the shortcut must accept only what
validation accepts, and make exactly what validation makes: the same fields, the same fields set
(what `model_dump(exclude_unset=True)` reads), nested models alike, a copy of each tool input.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from wirescript.errors import ScriptError
from wirescript.script import Turn, _all_encodable, _plain, _turns, parse_turns

_CHARS = st.sampled_from(["a", "Z", " ", "é", "😀", "中", "\x00", "\ud800", "\udfff", "'"])
_TEXT = st.text(_CHARS, max_size=4)


class _Text(str):
    """A str subclass: validation makes a plain str of it; the shortcut leaves it to validation."""


_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    _TEXT,
    st.builds(_Text, _TEXT),
    st.just(b"x"),
    st.just(object()),
)
_JSONISH = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.one_of(_TEXT, st.integers(0, 3), st.builds(_Text, _TEXT)), inner, max_size=3),
    ),
    max_leaves=6,
)
_INPUT = st.one_of(
    _JSONISH,
    st.dictionaries(_TEXT, st.one_of(_JSONISH, st.builds(lambda: 10**5000)), max_size=3),  # too long for JSON
)
_SMALL_CALL = st.dictionaries(
    st.sampled_from(["name", "input", "id", "arguments"]), st.one_of(_TEXT, _JSONISH), max_size=3
)
_LIKELY_CALL = st.fixed_dictionaries(
    {"name": st.sampled_from(["save", "f", "é"])},
    optional={"input": st.dictionaries(st.sampled_from(["a", "b"]), _INPUT, max_size=2), "id": _TEXT},
)
"""A call whose name is good: whether it is plain rests on its input and id."""
_CALL = (
    _LIKELY_CALL
    | _SMALL_CALL
    | st.builds(
        lambda call, given: {**call, "input": given},
        st.dictionaries(st.sampled_from(["name", "id"]), st.one_of(_TEXT, _JSONISH), max_size=2),
        _INPUT,
    )
)
_TURN = st.one_of(
    st.dictionaries(
        st.sampled_from(["text", "tool", "tools", "thinking", "stop_reason", "bogus"]),
        st.one_of(_TEXT, _SMALL_CALL, st.lists(_SMALL_CALL, max_size=2), _JSONISH),
        max_size=3,
    ),
    st.builds(lambda text: {"text": text}, _TEXT),
    st.builds(lambda call: {"tool": call}, _CALL),
    st.builds(lambda text, call: {"text": text, "tool": call}, _TEXT, _CALL),
)


def _same(made: Any, validated: Any) -> None:
    """`made` is what validation made: the same class, fields, fields set and nested models, recursively."""
    assert type(made) is type(validated)
    if isinstance(validated, BaseModel):
        assert made.model_fields_set == validated.model_fields_set
        assert made.__pydantic_extra__ == validated.__pydantic_extra__
        assert made.__pydantic_private__ == validated.__pydantic_private__
        assert list(vars(made)) == list(vars(validated))
        for name, value in vars(validated).items():
            _same(vars(made)[name], value)
    elif isinstance(validated, dict):
        assert [type(key) for key in made] == [type(key) for key in validated]
        assert list(made) == list(validated)
        for key, value in validated.items():
            _same(made[key], value)
    else:
        assert made == validated or (made != made and validated != validated)  # NaN is no value's equal


@settings(max_examples=600, deadline=None)
@given(st.lists(_TURN, min_size=1, max_size=3))
def test_a_plain_turn_is_one_validation_accepts_and_the_shortcut_makes_alike(items: list[Any]) -> None:
    shortcut = _all_encodable(items) and all(map(_plain, items))
    try:
        validated = _turns().validate_python(items)
    except ValidationError:
        assert not shortcut, "the shortcut accepted a turn validation refuses"
        with pytest.raises(ScriptError):
            parse_turns(items)
        return
    made = parse_turns(items)
    assert made == validated
    for mine, theirs, given_item in zip(made, validated, items, strict=True):
        _same(mine, theirs)
        if shortcut and mine.tool is not None and "input" in given_item["tool"]:
            assert mine.tool.input is not given_item["tool"]["input"]  # a copy, as validation's


def test_the_shortcut_takes_the_common_turns_and_nothing_else() -> None:
    assert _plain({"text": "Hi"})
    assert _plain({"tool": {"name": "save", "input": {"path": "a.md", "n": [1, 2.5, None]}, "id": "call_1"}})
    assert _plain({"text": "", "tool": {"name": "save"}})
    assert _plain(Turn(text="built"))
    for other in (
        {"text": None},  # valid, but left to validation
        {"text": _Text("x")},
        {"text": "x", "stop_reason": "end_turn"},
        {"tool": None},
        {"tool": {"name": ""}},
        {"tool": {"name": "f", "id": ""}},
        {"tool": {"name": "f", "id": None}},
        {"tool": {"name": "f", "input": {1: "x"}}},
        {"tool": {"name": "f", "input": {"x": float("nan")}}},
        {"tool": {"name": "f", "input": {"x": {1, 2}}}},
        {"tool": {"name": "f", "input": [1]}},
        {"tool": {"name": "f", "arguments": {}}},
    ):
        assert not _plain(other), other


def test_a_bad_turn_beside_plain_ones_fails_as_before() -> None:
    with pytest.raises(ScriptError, match=r"^invalid script\[1\]: field 'tool.name': String should have at least 1"):
        parse_turns([{"text": "fine"}, {"tool": {"name": ""}}])
    with pytest.raises(ScriptError, match=r"^invalid script\[1\]: field 'text' holds the lone surrogate"):
        parse_turns([{"text": "fine"}, {"text": "\ud800"}])


def test_turns_made_by_the_shortcut_work_as_models_before_any_validation() -> None:
    """In a fresh interpreter no model is built yet: dumping, copying and comparing the turns build what they need."""
    code = """
from wirescript.script import Turn, parse_turns
turns = parse_turns([{"text": "Hi"}, {"tool": {"name": "save", "input": {"path": "a"}}}])
assert not Turn.__pydantic_complete__
assert turns[0].model_dump(exclude_unset=True) == {"text": "Hi"}
assert turns[1].model_dump(exclude_unset=True) == {"tool": {"name": "save", "input": {"path": "a"}}}
assert turns[0] == Turn(text="Hi") and hash(turns[0]) == hash(Turn(text="Hi"))
assert turns[1].model_copy(update={"text": "x"}).text == "x"
assert turns[1].tool_calls[0].input == {"path": "a"}
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr
