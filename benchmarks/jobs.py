"""What the asynchronous surfaces cost: a 1,000-item batch, and a background response polled 100 times.

``python -m benchmarks.jobs [--quick]``. Each is measured against its floor, in the same run,
interleaved round by round, as CPU time:

* **batch**: an Anthropic Message Batch of 1,000 items (create, the polls that end it, the
  results read to their end) on the stub, against the same SDK calls over an
  ``httpx2.MockTransport`` that answers each request with the bytes the stub answered it with
  (captured once): what the SDK and httpx2 cost on their own. The stub's part is the batch's
  bookkeeping plus, per item, what an ordinary request costs it (a record, a turn, a rendering).
  Target: `BATCH_TARGET`.
* **poll**: one `responses.retrieve` of a background response that a hundred polls end
  (`side={"jobs": {"polls": 100}}`), against the same retrieve on canned bytes. Target: `POLL_TARGET`.

A stub whose app calls none of these walks none of their wires (`tests/test_async_surfaces.py`
pins it): the ordinary requests' figures (W1, W4) are the same with or without them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import anthropic
import httpx2
import openai

from wirescript import ScriptTransport

from .paired import PairedRow, paired_row
from .timing import Stats

BATCH_TARGET = 3.0
"""A 1,000-item batch on the stub over the SDK's own calls on canned answers, CPU time: at most 3x."""
POLL_TARGET = 2.0
"""A background response's retrieve on the stub over the SDK's on canned answers, CPU time: at most 2x."""

ITEMS = 1000
GROSS = 2.0
"""The gate of `python -m benchmarks --quick`: twice a row's target in the rounds' fastest samples."""
POLLS = 100


def _requests(n: int) -> list[dict[str, Any]]:
    return [
        {
            "custom_id": f"item-{k}",
            "params": {
                "model": "claude-haiku-4-5",
                "max_tokens": 64,
                "messages": [{"role": "user", "content": f"Question {k}"}],
            },
        }
        for k in range(n)
    ]


class _Canned:
    """The floor's transport: the stub's answers replayed by method and path (the last one seen for each)."""

    def __init__(self) -> None:
        self.answers: dict[tuple[str, str], list[tuple[int, Any, bytes]]] = {}

    def capture(self, stub: ScriptTransport) -> Any:
        def send(request: httpx2.Request) -> httpx2.Response:
            response = stub.handle_request(request)
            body = response.read()
            self.answers.setdefault((request.method, request.url.path), []).append(
                (response.status_code, response.headers, body)
            )
            return httpx2.Response(response.status_code, headers=response.headers, content=body)

        return httpx2.MockTransport(send)

    def replay(self) -> Any:
        served: dict[tuple[str, str], int] = {}

        def send(request: httpx2.Request) -> httpx2.Response:
            key = (request.method, request.url.path)
            answers = self.answers[key]
            k = served.get(key, 0)
            served[key] = k + 1
            status, headers, body = answers[min(k, len(answers) - 1)]
            return httpx2.Response(status, headers=headers, content=body)

        return httpx2.MockTransport(send)


def _batch_run(transport: Any) -> float:
    """CPU seconds of one batch's life on `transport`: create, poll to its end, read its results."""
    client = anthropic.Anthropic(api_key="k", http_client=httpx2.Client(transport=transport), max_retries=0)
    started = time.process_time()
    batch = client.messages.batches.create(requests=_requests(ITEMS))
    while batch.processing_status != "ended":
        batch = client.messages.batches.retrieve(batch.id)
    results = list(client.messages.batches.results(batch.id))
    elapsed = time.process_time() - started
    assert len(results) == ITEMS
    return elapsed


def _batch_stub() -> ScriptTransport:
    return ScriptTransport([f"Answer {k}." for k in range(ITEMS)])


def measure_batch(rounds: int) -> tuple[float, float, float]:
    """The ratio of the medians, and the two medians (CPU seconds per batch)."""
    canned = _Canned()
    _batch_run(canned.capture(_batch_stub()))
    mine: list[float] = []
    floor: list[float] = []
    for _ in range(rounds):
        floor.append(_batch_run(canned.replay()))
        stub = _batch_stub()
        mine.append(_batch_run(stub))
        stub.check()
    low, high = statistics.median(floor), statistics.median(mine)
    return high / low, high, low


def _poll_run(transport: Any) -> list[float]:
    """Per-retrieve CPU times of a background response polled until it ends (`POLLS` retrieves)."""
    client = openai.OpenAI(api_key="k", http_client=httpx2.Client(transport=transport), max_retries=0)
    response = client.responses.create(model="gpt-5", input="Write", background=True)
    times = []
    while response.status in ("queued", "in_progress"):
        started = time.process_time()
        response = client.responses.retrieve(response.id)
        times.append(time.process_time() - started)
    assert len(times) == POLLS
    return times


def _poll_stub() -> ScriptTransport:
    return ScriptTransport(["Done."], side={"jobs": {"polls": POLLS, "after": None}})


def measure_poll(rounds: int) -> tuple[float, float, float]:
    """The ratio of the medians, and the two medians (CPU seconds per retrieve)."""
    canned = _Canned()
    _poll_run(canned.capture(_poll_stub()))
    mine: list[float] = []
    floor: list[float] = []
    for _ in range(rounds):
        floor.append(statistics.median(_poll_run(canned.replay())))
        stub = _poll_stub()
        mine.append(statistics.median(_poll_run(stub)))
        stub.check()
    low, high = statistics.median(floor), statistics.median(mine)
    return high / low, high, low


def _rotated(rounds: int, run: dict[str, Any]) -> dict[str, Stats]:
    """Each side's samples, round by round, the sides in a rotating order (`run[name]()` is one round)."""
    times: dict[str, list[tuple[float, ...]]] = {name: [] for name in run}
    order = list(run)
    for number in range(rounds):
        for name in order[number % len(order) :] + order[: number % len(order)]:
            times[name].append(tuple(run[name]()))
    return {name: Stats(tuple(kept), tuple(kept)) for name, kept in times.items()}


def measure_rows(rounds: int) -> list[PairedRow]:
    """Both loops as rows of `python -m benchmarks`: the stub and the floor's copy (A/A) over the floor."""
    batch, poll = _Canned(), _Canned()
    _batch_run(batch.capture(_batch_stub()))
    _poll_run(poll.capture(_poll_stub()))

    def on_stub(run: Any, build: Any) -> Any:
        def one() -> Any:
            stub = build()
            kept = run(stub)
            stub.check()
            return kept

        return one

    batches = _rotated(
        rounds,
        {
            "floor": lambda: [_batch_run(batch.replay())],
            "floor-copy": lambda: [_batch_run(batch.replay())],
            "wirescript": on_stub(lambda stub: [_batch_run(stub)], _batch_stub),
        },
    )
    polls = _rotated(
        rounds,
        {
            "floor": lambda: _poll_run(poll.replay()),
            "floor-copy": lambda: _poll_run(poll.replay()),
            "wirescript": on_stub(_poll_run, _poll_stub),
        },
    )
    batch_label = f"Anthropic Message Batch of {ITEMS:,} items: create, poll, results"
    poll_label = f"background Response: one retrieve of {POLLS} polls"
    return [
        paired_row("jobs", batch_label, BATCH_TARGET, batches, gate=GROSS * BATCH_TARGET),
        paired_row("jobs", poll_label, POLL_TARGET, polls, gate=GROSS * POLL_TARGET),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few rounds: that it runs, not a measurement")
    options = parser.parse_args(argv)
    rounds = 2 if options.quick else 9
    misses = 0
    for name, measure, target, unit in (
        (f"{ITEMS}-item batch", measure_batch, BATCH_TARGET, ("ms", 1e3)),
        (f"background poll (of {POLLS})", measure_poll, POLL_TARGET, ("µs", 1e6)),
    ):
        ratio, mine, floor = measure(rounds)
        verdict = "ok" if ratio <= target else "MISS"
        misses += verdict != "ok"
        label, scale = unit
        print(
            f"{name}: wirescript {mine * scale:.0f} {label}, floor {floor * scale:.0f} {label}: "
            f"{ratio:.2f}x, target ≤ {target:.2f}x  {verdict}"
        )
    return 0 if not misses or options.quick else 1


if __name__ == "__main__":
    sys.exit(main())
