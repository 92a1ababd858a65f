"""What reaching a client costs: `intercept` against explicit injection, and the network guard's set-up.

* ``intercepted``: the same stub and SDK client as ``wirescript``, but the client is built with no
  ``http_client`` of its own stub: a plain ``httpx2.Client()`` whose default transport the open
  ``stub.intercept()`` routes to the stub (the patched ``HTTPTransport.handle_request`` matches
  the host, then calls the stub). Timed per request, interleaved round by round with ``wirescript``.
* ``guarded``: one test's set-up as ``wirescript`` builds it (a stub from the 20-turn script and its
  SDK client), plus the network guard the pytest fixture enters for every test (and leaves at
  teardown, untimed, as the other contenders' teardowns are). The guard's patches are held for
  the whole measurement, as the pytest session holds them from its first test that uses the
  fixture to its end (`wirescript.guard.hold_patches`): what is timed is every later test's cost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx2

from wirescript import ScriptTransport
from wirescript.guard import NetworkGuard, hold_patches, release_patches

from .contenders import WIRESCRIPT, Canned, Contender, Round, _client, _http, _wirescript_build
from .providers import Provider
from .timing import Comparison, run_setup, run_workload
from .workloads import W1, Workload

INTERCEPT_TARGET = 1.05
"""`intercept` over explicit injection on W1, CPU time per request: at most 5% more."""


def _intercepted_start(provider: Provider, workload: Workload, canned: list[Canned], samples: int) -> Round:
    stub = ScriptTransport([*workload.warmup_turns, *(list(workload.turns) * samples)])
    interception = stub.intercept()
    interception.__enter__()
    try:
        client = _client(provider, workload, _http(workload))  # the library's default transport
    except BaseException:
        interception.__exit__(None, None, None)
        raise

    def finish() -> None:
        interception.__exit__(None, None, None)
        stub.check()  # every turn served through the interception, nothing went to the network

    return Round(client, finish=finish)


def _intercepted_build(provider: Provider, canned: list[Canned]) -> Callable[[], Callable[[], None]]:
    raise NotImplementedError("intercepted is timed per request only")


def _guarded_build(provider: Provider, canned: list[Canned]) -> Callable[[], Callable[[], None]]:
    build_stub = _wirescript_build(provider, canned)

    def build() -> Callable[[], None]:
        guard = NetworkGuard()
        guard.__enter__()
        close = build_stub()

        def teardown() -> None:
            close()
            guard.__exit__(None, None, None)

        return teardown

    return build


INTERCEPTED = Contender("intercepted", _intercepted_start, _intercepted_build)
GUARDED = Contender("guarded", WIRESCRIPT.start, _guarded_build)


@dataclass(frozen=True)
class Reach:
    """The two paired figures of one provider."""

    provider: str
    intercept: Comparison
    """`intercepted` over `wirescript` on W1, CPU time per request."""
    explicit: float
    """`wirescript`'s median CPU time per W1 request, in seconds."""
    guard: Comparison
    """`guarded` over `wirescript`: one test's set-up, CPU time."""
    setup: float
    """`wirescript`'s median set-up, in seconds."""

    @property
    def meets_target(self) -> bool:
        """Whether `intercept` adds at most 5% (the median of the rounds' ratios)."""
        return self.intercept.ratio <= INTERCEPT_TARGET


def measure_reach(
    provider: Provider,
    canned: dict[str, list[Canned]],
    expected: Any,
    *,
    rounds: tuple[int, int],
    setup: tuple[int, int],
) -> Reach:
    """Time W1 explicitly injected and intercepted, and the set-up with and without the guard, in the same run."""
    _check_routing()
    w1 = run_workload(
        provider, W1, canned[W1.key], expected, (WIRESCRIPT, INTERCEPTED), rounds=rounds[0], samples=rounds[1]
    )
    held = hold_patches()  # as the pytest session holds them, from its first guarded test on
    try:
        built = run_setup(provider, canned[W1.key], (WIRESCRIPT, GUARDED), rounds=setup[0], samples=setup[1])
    finally:
        if held:
            release_patches()
    return Reach(
        provider.name,
        w1[INTERCEPTED.name].versus(w1[WIRESCRIPT.name]),
        w1[WIRESCRIPT.name].median,
        built[GUARDED.name].versus(built[WIRESCRIPT.name]),
        built[WIRESCRIPT.name].median,
    )


def _check_routing() -> None:
    """A client built with no transport of its own reaches the stub only while the interception is open."""
    stub = ScriptTransport(["routed"])
    with stub.intercept(), httpx2.Client() as http:
        http.post(
            "https://api.anthropic.com/v1/messages",
            json={"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]},
        )
    if len(stub.requests) != 1:
        raise AssertionError(f"intercept did not route the request to the stub: {stub.requests}")
    stub.check()
