"""The marker's budgets (`max_cost_usd`, `min_cache_hit`) fail a test at teardown naming the cause."""

from __future__ import annotations

import textwrap

import pytest

from test_plugin import HEADER, run

pytest_plugins = ["pytester"]

LOOP = HEADER + textwrap.dedent(
    """
    SYSTEM = "You are a careful triage agent; follow the runbook. " * 160
    PRICES = {"claude-sonnet-4-6": {"input": 3, "output": 15, "cache_write_5m": 3.75, "cache_read": 0.3}}


    def loop(stub, stamp=False):
        client = anthropic.Anthropic(api_key="k", max_retries=0, http_client=hx.Client(transport=stub))
        for i in range(3):
            text = (f"Now: 10:0{i}. " if stamp else "") + SYSTEM
            client.messages.create(
                model="claude-sonnet-4-6",
                max_tokens=10,
                system=[{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}],
                messages=[{"role": "user", "content": f"ticket {i}"}],
            )
    """
)


def test_budgets_pass_a_cheap_cached_loop_and_fail_a_changed_one(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_app=LOOP
        + textwrap.dedent(
            """
            @pytest.mark.wirescript(
                usage="derive", prices=PRICES, max_cost_usd=0.05, min_cache_hit=0.9, cache_from_request=1
            )
            def test_cached(wirescript):
                stub = wirescript(["a", "b", "c"])
                loop(stub)
                assert all(row.derived for row in stub.bill)

            @pytest.mark.wirescript(usage="derive", prices=PRICES, min_cache_hit=0.9, cache_from_request=1)
            def test_stamped(wirescript):
                loop(wirescript(["a", "b", "c"]), stamp=True)

            @pytest.mark.wirescript(usage="derive", prices=PRICES, max_cost_usd=0.001)
            def test_expensive(wirescript):
                loop(wirescript(["a", "b", "c"]))

            @pytest.mark.wirescript(prices={"claude-sonnet-4-6": {"input": 1000, "output": 0}})
            def test_priced_by_the_marker(wirescript):  # 10 scripted input tokens at $1,000 per million
                stub = wirescript(["a"])
                anthropic.Anthropic(api_key="k", http_client=hx.Client(transport=stub)).messages.create(
                    model="claude-sonnet-4-6", max_tokens=10, messages=[{"role": "user", "content": "Hi"}]
                )
                assert stub.bill.total_usd == pytest.approx(0.01)
            """
        )
    )
    result = run(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, errors=2)
    out = result.stdout.str()
    assert (
        "wirescript: the cache hit ratio from requests[1] on is 0.00, below min_cache_hit=0.9: requests[1] read 0 of "
        "its 2,085 input tokens from the cache: system[0] differs from requests[0]'s (a timestamp, a date or an id in "
        "the system prompt?)"
    ) in out
    assert (
        "wirescript: the bill is $0.009111, over max_cost_usd=0.001 (3 request(s); the costliest: requests[0] " in out
    )


def test_a_budget_without_prices_or_derivation_says_so(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_app=LOOP
        + textwrap.dedent(
            """
            import sys

            @pytest.mark.wirescript(max_cost_usd=1.0)
            def test_unpriced(monkeypatch, wirescript):  # the patch holds at the fixture's teardown
                monkeypatch.setitem(sys.modules, "genai_prices", None)
                loop(wirescript(["a", "b", "c"]))

            @pytest.mark.wirescript(min_cache_hit=0.5)
            def test_scripted(wirescript):
                loop(wirescript(["a", "b", "c"]))
            """
        )
    )
    result = run(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=2)
    out = result.stdout.str()
    assert "wirescript: max_cost_usd=1.0 cannot be checked: stub.bill.total_usd: requests[0] " in out
    assert "install the prices extra (pip install 'wirescript[prices]'" in out
    assert (
        "below min_cache_hit=0.5: requests[0] read 0 of its 10 input tokens from the cache: its usage is scripted, "
        "not derived"
    ) in out


def test_bad_budget_options_fail_the_setup_naming_them(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_app=HEADER
        + textwrap.dedent(
            """
            @pytest.mark.wirescript(min_cache_hit=1.5)
            def test_ratio(wirescript): ...

            @pytest.mark.wirescript(usage="yes")
            def test_usage(wirescript): ...

            @pytest.mark.wirescript(max_cost=1)
            def test_name(wirescript): ...
            """
        )
    )
    result = run(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(
        [
            "*min_cache_hit must be a share of input tokens, from 0 to 1, got float 1.5*",
            "*usage: expected 'derive'*",
            "*unknown option 'max_cost'; did you mean 'max_cost_usd'?*",
        ]
    )
