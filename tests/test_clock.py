"""The stub's clock: the wall time (which time-machine and freezegun move) plus every `advance()`, never a sleep."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from _support import anthropic_client
from wirescript import Clock, ScriptError, ScriptTransport, UsageError


@pytest.mark.parametrize(
    ("by", "seconds"),
    [
        (90, 90.0),
        (1.5, 1.5),
        ("90s", 90.0),
        ("6m", 360.0),
        ("1h30m", 5400.0),
        ("24h", 86400.0),
        ("250ms", 0.25),
        ("2d", 172800.0),
        (timedelta(minutes=5), 300.0),
        ("1h 5m", 3900.0),
    ],
)
def test_advance_moves_the_clock_by_a_duration(by: object, seconds: float) -> None:
    clock = Clock(source=lambda: 1_000.0)
    assert clock.advance(by) == 1_000.0 + seconds  # type: ignore[arg-type]
    assert clock.now() == 1_000.0 + seconds
    assert clock.advanced == seconds


@pytest.mark.parametrize(
    ("by", "message"),
    [
        (-1, "advance: expected a duration of zero or more seconds, got -1"),
        (
            "6 minutes",
            (
                "advance: expected seconds or a duration such as '90s', '6m', '1h30m' or '24h' (units ms, s, m, "
                "h, d), got '6 minutes'"
            ),
        ),
        ("", "advance: expected seconds or a duration such as '90s'"),
        (float("nan"), "advance: expected a duration of zero or more seconds, got nan"),
        (True, "advance: expected seconds, a timedelta or a duration string, got bool"),
    ],
)
def test_a_bad_duration_is_refused_naming_the_argument(by: object, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        Clock().advance(by)  # type: ignore[arg-type]
    assert str(caught.value).startswith(message)


def test_the_default_clock_follows_the_wall_time() -> None:
    clock = Clock()
    before = time.time()
    now = clock.now()
    assert before <= now <= time.time()
    clock.advance("1h")
    assert clock.now() - time.time() == pytest.approx(3600.0, abs=1.0)


def test_each_request_is_stamped_on_the_stubs_clock_in_arrival_order() -> None:
    ticks = iter([100.0, 100.0, 100.0])
    clock = Clock(source=lambda: next(ticks, 100.0))
    stub = ScriptTransport(["One.", "Two."], clock=clock)
    client = anthropic_client(stub)
    ask = {"model": "claude-test", "max_tokens": 16, "messages": [{"role": "user", "content": "Hi"}]}
    client.messages.create(**ask)  # type: ignore[call-overload]
    stub.clock.advance("6m")
    client.messages.create(**ask)  # type: ignore[call-overload]
    assert [r.received_at for r in stub.requests] == [100.0, 460.0]
    assert stub.clock is clock


def test_one_clock_serves_several_stubs_and_a_stub_has_its_own_by_default() -> None:
    shared = Clock()
    first, second = ScriptTransport([], clock=shared), ScriptTransport([], clock=shared)
    assert first.clock is second.clock is shared
    assert ScriptTransport([]).clock is not ScriptTransport([]).clock


def test_a_clock_that_is_not_a_clock_is_refused_at_construction() -> None:
    with pytest.raises(ScriptError, match=r"clock: expected a wirescript\.Clock, got float"):
        ScriptTransport([], clock=12.0)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="source: expected a function returning seconds, got int"):
        Clock(source=3)  # type: ignore[arg-type]
