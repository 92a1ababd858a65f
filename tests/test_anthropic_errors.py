"""Error turns, the SDK's real retry loop, and loud exhaustion, through the real anthropic SDK."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import anthropic
import pytest

from _support import ANTHROPIC_MAJOR, anthropic_client, thread_sleeps
from wirescript import ScriptTransport

PARAMS: dict[str, Any] = {"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}

A2 = ANTHROPIC_MAJOR >= 1
# status -> (default error.type, exception class name on this SDK major); see the SDK wire facts, section 3.
STATUSES: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "BadRequestError"),
    401: ("authentication_error", "AuthenticationError"),
    402: ("billing_error", "PaymentRequiredError" if A2 else "APIStatusError"),
    403: ("permission_error", "PermissionDeniedError"),
    404: ("not_found_error", "NotFoundError"),
    408: ("timeout_error", "RequestTimeoutError" if A2 else "APIStatusError"),
    409: ("invalid_request_error", "ConflictError"),
    413: ("request_too_large", "ContentTooLargeError" if A2 else "RequestTooLargeError"),
    422: ("invalid_request_error", "UnprocessableEntityError"),
    429: ("rate_limit_error", "RateLimitError"),
    500: ("api_error", "InternalServerError"),
    502: ("api_error", "InternalServerError"),
    503: ("api_error", "ServiceUnavailableError" if A2 else "InternalServerError"),
    504: ("timeout_error", "GatewayTimeoutError" if A2 else "InternalServerError"),
    529: ("overloaded_error", "OverloadedError"),
}


@pytest.mark.parametrize("status", list(STATUSES))
def test_every_error_status_raises_the_sdks_typed_error(status: int) -> None:
    error_type, class_name = STATUSES[status]
    stub = ScriptTransport([{"error": {"status": status}}])
    client = anthropic_client(stub, max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as info:
        client.messages.create(**PARAMS)
    error = info.value
    assert type(error).__name__ == class_name
    assert error.status_code == status
    assert error.request_id == "req_0000"
    # The body carries the request id too, as the API's does (the SDK's `ErrorResponse.request_id`).
    assert error.body == {
        "type": "error",
        "error": {"type": error_type, "message": f"wirescript: scripted {status} error"},
        "request_id": "req_0000",
    }
    assert stub.overflow == 0
    assert stub.requests[0].turn_index == 0


def test_an_error_turn_carries_scripted_type_message_code_and_headers() -> None:
    stub = ScriptTransport(
        [
            {
                "error": {
                    "status": 400,
                    "type": "invalid_request_error",
                    "message": "prompt is too long",
                    "code": "prompt_too_long",
                    "headers": {"X-Custom": "1"},
                }
            }
        ]
    )
    with pytest.raises(anthropic.BadRequestError) as info:
        anthropic_client(stub).messages.create(**PARAMS)
    assert info.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long",
            "details": {"error_code": "prompt_too_long"},
        },
        "request_id": "req_0000",
    }
    assert info.value.response.headers["x-custom"] == "1"


def test_retryable_errors_run_the_sdks_real_retry_loop_without_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps = thread_sleeps(monkeypatch)
    stub = ScriptTransport([{"error": {"status": 429}}, {"error": {"status": 529}}, {"text": "finally"}])
    message = anthropic_client(stub, max_retries=2).messages.create(**PARAMS)
    assert message.content[0].text == "finally"
    assert [r.retry_count for r in stub.requests] == [0, 1, 2]
    # retry-after-ms: 1 replaced the SDK's 0.375 s+ backoff on both retries.
    assert sleeps == [0.001, 0.001]
    assert stub.overflow == 0


def test_retries_stop_at_max_retries_and_the_last_error_surfaces() -> None:
    stub = ScriptTransport([{"error": {"status": 500}}] * 2 + ["unreached"])
    with pytest.raises(anthropic.InternalServerError):
        anthropic_client(stub, max_retries=1).messages.create(**PARAMS)
    assert len(stub.requests) == 2
    assert [p.turn.text for p in stub.pending] == ["unreached"]


def test_a_scripted_retry_after_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps = thread_sleeps(monkeypatch)
    stub = ScriptTransport([{"error": {"status": 429, "headers": {"retry-after-ms": "20"}}}, "ok"])
    anthropic_client(stub).messages.create(**PARAMS)
    assert sleeps == [0.02]


def test_async_retries_work_the_same() -> None:
    async def main() -> Any:
        stub = ScriptTransport([{"error": {"status": 503}}, "ok"])
        client = anthropic_client(stub, is_async=True)
        message = await client.messages.create(**PARAMS)
        return stub, message

    stub, message = asyncio.run(main())
    assert message.content[0].text == "ok"
    assert [r.retry_count for r in stub.requests] == [0, 1]


# ---------------------------------------------------------------- loud exhaustion


def test_a_request_past_the_end_gets_a_non_retried_error_naming_it() -> None:
    stub = ScriptTransport(["only one"])
    client = anthropic_client(stub, max_retries=2)
    client.messages.create(**PARAMS)
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(**PARAMS)
    message = (
        "wirescript: requests[1] POST /v1/messages (model 'claude-test') is past the end of the script: it has "
        "1 turn(s), all served. The app made a model call the script does not expect; add a turn for it or find "
        "the extra call. It is the 2nd request (requests[1])."
    )
    assert info.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": message,
            "details": {"error_code": "wirescript_unscripted"},
        },
        "request_id": "req_0001",
    }
    assert len(stub.requests) == 2  # not retried, although max_retries=2
    assert stub.overflow == 1
    assert stub.problems == [message.removeprefix("wirescript: ")]
    assert stub.requests[1].problem == message.removeprefix("wirescript: ")


def test_an_overflow_is_counted_even_when_the_app_swallows_the_error() -> None:
    stub = ScriptTransport([])
    with contextlib.suppress(anthropic.APIError):  # the app under test hides it
        anthropic_client(stub).messages.create(**PARAMS)
    assert stub.overflow == 1
    with pytest.raises(AssertionError) as info:
        stub.check()
    assert str(info.value) == (
        "wirescript: 1 request(s) were not answered as scripted:\n"
        "  - requests[0] POST /v1/messages model='claude-test' last=user:'Hi'\n"
        "    is past the end of the script: it has 0 turn(s), all served. The app made a model call the script "
        "does not expect; add a turn for it or find the extra call. It is the 1st request (requests[0])."
    )


def test_an_unknown_endpoint_is_loud_and_consumes_nothing() -> None:
    stub = ScriptTransport(["kept"])
    client = anthropic_client(stub)
    with pytest.raises(anthropic.NotFoundError) as info:
        client.beta.files.list()
    assert "no wire serves this endpoint" in str(info.value)
    # The same machine-readable code as the other loud errors.
    assert info.value.body["error"]["details"] == {"error_code": "wirescript_unscripted"}
    assert stub.overflow == 1
    assert stub.requests[0].provider is None
    assert stub.problems[0].startswith(
        "requests[0] GET /v1/files: no wire serves this endpoint (known: POST …/v1/messages"
    )
    assert stub.problems[0].endswith("). Nothing was consumed from the script.")
    assert [p.turn.text for p in stub.pending] == ["kept"]
    assert client.messages.create(**PARAMS).content[0].text == "kept"


def test_check_lists_unused_turns_unless_told_not_to() -> None:
    stub = ScriptTransport(["used", {"tool": {"name": "f"}}, {"error": {"status": 429}}])
    anthropic_client(stub).messages.create(**PARAMS)
    with pytest.raises(AssertionError) as info:
        stub.check()
    assert str(info.value) == (
        "wirescript: 2 scripted turn(s) were never requested:\n  - script[1]: tool f\n  - script[2]: error 429"
    )
    stub.check(unused_turns=False)
