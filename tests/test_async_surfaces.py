"""The providers' asynchronous surfaces, driven by the SDKs' own methods: background and stored responses, batches.

Each flow runs sync and async (`drive`): the same coroutine, whose calls are awaited when the
client is async. Background responses and batches run on the stub's clock and take their turns
when they run; what the app never collects fails `check()`.
"""

from __future__ import annotations

import asyncio
import inspect
import io
import json
from collections.abc import Callable, Coroutine
from typing import Any

import anthropic
import openai
import pytest

from _drivers import _g_client
from _support import anthropic_client, httpx, httpx2, openai_client
from wirescript import ScriptTransport
from wirescript.wires import AnthropicBatchesWire, GeminiBatchesWire, OpenAIBatchesWire, OpenAIResponsesWire
from wirescript.wires.openai import responses as responses_module

MODES = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
OPENAI_HX = httpx2 if int(openai.__version__.split(".")[0]) >= 3 else httpx
CUT = openai.APIConnectionError if OPENAI_HX is httpx2 else httpx.RemoteProtocolError
"""What reading a stream the stub cuts raises: openai 3.x wraps the HTTP library's error, 2.x lets it through."""


@pytest.fixture
def genai() -> Any:
    """google-genai, or the test is skipped (the legacy SDKs' environment has none)."""
    return pytest.importorskip("google.genai")


async def _(value: Any) -> Any:
    """The call's result: awaited when the client is async."""
    return await value if inspect.isawaitable(value) else value


async def every(stream: Any) -> list[Any]:
    """Every item of a sync or async iterator (a stream, a page, a JSONL decoder)."""
    if hasattr(stream, "__aiter__"):
        return [item async for item in stream]
    return list(stream)


async def collect(stream: Any, into: list[Any]) -> None:
    """Read a sync or async stream into `into`, event by event (what was read before a cut stays)."""
    if hasattr(stream, "__aiter__"):
        async for item in stream:
            into.append(item)
    else:
        for item in stream:
            into.append(item)


class Polls:
    """A polling loop's bound: a job its pace never ends fails the test at its sixth poll instead of hanging it."""

    def __init__(self, limit: int = 5) -> None:
        self.left = limit

    def __call__(self, running: bool) -> bool:
        if running:
            assert self.left > 0, "the job is still running after 5 polls"
            self.left -= 1
        return running


def drive(is_async: bool, flow: Callable[[bool], Coroutine[Any, Any, Any]]) -> Any:
    return asyncio.run(flow(is_async))


def messages_request(custom_id: str, text: str, model: str = "claude-sonnet-4-5") -> dict[str, Any]:
    return {
        "custom_id": custom_id,
        "params": {"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": text}]},
    }


# ---------------------------------------------------------------- OpenAI: background and stored responses


@MODES
def test_a_background_response_is_queued_then_completes_as_it_is_polled(is_async: bool) -> None:
    stub = ScriptTransport(["Written in the background."])

    async def flow(is_async: bool) -> None:
        client = openai_client(stub, is_async=is_async, max_retries=0)
        response = await _(client.responses.create(model="gpt-5", input="Write a story", background=True))
        assert (response.status, response.background, response.output) == ("queued", True, [])
        assert stub.pending  # no turn taken yet: the job has not run
        statuses = []
        bounded = Polls()
        while bounded(response.status in ("queued", "in_progress")):
            response = await _(client.responses.retrieve(response.id))
            statuses.append(response.status)
        assert statuses == ["in_progress", "completed"]  # two polls by default
        assert response.output_text == "Written in the background."

    drive(is_async, flow)
    create, *polls = stub.requests
    assert create.turn_index == 0
    assert create.messages == [{"role": "user", "content": "Write a story"}]
    assert [(p.method, p.path_params, p.turn_index) for p in polls] == [("GET", {"response_id": "resp_0000"}, None)] * 2
    stub.check()


@MODES
def test_a_background_response_completes_by_the_stubs_clock(is_async: bool) -> None:
    stub = ScriptTransport(["On the clock."], side={"jobs": {"polls": None, "after": "10m"}})

    async def flow(is_async: bool) -> None:
        client = openai_client(stub, is_async=is_async, max_retries=0)
        created = await _(client.responses.create(model="gpt-5", input="Slowly", background=True))
        for _poll in range(5):  # polls alone never end it
            assert (await _(client.responses.retrieve(created.id))).status == "queued"
        stub.clock.advance("6m")
        assert (await _(client.responses.retrieve(created.id))).status == "in_progress"
        stub.clock.advance("5m")
        done = await _(client.responses.retrieve(created.id))
        assert (done.status, done.output_text) == ("completed", "On the clock.")

    drive(is_async, flow)
    assert stub.requests[0].turn_index == 0
    assert stub.requests[-1].received_at - stub.requests[0].received_at >= 600  # eleven minutes, none slept
    stub.check()


def test_an_error_turn_fails_a_background_response_and_a_max_tokens_turn_leaves_it_incomplete() -> None:
    stub = ScriptTransport(
        [{"error": {"status": 500, "message": "The model crashed."}}, {"text": "Cut", "stop_reason": "max_tokens"}]
    )
    client = openai_client(stub, max_retries=0)
    finals = []
    for _job in range(2):
        response = client.responses.create(model="gpt-5", input="Go", background=True)
        bounded = Polls()
        while bounded(response.status in ("queued", "in_progress")):
            response = client.responses.retrieve(response.id)
        finals.append(response)
    failed, incomplete = finals
    assert (failed.status, failed.error.code, failed.error.message) == ("failed", "server_error", "The model crashed.")
    assert (incomplete.status, incomplete.incomplete_details.reason) == ("incomplete", "max_output_tokens")
    stub.check()


@MODES
def test_cancel_ends_a_background_response_cancelled_without_consuming_a_turn(is_async: bool) -> None:
    stub = ScriptTransport([])  # the job never runs: no turn is scripted for it

    async def flow(is_async: bool) -> None:
        client = openai_client(stub, is_async=is_async, max_retries=0)
        response = await _(client.responses.create(model="gpt-5", input="Never mind", background=True))
        cancelled = await _(client.responses.cancel(response.id))
        assert cancelled.status == "cancelled"
        assert (await _(client.responses.cancel(response.id))).status == "cancelled"  # cancelling twice is idempotent
        assert (await _(client.responses.retrieve(response.id))).status == "cancelled"

    drive(is_async, flow)
    stub.check()


def test_a_cancelled_background_response_leaves_its_scripted_turn_unused() -> None:
    stub = ScriptTransport(["the answer it never gave"])
    client = openai_client(stub, max_retries=0)
    response = client.responses.create(model="gpt-5", input="Never mind", background=True)
    client.responses.cancel(response.id)
    with pytest.raises(AssertionError, match=r"1 scripted turn\(s\) were never requested"):
        stub.check()


@MODES
def test_a_background_stream_cut_after_four_events_resumes_at_the_fifth(is_async: bool) -> None:
    stub = ScriptTransport([{"text": "A long story, told in pieces.", "fault": {"disconnect_after": 4}}])

    async def flow(is_async: bool) -> None:
        client = openai_client(stub, is_async=is_async, max_retries=0)
        seen: list[Any] = []
        stream = await _(client.responses.create(model="gpt-5", input="Tell", background=True, stream=True))
        with pytest.raises(CUT):
            await collect(stream, seen)
        assert [e.sequence_number for e in seen] == [0, 1, 2, 3]
        cursor = seen[-1].sequence_number
        resumed = await every(
            await _(client.responses.retrieve(seen[0].response.id, stream=True, starting_after=cursor))
        )
        numbers = [e.sequence_number for e in resumed]
        assert numbers[0] == 4
        assert numbers == list(range(4, 4 + len(numbers)))
        assert resumed[-1].type == "response.completed"
        text = "".join(e.delta for e in resumed if e.type == "response.output_text.delta")
        assert text == "A long story, told in pieces."

    drive(is_async, flow)
    resume = stub.requests[1]
    assert (resume.method, resume.query) == ("GET", {"stream": "true", "starting_after": "3"})
    assert resume.turn_index is None
    stub.check()


def test_the_sdks_stream_helper_resumes_a_background_stream_and_the_resume_ends_after_five_minutes() -> None:
    stub = ScriptTransport([{"text": "Resumable.", "fault": {"disconnect_after": 3}}])
    client = openai_client(stub, max_retries=0)
    seen: list[Any] = []
    with pytest.raises(CUT):
        seen.extend(client.responses.create(model="gpt-5", input="Go", background=True, stream=True))
    response_id = seen[0].response.id
    # `responses.stream(response_id=...)` fetches the whole stream again and drops what it already saw
    with client.responses.stream(response_id=response_id, starting_after=seen[-1].sequence_number) as stream:
        assert stream.get_final_response().output_text == "Resumable."
    assert "starting_after" not in stub.requests[1].query
    stub.clock.advance("5m1s")
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.retrieve(response_id, stream=True, starting_after=2)
    assert (
        caught.value.body["message"] == "This response can no longer be streamed because it is more than 5 minutes old"
    )
    stub.check()


def test_a_cut_background_stream_never_resumed_fails_check() -> None:
    stub = ScriptTransport([{"text": "Cut short.", "fault": {"disconnect_after": 2}}])
    client = openai_client(stub, max_retries=0)
    with pytest.raises(CUT):
        list(client.responses.create(model="gpt-5", input="Go", background=True, stream=True))
    with pytest.raises(
        AssertionError, match=r"1 background response\(s\) were never seen to their end:\n  - resp_0000"
    ):
        stub.check()


@MODES
def test_a_stored_response_is_retrievable_lists_its_input_and_chains(is_async: bool) -> None:
    stub = ScriptTransport(["Paris.", "About two million people."])

    async def flow(is_async: bool) -> None:
        client = openai_client(stub, is_async=is_async, max_retries=0)
        first = await _(
            client.responses.create(model="gpt-5", input=[{"role": "user", "content": "Capital of France?"}])
        )
        again = await _(client.responses.retrieve(first.id))
        assert (again.id, again.output_text, again.status) == (first.id, "Paris.", "completed")
        items = await every(await _(client.responses.input_items.list(first.id)))
        assert [(i.type, i.role, i.content[0].text) for i in items] == [("message", "user", "Capital of France?")]
        second = await _(
            client.responses.create(model="gpt-5", input="How many live there?", previous_response_id=first.id)
        )
        assert second.output_text == "About two million people."
        await _(client.responses.delete(first.id))
        with pytest.raises(openai.NotFoundError):
            await _(client.responses.retrieve(first.id))

    drive(is_async, flow)
    chained = stub.requests[3]
    assert [m.get("content") for m in chained.conversation if m.get("role") == "user"] == [
        "Capital of France?",
        "How many live there?",
    ]
    stub.check()


def test_input_items_list_newest_first_by_default_and_pages_as_the_api_does() -> None:
    stub = ScriptTransport(["Noted."])
    client = openai_client(stub, max_retries=0)
    said = ["First.", "Second.", "Third."]
    response = client.responses.create(model="gpt-5", input=[{"role": "user", "content": text} for text in said])
    newest_first = [item.content[0].text for item in client.responses.input_items.list(response.id)]
    assert newest_first == ["Third.", "Second.", "First."]  # "Default is `desc`" (the SDK's input_items.list)
    oldest_first = client.responses.input_items.list(response.id, order="asc", limit=2)
    assert ([i.content[0].text for i in oldest_first.data], oldest_first.has_more) == (["First.", "Second."], True)
    rest = client.responses.input_items.list(response.id, order="asc", after=oldest_first.data[-1].id)
    assert ([i.content[0].text for i in rest.data], rest.has_more) == (["Third."], False)
    stub.check()


def test_a_response_stored_with_store_false_is_not_retrievable_and_one_answered_at_once_cannot_be_cancelled() -> None:
    stub = ScriptTransport(["Forgotten.", "Kept."])
    client = openai_client(stub, max_retries=0)
    forgotten = client.responses.create(model="gpt-5", input="Hi", store=False)
    with pytest.raises(openai.NotFoundError, match="not found"):
        client.responses.retrieve(forgotten.id)
    kept = client.responses.create(model="gpt-5", input="Hi")
    with pytest.raises(openai.BadRequestError, match="Only responses created with background=true can be cancelled"):
        client.responses.cancel(kept.id)
    assert stub.problems == []


def test_an_uncollected_background_response_fails_check_and_an_unpolled_one_takes_no_turn() -> None:
    stub = ScriptTransport(["never delivered"])
    openai_client(stub, max_retries=0).responses.create(model="gpt-5", input="Go", background=True)
    with pytest.raises(AssertionError) as caught:
        stub.check()
    message = str(caught.value)
    assert "1 scripted turn(s) were never requested" in message
    assert "1 background response(s) were never seen to their end:\n  - resp_0000 (background" in message
    stub.check(unused_turns=False)  # the listing follows unused_turns, as unused turns do


def test_azure_openai_serves_background_responses_on_its_own_paths() -> None:
    stub = ScriptTransport(["From Azure, later."])
    client = openai.AzureOpenAI(
        api_key="test-key",
        api_version="2025-04-01-preview",
        azure_endpoint="https://my-resource.openai.azure.com",
        http_client=OPENAI_HX.Client(transport=stub),
        max_retries=0,
    )
    response = client.responses.create(model="my-deployment", input="Hi", background=True)
    bounded = Polls()
    while bounded(response.status in ("queued", "in_progress")):
        response = client.responses.retrieve(response.id)
    assert response.output_text == "From Azure, later."
    assert stub.requests[1].path == f"/openai/responses/{response.id}"
    stub.check()


# ---------------------------------------------------------------- Anthropic: Message Batches


@MODES
def test_an_anthropic_batch_of_three_ends_with_two_succeeded_and_one_errored(is_async: bool) -> None:
    stub = ScriptTransport(["Alpha.", {"error": {"status": 500, "message": "The model crashed."}}, "Gamma."])

    async def flow(is_async: bool) -> None:
        client = anthropic_client(stub, is_async=is_async, max_retries=0)
        requests = [messages_request(c, f"Question {c}") for c in ("a", "b", "c")]
        batch = await _(client.messages.batches.create(requests=requests))
        assert (batch.processing_status, batch.request_counts.processing, batch.results_url) == ("in_progress", 3, None)
        with pytest.raises(anthropic.AnthropicError, match=r"No `results_url` for the given batch; Has it finished"):
            await _(client.messages.batches.results(batch.id))  # before the end: the SDK's own error
        batch = await _(client.messages.batches.retrieve(batch.id))
        assert batch.processing_status == "ended"
        counts = batch.request_counts
        assert (counts.succeeded, counts.errored, counts.canceled, counts.expired, counts.processing) == (2, 1, 0, 0, 0)
        assert batch.results_url.endswith(f"/v1/messages/batches/{batch.id}/results")
        results = {r.custom_id: r.result for r in await every(await _(client.messages.batches.results(batch.id)))}
        assert {k: v.type for k, v in results.items()} == {"a": "succeeded", "b": "errored", "c": "succeeded"}
        assert (results["a"].message.content[0].text, results["c"].message.content[0].text) == ("Alpha.", "Gamma.")
        assert (results["b"].error.error.type, results["b"].error.error.message) == ("api_error", "The model crashed.")

    drive(is_async, flow)
    items = [r for r in stub.requests if r.batch is not None]
    assert [(r.custom_id, r.provider, r.model, r.max_tokens, r.last_user_text, r.turn_index) for r in items] == [
        ("a", "anthropic", "claude-sonnet-4-5", 64, "Question a", 0),
        ("b", "anthropic", "claude-sonnet-4-5", 64, "Question b", 1),
        ("c", "anthropic", "claude-sonnet-4-5", 64, "Question c", 2),
    ]
    assert {r.batch for r in items} == {"msgbatch_0000"}
    assert [r.turn_index for r in stub.requests if r.batch is None] == [None] * (len(stub.requests) - 3)
    stub.check()


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "not-strict"])
def test_an_anthropic_batch_item_is_held_to_the_answer_rules_as_a_request_is(strict: bool) -> None:
    # The item offers no tools, so the real API could not answer it with a tool call: the item errors
    # with the problem's message, as the same request sent alone is refused (docs/answers.md).
    stub = ScriptTransport(["Alpha.", {"tool": {"name": "lookup", "input": {"q": "x"}}}], strict=strict)
    client = anthropic_client(stub, max_retries=0)
    batch = client.messages.batches.create(requests=[messages_request(c, f"Question {c}") for c in ("a", "b")])
    batch = client.messages.batches.retrieve(batch.id)
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["a"].type == "succeeded"
    if not strict:  # strict=False holds no turn to the answer rules, inside a batch or not
        assert results["b"].type == "succeeded"
        assert results["b"].message.content[0].name == "lookup"
        assert stub.problems == []
        stub.check()
        return
    assert results["b"].type == "errored"
    assert results["b"].error.error.type == "invalid_request_error"
    assert "answer rule anthropic.answer.tool-not-offered" in results["b"].error.error.message
    [problem] = stub.problems
    item = next(r for r in stub.requests if r.custom_id == "b")
    assert (problem.kind, problem.index) == ("impossible_answer", item.index)
    with pytest.raises(AssertionError, match="which the real API could not give to this request"):
        stub.check()


def test_a_batchs_items_are_billed_at_the_batch_rate_with_their_usage_derived() -> None:
    prices = {"claude-sonnet-4-5": {"input": 3.0, "output": 15.0, "batch_multiplier": 0.5}}
    stub = ScriptTransport(["Alpha.", {"error": {"status": 500}}, "Gamma."], usage="derive", prices=prices)
    client = anthropic_client(stub, max_retries=0)
    batch = client.messages.batches.create(requests=[messages_request(c, f"Question {c}") for c in "abc"])
    client.messages.batches.retrieve(batch.id)
    client.messages.batches.retrieve(batch.id)
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    rows = stub.bill.rows
    assert [(stub.requests[row.index].custom_id, row.batch, row.derived) for row in rows] == [
        ("a", True, True),
        ("c", True, True),
    ]  # the errored item got no message, and the batch's own requests none
    assert rows[0].output_tokens == results["a"].message.usage.output_tokens > 0
    full = (rows[0].input_tokens * 3.0 + rows[0].output_tokens * 15.0) / 1e6
    assert rows[0].usd == pytest.approx(full * 0.5)
    stub.check()


def test_batch_items_take_turns_from_their_models_queues_where_the_batch_ends() -> None:
    stub = ScriptTransport({"claude-haiku-4-5": ["Haiku 1", "Haiku 2"], "claude-opus-4-1": ["Opus 1"]})
    client = anthropic_client(stub, max_retries=0)
    batch = client.messages.batches.create(
        requests=[
            messages_request("h1", "x", "claude-haiku-4-5"),
            messages_request("o1", "y", "claude-opus-4-1"),
            messages_request("h2", "z", "claude-haiku-4-5"),
        ]
    )
    stub.clock.advance("1m")  # its pace ends it on the clock too
    assert client.messages.batches.retrieve(batch.id).processing_status == "ended"
    results = {r.custom_id: r.result.message.content[0].text for r in client.messages.batches.results(batch.id)}
    assert results == {"h1": "Haiku 1", "o1": "Opus 1", "h2": "Haiku 2"}
    stub.check()


def test_a_cancelled_anthropic_batch_ends_canceled_consuming_no_turn() -> None:
    stub = ScriptTransport([])
    client = anthropic_client(stub, max_retries=0)
    batch = client.messages.batches.create(requests=[messages_request("a", "x"), messages_request("b", "y")])
    cancelling = client.messages.batches.cancel(batch.id)
    assert (cancelling.processing_status, cancelling.cancel_initiated_at is not None) == ("canceling", True)
    ended = client.messages.batches.retrieve(batch.id)
    assert (ended.processing_status, ended.request_counts.canceled) == ("ended", 2)
    assert [r.result.type for r in client.messages.batches.results(batch.id)] == ["canceled", "canceled"]
    assert client.messages.batches.delete(batch.id).type == "message_batch_deleted"
    stub.check()


def test_an_anthropic_batch_not_ended_in_24_hours_expires() -> None:
    stub = ScriptTransport([], side={"jobs": {"polls": None, "after": None}})  # it never ends on its own
    client = anthropic_client(stub, max_retries=0)
    batch = client.messages.batches.create(requests=[messages_request("a", "x")])
    assert batch.expires_at - batch.created_at == __import__("datetime").timedelta(hours=24)
    stub.clock.advance("23h")
    assert client.messages.batches.retrieve(batch.id).processing_status == "in_progress"
    stub.clock.advance("1h")
    expired = client.messages.batches.retrieve(batch.id)
    assert (expired.processing_status, expired.request_counts.expired) == ("ended", 1)
    assert [r.result.type for r in client.messages.batches.results(batch.id)] == ["expired"]
    stub.check()


def test_an_uncollected_anthropic_batch_fails_check() -> None:
    stub = ScriptTransport(["one", "two"])
    client = anthropic_client(stub, max_retries=0)
    batch = client.messages.batches.create(requests=[messages_request("a", "x"), messages_request("b", "y")])
    bounded = Polls()
    while bounded(client.messages.batches.retrieve(batch.id).processing_status != "ended"):
        pass
    with pytest.raises(AssertionError) as caught:
        stub.check()  # it ended, but its results were never fetched
    assert "1 message batch(es) were never collected to their end:\n  - msgbatch_0000 (2 request(s)" in str(
        caught.value
    )
    list(client.messages.batches.results(batch.id))
    stub.check()


def test_anthropic_batches_list_and_delete_as_the_api_does() -> None:
    stub = ScriptTransport(["one"])
    client = anthropic_client(stub, max_retries=0)
    first = client.messages.batches.create(requests=[messages_request("a", "x")])
    with pytest.raises(anthropic.BadRequestError, match="can only be deleted once they've finished processing"):
        client.messages.batches.delete(first.id)
    second = client.messages.batches.cancel(client.messages.batches.create(requests=[messages_request("b", "y")]).id)
    assert [b.id for b in client.messages.batches.list()] == [second.id, first.id]  # the newest first
    with pytest.raises(anthropic.NotFoundError):
        client.messages.batches.retrieve("msgbatch_unknown")
    for batch_id in (first.id, second.id):
        bounded = Polls()
        while bounded(client.messages.batches.retrieve(batch_id).processing_status != "ended"):
            pass
        list(client.messages.batches.results(batch_id))
    stub.check()


def test_a_listing_shows_each_batch_as_the_clock_and_a_cancel_left_it() -> None:
    stub = ScriptTransport(["Listed."])
    claude = anthropic_client(stub, max_retries=0)
    ended = claude.messages.batches.create(requests=[messages_request("a", "x")])
    cancelled = claude.messages.batches.create(requests=[messages_request("b", "y")])
    claude.messages.batches.cancel(cancelled.id)
    stub.clock.advance("1m")  # the pace's minute: the first ends with no retrieve of its own
    listed = {
        b.id: (b.processing_status, b.request_counts.succeeded, b.request_counts.canceled)
        for b in claude.messages.batches.list()
    }
    assert listed == {cancelled.id: ("ended", 0, 1), ended.id: ("ended", 1, 0)}
    assert [r.result.message.content[0].text for r in claude.messages.batches.results(ended.id)] == ["Listed."]
    stub.check()


def test_an_item_the_real_api_would_refuse_is_errored_with_the_providers_words() -> None:
    stub = ScriptTransport(["fine"])
    client = anthropic_client(stub, max_retries=0)
    broken = {
        "custom_id": "bad",
        "params": {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "x"}]},
    }
    batch = client.messages.batches.create(requests=[messages_request("good", "x"), broken])
    bounded = Polls()
    while bounded(client.messages.batches.retrieve(batch.id).processing_status != "ended"):
        pass
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["good"].type == "succeeded"
    assert results["bad"].type == "errored"
    assert "max_tokens" in results["bad"].error.error.message
    [problem] = stub.problems
    assert problem.kind == "strict"
    assert stub.requests[problem.index].custom_id == "bad"
    stub.check(allow=["strict"])


# ---------------------------------------------------------------- OpenAI: Files and Batches


def jsonl(*lines: dict[str, Any]) -> io.BytesIO:
    return io.BytesIO("\n".join(json.dumps(line) for line in lines).encode())


def chat_line(custom_id: str, text: str) -> dict[str, Any]:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]}
    return {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body}


@MODES
def test_an_openai_batch_from_a_jsonl_file_completes_with_both_custom_ids_in_its_output(is_async: bool) -> None:
    stub = ScriptTransport(["First answer.", "Second answer."])

    async def flow(is_async: bool) -> None:
        client = openai_client(stub, is_async=is_async, max_retries=0)
        upload = jsonl(chat_line("req-1", "One?"), chat_line("req-2", "Two?"))
        file = await _(client.files.create(file=("requests.jsonl", upload), purpose="batch"))
        assert (file.purpose, file.filename, file.bytes) == ("batch", "requests.jsonl", len(upload.getvalue()))
        batch = await _(
            client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h")
        )
        statuses = [batch.status]
        bounded = Polls()
        while bounded(batch.status not in ("completed", "failed", "expired", "cancelled")):
            batch = await _(client.batches.retrieve(batch.id))
            statuses.append(batch.status)
        assert statuses == ["validating", "in_progress", "completed"]
        assert (batch.request_counts.total, batch.request_counts.completed, batch.request_counts.failed) == (2, 2, 0)
        assert batch.error_file_id is None
        assert batch.output_file_id is not None
        content = await _(client.files.content(batch.output_file_id))
        lines = [json.loads(line) for line in content.text.splitlines()]
        assert {line["custom_id"] for line in lines} == {"req-1", "req-2"}
        answers = {line["custom_id"]: line["response"]["body"]["choices"][0]["message"]["content"] for line in lines}
        assert answers == {"req-1": "First answer.", "req-2": "Second answer."}
        assert all(line["response"]["status_code"] == 200 and line["error"] is None for line in lines)

    drive(is_async, flow)
    items = [r for r in stub.requests if r.batch is not None]
    assert [(r.custom_id, r.provider, r.last_user_text) for r in items] == [
        ("req-1", "openai_chat", "One?"),
        ("req-2", "openai_chat", "Two?"),
    ]
    stub.check()


def test_an_openai_batch_line_is_held_to_the_answer_rules_as_a_request_is() -> None:
    stub = ScriptTransport(["Fine.", {"tool": {"name": "lookup", "input": {"q": "x"}}}])
    client = openai_client(stub, max_retries=0)
    upload = jsonl(chat_line("req-1", "One?"), chat_line("req-2", "Two?"))
    file = client.files.create(file=("requests.jsonl", upload), purpose="batch")
    batch = client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h")
    bounded = Polls()
    while bounded(batch.status not in ("completed", "failed", "expired", "cancelled")):
        batch = client.batches.retrieve(batch.id)
    assert (batch.request_counts.completed, batch.request_counts.failed) == (1, 1)
    assert batch.output_file_id is not None
    assert batch.error_file_id is not None
    [fine] = map(json.loads, client.files.content(batch.output_file_id).text.splitlines())
    [refused] = map(json.loads, client.files.content(batch.error_file_id).text.splitlines())
    assert (fine["custom_id"], fine["response"]["status_code"]) == ("req-1", 200)
    assert (refused["custom_id"], refused["response"]["status_code"]) == ("req-2", 400)
    assert "openai_chat.answer.tool-not-offered" in refused["response"]["body"]["error"]["message"]
    assert [problem.kind for problem in stub.problems] == ["impossible_answer"]


def test_an_openai_batch_runs_responses_lines_on_turns_and_embeddings_lines_without() -> None:
    stub = ScriptTransport(["Responses line."])
    client = openai_client(stub, max_retries=0)
    embedding = {"model": "text-embedding-3-small", "input": "cat"}
    upload = jsonl(
        {"custom_id": "e", "method": "POST", "url": "/v1/embeddings", "body": embedding},
    )
    file = client.files.create(file=("e.jsonl", upload), purpose="batch")
    embeddings = client.batches.create(input_file_id=file.id, endpoint="/v1/embeddings", completion_window="24h")
    response_line = {"model": "gpt-5", "input": "Hi"}
    file = client.files.create(
        file=("r.jsonl", jsonl({"custom_id": "r", "method": "POST", "url": "/v1/responses", "body": response_line})),
        purpose="batch",
    )
    responses = client.batches.create(input_file_id=file.id, endpoint="/v1/responses", completion_window="24h")
    outputs = {}
    for batch in (embeddings, responses):
        bounded = Polls()
        while bounded(batch.status != "completed"):
            batch = client.batches.retrieve(batch.id)
        outputs[batch.endpoint] = json.loads(client.files.content(batch.output_file_id).text)
    vector = outputs["/v1/embeddings"]["response"]["body"]["data"][0]["embedding"]
    assert (
        vector
        == client.embeddings.create(model="text-embedding-3-small", input="cat", encoding_format="float")
        .data[0]
        .embedding
    )
    assert outputs["/v1/responses"]["response"]["body"]["output"][0]["content"][0]["text"] == "Responses line."
    assert [(r.custom_id, r.turn_index) for r in stub.requests if r.batch is not None] == [("e", None), ("r", 0)]
    stub.check()


def test_a_failed_line_goes_to_the_error_file_and_an_empty_output_is_none() -> None:
    stub = ScriptTransport([{"error": {"status": 429, "message": "Slow down."}}])
    client = openai_client(stub, max_retries=0)
    file = client.files.create(file=("one.jsonl", jsonl(chat_line("only", "x"))), purpose="batch")
    batch = client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h")
    bounded = Polls()
    while bounded(batch.status != "completed"):
        batch = client.batches.retrieve(batch.id)
    assert (batch.output_file_id, batch.request_counts.failed) == (None, 1)
    [line] = [json.loads(x) for x in client.files.content(batch.error_file_id).text.splitlines()]
    assert (line["custom_id"], line["response"]["status_code"]) == ("only", 429)
    assert line["response"]["body"]["error"]["message"] == "Slow down."
    stub.check()


def test_an_invalid_input_file_fails_the_batch_with_its_line_errors() -> None:
    stub = ScriptTransport([])
    client = openai_client(stub, max_retries=0)
    wrong_url = {**chat_line("b", "y"), "url": "/v1/embeddings"}
    upload = io.BytesIO(json.dumps(chat_line("a", "x")).encode() + b"\nnot json\n" + json.dumps(wrong_url).encode())
    file = client.files.create(file=("bad.jsonl", upload), purpose="batch")
    batch = client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h")
    assert batch.status == "validating"
    failed = client.batches.retrieve(batch.id)
    assert failed.status == "failed"
    assert failed.failed_at is not None
    assert [(e.code, e.line) for e in failed.errors.data] == [("invalid_json_line", 2), ("url_mismatch", 3)]
    stub.check()


def test_files_are_refused_and_served_as_the_files_api_does() -> None:
    stub = ScriptTransport([])
    client = openai_client(stub, max_retries=0)
    with pytest.raises(openai.BadRequestError, match=r"Invalid file format for Batch API\. Must be \.jsonl"):
        client.files.create(file=("requests.txt", io.BytesIO(b"{}")), purpose="batch")
    kept = client.files.create(file=("notes.txt", io.BytesIO(b"hello")), purpose="user_data")
    assert client.files.retrieve(kept.id).filename == "notes.txt"
    assert client.files.content(kept.id).content == b"hello"
    assert [f.id for f in client.files.list(purpose="user_data")] == [kept.id]
    assert client.files.delete(kept.id).deleted is True
    with pytest.raises(openai.NotFoundError, match=f"No such File object: {kept.id}"):
        client.files.retrieve(kept.id)
    with pytest.raises(openai.NotFoundError):
        client.batches.create(input_file_id="file-missing", endpoint="/v1/chat/completions", completion_window="24h")
    assert stub.problems == []


def test_a_cancelled_openai_batch_is_cancelling_then_cancelled_and_an_unfinished_one_expires() -> None:
    stub = ScriptTransport([], side={"jobs": {"polls": None, "after": None}})
    client = openai_client(stub, max_retries=0)
    file = client.files.create(file=("one.jsonl", jsonl(chat_line("a", "x"))), purpose="batch")
    cancelled = client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h")
    assert client.batches.cancel(cancelled.id).status == "cancelling"
    assert client.batches.retrieve(cancelled.id).status == "cancelled"
    late = client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h")
    stub.clock.advance("24h")
    expired = client.batches.retrieve(late.id)
    assert (expired.status, expired.output_file_id, expired.request_counts.failed) == ("expired", None, 1)
    [line] = [json.loads(x) for x in client.files.content(expired.error_file_id).text.splitlines()]
    assert line["error"]["code"] == "batch_expired"
    assert [b.id for b in client.batches.list()] == [late.id, cancelled.id]
    stub.check()


def test_an_uncollected_openai_batch_fails_check() -> None:
    stub = ScriptTransport(["one"])
    client = openai_client(stub, max_retries=0)
    file = client.files.create(file=("one.jsonl", jsonl(chat_line("a", "x"))), purpose="batch")
    batch = client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h")
    bounded = Polls()
    while bounded(client.batches.retrieve(batch.id).status != "completed"):
        pass
    with pytest.raises(AssertionError, match=r"1 batch\(es\) were never collected to their end:\n  - batch_0001"):
        stub.check()


# ---------------------------------------------------------------- Gemini: batch mode


@MODES
def test_a_gemini_inline_batch_moves_through_the_states_the_sdk_maps(genai: Any, is_async: bool) -> None:
    stub = ScriptTransport(["A joke.", "Because of Rayleigh scattering."])

    async def flow(is_async: bool) -> None:
        client = _g_client(stub, is_async=is_async)
        batches = client.aio.batches if is_async else client.batches
        requests = [
            {"contents": [{"parts": [{"text": "Tell a joke."}], "role": "user"}], "metadata": {"key": "joke"}},
            {"contents": [{"parts": [{"text": "Why is the sky blue?"}], "role": "user"}]},
        ]
        job = await _(batches.create(model="gemini-2.5-flash", src=requests, config={"display_name": "two"}))
        states = [job.state.name]
        bounded = Polls()
        while bounded(states[-1] not in ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED")):
            job = await _(batches.get(name=job.name))
            states.append(job.state.name)
        assert states == ["JOB_STATE_PENDING", "JOB_STATE_RUNNING", "JOB_STATE_SUCCEEDED"]
        inlined = job.dest.inlined_responses
        assert [(r.metadata, r.response.text) for r in inlined] == [
            ({"key": "joke"}, "A joke."),
            (None, "Because of Rayleigh scattering."),
        ]

    drive(is_async, flow)
    items = [r for r in stub.requests if r.batch is not None]
    assert [(r.custom_id, r.provider, r.model, r.last_user_text) for r in items] == [
        ("joke", "gemini", "gemini-2.5-flash", "Tell a joke."),
        (None, "gemini", "gemini-2.5-flash", "Why is the sky blue?"),
    ]
    stub.check()


def test_a_gemini_batch_from_an_uploaded_file_writes_a_responses_file(genai: Any) -> None:
    from google.genai import types

    stub = ScriptTransport(["From the file.", {"error": {"status": 400, "message": "Bad request."}}])
    client = _g_client(stub)
    lines = [
        {"key": "first", "request": {"contents": [{"parts": [{"text": "A"}], "role": "user"}]}},
        {"key": "second", "request": {"contents": [{"parts": [{"text": "B"}], "role": "user"}]}},
    ]
    uploaded = client.files.upload(file=jsonl(*lines), config=types.UploadFileConfig(mime_type="jsonl"))
    assert uploaded.size_bytes == len(jsonl(*lines).getvalue())
    job = client.batches.create(model="gemini-2.5-flash", src=uploaded.name)
    bounded = Polls()
    while bounded(job.state.name != "JOB_STATE_SUCCEEDED"):
        job = client.batches.get(name=job.name)
    results = [json.loads(line) for line in client.files.download(file=job.dest.file_name).decode().splitlines()]
    assert [(r["key"], "response" in r) for r in results] == [("first", True), ("second", False)]
    assert results[0]["response"]["candidates"][0]["content"]["parts"][0]["text"] == "From the file."
    assert (results[1]["error"]["code"], results[1]["error"]["message"]) == (400, "Bad request.")
    assert [r.custom_id for r in stub.requests if r.batch is not None] == ["first", "second"]
    stub.check()


def test_a_cancelled_gemini_batch_is_cancelled_and_an_uncollected_one_fails_check(genai: Any) -> None:
    stub = ScriptTransport(["never"])
    client = _g_client(stub)
    request = [{"contents": [{"parts": [{"text": "x"}], "role": "user"}]}]
    cancelled = client.batches.create(model="gemini-2.5-flash", src=request)
    client.batches.cancel(name=cancelled.name)
    assert client.batches.get(name=cancelled.name).state.name == "JOB_STATE_CANCELLED"
    client.batches.create(model="gemini-2.5-flash", src=request)
    assert [j.state.name for j in client.batches.list()] == ["JOB_STATE_PENDING", "JOB_STATE_CANCELLED"]
    with pytest.raises(AssertionError, match=r"1 Gemini batch\(es\) were never collected to their end"):
        stub.check()


def test_openai_and_google_genai_share_the_batch_paths_and_are_told_apart_by_their_headers(genai: Any) -> None:
    stub = ScriptTransport(["gemini item", "openai item"])
    gemini = _g_client(stub)
    job = gemini.batches.create(model="gemini-2.5-flash", src=[{"contents": [{"parts": [{"text": "x"}]}]}])
    openai_batches = openai_client(stub, max_retries=0).batches
    client = openai_client(stub, max_retries=0)
    file = client.files.create(file=("a.jsonl", jsonl(chat_line("a", "x"))), purpose="batch")
    batch = openai_batches.create(input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h")
    bounded = Polls()
    while bounded(job.state.name != "JOB_STATE_SUCCEEDED"):
        job = gemini.batches.get(name=job.name)  # GET /v1/batches/… from google-genai
    bounded = Polls()
    while bounded(batch.status != "completed"):
        batch = openai_batches.retrieve(batch.id)  # GET /v1/batches/… from openai
    client.files.content(batch.output_file_id)
    providers = {(r.path.rsplit("/", 1)[0], r.provider) for r in stub.requests if r.method == "GET"}
    assert ("/v1/batches", "gemini_batches") in providers
    assert ("/v1/batches", "openai_batches") in providers
    stub.check()


# ---------------------------------------------------------------- the loopback server, record mode, the cost


def test_the_same_surfaces_over_the_loopback_server() -> None:
    pytest.importorskip("uvicorn")
    stub = ScriptTransport(["batched", {"text": "Streamed in the background.", "fault": {"disconnect_after": 4}}])
    with stub.serve() as url:
        claude = anthropic.Anthropic(api_key="test-key", base_url=url, max_retries=0)
        batch = claude.messages.batches.create(requests=[messages_request("only", "x")])
        bounded = Polls()
        while bounded(batch.processing_status != "ended"):
            batch = claude.messages.batches.retrieve(batch.id)
        assert batch.results_url.startswith(url)  # the loopback server's own address, not api.anthropic.com
        assert [r.result.message.content[0].text for r in claude.messages.batches.results(batch.id)] == ["batched"]
        gpt = openai.OpenAI(api_key="test-key", base_url=f"{url}/v1", max_retries=0)
        seen: list[Any] = []
        with pytest.raises(CUT):
            seen.extend(gpt.responses.create(model="gpt-5", input="Go", background=True, stream=True))
        resumed = list(
            gpt.responses.retrieve(seen[0].response.id, stream=True, starting_after=seen[-1].sequence_number)
        )
        assert [e.sequence_number for e in seen + resumed] == list(range(len(seen) + len(resumed)))
        claude.close()  # their pooled connections: left open, each warns in whichever later test collects it
        gpt.close()
    stub.check()


def test_record_mode_passes_background_responses_and_batches_through(tmp_path: Any) -> None:
    from wirescript import RecordingTransport

    upstream = ScriptTransport(["in the background", "plain"])
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=upstream)
    client = openai_client(rec, max_retries=0)
    response = client.responses.create(model="gpt-5", input="x", background=True)
    bounded = Polls()
    while bounded(response.status in ("queued", "in_progress")):
        response = client.responses.retrieve(response.id)
    assert response.output_text == "in the background"
    assert client.responses.create(model="gpt-5", input="y").output_text == "plain"
    assert [t.text for t in rec.turns] == ["plain"]  # the job's answers are noted, not recorded as turns
    assert len(rec.notes) == 3
    assert all("openai_responses" in note for note in rec.notes)
    upstream.check()


def test_a_stub_whose_app_uses_none_of_these_never_walks_their_wires(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    for kind in (AnthropicBatchesWire, OpenAIBatchesWire, GeminiBatchesWire):
        original = kind.matches

        def counting(self: Any, method: str, path: str, *, host: str = "", _original: Any = original) -> bool:
            asked.append(path)
            return bool(_original(self, method, path, host=host))

        monkeypatch.setattr(kind, "matches", counting)
        monkeypatch.setattr(kind, "settle", lambda *a, **k: asked.append("settle"))
    monkeypatch.setattr(OpenAIResponsesWire, "settle", lambda *a, **k: asked.append("responses settle"))
    monkeypatch.setattr(responses_module, "_input_items", lambda *a, **k: asked.append("input items") or [])
    stub = ScriptTransport(["one", "two", "three", "four"])
    messages = [{"role": "user", "content": "x"}]
    anthropic_client(stub).messages.create(model="claude-haiku-4-5", max_tokens=8, messages=messages)
    openai_client(stub).chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "x"}])
    first = openai_client(stub).responses.create(model="gpt-5", input="x")
    list(openai_client(stub).responses.create(model="gpt-5", input="y", previous_response_id=first.id, stream=True))
    assert asked == []  # no batch wire matched, no job settled, no stored input listed
    stub.check()
