"""The strict rules' shortcuts for plainly valid bodies refuse nothing less than the rules do.

`check_anthropic` and `check_openai_chat` decide the body nearly every request sends (a model,
max_tokens, text messages) in one pass instead of running each rule. These tests pin that a
shortcut says "valid" only of bodies every rule passes, so the answer is the same with it as
without it, for any body; and that what the real SDKs send takes the shortcut (else it would save
nothing).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from _support import anthropic_client, examples, openai_client
from wirescript import ScriptTransport
from wirescript.strict import check_anthropic, check_openai_chat, check_openai_responses
from wirescript.wires.anthropic.rules import plainly_valid, rules_violation
from wirescript.wires.openai.rules import (
    chat_rules_violation,
    plainly_valid_chat,
    plainly_valid_responses,
    responses_rules_violation,
)

TOOL = {"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object", "properties": {}}}
CACHED = {"type": "ephemeral"}

# Values on both sides of every rule's line, and of the shortcut's.
BLOCK_VALUES: list[Any] = [
    {"type": "text", "text": "hi"},
    {"type": "text", "text": "hi", "cache_control": CACHED},
    {"type": "text", "text": "hi", "content": [{"type": "text", "text": "x", "cache_control": CACHED}] * 5},
    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
    {"type": "tool_result", "tool_use_id": "toolu_9", "content": [{"type": "text", "text": "x"}]},
    {"type": "thinking", "thinking": "hm", "signature": "sig"},
    {"type": "redacted_thinking", "data": "x"},
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
    {"type": "image", "source": {}, "cache_control": CACHED},
    {"type": "image", "source": {"type": "base64", "media_type": "image/jpg", "data": "x"}},
    {"type": "text", "text": ""},
    {"type": "text", "text": " "},
    {"type": "text", "text": "ends in a space "},
    {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search", "input": {}},
    {"text": "no type"},
    "a string block",
]
CONTENT_VALUES: list[Any] = [
    "hi",
    "",
    " ",
    "trailing ",
    None,
    3,
    {"type": "text"},
    [],
    *([block] for block in BLOCK_VALUES),
    *([{"type": "text", "text": "hi"}, block] for block in BLOCK_VALUES),
    [{"type": "text", "text": "hi", "cache_control": CACHED}] * 5,
]
ROLE_VALUES: list[Any] = ["user", "assistant", "system", "tool", "developer", None, 3]
MESSAGE_VALUES: list[Any] = [
    *({"role": role, "content": content} for role in ROLE_VALUES for content in CONTENT_VALUES),
    *({"role": role} for role in ROLE_VALUES),
    {"content": "hi"},
    "a string message",
]
FIELD_VALUES: dict[str, list[Any]] = {
    # The model table's entries: a 64K and a 128K output limit, a model without prefills, one that refuses
    # temperature with top_p, one with no limit listed, and models it does not list.
    "model": [
        "claude-test",
        None,
        3,
        "claude-sonnet-4-20250514",
        "claude-sonnet-4-5",
        "claude-opus-4-6",
        "claude-opus-4-1-20250805",
        "claude-sonnet-4-5-next",
    ],
    "max_tokens": [64, 0, -1, None, 1.0, -1.0, True, "64", 2**70, 64_000, 64_001, 128_001],
    "messages": [None, [], "hi", {}, ["hi"]],
    "stream": [True, False],
    "temperature": [0, 1, 0.5, 1.5, -0.1, True, float("nan"), float("inf"), "0.5", None],
    "top_p": [0.9, None],
    "top_k": [5],
    "tool_choice": [{"type": "auto"}, {"type": "any"}, {"type": "tool", "name": "get_weather"}],
    "thread": [{"type": "continue", "previous_message_id": "msg_1"}, {"type": "new"}, None],
    "tools": [[], None, [TOOL], [TOOL, TOOL], [{"name": "bad name"}], [{**TOOL, "cache_control": CACHED}] * 5],
    "system": ["be brief", [], [{"type": "text", "text": "s", "cache_control": CACHED}] * 5, None],
    "thinking": [
        {"type": "enabled", "budget_tokens": 512},
        {"type": "enabled", "budget_tokens": 2048},
        {"type": "enabled", "budget_tokens": 100_000},
        {"type": "disabled"},
        {"type": "adaptive"},
        "enabled",
    ],
}
MESSAGES = st.sampled_from(MESSAGE_VALUES)
FIELDS = {key: st.sampled_from(values) for key, values in FIELD_VALUES.items()}
FIELDS["messages"] = st.one_of(st.lists(MESSAGES, max_size=6), FIELDS["messages"])
PLAIN_MESSAGES = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant"]),
            "content": st.one_of(st.just("hi"), st.lists(st.just({"type": "text", "text": "hi"}), max_size=2)),
        }
    ),
    min_size=1,
    max_size=4,
)
PLAIN = st.fixed_dictionaries(
    {"model": st.just("claude-test"), "max_tokens": st.sampled_from([0, 64]), "messages": PLAIN_MESSAGES},
    optional={"stream": st.just(True), "system": st.just("Be brief."), "temperature": st.sampled_from([0, 0.5, 1])},
)


@st.composite
def one_off(draw: st.DrawFn) -> dict[str, Any]:
    """A plainly valid body with one field, or one message, changed to a value near some rule's line."""
    body = draw(PLAIN)
    if draw(st.booleans()):
        key = draw(st.sampled_from(sorted(FIELDS)))
        return {**body, key: draw(FIELDS[key])}
    messages = list(body["messages"])
    messages.insert(draw(st.integers(0, len(messages))), draw(MESSAGES))
    return {**body, "messages": messages}


BODIES = st.one_of(st.fixed_dictionaries({}, optional=FIELDS), PLAIN, one_off())


USE = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
RESULT_CONTENTS: list[Any] = ["sunny", None, [{"type": "text", "text": "sunny"}], [], ""]
TOOL_LOOP = st.fixed_dictionaries(
    {
        "model": st.just("claude-test"),
        "max_tokens": st.just(64),
        "tools": st.sampled_from([[TOOL], [TOOL, {**TOOL, "name": "get_time"}]]),
        "messages": st.builds(
            lambda said, content, after: [
                {"role": "user", "content": "What is the weather?"},
                {"role": "assistant", "content": [*said, USE]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": content}]},
                *after,
            ],
            st.sampled_from([[], [{"type": "text", "text": "Looking."}]]),
            st.sampled_from(RESULT_CONTENTS),
            st.sampled_from([[], [{"role": "assistant", "content": "Sunny."}, {"role": "user", "content": "Thanks."}]]),
        ),
    },
    optional={"stream": st.just(True), "system": st.just("Be brief.")},
)
"""A tool loop's body (a tool, its use, its result), plainly valid as drawn."""


@st.composite
def tool_loop_off(draw: st.DrawFn) -> dict[str, Any]:
    """A tool loop's body with one block added to, or changed in, one of its messages, or one field changed."""
    body = draw(TOOL_LOOP)
    if draw(st.booleans()):
        key = draw(st.sampled_from(sorted(FIELDS)))
        return {**body, key: draw(FIELDS[key])}
    messages = [dict(m) for m in body["messages"]]
    at = draw(st.integers(0, len(messages) - 1))
    content = messages[at]["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    block = draw(st.sampled_from([*BLOCK_VALUES, {**USE, "id": "toolu_2"}, {**USE, "id": 3}]))
    if blocks and draw(st.booleans()):
        blocks[draw(st.integers(0, len(blocks) - 1))] = block
    else:
        blocks.insert(draw(st.integers(0, len(blocks))), block)
    messages[at] = {**messages[at], "content": blocks}
    return {**body, "messages": messages}


VERSIONS: list[str | None] = [None, "2023-06-01", "2026-10-21"]
BETAS: list[tuple[str, ...]] = [(), ("interleaved-thinking-2025-05-14",), ("output-128k-2025-02-19",)]


def decided_alike(body: dict[str, Any], version: str | None = "2026-10-21", betas: tuple[str, ...] = ()) -> bool:
    """Assert the shortcut says "valid" only where every rule passes, and the answer is the rules'; True if taken.

    The shortcut reads the body alone: it must hold for every API version and beta the request may carry.
    """
    expected = rules_violation(body, anthropic_version=version, betas=betas)
    taken = plainly_valid(body)
    if taken:
        assert expected is None, f"plainly valid, yet {expected} (version {version}, betas {betas}): {body}"
    assert check_anthropic(body, anthropic_version=version, betas=betas) == expected
    return taken


def chat_decided_alike(body: dict[str, Any]) -> bool:
    """`decided_alike` for Chat Completions."""
    expected = chat_rules_violation(body)
    taken = plainly_valid_chat(body)
    if taken:
        assert expected is None, f"plainly valid, yet {expected}: {body}"
    assert check_openai_chat(body) == expected
    return taken


@settings(max_examples=examples(400), deadline=None)
@given(body=BODIES, version=st.sampled_from(VERSIONS), betas=st.sampled_from(BETAS))
def test_the_shortcut_decides_every_body_as_the_rules_do(
    body: dict[str, Any], version: str | None, betas: tuple[str, ...]
) -> None:
    decided_alike(body, version, betas)


@settings(max_examples=examples(400), deadline=None)
@given(body=tool_loop_off(), version=st.sampled_from(VERSIONS))
def test_the_shortcut_decides_every_tool_loop_body_as_the_rules_do(body: dict[str, Any], version: str | None) -> None:
    decided_alike(body, version)


@settings(max_examples=examples(100), deadline=None)
@given(body=TOOL_LOOP)
def test_a_plain_tool_loop_body_takes_the_shortcut(body: dict[str, Any]) -> None:
    assert decided_alike(body)


def test_every_one_off_tool_loop_body_is_decided_as_the_rules_do() -> None:
    """Every block value, in place of each block of a tool loop's messages or added before or after it; every field."""
    base: dict[str, Any] = {
        "model": "claude-test",
        "max_tokens": 64,
        "tools": [TOOL],
        "messages": [
            {"role": "user", "content": "What is the weather?"},
            {"role": "assistant", "content": [{"type": "text", "text": "Looking."}, USE]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}]},
        ],
    }
    bodies = [{**base, key: value} for key, values in FIELD_VALUES.items() for value in values]
    tools: list[Any] = [
        {**TOOL, "input_schema": {}},
        {**TOOL, "input_schema": None},
        {**TOOL, "input_schema": "object"},
        {"name": "get_weather"},
        {**TOOL, "type": "custom"},
        {**TOOL, "name": "x" * 129},
        {**TOOL, "name": 3},
        {**TOOL, "content": [{"type": "text", "text": "x", "cache_control": CACHED}] * 5},
        {"type": "web_search_20250305", "name": "web_search"},
        {"type": "web_search_20990101", "name": "web_search", "blocked_domains": []},
        {"type": "web_search_20000101", "name": "web_search", "input_schema": {"type": "object"}},
        "a string tool",
    ]
    bodies += [{**base, "tools": [TOOL, tool]} for tool in tools]
    bodies += [{**base, "tools": [tool]} for tool in tools]
    bodies.append({**base, "messages": [*base["messages"][:2], {"role": "user", "content": "sunny"}]})
    bodies.append({**base, "messages": [*base["messages"][:2], {"role": "assistant", "content": "Sunny."}]})
    blocks: list[Any] = [*BLOCK_VALUES, {**USE, "id": "toolu_2"}, {**USE, "id": 3}]
    blocks += [{"type": "tool_result", "tool_use_id": "toolu_1", "content": c} for c in [*RESULT_CONTENTS, 3]]
    for at, message in enumerate(base["messages"]):
        content = message["content"]
        own = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            for k in range(len(own) + 1):
                for changed in ([*own[:k], block, *own[k:]], [*own[:k], block, *own[k + 1 :]]):
                    messages = list(base["messages"])
                    messages[at] = {**message, "content": changed}
                    bodies.append({**base, "messages": messages})
    plain = sum(decided_alike(body, version) for body in bodies for version in VERSIONS)
    assert 0 < plain < len(bodies) * len(VERSIONS)  # both ways are taken


def test_a_tool_loops_bodies_take_the_shortcut() -> None:
    stub = ScriptTransport([{"tool": {"name": "get_weather", "input": {"city": "Paris"}}}, {"text": "Sunny."}])
    client = anthropic_client(stub)
    messages: list[Any] = [{"role": "user", "content": "What is the weather?"}]
    asked = client.messages.create(model="claude-test", max_tokens=64, tools=[TOOL], messages=messages)
    use = next(block for block in asked.content if block.type == "tool_use")
    messages += [
        {"role": "assistant", "content": asked.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "sunny"}]},
    ]
    client.messages.create(model="claude-test", max_tokens=64, tools=[TOOL], messages=messages)
    assert [plainly_valid(r.body) for r in stub.requests] == [True, True]
    assert all(decided_alike(r.body) for r in stub.requests)
    assert stub.problems == []


def test_what_the_sdk_sends_is_plainly_valid() -> None:
    stub = ScriptTransport([{"text": "a"}, {"text": "b"}])
    client = anthropic_client(stub)
    client.messages.create(model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "hi"}])
    with client.messages.stream(
        model="claude-test",
        max_tokens=64,
        system="Be brief.",
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "How are you?"},
        ],
    ) as stream:
        stream.get_final_text()
    assert [plainly_valid(r.body) for r in stub.requests] == [True, True]
    assert stub.problems == []


PLAIN_BODY: dict[str, Any] = {
    "model": "claude-test",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello."}],
}


def test_every_one_off_body_is_decided_as_the_rules_do() -> None:
    """Every value above, one at a time in an otherwise plainly valid body: in place of a field, or as a message."""
    bodies = [{**PLAIN_BODY, key: value} for key, values in FIELD_VALUES.items() for value in values]
    for message in MESSAGE_VALUES:
        for at in (0, 1, 2):
            messages = list(PLAIN_BODY["messages"])
            messages.insert(at, message)
            bodies.append({**PLAIN_BODY, "messages": messages})
    plain = sum(decided_alike(body, version) for body in bodies for version in VERSIONS)
    assert 0 < plain < len(bodies) * len(VERSIONS)  # both ways are taken


def test_bodies_a_rule_refuses_are_not_plainly_valid() -> None:
    plain: dict[str, Any] = {"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
    assert plainly_valid(plain)
    refused = [
        {**plain, "max_tokens": -1},
        {**plain, "temperature": 1.5},
        {**plain, "messages": []},
        {**plain, "messages": [{"role": "system", "content": "hi"}]},
        {**plain, "tools": [TOOL, TOOL]},
        {**plain, "system": [{"type": "text", "text": "s", "cache_control": CACHED}] * 5},
        {**plain, "thinking": {"type": "enabled", "budget_tokens": 512}},
        {k: v for k, v in plain.items() if k != "model"},
        # the rules of the second round
        {**plain, "messages": [{"role": "user", "content": ""}]},
        {**plain, "messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]},
        {**plain, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "So "}]},
        {**plain, "model": "claude-sonnet-4-20250514", "max_tokens": 100_000},
        {
            **plain,
            "model": "claude-opus-4-6",
            "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "{"}],
        },
        {**plain, "model": "claude-sonnet-4-5", "temperature": 0.5, "top_p": 0.9},
        {**plain, "thinking": {"type": "adaptive"}, "temperature": 0.5},
        {**plain, "top_k": 5},  # on API version 2026-10-21
    ]
    for body in refused:
        assert rules_violation(body, anthropic_version="2026-10-21") is not None, body
        assert not plainly_valid(body), body


# --- Chat Completions --------------------------------------------------------------------------------

FUNCTION = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
CHAT_ROLE_VALUES: list[Any] = ["system", "developer", "user", "assistant", "tool", "function", "bot", None, 3]
CHAT_MESSAGE_VALUES: list[Any] = [
    *(
        {"role": role, "content": "hi", **extra}
        for role in CHAT_ROLE_VALUES
        for extra in ({}, {"tool_calls": [CALL]}, {"tool_calls": []}, {"tool_calls": None}, {"tool_call_id": "call_1"})
    ),
    {"content": "hi"},
    {"role": "user", "content": "Answer in JSON."},
    "a string message",
]
CHAT_FIELD_VALUES: dict[str, list[Any]] = {
    "model": ["gpt-test", None, 3, "o3", "o3-mini-2025-01-31"],
    "messages": [None, [], "hi", {}, ["hi"]],
    "stream": [True, False, "true", None],
    "stream_options": [{"include_usage": True}, {}, None],
    "n": [1, 2, 0, -1, 1.0, 0.0, True, False, "1", None],
    "max_tokens": [100, None],
    "tool_choice": ["auto", "none", {"type": "function", "function": {"name": "get_weather"}}, None],
    "parallel_tool_calls": [False, True, None],
    "presence_penalty": [0, 2, 2.5, -3, None],
    "frequency_penalty": [-2, 3],
    "top_logprobs": [0, 20, 21, -1],
    "temperature": [0, 2, 1.5, 2.5, -0.1, True, float("nan"), float("inf"), "1", None],
    "tools": [
        [],
        None,
        [FUNCTION],
        [{"type": "function", "function": {"name": "f", "strict": True, "parameters": {"type": "object"}}}],
        [{"type": "function", "function": {"name": "bad name"}}],
        [{"type": "function", "function": {"name": "x" * 65}}],
        [{"type": "custom", "custom": {"name": "bad name"}}],
    ],
    "response_format": [
        {"type": "text"},
        {"type": "json_object"},
        {"type": "json_schema", "json_schema": {"name": "answer", "schema": {}}},
        {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": {"type": "object"}}},
        {"type": "json_schema", "json_schema": {}},
        {"type": "json_schema"},
        {"type": "text", "extra": 1},
        "json",
        None,
    ],
}
PLAIN_CHAT_BODY: dict[str, Any] = {
    "model": "gpt-test",
    "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
}


@settings(max_examples=examples(200), deadline=None)
@given(
    body=st.fixed_dictionaries(
        {},
        optional={
            **{key: st.sampled_from(values) for key, values in CHAT_FIELD_VALUES.items()},
            "messages": st.lists(st.sampled_from(CHAT_MESSAGE_VALUES), max_size=6),
        },
    )
)
def test_the_chat_shortcut_decides_every_body_as_the_rules_do(body: dict[str, Any]) -> None:
    chat_decided_alike(body)


def test_every_one_off_chat_body_is_decided_as_the_rules_do() -> None:
    bodies = [{**PLAIN_CHAT_BODY, key: value} for key, values in CHAT_FIELD_VALUES.items() for value in values]
    bodies += [{**PLAIN_CHAT_BODY, "stream": True, key: value} for key, value in [("stream_options", {})]]
    for message in CHAT_MESSAGE_VALUES:
        for follower in (None, {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}):
            for at in (0, 1, 2):
                messages = list(PLAIN_CHAT_BODY["messages"])
                messages[at:at] = [message] if follower is None else [message, follower]
                bodies.append({**PLAIN_CHAT_BODY, "messages": messages})
    plain = sum(chat_decided_alike(body) for body in bodies)
    assert 0 < plain < len(bodies)  # both ways are taken


def test_what_the_openai_sdk_sends_is_plainly_valid() -> None:
    stub = ScriptTransport([{"text": "a"}, {"text": "b"}])
    client = openai_client(stub)
    client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}])
    stream = client.chat.completions.create(
        model="gpt-test",
        stream=True,
        stream_options={"include_usage": True},
        temperature=0.5,
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
    )
    assert list(stream)
    assert [plainly_valid_chat(r.body) for r in stub.requests] == [True, True]
    assert stub.problems == []


def test_chat_bodies_a_rule_refuses_are_not_plainly_valid() -> None:
    plain: dict[str, Any] = {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}
    assert plainly_valid_chat(plain)
    refused = [
        {**plain, "messages": []},
        {**plain, "messages": [{"role": "bot", "content": "hi"}]},
        {**plain, "temperature": 2.5},
        {**plain, "n": 0},
        {**plain, "stream_options": {"include_usage": True}},
        {**plain, "tool_choice": "auto"},
        {**plain, "parallel_tool_calls": False},
        {**plain, "presence_penalty": 3},
        {**plain, "top_logprobs": 21},
        {**plain, "response_format": {"type": "json_object"}},
        {**plain, "model": "o3", "max_tokens": 100},
        {**plain, "model": "o1-mini", "temperature": 0.2},
    ]
    for body in refused:
        assert chat_rules_violation(body) is not None, body
        assert not plainly_valid_chat(body), body


RESPONSES_TOOL = {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}
RESPONSES_FIELD_VALUES: dict[str, list[Any]] = {
    "model": ["gpt-test", None, 3],
    "prompt": [{"id": "pmpt_1"}, None],
    "previous_response_id": ["resp_1", None],
    "conversation": ["conv_1", {"id": "conv_1"}, None],
    "tools": [[], None, [RESPONSES_TOOL], [{"type": "function"}], [{"type": "file_search"}], {"x": 1}],
    "max_tokens": [100, None],
    "max_completion_tokens": [100],
    "temperature": [0, 1, 2, 2.5, -0.1, True, "1", None, 1.5],
    "max_output_tokens": [16, 15, 16.0, 10.0, True, None, "16", 2**70],
    "text": [
        None,
        {},
        {"format": {"type": "text"}},
        {"format": {"type": "json_schema", "schema": {}}},
        {"format": {"type": "json_schema", "name": "x", "strict": True, "schema": {"type": "object"}}},
        {"format": "json_schema"},
        "text",
    ],
    "stream": [True, False],
    "store": [False, True],
    "input": [None, "hi", "", [], {}, 3],
}
RESPONSES_ITEM_VALUES: list[Any] = [
    {"role": "user", "content": "hi"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]},
    {"role": "system", "content": "Be brief."},
    {"role": "developer", "content": "Be brief."},
    {"role": "tool", "content": "x"},
    {"role": "bot", "content": "x"},
    {"role": None, "content": "x"},
    {"role": 3, "content": "x"},
    {"content": "no role"},
    {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
    {"type": "function_call_output", "call_id": "call_9", "output": "sunny"},
    {"type": "item_reference", "id": "msg_1"},
    {"type": "reasoning", "id": "rs_1", "summary": []},
    "a string item",
]
PLAIN_RESPONSES_BODY: dict[str, Any] = {"model": "gpt-test", "input": [{"role": "user", "content": "hi"}]}


def responses_decided_alike(body: dict[str, Any]) -> bool:
    """`decided_alike` for Responses (a request that continues no stored response)."""
    expected = responses_rules_violation(body)
    taken = plainly_valid_responses(body)
    if taken:
        assert expected is None, f"plainly valid, yet {expected}: {body}"
    assert check_openai_responses(body) == expected
    return taken


@settings(max_examples=examples(300), deadline=None)
@given(
    body=st.fixed_dictionaries(
        {},
        optional={
            **{key: st.sampled_from(values) for key, values in RESPONSES_FIELD_VALUES.items()},
            "input": st.one_of(
                st.sampled_from(RESPONSES_FIELD_VALUES["input"]),
                st.lists(st.sampled_from(RESPONSES_ITEM_VALUES), max_size=5),
            ),
        },
    )
)
def test_the_responses_shortcut_decides_every_body_as_the_rules_do(body: dict[str, Any]) -> None:
    responses_decided_alike(body)


def test_every_one_off_responses_body_is_decided_as_the_rules_do() -> None:
    bodies = [
        {**PLAIN_RESPONSES_BODY, key: value} for key, values in RESPONSES_FIELD_VALUES.items() for value in values
    ]
    for item in RESPONSES_ITEM_VALUES:
        for at in (0, 1):
            items = list(PLAIN_RESPONSES_BODY["input"])
            items[at:at] = [item]
            bodies.append({**PLAIN_RESPONSES_BODY, "input": items})
    plain = sum(responses_decided_alike(body) for body in bodies)
    assert 0 < plain < len(bodies)  # both ways are taken


def test_what_the_openai_sdk_sends_to_responses_is_plainly_valid() -> None:
    stub = ScriptTransport([{"text": "a"}, {"text": "b"}])
    client = openai_client(stub)
    client.responses.create(model="gpt-test", input="hi")
    with client.responses.stream(
        model="gpt-test",
        instructions="Be brief.",
        temperature=0.5,
        max_output_tokens=64,
        input=[{"role": "developer", "content": "Terse."}, {"role": "user", "content": "hi"}],
    ) as stream:
        stream.get_final_response()
    assert [plainly_valid_responses(r.body) for r in stub.requests] == [True, True]
    assert stub.problems == []


def test_responses_bodies_a_rule_refuses_are_not_plainly_valid() -> None:
    plain = PLAIN_RESPONSES_BODY
    assert plainly_valid_responses(plain)
    refused = [
        {**plain, "model": None},
        {**plain, "temperature": 2.5},
        {**plain, "max_output_tokens": 15},
        {**plain, "max_tokens": 100},
        {**plain, "input": [{"role": "bot", "content": "hi"}]},
        {**plain, "input": [{"type": "function_call_output", "call_id": "call_9", "output": "x"}]},
        {**plain, "tools": [{"type": "function"}]},
        {**plain, "text": {"format": {"type": "json_schema", "schema": {}}}},
        {**plain, "previous_response_id": "resp_1", "conversation": "conv_1"},
    ]
    for body in refused:
        assert responses_rules_violation(body) is not None, body
        assert not plainly_valid_responses(body), body


CHAT_LOOP: dict[str, Any] = {
    "model": "gpt-test",
    "tools": [FUNCTION],
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is the weather?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL, {**CALL, "id": "call_2"}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": "warm"},
    ],
}
CHAT_LOOP_MESSAGES: list[Any] = [
    *CHAT_MESSAGE_VALUES,
    {"role": "tool", "tool_call_id": "call_2", "content": "warm"},
    {"role": "tool", "tool_call_id": "call_9", "content": "warm"},
    {"role": "tool", "tool_call_id": 3, "content": "warm"},
    {"role": "tool", "content": "warm"},
    {"role": "assistant", "content": None, "tool_calls": [{"type": "function", "function": {"name": "get_weather"}}]},
    {"role": "assistant", "content": None, "tool_calls": "call_1"},
    {"role": "user", "content": "Thanks."},
]


def test_every_one_off_chat_tool_loop_body_is_decided_as_the_rules_do() -> None:
    """Every message value in place of each message of a tool loop, or added before it; every field; every tool."""
    base = CHAT_LOOP
    bodies = [{**base, key: value} for key, values in CHAT_FIELD_VALUES.items() for value in values]
    bodies += [{**base, "tools": [FUNCTION, *tools]} for tools in CHAT_FIELD_VALUES["tools"] if tools]
    bodies += [{**base, "tools": [FUNCTION, "a string tool"]}, {**base, "tools": [{"function": FUNCTION["function"]}]}]
    for at in range(len(base["messages"]) + 1):
        for message in CHAT_LOOP_MESSAGES:
            for changed in (
                [*base["messages"][:at], message, *base["messages"][at:]],
                [*base["messages"][:at], message, *base["messages"][at + 1 :]],
            ):
                bodies.append({**base, "messages": changed})
    bodies.append({**base, "messages": base["messages"][:-1]})  # call_2 unanswered
    bodies.append({**base, "messages": [*base["messages"], {"role": "assistant", "content": "Sunny and warm."}]})
    plain = sum(chat_decided_alike(body) for body in bodies)
    assert 0 < plain < len(bodies)  # both ways are taken


def test_a_chat_tool_loops_bodies_take_the_shortcut() -> None:
    stub = ScriptTransport([{"tool": {"name": "get_weather", "input": {"city": "Paris"}}}, {"text": "Sunny."}])
    client = openai_client(stub)
    messages: list[Any] = [{"role": "user", "content": "What is the weather?"}]
    asked = client.chat.completions.create(model="gpt-test", tools=[FUNCTION], messages=messages).choices[0].message
    call = (asked.tool_calls or [])[0]
    messages += [
        asked.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "sunny"},
    ]
    client.chat.completions.create(model="gpt-test", tools=[FUNCTION], messages=messages)
    assert [plainly_valid_chat(r.body) for r in stub.requests] == [True, True]
    assert all(chat_decided_alike(r.body) for r in stub.requests)
    assert stub.problems == []
