"""API keys never show: not in the repr or str of the stub or its records, not in problems, the
check() message, error answers or log records. A distinctive fake key is sent every way a
provider SDK sends one, and every output is searched for it.
"""

from __future__ import annotations

import json
import logging

import pytest

from _drivers import DRIVERS, run
from _support import STACKS
from wirescript import ScriptTransport

KEY = "wirescript-fake-key-Zq7Xw2Lm"  # distinctive, and marked fake for key scanners
HX = STACKS[0]


def outputs(stub: ScriptTransport, caught: list[BaseException]) -> str:
    """Everything a test, a log or a failure message could show about the stub and its records."""
    shown: list[str] = [repr(stub), str(stub), "\n".join(stub.problems), repr(stub.pending)]
    try:
        stub.check()
    except AssertionError as exc:
        shown.append(str(exc))
    for record in stub.requests:
        shown += [
            repr(record),
            str(record),
            repr(record.model_dump()),
            record.model_dump_json(),
            json.dumps(record.model_dump(mode="json")),
            repr(record.headers),
            repr(record.query),
            record.summary(),
            str(record.problem),
            repr(record.api_key),
            str(record.api_key),
            f"{record.api_key}",
        ]
    for exc in caught:
        shown += [str(exc), repr(exc), repr(getattr(exc, "body", None)), repr(exc.__cause__)]
    return "\n".join(shown)


def assert_no_key(text: str) -> None:
    assert KEY not in text
    assert KEY[-8:] not in text  # not even part of it


def exercise(driver_name: str, caught: list[BaseException]) -> ScriptTransport:
    """A served request, a fault the answer cannot take (a problem), and one past the script's end."""
    stub = ScriptTransport(["Hello.", {"text": "x", "fault": {"cut_after": 900}}], hold_timeout=5)
    driver = DRIVERS[driver_name]
    assert run(driver, "json", stub, api_key=KEY, max_retries=0).text == "Hello."
    before = len(caught)
    for _ in range(2):  # the problem, then the overflow
        try:
            run(driver, "helper", stub, api_key=KEY, max_retries=0)
        except Exception as exc:
            caught.append(exc)
    assert len(caught) == before + 2
    return stub


@pytest.mark.parametrize("wire", sorted(DRIVERS))
def test_the_key_an_sdk_sends_is_captured_but_never_shown(wire: str, caplog: pytest.LogCaptureFixture) -> None:
    caught: list[BaseException] = []
    with caplog.at_level(logging.DEBUG):
        stub = exercise(wire, caught)
        logging.getLogger("app").info("requests %r, stub %s, problems %s", stub.requests, stub, stub.problems)
    records = stub.requests
    assert len(records) == 3
    assert all(record.api_key == KEY for record in records)  # it was captured…
    assert records[0].api_key is not None
    assert records[0].api_key.get_secret_value() == KEY
    assert len(stub.problems) == 2
    assert_no_key(outputs(stub, caught))  # …and is shown nowhere
    wirescript_logs = [r for r in caplog.records if r.name.startswith("wirescript") or r.name == "app"]
    assert wirescript_logs
    assert_no_key("\n".join(r.getMessage() for r in wirescript_logs))


def test_sdk_debug_logs_are_searched_too(caplog: pytest.LogCaptureFixture) -> None:
    """The SDKs' own DEBUG logs, captured with the stub's, do not carry the key either."""
    caught: list[BaseException] = []
    with caplog.at_level(logging.DEBUG):
        for wire in sorted(DRIVERS):
            exercise(wire, caught)
    assert any(r.name.startswith(("anthropic", "openai")) for r in caplog.records)
    assert_no_key(caplog.text)


@pytest.mark.parametrize(
    ("headers", "params"),
    [
        ({"x-api-key": KEY}, None),
        ({"authorization": f"Bearer {KEY}"}, None),
        ({"api-key": KEY}, None),  # Azure OpenAI
        ({"x-goog-api-key": KEY}, None),
        ({}, {"key": KEY}),  # Gemini's query parameter
        ({"proxy-authorization": f"Basic {KEY}", "cookie": f"session={KEY}", "x-api-key": KEY}, {"api_key": KEY}),
    ],
    ids=["x-api-key", "bearer", "azure", "goog", "query", "everywhere"],
)
def test_every_way_of_sending_a_key_is_redacted(headers: dict[str, str], params: dict[str, str] | None) -> None:
    stub = ScriptTransport([])  # every request overflows: a problem that names the request
    with HX.Client(transport=stub) as http:
        for path in ["/v1/messages", "/v1/chat/completions", "/v1/nowhere"]:
            response = http.post(
                "https://stub.test" + path, json={"model": "m", "messages": []}, headers=headers, params=params
            )
            assert response.status_code in (400, 404)
            assert_no_key(response.text)  # the loud answer names the request, not its credentials
    assert all(record.api_key == KEY for record in stub.requests)
    assert stub.overflow == 3
    assert_no_key(outputs(stub, []))
    for record in stub.requests:
        for name in headers:
            assert record.headers[name] == "<redacted>"
        for name in params or {}:
            assert record.query[name] == "<redacted>"


def test_a_held_request_that_times_out_does_not_show_its_key() -> None:
    stub = ScriptTransport(["never"], hold_timeout=0.01)
    stub.hold()
    with HX.Client(transport=stub) as http:
        response = http.post(
            "https://stub.test/v1/messages",
            json={"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]},
            headers={"x-api-key": KEY},
        )
    assert response.status_code == 400
    assert "was held for 0.01 s and never released" in stub.problems[0]
    assert_no_key(response.text + outputs(stub, []))


def test_the_check_can_fail_on_a_leak() -> None:
    """The search is not vacuous: a record whose key leaked into a shown field is caught."""
    stub = ScriptTransport(["x"])
    with HX.Client(transport=stub) as http:
        http.post("https://stub.test/v1/messages", json={"model": KEY, "messages": []}, headers={"x-api-key": KEY})
    with pytest.raises(AssertionError):
        assert_no_key(outputs(stub, []))
