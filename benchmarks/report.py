"""Formatting: the terminal report and the markdown tables of docs/performance.md (ratios only)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .paired import PairedRow
from .served import LLMOCK, SERVED, SERVED_TARGET, Served
from .timing import Comparison, Stats

FLOOR = "floor"
CONTROL = "floor-copy"
WIRESCRIPT = "wirescript"
PEER = "httpx2-pytest"


def duration(seconds: float) -> str:
    """A short human duration: 812 ns, 3.4 µs, 1.25 ms, 2.1 s."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            value = seconds / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{seconds / 1e-9:.0f} ns"


def _times(ratio: float) -> str:
    return f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.4f}x"


def size(nbytes: float) -> str:
    """A short human size: 812 B, 3.4 KB."""
    return f"{nbytes:.0f} B" if nbytes < 1000 else f"{nbytes / 1000:.1f} KB"


def mebibytes(nbytes: float) -> str:
    """A size in MiB, the memory bar's unit: 28.6 MiB."""
    return f"{nbytes / 2**20:.1f} MiB"


@dataclass(frozen=True)
class Row:
    """One workload of one provider: the three contenders' statistics and the target."""

    provider: str
    key: str
    title: str
    stats: dict[str, Stats]
    target: float | None
    """The most wirescript may cost as a ratio to the floor (None: the set-up, whose target is absolute)."""
    absolute_target: float | None = None
    """For the set-up: the most wirescript may take, in seconds."""

    def ratio(self, contender: str) -> float:
        """The contender over the floor of this run, round by round (`Stats.ratio`)."""
        return self.stats[contender].ratio(self.stats[FLOOR])

    def wall_ratio(self, contender: str) -> float:
        """The same in wall-clock time."""
        return self.stats[contender].wall_ratio(self.stats[FLOOR])

    def fastest_wall_ratio(self, contender: str) -> float:
        """The same from each round's fastest samples (`Stats.fastest_wall_ratio`)."""
        return self.stats[contender].fastest_wall_ratio(self.stats[FLOOR])

    @property
    def meets_target(self) -> bool:
        """Whether wirescript is within its target."""
        if self.absolute_target is not None:
            return self.stats[WIRESCRIPT].median <= self.absolute_target
        assert self.target is not None
        return self.ratio(WIRESCRIPT) <= self.target

    @property
    def versus_peer(self) -> Comparison:
        """wirescript over the peer, round by round, with its interval."""
        return self.stats[WIRESCRIPT].versus(self.stats[PEER])

    @property
    def ahead_of_peer(self) -> bool:
        """Whether wirescript costs less than the peer beyond the rounds' scatter."""
        return self.versus_peer.verdict == "ahead"

    def peer_text(self) -> str:
        """wirescript over the peer as the report prints it: `0.97x [0.95x-0.99x] ahead of peer`."""
        versus = self.versus_peer
        verdict = {"ahead": "ahead of peer", "behind": "BEHIND PEER", "level": "level with peer"}[versus.verdict]
        return f"{_times(versus.ratio)} [{_times(versus.low)}-{_times(versus.high)}] {verdict}"

    def target_text(self) -> str:
        """The target as written in the table."""
        if self.absolute_target is not None:
            return f"≤ {duration(self.absolute_target)}"
        return f"≤ {self.target:.2f}x"


@dataclass
class Findings:
    """Everything measured, with the verdicts."""

    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Lines of the growth, memory and import sections."""
    misses: list[str] = field(default_factory=list)
    """Targets missed."""
    gross: list[str] = field(default_factory=list)
    """Gross regressions: what the quick gate fails on."""
    served: list[Served] = field(default_factory=list)
    """The loopback server, per provider."""
    paired: list[PairedRow] = field(default_factory=list)
    """The rows measured each against its own floor with an A/A control: per test, record mode, the other wires."""


def terminal(rows: list[Row]) -> list[str]:
    """The per-workload table: median, p90 and ratio to the floor for each contender."""
    lines = []
    name_width = max(len(f"{r.key} {r.title}") for r in rows)
    head = (
        f"  {'workload':<{name_width}}  {'contender':<13}  {'median':>9}  {'p90':>9}  {'x floor':>7}  {'wall':>6}"
        "  target"
    )
    provider = None
    for row in rows:
        if row.provider != provider:
            provider = row.provider
            lines += ["", provider, head]
        label = f"{row.key} {row.title}"
        for contender in (c for c in (FLOOR, CONTROL, WIRESCRIPT, PEER) if c in row.stats):
            stats = row.stats[contender]
            verdict = ""
            if contender == WIRESCRIPT:
                verdict = f"{row.target_text()}  {'ok' if row.meets_target else 'MISS'}  vs peer {row.peer_text()}"
            lines.append(
                f"  {label:<{name_width}}  {contender:<13}  {duration(stats.median):>9}  {duration(stats.p90):>9}"
                f"  {row.ratio(contender):>6.2f}x  {row.wall_ratio(contender):>5.2f}x  {verdict}".rstrip()
            )
            label = ""
    return lines


def paired_lines(rows: list[PairedRow]) -> list[str]:
    """The rows with their own floor: wirescript over it, the A/A control, the floor's time and what is added."""
    if not rows:
        return []
    width = max(len(f"{r.group} {r.label}") for r in rows)
    lines = [
        "each against its own floor, interleaved round by round (CPU; the ~95% interval; A/A: the floor's copy)",
        f"  {'row':<{width}}  {'x floor':>24}  {'A/A':>6}  {'floor':>9}  {'added':>9}  target",
    ]
    for row in rows:
        ratio = row.ratio
        lines.append(
            f"  {row.group + ' ' + row.label:<{width}}  {ratio.ratio:>6.3f}x [{ratio.low:.3f}-{ratio.high:.3f}]"
            f"  {row.control.ratio:>5.3f}x  {duration(row.floor):>9}  {_signed(row.added):>9}"
            f"  ≤ {row.target:.2f}x  {'ok' if row.meets_target else 'MISS'}"
        )
    return lines


def _signed(seconds: float) -> str:
    return ("+" if seconds >= 0 else "-") + duration(abs(seconds))


def paired_markdown(rows: list[PairedRow]) -> list[str]:
    """The docs table of the rows with their own floor."""
    lines = ["| row | target | wirescript x floor [~95%] | A/A | added |", "|---|---|---:|---:|---:|"]
    for row in rows:
        ratio = row.ratio
        lines.append(
            f"| {row.group}: {row.label} | ≤ {row.target:.2f}x | {ratio.ratio:.2f}x [{ratio.low:.2f}-{ratio.high:.2f}]"
            f" | {row.control.ratio:.2f}x | {_signed(row.added)} |"
        )
    return lines


def served_lines(served: list[Served]) -> list[str]:
    """The loopback server's section: W1's request through `ScriptServer` against the same in-process."""
    if not served:
        return []
    head = (
        "loopback server: W1's request through ScriptServer (uvicorn in a thread, keep-alive) against the same "
        f"request in-process; wall-clock per request, target ≤ {SERVED_TARGET:.0f}x"
    )
    lines = [head]
    for row in served:
        versus = row.versus_in_process
        lines.append(
            f"  {row.provider:<10} in-process {duration(row.wall_median(WIRESCRIPT)):>8}  "
            f"served {duration(row.wall_median(SERVED)):>8}  served ÷ in-process {_times(versus.ratio)} "
            f"[{_times(versus.low)}-{_times(versus.high)}] {'ok' if row.meets_target else 'MISS'}; "
            f"CPU {_times(row.cpu_versus_in_process)} "
            f"(the server thread's included)"
        )
    lines.append(f"  reference, not measured here: {LLMOCK}")
    return lines


def markdown(rows: list[Row], served: list[Served] | None = None) -> list[str]:
    """The tables of docs/performance.md: ratios to the floor, a column pair per provider; then wirescript ÷ peer."""
    providers = list(dict.fromkeys(r.provider for r in rows))
    by_key: dict[str, dict[str, Row]] = {}
    for row in rows:
        by_key.setdefault(row.key, {})[row.provider] = row
    head = "| workload | target |" + "".join(f" {p}: wirescript | {p}: {PEER} |" for p in providers)
    rule = "|---|---|" + "---:|---:|" * len(providers)
    lines = [head, rule]
    for cells in by_key.values():
        first = next(iter(cells.values()))
        line = f"| {first.key} {first.title} | {first.target_text()} |"
        for provider in providers:
            cell = cells.get(provider)
            if cell is None:
                line += " | |"
            elif cell.absolute_target is not None:  # an absolute target: show the time too
                line += (
                    f" {cell.ratio(WIRESCRIPT):.2f}x ({duration(cell.stats[WIRESCRIPT].median)}) |"
                    f" {cell.ratio(PEER):.0f}x ({duration(cell.stats[PEER].median)}) |"
                )
            else:
                line += f" {cell.ratio(WIRESCRIPT):.2f}x | {cell.ratio(PEER):.2f}x |"
        lines.append(line)
    lines += [
        "",
        "| workload |" + "".join(f" {p}: wirescript ÷ {PEER} |" for p in providers),
        "|---|" + "---|" * len(providers),
    ]
    for key, cells in by_key.items():
        line = f"| {key} |"
        for provider in providers:
            cell = cells.get(provider)
            line += f" {cell.peer_text()} |" if cell is not None else " |"
        lines.append(line)
    if served:
        lines += [
            "",
            "| loopback server (W1's request) | in-process | served | served ÷ in-process | target |",
            "|---|---:|---:|---:|---|",
        ]
        for one in served:
            lines.append(
                f"| {one.provider} | {duration(one.wall_median(WIRESCRIPT))} | {duration(one.wall_median(SERVED))} "
                f"| {_times(one.versus_in_process.ratio)} | ≤ {SERVED_TARGET:.0f}x |"
            )
        lines.append(f"| {LLMOCK.split(':')[0]} | | 4.2 ms (thread), 2.0 ms (process) | | reference |")
    return lines
