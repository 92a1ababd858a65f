"""A recorded turn's YAML: the lines record mode writes itself for plain values are the lines PyYAML writes.

`_files._plain_item` writes the turns that hold only plain values (short ASCII texts, names, ids,
counts) without PyYAML's emitter, and leaves every other turn to it. Here any JSON value, with
strings drawn from YAML's indicators, keywords, numbers, spaces and non-ASCII text, is written
both ways: wherever the short path writes, it writes PyYAML's bytes.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support import SAMPLE_TURNS, examples
from wirescript.recording._files import Item, _dumper, _plain_item, yaml_item
from wirescript.script import parse_turn

yaml = pytest.importorskip("yaml")

_WORDS = [
    "",
    " ",
    "a",
    "text",
    "yes",
    "No",
    "on",
    "null",
    "Null",
    "~",
    "true",
    "=",
    "<<",
    "12",
    "-3",
    "0x1F",
    "0o7",
    "1_000",
    "1e3",
    "1.5",
    ".inf",
    ".NaN",
    "2026-12-01",
    "2026-12-01 09:00:00",
    "12:30:00",
    "- a",
    "-",
    "a: b",
    "a:b",
    "a #b",
    "#a",
    "?",
    "? a",
    "a?",
    "[a]",
    "{a}",
    "a,b",
    "'a'",
    "it's",
    '"a"',
    "&a",
    "*a",
    "!a",
    "|",
    ">",
    "%a",
    "@a",
    "`a",
    "a\\b",
    "a  b",
    " a",
    "a ",
    "a\nb",
    "a\tb",
    "Zürich",
    "☃",
    "\U0001f327",
    "\x07",
    "\x85",
    "sk-ant-api03-XYZ",
    "toolu_0000_0",
    "call_fixed",
    "x" * 99,
    "word " * 25,
    "word " * 24 + "end",
    "a" * 90 + " b",
    "a/b.c;d<e>f$g^h+i=j(k)",
    "(a)",
    "a-",
    "_a",
]
_TEXT = st.one_of(st.sampled_from(_WORDS), st.text(max_size=12), st.text("ab -:#'", max_size=8))
_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=12,
)


def _pyyaml(data: Any) -> list[str]:
    dumped = yaml.dump([data], Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100)
    return str(dumped).rstrip("\n").split("\n")


@pytest.mark.parametrize("word", _WORDS)
def test_each_kind_of_string_is_written_as_pyyaml_writes_it(word: str) -> None:
    """As a text, a key, a nested value and a list element, at several columns."""
    for data in (
        word,
        {"text": word},
        {word: 1},
        {"tool": {"name": "get", "input": {"a": {word: word}}}},
        {"tools": [{"input": {"k": [word, {"x": word}]}}]},
        {"text": [word]},
    ):
        lines = _plain_item(data)
        if lines is not None:
            assert lines == _pyyaml(data), data


@settings(max_examples=examples(400))
@given(_JSON)
def test_what_record_mode_writes_itself_is_what_pyyaml_writes(data: Any) -> None:
    lines = _plain_item(data)
    if lines is not None:
        assert lines == _pyyaml(data)


@settings(max_examples=examples(200))
@given(st.dictionaries(st.sampled_from(["text", "name", "id", "a b", "k-1"]), _JSON, min_size=1, max_size=5))
def test_a_turn_of_any_values_is_written_as_pyyaml_writes_it(data: dict[str, Any]) -> None:
    item = Item("m", "requests[0] POST /v1/messages", data)
    assert yaml_item(item, "  ") == ["  # requests[0] POST /v1/messages", *(f"  {line}" for line in _pyyaml(data))]


def test_the_common_turns_take_the_short_path() -> None:
    """Not a path no turn takes: texts, tool calls with their ids and inputs, usage, stop reasons, errors."""
    turns = [
        *SAMPLE_TURNS.values(),
        {"text": "Hello.", "usage": {"input_tokens": 10, "output_tokens": 2}, "stop_reason": "max_tokens"},
        {"tools": [{"name": "get", "input": {"city": "Paris", "n": 3}, "id": "toolu_0000_0"}], "thinking": "Hm."},
        {"error": {"status": 429, "type": "rate_limit_error", "message": "slow down"}},
    ]
    taken = []
    for turn in turns:
        data = parse_turn(turn).model_dump(mode="json", exclude_defaults=True)
        lines = _plain_item(data)
        if lines is not None:
            assert lines == _pyyaml(data)
            taken.append(turn)
    assert len(taken) >= len(turns) - 3, [turn for turn in turns if turn not in taken]
