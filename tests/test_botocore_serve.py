"""A real boto3 bedrock-runtime client served in-process through botocore's `before-send` hook."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from _support import no_aws_environment, thread_sleeps
from wirescript._adapters import botocore as _botocore
from wirescript.errors import UsageError
from wirescript.wires.bedrock import eventstream as es

boto3 = pytest.importorskip("boto3")
botocore = pytest.importorskip("botocore")
botocore_config = pytest.importorskip("botocore.config")
botocore_exceptions = pytest.importorskip("botocore.exceptions")

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
Answer = tuple[int, Mapping[str, str], Iterable[bytes]]


@pytest.fixture(autouse=True)
def _no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    no_aws_environment(monkeypatch, tmp_path)


@dataclass
class Seen:
    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes


@dataclass
class CannedServer:
    answers: list[Answer]
    seen: list[Seen] = field(default_factory=list)

    def serve(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Answer:
        self.seen.append(Seen(method, url, headers, body))
        return self.answers.pop(0)


def make_client(**config: Any) -> Any:
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="test-secret",
        config=botocore_config.Config(**config) if config else None,
    )


def json_answer(value: Any, status: int = 200, **headers: str) -> Answer:
    return (
        status,
        {"Content-Type": "application/json", "x-amzn-requestid": "req-1", **headers},
        [json.dumps(value).encode()],
    )


def error_answer(status: int, code: str, message: str = "it failed") -> Answer:
    return json_answer(
        {"message": message},
        status,
        **{"x-amzn-errortype": f"{code}:http://internal.amazon.com/coral/com.amazon.bedrock/"},
    )


CONVERSE = {
    "output": {
        "message": {
            "role": "assistant",
            "content": [
                {"text": "Let me look."},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}},
            ],
        }
    },
    "stopReason": "tool_use",
    "usage": {"inputTokens": 12, "outputTokens": 9, "totalTokens": 21},
    "metrics": {"latencyMs": 5},
}

STREAM = [
    es.event("messageStart", {"role": "assistant"}),
    es.event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hel"}}),
    es.event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "lo"}}),
    es.event("contentBlockStop", {"contentBlockIndex": 0}),
    es.event(
        "contentBlockStart",
        {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather"}}},
    ),
    es.event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"city":'}}}),
    es.event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '"Paris"}'}}}),
    es.event("contentBlockStop", {"contentBlockIndex": 1}),
    es.event("messageStop", {"stopReason": "tool_use"}),
    es.event(
        "metadata", {"usage": {"inputTokens": 12, "outputTokens": 9, "totalTokens": 21}, "metrics": {"latencyMs": 5}}
    ),
]

USER = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]


def test_converse_is_answered_in_process_and_the_request_is_seen() -> None:
    server = CannedServer([json_answer(CONVERSE)])
    client = make_client()
    _botocore.attach(client, server)
    answer = client.converse(
        modelId=MODEL,
        system=[{"text": "Be brief."}],
        messages=USER,
        toolConfig={"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]},
        inferenceConfig={"maxTokens": 64},
    )
    assert answer["output"] == CONVERSE["output"]
    assert (answer["stopReason"], answer["usage"], answer["metrics"]) == (
        "tool_use",
        CONVERSE["usage"],
        {"latencyMs": 5},
    )
    assert answer["ResponseMetadata"]["RequestId"] == "req-1"

    [seen] = server.seen
    assert seen.method == "POST"
    assert (
        seen.url
        == "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse"
    )
    assert seen.headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDTEST/")
    assert "/us-east-1/bedrock/aws4_request" in seen.headers["Authorization"]
    body = json.loads(seen.body)
    assert body["system"] == [{"text": "Be brief."}]
    assert body["messages"] == USER
    assert body["toolConfig"]["tools"][0]["toolSpec"]["name"] == "get_weather"
    assert "modelId" not in body


def test_converse_stream_is_decoded_by_botocore_lazily() -> None:
    produced: list[int] = []

    def frames() -> Iterator[bytes]:
        for i, frame in enumerate(STREAM):
            produced.append(i)
            yield frame

    server = CannedServer([(200, {"Content-Type": es.CONTENT_TYPE}, frames())])
    client = make_client()
    _botocore.attach(client, server)
    stream = client.converse_stream(modelId=MODEL, messages=USER)["stream"]
    events = iter(stream)
    assert next(events) == {"messageStart": {"role": "assistant"}}
    assert len(produced) < len(STREAM), "the whole body was read before the first event"
    rest = list(events)
    assert [next(iter(e)) for e in rest] == [
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockStop",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    ]
    tool_input = "".join(
        e["contentBlockDelta"]["delta"]["toolUse"]["input"]
        for e in rest
        if "toolUse" in e.get("contentBlockDelta", {}).get("delta", {})
    )
    assert json.loads(tool_input) == {"city": "Paris"}
    assert server.seen[0].url.endswith("/converse-stream")


def test_an_exception_event_mid_stream_raises_botocores_event_stream_error() -> None:
    body = [STREAM[0], STREAM[1], es.exception("modelStreamErrorException", {"message": "the model broke"})]
    client = make_client()
    _botocore.attach(client, CannedServer([(200, {"Content-Type": es.CONTENT_TYPE}, body)]))
    events = iter(client.converse_stream(modelId=MODEL, messages=USER)["stream"])
    assert next(iter(next(events))) == "messageStart"
    assert next(iter(next(events))) == "contentBlockDelta"
    with pytest.raises(botocore_exceptions.EventStreamError) as caught:
        next(events)
    assert caught.value.response["Error"] == {"Code": "modelStreamErrorException", "Message": "the model broke"}


def test_invoke_model_and_its_stream() -> None:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    raw = json.dumps(message).encode()
    events = [{"type": "message_start", "message": message}, {"type": "message_stop"}]
    server = CannedServer(
        [
            (200, {"Content-Type": "application/json", "Content-Length": str(len(raw))}, [raw[:10], raw[10:]]),
            (200, {"Content-Type": es.CONTENT_TYPE}, [es.chunk(json.dumps(e).encode()) for e in events]),
        ]
    )
    client = make_client()
    _botocore.attach(client, server)
    request = json.dumps(
        {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    )
    answer = client.invoke_model(modelId=MODEL, body=request)
    assert json.loads(answer["body"].read()) == message
    streamed = client.invoke_model_with_response_stream(modelId=MODEL, body=request)
    assert [json.loads(e["chunk"]["bytes"]) for e in streamed["body"]] == events
    assert [s.url.rsplit("/", 1)[1] for s in server.seen] == ["invoke", "invoke-with-response-stream"]
    assert [json.loads(s.body) for s in server.seen] == [json.loads(request)] * 2


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (429, "ThrottlingException"),
        (400, "ValidationException"),
        (503, "ServiceUnavailableException"),
        (500, "InternalServerException"),
    ],
)
def test_http_errors_raise_the_modeled_exceptions(status: int, code: str) -> None:
    client = make_client(retries={"mode": "standard", "total_max_attempts": 1})
    _botocore.attach(client, CannedServer([error_answer(status, code, "nope")]))
    with pytest.raises(getattr(client.exceptions, code)) as caught:
        client.converse(modelId=MODEL, messages=USER)
    assert caught.value.response["Error"] == {"Code": code, "Message": "nope"}
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == status


@pytest.mark.parametrize("mode", ["legacy", "standard", "adaptive"])
def test_botocores_retries_run_for_real_without_sleeping(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    server = CannedServer(
        [
            json_answer(CONVERSE),  # a first call, so that botocore's lazy loading is not timed
            error_answer(429, "ThrottlingException"),
            error_answer(503, "ServiceUnavailableException"),
            json_answer(CONVERSE),
        ]
    )
    client = make_client(retries={"mode": mode, "total_max_attempts": 3})
    _botocore.attach(client, server)
    client.converse(modelId=MODEL, messages=USER)
    server.seen.clear()

    # botocore sleeps its backoff with time.sleep (the adaptive mode's token bucket waits on a condition).
    slept = thread_sleeps(monkeypatch)
    started = time.perf_counter()
    answer = client.converse(modelId=MODEL, messages=USER)
    elapsed = time.perf_counter() - started
    assert answer["ResponseMetadata"]["RetryAttempts"] == 2
    assert len(server.seen) == 3
    assert [s.headers["amz-sdk-request"].split(";")[0] for s in server.seen] == ["attempt=1", "attempt=2", "attempt=3"]
    assert slept == [0, 0], "botocore decided to retry twice, and was asked to sleep for none of it"
    assert elapsed < 2, f"{mode} waited: {elapsed:.2f}s"  # slept is the evidence; this only bounds a hang

    # Out of attempts, botocore gives up as it would: three throttles raise, no fourth request.
    server.answers = [error_answer(429, "ThrottlingException")] * 4
    server.seen.clear()
    with pytest.raises(client.exceptions.ThrottlingException):
        client.converse(modelId=MODEL, messages=USER)
    assert len(server.seen) == 3


def test_detach_gives_the_client_back() -> None:
    server = CannedServer([json_answer(CONVERSE)])
    client = make_client()
    _botocore.attach(client, server)
    with pytest.raises(UsageError, match="already"):
        _botocore.attach(client, server)
    _botocore.detach(client)
    _botocore.detach(client)  # a second detach is a no-op

    # Another before-send answer stands in for the network: the detached server is not asked.
    from botocore.awsrequest import AWSResponse

    def other(request: Any, **_: Any) -> Any:
        return AWSResponse(
            request.url, 200, {"Content-Type": "application/json"}, _botocore._RawBody([json.dumps(CONVERSE).encode()])
        )

    client.meta.events.register("before-send.bedrock-runtime", other)
    assert client.converse(modelId=MODEL, messages=USER)["stopReason"] == "tool_use"
    assert server.seen == []


def test_a_file_body_is_read_whole_on_every_attempt() -> None:
    import io

    message = json.dumps({"type": "message", "content": []}).encode()
    request = json.dumps({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 8, "messages": []}).encode()
    server = CannedServer(
        [error_answer(503, "ServiceUnavailableException"), (200, {"Content-Type": "application/json"}, [message])]
    )
    client = make_client()
    _botocore.attach(client, server)
    answer = client.invoke_model(modelId=MODEL, body=io.BytesIO(request), contentType="application/json")
    assert answer["body"].read() == message
    assert [s.body for s in server.seen] == [request, request]
    assert server.seen[0].headers["Content-Type"] == "application/json"


def test_the_session_token_and_key_id_are_on_the_request_as_sigv4_sends_them() -> None:
    server = CannedServer([json_answer(CONVERSE)])
    client = boto3.client(
        "bedrock-runtime",
        region_name="eu-west-1",
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="test-secret",
        aws_session_token="session-token-xyz",
    )
    _botocore.attach(client, server)
    client.converse(modelId=MODEL, messages=USER)
    headers = server.seen[0].headers
    assert headers["X-Amz-Security-Token"] == "session-token-xyz"
    credential = headers["Authorization"].split("Credential=", 1)[1].split(",", 1)[0]
    key_id, date, region, service, terminator = credential.split("/")
    assert (key_id, region, service, terminator) == ("AKIDTEST", "eu-west-1", "bedrock", "aws4_request")
    assert headers["X-Amz-Date"].startswith(date)
    assert "x-amz-security-token" in headers["Authorization"].split("SignedHeaders=", 1)[1]
    assert "test-secret" not in repr(headers)


def _handlers(client: Any) -> tuple[list[Any], Any]:
    """The client's `before-send` handlers, and its retry handler (botocore's registry, as `attach` reaches it)."""
    emitter = client.meta.events._emitter
    before_send = list(emitter._handlers.prefix_search("before-send.bedrock-runtime"))
    return before_send, emitter._unique_id_handlers["retry-config-bedrock-runtime"]["handler"]


@pytest.mark.parametrize("mode", ["legacy", "standard", "adaptive"])
def test_detach_puts_back_the_retry_handler_and_the_adaptive_rate_limiter(mode: str) -> None:
    client = make_client(retries={"mode": mode})
    before = _handlers(client)
    _botocore.attach(client, CannedServer([]))
    during = _handlers(client)
    assert during[1] is not before[1]  # the retry handler, wrapped to ask for no sleep
    limiters = [h for h in before[0] if getattr(h, "__name__", "") == "on_sending_request"]
    assert len(limiters) == (1 if mode == "adaptive" else 0)
    assert not any(h in during[0] for h in limiters)  # the token bucket does not wait while served
    _botocore.detach(client)
    after = _handlers(client)
    assert after[1] is before[1]
    assert sorted(map(repr, after[0])) == sorted(map(repr, before[0]))


def test_the_aio_body_reads_as_aiohttps_stream_reader_does() -> None:
    """aiobotocore (which no dependency group installs) reads `raw.content` as aiohttp's `StreamReader`:
    `at_eof()`, `read(n)`, `iter_chunks()`; `raw.read()` reads it whole, and `release()` lets the server go."""
    import asyncio

    released: list[bool] = []

    def chunks() -> Iterator[bytes]:
        try:
            yield from (b"ab", b"", b"cd", b"ef")
        finally:
            released.append(True)

    async def main() -> None:
        raw = _botocore._AioRawBody(chunks(), "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke")
        assert not raw.content.at_eof()  # it looks ahead: one chunk pulled, kept for the next read
        assert await raw.content.read(3) == b"abc"
        assert [piece async for piece, _ in raw.content.iter_chunks()] == [b"d", b"ef"]
        assert raw.content.at_eof()
        assert await raw.content.read() == b""
        assert released == [True]  # read to its end
        whole = _botocore._AioRawBody(chunks(), raw.url)
        assert await whole.read() == b"abcdef"
        assert released == [True, True]
        released_early = _botocore._AioRawBody(chunks(), raw.url)
        assert await released_early.content.read(1) == b"a"
        released_early.release()  # the client went away: the server is told
        assert released == [True] * 3
        closed_early = _botocore._AioRawBody(chunks(), raw.url)
        assert await closed_early.content.read(1) == b"a"
        closed_early.close()
        assert released == [True] * 4

    asyncio.run(main())


BOTOCORE_CHECKED = ((1, 40), (1, 45))
"""The botocore releases `_fast_retries` is known to reach into: from the bedrock group's floor (1.40, and
aiobotocore's pin, 1.43) to the lock's (1.44). A release past them must be checked, and the range moved."""


def test_fast_retries_reach_botocores_private_state_only_where_it_is_known_to_be() -> None:
    """The one reach into botocore's private state (`_botocore._fast_retries`), pinned to the releases it holds for.

    It pays for itself: two throttles then a success take 1.05 s (legacy), 1.7 s (standard), 4.0 s (adaptive)
    of botocore's backoff, 6-7 ms without (measured on 1.44; `_botocore._fast_retries` says so too).
    """
    version = tuple(int(part) for part in botocore.__version__.split(".")[:2])
    low, high = BOTOCORE_CHECKED
    assert low <= version < high, f"botocore {botocore.__version__}: check _fast_retries' reach, then move the range"
    client = make_client(retries={"mode": "adaptive"})
    emitter = client.meta.events._emitter
    assert emitter._unique_id_handlers["retry-config-bedrock-runtime"]["handler"] is not None
    assert any(
        getattr(h, "__name__", "") == "on_sending_request"
        for h in emitter._handlers.prefix_search("before-send.bedrock-runtime")
    )
    server = CannedServer([json_answer(CONVERSE), error_answer(429, "ThrottlingException"), json_answer(CONVERSE)])
    _botocore.attach(client, server)
    client.converse(modelId=MODEL, messages=USER)
    started = time.perf_counter()
    assert client.converse(modelId=MODEL, messages=USER)["ResponseMetadata"]["RetryAttempts"] == 1
    assert time.perf_counter() - started < 0.5  # the backoff botocore asked for was not slept


HEADERS_DICT_CHECKED = ((1, 29), (1, 45))
"""The botocore releases whose `HeadersDict` keeps `_dict` of `_HeaderKey` (`_key`, the name as set) to value:
unchanged from 1.11 (2018) to the lock's (1.44). A release past them must be checked, and the range moved."""


def test_request_headers_read_through_botocores_own_dict_are_the_public_mappings() -> None:
    """The adapter's other reach into botocore's private state (`_botocore._request_headers`), pinned to its releases.

    It pays for itself: reading a signed Converse request's seven headers through the public mapping
    takes 11 µs, through its dict 2.4 µs (measured on 1.44), of a call whose floor is about 400 µs.
    """
    from botocore.awsrequest import HeadersDict

    version = tuple(int(part) for part in botocore.__version__.split(".")[:2])
    low, high = HEADERS_DICT_CHECKED
    assert low <= version < high, f"botocore {botocore.__version__}: check _request_headers' reach, then move the range"
    seen: list[Any] = []
    client = make_client()
    client.meta.events.register_first(
        "before-send.bedrock-runtime", lambda request, **_: seen.append(request) or json_response_for(request)
    )
    client.converse(modelId=MODEL, messages=USER)
    headers = seen[0].headers
    assert type(headers) is HeadersDict
    assert type(headers._dict) is dict
    public = [(name.encode(), v if isinstance(v, bytes) else str(v).encode()) for name, v in headers.items()]
    assert len(public) >= 6  # signed: Authorization, X-Amz-Date, …
    assert _botocore._request_headers(headers) == public
    other = {"Content-Type": "application/json", "Content-Length": 2}  # another mapping: read publicly
    assert _botocore._request_headers(other) == [(b"Content-Type", b"application/json"), (b"Content-Length", b"2")]


def json_response_for(request: Any) -> Any:
    from botocore.awsrequest import AWSResponse

    status, headers, chunks = json_answer(CONVERSE)
    return AWSResponse(request.url, status, dict(headers), _botocore._RawBody(chunks))


def test_url_parts_are_those_of_the_url_each_time() -> None:
    for url, parts in [
        (
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-v1%3A0/converse",
            ("bedrock-runtime.us-east-1.amazonaws.com", "/model/anthropic.claude-v1:0/converse", b"", None),
        ),
        ("https://Bedrock.Example:443/model/m/converse?a=1", ("bedrock.example", "/model/m/converse", b"a=1", None)),
        ("https://localhost:8443/model/m%2Fx/invoke", ("localhost", "/model/m/x/invoke", b"", 8443)),
        ("http://localhost:80/model/m/invoke", ("localhost", "/model/m/invoke", b"", None)),
        ("http://localhost:443/model/m/invoke", ("localhost", "/model/m/invoke", b"", 443)),
    ]:
        assert _botocore._url_parts(url) == parts
        assert _botocore._url_parts(url) == parts  # and again, kept


def test_the_aio_body_awaits_a_faults_delays_and_raises_aiohttps_error_for_a_cut() -> None:
    """The aiobotocore body over the core's answer (aiobotocore itself runs in its own environment)."""
    import asyncio

    from wirescript._exchange import Answer
    from wirescript._steps import Disconnect, Sleep

    aiohttp = pytest.importorskip("aiohttp")
    url = "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream"

    async def main() -> None:
        steps = iter([b"ab", Sleep(0.2), b"cd", Disconnect("wirescript: scripted disconnect after 2 events")])
        raw = _botocore._AioRawBody(_botocore._aio_items(Answer(200, [], (), steps)), url)
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.005)
                ticks += 1

        ticker = asyncio.ensure_future(tick())
        assert not raw.content.at_eof()
        pieces = []

        async def read() -> None:
            async for piece, _ in raw.content.iter_chunks():
                pieces.append(piece)

        with pytest.raises(aiohttp.ServerDisconnectedError, match="scripted disconnect after 2 events"):
            await read()
        ticker.cancel()
        assert pieces == [b"ab", b"cd"]
        assert ticks >= 3  # the delay was awaited: the loop ran meanwhile (a blocking sleep lets it tick once)

    asyncio.run(main())


def test_botocores_per_request_headers_are_recorded_each_time_and_kept_nowhere() -> None:
    """The invocation id and signing time are new with every request: each record has its own, no cache keeps them.

    Neither the stub's decoded pairs nor its runs of pairs fill up with them (a suite of boto3 calls would
    otherwise keep every invocation id, and crowd out the runs of clients whose headers do come again).
    """
    from wirescript import ScriptTransport

    stub = ScriptTransport([{"text": "ok"}] * 80)
    client = stub.attach(make_client())
    for _ in range(80):
        client.converse(modelId=MODEL, messages=USER)
    stub.check()
    ids = [record.headers["amz-sdk-invocation-id"] for record in stub.requests]
    assert len(set(ids)) == 80  # botocore's own, one per call, each in its record
    assert all(record.headers["x-amz-date"].endswith("Z") for record in stub.requests)
    assert all(record.headers["authorization"] == "<redacted>" for record in stub.requests)
    from wirescript._core.record import _PUBLIC

    vocabulary = stub._ledger._vocabulary
    # the stub's own pairs (credentials) and those every stub of its wires shares (the rest)
    shared = _PUBLIC.get(vocabulary.headers, {})
    kept = {name for name, _, _ in [*vocabulary._pairs.values(), *shared.values()]}
    assert {"content-type", "amz-sdk-request", "content-length"} <= kept
    assert kept.isdisjoint({"amz-sdk-invocation-id", "x-amz-date"})
    assert not vocabulary._heads  # no run of botocore's comes again: none kept

    # a client whose headers do come again still has its run kept and read from it
    again = [(b"Content-Type", b"application/json"), (b"X-Api-Key", b"k"), (b"Content-Length", b"2")]
    for _ in range(3):
        headers, secret = vocabulary.read_headers(again)
        assert (headers, list(secret)) == (
            {"content-type": "application/json", "x-api-key": "k", "content-length": "2"},
            ["x-api-key"],
        )
    assert len(vocabulary._heads) == 1
