"""`Plain`: what a mutable dataclass generates (equality, repr), for classes written out by hand.

A dataclass generates its methods' source and compiles it when its module is imported (about 0.4 ms a
class here): the mutable record classes on the import path are written out instead, their fields in
`_fields`, in order (the read-only ones are `NamedTuple`s).
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["Plain"]


class Plain:
    """Equality and repr over the fields named in `_fields` (in that order), as a dataclass's `eq` and `repr`."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    """The fields, in order: what `==` compares and the repr shows."""

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._fields)

    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # mutable, as a dataclass with `eq` and no `frozen`

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"
