"""Per test and per feature: a test's first request, its set-up and teardown, record mode, the import.

* ``first request``: what a test pays for its one W1 request. Each sample builds a fresh stub (or the
  floor's ``MockTransport``) and SDK client, untimed, times the first request, then closes the
  client and checks the stub, untimed. Nothing is collected between samples, so the collections a
  test's set-up and its records trigger land where they land in a test run.
* ``set-up + teardown``: the same sample with the request untimed and the rest timed: building the
  stub and its client, then closing the client and checking the stub (the floor: building and
  closing its client).
* ``record mode``: ``RecordingTransport(path, upstream=...)`` against a bare passthrough transport over
  the same upstream, on a warmed client, W1 and W4; the file is written when the round's client
  closes, untimed. The upstream answers with a body that streams, as the network's does: an
  already-read response would let the bare passthrough skip the client's streaming path, which any
  transport that keeps a copy of the answer as it arrives must take.
* ``import``: ``import wirescript, wirescript.pytest_plugin, wirescript.transport`` in a fresh
  interpreter that has imported the SDK, httpx2 and pytest (what a test session has loaded when its
  first test builds a stub), CPU time, after a collection (so that a full collection the SDK's own
  import left due is not charged to wirescript), bytecode cached as for an installed package.

Each row has its A/A control: a second copy of its floor (for record mode, of the passthrough).
"""

from __future__ import annotations

import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from wirescript import ScriptTransport
from wirescript.recording import RecordingTransport

from .contenders import Canned, _floor_transport
from .paired import PairedRow, Side, paired_row, run_paired
from .providers import Provider
from .workloads import W1, W4, Workload

FIRST_REQUEST_TARGET = 1.10
"""A test's first request (a fresh stub and client) over the floor's: at most 10% more."""
SETUP_TEARDOWN_TARGET = 1.20
"""A test's set-up and teardown (a 1-turn stub, its client, `check()`) over the floor's client alone."""
SETUP_TEARDOWN_GATE = 5.0
"""The quick gate of that row, as of the 20-turn set-up's: the stub costs about what the client does."""
RECORD_TARGET = 1.10
"""Record mode over a bare passthrough transport on the same upstream: at most 10% more."""
IMPORT_TARGET = 0.025
"""`import wirescript` with its plugin and transport, after the SDK and pytest: at most 25 ms of CPU."""


def _per_test(provider: Provider, canned: list[Canned], *, request_timed: bool) -> list[Side]:
    turns = list(W1.turns)

    def floor(name: str) -> Side:
        def start(samples: int) -> tuple[Callable[[], float], Callable[[], None]]:
            def sample() -> float:
                t0 = time.process_time()
                client = provider.sync_client(httpx2.Client(transport=_floor_transport(canned, [0])))
                t1 = time.process_time()
                provider.text(client)
                t2 = time.process_time()
                client.close()
                t3 = time.process_time()
                return t2 - t1 if request_timed else (t1 - t0) + (t3 - t2)

            return sample, lambda: None

        return Side(name, start)

    def wirescript(samples: int) -> tuple[Callable[[], float], Callable[[], None]]:
        def sample() -> float:
            t0 = time.process_time()
            stub = ScriptTransport(turns)
            client = provider.sync_client(httpx2.Client(transport=stub))
            t1 = time.process_time()
            provider.text(client)
            t2 = time.process_time()
            client.close()
            stub.check()
            t3 = time.process_time()
            return t2 - t1 if request_timed else (t1 - t0) + (t3 - t2)

        return sample, lambda: None

    return [floor("floor"), floor("floor-copy"), Side("wirescript", wirescript)]


def _streamed_upstream(canned: list[Canned]) -> httpx2.MockTransport:
    """The floor's canned answers, each body sent as a stream (one chunk), as a network transport's is."""
    responses = itertools.cycle(canned)

    def handler(request: httpx2.Request) -> httpx2.Response:
        status, headers, body = next(responses)
        return httpx2.Response(status, headers=headers, stream=httpx2.ByteStream(body))

    return httpx2.MockTransport(handler)


class _Passthrough(httpx2.BaseTransport):
    """A bare transport that hands each request to its upstream: the floor of any forwarding transport."""

    def __init__(self, upstream: httpx2.BaseTransport) -> None:
        self.upstream = upstream

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return self.upstream.handle_request(request)


def _record_sides(provider: Provider, workload: Workload, canned: list[Canned], folder: Path) -> list[Side]:
    run = workload.sync_run(provider)

    def passthrough(name: str) -> Side:
        def start(samples: int) -> tuple[Callable[[], float], Callable[[], None]]:
            client = provider.sync_client(httpx2.Client(transport=_Passthrough(_streamed_upstream(canned))))
            return _timed_run(run, client), client.close

        return Side(name, start)

    def recording(samples: int) -> tuple[Callable[[], float], Callable[[], None]]:
        recorder = RecordingTransport(folder / "recorded.json", upstream=_streamed_upstream(canned))
        client = provider.sync_client(httpx2.Client(transport=recorder))

        def finish() -> None:
            client.close()  # saves the file
            if len(recorder.turns) != (samples + 1) * workload.requests:
                raise AssertionError(f"record mode kept {len(recorder.turns)} turns: {recorder.notes}")

        return _timed_run(run, client), finish

    return [passthrough("floor"), passthrough("floor-copy"), Side("wirescript", recording)]


def _timed_run(run: Callable[[Any], Any], client: Any) -> Callable[[], float]:
    def sample() -> float:
        start = time.process_time()
        run(client)
        return time.process_time() - start

    return sample


def measure_per_test(
    provider: Provider, canned_by_key: dict[str, list[Canned]], *, rounds: int, samples: int
) -> list[PairedRow]:
    """A test's first W1 request, its set-up + teardown, and record mode (W1, W4), each with its A/A control."""
    canned = canned_by_key[W1.key]
    rows = [
        paired_row(
            provider.name,
            "W1, a test's first request (fresh stub and client)",
            FIRST_REQUEST_TARGET,
            run_paired(_per_test(provider, canned, request_timed=True), rounds=rounds, samples=samples),
        ),
        paired_row(
            provider.name,
            "set-up + teardown of a test (1-turn stub, client, check)",
            SETUP_TEARDOWN_TARGET,
            run_paired(_per_test(provider, canned, request_timed=False), rounds=rounds, samples=samples),
            gate=SETUP_TEARDOWN_GATE,
        ),
    ]
    with tempfile.TemporaryDirectory(prefix="wirescript-bench-record-") as folder:
        for workload in (W1, W4):
            sides = _record_sides(provider, workload, canned_by_key[workload.key], Path(folder))
            stats = run_paired(sides, rounds=rounds, samples=samples)
            label = f"record mode ÷ bare passthrough, {workload.key} {workload.title}"
            rows.append(paired_row(provider.name, label, RECORD_TARGET, stats))
    return rows


_IMPORT_WITH_PYTEST = """
import gc, time
import {sdk}, httpx2, pytest
gc.collect()
started = time.process_time()
import wirescript, wirescript.pytest_plugin, wirescript.transport
print(time.process_time() - started)
"""


@dataclass(frozen=True)
class ImportWithPytest:
    """CPU seconds of the import, one per fresh interpreter."""

    runs: tuple[float, ...]

    @property
    def median(self) -> float:
        """The median."""
        return statistics.median(self.runs)

    @property
    def meets_target(self) -> bool:
        """Whether the median is within `IMPORT_TARGET`."""
        return self.median <= IMPORT_TARGET


def import_with_pytest(runs: int, sdk: str = "anthropic") -> ImportWithPytest:
    """The import in `runs` fresh interpreters (after one warm-up that writes the bytecode)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    code = _IMPORT_WITH_PYTEST.format(sdk=sdk)
    kept = []
    with tempfile.TemporaryDirectory(prefix="wirescript-bench-pyc-") as cache:
        env["PYTHONPYCACHEPREFIX"] = cache
        for number in range(runs + 1):
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=300
            )
            if number:
                kept.append(float(done.stdout.strip().splitlines()[-1]))
    return ImportWithPytest(tuple(kept))
