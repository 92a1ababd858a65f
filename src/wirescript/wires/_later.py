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
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from ._declared import STAND_INS as _STAND_INS
from .base import Wire

__all__ = ["Later", "become", "built", "is_later"]

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
