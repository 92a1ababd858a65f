"""Interleaved timing: contenders take turns round by round, so machine drift hits all alike."""

from __future__ import annotations

import asyncio
import gc
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .contenders import Canned, Contender
from .providers import Provider
from .workloads import Workload


@dataclass(frozen=True)
class Stats:
    """One contender's samples for one workload, in seconds per request, kept round by round.

    CPU time (`time.process_time`) is what the table shows: other processes on the machine do not
    count in it. Wall time is kept too, so that time spent waiting (a sleep, a lock) is not missed.
    """

    rounds: tuple[tuple[float, ...], ...]
    """CPU seconds per request, round by round."""
    wall: tuple[tuple[float, ...], ...]
    """Wall-clock seconds per request, round by round."""

    @property
    def samples(self) -> list[float]:
        """Every sample, all rounds together."""
        return [t for kept in self.rounds for t in kept]

    @property
    def median(self) -> float:
        """The median."""
        return statistics.median(self.samples)

    @property
    def fastest(self) -> float:
        """The median over rounds of each round's fastest sample.

        Load on the machine only adds time, so a round's fastest sample is the one it disturbed
        least: a steadier gate for an absolute figure than the median, which load drags up.
        """
        return statistics.median(min(kept) for kept in self.rounds)

    @property
    def wall_median(self) -> float:
        """The median in wall-clock time."""
        return statistics.median(t for kept in self.wall for t in kept)

    @property
    def p90(self) -> float:
        """The 90th percentile."""
        samples = self.samples
        if len(samples) < 2:
            return samples[0]
        return statistics.quantiles(samples, n=10, method="inclusive")[-1]

    def ratio(self, floor: Stats) -> float:
        """This contender over the floor: the median, over rounds, of the ratio of the two rounds' medians.

        Rounds run back to back, so the two sides of each ratio saw the same machine; load that
        comes and goes between rounds cancels out instead of landing on whoever ran during it.
        """
        return _paired(self.rounds, floor.rounds)

    def wall_ratio(self, floor: Stats) -> float:
        """The same ratio in wall-clock time."""
        return _paired(self.wall, floor.wall)

    def fastest_wall_ratio(self, floor: Stats) -> float:
        """Wall-clock time over the floor from each round's fastest samples, the median over rounds.

        Load on the machine only adds wall time (another process runs instead), so the fastest
        sample of a round is the one it disturbed least; a wait the code itself adds (a sleep, a
        lock, a timer) is in every sample, the fastest too. What the quick gate reads.
        """
        return statistics.median(min(a) / min(b) for a, b in zip(self.wall, floor.wall, strict=True))

    def versus(self, other: Stats, *, wall: bool = False) -> Comparison:
        """This contender over another, round by round, with a confidence interval for the median.

        Each round gives one ratio (this round's median over the other's, measured back to back); the
        interval is the distribution-free one for the median of those ratios (order statistics, about
        95%), so "ahead" is claimed only when the rounds say so beyond their own scatter. `wall`:
        compare wall-clock times instead of CPU times.
        """
        mine, theirs = (self.wall, other.wall) if wall else (self.rounds, other.rounds)
        ratios = sorted(statistics.median(a) / statistics.median(b) for a, b in zip(mine, theirs, strict=True))
        n = len(ratios)
        k = max(0, math.floor((n - 1.96 * math.sqrt(n)) / 2))  # 0-based rank of the lower bound
        return Comparison(statistics.median(ratios), ratios[k], ratios[n - 1 - k], n)


@dataclass(frozen=True)
class Comparison:
    """One contender over another: the median of the per-round ratios and its ~95% interval."""

    ratio: float
    low: float
    high: float
    rounds: int

    @property
    def verdict(self) -> str:
        """`ahead` (the whole interval below 1), `behind` (above 1), or `level` (1 is inside it).

        Under 6 rounds even the widest interval, from the smallest ratio to the largest, covers the
        median less than 95% of the time: too few to tell, so `level`.
        """
        if self.rounds < 6:
            return "level"
        if self.high < 1:
            return "ahead"
        if self.low > 1:
            return "behind"
        return "level"


def _paired(mine: tuple[tuple[float, ...], ...], floor: tuple[tuple[float, ...], ...]) -> float:
    return statistics.median(statistics.median(a) / statistics.median(b) for a, b in zip(mine, floor, strict=True))


def _rotations(contenders: Sequence[Contender], rounds: int) -> list[list[Contender]]:
    """A B C, B C A, C A B, ...: no contender always goes first (or right after a collection)."""
    n = len(contenders)
    return [[*contenders[r % n :], *contenders[: r % n]] for r in range(rounds)]


def run_workload(
    provider: Provider,
    workload: Workload,
    canned: list[Canned],
    expected: Any,
    contenders: Sequence[Contender],
    *,
    rounds: int,
    samples: int,
) -> dict[str, Stats]:
    """Time `samples` samples per contender per round; check every contender's answer in round one."""
    times: dict[str, list[tuple[float, ...]]] = {c.name: [] for c in contenders}
    walls: dict[str, list[tuple[float, ...]]] = {c.name: [] for c in contenders}
    loop = asyncio.new_event_loop() if workload.is_async else None

    def on_loop(run: Callable[[Any], Any]) -> Callable[[Any], Any]:
        if loop is None:
            return run
        return lambda client: loop.run_until_complete(run(client))

    sample = on_loop(workload.async_run(provider) if workload.is_async else workload.sync_run(provider))
    warmup = on_loop(workload.warmup(provider))
    close = on_loop(lambda client: client.close())
    fingerprint = _fingerprinter(provider, workload)
    want = fingerprint(expected)
    _settle()
    try:
        for number, order in enumerate(_rotations(contenders, rounds)):
            for contender in order:
                gc.collect()
                state = contender.start(provider, workload, canned, samples)
                state.before_sample()
                warmup(state.client)
                kept: list[float] = []
                wall: list[float] = []
                for index in range(samples):
                    state.before_sample()
                    start, wall_start = time.process_time(), time.perf_counter()
                    got = sample(state.client)
                    wall.append((time.perf_counter() - wall_start) / workload.requests)
                    kept.append((time.process_time() - start) / workload.requests)
                    if number == 0 and index == 0 and fingerprint(got) != want:
                        raise AssertionError(
                            f"{provider.name} {workload.key}: {contender.name} answered {fingerprint(got)!r}, "
                            f"wirescript answered {want!r}"
                        )
                times[contender.name].append(tuple(kept))
                walls[contender.name].append(tuple(wall))
                close(state.client)
                state.finish()
    finally:
        if loop is not None:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
    return {name: Stats(tuple(times[name]), tuple(walls[name])) for name in times}


def _settle() -> None:
    """Collect, then freeze what survives (imports, captures): the per-round collections scan only new objects."""
    gc.collect()
    gc.freeze()


def _fingerprinter(provider: Provider, workload: Workload) -> Callable[[Any], Any]:
    if workload.is_async:
        return lambda results: sorted(map(repr, map(provider.fingerprint, results)))
    return provider.fingerprint


def run_setup(
    provider: Provider,
    canned: list[Canned],
    contenders: Sequence[Contender],
    *,
    rounds: int,
    samples: int,
) -> dict[str, Stats]:
    """Time building one test's stub and SDK client (the teardown is not timed)."""
    times: dict[str, list[tuple[float, ...]]] = {c.name: [] for c in contenders}
    walls: dict[str, list[tuple[float, ...]]] = {c.name: [] for c in contenders}
    builders = {c.name: c.build(provider, canned) for c in contenders}
    _settle()
    for order in _rotations(contenders, rounds):
        for contender in order:
            build = builders[contender.name]
            gc.collect()
            build()()  # warm-up
            kept: list[float] = []
            wall: list[float] = []
            for _ in range(samples):
                start, wall_start = time.process_time(), time.perf_counter()
                teardown = build()
                wall.append(time.perf_counter() - wall_start)
                kept.append(time.process_time() - start)
                teardown()
            times[contender.name].append(tuple(kept))
            walls[contender.name].append(tuple(wall))
    return {name: Stats(tuple(times[name]), tuple(walls[name])) for name in times}
