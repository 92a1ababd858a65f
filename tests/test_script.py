"""Script validation: malformed scripts fail at construction, naming the turn and the field."""

from __future__ import annotations

import datetime

import pytest

from wirescript import ScriptError, ScriptTransport, ToolCall, Turn


def test_a_plain_string_is_a_text_turn() -> None:
    stub = ScriptTransport(["Hello", {"text": "Bye"}, Turn(text="Third")])
    assert [p.turn.text for p in stub.pending] == ["Hello", "Bye", "Third"]


def test_a_turn_with_tool_and_tools_lists_every_call_in_order() -> None:
    turn = Turn(tools=(ToolCall(name="a"), ToolCall(name="b", input={"x": 1}, id="call_b")))
    assert [c.name for c in turn.tool_calls] == ["a", "b"]
    assert Turn(tool=ToolCall(name="a")).tool_calls == (ToolCall(name="a"),)
    assert Turn().tool_calls == ()


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (
            [{"text": "ok"}, {"txt": "typo"}],
            (
                "invalid script[1]: unknown field 'txt' (expected one of: text, citations, server_tools, "
                "tool, tools, thinking, "
                "thinking_signature, usage, stop_reason, error, fault, unchecked); did you mean 'text'?"
            ),
        ),
        (
            [{"tool": {"name": "create_card", "input": "x"}}],
            "invalid script[0]: field 'tool.input': Input should be a valid dictionary, got str 'x'",
        ),
        (
            [{"tool": {"name": "create_card", "inptu": {}}}],
            "invalid script[0]: unknown field 'tool.inptu' (expected one of: name, input, id); did you mean 'input'?",
        ),
        (
            [{"tool": {"input": {}}}],
            "invalid script[0]: field 'tool.name': Field required",
        ),
        (
            [{"text": 3}],
            "invalid script[0]: field 'text': Input should be a valid string, got int 3",
        ),
        (
            [{"tool": {"name": "a"}, "tools": [{"name": "b"}]}],
            "invalid script[0]: give either 'tool' (one call) or 'tools' (several), not both",
        ),
        (
            [{"error": {"status": 429}, "text": "no"}],
            "invalid script[0]: an 'error' turn answers with an HTTP error, so it cannot also have 'text'",
        ),
        (
            [{"error": {"status": 200}}],
            "invalid script[0]: field 'error.status': Input should be greater than or equal to 400, got int 200",
        ),
        (
            [{"error": {"status": 429, "kind": "x"}}],
            "invalid script[0]: unknown field 'error.kind' (expected one of: status, type, message, code, headers)",
        ),
        (
            [{"usage": {"input_tokens": -1}}],
            "invalid script[0]: field 'usage.input_tokens': Input should be greater than or equal to 0, got int -1",
        ),
        (
            [{"tools": [{"name": "a"}, {"name": ""}]}],
            "invalid script[0]: field 'tools.1.name': String should have at least 1 character, got str ''",
        ),
        (
            [42],
            "script[0]: expected a turn (a dict such as {'text': 'Hi'}, a Turn, or a string), got int: 42",
        ),
        (
            "Hello",
            "script: expected a list of turns, got str",
        ),
        (
            {"claude-a": [{"text": "a"}], "*": [{"text": 1}]},
            "invalid script['*'][0]: field 'text': Input should be a valid string, got int 1",
        ),
        (
            {1: ["a"]},
            "script: queue keys are model names (str), got int 1",
        ),
    ],
)
def test_malformed_scripts_fail_at_construction_naming_turn_and_field(script: object, message: str) -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport(script)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_several_errors_in_one_turn_are_all_listed() -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport([{"text": 1, "stop_reason": "", "extra": True}])
    assert str(info.value) == (
        "invalid script[0]:\n"
        "  - field 'text': Input should be a valid string, got int 1\n"
        "  - field 'stop_reason': String should have at least 1 character, got str ''\n"
        "  - unknown field 'extra' (expected one of: text, citations, server_tools, tool, tools, thinking, "
        "thinking_signature, usage, "
        "stop_reason, error, fault, unchecked)"
    )


def test_a_path_gets_a_hint_to_load_it() -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport("turns.yaml")  # type: ignore[arg-type]
    assert str(info.value) == "script: expected a list of turns, got str (for a script file, pass load_script(path))"


def test_non_finite_numbers_are_refused_so_a_delay_cannot_hang_a_test() -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport([{"text": "x", "fault": {"delay": float("inf")}}])
    assert str(info.value) == "invalid script[0]: field 'fault.delay': Input should be a finite number, got float inf"


JSON_KINDS = "expected an object, array, string, number, true, false or null"


def _cyclic() -> dict[str, object]:
    node: dict[str, object] = {"name": "root"}
    node["children"] = [node]
    return node


@pytest.mark.parametrize(
    ("tool_input", "problem"),
    [
        (
            {"when": datetime.date(2026, 1, 2)},
            f"date datetime.date(2026, 1, 2) at 'when' is not a JSON value ({JSON_KINDS})",
        ),
        (
            {"tags": {"a", "b"} - {"b"}},
            f"set {{'a'}} at 'tags' is not a JSON value ({JSON_KINDS})",
        ),
        ({"score": [1.0, float("nan")]}, "nan at 'score[1]' is not a JSON number (JSON has no NaN or Infinity)"),
        ({"limits": {"max": float("-inf")}}, "-inf at 'limits.max' is not a JSON number (JSON has no NaN or Infinity)"),
        ({"by_id": {7: "x"}}, "the key 7 at 'by_id' has type int; JSON object keys are strings"),
        ({"blob": b"\x00"}, f"bytes b'\\x00' at 'blob' is not a JSON value ({JSON_KINDS})"),
        (
            {"tree": _cyclic()},
            "the value at 'tree.children[0]' is an object or array it is itself inside; JSON cannot hold a cycle",
        ),
    ],
)
def test_tool_input_must_be_json_at_construction(tool_input: dict[str, object], problem: str) -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport([{"tool": {"name": "save", "input": tool_input}}])
    assert str(info.value) == f"invalid script[0]: field 'tool.input': {problem}"


def test_tool_input_accepts_every_json_value_and_tuples_as_arrays() -> None:
    shared = [1, 2]
    tool_input = {"n": None, "b": True, "i": 10**30, "f": -0.5, "s": "é", "a": (1, "x")}
    tool_input["o"] = {"p": shared, "q": shared}  # the same list twice is not a cycle
    stub = ScriptTransport([{"tool": {"name": "save", "input": tool_input}}])
    turn = stub.pending[0].turn
    assert turn.tool is not None
    assert turn.tool.input == tool_input


def test_transport_options_are_validated() -> None:
    with pytest.raises(ScriptError, match=r"^hold_timeout: expected a positive number of seconds, got 0$"):
        ScriptTransport([], hold_timeout=0)
    with pytest.raises(ScriptError, match=r"^fallback: expected a function \(RecordedRequest\) -> turn, got str$"):
        ScriptTransport([], fallback="echo")  # type: ignore[arg-type]


def test_turns_are_immutable_so_a_script_cannot_change_under_a_running_test() -> None:
    turn = Turn(text="a")
    with pytest.raises(ValueError, match="frozen"):
        turn.text = "b"  # type: ignore[misc]


def test_describe_summarises_a_turn_for_messages() -> None:
    assert Turn().describe() == "empty"
    assert Turn(text="Done.").describe() == "text 'Done.'"
    assert Turn(text="x" * 50, thinking="t", tool=ToolCall(name="f")).describe() == (
        "thinking, text 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…', tool f"
    )
    assert Turn.model_validate({"error": {"status": 529}}).describe() == "error 529"


def test_a_misspelt_stop_reason_fails_at_construction() -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport([{"text": "a", "stop_reason": "max_token"}])
    assert str(info.value) == (
        "invalid script[0]: field 'stop_reason': unknown stop reason 'max_token'; did you mean 'max_tokens'? "
        "(expected a provider's documented value, e.g. 'end_turn', 'tool_use', 'max_tokens', 'stop_sequence', "
        "'refusal', 'stop', 'length', 'tool_calls', 'content_filter', 'STOP', 'MAX_TOKENS', 'SAFETY')"
    )
    assert Turn(stop_reason="pause_turn").stop_reason == "pause_turn"
    assert Turn(stop_reason="length").stop_reason == "length"


# A lone surrogate where UTF-8 cannot carry it, in each place a script holds text: a value, a key,
# inside a list, a tuple, a header name and value, a dropped event's name.
_SURROGATE_PLACES: list[tuple[object, str]] = [
    ({"text": "ok \ud800"}, "text"),
    ({"tool": {"name": "f", "input": {"k\udc00": 1}}}, "tool.input.k\udc00"),
    ({"tool": {"name": "f", "input": {"a": [1, {"b": ("x", "\udbff")}]}}}, "tool.input.a[1].b[1]"),
    ({"tools": [{"name": "f"}, {"name": "g", "input": {"v": "\ud800"}}]}, "tools[1].input.v"),
    ({"thinking": "\ud800", "text": "x"}, "thinking"),
    ({"error": {"status": 500, "headers": {"x-a": "b"}, "message": "\udfff"}}, "error.message"),
    ({"error": {"status": 500, "headers": {"x-\ud800": "b"}}}, "error.headers"),
    ({"fault": {"drop": ["message_stop", "\ud800"]}}, "fault.drop[1]"),
]


@pytest.mark.parametrize(("turn", "field"), _SURROGATE_PLACES)
def test_the_fast_proof_of_encodable_text_never_passes_a_lone_surrogate(turn: object, field: str) -> None:
    """The one-pass proof that lets a script skip the per-turn walk says "not proven" for every surrogate."""
    from wirescript.script import _all_encodable

    assert _all_encodable([{"text": "fine"}, {"text": "é, 😀, 中文"}])  # valid non-ASCII text is proven at once
    assert not _all_encodable([{"text": "fine"}, turn])


@pytest.mark.parametrize(("turn", "field"), [p for p in _SURROGATE_PLACES if p[1] != "error.headers"])
def test_a_lone_surrogate_anywhere_in_a_script_fails_at_construction_naming_the_field(turn: object, field: str) -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport(["fine", "é 😀", turn])
    assert str(info.value).startswith(f"invalid script[2]: field {field!r} holds the lone surrogate ")


def test_what_the_fast_proof_cannot_read_is_walked_turn_by_turn() -> None:
    """A Turn, bytes that look like a surrogate's, a non-dict mapping: not proven, and still exactly checked."""
    import types

    from wirescript.script import _all_encodable

    raw = {"text": "x", "fault": {"raw": b"\xed\xa0\x80"}}  # bytes: not text, so no surrogate to refuse
    proxied = {"tool": {"name": "f", "input": types.MappingProxyType({"k": "\ud800"})}}
    assert not _all_encodable([raw])
    assert not _all_encodable([proxied])
    assert _all_encodable([Turn(text="built and checked already"), {"text": "x"}])
    assert ScriptTransport([raw, Turn(text="y")]).pending[0].turn.fault is not None
    with pytest.raises(ScriptError, match=r"^invalid script\[1\]: field 'tool.input.k' holds the lone surrogate"):
        ScriptTransport(["x", proxied])
