"""``python -m benchmarks``: run every measurement, print the report, exit 1 on a gross regression.

``--quick`` is the CI gate: few rounds, under a minute; it fails only on gross regressions
(wirescript over 2x the floor, the set-up over 2x its target, or growth over 2x). Full mode takes
a few minutes and reports every target; ``--strict`` makes a missed target fail too.
``--markdown`` also prints the README table.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from dataclasses import dataclass
from importlib.metadata import version

from .contenders import CONTENDERS, capture
from .providers import providers
from .report import FLOOR, PEER, WIRESCRIPT, Findings, Row, duration, markdown, size, terminal
from .scaling import delta_growth, import_cost, memory, record_growth, strict_cost
from .timing import run_setup, run_workload
from .workloads import SETUP_TARGET_MS, W1, W4, WORKLOADS

GROSS = 2.0
"""The quick gate: wirescript over this ratio to the floor (or this growth) is a regression."""
IMPORT_TARGET = 0.050
STRICT_TARGET = 0.05
"""The most the strict rules may add to the W1 and W4 ratios: their cost per request over the floor's."""


@dataclass(frozen=True)
class Plan:
    """How much to measure: (rounds, timed samples per round) per workload, and the scaling sizes."""

    rounds: dict[str, tuple[int, int]]
    delta_sizes: tuple[int, ...]
    delta_samples: int
    records: int
    window: int
    memory_requests: int
    import_runs: int


FULL = Plan(
    rounds={"W1": (120, 5), "W2": (30, 3), "W3": (16, 1), "W4": (60, 3), "W5": (24, 1), "setup": (20, 5)},
    delta_sizes=(1_000, 10_000, 100_000),
    delta_samples=5,
    records=10_000,
    window=1_000,
    memory_requests=1_000,
    import_runs=7,
)
QUICK = Plan(
    rounds={"W1": (8, 3), "W2": (6, 2), "W3": (3, 1), "W4": (6, 2), "W5": (2, 1), "setup": (6, 3)},
    delta_sizes=(1_000, 10_000, 30_000),
    delta_samples=3,
    records=1_000,
    window=250,
    memory_requests=200,
    import_runs=2,
)


def _say(line: str = "") -> None:
    print(line, flush=True)


def measure(plan: Plan, names: list[str] | None, progress: bool) -> Findings:
    """Run every workload per provider, then the growth, memory and import measurements."""
    found = Findings()
    chosen = providers(names)
    for provider in chosen:
        canned_by_key = {}
        for workload in WORKLOADS:
            started = time.perf_counter()
            canned, expected = capture(provider, workload)
            canned_by_key[workload.key] = canned
            rounds, samples = plan.rounds[workload.key]
            stats = run_workload(provider, workload, canned, expected, CONTENDERS, rounds=rounds, samples=samples)
            found.rows.append(Row(provider.name, workload.key, workload.title, stats, workload.target))
            if progress:
                _say(f"  {provider.name} {workload.key}: {time.perf_counter() - started:.1f} s")
        rounds, samples = plan.rounds["setup"]
        # The peer registers one response per scripted turn, as a test would.
        setup_canned = [*canned_by_key[W1.key], *canned_by_key[W4.key]]
        stats = run_setup(provider, setup_canned, CONTENDERS, rounds=rounds, samples=samples)
        found.rows.append(
            Row(
                provider.name, "S", "set-up: stub from a 3-turn script + SDK client", stats, None, SETUP_TARGET_MS / 1e3
            )
        )
    for row in found.rows:
        where = f"{row.provider} {row.key} {row.title}"
        if not row.meets_target:
            found.misses.append(
                f"{where}: wirescript {row.ratio(WIRESCRIPT):.2f}x the floor, target {row.target_text()}"
            )
        if not row.ahead_of_peer:
            found.misses.append(f"{where}: not ahead of the peer: wirescript over the peer {row.peer_text()}")
        if row.absolute_target is not None:  # the set-up: gated on its absolute target, not on the floor
            if row.stats[WIRESCRIPT].median > GROSS * row.absolute_target:
                found.gross.append(
                    f"{where}: wirescript takes {duration(row.stats[WIRESCRIPT].median)} "
                    f"(gate {duration(GROSS * row.absolute_target)})"
                )
        else:
            for kind, ratio in (("CPU", row.ratio(WIRESCRIPT)), ("wall-clock", row.wall_ratio(WIRESCRIPT))):
                if ratio > GROSS:
                    found.gross.append(f"{where}: wirescript {ratio:.2f}x the floor in {kind} time (gate {GROSS:.0f}x)")

    for provider in chosen:
        for workload in (W1, W4):
            floor = next(r for r in found.rows if (r.provider, r.key) == (provider.name, workload.key)).stats[FLOOR]
            share = strict_cost(provider, workload) / floor.median
            verdict = "ok" if share <= STRICT_TARGET else "MISS"
            found.notes.append(
                f"strict checks ({provider.name} {workload.key}): {duration(share * floor.median)} per request, "
                f"+{share:.1%} on the ratio to the floor (target <= +{STRICT_TARGET:.0%})  {verdict}"
            )
            if share > STRICT_TARGET:
                found.misses.append(f"{provider.name} {workload.key}: the strict checks add {share:.1%} to the ratio")

    main = chosen[0]
    started = time.perf_counter()
    for provider in chosen:
        deltas = delta_growth(provider, plan.delta_sizes, plan.delta_samples)
        steps = " · ".join(f"{a:,}→{b:,}: {duration(cost)}" for a, b, cost in deltas.marginal)
        found.notes.append(
            f"deltas, the stub alone ({provider.name}), cost of one more delta: {steps}; "
            f"largest over smallest x{deltas.growth:.2f}"
        )
        if deltas.growth > GROSS:
            found.gross.append(
                f"{provider.name}: the cost of a delta grows x{deltas.growth:.2f} from small turns to large ones"
            )

    records = record_growth(main, plan.records, plan.window)
    found.notes.append(
        f"records, {records.requests:,} sequential requests on one stub: first {records.window:,} "
        f"{duration(records.first)}, last {records.window:,} {duration(records.last)}; "
        f"against an interleaved floor x{records.growth:.2f}"
    )
    if records.growth > GROSS:
        found.gross.append(f"per-request time grows x{records.growth:.2f} over {records.requests:,} requests")

    kept = memory(main, plan.memory_requests)
    found.notes.append(
        f"memory kept per request ({kept.requests:,} requests): wirescript {size(kept.wirescript)} "
        f"(its RecordedRequest), {PEER} {size(kept.peer)}; the request body is {size(kept.request_body)}"
    )

    imports = import_cost(plan.import_runs)
    verdict = "ok" if imports.package < IMPORT_TARGET else "MISS"
    found.notes.append(
        f"import, fresh interpreters (median of {imports.runs}): httpx2 {duration(imports.httpx2)}; then "
        f"`import wirescript` {duration(imports.package)} (target < {duration(IMPORT_TARGET)}  {verdict}); "
        f"then `from wirescript import ScriptTransport` {duration(imports.first_use)} (pydantic included), "
        f"or {duration(imports.after_sdk)} after `import anthropic`"
    )
    if imports.package >= IMPORT_TARGET:
        found.misses.append(f"import wirescript adds {duration(imports.package)}, target < {duration(IMPORT_TARGET)}")
    if progress:
        _say(f"  growth, memory and import: {time.perf_counter() - started:.1f} s")
    return found


def main(argv: list[str] | None = None) -> int:
    """Parse the options, measure, print; the exit status is the verdict."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds: the CI gate (fails only on >2x the floor)")
    parser.add_argument("--strict", action="store_true", help="also fail when a target is missed")
    parser.add_argument("--markdown", action="store_true", help="also print the README table (ratios only)")
    parser.add_argument("--provider", action="append", choices=["anthropic", "openai"], help="only these providers")
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL

    started = time.perf_counter()
    versions = ", ".join(
        f"{name} {version(name)}" for name in ("anthropic", "openai", "httpx2", "httpx2-pytest", "pydantic")
    )
    _say(f"wirescript benchmarks ({'quick' if args.quick else 'full'}): {versions}, Python {platform.python_version()}")
    _say(
        "CPU time per request; contenders interleaved round by round; x floor: the median over rounds of "
        "(the round's median / the floor's median in the same round); wall: the same in wall-clock time."
    )
    found = measure(plan, args.provider, progress=True)
    for line in terminal(found.rows):
        _say(line)
    _say()
    _say("growth")
    for line in found.notes:
        _say(f"  {line}")
    if args.markdown:
        _say()
        for line in markdown(found.rows):
            _say(line)
    _say()
    for line in found.misses:
        _say(f"target missed: {line}")
    for line in found.gross:
        _say(f"GROSS REGRESSION: {line}")
    _say(f"done in {time.perf_counter() - started:.0f} s")
    if found.gross or (args.strict and found.misses):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
