"""The steps a response is sent in: bytes, a wait, or a failure of the connection. Pure data.

The fault planner (`_faults`) lays responses out in these steps and the HTTP adapter (`_http`)
runs them, so neither depends on the other. Each step is a small immutable value of one field,
written out rather than made by `dataclass` (whose generated methods cost each import a compile).
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any, ClassVar

__all__ = ["Disconnect", "Sleep", "Step", "Timeout"]


class _Step:
    """A value of one field (`_field`): compared, hashed and shown by it; immutable."""

    __slots__ = ()
    _field: ClassVar[str]

    def _value(self) -> Any:
        return getattr(self, self._field)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._value() == other._value())

    def __hash__(self) -> int:
        return hash((self._value(),))

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}({self._field}={self._value()!r})"


class Sleep(_Step):
    """Wait this long before the next step."""

    __slots__ = ("seconds",)
    __match_args__ = ("seconds",)
    _field = "seconds"
    seconds: float

    def __init__(self, seconds: float) -> None:
        object.__setattr__(self, "seconds", seconds)


class _Failure(_Step):
    """A failure of the connection, with the message its exception carries."""

    __slots__ = ("message",)
    __match_args__ = ("message",)
    _field = "message"
    message: str

    def __init__(self, message: str) -> None:
        object.__setattr__(self, "message", message)


class Disconnect(_Failure):
    """The connection drops: the stack's `RemoteProtocolError`."""

    __slots__ = ()


class Timeout(_Failure):
    """The read times out: the stack's `ReadTimeout`."""

    __slots__ = ()


Step = bytes | Sleep | Disconnect | Timeout
"""One step of a response body: bytes to send, a wait, or a failure of the connection."""
