"""The error catalog: every case, through the real SDK, raises the class the catalog names."""

from __future__ import annotations

import re
import sys
from typing import Any

import anthropic
import pytest

from _support import ANTHROPIC_MAJOR, anthropic_client, openai_client
from wirescript import ErrorCase, ScriptTransport, anthropic_errors, gemini_errors, openai_errors
from wirescript.pytest_plugin import pytest_make_parametrize_id

ASK: dict[str, Any] = {"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}
CHAT: dict[str, Any] = {"model": "gpt-test", "messages": [{"role": "user", "content": "Hi"}]}

# The class each case raises, per SDK generation (see the SDK wire facts, section 3).
ANTHROPIC_CLASSES = {
    "400-invalid_request_error": "BadRequestError",
    "401-authentication_error": "AuthenticationError",
    "402-billing_error": "PaymentRequiredError" if ANTHROPIC_MAJOR >= 1 else "APIStatusError",
    "403-permission_error": "PermissionDeniedError",
    "404-not_found_error": "NotFoundError",
    "413-request_too_large": "ContentTooLargeError" if ANTHROPIC_MAJOR >= 1 else "RequestTooLargeError",
    "429-rate_limit_error": "RateLimitError",
    "500-api_error": "InternalServerError",
    "504-timeout_error": "GatewayTimeoutError" if ANTHROPIC_MAJOR >= 1 else "InternalServerError",
    "529-overloaded_error": "OverloadedError",
    "stream-overloaded_error": "APIStatusError",
}
OPENAI_CLASSES = {
    "400-invalid_request_error": "BadRequestError",
    "401-invalid_api_key": "AuthenticationError",
    "403-unsupported_country_region_territory": "PermissionDeniedError",
    "404-model_not_found": "NotFoundError",
    "422-invalid_request_error": "UnprocessableEntityError",
    "429-rate_limit_exceeded": "RateLimitError",
    "429-insufficient_quota": "RateLimitError",
    "500-server_error": "InternalServerError",
    "503-server_error": "InternalServerError",
    "stream-server_error": "APIError",
}
GEMINI_CLASSES = {
    "400-INVALID_ARGUMENT": "ClientError",
    "400-FAILED_PRECONDITION": "ClientError",
    "403-PERMISSION_DENIED": "ClientError",
    "404-NOT_FOUND": "ClientError",
    "429-RESOURCE_EXHAUSTED": "ClientError",
    "500-INTERNAL": "ServerError",
    "503-UNAVAILABLE": "ServerError",
    "504-DEADLINE_EXCEEDED": "ServerError",
    "stream-UNAVAILABLE": "ServerError",
}


def test_each_catalog_names_its_cases_and_classes_for_the_installed_sdk() -> None:
    assert {c.id: c.exception.__name__ for c in anthropic_errors()} == ANTHROPIC_CLASSES
    assert {c.id: c.exception.__name__ for c in openai_errors()} == OPENAI_CLASSES
    assert [c.id for c in openai_errors(api="responses")] == [c.id for c in openai_errors()][:-1]
    assert [c.id for c in anthropic_errors(in_stream=False)] == list(ANTHROPIC_CLASSES)[:-1]
    assert [c.id for c in openai_errors(in_stream=False)] == list(OPENAI_CLASSES)[:-1]
    assert [c.id for c in gemini_errors()] == list(GEMINI_CLASSES)
    assert [c.id for c in gemini_errors(in_stream=False)] == list(GEMINI_CLASSES)[:-1]
    for case in [*anthropic_errors(), *openai_errors(), *gemini_errors()]:
        assert re.fullmatch(r"(\d{3}|stream)-\w+", case.id), case.id
        assert str(case) == case.id
        assert case.in_stream == case.id.startswith("stream-") == (case.status == 200)


def test_a_case_is_a_turn_and_says_how_often_the_sdk_asks() -> None:
    rate_limit = next(c for c in anthropic_errors() if c.status == 429)
    assert rate_limit.turn.model_dump(exclude_none=True) == {
        "error": {"status": 429, "type": "rate_limit_error", "message": "Your account hit a rate limit."}
    }
    assert rate_limit.retried
    assert rate_limit.attempts() == 3
    assert rate_limit.turns(max_retries=0) == [rate_limit.turn]
    assert len(rate_limit.turns(max_retries=5)) == 6
    bad_request = anthropic_errors()[0]
    assert not bad_request.retried
    assert bad_request.attempts(max_retries=5) == 1
    in_stream = anthropic_errors()[-1]
    assert not in_stream.retried
    assert in_stream.turn.model_dump(exclude_none=True) == {
        "text": "Partial answer",
        "fault": {
            "drop": (),
            "delay": 0.0,
            "first_byte_delay": 0.0,
            "stream_error": {"type": "overloaded_error", "message": "Overloaded", "after": 4},
            "malformed_tool_json": False,
        },
    }
    unavailable = next(c for c in gemini_errors() if c.id == "503-UNAVAILABLE")
    assert unavailable.retried
    assert unavailable.attempts() == 1  # google-genai retries only with retry_options
    assert unavailable.attempts(max_retries=4) == 5


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match=r"^openai_errors\(api=\.\.\.\): expected 'chat' or 'responses', got 'rest'$"):
        openai_errors(api="rest")  # type: ignore[arg-type]
    case = anthropic_errors()[6]
    with pytest.raises(ValueError, match=r"^429-rate_limit_error: max_retries must be a non-negative int, got -1$"):
        case.turns(max_retries=-1)


def test_a_missing_sdk_is_named_with_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.genai.errors", None)
    with pytest.raises(ImportError) as info:
        _ = gemini_errors()[0].exception
    assert str(info.value) == (
        "wirescript: error case '400-INVALID_ARGUMENT' needs the gemini SDK: pip install google-genai"
    )


def test_the_plugin_gives_cases_their_id_in_test_ids(request: pytest.FixtureRequest) -> None:
    case = openai_errors()[6]
    assert pytest_make_parametrize_id(request.config, case, "err") == "429-insufficient_quota"
    assert pytest_make_parametrize_id(request.config, "429", "err") is None


def ask_anthropic(client: Any, err: ErrorCase, texts: list[str]) -> None:
    """One call the way the case needs it (streamed for an in-stream case), collecting the text deltas."""
    if err.in_stream:
        with client.messages.stream(**ASK) as stream:
            texts.extend(stream.text_stream)
    else:
        client.messages.create(**ASK)


@pytest.mark.parametrize("err", anthropic_errors())
def test_anthropic_raises_the_catalogued_class(err: ErrorCase) -> None:
    stub = ScriptTransport(err.turns())
    client = anthropic_client(stub)  # the SDK's default retries: 2
    texts: list[str] = []
    with pytest.raises(anthropic.APIError) as info:
        ask_anthropic(client, err, texts)
    assert type(info.value) is err.exception
    assert isinstance(info.value, anthropic.APIStatusError)
    assert info.value.status_code == err.status
    body: dict[str, Any] = {"type": "error", "error": {"type": err.type, "message": err.message}}
    if not err.in_stream:  # an HTTP error's body names its request, as the API's does; a stream's event does not
        body["request_id"] = f"req_{err.attempts() - 1:04d}"
    assert info.value.body == body
    assert len(stub.requests) == err.attempts()
    assert not stub.pending
    assert not stub.problems
    assert texts == (["Partial"] if err.in_stream else [])


def test_serving_a_retried_error_once_leaves_the_retry_unscripted() -> None:
    err = next(c for c in anthropic_errors() if c.status == 529)
    stub = ScriptTransport([err.turn])
    with pytest.raises(anthropic.BadRequestError, match="is past the end of the script"):
        anthropic_client(stub).messages.create(**ASK)
    assert stub.overflow == 1
    stub_2 = ScriptTransport([err.turn])
    with pytest.raises(err.exception):
        anthropic_client(stub_2, max_retries=0).messages.create(**ASK)
    assert stub_2.overflow == 0


def test_the_in_stream_case_needs_a_streaming_request() -> None:
    err = anthropic_errors()[-1]
    stub = ScriptTransport([err.turn])
    with pytest.raises(anthropic.BadRequestError, match=r"fault\.stream_error needs a streamed answer"):
        anthropic_client(stub).messages.create(**ASK)
    assert stub.problems == [
        (
            "requests[0] POST /v1/messages: fault.stream_error needs a streamed answer, but the request did not ask "
            "for a stream, so the answer is one JSON body; script an 'error' turn for an HTTP error instead"
            " (an error catalog's in-stream case, id 'stream-…', reaches streaming requests only: leave it out "
            "of a non-streaming app's cases with in_stream=False, e.g. anthropic_errors(in_stream=False))"
        )
    ]


def ask_openai(client: Any, api: str, err: ErrorCase) -> None:
    if api == "responses":
        client.responses.create(model="gpt-test", input="Hi")
    elif err.in_stream:
        for _ in client.chat.completions.create(**CHAT, stream=True):
            pass
    else:
        client.chat.completions.create(**CHAT)


@pytest.mark.parametrize(
    ("api", "err"),
    [(api, err) for api in ("chat", "responses") for err in openai_errors(api=api)],  # type: ignore[arg-type]
)
def test_openai_raises_the_catalogued_class(api: str, err: ErrorCase) -> None:
    openai = pytest.importorskip("openai")
    stub = ScriptTransport(err.turns())
    client = openai_client(stub)
    with pytest.raises(openai.APIError) as info:
        ask_openai(client, api, err)
    assert type(info.value) is err.exception
    assert err.message in info.value.message  # openai 3: "Error code: N - <message>"; 2: the body repr
    assert info.value.body == {"message": err.message, "type": err.type, "param": None, "code": err.code}
    if not err.in_stream:
        assert info.value.status_code == err.status  # type: ignore[attr-defined]
    assert len(stub.requests) == err.attempts()
    assert not stub.pending
    assert not stub.problems


def test_openai_responses_streams_report_an_error_event_instead() -> None:
    pytest.importorskip("openai")
    stub = ScriptTransport([openai_errors()[-1].turn])
    events = [event.type for event in openai_client(stub).responses.create(model="gpt-test", input="Hi", stream=True)]
    assert events[-1] == "error"


def ask_gemini(client: Any, err: ErrorCase, texts: list[str | None]) -> None:
    if err.in_stream:
        texts.extend(chunk.text for chunk in client.models.generate_content_stream(model="gemini-test", contents="Hi"))
    else:
        client.models.generate_content(model="gemini-test", contents="Hi")


@pytest.mark.parametrize("err", gemini_errors())
def test_gemini_raises_the_catalogued_class(err: ErrorCase) -> None:
    genai = pytest.importorskip("google.genai")
    errors = pytest.importorskip("google.genai.errors")
    httpx2 = pytest.importorskip("httpx2")
    stub = ScriptTransport(err.turns())
    client = genai.Client(api_key="test-key", http_options={"httpx_client": httpx2.Client(transport=stub)})
    texts: list[str | None] = []
    with pytest.raises(errors.APIError) as info:
        ask_gemini(client, err, texts)
    assert type(info.value) is err.exception
    assert info.value.status == err.type
    assert info.value.message == err.message
    assert info.value.code == (503 if err.in_stream else err.status)
    assert len(stub.requests) == 1
    assert not stub.pending
    assert texts == (["Partial"] if err.in_stream else [])
