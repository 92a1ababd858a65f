"""Load and races: many threads and thousands of concurrent coroutines on one stub.

The load scales with the hypothesis profile (`_support.examples`): the full counts below under the
`ci` profile (CI, or `--hypothesis-profile ci`), a quarter of the requests in the quick default,
which still contends, only less often.

Every request is recorded exactly once, every turn is served exactly once, records are in a
consistent order (indexes 0..n-1, each answer matching its record), and nothing deadlocks,
including while `release(); hold()` cycles run under load. The bulk goes through plain httpx2 /
httpx clients (the transport's own entry points); a share goes through the real SDKs.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from _support import STACKS, anthropic_client, examples, openai_client
from wirescript import RecordedRequest, ScriptTransport, WaitTimeoutError

HX = STACKS[0]  # httpx2 where installed (the dev venv), else httpx (the legacy venv)
URL = "https://stub.test/v1/messages"
THREADS = 32
PER_THREAD = examples(200)
CONCURRENT = examples(2000)


def body(tag: str, *, stream: bool = False) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 10, "stream": stream, "messages": [{"role": "user", "content": tag}]}


def tag_of(record: RecordedRequest) -> str:
    return str(record.messages[0]["content"])


def text_of_json(payload: bytes) -> str:
    return str(json.loads(payload)["content"][0]["text"])


def assert_consistent(stub: ScriptTransport, answers: dict[str, str], expected: int) -> None:
    """Each request recorded once, in index order; each turn served once; each answer matches its record."""
    records = stub.requests
    assert len(records) == expected
    assert [r.index for r in records] == list(range(expected))
    tags = [tag_of(r) for r in records]
    assert len(set(tags)) == expected  # no request recorded twice
    assert set(tags) == set(answers)  # none lost
    assert stub.overflow == 0
    assert stub.problems == []
    assert stub.pending == []
    if records[0].turn_index is not None:  # a queue: the turn taken is the arrival order, each exactly once
        assert [r.turn_index for r in records] == list(range(expected))
        for record in records:
            assert answers[tag_of(record)] == f"turn-{record.turn_index}"
    else:  # a function script answers each request from its own content
        for record in records:
            assert answers[tag_of(record)] == f"answer to {tag_of(record)}"


def echo(request: RecordedRequest) -> dict[str, Any]:
    return {"text": f"answer to {tag_of(request)}"}


# --- threads


# Among the slowest (about 5 s of CPU each in CI): 6,400 requests from 32 threads is the load this test claims
# survives, two threads of them through the SDK; fewer requests contend for the stub's lock less often.
@pytest.mark.parametrize("script", ["queue", "function"])
def test_32_threads_of_requests_lose_nothing(script: str) -> None:
    """32 threads on one stub; two of them through the real anthropic SDK (streamed and not)."""
    total = THREADS * PER_THREAD
    stub = ScriptTransport([f"turn-{i}" for i in range(total)] if script == "queue" else echo)
    answers: dict[str, str] = {}
    lock = threading.Lock()

    def worker(thread: int) -> None:
        mine: dict[str, str] = {}
        if thread < 2:
            client = anthropic_client(stub, max_retries=0)
            for j in range(PER_THREAD):
                tag = f"t{thread}-{j}"
                params = {k: v for k, v in body(tag).items() if k != "stream"}
                if thread == 0:
                    with client.messages.stream(**params) as stream:
                        mine[tag] = stream.get_final_text()
                else:
                    mine[tag] = client.messages.create(**params).content[0].text
        else:
            with HX.Client(transport=stub) as http:
                for j in range(PER_THREAD):
                    tag = f"t{thread}-{j}"
                    response = http.post(URL, json=body(tag))
                    assert response.status_code == 200, response.text
                    mine[tag] = text_of_json(response.content)
        with lock:
            answers.update(mine)

    with ThreadPoolExecutor(THREADS) as pool:
        for future in [pool.submit(worker, t) for t in range(THREADS)]:
            future.result(timeout=120)
    assert_consistent(stub, answers, total)
    assert sum(r.stream for r in stub.requests) == PER_THREAD


# --- asyncio


async def _post(http: Any, tag: str) -> tuple[str, str]:
    response = await http.post(URL, json=body(tag))
    assert response.status_code == 200, response.text
    return tag, text_of_json(response.content)


# Among the slowest (about 2 s of CPU each in CI, four cases): 2,000 requests in flight at once on one event loop
# is the claim, held ones all waiting on one release(); the count is what makes the ordering race likely.
@pytest.mark.parametrize("script", ["queue", "function"])
@pytest.mark.parametrize("held", [False, True], ids=["free", "held"])
def test_concurrent_async_requests_lose_nothing(script: str, held: bool) -> None:
    stub = ScriptTransport([f"turn-{i}" for i in range(CONCURRENT)] if script == "queue" else echo)

    async def main() -> dict[str, str]:
        async with HX.AsyncClient(transport=stub) as http:
            if held:
                stub.hold()
            tasks = [asyncio.create_task(_post(http, f"a{i}")) for i in range(CONCURRENT)]
            if held:
                await stub.wait_for_requests_async(CONCURRENT, timeout=30)
                await asyncio.sleep(0.01)
                assert not any(task.done() for task in tasks)  # every one is recorded, none answered
                stub.release()
            done = await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
        return dict(done)

    assert_consistent(stub, asyncio.run(main()), CONCURRENT)


def test_sdk_share_of_concurrent_async_requests() -> None:
    """100 concurrent streamed requests through the real openai and anthropic SDKs, answered by content."""
    stub = ScriptTransport(echo_any)
    n = 50

    async def main() -> dict[str, str]:
        aopenai = openai_client(stub, is_async=True, max_retries=0)
        aanthropic = anthropic_client(stub, is_async=True, max_retries=0)

        async def via_openai(tag: str) -> tuple[str, str]:
            async with aopenai.chat.completions.stream(
                model="gpt-test", messages=[{"role": "user", "content": tag}]
            ) as s:
                final = await s.get_final_completion()
            return tag, final.choices[0].message.content or ""

        async def via_anthropic(tag: str) -> tuple[str, str]:
            async with aanthropic.messages.stream(**{k: v for k, v in body(tag).items() if k != "stream"}) as s:
                return tag, await s.get_final_text()

        tasks = [via_openai(f"o{i}") for i in range(n)] + [via_anthropic(f"c{i}") for i in range(n)]
        return dict(await asyncio.wait_for(asyncio.gather(*tasks), timeout=60))

    answers = asyncio.run(main())
    assert len(answers) == 2 * n
    assert all(answer == f"answer to {tag}" for tag, answer in answers.items())
    assert {r.provider for r in stub.requests} == {"openai_chat", "anthropic"}
    assert len(stub.requests) == 2 * n
    assert stub.problems == []


def echo_any(request: RecordedRequest) -> dict[str, Any]:
    return {"text": f"answer to {request.last_user_text}"}


# --- hold / release cycles


def test_release_hold_cycles_under_async_load_free_exactly_the_requests_held_so_far() -> None:
    total, cycles = 600, 12
    stub = ScriptTransport(echo)
    finished: dict[str, float] = {}
    boundaries: list[tuple[int, float]] = []  # (first index held by the new gate, when that gate was released)

    async def client_load(http: Any) -> None:
        async def one(i: int) -> None:
            tag, _ = await _post(http, f"r{i}")
            finished[tag] = time.perf_counter()

        tasks = []
        for i in range(total):
            tasks.append(asyncio.create_task(one(i)))
            if i % 25 == 0:
                await asyncio.sleep(0.001)  # arrivals spread over the cycles
        await asyncio.gather(*tasks)

    async def controller() -> None:
        held_from = 0
        for cycle in range(1, cycles + 1):
            await stub.wait_for_requests_async(min(total, cycle * total // cycles), timeout=30)
            released_at = time.perf_counter()
            stub.release()
            stub.hold()
            boundaries.append((held_from, released_at))
            held_from = len(stub.requests)  # every request recorded from here on waits for the next release
        await stub.wait_for_requests_async(total, timeout=30)
        boundaries.append((held_from, time.perf_counter()))
        stub.release()

    async def main() -> None:
        stub.hold()
        async with HX.AsyncClient(transport=stub) as http:
            await asyncio.wait_for(asyncio.gather(client_load(http), controller()), timeout=60)

    asyncio.run(main())
    assert len(finished) == total
    assert_consistent(stub, {tag: f"answer to {tag}" for tag in finished}, total)
    tags = [tag_of(r) for r in stub.requests]
    assert len(boundaries) == cycles + 1
    for held_from, released_at in boundaries:
        # a request recorded after hold() is not answered before the release() that ends that hold
        assert all(finished[tag] >= released_at for tag in tags[held_from:])


def test_release_hold_cycles_under_thread_load_never_deadlock() -> None:
    threads, per_thread = 16, 40
    stub = ScriptTransport(echo, hold_timeout=30)
    stub.hold()
    stop = threading.Event()

    def cycler() -> None:
        while not stop.is_set():
            stub.release()
            stub.hold()
            time.sleep(0.0005)
        stub.release()

    def worker(thread: int) -> dict[str, str]:
        with HX.Client(transport=stub) as http:
            return {
                f"t{thread}-{j}": text_of_json(http.post(URL, json=body(f"t{thread}-{j}")).content)
                for j in range(per_thread)
            }

    control = threading.Thread(target=cycler)
    control.start()
    try:
        with ThreadPoolExecutor(threads) as pool:
            results = [f.result(timeout=60) for f in [pool.submit(worker, t) for t in range(threads)]]
    finally:
        stop.set()
        control.join(timeout=10)
    answers = {tag: text for result in results for tag, text in result.items()}
    assert_consistent(stub, answers, threads * per_thread)


def test_sync_and_async_requests_held_together_are_freed_by_one_release() -> None:
    stub = ScriptTransport(echo)
    stub.hold()
    with ThreadPoolExecutor(4) as pool:
        sync_results = [
            pool.submit(lambda i=i: HX.Client(transport=stub).post(URL, json=body(f"s{i}")).content) for i in range(4)
        ]
        stub.wait_for_requests(4)

        async def main() -> list[tuple[str, str]]:
            async with HX.AsyncClient(transport=stub) as http:
                tasks = [asyncio.create_task(_post(http, f"a{i}")) for i in range(4)]
                await stub.wait_for_requests_async(8)
                assert not any(f.done() for f in sync_results)
                assert not any(t.done() for t in tasks)
                stub.release()
                return list(await asyncio.wait_for(asyncio.gather(*tasks), timeout=10))

        async_results = asyncio.run(main())
        answers = dict(async_results) | {
            f"s{i}": text_of_json(f.result(timeout=10)) for i, f in enumerate(sync_results)
        }
    assert_consistent(stub, answers, 8)


# --- regressions: a loop that closed must not break the stub


def _closed_loop_run(coroutine: Callable[[], Any]) -> None:
    asyncio.run(coroutine())  # the loop is closed when this returns


def test_release_after_a_held_async_request_timed_out_in_a_closed_loop() -> None:
    stub = ScriptTransport(["a", "b"], hold_timeout=0.05)
    stub.hold()

    async def held() -> None:
        async with HX.AsyncClient(transport=stub) as http:
            response = await http.post(URL, json=body("x"))
        assert response.status_code == 400

    _closed_loop_run(held)
    stub.release()  # used to raise RuntimeError: Event loop is closed
    assert stub.problems == [
        (
            "requests[0] POST /v1/messages was held for 0.05 s and never released: call stub.release() once the test "
            "has seen what it needs (or raise hold_timeout)."
        )
    ]


def test_a_request_after_wait_for_requests_async_timed_out_in_a_closed_loop() -> None:
    stub = ScriptTransport(["a"])

    async def wait() -> None:
        with pytest.raises(WaitTimeoutError):
            await stub.wait_for_requests_async(1, timeout=0.01)

    _closed_loop_run(wait)
    with HX.Client(transport=stub) as http:  # used to raise RuntimeError: Event loop is closed
        assert text_of_json(http.post(URL, json=body("x")).content) == "a"


def test_waiters_that_timed_out_are_forgotten() -> None:
    stub = ScriptTransport(["a"], hold_timeout=0.02)

    async def main() -> None:
        for _ in range(50):
            with pytest.raises(WaitTimeoutError):
                await stub.wait_for_requests_async(1, timeout=0.001)

    loop = asyncio.new_event_loop()
    loop.run_until_complete(main())
    loop.close()
    closed = weakref.ref(loop)
    del loop
    gc.collect()
    assert closed() is None  # the stub keeps no waiter, so nothing keeps the closed loop alive
    assert len(stub.wait_for_requests(0)) == 0
