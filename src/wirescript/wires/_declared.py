"""The tables a stub works out over its wires' declarations, shared by every stub of the default wires' stand-ins.

A table a stub works out over what its wires declare (their stop reasons, credentials, addresses)
is the same for every stub of the default wires: their stand-ins (`wirescript.wires._later`) hold
only what their classes declare, and no request has reached them yet. This module imports no wire,
so that `base` and the stand-ins alike may ask it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = ["STAND_INS", "declared"]

STAND_INS: set[type[Any]] = set()
"""Every stand-in class made (`Later.of` adds each): asked as a set, not with `isinstance` (an ABC's check is slow)."""

_Value = TypeVar("_Value")

_DECLARED: dict[str, dict[tuple[type[Any], ...], Any]] = {}
"""Per table name, per tuple of stand-in classes: the table worked out of what those classes declare."""


def declared(wires: Sequence[Any], name: str, work_out: Callable[[Sequence[Any]], _Value]) -> _Value:
    """`work_out(wires)`, once per tuple of stand-in classes when every one of `wires` is a stand-in.

    Any other list (a wire of one's own, a built wire) is worked out afresh. Only tuples of stand-in
    classes are ever kept, so a tuple found is one of them: the common case costs one look-up.
    """
    kinds = tuple(map(type, wires)) if wires.__class__ is tuple else getattr(wires, "kinds", None)
    if kinds is None:  # a list of wires, or any other sequence: its classes as they are
        kinds = tuple(map(type, wires))
    tables = _DECLARED.get(name)
    if tables is None:
        tables = _DECLARED.setdefault(name, {})
    found = tables.get(kinds, _DECLARED)
    if found is not _DECLARED:
        return found  # type: ignore[no-any-return]
    if not STAND_INS.issuperset(kinds):
        return work_out(wires)
    made = tables[kinds] = work_out(wires)
    return made
