"""What derived usage costs: a 50-request cached tool loop with `usage="derive"`, against the same loop without it.

``python -m benchmarks.bill [--quick]``. One sample is the whole loop: 50 `messages.create` calls of the
real anthropic SDK over httpx2 on a stub, a ~2,000-token system prompt with `cache_control`, each
request's conversation one tool call and result longer than the last one's.

* ``plain``: the stub with usage as scripted (the default): what every other benchmark measures.
* ``derive``: the same stub with `usage="derive"`: each request's prompt cut into blocks, counted and
  hashed, Anthropic's cache rules run on the stub's cache store, the derived usage rendered, and at the
  end `stub.bill` read (50 rows, priced from a table).

The gate is the ratio of the medians (CPU time per loop), measured in the same run, interleaved round by
round: `BILL_TARGET`. Without `usage=` nothing is derived and no request does any work for it
(tests/test_caching.py pins it), so the other benchmarks measure what they always did.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import anthropic
import httpx2

from wirescript import ScriptTransport

from .paired import PairedRow, paired_row
from .timing import Stats

BILL_TARGET = 1.5
"""The loop with derived usage over the same loop without, CPU time per loop: at most 1.5x."""

REQUESTS = 50
SYSTEM = [
    {
        "type": "text",
        "text": "Follow the triage runbook to the letter. " * 200,
        "cache_control": {"type": "ephemeral"},
    }
]
TOOLS = [{"name": "lookup", "description": "Look a ticket up.", "input_schema": {"type": "object"}}]
PRICES = {"claude-sonnet-4-6": {"input": 3, "output": 15, "cache_write_5m": 3.75, "cache_read": 0.3}}


def _turns() -> list[Any]:
    calls = [{"tool": {"name": "lookup", "input": {"id": f"T-{i}"}}} for i in range(REQUESTS - 1)]
    return [*calls, "All triaged."]


def _loop(usage: str | None) -> float:
    """The CPU seconds of one 50-request tool loop (and, deriving, reading its bill)."""
    stub = ScriptTransport(_turns(), usage=usage, prices=PRICES)
    client = anthropic.Anthropic(api_key="k", max_retries=0, http_client=httpx2.Client(transport=stub))
    messages: list[Any] = [{"role": "user", "content": "Triage the queue."}]
    started = time.process_time()
    for _ in range(REQUESTS):
        message = client.messages.create(
            model="claude-sonnet-4-6", max_tokens=256, system=SYSTEM, tools=TOOLS, messages=messages
        )
        if message.stop_reason != "tool_use":
            break
        call = message.content[0]
        messages += [
            {"role": "assistant", "content": message.content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "open"}]},
        ]
    if usage is not None:
        bill = stub.bill
        assert len(bill) == REQUESTS
        assert bill.total_usd > 0
        assert bill.cache_hit_ratio(from_request=1) > 0.5  # the loop reads what its first request wrote
    elapsed = time.process_time() - started
    stub.check()
    return elapsed


def measure(rounds: int) -> tuple[float, float, float]:
    """(plain median, derive median, the median of the rounds' ratios), interleaved round by round."""
    _loop(None), _loop("derive")  # warm up
    plain, derive, ratios = [], [], []
    for _ in range(rounds):
        a, b = _loop(None), _loop("derive")
        plain.append(a)
        derive.append(b)
        ratios.append(b / a)
    return statistics.median(plain), statistics.median(derive), statistics.median(ratios)


def measure_row(rounds: int) -> PairedRow:
    """The loop as a row of `python -m benchmarks`: `usage="derive"` and a plain copy (A/A) over the plain loop.

    One sample per side per round, the sides in a rotating order.
    """
    _loop(None), _loop("derive")  # warm up
    sides = {"floor": None, "floor-copy": None, "wirescript": "derive"}
    times: dict[str, list[tuple[float, ...]]] = {name: [] for name in sides}
    order = list(sides)
    for number in range(rounds):
        for name in order[number % 3 :] + order[: number % 3]:
            times[name].append((_loop(sides[name]),))
    stats = {name: Stats(tuple(kept), tuple(kept)) for name, kept in times.items()}
    label = f"{REQUESTS}-request cached tool loop, usage='derive' over plain"
    return paired_row("bill", label, BILL_TARGET, stats, gate=2 * BILL_TARGET)


def main(argv: list[str] | None = None) -> int:
    """Print the measurement; exit 1 when the ratio is over its target."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bill", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few rounds: the CI gate")
    args = parser.parse_args(argv)
    plain, derive, ratio = measure(5 if args.quick else 20)
    print(f"50-request cached tool loop: plain {plain * 1e3:.1f} ms, usage='derive' {derive * 1e3:.1f} ms (CPU)")
    verdict = "ok" if ratio <= BILL_TARGET else "OVER"
    print(f"derive / plain: {ratio:.2f}x (target <= {BILL_TARGET}x) {verdict}")
    return 0 if ratio <= BILL_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
