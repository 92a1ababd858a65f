"""Wire faults through the real SDKs, sync and async, on every wire: exactly what the app sees per SDK major.

The outcomes asserted here are the table "What the app sees, per SDK major" of docs/faults.md.
Where an SDK major differs (a mid-stream transport error is wrapped by openai 3.x and raw elsewhere; anthropic 2.x
and 0.x disagree on a stream without `message_start`), the test asserts the major at hand, so the
suite passes in the dev venv and in the legacy one.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from _drivers import DRIVERS, Answer, Driver, run
from _support import ANTHROPIC_HX, ANTHROPIC_MAJOR, anthropic_tools
from wirescript import (
    Fault,
    ScriptError,
    ScriptTransport,
    StreamValidationError,
    Turn,
    validate_anthropic_stream,
)

WIRES = sorted(DRIVERS)
STREAMED = ("raw", "helper")
SYNC_ASYNC = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])

# A turn with text and a tool call: every wire streams it in several events.
TURN: dict[str, Any] = {"text": "Hello there, world", "tool": {"name": "get", "input": {"city": "Paris"}}}

# The event whose loss a wire's SDK notices least, and the one that opens the stream.
LAST_EVENT = {
    "anthropic": "message_stop",
    "openai_chat": "[DONE]",
    "openai_responses": "response.completed",
    "gemini": "final_chunk",
    "bedrock": "metadata",  # ConverseStream's last message (an invoke stream ends with message_stop)
}


USER = [{"role": "user", "content": "Hi"}]


def faulted(fault: dict[str, Any], *more: Any, turn: dict[str, Any] | None = None) -> ScriptTransport:
    return ScriptTransport([{**(turn or TURN), "fault": fault}, *more])


def outcome(driver: Driver, surface: str, stub: ScriptTransport, is_async: bool, **client: Any) -> Answer:
    client.setdefault("max_retries", 0)
    return run(driver, surface, stub, is_async=is_async, **client)


def sdk_error(driver: Driver, name: str) -> type[BaseException]:
    if driver.wire == "anthropic":
        import anthropic

        return getattr(anthropic, name)  # type: ignore[no-any-return]
    import openai

    return getattr(openai, name)  # type: ignore[no-any-return]


def expect_transport_error(driver: Driver, kind: str, *, before_response: bool) -> tuple[type[BaseException], str]:
    """What the app catches when the connection fails (`kind` is RemoteProtocolError or ReadTimeout).

    Before the response exists the failure happens inside the client's `send`: anthropic and openai
    wrap it (and would retry it); google-genai lets it through. Mid-stream, only openai 3.x wraps it.
    """
    wrapper = "APIConnectionError" if kind == "RemoteProtocolError" else "APITimeoutError"
    if driver.wire == "gemini":
        return getattr(driver.hx, kind), ""
    if before_response or driver.wraps_mid_stream:
        return sdk_error(driver, wrapper), wrapper
    return getattr(driver.hx, kind), ""


# --- construction


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (
            {},
            (
                "a fault needs at least one of: cut_after, drop, disconnect_after, delay, first_byte_delay, "
                "timeout_after, stream_error, malformed_tool_json, raw"
            ),
        ),
        (
            {"delay": 0},
            (
                "a fault needs at least one of: cut_after, drop, disconnect_after, delay, first_byte_delay, "
                "timeout_after, stream_error, malformed_tool_json, raw"
            ),
        ),
        (
            {"cut_after": 2, "disconnect_after": 3},
            "give at most one way to end the stream, got 'cut_after' and 'disconnect_after'",
        ),
        (
            {"timeout_after": 1, "stream_error": {}},
            "give at most one way to end the stream, got 'timeout_after' and 'stream_error'",
        ),
        (
            {"raw": "x", "delay": 0.1, "drop": ["ping"]},
            (
                "'raw' replaces the whole body, so it cannot be combined with 'drop', 'delay' "
                "(only 'first_byte_delay' can)"
            ),
        ),
        ({"drop": [""]}, "'drop' names events; an empty name matches none"),
        ({"drop": ["ping", "ping"]}, "'drop' names an event twice: ['ping', 'ping']"),
    ],
)
def test_a_fault_that_says_nothing_or_contradicts_itself_fails_at_construction(
    fault: dict[str, Any], message: str
) -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport([{"text": "x", "fault": fault}])
    assert str(info.value) == f"invalid script[0]: field 'fault': {message}"


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ({"delay": float("inf")}, "field 'fault.delay': Input should be a finite number, got float inf"),
        ({"delay": 61}, "field 'fault.delay': Input should be less than or equal to 60, got int 61"),
        (
            {"first_byte_delay": -1},
            "field 'fault.first_byte_delay': Input should be greater than or equal to 0, got int -1",
        ),
        ({"cut_after": -1}, "field 'fault.cut_after': Input should be greater than or equal to 0, got int -1"),
        ({"drop": "message_stop"}, "field 'fault.drop': Input should be a valid tuple, got str 'message_stop'"),
        (
            {"stream_error": {"after": -1}},
            "field 'fault.stream_error.after': Input should be greater than or equal to 0, got int -1",
        ),
        (
            {"disconect_after": 1},
            (
                "unknown field 'fault.disconect_after' (expected one of: cut_after, drop, "
                "disconnect_after, delay, first_byte_delay, timeout_after, stream_error, malformed_tool_json, raw); "
                "did you mean 'disconnect_after'?"
            ),
        ),
    ],
)
def test_fault_fields_are_validated_with_the_field_named(fault: dict[str, Any], message: str) -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport([{"text": "x", "fault": fault}])
    assert str(info.value) == f"invalid script[0]: {message}"


def test_malformed_tool_json_needs_a_tool_call() -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport([{"text": "x", "fault": {"malformed_tool_json": True}}])
    assert str(info.value) == (
        "invalid script[0]: 'fault.malformed_tool_json' breaks tool arguments, so the turn needs a 'tool' or 'tools'"
    )


def test_dropping_an_event_no_wire_sends_fails_at_construction_with_a_suggestion() -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport(["ok", {"text": "x", "fault": {"drop": ["message_stopp"]}}])
    message = str(info.value)
    assert message.startswith(
        "invalid script[1]: field 'fault.drop': no wire sends an event named 'message_stopp' (known events: "
    )
    assert message.endswith("); did you mean 'message_stop'?")
    for driver in DRIVERS.values():
        assert LAST_EVENT[driver.wire] in message


def test_the_check_names_the_model_queue() -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport({"claude-a": [{"text": "x", "fault": {"drop": ["nope"]}}]})
    assert str(info.value).startswith("invalid script['claude-a'][0]: field 'fault.drop': no wire sends an event")


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (
            {"drop": ["message_stop"]},
            (
                "the fault drops 'message_stop', but an 'error' turn answers with one JSON body, which has no events "
                "to drop; fault.drop needs a streamed answer"
            ),
        ),
        (
            {"stream_error": {}},
            ("fault.stream_error needs a streamed answer, but an 'error' turn answers with one JSON body"),
        ),
        (
            {"cut_after": 1},
            (
                "fault.cut_after=1 needs a streamed answer, but an 'error' turn answers with one JSON body "
                "(a single event); only cut_after=0 applies to it"
            ),
        ),
    ],
)
def test_an_error_turn_takes_only_faults_a_json_body_can_have(fault: dict[str, Any], message: str) -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport([{"error": {"status": 429}, "fault": fault}])
    assert str(info.value) == f"invalid script[0]: {message}"


def test_an_error_turn_can_be_delayed_or_replaced_by_raw_bytes() -> None:
    ScriptTransport(
        [{"error": {"status": 502}, "fault": {"raw": "<html>Bad gateway</html>", "first_byte_delay": 0.01}}]
    )
    ScriptTransport([{"error": {"status": 429}, "fault": {"disconnect_after": 0}}])


def test_raw_accepts_bytes_that_are_not_utf8() -> None:
    assert Turn.model_validate({"fault": {"raw": b"\xff\xfe"}}).fault == Fault(raw=b"\xff\xfe")


# --- a fault must take effect


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize(
    ("fault", "why"),
    [
        (
            {"cut_after": 2},
            (
                "fault.cut_after=2 needs a streamed answer, but the request did not ask for a stream, so the answer is "
                "one JSON body (a single event); only cut_after=0 applies to it"
            ),
        ),
        (
            {"stream_error": {}},
            (
                "fault.stream_error needs a streamed answer, but the request did not ask for a stream, so the answer "
                "is one JSON body; script an 'error' turn for an HTTP error instead"
                " (an error catalog's in-stream case, id 'stream-…', reaches streaming requests only: leave it out "
                "of a non-streaming app's cases with in_stream=False, e.g. anthropic_errors(in_stream=False))"
            ),
        ),
    ],
    ids=["cut_after", "stream_error"],
)
def test_a_stream_fault_on_a_json_answer_is_answered_loudly(wire: str, fault: dict[str, Any], why: str) -> None:
    driver = DRIVERS[wire]
    stub = faulted(fault)
    with pytest.raises(Exception, match="wirescript: requests") as info:
        outcome(driver, "json", stub, False)
    head = f"requests[0] POST {stub.requests[0].path}: "
    assert stub.problems == [head + why]
    assert stub.requests[0].problem == head + why
    assert f"wirescript: {head}" in str(info.value)
    assert stub.overflow == 0
    assert "not answered as scripted" in _check_message(stub)


def _check_message(stub: ScriptTransport) -> str:
    with pytest.raises(AssertionError) as info:
        stub.check()
    return str(info.value)


@pytest.mark.parametrize("wire", WIRES)
def test_a_cut_past_the_end_of_the_stream_is_a_problem_not_a_silent_pass(wire: str) -> None:
    driver = DRIVERS[wire]
    stub = faulted({"cut_after": 500})
    with pytest.raises(Exception, match="cuts nothing"):
        outcome(driver, "helper", stub, False)
    (problem,) = stub.problems
    assert problem.startswith(f"requests[0] POST {stub.requests[0].path}: fault.cut_after=500 cuts nothing: ")
    assert problem.endswith("cut_after must be below " + problem.split("this answer sends ")[1].split(" ")[0])


def test_the_problem_counts_events_after_the_drops() -> None:
    stub = faulted({"drop": ["ping"], "disconnect_after": 40})
    with pytest.raises(Exception, match="never reached"):
        outcome(DRIVERS["anthropic"], "helper", stub, False)
    assert stub.problems == [
        (
            "requests[0] POST /v1/messages: fault.disconnect_after=40 is never reached: this answer sends 12 events "
            "after the drops; disconnect_after must be at most 12"
        )
    ]


def test_a_dropped_event_this_answer_does_not_send_is_a_problem() -> None:
    stub = faulted({"drop": ["[DONE]"]})  # a Chat Completions event, sent to the Messages API
    with pytest.raises(Exception, match="does not send"):
        outcome(DRIVERS["anthropic"], "helper", stub, False)
    assert stub.problems == [
        (
            "requests[0] POST /v1/messages: the fault drops '[DONE]', which this anthropic answer does not send "
            "(its events: message_start, ping, content_block_start, content_block_delta, content_block_stop, "
            "message_delta, message_stop)"
        )
    ]


def test_stream_error_past_the_end_is_a_problem() -> None:
    stub = faulted({"stream_error": {"after": 99}})
    with pytest.raises(Exception, match="never reached"):
        outcome(DRIVERS["openai_chat"], "raw", stub, False)
    assert stub.problems == [
        (
            "requests[0] POST /v1/chat/completions: fault.stream_error.after=99 is never reached: this answer sends "
            "10 events; stream_error.after must be at most 10"
        )
    ]


def test_malformed_tool_json_cannot_reach_an_anthropic_json_answer() -> None:
    stub = faulted({"malformed_tool_json": True})
    with pytest.raises(sdk_error(DRIVERS["anthropic"], "BadRequestError")):
        outcome(DRIVERS["anthropic"], "json", stub, False)
    assert stub.problems == [
        (
            "requests[0] POST /v1/messages: fault.malformed_tool_json needs a streamed answer from the anthropic wire, "
            "but the request did not ask for a stream, so the answer is one JSON body, whose tool input is a JSON "
            "object, not text that could be malformed"
        )
    ]


def test_a_function_script_gets_the_same_check_at_serve_time() -> None:
    stub = ScriptTransport(lambda request: {"text": "x", "fault": {"drop": ["message_stop"]}})
    with pytest.raises(Exception, match="has no events to drop"):
        outcome(DRIVERS["anthropic"], "json", stub, False)
    assert len(stub.problems) == 1


# --- cut and drop


@pytest.mark.parametrize("wire", WIRES)
@SYNC_ASYNC
def test_cut_after_ends_the_stream_cleanly(wire: str, is_async: bool) -> None:
    driver = DRIVERS[wire]
    full = outcome(driver, "raw", ScriptTransport([TURN]), is_async).events
    cut = outcome(driver, "raw", faulted({"cut_after": 2}), is_async).events
    assert cut == full[: len(cut)]
    assert 0 < len(cut) < len(full)
    stub = faulted({"cut_after": 2})
    if wire == "openai_responses":
        with pytest.raises(RuntimeError, match=r"^Didn't receive a `response.completed` event.$"):
            outcome(driver, "helper", stub, is_async)
    else:  # no error at all: a partial answer with no stop reason
        answer = outcome(driver, "helper", stub, is_async)
        assert answer.stop is None
        assert answer.calls == []
        assert len(answer.text) < len(TURN["text"])
    assert len(stub.requests) == 1
    assert stub.problems == []


@pytest.mark.parametrize("wire", WIRES)
def test_cut_after_zero_sends_an_empty_body(wire: str) -> None:
    driver = DRIVERS[wire]
    assert outcome(driver, "raw", faulted({"cut_after": 0}), False).events == []
    if wire == "gemini":  # google-genai reads an empty 200 body as an empty answer
        assert outcome(driver, "json", faulted({"cut_after": 0}), False) == Answer()
    else:
        import json

        with pytest.raises(json.JSONDecodeError):
            outcome(driver, "json", faulted({"cut_after": 0}), False)


@pytest.mark.parametrize("wire", WIRES)
@SYNC_ASYNC
def test_dropping_the_last_event(wire: str, is_async: bool) -> None:
    driver = DRIVERS[wire]
    stub = faulted({"drop": [LAST_EVENT[wire]]})
    if wire == "openai_responses":
        with pytest.raises(RuntimeError, match=r"^Didn't receive a `response.completed` event.$"):
            outcome(driver, "helper", stub, is_async)
        return
    answer = outcome(driver, "helper", stub, is_async)
    assert answer.text == TURN["text"]
    if wire == "gemini":  # the last chunk carries the call and the finish reason: both are lost, silently
        assert (answer.calls, answer.stop) == ([], None)
    else:  # nothing noticed: the answer is complete
        assert answer.calls == [("get", {"city": "Paris"})]
        assert answer.stop == {"anthropic": "tool_use", "openai_chat": "tool_calls"}[wire]


@SYNC_ASYNC
def test_dropping_message_start(is_async: bool) -> None:
    driver = DRIVERS["anthropic"]
    raw = outcome(driver, "raw", faulted({"drop": ["message_start"]}), is_async).events
    assert raw[0] == "content_block_start"  # the raw stream does not check the order
    if ANTHROPIC_MAJOR >= 1:
        with pytest.raises(AssertionError):
            outcome(driver, "helper", faulted({"drop": ["message_start"]}), is_async)
    else:
        with pytest.raises(
            RuntimeError, match=r'^Unexpected event order, got content_block_start before "message_start"$'
        ):
            outcome(driver, "helper", faulted({"drop": ["message_start"]}), is_async)


@SYNC_ASYNC
def test_dropping_response_created(is_async: bool) -> None:
    driver = DRIVERS["openai_responses"]
    with pytest.raises(
        RuntimeError, match=r"^Expected to have received `response.created` before `response.in_progress`$"
    ):
        outcome(driver, "helper", faulted({"drop": ["response.created"]}), is_async)


# --- disconnects and timeouts


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("surface", STREAMED)
@SYNC_ASYNC
def test_disconnect_mid_stream(wire: str, surface: str, is_async: bool) -> None:
    driver = DRIVERS[wire]
    stub = faulted({"disconnect_after": 2}, "never served")
    error, _ = expect_transport_error(driver, "RemoteProtocolError", before_response=False)
    with pytest.raises(error) as info:
        outcome(driver, surface, stub, is_async, max_retries=2)
    cause = info.value if isinstance(info.value, driver.hx.RemoteProtocolError) else info.value.__cause__
    assert isinstance(cause, driver.hx.RemoteProtocolError)
    assert str(cause) == "wirescript: scripted disconnect after 2 events"
    assert len(stub.requests) == 1  # nothing retries a stream that has started
    assert len(stub.pending) == 1


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("surface", ["raw", "helper", "json"])
@SYNC_ASYNC
def test_disconnect_before_the_response(wire: str, surface: str, is_async: bool) -> None:
    driver = DRIVERS[wire]
    stub = faulted({"disconnect_after": 0})
    error, _ = expect_transport_error(driver, "RemoteProtocolError", before_response=True)
    with pytest.raises(error) as info:
        outcome(driver, surface, stub, is_async)
    cause = info.value if isinstance(info.value, driver.hx.RemoteProtocolError) else info.value.__cause__
    assert str(cause) == "wirescript: scripted disconnect before the response"
    if error is not driver.hx.RemoteProtocolError:
        assert str(info.value) == "Connection error."


@pytest.mark.parametrize("wire", ["anthropic", "openai_chat", "openai_responses"])
@SYNC_ASYNC
def test_a_disconnect_before_the_response_is_retried_with_the_next_turn(wire: str, is_async: bool) -> None:
    driver = DRIVERS[wire]
    stub = faulted({"disconnect_after": 0}, "Recovered.")
    answer = outcome(driver, "json", stub, is_async, max_retries=1)
    assert answer.text == "Recovered."
    assert [r.retry_count for r in stub.requests] == [0, 1]
    assert [r.turn_index for r in stub.requests] == [0, 1]


@pytest.mark.skipif("gemini" not in DRIVERS, reason="google-genai is not installed")
@pytest.mark.parametrize("fault", [{"disconnect_after": 0}, {"timeout_after": 0}], ids=["disconnect", "timeout"])
def test_google_genai_does_not_retry_a_failure_before_the_response_by_default(fault: dict[str, Any]) -> None:
    driver = DRIVERS["gemini"]
    stub = faulted(fault, "never served")
    with pytest.raises((driver.hx.RemoteProtocolError, driver.hx.ReadTimeout)):
        run(driver, "json", stub)  # the client's default retry options
    assert len(stub.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("surface", STREAMED)
@SYNC_ASYNC
def test_read_timeout_mid_stream(wire: str, surface: str, is_async: bool) -> None:
    driver = DRIVERS[wire]
    stub = faulted({"timeout_after": 3})
    error, _ = expect_transport_error(driver, "ReadTimeout", before_response=False)
    with pytest.raises(error) as info:
        outcome(driver, surface, stub, is_async, max_retries=2)
    cause = info.value if isinstance(info.value, driver.hx.ReadTimeout) else info.value.__cause__
    assert str(cause) == "wirescript: scripted read timeout after 3 events"
    assert len(stub.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
@SYNC_ASYNC
def test_read_timeout_before_the_response(wire: str, is_async: bool) -> None:
    driver = DRIVERS[wire]
    stub = faulted({"timeout_after": 0})
    error, _ = expect_transport_error(driver, "ReadTimeout", before_response=True)
    with pytest.raises(error) as info:
        outcome(driver, "json", stub, is_async)
    cause = info.value if isinstance(info.value, driver.hx.ReadTimeout) else info.value.__cause__
    assert str(cause) == "wirescript: scripted read timeout before the response"


# --- delays


@pytest.mark.parametrize("wire", WIRES)
@SYNC_ASYNC
def test_a_per_event_delay_is_a_real_sleep(wire: str, is_async: bool) -> None:
    driver = DRIVERS[wire]
    events = len(outcome(driver, "raw", ScriptTransport([TURN]), is_async).events)
    start = time.perf_counter()
    answer = outcome(driver, "helper", faulted({"delay": 0.01}), is_async)
    assert time.perf_counter() - start >= 0.01 * events
    assert answer.text == TURN["text"]


class _Window:
    """A stub's transport, `open` from the moment a request reaches it until the test closes it."""

    def __init__(self, stub: ScriptTransport) -> None:
        self.stub = stub
        self.open = False

    async def handle_async_request(self, request: Any) -> Any:
        self.open = True
        return await self.stub.handle_async_request(request)

    async def aclose(self) -> None:
        await self.stub.aclose()


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize(
    ("fault", "delays"), [({"delay": 0.02}, 2), ({"first_byte_delay": 0.1}, 1)], ids=["delay", "first_byte_delay"]
)
def test_async_delays_do_not_block_the_event_loop(wire: str, fault: dict[str, Any], delays: int) -> None:
    """Another task runs while the stub sleeps, however loaded the machine.

    The ticker sleeps 5 ms, less than every scripted delay: at each delay's start its timer falls
    due first, so the loop runs it at least once within each delay, late or not. Nothing else in
    the answer's path yields to the loop: a delay that blocked it (a `time.sleep`) leaves the
    ticker no turn at all between the request reaching the stub and the answer read to its end.
    `delays` is fewer than the delays each turn sleeps (the per-event delay sleeps before each of
    at least four events).
    """
    driver = DRIVERS[wire]
    ticks = {False: 0, True: 0}  # outside the answer, inside it

    async def main() -> Answer:
        window = _Window(faulted(fault))
        done = asyncio.Event()

        async def ticker() -> None:
            while not done.is_set():
                ticks[window.open] += 1
                await asyncio.sleep(0.005)

        task = asyncio.create_task(ticker())
        client = driver.make(window, is_async=True, max_retries=0)
        try:
            return await driver.asyncs["helper"](client)
        finally:
            window.open = False
            done.set()
            await task

    assert asyncio.run(main()).text == TURN["text"]
    assert ticks[True] >= delays  # the loop kept running while the stub slept


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("surface", STREAMED)
@SYNC_ASYNC
def test_a_delay_longer_than_the_read_timeout_times_out_after_the_timeout(
    wire: str, surface: str, is_async: bool
) -> None:
    driver = DRIVERS[wire]
    stub = faulted({"delay": 5})
    error, _ = expect_transport_error(driver, "ReadTimeout", before_response=False)
    start = time.perf_counter()
    with pytest.raises(error) as info:
        outcome(driver, surface, stub, is_async, timeout=0.05)
    assert 0.05 <= time.perf_counter() - start < 4  # the client's timeout, not the scripted delay
    cause = info.value if isinstance(info.value, driver.hx.ReadTimeout) else info.value.__cause__
    assert str(cause) == "wirescript: no event within the client's read timeout of 0.05 s"


@pytest.mark.parametrize("wire", WIRES)
@SYNC_ASYNC
def test_a_first_byte_delay_longer_than_the_read_timeout_times_out_before_the_response(
    wire: str, is_async: bool
) -> None:
    driver = DRIVERS[wire]
    stub = faulted({"first_byte_delay": 5})
    error, wrapper = expect_transport_error(driver, "ReadTimeout", before_response=True)
    start = time.perf_counter()
    with pytest.raises(error) as info:
        outcome(driver, "helper", stub, is_async, timeout=0.05)
    assert 0.05 <= time.perf_counter() - start < 4
    cause = info.value if isinstance(info.value, driver.hx.ReadTimeout) else info.value.__cause__
    assert str(cause) == "wirescript: no response within the client's read timeout of 0.05 s"
    if wrapper:
        assert type(info.value).__name__ == "APITimeoutError"


@pytest.mark.parametrize("wire", WIRES)
def test_a_first_byte_delay_within_the_timeout_delays_the_answer(wire: str) -> None:
    start = time.perf_counter()
    answer = outcome(DRIVERS[wire], "json", faulted({"first_byte_delay": 0.05}), False)
    assert time.perf_counter() - start >= 0.05
    assert answer.text == TURN["text"]


# --- in-stream errors


@pytest.mark.parametrize("surface", STREAMED)
@SYNC_ASYNC
def test_anthropic_in_stream_error_is_an_api_status_error_with_status_200(surface: str, is_async: bool) -> None:
    import anthropic

    stub = faulted({"stream_error": {"after": 2}}, "never served")
    with pytest.raises(anthropic.APIStatusError) as info:
        outcome(DRIVERS["anthropic"], surface, stub, is_async, max_retries=2)
    error = info.value
    assert type(error) is anthropic.APIStatusError  # not OverloadedError: the class comes from the status
    assert error.status_code == 200
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert error.body == body
    assert str(error) == repr(body)
    assert len(stub.requests) == 1  # never retried
    if ANTHROPIC_MAJOR >= 1:
        assert (error.type, error.api_message) == ("overloaded_error", "Overloaded")  # type: ignore[attr-defined]


@pytest.mark.parametrize("surface", STREAMED)
@SYNC_ASYNC
def test_openai_chat_error_chunk_is_the_bare_api_error(surface: str, is_async: bool) -> None:
    import openai

    stub = faulted({"stream_error": {"type": "server_error", "message": "The server had an error", "after": 0}})
    with pytest.raises(openai.APIError) as info:
        outcome(DRIVERS["openai_chat"], surface, stub, is_async, max_retries=2)
    assert type(info.value) is openai.APIError
    assert str(info.value) == "The server had an error"
    assert info.value.body == {
        "message": "The server had an error",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    assert len(stub.requests) == 1


@SYNC_ASYNC
def test_openai_responses_error_event(is_async: bool) -> None:
    driver = DRIVERS["openai_responses"]
    raw = outcome(driver, "raw", faulted({"stream_error": {"after": 2}}), is_async).events
    assert raw == ["response.created", "response.in_progress", "error"]  # yielded, not raised
    with pytest.raises(RuntimeError, match=r"^Didn't receive a `response.completed` event.$"):
        outcome(driver, "helper", faulted({"stream_error": {"after": 2}}), is_async)


@pytest.mark.skipif("gemini" not in DRIVERS, reason="google-genai is not installed")
@SYNC_ASYNC
def test_gemini_error_chunk_is_a_server_error(is_async: bool) -> None:
    from google.genai import errors

    stub = faulted({"stream_error": {"after": 1}})
    with pytest.raises(errors.ServerError) as info:
        outcome(DRIVERS["gemini"], "helper", stub, is_async)
    assert (info.value.code, info.value.status, info.value.message) == (503, "UNAVAILABLE", "Overloaded")


# --- malformed tool JSON


@SYNC_ASYNC
def test_anthropic_malformed_tool_json(is_async: bool) -> None:
    driver = DRIVERS["anthropic"]
    assert outcome(driver, "raw", faulted({"malformed_tool_json": True}), is_async).events[-1] == "message_stop"
    with pytest.raises(ValueError, match=r"^Unable to parse tool parameter JSON from model\. Please retry") as info:
        outcome(driver, "helper", faulted({"malformed_tool_json": True}), is_async)
    assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.parametrize("wire", ["openai_chat", "openai_responses"])
@pytest.mark.parametrize("surface", ["helper", "json"])
@SYNC_ASYNC
def test_openai_malformed_tool_json_reaches_the_app_as_text(wire: str, surface: str, is_async: bool) -> None:
    answer = outcome(DRIVERS[wire], surface, faulted({"malformed_tool_json": True}), is_async)
    assert answer.raw_arguments == ['{"city":"Paris", "oops": }']  # no error: the app's json.loads will fail
    assert answer.text == TURN["text"]


@pytest.mark.skipif("gemini" not in DRIVERS, reason="google-genai is not installed")
@pytest.mark.parametrize("surface", ["helper", "json"])
def test_gemini_malformed_tool_call_is_a_finish_reason(surface: str) -> None:
    answer = outcome(DRIVERS["gemini"], surface, faulted({"malformed_tool_json": True}), False)
    assert (answer.calls, answer.stop) == ([], "MALFORMED_FUNCTION_CALL")


# --- raw bytes


@pytest.mark.parametrize("wire", WIRES)
def test_raw_bytes_are_served_exactly(wire: str) -> None:
    driver = DRIVERS[wire]
    body = b"\xff\xfenot a stream\n\n"
    stub = faulted({"raw": body})
    user = [{"role": "user", "content": "x"}]
    path, request = {
        "anthropic": ("/v1/messages", {"model": "m", "max_tokens": 8, "stream": True, "messages": user}),
        "openai_chat": ("/v1/chat/completions", {"model": "m", "stream": True, "messages": user}),
        "openai_responses": ("/v1/responses", {"model": "m", "stream": True, "input": "x"}),
        "gemini": (
            "/v1beta/models/g:streamGenerateContent",
            {"contents": [{"role": "user", "parts": [{"text": "x"}]}]},
        ),
    }[wire]
    with driver.hx.Client(transport=stub) as http:
        response = http.post("https://stub.test" + path, json=request, params={"alt": "sse"})
    assert response.status_code == 200
    assert response.content == body
    assert response.headers["content-type"].startswith("text/event-stream")


def test_raw_keeps_an_error_turns_status() -> None:
    stub = ScriptTransport([{"error": {"status": 502}, "fault": {"raw": "<html>Bad gateway</html>"}}])
    with ANTHROPIC_HX.Client(transport=stub) as http:
        response = http.post("https://stub.test/v1/messages", json={"model": "m", "max_tokens": 8, "messages": USER})
    assert (response.status_code, response.text) == (502, "<html>Bad gateway</html>")


# --- the validator catches what the SDK lets through


def _stream_body(stub: ScriptTransport) -> bytes:
    with ANTHROPIC_HX.Client(transport=stub) as http:
        response = http.post(
            "https://stub.test/v1/messages",
            json={
                "model": "claude-test",
                "max_tokens": 10,
                "stream": True,
                "messages": USER,
                "tools": anthropic_tools(),
            },
        )
    return response.content


LONG_TOOL = {"tool": {"name": "get", "input": {"city": "Llanfairpwllgwyngyll, a long place name"}}}


@pytest.mark.parametrize(
    ("fault", "turn", "sdk_sees", "message"),
    [
        (
            {"drop": ["message_stop"]},
            TURN,
            {"stop": "tool_use", "calls": [("get", {"city": "Paris"})]},
            "the stream ends without message_stop; the SDK would not notice",
        ),
        (
            {"cut_after": 5},
            TURN,
            {"stop": None, "calls": []},
            "the stream ends while block 0 is open (cut mid-stream?)",
        ),
        (
            {"cut_after": 4},  # message_start, ping, the tool block's start, its first JSON fragment
            LONG_TOOL,
            {"stop": None, "calls": [("get", {})]},
            "the stream ends while block 0 is open (cut mid-stream?)",
        ),
        (
            {"drop": ["message_delta"]},
            TURN,
            {"stop": None, "calls": [("get", {"city": "Paris"})]},
            "event 11 (line 34): message_stop before any message_delta (no stop_reason)",
        ),
    ],
    ids=["no-message_stop", "cut-body", "truncated-tool-json", "no-message_delta"],
)
def test_faults_the_sdk_tolerates_are_caught_by_the_validator(
    fault: dict[str, Any], turn: dict[str, Any], sdk_sees: dict[str, Any], message: str
) -> None:
    answer = outcome(DRIVERS["anthropic"], "helper", faulted(fault, turn=turn), False)  # no error
    assert {"stop": answer.stop, "calls": answer.calls} == sdk_sees
    body = _stream_body(faulted(fault, turn=turn))
    with pytest.raises(StreamValidationError) as info:
        validate_anthropic_stream(body)
    assert str(info.value) == message
    validate_anthropic_stream(_stream_body(ScriptTransport([turn])))  # the unfaulted stream passes


def test_truncated_tool_json_closed_properly_is_silently_empty_for_the_sdk_and_invalid_for_the_validator() -> None:
    events = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "m",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {}},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"city": "Pa'},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    import json

    body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    answer = outcome(DRIVERS["anthropic"], "helper", ScriptTransport([{"fault": {"raw": body}}]), False)
    assert answer.calls == [("get", {})]  # the SDK drops the unfinished string without a word
    with pytest.raises(StreamValidationError) as info:
        validate_anthropic_stream(body)
    assert str(info.value) == (
        "event 3 (line 10): the tool input fragments of block 'get' are not valid JSON "
        '(Unterminated string starting at: line 1 column 10 (char 9)): \'{"city": "Pa\''
    )


def test_malformed_tool_json_is_caught_by_the_validator_too() -> None:
    body = _stream_body(faulted({"malformed_tool_json": True}))
    with pytest.raises(StreamValidationError) as info:
        validate_anthropic_stream(body)
    assert str(info.value).startswith("event 10 (line 31): the tool input fragments of block 'get' are not valid JSON")


def test_in_stream_error_is_rejected_unless_allowed() -> None:
    body = _stream_body(faulted({"stream_error": {"after": 1}}))
    with pytest.raises(StreamValidationError) as info:
        validate_anthropic_stream(body)
    assert str(info.value) == (
        "event 1 (line 4): the stream carries an API error: {'type': 'overloaded_error', 'message': 'Overloaded'}"
    )
    assert validate_anthropic_stream(body, allow_error=True)["error"]["type"] == "overloaded_error"


# --- coverage of the wires


def test_every_registered_wire_is_covered_and_declares_its_events() -> None:
    from wirescript.wires import default_wires

    streaming = [wire for wire in default_wires() if not wire.turnless]  # side endpoints serve no turns, no faults
    names = {wire.name for wire in streaming}
    assert set(LAST_EVENT) == names
    assert set(WIRES) <= names
    for wire in streaming:
        assert wire.events, f"{wire.name} declares no events, so Fault.drop cannot name them"
        assert LAST_EVENT[wire.name] in wire.events


@pytest.mark.parametrize("wire", WIRES)
def test_a_wire_sends_only_the_events_it_declares(wire: str) -> None:
    from wirescript.wires import default_wires

    rich = {
        "thinking": "Hmm, let me see.",
        "text": "Answer text",
        "tools": [{"name": "a", "input": {"x": 1}}, {"name": "b", "input": {}}],
    }
    stub = ScriptTransport([rich])
    outcome(DRIVERS[wire], "raw", stub, False)
    (fresh,) = [w for w in default_wires() if w.name == wire]
    rendered = fresh.render(Turn.model_validate(rich), stub.requests[0])
    assert rendered.frames is not None
    sent = {frame.name for frame in rendered.frames}
    assert sent <= fresh.events
    assert LAST_EVENT[wire] in sent
