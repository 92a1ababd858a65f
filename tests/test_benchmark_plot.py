"""The performance plot: `python -m benchmarks.plot` draws a saved run, and the committed SVG is its drawing."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "assets" / "benchmarks-full-2026-12-03b.json"
SVG = ROOT / "docs" / "assets" / "performance.svg"
NS = "{http://www.w3.org/2000/svg}"


def plot(results: Path, svg: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.plot", str(results), str(svg)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def bars(svg: str) -> dict[str, list[str]]:
    """The bars' tooltips (`wirescript: 1.26x the floor`), per contender, in drawing order."""
    found: dict[str, list[str]] = {}
    for rect in ET.fromstring(svg).iter(f"{NS}rect"):
        title = rect.find(f"{NS}title")
        if title is not None and title.text:
            name, _, ratio = title.text.partition(": ")
            found.setdefault(name, []).append(ratio)
    return found


def test_the_committed_plot_is_what_the_script_draws_from_the_committed_results(tmp_path: Path) -> None:
    done = plot(RESULTS, tmp_path / "plot.svg")
    assert done.returncode == 0, done.stderr
    drawn = (tmp_path / "plot.svg").read_text(encoding="utf-8")
    assert drawn == SVG.read_text(encoding="utf-8"), (
        "docs/assets/performance.svg is not the drawing of its results file: run "
        "`uv run python -m benchmarks.plot docs/assets/benchmarks-full-2026-12-03b.json docs/assets/performance.svg`"
    )
    # One bar per contender for each workload with a ratio target (W1-W5 of two providers), each the run's figure.
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    rows = [row for row in results["rows"] if row["target"] is not None]
    assert len(rows) == 10
    for name in ("wirescript", "httpx2-pytest"):
        assert bars(drawn)[name] == [f"{row['contenders'][name]['x_floor']:.2f}x the floor" for row in rows]
    assert "python -m benchmarks (full mode), 2026-12-03" in drawn


def test_the_docs_page_shows_the_plot() -> None:
    page = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert "](assets/performance.svg)" in page
    assert "assets/benchmarks-full-2026-12-03b.json" in page


def test_a_file_that_is_not_a_results_file_is_refused_by_name(tmp_path: Path) -> None:
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps({"rows": []}), encoding="utf-8")
    done = plot(bad, tmp_path / "plot.svg")
    assert done.returncode != 0
    assert f"{bad}: not a benchmark results file of schema 1" in done.stderr
    assert not (tmp_path / "plot.svg").exists()


@pytest.mark.skipif(importlib.util.find_spec("httpx2") is None, reason="the benchmarks run on httpx2")
def test_a_run_saved_by_the_benchmark_is_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks.plot import render
    from benchmarks.report import FLOOR, PEER, WIRESCRIPT, Findings, Row
    from benchmarks.results import results_json
    from benchmarks.timing import Stats

    def stats(cpu: float) -> Stats:
        rounds = tuple((cpu, cpu * 1.01) for _ in range(8))
        return Stats(rounds, rounds)

    found = Findings()
    for provider, (mine, peer) in {"anthropic": (1.2e-3, 0.9e-3), "openai": (2.0e-3, 2.2e-3)}.items():
        found.rows.append(
            Row(
                provider,
                "W1",
                "1-delta text turn",
                {FLOOR: stats(1e-3), WIRESCRIPT: stats(mine), PEER: stats(peer)},
                1.25,
            )
        )
        setup = {FLOOR: stats(1e-4), WIRESCRIPT: stats(3e-4), PEER: stats(3e-2)}
        found.rows.append(Row(provider, "S", "set-up", setup, None, 2e-4))
    results: dict[str, Any] = json.loads(
        json.dumps(results_json(found, mode="quick", when=datetime(2026, 12, 1, tzinfo=UTC)))
    )
    first = results["rows"][0]
    assert first["contenders"][WIRESCRIPT]["x_floor"] == pytest.approx(1.2)
    assert (first["versus_peer"]["verdict"], first["meets_target"]) == ("behind", True)
    drawn = render(results)
    # The set-up rows (an absolute target) are left to the table; W1 of each provider is drawn.
    assert bars(drawn) == {
        WIRESCRIPT: ["1.20x the floor", "2.00x the floor"],
        PEER: ["0.90x the floor", "2.20x the floor"],
    }
    assert "python -m benchmarks (quick mode), 2026-12-01" in drawn
