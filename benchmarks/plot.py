"""Draw a saved benchmark run (`python -m benchmarks --json PATH`) as an SVG: wirescript and the peer vs the floor.

    uv run python -m benchmarks.plot docs/assets/benchmarks-full-2026-12-01.json docs/assets/performance.svg

One panel per provider, one row per workload with a ratio target (W1-W5; the set-up's ratio to
its floor, 3x for wirescript and 300x for the peer, would flatten every other bar and is left to
the table). Each bar starts at the floor (1.00x: a bare ``httpx2.MockTransport`` replaying the same
bytes) and ends at the contender's CPU time per request over the floor's: to the right it costs
more than the floor, to the left less (noise: nothing can be faster than the floor). The target is
the dashed mark on each row. Written with the standard library only, and deterministic: the same
JSON always gives the same bytes (the suite checks the committed SVG against its JSON).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

SCHEMA = 1
CONTENDERS = (("wirescript", "wirescript", "#3f51b5"), ("httpx2-pytest", "httpx2-pytest (the peer)", "#ff9800"))
"""(name in the JSON, label, colour) of each contender drawn."""
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
WIDTH = 760
LABEL_WIDTH = 250
"""Room for the workload's name, left of the plot area."""
RIGHT_MARGIN = 70
BAR = 11
"""Height of one contender's bar."""
ROW = 2 * BAR + 16
"""Height of one workload's row: two bars and the gap."""
PANEL_HEAD = 44
"""The provider's name and the axis' tick labels above its rows."""
PANEL_GAP = 26


def load(path: Path) -> dict[str, Any]:
    """Read a results file, refusing one of another layout with a clear message."""
    results = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(results, dict) or results.get("schema") != SCHEMA:
        raise SystemExit(f"{path}: not a benchmark results file of schema {SCHEMA} (python -m benchmarks --json)")
    return results


def plotted_rows(results: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The rows drawn, per provider in the file's order: those with a ratio target."""
    panels: dict[str, list[dict[str, Any]]] = {}
    for row in results["rows"]:
        if row.get("target") is not None:
            panels.setdefault(row["provider"], []).append(row)
    if not panels:
        raise SystemExit("the results hold no workload with a ratio target: nothing to draw")
    return panels


def axis(panels: dict[str, list[dict[str, Any]]]) -> tuple[float, float, float]:
    """The ratio axis: (low, high, tick step), holding every bar, every target and the floor."""
    values = [1.0]
    for rows in panels.values():
        for row in rows:
            values.append(row["target"])
            values += [row["contenders"][name]["x_floor"] for name, _, _ in CONTENDERS]
    step = 0.05 if max(values) - min(values) <= 0.5 else 0.1
    low = math.floor((min(values) - 0.02) / step) * step
    high = math.ceil((max(values) + 0.02) / step) * step
    return round(low, 2), round(high, 2), step


def _text(
    x: float,
    y: float,
    text: str,
    *,
    size: int = 12,
    anchor: str = "start",
    weight: str = "normal",
    fill: str = "#212121",
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}" '
        f'fill="{fill}">{escape(text)}</text>'
    )


def render(results: dict[str, Any]) -> str:
    """The SVG document for `results`."""
    panels = plotted_rows(results)
    low, high, step = axis(panels)
    left, right = LABEL_WIDTH, WIDTH - RIGHT_MARGIN

    def x(ratio: float) -> float:
        return left + (ratio - low) / (high - low) * (right - left)

    title_height, legend_height = 30, 26
    body = sum(PANEL_HEAD + ROW * len(rows) for rows in panels.values()) + PANEL_GAP * (len(panels) - 1)
    height = title_height + legend_height + body + 46
    out = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" font-family="{escape(FONT)}" role="img" '
            'aria-labelledby="title desc">'
        ),
        '<title id="title">wirescript and httpx2-pytest against the floor</title>',
        (
            '<desc id="desc">CPU time per request of each transport over a bare httpx2.MockTransport replaying the '
            "same bytes, per workload and provider, with each workload's target.</desc>"
        ),
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
        _text(
            16, 22, "CPU time per request over the floor (a bare httpx2.MockTransport, 1.00x)", size=15, weight="bold"
        ),
    ]
    # The legend.
    y = title_height + 12
    cursor = 16.0
    for _, label, colour in CONTENDERS:
        out.append(f'<rect x="{cursor:.1f}" y="{y - 9}" width="14" height="{BAR}" fill="{colour}"/>')
        out.append(_text(cursor + 20, y, label))
        cursor += 28 + 7.2 * len(label)
    out.append(
        f'<line x1="{cursor:.1f}" y1="{y - 10}" x2="{cursor:.1f}" y2="{y + 2}" stroke="#c62828" '
        'stroke-width="2" stroke-dasharray="3,2"/>'
    )
    out.append(_text(cursor + 8, y, "target"))

    top = title_height + legend_height
    ticks = [round(low + i * step, 2) for i in range(round((high - low) / step) + 1)]
    for provider, rows in panels.items():
        bottom = top + PANEL_HEAD + ROW * len(rows)
        out.append(_text(16, top + 18, provider, size=14, weight="bold"))
        for tick in ticks:
            colour = "#616161" if tick == 1.0 else "#e0e0e0"
            out.append(
                f'<line x1="{x(tick):.1f}" y1="{top + PANEL_HEAD - 6}" x2="{x(tick):.1f}" y2="{bottom}" '
                f'stroke="{colour}" stroke-width="{1.5 if tick == 1.0 else 1}"/>'
            )
            out.append(_text(x(tick), top + PANEL_HEAD - 10, f"{tick:.2f}x", size=10, anchor="middle", fill="#616161"))
        for index, row in enumerate(rows):
            row_top = top + PANEL_HEAD + ROW * index
            out.append(_text(16, row_top + BAR + 5, f"{row['key']} {row['title']}", size=11))
            for offset, (name, _, colour) in enumerate(CONTENDERS):
                ratio = row["contenders"][name]["x_floor"]
                bar_top = row_top + 4 + offset * (BAR + 2)
                start, end = sorted((x(1.0), x(ratio)))
                out.append(
                    f'<rect x="{start:.1f}" y="{bar_top}" width="{max(end - start, 1.0):.1f}" height="{BAR}" '
                    f'fill="{colour}"><title>{escape(name)}: {ratio:.2f}x the floor</title></rect>'
                )
                out.append(_text(max(end, x(1.0)) + 4, bar_top + BAR - 2, f"{ratio:.2f}x", size=10))
            target = x(row["target"])
            out.append(
                f'<line x1="{target:.1f}" y1="{row_top + 1}" x2="{target:.1f}" y2="{row_top + 2 * BAR + 7}" '
                f'stroke="#c62828" stroke-width="2" stroke-dasharray="3,2"><title>target: at most '
                f"{row['target']:.2f}x</title></line>"
            )
        top = bottom + PANEL_GAP
    versions = results.get("versions", {})
    made = ", ".join(f"{name} {versions[name]}" for name in ("anthropic", "openai", "httpx2") if name in versions)
    footer = f"python -m benchmarks ({results['mode']} mode), {results['date'][:10]}; Python {results['python']}"
    out.append(_text(16, height - 24, footer + (f", {made}" if made else ""), size=10, fill="#616161"))
    out.append(
        _text(
            16,
            height - 10,
            "Median over rounds of each round's median over the floor's in the same round.",
            size=10,
            fill="#616161",
        )
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Read the results file, write the SVG."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.plot", description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a results file written by python -m benchmarks --json")
    parser.add_argument("svg", type=Path, help="where to write the SVG")
    args = parser.parse_args(argv)
    args.svg.write_text(render(load(args.results)), encoding="utf-8")
    print(f"wrote {args.svg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
