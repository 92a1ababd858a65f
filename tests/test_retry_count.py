"""`retry_count` for clients that send no `x-stainless-retry-count`: derived from what the stub answered.

A request counts one more than an identical earlier one (method, URL, body bytes) that the stub
answered with a retryable error or a connection fault before the response, and the next request to
that endpoint; any other request counts 0.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from _support import anthropic_client
from wirescript import ScriptTransport

httpx2 = pytest.importorskip("httpx2")  # the legacy run (anthropic 0.x on httpx) has none
genai = pytest.importorskip("google.genai")

from google.genai import types  # noqa: E402

GEMINI = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
BODY = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
INSTANT = types.HttpRetryOptions(attempts=4, initial_delay=0, jitter=0)


def post(stub: ScriptTransport, bodies: list[dict[str, Any]], url: str = GEMINI) -> list[int]:
    """Send each body in turn with a bare httpx2 client (no retry header); the statuses."""
    with httpx2.Client(transport=stub) as http:
        return [http.post(url, json=body).status_code for body in bodies]


def test_google_genai_retries_are_counted_from_the_errors_the_stub_sent() -> None:
    stub = ScriptTransport([{"error": {"status": 429}}, {"error": {"status": 503}}, "ok", "again"])
    client = genai.Client(
        api_key="test-key",
        http_options=types.HttpOptions(httpx_client=httpx2.Client(transport=stub), retry_options=INSTANT),
    )
    assert client.models.generate_content(model="gemini-2.5-flash", contents="Hi").text == "ok"
    # The same question asked again after the success is a new first attempt, not a retry.
    assert client.models.generate_content(model="gemini-2.5-flash", contents="Hi").text == "again"
    assert "x-stainless-retry-count" not in stub.requests[0].headers
    assert [r.retry_count for r in stub.requests] == [0, 1, 2, 0]


@pytest.mark.parametrize(
    ("first", "counts"),
    [
        ({"error": {"status": 429}}, [0, 1]),
        ({"error": {"status": 503}}, [0, 1]),
        ({"text": "lost", "fault": {"disconnect_after": 0}}, [0, 1]),
        ({"text": "lost", "fault": {"timeout_after": 0}}, [0, 1]),
        ({"error": {"status": 400}}, [0, 0]),  # not retryable: a repeat is the app's own new request
        ({"error": {"status": 409}}, [0, 0]),  # Gemini's wire does not call 409 retryable (google-genai)
        ({"error": {"status": 429, "headers": {"x-should-retry": "false"}}}, [0, 0]),
        ({"error": {"status": 400, "headers": {"x-should-retry": "true"}}}, [0, 1]),
        ("a success", [0, 0]),
    ],
)
def test_only_an_identical_request_after_a_retryable_failure_counts_as_a_retry(first: Any, counts: list[int]) -> None:
    stub = ScriptTransport([first, "ok"])
    with httpx2.Client(transport=stub) as http:
        for _ in range(2):
            with contextlib.suppress(httpx2.RemoteProtocolError, httpx2.ReadTimeout):
                http.post(GEMINI, json=BODY)
    assert [r.retry_count for r in stub.requests] == counts


def test_an_identical_request_after_another_came_to_that_endpoint_is_a_first_attempt() -> None:
    stub = ScriptTransport([{"error": {"status": 429}}, "a", "b", "c", "d"])
    other = GEMINI.replace("gemini-2.5-flash", "gemini-2.5-pro")
    post(stub, [BODY, {"contents": []}], GEMINI)
    post(stub, [BODY], GEMINI)
    post(stub, [BODY], other)
    post(stub, [BODY], GEMINI)
    assert [r.retry_count for r in stub.requests] == [0, 0, 0, 0, 0]


def test_a_request_to_another_endpoint_in_between_does_not_hide_the_retry() -> None:
    stub = ScriptTransport([{"error": {"status": 429}}, "x", {"error": {"status": 500}}, "ok"])
    other = GEMINI.replace("gemini-2.5-flash", "gemini-2.5-pro")
    post(stub, [BODY], GEMINI)
    post(stub, [BODY], other)
    post(stub, [BODY, BODY], GEMINI)
    assert [r.retry_count for r in stub.requests] == [0, 0, 1, 2]


def test_a_refusal_is_never_followed_by_a_retry_label() -> None:
    stub = ScriptTransport([])
    assert post(stub, [BODY, BODY]) == [400, 400]
    assert [r.retry_count for r in stub.requests] == [0, 0]


def test_the_sdks_own_header_wins_and_is_not_derived() -> None:
    stub = ScriptTransport([{"error": {"status": 429}}, {"error": {"status": 500}}, "ok"])
    client = anthropic_client(stub, max_retries=2)
    client.messages.create(model="m", max_tokens=16, messages=[{"role": "user", "content": "Hi"}])
    assert [r.retry_count for r in stub.requests] == [0, 1, 2]
    assert [r.headers["x-stainless-retry-count"] for r in stub.requests] == ["0", "1", "2"]
    # A client that resends its own header unchanged keeps the header's count.
    stub = ScriptTransport([{"error": {"status": 429}}, "ok"])
    with httpx2.Client(transport=stub, headers={"x-stainless-retry-count": "0"}) as http:
        http.post("https://api.anthropic.com/v1/messages", json={"model": "m", "max_tokens": 1, "messages": []})
        http.post("https://api.anthropic.com/v1/messages", json={"model": "m", "max_tokens": 1, "messages": []})
    assert [r.retry_count for r in stub.requests] == [0, 0]


def test_a_function_script_that_answers_an_error_is_counted_too() -> None:
    answers = iter([{"error": {"status": 503}}, "ok"])
    stub = ScriptTransport(lambda record: next(answers))
    post(stub, [BODY, BODY])
    assert [r.retry_count for r in stub.requests] == [0, 1]
