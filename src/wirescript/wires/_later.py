"""A stub's default wires, each built when a request first reaches it: a stand-in until then.

Most tests speak one provider, yet a stub serves every default wire and every built-in host dialect.
Building each of them (its locks, stores and job tables) for every stub is what a test's set-up
paid for most; here each is a stand-in of its class's declarations instead, made once per process
(`Later.of(kind)`): the same class attributes (`name`, `hosts`, `rules`, `stop_reasons`, …), so the
tables a stub works out over its wires at construction are the same, and for each method the
class defines differently from `Wire`, one that first builds the wire. Building it makes the
stand-in that wire, in place: the wire's fresh instance's state moves into it and it takes the
wire's class, so whatever holds it (the stub's routing tables, its strict rules) holds the wire.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, overload

from ._declared import STAND_INS as _STAND_INS
from .base import Wire

__all__ = ["Later", "LaterWires", "become", "built", "is_later", "made_so_far"]

_LOCK = threading.RLock()
"""Held while a stand-in becomes its wire (a wire's making may build another: Conversations its Responses)."""


class Later(Wire):
    """The stand-in of one wire class (`Later.of(kind)`) until a request reaches it."""

    _later_kind: ClassVar[type[Wire]]
    """The class it stands in for."""
    _later_make: ClassVar[Callable[[Any], Wire]]
    """How its wire is made, given the stand-in (a partner's state, as `default_wires` pairs them)."""

    @classmethod
    @functools.cache
    def of(cls, kind: type[Wire], make: Callable[[Any], Wire] | None = None) -> type[Later]:
        """The stand-in class of `kind` (one per class and way of making it, per process).

        `make(stand_in)` makes the fresh wire (default: `kind()`); its instance must be referred to by
        nothing but its maker, so that its state can move into the stand-in (`test_wire_plan` checks).
        """
        names: dict[str, Any] = {
            "_later_kind": kind,
            "_later_make": staticmethod(make or (lambda _: kind())),
            "__slots__": (),
        }
        seen: set[str] = set()
        for owner in kind.__mro__:  # each attribute as the class resolves it
            for name, value in vars(owner).items():
                if name in seen or name.startswith("__") or name == "_abc_impl":
                    continue
                seen.add(name)
                if issubclass(owner, Wire) and owner is not Wire:  # `Wire`'s own, and a mixin's, are inherited
                    names[name] = _forwarded(name, value, kind)
        names["__getattr__"] = _instance_attribute
        mixins = tuple(base for base in kind.__bases__ if not issubclass(base, Wire))  # the same layout (`Counting`)
        made = type(f"Later{kind.__name__}", (*mixins, cls), names)
        _STAND_INS.add(made)
        return made


def is_later(wire: Wire) -> bool:
    """Whether `wire` is a stand-in no request has reached yet."""
    return type(wire) in _STAND_INS


def _forwarded(name: str, value: Any, kind: type[Wire]) -> Any:
    """What the stand-in class holds for one attribute of `kind`: its value, or a method that builds the wire first."""
    if isinstance(value, (staticmethod, classmethod)):
        return value
    if isinstance(value, property) or (hasattr(value, "__get__") and not callable(value)):

        def read(self: Later) -> Any:
            become(self)
            return getattr(self, name)

        return property(read)
    if callable(value) and not isinstance(value, type):
        function = getattr(kind, name)

        @functools.wraps(function)
        def forward(self: Later, *args: Any, **kwargs: Any) -> Any:
            become(self)
            return function(self, *args, **kwargs)

        return forward
    return getattr(kind, name)


def _instance_attribute(self: Later, name: str) -> Any:
    """An attribute its wire sets on itself (a store, a lock): the wire is built first."""
    if name.startswith("__"):
        raise AttributeError(name)
    become(self)
    return object.__getattribute__(self, name)


def become(wire: Wire) -> Wire:
    """Build the wire a stand-in stands for, in place (a wire that is built already is returned as it is)."""
    if type(wire) not in _STAND_INS:
        return wire
    with _LOCK:
        stand_in = type(wire)
        if stand_in not in _STAND_INS or not issubclass(stand_in, Later):  # built meanwhile, by another thread
            return wire
        kept = dict(vars(wire))  # what the stub set on it (its stop map, its token counter)
        kept.pop("_partner", None)
        fresh = stand_in._later_make(wire)
        state = vars(wire)
        state.pop("_partner", None)
        state.update(vars(fresh))
        state.update(kept)
        if stand_in._stop_map is not None:
            state.setdefault("_stop_map", stand_in._stop_map)
        wire.__class__ = stand_in._later_kind
    return wire


def built(wires: Sequence[Wire]) -> tuple[Wire, ...]:
    """Every one of `wires` built (`become`), in order."""
    return tuple(become(wire) for wire in wires)


class LaterWires(Sequence[Wire]):
    """A run of one stub's default wires, each stand-in made the first time it is asked for, by its place.

    A stub's tables hold its wires by place (the strict rules' shapes, the address table, the wires
    found per URL), so a stub needs no stand-in of a wire no request reaches: a test that speaks one
    provider makes one, not twenty-five (each one more object kept until the stub is collected, which
    brings the next collection nearer; on anthropic's SDK a collection costs the next request the
    rebuild of its parsed-message classes). Every run of a stub (its walked wires, those served by
    address, all of them) shares one list of the stand-ins made, so each place is made once and
    whatever asks for it gets that one. Iterating makes every stand-in of the run.
    """

    __slots__ = ("_kinds", "_made", "_partners", "_start", "_stop")

    def __init__(
        self,
        kinds: tuple[type[Later], ...],
        partners: dict[int, int],
        made: list[Wire | None],
        start: int,
        stop: int,
    ) -> None:
        self._kinds = kinds
        """The stand-in classes of every place of the stub (`made` has a place for each), shared by every stub."""
        self._partners = partners
        """Per place, the place of the wire whose state its wire is made on (`_partner`), shared by every stub."""
        self._made = made
        """The stub's stand-ins (or the wires they became) made so far, by place among all of them; None where none
        is made yet. One list for every run of the stub."""
        self._start = start
        self._stop = stop

    def __len__(self) -> int:
        return self._stop - self._start

    @overload
    def __getitem__(self, at: int) -> Wire: ...

    @overload
    def __getitem__(self, at: slice) -> Sequence[Wire]: ...

    def __getitem__(self, at: int | slice) -> Wire | Sequence[Wire]:
        if isinstance(at, slice):
            places = range(self._start, self._stop)[at]
            if places.step != 1 or not places:
                return tuple(self[i - self._start] for i in places)
            if places.start == self._start and places.stop == self._stop:
                return self
            return LaterWires(self._kinds, self._partners, self._made, places.start, places.stop)
        place = range(self._start, self._stop)[at]  # past the end: an `IndexError`; negative places count back
        wire = self._made[place]
        return wire if wire is not None else self._make(place)

    def __iter__(self) -> Iterator[Wire]:
        made = self._made
        for place in range(self._start, self._stop):
            wire = made[place]
            yield wire if wire is not None else self._make(place)

    @property
    def kinds(self) -> tuple[type[Wire], ...]:
        """The classes of the run's places, in order, as its stand-ins have them (none is made for it)."""
        return self._kinds[self._start : self._stop]

    def joined(self, after: LaterWires) -> LaterWires | None:
        """The run of this one's places and then `after`'s, when `after` follows it in the same stub; else None."""
        if after._made is not self._made or after._start != self._stop:
            return None
        return LaterWires(self._kinds, self._partners, self._made, self._start, after._stop)

    def position(self, wire: Wire) -> int | None:
        """Where `wire` itself is in the run (a place none is made at holds no wire), or None."""
        made = self._made
        for place in range(self._start, self._stop):
            if made[place] is wire:
                return place - self._start
        return None

    def _make(self, place: int) -> Wire:
        with _LOCK:  # two threads asking at once get the one stand-in
            wire = self._made[place]
            if wire is None:
                wire = object.__new__(self._kinds[place])  # no `__init__`: its wire's runs when a request reaches it
                partner = self._partners.get(place)
                if partner is not None:  # a place of the stub's, wherever this run starts: made here too
                    wire._partner = self._made[partner] or self._make(partner)  # type: ignore[attr-defined]
                self._made[place] = wire
        return wire


def made_so_far(wires: Sequence[Wire]) -> Sequence[Wire | None]:
    """What a table over `wires` may index to tell a wire by its identity without making a stand-in.

    `wires` itself, or, for the `LaterWires` run of all of a stub's places, the list of the stand-ins
    made so far (None where none is): the wire a request reached is made. A shorter run is itself.
    """
    if wires.__class__ is LaterWires and wires._start == 0 and wires._stop == len(wires._made):
        return wires._made
    return wires
