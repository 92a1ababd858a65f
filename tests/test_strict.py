"""Strict requests through the real SDKs: what the real API refuses, the stub refuses with the provider's
own error (the exception production raises), consuming no turn and recording a `strict` problem; and
`strict=False`, `strict_skip` and the marker turn it off."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anthropic
import openai
import pytest

from _support import ANTHROPIC_HX, STACKS, anthropic_client, examples, openai_client
from wirescript import ScriptTransport
from wirescript.errors import ScriptError
from wirescript.recorded import OVERFLOW_KINDS
from wirescript.strict import DOCS_PAGE, RULES

pytest_plugins = ["pytester"]

FIRST = "Turn zero."
"""The first scripted turn: a valid request after a refused one still gets it."""

TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
WEATHER = {"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object", "properties": {}}}
CHAT_CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}


def gemini_client(stub: ScriptTransport) -> Any:
    pytest.importorskip("google.genai")
    from test_gemini import gemini_client as make

    return make(stub)


# --- one bad request and one good request per wire, through the real SDK --------------------------


def anthropic_call(stub: ScriptTransport, messages: list[Any], **extra: Any) -> str:
    reply = anthropic_client(stub).messages.create(model="claude-test", max_tokens=64, messages=messages, **extra)
    return str(reply.content[0].text)


def chat_call(stub: ScriptTransport, messages: list[Any], **extra: Any) -> str:
    reply = openai_client(stub).chat.completions.create(model="gpt-test", messages=messages, **extra)
    return str(reply.choices[0].message.content)


def responses_call(stub: ScriptTransport, items: Any, **extra: Any) -> str:
    return str(openai_client(stub).responses.create(model="gpt-test", input=items, **extra).output_text)


def gemini_call(stub: ScriptTransport, contents: Any) -> str:
    return str(gemini_client(stub).models.generate_content(model="gemini-test", contents=contents).text)


def gemini_error() -> type[Exception]:
    pytest.importorskip("google.genai")
    from google.genai import errors

    return errors.ClientError


@dataclass(frozen=True)
class Case:
    id: str
    rule: str
    bad: Callable[[ScriptTransport], Any]
    good: Callable[[ScriptTransport], str]
    error: Callable[[], type[Exception]]
    message: str
    status: int = 400

    def __str__(self) -> str:
        return self.id


USER = {"role": "user", "content": "Hi"}


def anthropic_good(stub: ScriptTransport) -> str:
    return anthropic_call(stub, [USER])


def chat_good(stub: ScriptTransport) -> str:
    return chat_call(stub, [USER])


def responses_good(stub: ScriptTransport) -> str:
    return responses_call(stub, "Hi")


def gemini_good(stub: ScriptTransport) -> str:
    return gemini_call(stub, "Hi")


CASES = [
    Case(
        "anthropic-tool-use-without-result",
        "anthropic.tool-use-without-result",
        lambda stub: anthropic_call(
            stub,
            [USER, {"role": "assistant", "content": [TOOL_USE]}, {"role": "user", "content": "Forgot the result."}],
            tools=[WEATHER],
        ),
        anthropic_good,
        lambda: anthropic.BadRequestError,
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each "
        "`tool_use` block must have a corresponding `tool_result` block in the next message.",
    ),
    Case(
        "anthropic-system-role",
        "anthropic.system-role-misplaced",
        lambda stub: anthropic_call(stub, [{"role": "system", "content": "Be brief."}, USER]),
        anthropic_good,
        lambda: anthropic.BadRequestError,
        'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" '
        "as an input message role.",
    ),
    Case(
        "chat-tool-calls-not-answered",
        "openai_chat.tool-calls-without-results",
        lambda stub: chat_call(
            stub,
            [USER, {"role": "assistant", "content": None, "tool_calls": [CHAT_CALL]}, {"role": "user", "content": "?"}],
        ),
        chat_good,
        lambda: openai.BadRequestError,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
        "The following tool_call_ids did not have response messages: call_1",
    ),
    Case(
        "responses-unknown-previous-response",
        "openai_responses.previous-response-not-found",
        lambda stub: responses_call(stub, "Hi", previous_response_id="resp_9999"),
        responses_good,
        lambda: openai.NotFoundError,
        "Previous response with id 'resp_9999' not found.",
        status=404,
    ),
    Case(
        "responses-output-without-call",
        "openai_responses.output-without-call",
        lambda stub: responses_call(
            stub, [USER, {"type": "function_call_output", "call_id": "call_404", "output": "Sunny"}]
        ),
        responses_good,
        lambda: openai.BadRequestError,
        "No tool call found for function call output with call_id call_404.",
    ),
    Case(
        "gemini-function-response-position",
        "gemini.function-response-position",
        lambda stub: gemini_call(
            stub,
            [{"role": "user", "parts": [{"function_response": {"name": "get_weather", "response": {"r": "Sunny"}}}]}],
        ),
        gemini_good,
        gemini_error,
        "Please ensure that function response turn comes immediately after a function call turn.",
    ),
    Case(
        "any-gemini-body-on-messages",
        "any.body-for-another-wire",
        lambda stub: anthropic_call(
            stub, [USER], extra_body={"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
        ),
        anthropic_good,
        lambda: anthropic.BadRequestError,
        "contents: Extra inputs are not permitted (the body looks meant for Gemini generateContent, not Anthropic "
        "Messages (POST /v1/messages))",
    ),
    Case(
        "any-stream-yes",
        "any.field-type",
        lambda stub: chat_call(stub, [USER], extra_body={"stream": "yes"}),
        chat_good,
        lambda: openai.BadRequestError,
        "Invalid type for 'stream': expected a boolean, but got a string instead.",
    ),
]


def provider_message(exc: Exception) -> str:
    """The error message in the provider's envelope, as the SDK exception carries it."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):  # anthropic: the whole envelope; openai: its `error` object
        inner = body.get("error", body)
        return str(inner["message"])
    return str(getattr(exc, "message", exc))  # google-genai ClientError


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_strict_rule_refuses_with_the_providers_own_error_and_consumes_no_turn(case: Case) -> None:
    stub = ScriptTransport([FIRST])
    with pytest.raises(case.error()) as caught:
        case.bad(stub)
    message = provider_message(caught.value)
    assert message.startswith(case.message), message
    assert message.endswith(
        f'(wirescript strict rule {case.rule}; turn it off with strict_skip=["{case.rule}"]: {DOCS_PAGE})'
    )
    assert getattr(caught.value, "status_code", getattr(caught.value, "code", None)) == case.status
    (refused,) = stub.requests  # not retried: `x-should-retry: false` and a 4xx
    assert refused.turn_index is None
    (problem,) = stub.problems
    assert (problem.kind, problem.index) == ("strict", 0)
    assert f"(strict rule {case.rule}): {case.message}" in problem.reason
    assert f'strict_skip=["{case.rule}"]' in problem.reason
    assert stub.overflow == 1  # no scripted turn answered it
    # No turn was consumed: the next valid request gets turn 0.
    assert case.good(stub) == FIRST
    assert stub.requests[1].turn_index == 0
    assert stub.pending == []
    with pytest.raises(AssertionError, match=rf"strict rule {case.rule}"):
        stub.check()


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("off", ["strict=False", "strict_skip"])
def test_strict_false_and_strict_skip_let_the_request_through(case: Case, off: str) -> None:
    options: dict[str, Any] = {"strict": False} if off == "strict=False" else {"strict_skip": [case.rule]}
    stub = ScriptTransport([FIRST], **options)
    case.bad(stub)
    assert stub.problems == []
    assert stub.requests[0].turn_index == 0


def test_the_headers_say_do_not_retry_and_openai_gets_the_param_and_code() -> None:
    stub = ScriptTransport([FIRST])
    with pytest.raises(openai.NotFoundError) as caught:
        responses_call(stub, "Hi", previous_response_id="resp_9999")
    exc = caught.value
    assert exc.response.headers["x-should-retry"] == "false"
    assert (exc.type, exc.param, exc.code) == (
        "invalid_request_error",
        "previous_response_id",
        "previous_response_not_found",
    )
    with pytest.raises(openai.BadRequestError) as bad:
        responses_call(stub, [USER, {"type": "function_call_output", "call_id": "call_404", "output": "x"}])
    assert (bad.value.param, bad.value.code) == ("input", None)


def test_anthropic_and_gemini_get_their_own_envelopes() -> None:
    stub = ScriptTransport([FIRST])
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_call(stub, [{"role": "system", "content": "Be brief."}, USER])
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert "details" not in body["error"]  # the real API's envelope: no wirescript error code
    assert caught.value.response.headers["x-should-retry"] == "false"
    error = gemini_error()
    with pytest.raises(error) as gemini:
        gemini_call(stub, [{"role": "tool", "parts": [{"text": "Hi"}]}])
    exc: Any = gemini.value
    assert (exc.code, exc.status) == (400, "INVALID_ARGUMENT")
    assert exc.message.startswith("Please use a valid role: user, model.")
    assert exc.details == {"error": {"code": 400, "message": exc.message, "status": "INVALID_ARGUMENT"}}


def test_a_responses_chain_continues_a_stored_response_and_refuses_an_unstored_one() -> None:
    stub = ScriptTransport([{"tool": {"name": "get_weather", "input": {}}}, "Sunny.", "Again."])
    client = openai_client(stub)
    tools: Any = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    first = client.responses.create(model="gpt-test", input="Weather?", tools=tools)
    call = first.output[0]
    # The stored response's function_call is answered: accepted.
    second = client.responses.create(
        model="gpt-test",
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "Sunny"}],
    )
    assert second.output_text == "Sunny."
    # Continuing the tool call without its output: the real API's 400.
    with pytest.raises(openai.BadRequestError, match="No tool output found for function call"):
        client.responses.create(model="gpt-test", previous_response_id=first.id, input="And?")
    # `store: false` responses are not stored, so they cannot be continued: 404.
    unstored = client.responses.create(model="gpt-test", input="Hi", store=False)
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="gpt-test", previous_response_id=unstored.id, input="And?")
    assert [p.kind for p in stub.problems] == ["strict", "strict"]


def test_a_threaded_anthropic_request_is_checked_against_its_thread() -> None:
    from _support import ANTHROPIC_MAJOR

    if ANTHROPIC_MAJOR < 1:
        pytest.skip("server-held threads are anthropic 2.x")
    stub = ScriptTransport([{"tool": {"name": "get_weather", "input": {}}}, FIRST])
    client = anthropic_client(stub)
    params: dict[str, Any] = {"model": "claude-test", "max_tokens": 64, "tools": [WEATHER]}
    first = client.messages.create(**params, messages=[USER], extra_body={"thread": {"type": "create"}})
    thread = {"type": "continue", "previous_message_id": first.id}
    with pytest.raises(anthropic.BadRequestError, match="`tool_use` ids were found without `tool_result`"):
        client.messages.create(
            **params, messages=[{"role": "user", "content": "Forgot."}], extra_body={"thread": thread}
        )
    result = {"type": "tool_result", "tool_use_id": first.content[0].id, "content": "Sunny"}
    reply = client.messages.create(
        **params, messages=[{"role": "user", "content": [result]}], extra_body={"thread": thread}
    )
    assert reply.content[0].text == FIRST


THINKING = {"type": "enabled", "budget_tokens": 1024}


def tool_loop(stub: ScriptTransport, *, drop_thinking: bool) -> str:
    """A tool loop with thinking enabled that passes back what it got (or drops its thinking blocks)."""
    client = anthropic_client(stub)
    messages: list[Any] = [USER]
    params: dict[str, Any] = {"model": "claude-test", "max_tokens": 2048, "tools": [WEATHER], "thinking": THINKING}
    reply = client.messages.create(**params, messages=messages)
    blocks = [b.model_dump(exclude_none=True) for b in reply.content]
    if drop_thinking:
        blocks = [b for b in blocks if b["type"] != "thinking"]
    results = [
        {"type": "tool_result", "tool_use_id": b["id"], "content": "Sunny"} for b in blocks if b["type"] == "tool_use"
    ]
    messages += [{"role": "assistant", "content": blocks}, {"role": "user", "content": results}]
    return str(client.messages.create(**params, messages=messages).content[-1].text)


def test_a_tool_loop_that_lost_its_thinking_block_is_accepted_as_the_api_degrades_it() -> None:
    """The extended-thinking docs' graceful degradation: the API strips or disables thinking, it does not refuse."""
    stub = ScriptTransport([{"thinking": "Let me look.", "tool": {"name": "get_weather", "input": {}}}, FIRST])
    assert tool_loop(stub, drop_thinking=True) == FIRST
    assert stub.problems == []


def test_thinking_not_first_lets_through_a_scripted_turn_without_thinking_passed_back_faithfully() -> None:
    """The real model always thinks first with thinking on; a script that leaves it out is not the app's bug."""
    stub = ScriptTransport([{"tool": {"name": "get_weather", "input": {}}}, FIRST])
    assert tool_loop(stub, drop_thinking=False) == FIRST
    assert stub.problems == []


def test_the_options_are_validated_at_construction() -> None:
    with pytest.raises(ScriptError, match=r"strict: expected True or False, got str 'no'"):
        ScriptTransport([FIRST], strict="no")  # type: ignore[arg-type]
    with pytest.raises(
        ScriptError,
        match=r"strict_skip: unknown strict rule 'anthropic.tool-use-without-results'; "
        r"did you mean 'anthropic.tool-use-without-result'\?",
    ):
        ScriptTransport([FIRST], strict_skip=["anthropic.tool-use-without-results"])
    with pytest.raises(
        ScriptError, match=r"strict_skip: expected a list of strict rule ids, got str .*write strict_skip=\["
    ):
        ScriptTransport([FIRST], strict_skip="any.field-type")
    stub = ScriptTransport([FIRST], strict_skip=("any.field-type",))
    assert (stub.strict, stub.strict_skip) == (True, frozenset({"any.field-type"}))


def test_a_failing_check_is_a_loud_problem_never_a_connection_error() -> None:
    from wirescript.wires import AnthropicWire

    class Broken(AnthropicWire):
        def check(self, record: Any, *, skip: frozenset[str]) -> Any:
            raise RuntimeError("boom")

    stub = ScriptTransport([FIRST], wires=[Broken()])
    with pytest.raises(anthropic.BadRequestError, match="boom"):
        anthropic_good(stub)
    assert [p.kind for p in stub.problems] == ["render_error"]
    assert stub.pending  # nothing consumed


def test_strict_is_an_overflow_kind_and_every_rule_is_reachable_by_id() -> None:
    assert "strict" in OVERFLOW_KINDS
    assert all(rule_id == rule.id for rule_id, rule in RULES.items())


# --- the pytest plugin: the marker and the fixture's arguments ------------------------------------

# `hx`: the HTTP library the installed anthropic runs on (httpx2 for anthropic >= 1, httpx for 0.x). One line, as
# the test checks line numbers; only it is an f-string, the rest holds literal braces.
PLUGIN_TESTS = (
    f"import anthropic, pytest, {ANTHROPIC_HX.__name__} as hx\n"
    """from wirescript import ScriptTransport

BAD = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]

def call(stub):
    client = anthropic.Anthropic(api_key="test-key", http_client=hx.Client(transport=stub))
    try:
        return client.messages.create(model="claude-test", max_tokens=8, messages=BAD).content[0].text
    except anthropic.BadRequestError:
        return "swallowed"

def test_default_is_strict(wirescript):
    assert call(wirescript(["ok"])) == "swallowed"

@pytest.mark.wirescript(strict=False)
def test_marker_off(wirescript):
    assert call(wirescript(["ok"])) == "ok"

@pytest.mark.wirescript(strict_skip=["anthropic.system-role-misplaced"])
def test_marker_skip(wirescript):
    assert call(wirescript(["ok"])) == "ok"

@pytest.mark.wirescript(strict=False)
def test_fixture_argument_wins(wirescript):
    assert call(wirescript(["ok"], strict=True)) == "swallowed"

def test_fixture_argument_off(wirescript):
    assert call(wirescript(["ok"], strict_skip=["anthropic.system-role-misplaced"])) == "ok"

@pytest.mark.wirescript(strict=False)
class TestClosestWins:
    @pytest.mark.wirescript(strict=True)
    def test_method_marker(self, wirescript):
        assert call(wirescript(["ok"])) == "swallowed"

@pytest.mark.wirescript(strict_skip=["anthropic.system-role-misplacd"])
def test_typo(wirescript):
    pass

@pytest.mark.wirescript(strict="no")
def test_not_a_bool(wirescript):
    pass
"""
)


def test_the_marker_and_the_fixture_arguments_turn_strict_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_app=PLUGIN_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "0", "-p", "no:langsmith_plugin")  # langsmith's is slow
    result.assert_outcomes(passed=6, errors=5)  # 3 of the passed fail at teardown
    text = result.stdout.str()
    # The swallowed refusals fail at teardown, naming the rule.
    for name in ("test_default_is_strict", "test_fixture_argument_wins", "test_method_marker"):
        assert f"ERROR at teardown of {name}" in text or f"at teardown of TestClosestWins.{name}" in text
    result.stdout.fnmatch_lines(
        [
            "*requests[[]0[]] POST /v1/messages model='claude-test' last=user:'Hi'",
            (
                "    was refused as the real API would refuse it (strict rule anthropic.system-role-misplaced): "
                'messages: Unexpected role "system".*strict_skip=[[]"anthropic.system-role-misplaced"[]]*'
            ),
            (
                "(If the app is meant to get these errors, mark the test "
                "@pytest.mark.wirescript(allow=[[]'strict'[]]); a strict refusal is what the real API would answer "
                "too: fix the request, or turn its rule off with strict_skip as its line says.)"
            ),
        ]
    )
    assert (
        "test_app.py:37: @pytest.mark.wirescript(strict_skip=['anthropic.system-role-misplacd']): strict_skip: "
        "unknown strict rule 'anthropic.system-role-misplacd'; did you mean 'anthropic.system-role-misplaced'?"
    ) in text
    assert "test_app.py:41: @pytest.mark.wirescript(strict='no'): strict must be True or False, got str 'no'" in text


# --- hostile bodies: strict mode refuses or serves, never raises ---------------------------------


@pytest.mark.parametrize("wire", ["anthropic", "openai_chat", "openai_responses", "gemini"])
def test_hostile_bodies_are_refused_with_the_rules_status_or_served_never_raised(wire: str) -> None:
    from hypothesis import HealthCheck, given, settings

    from test_hostile import HX, PATHS, bodies

    stub = ScriptTransport(lambda request: {"text": "ok", "tool": {"name": "f", "input": {"a": 1}}})
    path = PATHS[wire].replace("streamGenerateContent", "generateContent")
    seen: dict[str, int] = {}

    cases = examples(60)  # 60 under the `ci` profile, fewer under the quick default

    @settings(max_examples=cases, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(content=bodies)
    def check(content: bytes) -> None:
        before = len(stub.requests)
        response = http.post("https://stub.test" + path, content=content, headers={"content-type": "application/json"})
        record = stub.requests[-1]
        assert len(stub.requests) == before + 1
        problem: Any = record.problem
        if problem is not None and problem.kind == "strict":
            rule = problem.reason.split("(strict rule ", 1)[1].split(")", 1)[0]
            assert response.status_code == RULES[rule].status
            assert response.headers["x-should-retry"] == "false"
            assert f"(wirescript strict rule {rule}; " in response.text
        else:
            assert response.status_code in (200, 400), response.text
        kind = "served" if problem is None else problem.kind
        seen[kind] = seen.get(kind, 0) + 1

    with HX.Client(transport=stub) as http:
        check()
    assert seen.get("strict", 0) > cases // 3, seen
    assert "render_error" not in seen, [p for p in stub.problems if p.kind == "render_error"][:3]


# --- `wirescript serve`: the same options on the command line -------------------------------------


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "no-strict"])
def test_the_serve_command_is_strict_unless_told_otherwise(tmp_path: Any, strict: bool) -> None:
    import subprocess
    import sys

    pytest.importorskip("uvicorn")
    script = tmp_path / "script.json"
    script.write_text('["Hello!"]', encoding="utf-8")
    options = [] if strict else ["--no-strict"]
    command = [sys.executable, "-m", "wirescript", "serve", str(script), *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        body = {"model": "m", "max_tokens": 8, "messages": []}
        with STACKS[0].Client(base_url=base_url) as http:
            response = http.post("/v1/messages", json=body)
    finally:
        process.terminate()
        process.communicate(timeout=30)
    if strict:
        assert response.status_code == 400
        assert response.json()["error"]["message"].startswith("messages: at least one message is required")
    else:
        assert response.status_code == 200


def test_the_serve_command_refuses_an_unknown_rule_before_printing_any_url(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from wirescript.cli import main

    script = tmp_path / "script.json"
    script.write_text('["Hello!"]', encoding="utf-8")
    assert main(["serve", str(script), "--strict-skip", "any.field-typ"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(
        "wirescript serve: strict_skip: unknown strict rule 'any.field-typ'; did you mean 'any.field-type'?"
    )
