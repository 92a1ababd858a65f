"""The loopback server: W1's request through `ScriptServer` against the same request in-process.

Three contenders take turns round by round, on the same SDK and the same script: the floor, the
stub in-process (``ScriptTransport`` as the client's transport), and the stub served over loopback
HTTP by ``ScriptServer`` (uvicorn in a thread; the SDK client's ``base_url`` points at it and its
connection is kept alive across the round's requests). Each round starts a fresh server (untimed).

The bar is on wall-clock time, which is what latency is: served over in-process, round by round.
CPU time is shown beside it; it counts the server thread too, since both run in this process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx2

from wirescript import ScriptTransport
from wirescript.server import ScriptServer

from .contenders import FLOOR, WIRESCRIPT, Canned, Contender, Round
from .providers import Provider
from .timing import Comparison, Stats, run_workload
from .workloads import W1, Workload

SERVED = "served"
SERVED_TARGET = 4.0
"""The most a request through the server may take, as a multiple of the same request in-process (wall time)."""
LLMOCK = "llmock (last measured by the trials round): 4.2 ms in a thread, 2.0 ms as a process"
"""A reference, not measured here: the same one-delta request against llmock's loopback server."""


def _served_start(provider: Provider, workload: Workload, canned: list[Canned], samples: int) -> Round:
    stub = ScriptTransport([*workload.warmup_turns, *(list(workload.turns) * samples)])
    server = ScriptServer(stub)
    server.start()
    client = provider.served_client(server.base_url, httpx2.Client())

    def finish() -> None:
        server.stop()
        stub.check()  # every turn served over HTTP, no overflow, no problem

    return Round(client, finish=finish)


def _not_for_setup(provider: Provider, canned: list[Canned]) -> Callable[[], Callable[[], None]]:
    raise NotImplementedError("the served contender is not part of the set-up measurement")


SERVED_CONTENDER = Contender(SERVED, _served_start, _not_for_setup)


@dataclass(frozen=True)
class Served:
    """One provider's W1 request: floor, in-process stub and served stub, round by round."""

    provider: str
    stats: dict[str, Stats]

    @property
    def versus_in_process(self) -> Comparison:
        """Served over in-process in wall-clock time, round by round, with its ~95% interval."""
        return self.stats[SERVED].versus(self.stats[WIRESCRIPT.name], wall=True)

    @property
    def cpu_versus_in_process(self) -> float:
        """The same in CPU time (the server thread's included)."""
        return self.stats[SERVED].ratio(self.stats[WIRESCRIPT.name])

    def wall_median(self, contender: str) -> float:
        """The median wall-clock seconds per request."""
        return self.stats[contender].wall_median

    @property
    def meets_target(self) -> bool:
        """Whether the served request costs at most `SERVED_TARGET` times the in-process one."""
        return self.versus_in_process.ratio <= SERVED_TARGET


def measure_served(provider: Provider, canned: list[Canned], expected: Any, *, rounds: int, samples: int) -> Served:
    """Time W1's request on the floor, in-process and through the server; check all three answer alike."""
    contenders = (FLOOR, WIRESCRIPT, SERVED_CONTENDER)
    stats = run_workload(provider, W1, canned, expected, contenders, rounds=rounds, samples=samples)
    return Served(provider.name, stats)
