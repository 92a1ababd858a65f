"""The coverage table (docs/providers.md) says what the wires serve (the pages' examples run in test_docs).

Each wire declares the endpoints it serves (`Wire.endpoints`); every served row of the table names
the wire that answers it, every declared endpoint has a row, and every *not served* row is answered
by no wire: a table that drifts from the code fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

from wirescript.wires import Wire, default_wires

DOCS = Path(__file__).resolve().parent.parent / "docs"
TABLE = DOCS / "providers.md"
NOT_SERVED = "not served"


def table_rows(text: str) -> list[tuple[str, str, str]]:
    """`(provider, "METHOD /path", served by)` for each row of the coverage table."""
    rows = []
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| provider | method and path |"))
    for line in lines[start:]:
        if not line.startswith("|"):
            break  # the coverage table ends; later tables on the page are not it
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[1].startswith("`"):
            continue
        served = cells[4].strip("`")
        rows.append((cells[0], cells[1].strip("`"), served))
    return rows


def sample_path(template: str) -> str:
    return re.sub(r"\{[a-z_]+\}", "x-1", template)


def first_wire(wires: list[Wire], endpoint: str) -> str | None:
    method, _, template = endpoint.partition(" ")
    path = sample_path(template)
    return next((w.name for w in wires if w.matches(method, path, host="example.com")), None)


def declared() -> set[tuple[str, str]]:
    return {(endpoint, wire.name) for wire in default_wires() for endpoint in wire.endpoints}


def test_every_default_wire_declares_what_it_serves() -> None:
    assert all(wire.endpoints for wire in default_wires())


def test_each_declared_endpoint_is_answered_by_its_wire() -> None:
    wires = default_wires()
    assert [(e, first_wire(wires, e)) for e, _ in sorted(declared())] == sorted(declared())


def test_the_table_lists_every_served_endpoint_and_nothing_else() -> None:
    rows = table_rows(TABLE.read_text(encoding="utf-8"))
    assert len(rows) > 20
    served = {(endpoint, wire) for _, endpoint, wire in rows if wire != NOT_SERVED}
    assert served == declared()


def test_every_not_served_row_is_really_not_served() -> None:
    wires = default_wires()
    rows = table_rows(TABLE.read_text(encoding="utf-8"))
    not_served = [endpoint for _, endpoint, wire in rows if wire == NOT_SERVED]
    assert not_served
    assert {e: first_wire(wires, e) for e in not_served} == dict.fromkeys(not_served)


def test_the_check_can_fail() -> None:
    """A row naming the wrong wire, a missing row, or a served endpoint marked not served is caught."""
    text = TABLE.read_text(encoding="utf-8")
    wrong = text.replace("| `POST /v1/embeddings` | `embeddings.create` (float or base64) | no | `embeddings` |", "")
    assert {(e, w) for _, e, w in table_rows(wrong) if w != NOT_SERVED} != declared()
    renamed = text.replace(
        "`POST /v1/messages` | `messages.create`, `messages.stream` | JSON or SSE | `anthropic`",
        "`POST /v1/messages` | `messages.create`, `messages.stream` | JSON or SSE | `openai_chat`",
    )
    assert {(e, w) for _, e, w in table_rows(renamed) if w != NOT_SERVED} != declared()
    assert first_wire(default_wires(), "POST /v1/embeddings") is not None  # so marking it not served fails
