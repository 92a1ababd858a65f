"""A stub parses each distinct query once and gives every record its own copy of what it read.

The records of google-genai's requests (a query, no retry-count header: the stub infers the
count) are also the records `model_construct` builds, field for field and in order.

google-genai streams with `?alt=sse` on every request, so the stub keeps what each raw query
parses to. These tests hold the kept reading equal to `parse_qsl`'s on every request (the first,
parsed, and the next, copied), hold each record's dict its own (a record's query is redacted in
place, and a test may change it), and keep a query with a credential redacted on every request.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

from test_record_build import FIELDS, _assert_built_alike
from wirescript import ScriptTransport
from wirescript._core import record as _record
from wirescript.recorded import REDACTED

httpx2 = pytest.importorskip("httpx2")  # the legacy run (anthropic 0.x, openai 2.x on httpx) has none
genai = pytest.importorskip("google.genai")
types = pytest.importorskip("google.genai.types")

QUERIES = [
    "alt=sse",
    "alt=SSE&key=AIza-secret",
    "a=1&a=2&b=",  # a repeated name keeps its last value, a blank value is dropped
    "q=caf%C3%A9+au+lait&x=%2F%3F",  # percent-escapes and `+` decoded
    "flag&empty=&=v",  # a name with no `=`, and no name: what parse_qsl drops
    "p=%FF%FE",  # escapes that are not UTF-8 (replaced, as parse_qsl replaces them)
]


def _queries(stub: ScriptTransport, query: str, times: int) -> list[dict[str, str]]:
    with httpx2.Client(transport=stub) as client:
        for _ in range(times):
            client.get(f"https://api.example.com/v1/things?{query}")
    return [record.query for record in stub.requests]


@pytest.mark.parametrize("query", QUERIES)
def test_every_request_reads_its_query_as_parse_qsl_does(query: str) -> None:
    stub = ScriptTransport([], routes={"GET /v1/things": lambda record: {"ok": True}})
    expected = dict(parse_qsl(httpx2.URL(f"https://h/?{query}").query.decode("ascii", "replace")))
    expected = {name: REDACTED if name.lower() in ("key",) else value for name, value in expected.items()}
    got = _queries(stub, query, 3)
    assert got == [expected] * 3
    assert len({id(found) for found in got}) == 3  # three dicts, none shared
    stub.check()


def test_a_record_changing_its_query_changes_no_other() -> None:
    stub = ScriptTransport([], routes={"GET /v1/things": lambda record: {"ok": True}})
    first = _queries(stub, "alt=sse&page=2", 1)[0]
    first["page"] = "changed"
    first["added"] = "x"
    later = _queries(stub, "alt=sse&page=2", 2)[1:]
    assert later == [{"alt": "sse", "page": "2"}] * 2
    stub.check()


def test_a_key_in_the_query_is_redacted_on_every_request_and_still_the_key() -> None:
    stub = ScriptTransport([{"text": "one"}, {"text": "two"}])
    url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-x:streamGenerateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    with httpx2.Client(transport=stub) as client:  # a REST caller's key, in the query (`?key=`)
        for _ in range(2):
            answer = client.post(url, params={"alt": "sse", "key": "AIza-query-key"}, json=body)
            assert answer.status_code == 200
            assert answer.text.startswith("data: ")
    records = stub.requests
    assert [record.query for record in records] == [{"alt": "sse", "key": REDACTED}] * 2
    assert [record.api_key for record in records] == ["AIza-query-key"] * 2
    stub.check()


def test_a_long_query_is_parsed_every_time_not_kept() -> None:
    vocabulary = _record.Vocabulary([])
    short, long = b"alt=sse", b"q=" + b"x" * _record._SHARED_LONGEST
    assert vocabulary.parse_query(short) == {"alt": "sse"}
    assert vocabulary.parse_query(long) == {"q": "x" * _record._SHARED_LONGEST}
    assert list(vocabulary._queries) == [short]
    kept = vocabulary._queries[short]
    fresh = vocabulary.parse_query(short)
    assert fresh == kept
    assert fresh is not kept


def test_google_genai_records_are_the_records_model_construct_builds() -> None:
    stub = ScriptTransport([{"text": "one"}, {"error": {"status": 503}}, {"text": "two"}])
    retry = types.HttpRetryOptions(attempts=2, initial_delay=0, jitter=0)
    options = types.HttpOptions(httpx_client=httpx2.Client(transport=stub), retry_options=retry)
    client = genai.Client(api_key="AIza-test", http_options=options)
    for _ in range(2):
        "".join(chunk.text or "" for chunk in client.models.generate_content_stream(model="gemini-x", contents="hi"))
    records = stub.requests
    assert [record.retry_count for record in records] == [0, 0, 1]  # inferred: google-genai sends no header
    assert [record.query for record in records] == [{"alt": "sse"}] * 3
    for record in records:
        assert list(record.__dict__) == FIELDS
        _assert_built_alike(record)
    stub.check()
