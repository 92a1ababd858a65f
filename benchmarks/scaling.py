"""How the stub's cost grows: with the deltas of a turn, with the requests it has recorded, and on import."""

from __future__ import annotations

import gc
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx2

from wirescript import ScriptTransport
from wirescript.wires import default_wires

from .contenders import Canned, PeerFixture, capture
from .providers import Provider, prose
from .workloads import W1, Workload


@dataclass(frozen=True)
class DeltaGrowth:
    """The stub alone (no SDK: the raw stream read through httpx2) at several turn sizes."""

    per_request: dict[int, float]
    """Deltas in the turn -> median seconds per request."""

    @property
    def marginal(self) -> list[tuple[int, int, float]]:
        """(from, to, seconds per added delta) between consecutive sizes."""
        sizes = sorted(self.per_request)
        return [(a, b, (self.per_request[b] - self.per_request[a]) / (b - a)) for a, b in itertools.pairwise(sizes)]

    @property
    def growth(self) -> float:
        """The cost of an added delta between the two largest sizes over that between the two smallest.

        Linear rendering keeps it near 1; a cost per delta that grows with the turn (quadratic
        rendering) drives it towards the ratio of the sizes.
        """
        steps = self.marginal
        return steps[-1][2] / steps[0][2]


def delta_growth(provider: Provider, sizes: tuple[int, ...], samples: int) -> DeltaGrowth:
    """Time the stub rendering and the client reading turns of each size (in deltas of 8 characters).

    The sizes take turns, one request each per round, so drift hits them alike.
    """
    headers = {"content-type": "application/json"}
    stubs = {n: ScriptTransport([{"text": prose(8 * n)}] * (samples + 1)) for n in sizes}
    clients = {n: httpx2.Client(transport=stub) for n, stub in stubs.items()}
    times: dict[int, list[float]] = {n: [] for n in sizes}
    try:
        for index in range(samples + 1):
            for deltas in sizes:
                gc.collect()
                start = time.process_time()
                with clients[deltas].stream("POST", provider.url, content=provider.stream_body, headers=headers) as r:
                    for _ in r.iter_raw():
                        pass
                if index:  # the first round is a warm-up
                    times[deltas].append(time.process_time() - start)
    finally:
        for client in clients.values():
            client.close()
    for stub in stubs.values():
        stub.check()
    return DeltaGrowth({n: statistics.median(t) for n, t in times.items()})


MEMORY_REQUESTS = 10_000
"""The memory bar's scale: what this many recorded requests on one stub grow the process by."""
MEMORY_TARGET = 30 * 2**20
"""The memory bar: 10,000 recorded SDK requests grow the process by at most 30 MiB."""


def resident() -> int | None:
    """This process's resident set size in bytes (Linux), or None where it cannot be read cheaply."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class ResidentGrowth:
    """What `requests` sequential W1 requests on one stub grow a fresh interpreter's resident set by.

    The memory bar is about the process, so it is read off the resident set: the records' objects
    plus the allocator's overhead for them. A fresh interpreter, because a process that has run the
    workloads has freed memory it keeps resident and would reuse for the records, hiding them.
    """

    requests: int
    grown: int | None
    """Bytes, the stub and its records still alive (None: no resident set to read on this platform)."""

    @property
    def projected(self) -> float | None:
        """The growth scaled to `MEMORY_REQUESTS` records (measured there, unscaled, in full mode)."""
        return None if self.grown is None else self.grown / self.requests * MEMORY_REQUESTS


def resident_child(name: str, requests: int) -> None:
    """In the fresh interpreter: run the requests and print the growth in bytes (or `none`)."""
    from .providers import providers

    provider = providers([name])[0]
    stub = ScriptTransport(list(W1.turns) * (requests + 1))
    with provider.sync_client(httpx2.Client(transport=stub)) as client:
        provider.text(client)  # warm-up: the SDK client's lazy state is not the records'
        gc.collect()
        before = resident()
        for _ in range(requests):
            provider.text(client)
        gc.collect()
        after = resident()
    stub.check()
    print("none" if before is None or after is None else after - before)


def resident_growth(provider: Provider, requests: int) -> ResidentGrowth:
    """Run `resident_child` in a fresh interpreter."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    code = f"from benchmarks.scaling import resident_child; resident_child({provider.name!r}, {requests:d})"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    answer = out.stdout.split()[-1]
    return ResidentGrowth(requests, None if answer == "none" else int(answer))


@dataclass(frozen=True)
class RecordGrowth:
    """Per-request time over a long run of sequential requests on one stub and one SDK client.

    Each stub request is followed by the same request on the floor, so machine drift during the
    run cancels out: the growth compares the stub-to-floor ratio of the last window with the first's.
    """

    requests: int
    window: int
    first: float
    """Median seconds per stub request over the first `window` requests."""
    last: float
    """Median seconds per stub request over the last `window` requests."""
    growth: float
    """The last window's median stub-to-floor ratio over the first window's: 1.0 is flat."""


def record_growth(provider: Provider, requests: int, window: int) -> RecordGrowth:
    """`requests` sequential W1 requests on one stub: does the 10,000th cost what the 1st did?"""
    canned, _ = capture(provider, W1)
    stub = ScriptTransport(list(W1.turns) * requests)
    status, headers, body = canned[0]
    floor = httpx2.MockTransport(lambda request: httpx2.Response(status, headers=headers, content=body))
    mine: list[float] = []
    ratios: list[float] = []
    with (
        provider.sync_client(httpx2.Client(transport=stub)) as client,
        provider.sync_client(httpx2.Client(transport=floor)) as control,
    ):
        provider.text(control)  # warm-up
        for _ in range(requests):
            start = time.process_time()
            provider.text(client)
            middle = time.process_time()
            provider.text(control)
            end = time.process_time()
            mine.append(middle - start)
            ratios.append((middle - start) / (end - middle))
    stub.check()
    if len(stub.requests) != requests:
        raise AssertionError(f"the stub recorded {len(stub.requests)} requests, expected {requests}")
    return RecordGrowth(
        requests,
        window,
        statistics.median(mine[:window]),
        statistics.median(mine[-window:]),
        statistics.median(ratios[-window:]) / statistics.median(ratios[:window]),
    )


@dataclass(frozen=True)
class Memory:
    """Memory kept per request, after a run, by wirescript (its records) and by the peer (its requests).

    Measured with tracemalloc: the bytes of live Python objects, after a collection, exactly and
    independently of the allocator (its arenas and free lists) and of the machine's load. It is
    what a record is made of; the resident set (`resident_growth`) is what the process pays for
    it, allocator overhead included.
    """

    requests: int
    wirescript: float
    """Small bodies: W1's request."""
    agent: float
    """Agent-sized bodies: 20 messages (9 tool calls and their results) and 4 tools."""
    peer: float
    request_body: int
    """The size of W1's request body in bytes, for scale."""
    agent_body: int
    """The size of the agent-sized request body in bytes."""


def _kept_per_request(
    provider: Provider, requests: int, canned: Canned | None, drive: Callable[[Any], Any] | None = None
) -> tuple[float, int]:
    """(bytes kept per request, request body size): wirescript when `canned` is None, else the peer serving `canned`.

    `drive` sends one request (default: W1's).
    """
    drive = drive or provider.text
    fixture = None
    stub = None
    if canned is None:
        stub = ScriptTransport(list(W1.turns) * (requests + 1))
        http = httpx2.Client(transport=stub)
    else:
        fixture = PeerFixture()
        fixture.mock.add_response(
            status_code=canned.status,
            headers=canned.headers,
            content=canned.body,
            url=provider.url,
            method="POST",
            is_reusable=True,
        )
        http = httpx2.Client()
    try:
        with provider.sync_client(http) as client:
            drive(client)  # warm-up: the client's own lazy state is not the stub's
            gc.collect()
            tracemalloc.start()
            try:
                before = tracemalloc.get_traced_memory()[0]
                for _ in range(requests):
                    drive(client)
                gc.collect()
                after = tracemalloc.get_traced_memory()[0]
            finally:
                tracemalloc.stop()
    finally:
        if fixture is not None:
            fixture.close()
    body = len(stub.requests[-1].content) if stub is not None else 0
    return (after - before) / requests, body


def memory(provider: Provider, requests: int) -> Memory:
    """Memory each recorded request keeps alive (tracemalloc, after a collection): small, agent-sized, the peer."""
    canned, _ = capture(provider, W1)
    small, small_body = _kept_per_request(provider, requests, None)
    agent, agent_body = _kept_per_request(provider, requests, None, provider.agent)
    peer, _ = _kept_per_request(provider, requests, canned[0])
    return Memory(requests, small, agent, peer, small_body, agent_body)


_IMPORT = """\
import time
t0 = time.perf_counter()
import httpx2
t1 = time.perf_counter()
import wirescript
t2 = time.perf_counter()
from wirescript import ScriptTransport
from wirescript.wires import default_wires
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""

_IMPORT_AFTER_SDK = """\
import time
import anthropic
t0 = time.perf_counter()
from wirescript import ScriptTransport
from wirescript.wires import default_wires
t1 = time.perf_counter()
print(t1 - t0)
"""


@dataclass(frozen=True)
class ImportCost:
    """Median import times in fresh interpreters, in seconds."""

    runs: int
    httpx2: float
    """`import httpx2`."""
    package: float
    """`import wirescript` after httpx2: the package alone (its names load on first use)."""
    first_use: float
    """`from wirescript import ScriptTransport` after that: the transport, the models and pydantic."""
    after_sdk: float
    """`from wirescript import ScriptTransport` after `import anthropic` (pydantic already loaded)."""


def _median_run(code: str, runs: int, env: dict[str, str]) -> list[float]:
    results: list[tuple[float, ...]] = []
    for run in range(runs + 1):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        if run:  # the first run fills the bytecode cache
            results.append(tuple(float(x) for x in out.stdout.split()))
    return [statistics.median(column) for column in zip(*results, strict=True)]


def import_cost(runs: int) -> ImportCost:
    """Import times in `runs` fresh interpreters (after one warm-up run each), medians.

    Bytecode is cached in a private directory, as it is for an installed package, even where the
    environment disables writing it; nothing is written next to the sources.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="wirescript-bench-pyc-") as cache:
        env["PYTHONPYCACHEPREFIX"] = cache
        httpx2_time, package, first_use = _median_run(_IMPORT, runs, env)
        (after_sdk,) = _median_run(_IMPORT_AFTER_SDK, runs, env)
    return ImportCost(runs, httpx2_time, package, first_use, after_sdk)


def strict_cost(provider: Provider, workload: Workload, repeats: int = 2_000) -> float:
    """CPU seconds the strict rules take per request of `workload`, as the SDK sends its requests.

    The requests of one sample are recorded, then each wire's `check` runs on them `repeats` times
    (fresh wires: the sync workloads carry no thread or stored response the check would look up).
    """
    stub = ScriptTransport(list(workload.turns), strict=False)
    with provider.sync_client(httpx2.Client(transport=stub)) as client:
        workload.sync_run(provider)(client)
    wires = {wire.name: wire for wire in default_wires()}
    records = stub.requests
    nothing: frozenset[str] = frozenset()
    gc.collect()
    started = time.process_time()
    for _ in range(repeats):
        for record in records:
            assert wires[str(record.provider)].check(record, skip=nothing) is None
    return (time.process_time() - started) / repeats / len(records)
