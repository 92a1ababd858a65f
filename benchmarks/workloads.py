"""The workloads: what one timed sample asks the SDK to do, and what its script is.

wirescript streams text in pieces of at most 8 characters and tool arguments in pieces of at
most 32, so a turn of ``8 * N`` characters is ``N`` deltas; the runner checks the real count by
parsing the captured stream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .providers import NOTE_TOOL_NAME, SAVED, Provider, prose, tool_input

CONCURRENCY = 200


@dataclass(frozen=True)
class Workload:
    """One workload: the turns one sample consumes, how the SDK is driven, and the target ratio."""

    key: str
    title: str
    turns: tuple[Any, ...]
    """The script of one sample, in request order."""
    deltas: tuple[int, ...]
    """The content deltas each response must carry (checked on the captured stream)."""
    target: float
    """The most wirescript may cost, as a ratio of medians to the floor."""
    is_async: bool = False

    @property
    def requests(self) -> int:
        """Requests per sample: the per-request time is the sample's time divided by this."""
        return len(self.turns)

    @property
    def warmup_turns(self) -> tuple[Any, ...]:
        """What a round's untimed warm-up consumes: one sample, or one request of a concurrent workload."""
        return self.turns[:1] if self.is_async else self.turns

    def warmup(self, provider: Provider) -> Callable[[Any], Any]:
        """The warm-up: one sample on a sync client, one request on an async one."""
        return provider.atext if self.is_async else self.sync_run(provider)

    def sync_run(self, provider: Provider) -> Callable[[Any], Any]:
        """The sample, for a sync client."""
        if self.requests == 1:
            return provider.text
        return provider.tool_loop

    def async_run(self, provider: Provider) -> Callable[[Any], Awaitable[Any]]:
        """The sample, for an async client: every request at once."""

        def run(client: Any) -> Awaitable[Any]:
            return provider.many(client, self.requests)

        return run


def _text(chars: int) -> dict[str, Any]:
    return {"text": prose(chars)}


W1 = Workload("W1", "1-delta text turn", (_text(1),), (1,), 1.05)
W2 = Workload("W2", "100-delta text turn", (_text(800),), (100,), 1.10)
W3 = Workload("W3", "1,000-delta text turn", (_text(8000),), (1000,), 1.05)
W4 = Workload(
    "W4",
    "tool loop: 2 requests, 2 KB input in 64 fragments",
    ({"tool": {"name": NOTE_TOOL_NAME, "input": tool_input(2048)}}, {"text": SAVED}),
    (64, 2),
    1.05,
)
W5 = Workload(
    "W5",
    f"{CONCURRENCY} concurrent async requests (10-delta turns)",
    (_text(80),) * CONCURRENCY,
    (10,) * CONCURRENCY,
    1.05,
    is_async=True,
)

WORKLOADS = (W1, W2, W3, W4, W5)

SETUP_STEPS = 10
SETUP_SCRIPT: tuple[Any, ...] = tuple(
    turn
    for step in range(SETUP_STEPS)
    for turn in (
        {"tool": {"name": NOTE_TOOL_NAME, "input": {"path": f"notes/{step}.md", "text": "Buy milk."}}},
        {"text": f"Saved note {step}."},
    )
)
"""The script the set-up measurement builds a stub from: 20 turns (a tool call, then text, ten times),
given as dicts, as tests write them."""

SETUP_TARGET_MS = 0.2
"""The most building a stub from that script and its SDK client may take, in milliseconds (median)."""
