"""The Bedrock wire's per-request shortcuts give what the full path gives, and are taken where they should be."""

from __future__ import annotations

import itertools
from typing import Any

from wirescript.wires import BedrockWire
from wirescript.wires.base import Parsed
from wirescript.wires.bedrock import rules
from wirescript.wires.bedrock.rules import CONVERSE_RULES, check_converse

_TEXT = {"text": "Weather in Paris?"}
_MESSAGES: list[Any] = [
    {"role": "user", "content": [_TEXT]},
    {"role": "assistant", "content": [{"text": "Sunny."}]},
    {"role": "user", "content": [{"text": " "}]},  # blank
    {"role": "user", "content": [{"text": 3}]},  # a text of another type
    {"role": "system", "content": [_TEXT]},
    {"role": "bot", "content": [_TEXT]},
    {"role": 1, "content": [_TEXT]},
    {"content": [_TEXT]},  # no role
    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "weather", "input": {}}}]},
    {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "22C"}]}}]},
    {"role": "user", "content": [{"toolResult": {"toolUseId": "t9", "content": []}}]},
    {"role": "user", "content": [{"toolUse": "not a dict"}, {"toolResult": "not a dict"}]},
    {"role": "user", "content": "a string"},
    {"role": "user", "content": [7, None, _TEXT]},
    {"role": "user"},
    "not a message",
]
_EXTRAS: list[dict[str, Any]] = [
    {},
    {"toolConfig": {"tools": [{"toolSpec": {"name": "weather"}}]}},
    {"toolConfig": {"tools": [{"toolSpec": {"name": "bad name!"}}]}},
    {"inferenceConfig": {"temperature": 2}},
    {"inferenceConfig": {"maxTokens": 10}},
]
_MODELS = [None, "anthropic.claude-3-5-haiku-20241022-v1:0", "meta.llama3-70b-instruct-v1:0"]
_SKIPS = [frozenset(), frozenset(rule.id for rule in CONVERSE_RULES), frozenset({"bedrock.roles-must-alternate"})]


def _bodies() -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = [{}, {"messages": None}, {"messages": "nope"}, {"messages": {}}]
    for length in range(4):
        for messages in itertools.product(_MESSAGES, repeat=length):
            bodies.append({"messages": list(messages)})
    for extra in _EXTRAS[1:]:
        bodies.append({"messages": [_MESSAGES[0]], **extra})
        bodies.append({"messages": [_MESSAGES[0], _MESSAGES[0]], **extra})
    return bodies


def test_converse_checks_read_in_one_pass_refuse_what_each_check_refuses() -> None:
    """`check_converse`'s one pass (`_clear`) answers None only where every check, asked in turn, finds nothing."""
    bodies = _bodies()
    assert len(bodies) > 4000
    cleared = 0
    for body in bodies:
        cleared += rules._clear(body, body.get("messages"))
        for model in _MODELS:
            for skip in _SKIPS:
                assert check_converse(body, skip=skip, model=model) == rules._each(
                    body, body.get("messages"), skip, model
                ), (body, model, skip)
    assert 0 < cleared < len(bodies) // 2  # the pass both clears and leaves bodies to the checks


def test_the_usual_converse_conversations_are_cleared_in_one_pass() -> None:
    """What an app sends (a user message, a reply, the next question) takes the one pass, not each check."""
    conversation: list[Any] = [
        {"role": "user", "content": [_TEXT]},
        {"role": "assistant", "content": [{"text": "Sunny."}]},
        {"role": "user", "content": [{"text": "And tomorrow?"}, {"image": {"format": "png"}}]},
    ]
    for length in range(len(conversation) + 1):
        assert rules._clear({"messages": conversation[: length or 1]}, conversation[: length or 1])
    assert rules._clear({"messages": conversation, "system": [{"text": "Be brief."}]}, conversation)
    assert not rules._clear({"messages": conversation, "inferenceConfig": {}}, conversation)


def _parsed_plainly(body: dict[str, Any], path: str) -> Parsed:
    """A Converse body's fields read the plain way (the wire's `parse` reads them with fewer calls)."""
    model, op = path.split("/")[2], path.rsplit("/", 1)[1]
    messages = body.get("messages") if isinstance(body.get("messages"), list) else []
    config = body.get("toolConfig")
    specs = config.get("tools") if isinstance(config, dict) and isinstance(config.get("tools"), list) else []
    tools = [t["toolSpec"] for t in specs if isinstance(t, dict) and isinstance(t.get("toolSpec"), dict)]
    last_user: list[Any] = []
    every: list[Any] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get("content") if isinstance(message.get("content"), list) else []
        results = [b for b in content if isinstance(b, dict) and isinstance(b.get("toolResult"), dict)]
        if message.get("role") == "user":
            last_user = results
        every += results
    system = [b["text"] for b in body.get("system") or [] if isinstance(b, dict) and isinstance(b.get("text"), str)]
    inference = body.get("inferenceConfig") if isinstance(body.get("inferenceConfig"), dict) else {}
    max_tokens, temperature = inference.get("maxTokens"), inference.get("temperature")
    return Parsed(
        model=model,
        system="\n".join(system) if system else None,
        messages=messages,
        tools=tools,
        tool_names=[t["name"] for t in tools if isinstance(t.get("name"), str)],
        tool_results=last_user,
        all_tool_results=every,
        stream=op == "converse-stream",
        max_tokens=max_tokens if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) else None,
        temperature=float(temperature)
        if isinstance(temperature, (int, float)) and not isinstance(temperature, bool)
        else None,
    )


def test_converse_bodies_parse_to_what_a_plain_reading_gives() -> None:
    """Every field the wire's `parse` reads, and each record's lists its own (nothing shared between requests)."""
    wire = BedrockWire()
    extras: list[dict[str, Any]] = [
        *_EXTRAS,
        {"system": [{"text": "Be brief."}, {"cachePoint": {}}, {"text": "Be kind."}]},
        {"system": "not blocks"},
        {"toolConfig": {"tools": [{"toolSpec": {"name": "a"}}, {"toolSpec": {"name": 3}}, {"other": 1}, 5]}},
        {"toolConfig": {"tools": "nope"}},
        {"toolConfig": []},
        {"inferenceConfig": {"maxTokens": True, "temperature": 0}},
        {"inferenceConfig": {"maxTokens": 9, "temperature": 0.5}},
        {"inferenceConfig": "nope"},
    ]
    bodies = [body for body in _bodies() if len(body.get("messages") or ()) < 3]
    bodies += [{"messages": [_MESSAGES[0]], **extra} for extra in extras]
    for path in ("/model/anthropic.claude-v1:0/converse", "/model/m/converse-stream"):
        for body in bodies:
            parsed = wire.parse(body, path)
            assert parsed == _parsed_plainly(body, path), body
            again = wire.parse(body, path)
            for name in ("tools", "tool_names", "tool_results", "all_tool_results"):
                assert getattr(parsed, name) is not getattr(again, name)


def test_the_one_pass_reasons_about_every_converse_rule() -> None:
    """A rule added to `CONVERSE_RULES` but not to the one pass would be skipped for the usual conversation."""
    assert {rule.id for rule in CONVERSE_RULES} == rules._CLEARED_FOR
