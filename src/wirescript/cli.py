"""The `wirescript` command line."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    print("wirescript: no commands yet", file=sys.stderr)
    return 2
