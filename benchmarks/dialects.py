"""``python -m benchmarks.dialects``: what a host dialect costs per request, against the default chat wire.

Three requests through the real openai SDK on one stub each, measured in the same run: OpenAI's own
host (the default wire, which walks no dialect), Mistral's host (a stub without ``dialect=``
routing it by address: one dictionary look-up), and a stream under ``dialect="openrouter"`` (its
own shape: ids, fields, the processing comment) against the same stream on OpenAI's host. The
target is a ratio to the default request: a dialect-served request costs at most
``DIALECT_TARGET`` times it. ``--quick`` (a few hundred requests) fails only over twice the target.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import httpx2
import openai

from wirescript import ScriptTransport

DIALECT_TARGET = 1.3
"""A dialect-served request over this ratio to the same request on the default chat wire misses the target."""

MESSAGES: Any = [{"role": "user", "content": "Hi"}]


def _request(base_url: str, *, dialect: str | None = None, stream: bool = False) -> Callable[[], None]:
    stub = ScriptTransport(lambda record: "Hello there, how are you today?", dialect=dialect)
    client = openai.OpenAI(api_key="k", base_url=base_url, http_client=httpx2.Client(transport=stub), max_retries=0)

    def once() -> None:
        if stream:
            for _ in client.chat.completions.create(model="m", messages=MESSAGES, stream=True):
                pass
        else:
            client.chat.completions.create(model="m", messages=MESSAGES)

    return once


def _median(once: Callable[[], None], rounds: int, samples: int) -> float:
    for _ in range(samples):  # warm up
        once()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(samples):
            once()
        times.append((time.perf_counter() - start) / samples)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    """Measure, print the ratios, and exit 1 on a missed target (``--quick``: over twice the target)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="few rounds; fail only over twice the target")
    args = parser.parse_args(argv)
    rounds, samples = (5, 40) if args.quick else (15, 200)
    pairs = {
        "api.mistral.ai by address / api.openai.com": (
            _request("https://api.mistral.ai/v1"),
            _request("https://api.openai.com/v1"),
        ),
        'dialect="openrouter" stream / api.openai.com stream': (
            _request("https://llm.test/v1", dialect="openrouter", stream=True),
            _request("https://api.openai.com/v1", stream=True),
        ),
    }
    limit = DIALECT_TARGET * (2 if args.quick else 1)
    failed = False
    for label, (dialect, default) in pairs.items():
        ratio = _median(dialect, rounds, samples) / _median(default, rounds, samples)
        verdict = "ok" if ratio <= limit else "MISSED"
        failed |= ratio > limit
        print(f"{label}: {ratio:.2f}x (target {DIALECT_TARGET}x{', gate 2x' if args.quick else ''}) {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
