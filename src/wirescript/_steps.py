"""The steps a response is sent in: bytes, a wait, or a failure of the connection. Pure data.

The fault planner (`_faults`) lays responses out in these steps and the HTTP adapter (`_http`)
runs them, so neither depends on the other.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Disconnect", "Sleep", "Step", "Timeout"]


@dataclass(frozen=True, slots=True)
class Sleep:
    """Wait this long before the next step."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Disconnect:
    """The connection drops: the stack's `RemoteProtocolError`."""

    message: str


@dataclass(frozen=True, slots=True)
class Timeout:
    """The read times out: the stack's `ReadTimeout`."""

    message: str


Step = bytes | Sleep | Disconnect | Timeout
"""One step of a response body: bytes to send, a wait, or a failure of the connection."""
