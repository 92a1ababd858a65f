"""The rules tables of `docs/strict-requests.md` are generated from the rules (`wirescript.strict.rules_table`):
a rule added, removed, reworded or re-sourced without the page following fails here.

Regenerate the page's tables with `uv run python tests/test_strict_docs.py`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from wirescript.strict import RULES, rules_table
from wirescript.wires import Wire, default_wires
from wirescript.wires.mcp import RULES as MCP_RULES
from wirescript.wires.mcp import MCPScript, MCPWire

pytest.importorskip("jsonschema")  # the MCP rules' wire checks its schemas with it (not in the legacy run)

PAGE = Path(__file__).resolve().parent.parent / "docs" / "strict-requests.md"
BEGIN = "<!-- rules table: generated from the rules by wirescript.strict.rules_table; do not edit -->"
END = "<!-- end of the generated rules table -->"


def page_wires() -> list[Wire]:
    """The wires the page lists: the default ones, and the MCP server a stub has with an `MCPScript`."""
    return [*default_wires(), MCPWire(MCPScript())]


def page_table() -> str:
    """The tables the page shows, as the rules are."""
    return rules_table(page_wires())


def generated(text: str) -> str:
    """The part of the page between the markers."""
    found = re.search(re.escape(BEGIN) + r"\n(.*?)" + re.escape(END), text, re.S)
    assert found is not None, f"{PAGE.name} has no generated rules table between its markers"
    return found.group(1)


def rewritten(text: str) -> str:
    """The page with its generated part replaced by the tables of the rules as they are."""
    start, end = text.index(BEGIN) + len(BEGIN) + 1, text.index(END)
    return text[:start] + page_table() + "\n" + text[end:]


def test_the_page_shows_the_rules_as_they_are() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert generated(text) == page_table() + "\n", "run `uv run python tests/test_strict_docs.py` to regenerate"


def test_every_rule_has_a_row_with_its_id_source_and_summary() -> None:
    table = page_table()
    for rule_id, rule in {**RULES, **{rule.id: rule for rule in MCP_RULES}}.items():
        (row,) = [line for line in table.splitlines() if line.startswith(f"| `{rule_id}` |")]
        assert rule.source.replace("|", "\\|") in row
        assert rule.summary.replace("|", "\\|") in row
        if rule.retired is not None:  # a retired rule's row says why it refuses nothing, and has no status
            assert rule.retired.replace("|", "\\|") in row
        else:
            assert f"| {rule.status} |" in row


def test_the_check_can_fail() -> None:
    """A page whose table lost a row, or names a rule that is gone, is not the generated one."""
    text = PAGE.read_text(encoding="utf-8")
    part = generated(text)
    first_row = next(line for line in part.splitlines() if line.startswith("| `"))
    assert generated(text.replace(first_row + "\n", "")) != page_table() + "\n"
    assert generated(text.replace("`anthropic.model-missing`", "`anthropic.model-gone`")) != page_table() + "\n"


if __name__ == "__main__":
    PAGE.write_text(rewritten(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    sys.stdout.write(f"rewrote the rules tables of {PAGE}\n")
