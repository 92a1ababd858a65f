"""Scripts as files: JSON and YAML, the same models, errors that name the file, the line or the turn."""

from __future__ import annotations

import json
import string
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support import anthropic_client, examples
from wirescript import ScriptError, ScriptTransport, ToolCall, Turn, load_script, script_json_schema
from wirescript.files import MAX_DEPTH

LIST_JSON = """[
  {"text": "Looking it up."},
  {"tool": {"name": "get_weather", "input": {"city": "Paris"}}},
  "It is sunny."
]"""

LIST_YAML = """\
# a comment
- text: Looking it up.
- tool:
    name: get_weather
    input: {city: Paris}
- It is sunny.
"""

EXPECTED = [
    Turn(text="Looking it up."),
    Turn(tool=ToolCall(name="get_weather", input={"city": "Paris"})),
    Turn(text="It is sunny."),
]


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("name", "text"), [("turns.json", LIST_JSON), ("turns.yaml", LIST_YAML), ("t.yml", LIST_YAML)])
def test_a_list_of_turns_loads_as_the_same_turns_as_in_python(tmp_path: Path, name: str, text: str) -> None:
    assert load_script(write(tmp_path, name, text)) == EXPECTED
    assert load_script(str(tmp_path / name)) == EXPECTED


def test_a_mapping_is_one_queue_per_model_and_schema_key_is_metadata(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "queues.yaml",
        '"$schema": ./script.schema.json\nclaude-big: [Big answer.]\n"*": [{text: Small answer.}, Second.]\n',
    )
    assert load_script(path) == {
        "claude-big": [Turn(text="Big answer.")],
        "*": [Turn(text="Small answer."), Turn(text="Second.")],
    }


def test_a_loaded_script_drives_the_real_sdk_per_model(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "queues.json",
        json.dumps(
            {
                "claude-big": [{"tool": {"name": "get_weather", "input": {"city": "Paris"}, "id": "toolu_1"}}],
                "*": ["Small answer."],
            }
        ),
    )
    stub = ScriptTransport(load_script(path))
    client = anthropic_client(stub)
    user = [{"role": "user", "content": "Hi"}]
    small = client.messages.create(model="claude-small", max_tokens=64, messages=user)
    tools = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    big = client.messages.create(model="claude-big", max_tokens=64, messages=user, tools=tools)
    assert [b.text for b in small.content if b.type == "text"] == ["Small answer."]
    assert [(b.name, b.input, b.id) for b in big.content if b.type == "tool_use"] == [
        ("get_weather", {"city": "Paris"}, "toolu_1")
    ]
    assert [(r.model, r.queue, r.turn_index) for r in stub.requests] == [
        ("claude-small", "*", 0),
        ("claude-big", "claude-big", 0),
    ]
    stub.check()


def test_yaml_dates_stay_strings_so_every_value_can_be_sent_as_json(tmp_path: Path) -> None:
    path = write(tmp_path, "t.yaml", "- tool: {name: book, input: {day: 2026-01-31, at: 2026-01-31 10:00:00}}\n")
    assert load_script(path) == [
        Turn(tool=ToolCall(name="book", input={"day": "2026-01-31", "at": "2026-01-31 10:00:00"}))
    ]


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    assert load_script(write(tmp_path, "t.json", "\ufeff" + LIST_JSON)) == EXPECTED


def test_empty_lists_are_scripts_that_serve_nothing(tmp_path: Path) -> None:
    assert load_script(write(tmp_path, "t.json", "[]")) == []
    assert load_script(write(tmp_path, "t.yaml", "{}")) == {}


BOMB = "\n".join(
    [f"a0: &a0 [{', '.join(['lol'] * 10)}]"] + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
)

ERRORS: list[tuple[str, str | bytes, str]] = [
    (
        "turns.yaml",
        "- text: a\n- text: b\n- tool: {name: f, input: [1]}\n",
        "turns.yaml: invalid script[2]: field 'tool.input': Input should be a valid dictionary, got list [1]",
    ),
    (
        "turns.json",
        '[{"text": "a"}, {"tool": {"name": "f", "inptu": {}}}]',
        (
            "turns.json: invalid script[1]: unknown field 'tool.inptu' (expected one of: name, input, id); "
            "did you mean 'input'?"
        ),
    ),
    (
        "turns.json",
        '{"gpt-x": [{"text": 1}]}',
        "turns.json: invalid script['gpt-x'][0]: field 'text': Input should be a valid string, got int 1",
    ),
    ("turns.json", '{"gpt-x": "Hi"}', "turns.json: script['gpt-x']: expected a list of turns, got str"),
    (
        "turns.json",
        "[3]",
        "turns.json: script[0]: expected a turn (a dict such as {'text': 'Hi'}, a Turn, or a string), got int: 3",
    ),
    (
        "turns.json",
        '{"text": "Hi"}',
        "turns.json: script['text']: expected a list of turns, got str",
    ),
    (
        "turns.json",
        "3",
        "turns.json: expected a list of turns or a mapping of model name to a list of turns, got int",
    ),
    (
        "turns.json",
        '[{"text": "a",}]',
        # Python's own message, passed on: 3.13's json names the trailing comma (and where it stands).
        "turns.json:1:14: invalid JSON: Illegal trailing comma before end of object"
        if sys.version_info >= (3, 13)
        else "turns.json:1:15: invalid JSON: Expecting property name enclosed in double quotes",
    ),
    ("turns.json", "", "turns.json:1:1: invalid JSON: Expecting value"),
    ("turns.json", '[{"text": "a", "text": "b"}]', "turns.json: invalid JSON: duplicate key 'text' in one object"),
    ("turns.json", "[" * 100_000, "turns.json: invalid JSON: nested too deeply"),
    (
        "turns.json",
        '[{"fault": {"delay": Infinity}}]',
        "turns.json: invalid script[0]: field 'fault.delay': inf is not a finite number (JSON has no infinity or NaN)",
    ),
    (
        "turns.json",
        '{"m": [{"tool": {"name": "f", "input": {"x": [NaN]}}}]}',
        (
            "turns.json: invalid script['m'][0]: field 'tool.input.x.0': nan is not a finite number "
            "(JSON has no infinity or NaN)"
        ),
    ),
    ("turns.json", '{"$schema": 1}', "turns.json: script: '$schema' names the JSON Schema (a string), not a queue"),
    (
        "turns.yaml",
        "- text: a\n  text: b\n",
        "turns.yaml:2:3: invalid YAML: duplicate key 'text'",
    ),
    (
        "turns.yaml",
        "- text: [a\n- text: b\n",
        "turns.yaml:2:7: invalid YAML: while parsing a flow sequence, expected ',' or ']', but got ':'",
    ),
    ("turns.yaml", "a: b: c\n", "turns.yaml:1:5: invalid YAML: mapping values are not allowed here"),
    (
        "turns.yaml",
        "- a\n---\n- b\n",
        "turns.yaml:2:1: invalid YAML: expected a single document in the stream, but found another document",
    ),
    (
        "turns.yaml",
        "",
        "turns.yaml: the file holds no script; expected a list of turns or a mapping of model name to turns",
    ),
    (
        "turns.yaml",
        "# only a comment\n",
        "turns.yaml: the file holds no script; expected a list of turns or a mapping of model name to turns",
    ),
    (
        "turns.yaml",
        "- !!binary aGVsbG8=\n",
        "turns.yaml:1:3: invalid YAML: the YAML tag 'binary' has no JSON equivalent",
    ),
    (
        "turns.yaml",
        "- !!python/object:os.system {}\n",
        (
            "turns.yaml:1:3: invalid YAML: could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object:os.system'"
        ),
    ),
    ("turns.yaml", "- !!int\n", "turns.yaml: invalid YAML: IndexError: string index out of range"),
    ("turns.yaml", "1: [Hi]\n", "turns.yaml: script: queue keys are model names (strings), got int 1"),
    (
        "turns.yaml",
        "- text: yes\n",
        "turns.yaml: invalid script[0]: field 'text': Input should be a valid string, got bool True",
    ),
    (
        "turns.yaml",
        "- fault: {delay: .inf}\n",
        "turns.yaml: invalid script[0]: field 'fault.delay': inf is not a finite number (JSON has no infinity or NaN)",
    ),
    (
        "turns.yaml",
        "- tool: {name: f, input: &x {a: *x}}\n",
        "turns.yaml: invalid script[0]: field 'tool.input.a': a YAML alias refers to itself (a recursive structure)",
    ),
    (
        "turns.yaml",
        BOMB,
        (
            "turns.yaml: the script expands to more than 1,000,000 values (YAML aliases?); "
            "a script file this large is refused"
        ),
    ),
    # Among the slowest (about 2 s, whatever the depth past Python's recursion limit): PyYAML's scanner is
    # quadratic in the open brackets it reaches before the parser's RecursionError. Only a depth check in
    # src/wirescript/files.py, before yaml.load, would make it cheap.
    ("turns.yaml", "[" * 100_000, "turns.yaml: invalid YAML: nested too deeply"),
    (
        "turns.json",
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        "turns.json: invalid script[0]: field '" + ".".join(["0"] * (MAX_DEPTH - 1)) + "': "
        f"nested more than {MAX_DEPTH} levels deep",
    ),
    ("turns.json", b'["caf\xe9"]', "turns.json:1: not UTF-8 text (byte 0xe9 at offset 5)"),
    ("turns.json", b'[\n"a",\n"\xff"]', "turns.json:3: not UTF-8 text (byte 0xff at offset 8)"),
    ("turns.txt", "[]", "turns.txt: unknown script file type .txt; expected .json, .yaml or .yml"),
    ("turns", "[]", "turns: unknown script file type (none); expected .json, .yaml or .yml"),
]


@pytest.mark.parametrize(("name", "text", "message"), ERRORS, ids=[f"{i}-{e[0]}" for i, e in enumerate(ERRORS)])
def test_a_bad_file_names_itself_and_the_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str | bytes, message: str
) -> None:
    write(tmp_path, name, text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScriptError) as info:
        load_script(name)
    assert str(info.value) == message


def test_a_missing_file_or_a_directory_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(ScriptError, match=r"^nope\.yaml: no such script file$"):
        load_script("nope.yaml")
    with pytest.raises(ScriptError, match=r"^dir\.json: is a directory, not a script file$"):
        load_script("dir.json")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_an_unreadable_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    path = write(tmp_path, "t.json", "[]")
    path.chmod(0)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScriptError, match=r"^t\.json: cannot read the script file: Permission denied$"):
        load_script("t.json")


def test_yaml_without_pyyaml_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "t.yaml", LIST_YAML)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "yaml", None)  # `import yaml` now raises ImportError
    with pytest.raises(ScriptError) as info:
        load_script("t.yaml")
    assert str(info.value) == (
        "t.yaml: reading YAML scripts needs PyYAML; install the extra: pip install 'wirescript[yaml]'"
    )
    assert load_script(write(tmp_path, "t.json", LIST_JSON)) == EXPECTED  # JSON never needs it


def test_the_transport_takes_the_loaded_script_not_a_path(tmp_path: Path) -> None:
    path = write(tmp_path, "t.yaml", LIST_YAML)
    assert [p.turn for p in ScriptTransport(load_script(path)).pending] == EXPECTED
    with pytest.raises(
        ScriptError,
        match=r"^script: expected a list of turns, got \w*Path \(for a script file, pass load_script\(path\)\)$",
    ):
        ScriptTransport(path)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------- hostile input


def _only_script_errors(path: Path) -> None:
    try:
        script = load_script(path)
    except ScriptError as exc:
        message = str(exc)
    else:
        ScriptTransport(script)  # whatever loads is a valid script
        return
    assert message.startswith(str(path)), message


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".json", ".yaml"]))
def test_arbitrary_bytes_give_a_script_error_or_a_script(tmp_path: Path, data: bytes, suffix: str) -> None:
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(data)
    _only_script_errors(path)


_YAML_ALPHABET = string.ascii_letters[:6] + string.digits[:3] + " \n\t-:[]{},&*!#|>'\"?%@.~"


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=_YAML_ALPHABET, max_size=120))
def test_yaml_shaped_noise_gives_a_script_error_or_a_script(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_text(text, encoding="utf-8")
    _only_script_errors(path)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                _FIELDS := [
                    "text",
                    "tool",
                    "tools",
                    "name",
                    "input",
                    "id",
                    "error",
                    "status",
                    "fault",
                    "delay",
                    "usage",
                    "input_tokens",
                    "thinking",
                    "stop_reason",
                    "*",
                    "x",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_JSON_VALUES)
def test_turn_shaped_json_gives_a_script_error_or_a_script(tmp_path: Path, value: Any) -> None:
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    _only_script_errors(path)


# ------------------------------------------------------------------------------------------ schema


def test_the_schema_describes_both_forms_from_the_models() -> None:
    schema = script_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "wirescript script"
    assert [form["type"] for form in schema["anyOf"]] == ["array", "object"]
    turn = schema["$defs"]["Turn"]
    assert list(turn["properties"]) == list(Turn.model_fields)
    assert turn["additionalProperties"] is False
    # Field docstrings become descriptions, so an editor shows them.
    assert turn["properties"]["text"]["description"] == "The answer's text; streamed in several deltas."
    json.dumps(schema)  # serialisable as is


def test_the_schema_accepts_what_loads_and_rejects_what_does_not() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = script_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    good: list[Any] = [
        json.loads(LIST_JSON),
        {"$schema": "./script.schema.json", "claude-big": ["Hi"], "*": [{"error": {"status": 429}}]},
        [{"text": "a", "fault": {"cut_after": 3, "drop": ["message_stop"]}, "usage": {"input_tokens": 5}}],
    ]
    bad: list[Any] = [
        [{"txt": "typo"}],
        [{"tool": {"input": {}}}],
        {"claude": "not a list"},
        [{"error": {"status": 200}}],
        [3],
    ]
    for value in good:
        assert not list(validator.iter_errors(value)), value
    for value in bad:
        assert list(validator.iter_errors(value)), value
