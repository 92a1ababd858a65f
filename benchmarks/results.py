"""A run's results as JSON (``python -m benchmarks --json PATH``): what ``benchmarks.plot`` draws from.

The file keeps, per provider and workload, each contender's median and p90 CPU time per request,
its ratio to the floor of the same run (CPU and wall-clock), the target, and wirescript over the
peer round by round with its ~95% interval: the figures the terminal report prints, so a saved
run can be drawn, compared or quoted later without running it again.
"""

from __future__ import annotations

import json
import platform
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from .paired import PairedRow
from .report import CONTROL, FLOOR, PEER, WIRESCRIPT, Findings, Row

SCHEMA = 1
"""The version of the file's layout; `benchmarks.plot` refuses another."""
CONTENDER_NAMES = (FLOOR, CONTROL, WIRESCRIPT, PEER)
PACKAGES = ("anthropic", "openai", "httpx2", "httpx2-pytest", "pydantic")


def row_json(row: Row) -> dict[str, Any]:
    """One workload of one provider, as the report prints it."""
    versus = row.versus_peer
    return {
        "provider": row.provider,
        "key": row.key,
        "title": row.title,
        "target": row.target,
        "absolute_target_s": row.absolute_target,
        "meets_target": row.meets_target,
        "contenders": {
            name: {
                "median_s": row.stats[name].median,
                "p90_s": row.stats[name].p90,
                "x_floor": row.ratio(name),
                "wall_x_floor": row.wall_ratio(name),
            }
            for name in CONTENDER_NAMES
            if name in row.stats
        },
        "versus_peer": {
            "ratio": versus.ratio,
            "low": versus.low,
            "high": versus.high,
            "rounds": versus.rounds,
            "verdict": versus.verdict,
        },
    }


def paired_json(row: PairedRow) -> dict[str, Any]:
    """One row measured against its own floor, with its A/A control."""
    return {
        "group": row.group,
        "label": row.label,
        "target": row.target,
        "meets_target": row.meets_target,
        "x_floor": {"ratio": row.ratio.ratio, "low": row.ratio.low, "high": row.ratio.high, "rounds": row.ratio.rounds},
        "control_x_floor": row.control.ratio,
        "floor_s": row.floor,
        "added_s": row.added,
    }


def results_json(found: Findings, *, mode: str, when: datetime | None = None) -> dict[str, Any]:
    """The whole run: when, with what, and every row."""
    return {
        "schema": SCHEMA,
        "mode": mode,
        "date": (when or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python": platform.python_version(),
        "versions": {name: version(name) for name in PACKAGES},
        "rows": [row_json(row) for row in found.rows],
        "paired": [paired_json(row) for row in found.paired],
        "misses": list(found.misses),
    }


def write(path: Path, results: dict[str, Any]) -> None:
    """Write `results` as indented JSON (ending in a newline, as a committed file should)."""
    path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
