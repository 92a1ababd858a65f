"""The Bedrock wire's per-request shortcuts give what the full path gives, and are taken where they should be."""

from __future__ import annotations

import itertools
from typing import Any

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
    {"role": "user", "content": [{"toolUse": "not a dict"}]},
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
