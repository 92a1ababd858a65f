"""A record's headers are what the request's own `headers.items()` gives, credentials redacted.

The stub reads the public raw pairs through a cache of decoded pairs; these tests pin that what it
records is exactly httpx's view, for every library, whatever the encoding, and however often a
header repeats or changes.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _support import STACKS
from wirescript import ScriptTransport
from wirescript.recorded import REDACTED

BODY = b'{"model": "claude-test", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}'
LIBRARIES = [pytest.param(hx, id=hx.__name__) for hx in STACKS]  # httpx only, on the legacy majors


def _send(stub: ScriptTransport, hx: ModuleType, headers: Any) -> dict[str, str]:
    request = hx.Request("POST", "https://api.anthropic.com/v1/messages", headers=headers, content=BODY)
    stub.handle_request(request).read()
    recorded: dict[str, str] = stub.requests[-1].headers
    expected = dict(request.headers.items())
    assert recorded == {k: REDACTED if k == "x-api-key" or "token" in k else v for k, v in expected.items()}
    return recorded


@pytest.mark.parametrize("hx", LIBRARIES)
def test_repeated_headers_are_joined_as_items_joins_them(hx: ModuleType) -> None:
    stub = ScriptTransport([{"text": "a"}] * 2, strict=False)
    headers = [("Accept", "a"), ("X-Trace", "1"), ("accept", "b"), ("X-TRACE", "2")]
    for _ in range(2):  # the second time from the cache
        recorded = _send(stub, hx, headers)
        assert recorded["accept"] == "a, b"
        assert recorded["x-trace"] == "1, 2"


@pytest.mark.parametrize("hx", LIBRARIES)
def test_non_ascii_values_decode_as_the_headers_encoding_says(hx: ModuleType) -> None:
    stub = ScriptTransport([{"text": "a"}] * 4, strict=False)
    utf8 = [("x-note", "café".encode()), ("x-plain", b"yes")]
    latin1 = [("x-note", "café".encode("latin-1")), ("x-plain", b"yes")]
    for headers in (utf8, latin1, utf8, latin1):
        request = hx.Request("POST", "https://api.anthropic.com/v1/messages", headers=headers, content=BODY)
        stub.handle_request(request).read()
        assert stub.requests[-1].headers["x-note"] == dict(request.headers.items())["x-note"]
    assert stub.requests[0].headers["x-note"] == "café"
    assert stub.requests[1].headers["x-note"] == "café"  # ISO-8859-1, decoded as httpx falls back


@pytest.mark.parametrize("hx", LIBRARIES)
def test_credentials_are_redacted_and_still_read(hx: ModuleType) -> None:
    stub = ScriptTransport([{"text": "a"}] * 2, strict=False)
    for key in ("sk-ant-first", "sk-ant-second"):  # a cached name with a new value is still a credential
        recorded = _send(stub, hx, {"x-api-key": key, "X-Session-Token": "tok", "user-agent": "t/1"})
        assert recorded["x-api-key"] == REDACTED
        assert recorded["x-session-token"] == REDACTED
        assert recorded["user-agent"] == "t/1"
        record = stub.requests[-1]
        assert record.api_key is not None
        assert record.api_key.get_secret_value() == key


_NAMES = st.sampled_from(["accept", "Accept", "x-a", "X-B", "x-api-key", "authorization", "x-stainless-lang"])
_VALUES = st.one_of(
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12),
    st.text(st.characters(min_codepoint=0xA0, max_codepoint=0xFF), min_size=1, max_size=4).map(
        lambda t: t.encode("latin-1")
    ),
    st.text(alphabet="éü✓", min_size=1, max_size=3).map(str.encode),
)


@given(st.lists(st.lists(st.tuples(_NAMES, _VALUES), max_size=6), min_size=1, max_size=4))
def test_any_headers_record_as_items_gives_them(requests: list[list[tuple[str, Any]]]) -> None:
    stub = ScriptTransport([{"text": "a"}] * len(requests), strict=False)
    for headers in requests:
        request = STACKS[0].Request("POST", "https://api.anthropic.com/v1/messages", headers=headers, content=BODY)
        stub.handle_request(request).read()
        expected = {
            name: REDACTED if name in ("x-api-key", "authorization") else value
            for name, value in request.headers.items()
        }
        assert stub.requests[-1].headers == expected


@pytest.mark.parametrize("hx", LIBRARIES)
def test_a_pair_decodes_by_its_request_s_encoding_not_by_an_earlier_one(hx: ModuleType) -> None:
    """httpx picks one encoding per request: the same UTF-8 bytes read as ISO-8859-1 beside a Latin-1 header."""
    stub = ScriptTransport([{"text": "a"}] * 2, strict=False)
    note = ("x-note", "café".encode())
    alone = _send(stub, hx, [note])
    beside_latin1 = _send(stub, hx, [note, ("x-other", "é".encode("latin-1"))])
    assert alone["x-note"] == "café"
    assert beside_latin1["x-note"] == "cafÃ©"


@given(
    st.lists(st.tuples(_NAMES, _VALUES), max_size=5),
    st.lists(st.tuples(_NAMES, _VALUES), min_size=1, max_size=3),
)
def test_headers_after_a_run_of_headers_seen_before_record_as_items_gives_them(
    head: list[tuple[str, Any]], lasts: list[tuple[str, Any]]
) -> None:
    """The pairs before the last are looked up together once seen: each request still reads as its own `items()`."""
    stub = ScriptTransport([{"text": "a"}] * (len(lasts) * 2 + 2), strict=False)
    sent = [[*head, last] for last in lasts] * 2 + [head, head]  # every run again, after the first time
    for n, headers in enumerate(sent * 2):
        if n < len(sent):
            content = BODY + b" " * (n % 3)  # the last raw pair (httpx's Content-Length) changes, the rest does not
            request = STACKS[0].Request(
                "POST", "https://api.anthropic.com/v1/messages", headers=headers, content=content
            )
        else:  # no body, so no Content-Length: the last pair is the request's own last header
            request = STACKS[0].Request("GET", "https://api.anthropic.com/v1/messages", headers=headers)
        stub.handle_request(request).read()
        expected = {
            name: REDACTED if name in ("x-api-key", "authorization") else value
            for name, value in request.headers.items()
        }
        record = stub.requests[-1]
        assert record.headers == expected
        key = next((v for k, v in request.headers.items() if k == "x-api-key"), None)
        if key is not None and "," not in key:
            assert record.api_key is not None
            assert record.api_key.get_secret_value() == key


@pytest.mark.parametrize("hx", LIBRARIES)
def test_records_of_the_same_headers_share_no_dict(hx: ModuleType) -> None:
    stub = ScriptTransport([{"text": "a"}] * 3, strict=False)
    headers = {"x-api-key": "sk-ant-1", "x-a": "1", "user-agent": "t/1"}
    first = _send(stub, hx, headers)
    first["x-a"] = "changed"  # a test may edit what it reads
    first["x-api-key"] = "shown"
    second = _send(stub, hx, headers)
    assert second["x-a"] == "1"
    assert second["x-api-key"] == REDACTED
    assert second is not first
    assert _send(stub, hx, headers) is not second


def test_requests_read_at_once_on_threads_each_record_their_own_headers() -> None:
    """Headers are read outside the stub's lock: threads sharing the cached runs still record their own values."""
    import threading

    threads, each = 8, 25
    stub = ScriptTransport(lambda request: {"text": "a"}, strict=False)
    sent: dict[str, dict[str, str]] = {}
    start = threading.Barrier(threads)

    def send(n: int) -> None:
        start.wait()
        for k in range(each):
            headers = {"x-api-key": f"sk-ant-{n}", "x-thread": str(n), "x-shared": "same"}
            if k % 2:
                headers["x-odd"] = str(k)  # a run of its own, seen again later by this thread
            request = STACKS[0].Request(
                "POST", "https://api.anthropic.com/v1/messages", headers=headers, content=BODY + b" " * (k % 3)
            )
            stub.handle_request(request).read()
            sent[f"{n}-{k}"] = {
                name: REDACTED if name == "x-api-key" else value for name, value in request.headers.items()
            }

    workers = [threading.Thread(target=send, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    records = stub.requests
    assert len(records) == threads * each
    by_thread: dict[str, int] = {}
    for record in records:
        n = record.headers["x-thread"]
        by_thread[n] = by_thread.get(n, 0) + 1
        assert record.api_key is not None
        assert record.api_key.get_secret_value() == f"sk-ant-{n}"
        assert record.headers["x-api-key"] == REDACTED
        matching = [h for h in sent.values() if h == record.headers]
        assert matching, record.headers
    assert by_thread == {str(n): each for n in range(threads)}
