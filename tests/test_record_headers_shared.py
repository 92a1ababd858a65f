"""The header pairs a stub reads are shared by every stub of the process, credentials never.

A test's first request finds the twenty headers its SDK sends already read by an earlier test's
stub, pair by pair (`_core.record._PUBLIC`) and as the run they come in, its credentials blanked
(`_core.record._RUNS`). These tests pin that a stub reading through those tables records what a
stub reading every pair afresh records, that a credential's value is never kept beyond its stub,
and that a header one set of wires calls a credential is redacted by their stub even after a stub
of other wires read it as public.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from wirescript import ScriptTransport
from wirescript._core import record as record_module
from wirescript.recorded import REDACTED, RecordedRequest
from wirescript.script import ErrorSpec, StreamError, Turn
from wirescript.sse import encode_event, json_dumps
from wirescript.wires.base import Frame, Parsed, Rendered, Wire

httpx2 = pytest.importorskip("httpx2")  # the legacy run (anthropic 0.x, openai 2.x on httpx) has none

BODY = b'{"model": "claude-test", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}'
KEY = "sk-ant-shared-table-never-keeps-me"
HEADERS = {
    "x-api-key": KEY,
    "authorization": f"Bearer {KEY}-bearer",
    "x-mini-id": "mini-1234",
    "user-agent": "Anthropic/Python 1.0",
    "x-stainless-lang": "python",
    "anthropic-version": "2023-06-01",
}


@pytest.fixture
def empty_table() -> Iterator[None]:
    """No pair shared yet, as in a fresh process; the table as it was afterwards."""
    kept, runs = dict(record_module._PUBLIC), dict(record_module._RUNS)
    record_module._PUBLIC.clear()
    record_module._RUNS.clear()
    yield
    record_module._PUBLIC.clear()
    record_module._PUBLIC.update(kept)
    record_module._RUNS.clear()
    record_module._RUNS.update(runs)


class Mini(Wire):
    """A wire on its own path whose SDK sends its key in `x-mini-id` (a name that looks like no credential)."""

    name = "mini"
    endpoint = "POST /v1/mini"
    events = frozenset({"message"})
    credential_headers = ("x-mini-id",)
    stop_reasons: ClassVar[dict[str, str]] = {"done": "end_turn"}

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        return method == "POST" and path == "/v1/mini"

    def parse(self, body: Any, path: str) -> Parsed:
        return Parsed(model=body.get("model"), messages=body.get("messages", []))

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        return Rendered(200, {"content-type": "application/json"}, json_dumps({"text": turn.text}).encode())

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        return Rendered(spec.status, {"content-type": "application/json"}, b"{}")

    def stream_error(self, spec: StreamError, record: RecordedRequest) -> Frame:
        return Frame("error", encode_event("error", json_dumps({"type": "error"})))


def _recorded(stub: ScriptTransport, url: str = "https://api.anthropic.com/v1/messages") -> dict[str, str]:
    request = httpx2.Request("POST", url, headers=HEADERS, content=BODY)
    stub.handle_request(request).read()
    headers: dict[str, str] = stub.requests[-1].headers
    return headers


def test_a_stub_reading_through_the_table_records_what_a_fresh_read_records(empty_table: None) -> None:
    afresh = _recorded(ScriptTransport([{"text": "a"}], strict=False))  # every pair decoded and classified
    assert record_module._PUBLIC, "the first stub published its public pairs"
    shared = _recorded(ScriptTransport([{"text": "a"}], strict=False))  # every public pair from the table
    assert shared == afresh
    assert list(shared) == list(afresh)
    assert shared["x-api-key"] == REDACTED
    assert shared["authorization"] == REDACTED
    assert shared["x-mini-id"] == "mini-1234"  # no credential of these wires
    assert shared["user-agent"] == "Anthropic/Python 1.0"


def test_no_credential_outlives_its_stub(empty_table: None) -> None:
    stub = ScriptTransport([{"text": "a"}], strict=False)
    _recorded(stub)
    assert stub.requests[-1].api_key is not None
    assert stub.requests[-1].api_key.get_secret_value() == KEY
    for table in record_module._PUBLIC.values():
        for (name, value), pair in table.items():
            assert KEY.encode() not in value, name
            assert KEY not in pair[1], name
            assert not pair[2], name
    assert any((b"user-agent", b"Anthropic/Python 1.0") in table for table in record_module._PUBLIC.values())
    del stub
    gc.collect()
    kept = [value for table in record_module._PUBLIC.values() for (_, value) in table]
    assert not any(KEY.encode() in value for value in kept)


def test_a_header_its_wires_call_a_credential_is_redacted_after_others_read_it_as_public(empty_table: None) -> None:
    plain = _recorded(ScriptTransport([{"text": "a"}], strict=False))  # the default wires: x-mini-id is public
    assert plain["x-mini-id"] == "mini-1234"
    mini = ScriptTransport([{"text": "a"}], wires=[Mini()], strict=False)
    recorded = _recorded(mini, "https://api.anthropic.com/v1/mini")  # the same headers, byte for byte
    assert recorded["x-mini-id"] == REDACTED
    assert recorded["user-agent"] == "Anthropic/Python 1.0"
    again = _recorded(ScriptTransport([{"text": "a"}], strict=False))
    assert again["x-mini-id"] == "mini-1234"


def test_the_table_stays_bounded(empty_table: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_module, "_SHARED_MOST", 4)
    stub = ScriptTransport([{"text": "a"}] * 3, strict=False)
    for n in range(3):
        headers = {f"x-n-{n}-{i}": "v" for i in range(3)}
        request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages", headers=headers, content=BODY)
        stub.handle_request(request).read()
        assert stub.requests[-1].headers[f"x-n-{n}-0"] == "v"
    assert all(len(table) <= 4 for table in record_module._PUBLIC.values())


def test_a_long_user_agent_is_shared_and_a_longer_value_is_not(empty_table: None) -> None:
    """botocore's `User-Agent` (about 170 bytes) is read once per process; a value past the bound is read afresh."""
    agent = "Boto3/1.40.0 md/Botocore#1.40.0 ua/2.1 os/linux#6.1 md/arch#x86_64 lang/python#3.11.9 " * 2
    token = "t" * (record_module._SHARED_LONGEST + 1)
    assert 128 < len(agent) <= record_module._SHARED_LONGEST
    stub = ScriptTransport([{"text": "a"}], strict=False)
    headers = {**HEADERS, "user-agent": agent, "x-trace": token}
    stub.handle_request(
        httpx2.Request("POST", "https://api.anthropic.com/v1/messages", headers=headers, content=BODY)
    ).read()
    assert stub.requests[-1].headers["user-agent"] == agent
    assert stub.requests[-1].headers["x-trace"] == token
    kept = {raw for table in record_module._PUBLIC.values() for raw in table}
    assert (b"user-agent", agent.encode()) in kept
    assert (b"x-trace", token.encode()) not in kept


def _request(headers: dict[str, str], url: str = "https://api.anthropic.com/v1/messages") -> Any:
    return httpx2.Request("POST", url, headers=headers, content=BODY)


def test_a_run_read_by_an_earlier_stub_is_read_with_the_new_stubs_own_credentials(empty_table: None) -> None:
    first = ScriptTransport([{"text": "a"}], strict=False)
    first.handle_request(_request(HEADERS)).read()
    assert record_module._RUNS, "the first stub shared the run its client sent"
    other = {**HEADERS, "x-api-key": "sk-ant-the-second-key", "authorization": "Bearer sk-ant-second-bearer"}
    second = ScriptTransport([{"text": "a"}], strict=False)
    second.handle_request(_request(other)).read()
    record = second.requests[-1]
    assert record.api_key is not None
    assert record.api_key.get_secret_value() == "sk-ant-the-second-key"  # its own key, not the first stub's
    afresh = ScriptTransport([{"text": "a"}], strict=False)
    record_module._RUNS.clear()  # what a stub reading every pair records
    afresh.handle_request(_request(other)).read()
    assert list(record.headers.items()) == list(afresh.requests[-1].headers.items())
    assert record.headers["x-api-key"] == REDACTED
    assert record.headers["authorization"] == REDACTED


def test_the_shared_runs_keep_no_credential(empty_table: None) -> None:
    stub = ScriptTransport([{"text": "a"}], strict=False)
    stub.handle_request(_request(HEADERS)).read()
    assert record_module._RUNS
    for runs in record_module._RUNS.values():
        for segments, blanks, template, secret, _ in runs:
            assert {name for _, _, name in blanks} >= {"x-api-key", "authorization"}
            assert set(secret) >= {"x-api-key", "authorization"}
            assert KEY not in repr(template)
            for _, _, pairs in segments:
                assert all(KEY.encode() not in value for _, value in pairs)


def test_a_run_with_another_header_in_a_blanked_place_is_read_pair_by_pair(empty_table: None) -> None:
    ScriptTransport([{"text": "a"}], strict=False).handle_request(_request(HEADERS)).read()
    # the same run, but a public header where the key was: nothing to take from the shared run
    moved = {("x-other" if name == "x-api-key" else name): value for name, value in HEADERS.items()}
    stub = ScriptTransport([{"text": "a"}], strict=False)
    stub.handle_request(_request(moved)).read()
    headers = stub.requests[-1].headers
    assert headers["x-other"] == KEY  # a header no wire calls a credential: recorded as sent
    assert "x-api-key" not in headers
    assert headers["authorization"] == REDACTED
    record_module._RUNS.clear()
    afresh = ScriptTransport([{"text": "a"}], strict=False)
    afresh.handle_request(_request(moved)).read()
    assert list(headers.items()) == list(afresh.requests[-1].headers.items())


def test_a_run_with_a_repeated_or_non_ascii_header_is_not_shared(empty_table: None) -> None:
    stub = ScriptTransport([{"text": "a"}] * 2, strict=False)
    repeated = httpx2.Request(
        "POST",
        "https://api.anthropic.com/v1/messages",
        headers=[("x-api-key", KEY), ("x-tag", "a"), ("x-tag", "b"), ("user-agent", "u")],
        content=BODY,
    )
    stub.handle_request(repeated).read()
    assert stub.requests[-1].headers["x-tag"] == "a, b"
    accented = httpx2.Request(
        "POST",
        "https://api.anthropic.com/v1/messages",
        headers=[("x-api-key", KEY), ("x-name", "café".encode()), ("user-agent", "u")],
        content=BODY,
    )
    stub.handle_request(accented).read()
    assert stub.requests[-1].headers["x-name"] == "café"
    assert not record_module._RUNS


def test_a_value_past_the_bound_is_blanked_in_the_shared_run(empty_table: None) -> None:
    """A value longer than `_SHARED_LONGEST` (an id or a token) is kept by no table, the runs included."""
    token = "t" * (record_module._SHARED_LONGEST + 1)
    first = {"x-trace": token, **HEADERS}  # not last: the run is every pair but the last
    stub = ScriptTransport([{"text": "a"}], strict=False)
    stub.handle_request(_request(first)).read()
    assert record_module._RUNS, "the run was shared"
    assert stub.requests[-1].headers["x-trace"] == token
    del stub
    gc.collect()
    for runs in record_module._RUNS.values():
        for segments, blanks, template, _, again in runs:
            assert "x-trace" in {name for _, _, name in blanks}
            assert token not in repr(template)
            assert all(token.encode() not in value for _, _, pairs in segments for _, value in pairs)
            assert again  # a long value is not a per-request header: the run can come again
    other = "u" * (record_module._SHARED_LONGEST + 5)
    second = ScriptTransport([{"text": "a"}], strict=False)
    second.handle_request(_request({**first, "x-trace": other})).read()  # read through the shared run
    assert second.requests[-1].headers["x-trace"] == other
    record_module._RUNS.clear()
    afresh = ScriptTransport([{"text": "a"}], strict=False)
    afresh.handle_request(_request({**first, "x-trace": other})).read()
    assert list(second.requests[-1].headers.items()) == list(afresh.requests[-1].headers.items())
