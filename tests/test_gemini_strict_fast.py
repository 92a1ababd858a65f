"""The Gemini rules' shortcut for plainly valid bodies refuses nothing less than the rules do.

`check_gemini` decides the body nearly every request sends (text contents, perhaps a generation
config) in one pass instead of running each rule. These tests pin that the shortcut says "valid"
only of bodies every rule passes, so the answer is the same with it as without it, for any body
and any rules skipped; and that what google-genai sends takes the shortcut (else it would save nothing).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support import examples
from wirescript import ScriptTransport
from wirescript.strict import check_gemini
from wirescript.wires.gemini.rules import RULES, gemini_rules_violation, plainly_valid_gemini

httpx2 = pytest.importorskip("httpx2")

CALL = {"functionCall": {"name": "get_weather", "args": {}}}
RESPONSE = {"functionResponse": {"name": "get_weather", "response": {"output": "sunny"}}}
# Values on both sides of every rule's line, and of the shortcut's, in either spelling.
PART_VALUES: list[Any] = [
    {"text": "hi"},
    {"text": "hi", "thought": True},
    {"inlineData": {"mimeType": "image/png", "data": "AA=="}},
    CALL,
    {"function_call": {"name": "get_weather"}},
    {"function_call": None, "functionCall": {"name": "x"}},
    {"functionCall": None},
    RESPONSE,
    {"function_response": {"name": "get_weather", "response": {}}},
    {},
    "a string part",
    None,
]
PARTS_VALUES: list[Any] = [
    [],
    None,
    {"text": "a lone part"},
    "hi",
    *([part] for part in PART_VALUES),
    *([{"text": "hi"}, part] for part in PART_VALUES),
    [CALL, CALL],
    [RESPONSE, RESPONSE],
]
ROLE_VALUES: list[Any] = ["user", "model", "function", "system", "assistant", "", None, 3]
CONTENT_VALUES: list[Any] = [
    *({"role": role, "parts": parts} for role in ROLE_VALUES for parts in PARTS_VALUES),
    *({"role": role} for role in ROLE_VALUES),
    {"parts": [{"text": "hi"}]},
    {"role": "user", "parts": [{"text": "hi"}], "parts_extra": 1},
    "a string content",
    None,
]
DECLARATION = {"name": "get_weather", "parameters": {"type": "object"}}
CONFIG_VALUES: list[Any] = [
    {},
    {"temperature": 0},
    {"temperature": 2},
    {"temperature": 2.0001},
    {"temperature": -0.1},
    {"temperature": 1.5},
    {"temperature": True},
    {"temperature": float("nan")},
    {"temperature": float("inf")},
    {"temperature": "1"},
    {"temperature": None},
    {"responseMimeType": "application/json"},
    {"responseMimeType": "text/html"},
    {"response_mime_type": "text/x.enum"},
    {"response_mime_type": "image/png", "responseMimeType": "text/plain"},
    {"response_mime_type": None, "responseMimeType": "text/html"},
    {"responseMimeType": 3},
    {"maxOutputTokens": 50, "temperature": 0.5},
    "a string config",
    None,
    [],
]
FIELD_VALUES: dict[str, list[Any]] = {
    "contents": [None, [], "hi", {"role": "user", "parts": [{"text": "hi"}]}, {}, ["hi"]],
    "tools": [
        [],
        None,
        {},
        "",
        [{"functionDeclarations": [DECLARATION]}],
        [{"functionDeclarations": [DECLARATION, DECLARATION]}],
        [{"function_declarations": [{"name": "bad name"}]}],
        [{"googleSearch": {}}],
        {"functionDeclarations": {"name": "bad name"}},
    ],
    "generationConfig": CONFIG_VALUES,
    "generation_config": CONFIG_VALUES,
    "systemInstruction": [{"parts": [{"text": "Be brief."}]}],
}
PLAIN_BODY: dict[str, Any] = {
    "contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "Hello."}]},
        {"role": "user", "parts": [{"text": "How are you?"}]},
    ]
}
SKIPS = st.sets(st.sampled_from([rule.id for rule in RULES]), max_size=3).map(frozenset)


def decided_alike(body: dict[str, Any], skip: frozenset[str] = frozenset()) -> bool:
    """Assert the shortcut says "valid" only where every rule passes, and the answer is the rules'; True if taken."""
    expected = gemini_rules_violation(body, skip=skip)
    taken = plainly_valid_gemini(body)
    if taken:
        assert gemini_rules_violation(body) is None, f"plainly valid, yet {gemini_rules_violation(body)}: {body}"
    assert check_gemini(body, skip=skip) == expected
    return taken


@settings(max_examples=examples(400), deadline=None)
@given(
    body=st.fixed_dictionaries(
        {},
        optional={
            **{key: st.sampled_from(values) for key, values in FIELD_VALUES.items()},
            "contents": st.lists(st.sampled_from(CONTENT_VALUES), max_size=5),
        },
    ),
    skip=SKIPS,
)
def test_the_shortcut_decides_every_body_as_the_rules_do(body: dict[str, Any], skip: frozenset[str]) -> None:
    decided_alike(body, skip)


def test_every_one_off_body_is_decided_as_the_rules_do() -> None:
    """Every value above, one at a time in an otherwise plainly valid body: in place of a field, or as a content."""
    bodies = [{**PLAIN_BODY, key: value} for key, values in FIELD_VALUES.items() for value in values]
    for content in CONTENT_VALUES:
        for at in (0, 1, 3):
            contents = list(PLAIN_BODY["contents"])
            contents.insert(at, content)
            bodies.append({**PLAIN_BODY, "contents": contents})
    plain = sum(decided_alike(body) for body in bodies)
    assert 0 < plain < len(bodies)  # both ways are taken


def test_bodies_a_rule_refuses_are_not_plainly_valid() -> None:
    assert plainly_valid_gemini(PLAIN_BODY)
    user = {"role": "user", "parts": [{"text": "hi"}]}
    refused = [
        {"contents": []},
        {"contents": [{"role": "assistant", "parts": [{"text": "hi"}]}]},
        {"contents": [{"role": "user", "parts": []}]},
        {"contents": [{"role": "model", "parts": [CALL]}]},
        {"contents": [user, {"role": "user", "parts": [RESPONSE]}]},
        {"contents": [user, {"role": "model", "parts": [CALL]}, {"role": "user", "parts": [RESPONSE, RESPONSE]}]},
        {"contents": [user], "tools": [{"functionDeclarations": [DECLARATION, DECLARATION]}]},
        {"contents": [user], "tools": [{"functionDeclarations": [{"name": "bad name"}]}]},
        {"contents": [user], "generationConfig": {"temperature": 2.5}},
        {"contents": [user], "generation_config": {"response_mime_type": "text/html"}},
    ]
    for body in refused:
        assert gemini_rules_violation(body) is not None, body
        assert not plainly_valid_gemini(body), body


def test_what_google_genai_sends_is_plainly_valid() -> None:
    from google import genai
    from google.genai import types

    stub = ScriptTransport([{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}])
    client = genai.Client(api_key="k", http_options=types.HttpOptions(httpx_client=httpx2.Client(transport=stub)))
    client.models.generate_content(model="gemini-test", contents="hi")
    config = types.GenerateContentConfig(temperature=0.5, max_output_tokens=50, system_instruction="Be brief.")
    chunks = client.models.generate_content_stream(model="gemini-test", contents="hi", config=config)
    assert "".join(c.text or "" for c in chunks) == "b"
    chat = client.chats.create(model="gemini-test")
    chat.send_message("hi")
    chat.send_message("and then?")
    assert stub.problems == []
    assert [plainly_valid_gemini(r.body) for r in stub.requests] == [True, True, True, True]
    assert [len(r.body["contents"]) for r in stub.requests] == [1, 1, 1, 3]
