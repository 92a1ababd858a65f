"""A small interleaved runner for the rows measured against their own floor and an A/A control.

Each contender is a `Side`: given how many samples a round takes, it builds its round (an SDK client
on its transport, warmed up by one untimed sample) and hands back the sample and the round's check.
A sample times its own region and returns its CPU seconds, so that what it does outside the region
(building a test's stub and client before its first request, say) still runs in the sample, where
the collections it triggers land as they would in a test. The sides take turns round by round in a
rotating order; every row has two copies of its floor, and the second over the first (the A/A
control) says how far the machine's noise alone moves a ratio in the same run.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .timing import Comparison, Stats

Sample = Callable[[], float]
"""One sample: runs, and returns the CPU seconds of its timed region."""


@dataclass(frozen=True)
class Side:
    """One contender of a paired row."""

    name: str
    start: Callable[[int], tuple[Sample, Callable[[], None]]]
    """samples -> (the sample, the round's finish: close the client, check what was served)."""


def timed(run: Callable[[], Any]) -> Sample:
    """A sample whose timed region is the whole call of `run`."""

    def sample() -> float:
        start = time.process_time()
        run()
        return time.process_time() - start

    return sample


def run_paired(sides: Sequence[Side], *, rounds: int, samples: int) -> dict[str, Stats]:
    """Time `samples` samples per side per round, the sides in a rotating order; each round warmed up."""
    times: dict[str, list[tuple[float, ...]]] = {side.name: [] for side in sides}
    n = len(sides)
    gc.collect()
    gc.freeze()
    for number in range(rounds):
        for side in (*sides[number % n :], *sides[: number % n]):
            gc.collect()
            sample, finish = side.start(samples)
            sample()  # warm-up
            kept = tuple(sample() for _ in range(samples))
            finish()
            times[side.name].append(kept)
    return {name: Stats(tuple(kept), tuple(kept)) for name, kept in times.items()}


@dataclass(frozen=True)
class PairedRow:
    """One measured row: wirescript and the A/A copy, each over the floor of the same run."""

    group: str
    label: str
    target: float
    ratio: Comparison
    control: Comparison
    floor: float
    """The floor's median CPU seconds per sample."""
    added: float
    """wirescript's median over the floor's, in CPU seconds per sample."""
    fastest: float = 1.0
    """wirescript over the floor from each round's fastest sample (the median over rounds): what load moves least."""
    gate: float = 2.0
    """The quick gate: `fastest` over this ratio is a gross regression."""

    @property
    def meets_target(self) -> bool:
        """Whether wirescript's ratio is within the row's target."""
        return self.ratio.ratio <= self.target


def paired_row(
    group: str, label: str, target: float, stats: dict[str, Stats], *, mine: str = "wirescript", gate: float = 2.0
) -> PairedRow:
    """The row for `stats` of the sides `floor`, `floor-copy` and `mine`."""
    floor, copy, own = stats["floor"], stats["floor-copy"], stats[mine]
    return PairedRow(
        group,
        label,
        target,
        own.versus(floor),
        copy.versus(floor),
        floor.median,
        own.median - floor.median,
        statistics.median(min(a) / min(b) for a, b in zip(own.rounds, floor.rounds, strict=True)),
        gate,
    )
