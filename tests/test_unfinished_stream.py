"""A streamed answer the app never read to its end is a problem at `check()`: `unfinished_stream`.

The app's bugs (a loop that breaks early, a `stream=True` result dropped unread, a client gone
mid-stream) are found; the SDKs' own ways of reading a stream, and a stream the stub's own fault
cuts, are not.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import pytest

from _support import anthropic_client, no_aws_environment, openai_client
from wirescript import ScriptTransport, UsageError

httpx2 = pytest.importorskip("httpx2")  # the legacy run (anthropic 0.x, openai 2.x on httpx) has none
genai = pytest.importorskip("google.genai")
types = genai.types

pytest_plugins = ["pytester"]

PARAMS: dict[str, Any] = {"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}
CHAT: dict[str, Any] = {"model": "gpt-test", "messages": [{"role": "user", "content": "Hi"}]}
LONG = {"text": "word " * 5_000}
"""An answer of several chunks (each about 16 KB of whole events)."""


def unfinished(stub: ScriptTransport) -> list[str]:
    """The `unfinished_stream` reasons `check()` finds (it raises for them)."""
    with pytest.raises(AssertionError, match="unfinished_stream"):
        stub.check()
    return [p.reason for p in stub.problems if p.kind == "unfinished_stream"]


@pytest.mark.parametrize("turn", [LONG, "short"], ids=["several chunks", "one chunk"])
def test_a_loop_that_breaks_early_is_an_unfinished_stream(turn: Any) -> None:
    stub = ScriptTransport([turn])
    with anthropic_client(stub).messages.stream(**PARAMS) as stream:
        for index, _event in enumerate(stream):
            if index == 1:
                break
    [reason] = unfinished(stub)
    assert reason.startswith("was answered with a stream that the app stopped reading after ")
    [problem] = stub.problems
    assert problem.startswith("requests[0] POST /v1/messages was answered with a stream")
    assert 'check(allow=["unfinished_stream"])' in reason
    assert '@pytest.mark.wirescript(allow=["unfinished_stream"])' in reason


def test_a_stream_dropped_unread_is_an_unfinished_stream() -> None:
    stub = ScriptTransport(["Hello"])
    anthropic_client(stub).messages.create(stream=True, **PARAMS)  # never iterated
    [reason] = unfinished(stub)
    assert reason.startswith("was answered with a stream that the app never read: the scripted turn never reached it")


def test_an_async_loop_that_breaks_early_is_an_unfinished_stream() -> None:
    stub = ScriptTransport([LONG])

    async def main() -> None:
        async with anthropic_client(stub, is_async=True).messages.stream(**PARAMS) as stream:
            async for _event in stream:
                break

    asyncio.run(main())
    assert len(unfinished(stub)) == 1


def test_allow_lets_an_unfinished_stream_pass_and_check_stays_the_same() -> None:
    stub = ScriptTransport(["Hello"])
    anthropic_client(stub).messages.create(stream=True, **PARAMS)
    stub.check(allow=["unfinished_stream"])
    assert [p.kind for p in stub.problems] == ["unfinished_stream"]
    stub.check(allow=["unfinished_stream"])  # found once, not again
    assert len(stub.problems) == 1
    assert stub.overflow == 0  # the turn was served: not an overflow
    with pytest.raises(UsageError, match="did you mean 'unfinished_stream'"):
        stub.check(allow=["unfinished_streams"])


def _read_all_anthropic(stub: ScriptTransport) -> None:
    client = anthropic_client(stub)
    with client.messages.stream(**PARAMS) as stream:
        for _text in stream.text_stream:
            pass
    with client.messages.stream(**PARAMS) as stream:
        stream.get_final_message()
    with client.messages.stream(**PARAMS) as stream:
        stream.until_done()
    with client.messages.create(stream=True, **PARAMS) as events:
        for _event in events:
            pass
    for _event in client.messages.create(stream=True, **PARAMS):
        pass


def _read_all_openai(stub: ScriptTransport) -> None:
    client = openai_client(stub)
    stream = client.chat.completions.create(stream=True, **CHAT)
    for _chunk in stream:
        pass
    stream.close()  # after the final chunk, as openai's docs show
    with client.chat.completions.stream(**CHAT) as chat:
        chat.get_final_completion()
    with client.responses.stream(model="gpt-test", input="Hi") as responses:
        responses.get_final_response()
    for _event in client.responses.create(model="gpt-test", input="Hi", stream=True):
        pass


def _read_all_gemini(stub: ScriptTransport) -> None:
    http_options = types.HttpOptions(httpx_client=httpx2.Client(transport=stub))
    client = genai.Client(api_key="test-key", http_options=http_options)
    for _chunk in client.models.generate_content_stream(model="gemini-test", contents="Hi"):
        pass
    chat = client.chats.create(model="gemini-test")
    for _chunk in chat.send_message_stream("Hi"):
        pass


@pytest.mark.parametrize(
    ("read", "turns"),
    [(_read_all_anthropic, 5), (_read_all_openai, 4), (_read_all_gemini, 2)],
    ids=["anthropic", "openai", "gemini"],
)
@pytest.mark.parametrize("turn", [LONG, "short"], ids=["several chunks", "one chunk"])
def test_the_sdks_own_ways_of_reading_a_stream_are_not_flagged(read: Any, turns: int, turn: Any) -> None:
    stub = ScriptTransport([turn] * turns)
    read(stub)
    stub.check()
    assert stub.request_count == turns


@pytest.mark.parametrize(
    "fault",
    [
        {"cut_after": 1},
        {"disconnect_after": 2},
        {"disconnect_after": 0},
        {"timeout_after": 1},
        {"stream_error": {"message": "overloaded", "after": 1}},
        {"delay": 0.001},
        {"drop": ["message_stop"]},
        {"raw": "event: ping\ndata: {}\n\n"},
    ],
    ids=lambda fault: next(iter(fault)),
)
def test_a_stream_the_stubs_fault_ends_is_not_the_apps(fault: dict[str, Any]) -> None:
    stub = ScriptTransport([{"text": "Hello there", "fault": fault}])
    client = anthropic_client(stub, max_retries=0)
    try:
        with client.messages.stream(**PARAMS) as stream:
            for _event in stream:
                pass
    except (anthropic.APIError, httpx2.TransportError, ValueError):  # what the fault makes the SDK raise
        pass
    stub.check()


def test_a_delayed_stream_the_app_leaves_is_still_the_apps() -> None:
    stub = ScriptTransport([{"text": "word " * 20, "fault": {"delay": 0.0001}}])
    with anthropic_client(stub).messages.stream(**PARAMS) as stream:
        for _event in stream:
            break
    assert len(unfinished(stub)) == 1


def test_a_bedrock_event_stream_left_early_is_unfinished_and_read_whole_is_not(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    boto3 = pytest.importorskip("boto3")
    no_aws_environment(monkeypatch, tmp_path)
    stub = ScriptTransport([LONG, LONG])
    bedrock = stub.attach(
        boto3.client(
            "bedrock-runtime", region_name="us-east-1", aws_access_key_id="AKIDTEST", aws_secret_access_key="s"
        )
    )
    hi = [{"role": "user", "content": [{"text": "Hi"}]}]
    for _event in bedrock.converse_stream(modelId="anthropic.claude-3-haiku-20240307-v1:0", messages=hi)["stream"]:
        pass
    for _event in bedrock.converse_stream(modelId="anthropic.claude-3-haiku-20240307-v1:0", messages=hi)["stream"]:
        break
    [reason] = unfinished(stub)
    assert stub.problems[0].index == 1
    assert "stopped reading after" in reason


MARKER_TESTS = """
import httpx2
import anthropic
import pytest

PARAMS = {"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}


def client(stub):
    return anthropic.Anthropic(api_key="k", http_client=httpx2.Client(transport=stub))


def test_left_unread(wirescript):
    client(wirescript(["Hello"])).messages.create(stream=True, **PARAMS)


@pytest.mark.wirescript(allow=["unfinished_stream"])
def test_left_unread_on_purpose(wirescript):
    client(wirescript(["Hello"])).messages.create(stream=True, **PARAMS)


def test_read_to_its_end(wirescript):
    with client(wirescript(["Hello"])).messages.stream(**PARAMS) as stream:
        stream.get_final_message()
"""


def test_the_fixture_fails_an_unfinished_stream_at_teardown_unless_the_marker_allows_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_app=MARKER_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "0", "-p", "no:langsmith_plugin")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        ["*ERROR at teardown of test_left_unread*", "*was answered with a stream that the app never read*"]
    )
