"""The Gemini wire reads request bodies in snake_case JSON as well as camelCase.

The proto3 JSON mapping has parsers accept both the lowerCamelCase name and the original proto field
name, and the Gemini API does; litellm's `gemini/` route (and any hand-written REST client) sends
`system_instruction`, `function_declarations`, `function_call`, `function_response` and
`generation_config`. These tests send such bodies as raw httpx2 requests, as litellm does, and
assert the record; the answer stays camelCase, as Gemini's is.
"""

from __future__ import annotations

from typing import Any

import pytest

httpx2 = pytest.importorskip("httpx2")  # the legacy run (anthropic 0.x on httpx) has none

from wirescript import ScriptTransport  # noqa: E402
from wirescript.builder import tool_result_text  # noqa: E402

URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"

SNAKE_BODY: dict[str, Any] = {
    "contents": [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {"role": "model", "parts": [{"function_call": {"name": "weather", "args": {"city": "Paris"}}}]},
        {
            "role": "user",
            "parts": [
                {"function_response": {"name": "weather", "response": {"output": "21 C"}}},
                {"text": "And now?"},
            ],
        },
    ],
    "system_instruction": {"parts": [{"text": "Be brief."}, {"text": "Be kind."}]},
    "tools": [{"function_declarations": [{"name": "weather", "description": "The weather."}, {"name": "time"}]}],
    "generation_config": {"max_output_tokens": 321, "temperature": 0.25},
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def camel_case(value: Any) -> Any:
    """`value` with every key in lowerCamelCase (the tool's own argument and response keys too: none here)."""
    if isinstance(value, dict):
        return {_camel(k): camel_case(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel_case(v) for v in value]
    return value


def send(body: dict[str, Any], method: str = ":generateContent", turns: Any = ("Done.",)) -> ScriptTransport:
    stub = ScriptTransport(list(turns))
    with httpx2.Client(transport=stub) as http:
        response = http.post(f"{URL}{method}?key=test-key", json=body)
    assert response.status_code == 200, response.text
    return stub


@pytest.mark.parametrize("spelling", ["snake_case", "camelCase"])
def test_both_spellings_of_a_body_are_recorded_alike(spelling: str) -> None:
    body = SNAKE_BODY if spelling == "snake_case" else camel_case(SNAKE_BODY)
    [record] = send(body).requests
    assert record.problem is None
    assert record.system == "Be brief.\nBe kind."
    assert record.tool_names == ["weather", "time"]
    assert record.tools == body["tools"]
    [result] = record.tool_results
    assert result == body["contents"][2]["parts"][0]
    assert tool_result_text(result) == "21 C"
    assert record.max_tokens == 321
    assert record.temperature == 0.25
    assert record.last_user_text == "And now?"


def test_the_camel_case_name_wins_when_a_body_sends_both() -> None:
    body = {**SNAKE_BODY, "systemInstruction": {"parts": [{"text": "Camel."}]}}
    assert send(body).requests[0].system == "Camel."


def test_a_snake_case_tool_result_that_is_not_one_string_is_read_as_compact_json() -> None:
    body = {  # a conversation the API accepts: the function response answers the call before it
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {"role": "model", "parts": [{"function_call": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"function_response": {"name": "f", "response": {"t": 21, "u": "C"}}}]},
        ]
    }
    [result] = send(body).requests[0].tool_results
    assert tool_result_text(result) == '{"t":21,"u":"C"}'


def test_a_snake_case_stream_is_answered_in_camel_case_as_gemini_answers() -> None:
    stub = send(SNAKE_BODY, ":streamGenerateContent?alt=sse", [{"tool": {"name": "weather", "input": {}}}])
    record = stub.requests[0]
    assert record.stream is True
    assert record.tool_names == ["weather", "time"]
    stub = ScriptTransport([{"tool": {"name": "weather", "input": {}}}])
    with httpx2.Client(transport=stub) as http:
        text = http.post(f"{URL}:generateContent", json=SNAKE_BODY).text
    assert '"functionCall"' in text
    assert "function_call" not in text
    assert '"finishReason"' in text
