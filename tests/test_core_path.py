"""The per-request path written out in the transport and the ledger: each shortcut equals the general step.

A plain request skips a few calls (the serve step, the strict shape checks, a stateless wire's
`resolve`, the clock's `now`, the common body and retry count): each test here drives what those
shortcuts step around (a clock of one's own, a patched `time.time`, a wire that resolves, odd retry
headers, a compressed body, steps before the response, a foreign field) and expects what the
general step gives.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import time
from types import ModuleType
from typing import Any

import pytest

from _support import STACKS
from wirescript import Clock, RecordedRequest, ScriptTransport
from wirescript.wires import AnthropicWire

URL = "https://api.anthropic.com/v1/messages"
BODY: dict[str, Any] = {"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}


class _FixedClock(Clock):
    """A clock of one's own whose `now` the stub must ask (not read around)."""

    def now(self) -> float:
        return 42.5


def _post(stub: ScriptTransport, body: Any = None, headers: dict[str, str] | None = None, **kw: Any) -> Any:
    hx: ModuleType = STACKS[0]
    with hx.Client(transport=stub) as client:
        if "content" in kw:
            return client.post(URL, content=kw["content"], headers=headers)
        return client.post(URL, json=BODY if body is None else body, headers=headers)


def test_a_clock_of_ones_own_stamps_the_record() -> None:
    stub = ScriptTransport(["ok"], clock=_FixedClock())
    _post(stub)
    assert stub.requests[0].received_at == 42.5


def test_the_default_clock_reads_time_time_when_asked_so_freezegun_moves_it(monkeypatch: pytest.MonkeyPatch) -> None:
    stub = ScriptTransport(["ok", "ok"])
    stub.clock.advance(10)
    monkeypatch.setattr(time, "time", lambda: 1_000.0)  # as freezegun replaces the module's attribute
    _post(stub)
    source = Clock(source=lambda: 5.0)
    sourced = ScriptTransport(["ok"], clock=source)
    _post(sourced)
    assert stub.requests[0].received_at == 1_010.0
    assert sourced.requests[0].received_at == 5.0


def test_a_wire_that_resolves_is_asked_and_one_that_does_not_is_served_alike() -> None:
    asked: list[int] = []

    class Resolving(AnthropicWire):
        def resolve(self, record: RecordedRequest) -> None:
            asked.append(record.index)
            record.system = "resolved"

    stub = ScriptTransport(["a", "b"], wires=[Resolving()])
    _post(stub)
    _post(stub)
    assert asked == [0, 1]
    assert [r.system for r in stub.requests] == ["resolved", "resolved"]
    plain = ScriptTransport(["a"])  # the default wires: served, nothing to resolve
    assert _post(plain).json()["content"][0]["text"] == "a"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("0", 0), ("3", 3), (" 2", 2), ("+1", 1), ("1_0", 10), ("x", 0), ("", 0)],
    ids=["zero", "three", "spaced", "signed", "underscored", "not-a-number", "empty"],
)
def test_the_retry_count_header_reads_as_int_reads_it(value: str, expected: int) -> None:
    stub = ScriptTransport(["ok"])
    _post(stub, headers={"x-stainless-retry-count": value})
    # a value int() cannot read leaves the count to be derived: 0 for a first request
    assert stub.requests[0].retry_count == expected


def test_a_compressed_an_empty_and_a_broken_body_are_read_as_before() -> None:
    stub = ScriptTransport(["zipped"])
    raw = gzip.compress(json.dumps(BODY).encode())
    assert _post(stub, headers={"content-encoding": "gzip"}, content=raw).status_code == 200
    assert stub.requests[0].body == BODY
    empty = ScriptTransport(["never"])
    assert _post(empty, content=b"").status_code == 400
    assert empty.requests[0].body_error == "empty body"
    broken = ScriptTransport(["never"])
    assert _post(broken, content=b"{not json").status_code == 400
    assert (broken.requests[0].body_error or "").startswith("not JSON")
    assert [p.kind for p in empty.problems + broken.problems] == ["unreadable", "unreadable"]


@pytest.mark.parametrize("hx", STACKS, ids=lambda m: m.__name__)
def test_each_response_has_its_headers_once_request_after_request(hx: ModuleType) -> None:
    stub = ScriptTransport(["a", "b", "c", "d"])
    with hx.Client(transport=stub) as client:
        first = client.post(URL, json={**BODY, "stream": True})
        second = client.post(URL, json={**BODY, "stream": True})
        third = client.post(URL, json=BODY)
    for response in (first, second, third):
        assert response.headers.get_list("transfer-encoding") == ["chunked"]
    assert [r.headers["request-id"] for r in (first, second, third)] == ["req_0000", "req_0001", "req_0002"]
    assert first.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert third.headers["content-type"] == "application/json"

    async def main() -> list[Any]:
        async with hx.AsyncClient(transport=stub) as client:
            return [await client.post(URL, json={**BODY, "stream": True})]

    (streamed,) = asyncio.run(main())
    assert streamed.headers.get_list("transfer-encoding") == ["chunked"]
    assert "text_delta" in streamed.text


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_steps_before_the_response_still_run_before_it(is_async: bool) -> None:
    hx: ModuleType = STACKS[0]
    stub = ScriptTransport(
        [{"text": "late", "fault": {"first_byte_delay": 0.2}}, {"text": "cut", "fault": {"disconnect_after": 0}}]
    )

    async def both() -> tuple[float, Any]:
        async with hx.AsyncClient(transport=stub) as client:
            start = time.monotonic()
            late = await client.post(URL, json=BODY)
            took = time.monotonic() - start
            assert late.json()["content"][0]["text"] == "late"
            with pytest.raises(hx.RemoteProtocolError):
                await client.post(URL, json=BODY)
            return took, late

    if is_async:
        took, _ = asyncio.run(both())
    else:
        with hx.Client(transport=stub) as client:
            start = time.monotonic()
            late = client.post(URL, json=BODY)
            took = time.monotonic() - start
            assert late.json()["content"][0]["text"] == "late"
            with pytest.raises(hx.RemoteProtocolError):
                client.post(URL, json=BODY)
    assert took >= 0.2


def test_the_strict_shape_checks_refuse_as_before_and_skip_as_told() -> None:
    foreign = ScriptTransport(["never"])
    assert _post(foreign, body={**BODY, "contents": []}).status_code == 400
    typed = ScriptTransport(["never"])
    assert _post(typed, body={**BODY, "max_tokens": "64"}).status_code == 400
    assert "strict rule any.body-for-another-wire" in foreign.problems[0].reason
    assert "any.field-type" in typed.problems[0].reason
    skipped = ScriptTransport(["served"], strict_skip=["any.field-type"])
    assert _post(skipped, body={**BODY, "temperature": "0.5"}).status_code == 200
    off = ScriptTransport(["served"], strict=False)
    assert _post(off, body={**BODY, "max_tokens": "64"}).status_code == 200
    assert not skipped.problems
    assert not off.problems


def test_the_wire_found_for_a_url_is_kept_only_where_matching_reads_nothing_else() -> None:
    stub = ScriptTransport(["a", "b"])
    _post(stub)
    _post(stub)
    vocabulary = stub._ledger._vocabulary
    assert vocabulary.found is not None
    assert [wire.name for wire in vocabulary.found.values()] == ["anthropic"]
    assert [r.provider for r in stub.requests] == ["anthropic", "anthropic"]
    # the batch wires read the headers to tell their SDKs apart: never kept, asked each time
    wires = vocabulary.wires
    shared = [at for at, wire in enumerate(wires) if wire.shared_paths]
    assert shared
    assert not any(vocabulary.keeps(at) for at in shared)
    assert all(not vocabulary.keeps(at) for at in range(min(shared), len(vocabulary.walked)))  # walked after one
    assert vocabulary.keeps(next(at for at, wire in enumerate(wires) if wire.name == "anthropic"))
    assert all(vocabulary.keeps(at) for at in range(len(vocabulary.walked), len(wires)))  # by address: asked first
    # a stub with a wire of one's own walks its wires for every request, as the wire may match as it likes
    own = ScriptTransport(["a"], wires=[AnthropicWire()])
    _post(own)
    assert own._ledger._vocabulary.found is None
    assert own.requests[0].provider == "anthropic"
