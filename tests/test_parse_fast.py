"""The wires' body readers take exact JSON types without a call each: they read every body as the general readers do.

`parse_messages` (Anthropic Messages) and the Chat Completions wire's `parse` test a value's exact
type first and fall back to the general readers (`as_list`, `as_int`, `text_of`, …); Chat reads
its system messages and tool messages in one pass. The references below are those readers
composed as they were before the shortcut; any body, of any shape and types, must parse alike.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from enum import IntEnum
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from _support import examples
from wirescript._text import text_of
from wirescript.wires._decode import as_float, as_int, as_list, since_last_assistant
from wirescript.wires._messages import parse_messages
from wirescript.wires.base import Parsed
from wirescript.wires.openai.chat import OpenAIChatWire
from wirescript.wires.openai.common import join_system, system_text
from wirescript.wires.openai.responses import OpenAIResponsesWire, _since_last_model_item


class _Count(IntEnum):
    one = 1


def _reference_messages(body: Any) -> Parsed:
    messages = as_list(body.get("messages"))
    tools = as_list(body.get("tools"))
    model = body.get("model")
    all_results: list[Any] = []
    newest: list[Any] = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if isinstance(content, list):
            found = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            all_results += found
        else:
            found = []
        if m.get("role") == "user":
            newest = found
    return Parsed(
        model=model if isinstance(model, str) else None,
        system=text_of(body.get("system"), sep="\n"),
        messages=messages,
        tools=tools,
        tool_names=[t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
        if tools
        else [],
        tool_results=newest,
        all_tool_results=all_results,
        stream=body.get("stream") is True,
        max_tokens=as_int(body.get("max_tokens")),
        temperature=as_float(body.get("temperature")),
    )


_TOOL_RESULT_ROLES = ("tool", "function")


def _reference_chat(body: Any, path: str) -> Parsed:
    from urllib.parse import unquote

    from wirescript.wires.openai.chat import _tool_name

    messages = as_list(body.get("messages"))
    tools = as_list(body.get("tools"))
    max_tokens = as_int(body.get("max_completion_tokens"))
    model = body.get("model") if isinstance(body.get("model"), str) else None
    if "/openai/deployments/" in path:
        model = unquote(path.split("/openai/deployments/", 1)[1].split("/", 1)[0]) or model
    return Parsed(
        model=model,
        system=join_system(system_text(messages)),
        messages=messages,
        tools=tools,
        tool_names=[name for t in tools if (name := _tool_name(t)) is not None],
        tool_results=since_last_assistant(messages, _TOOL_RESULT_ROLES),
        all_tool_results=[m for m in messages if isinstance(m, dict) and m.get("role") in _TOOL_RESULT_ROLES],
        stream=body.get("stream") is True,
        max_tokens=max_tokens if max_tokens is not None else as_int(body.get("max_tokens")),
        temperature=as_float(body.get("temperature")),
    )


class _Frozen(Mapping[str, Any]):
    """A message that is a mapping but not a dict (what a caller of `Wire.parse` may hand it)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Any:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"_Frozen({self._data!r})"


_TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output", "computer_call_output")


def _reference_responses(body: Any) -> Parsed:
    raw_input = body.get("input")
    messages = [{"role": "user", "content": raw_input}] if isinstance(raw_input, str) else as_list(raw_input)
    tools = as_list(body.get("tools"))
    instructions = body.get("instructions")
    return Parsed(
        model=body.get("model") if isinstance(body.get("model"), str) else None,
        system=join_system([instructions if isinstance(instructions, str) else None, *system_text(messages)]),
        messages=messages,
        tools=tools,
        tool_names=[t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)],
        tool_results=_since_last_model_item(messages),
        all_tool_results=[m for m in messages if isinstance(m, dict) and m.get("type") in _TOOL_OUTPUTS],
        stream=body.get("stream") is True,
        max_tokens=as_int(body.get("max_output_tokens")),
        temperature=as_float(body.get("temperature")),
    )


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 40),
    st.sampled_from([_Count.one, 0.5, 2.0, float("nan")]),
    st.sampled_from(["", "hi", "Be brief.", "gpt-4o", "claude-x"]),
)
_TEXT_BLOCK = st.fixed_dictionaries({"type": st.sampled_from(["text", "image"]), "text": _SCALARS})
_BLOCKS = st.lists(
    st.one_of(
        _TEXT_BLOCK,
        st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id": st.just("t1"), "content": _SCALARS}),
        _SCALARS,
    ),
    max_size=3,
)
_CONTENT = st.one_of(_SCALARS, _BLOCKS)
_ROLES = st.sampled_from(["user", "assistant", "system", "developer", "tool", "function", None, 3])
_MESSAGE = st.one_of(
    st.builds(lambda r, c: {"role": r, "content": c}, _ROLES, _CONTENT),
    st.builds(lambda r, c: OrderedDict(role=r, content=c), _ROLES, _CONTENT),
    st.builds(lambda r, c: _Frozen({"role": r, "content": c}), _ROLES, _CONTENT),
    _SCALARS,
)
_TOOLS = st.lists(
    st.one_of(
        st.fixed_dictionaries({"name": _SCALARS}),
        st.fixed_dictionaries({"type": st.just("function"), "function": st.fixed_dictionaries({"name": _SCALARS})}),
        _SCALARS,
    ),
    max_size=3,
)
_FIELDS = {
    "model": _SCALARS,
    "messages": st.one_of(st.lists(_MESSAGE, max_size=6), _SCALARS),
    "tools": st.one_of(_TOOLS, _SCALARS),
    "system": _CONTENT,
    "stream": _SCALARS,
    "max_tokens": _SCALARS,
    "max_completion_tokens": _SCALARS,
    "temperature": _SCALARS,
}
_BODIES = st.fixed_dictionaries({}, optional=_FIELDS)


def _same(a: Parsed, b: Parsed, body: dict[str, Any]) -> None:
    names = list(Parsed._fields)
    assert repr([getattr(a, n) for n in names]) == repr([getattr(b, n) for n in names])  # NaN, exact types too
    for name in ("messages", "tools"):
        if isinstance(body.get(name), list):
            assert getattr(a, name) is body[name]  # the body's own list, as sent


@given(_BODIES)
def test_parse_messages_reads_every_body_as_the_general_readers_do(body: dict[str, Any]) -> None:
    _same(parse_messages(body), _reference_messages(body), body)


@given(_BODIES, st.sampled_from(["/v1/chat/completions", "/openai/deployments/my%20dep/chat/completions"]))
def test_chat_parse_reads_every_body_as_the_general_readers_do(body: dict[str, Any], path: str) -> None:
    _same(OpenAIChatWire().parse(body, path), _reference_chat(body, path), body)


_RESPONSES_FIELDS = {
    **_FIELDS,
    "input": st.one_of(_SCALARS, st.lists(_MESSAGE, max_size=4)),
    "instructions": _SCALARS,
    "max_output_tokens": _SCALARS,
}


@settings(max_examples=examples(300))
@given(st.fixed_dictionaries({}, optional=_RESPONSES_FIELDS))
def test_responses_parse_reads_every_body_as_the_general_readers_do(body: dict[str, Any]) -> None:
    parsed = OpenAIResponsesWire().parse(body, "/v1/responses")
    assert repr([getattr(parsed, f) for f in Parsed._fields]) == repr(
        [getattr(_reference_responses(body), f) for f in Parsed._fields]
    )
    if isinstance(body.get("tools"), list):
        assert parsed.tools is body["tools"]


def test_every_string_input_body_is_read_as_the_general_readers_do() -> None:
    """A string `input` (the shortcut's case) with each value of the fields it reads."""
    scalars: list[Any] = [None, True, 0, 16, _Count.one, 0.5, float("nan"), "", "Be brief.", [], {}]
    for key in ("instructions", "model", "max_output_tokens", "temperature", "stream", "tools"):
        for value in scalars:
            body = {"input": "hi", key: value}
            parsed = OpenAIResponsesWire().parse(body, "/v1/responses")
            assert repr([getattr(parsed, f) for f in Parsed._fields]) == repr(
                [getattr(_reference_responses(body), f) for f in Parsed._fields]
            ), body


def test_the_shapes_the_readers_tell_apart_are_generated() -> None:
    """The strategies reach what the shortcuts treat apart: an int subclass, a non-dict mapping, a tool message."""
    body = {
        "model": "gpt-4o",
        "max_tokens": _Count.one,
        "temperature": 1,
        "messages": [
            _Frozen({"role": "system", "content": "Be brief."}),
            {"role": "developer", "content": [{"type": "text", "text": "Terse."}]},
            {"role": "tool", "content": "earlier"},
            {"role": "assistant", "content": "x"},
            {"role": "tool", "content": "sunny"},
        ],
    }
    chat = OpenAIChatWire().parse(body, "/v1/chat/completions")
    _same(chat, _reference_chat(body, "/v1/chat/completions"), body)
    assert chat.system == "Be brief.\nTerse."
    assert chat.max_tokens is _Count.one
    assert chat.tool_results == [{"role": "tool", "content": "sunny"}]
    assert len(chat.all_tool_results or []) == 2
    assert chat.temperature == 1.0
    assert type(chat.temperature) is float
    messages = parse_messages({**body, "system": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})
    assert messages.system == "a\nb"
    assert messages.max_tokens is _Count.one
