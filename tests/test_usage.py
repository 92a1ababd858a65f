"""Usage derived from the request, Anthropic's prompt caching rules on the stub's clock, and the bill.

Every test drives the real anthropic SDK over the stub and reads its own `usage` objects: the bill's
rows must say what they say, streamed or not.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from typing import Any

import anthropic
import pytest

from _support import anthropic_client
from wirescript import Bill, BillRow, ScriptError, ScriptTransport, Turn, UsageError
from wirescript.wires.anthropic.caching import CACHE_MINIMUMS, cache_minimum

MODEL = "claude-sonnet-4-6"
SYSTEM_TEXT = "You are a careful triage agent; follow the runbook to the letter. " * 120  # ~8 KB, ~2,000 tokens
TOOLS = [
    {
        "name": "lookup",
        "description": "Look a ticket up.",
        "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}},
    }
]
LOOP = [
    {"text": "Looking.", "tool": {"name": "lookup", "input": {"id": "T-1"}}},
    {"tool": {"name": "lookup", "input": {"id": "T-2"}}},
    "Both tickets are duplicates.",
]


def tokens(text: str) -> int:
    """The documented default count: a token per four characters, rounded up."""
    return -(-len(text) // 4)


def system(text: str = SYSTEM_TEXT, ttl: str | None = None) -> list[dict[str, Any]]:
    control: dict[str, Any] = {"type": "ephemeral"} if ttl is None else {"type": "ephemeral", "ttl": ttl}
    return [{"type": "text", "text": text, "cache_control": control}]


def usage_of(usage: Any) -> dict[str, int]:
    """An SDK usage object's counts (the 5m/1h split flattened), as the bill's rows name them."""
    split = getattr(usage, "cache_creation", None)
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens or 0,
        "cache_read_input_tokens": usage.cache_read_input_tokens or 0,
        "cache_creation_1h_input_tokens": split.ephemeral_1h_input_tokens if split is not None else 0,
    }


def row_fields() -> tuple[str, ...]:
    return (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "cache_creation_1h_input_tokens",
    )


def counts(row: BillRow) -> dict[str, int]:
    return {name: getattr(row, name) for name in row_fields()}


def tool_loop(
    stub: ScriptTransport, *, stream: bool = False, system_blocks: Any = None, model: str = MODEL
) -> list[Any]:
    """The app under test: a tool loop until the model stops calling tools; the SDK's usage of each answer."""
    client = anthropic_client(stub, max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "Triage tickets T-1 and T-2."}]
    usages = []
    blocks = system() if system_blocks is None else system_blocks
    while True:
        params = {"model": model, "max_tokens": 256, "system": blocks, "tools": TOOLS, "messages": messages}
        if stream:
            with client.messages.stream(**params) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**params)
        usages.append(message.usage)
        if message.stop_reason != "tool_use":
            return usages
        call = next(block for block in message.content if block.type == "tool_use")
        messages += [
            {"role": "assistant", "content": message.content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "open"}]},
        ]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_cached_tool_loop_writes_once_and_reads_what_was_written(stream: bool) -> None:
    stub = ScriptTransport(LOOP, usage="derive")
    usages = tool_loop(stub, stream=stream)
    first, second, third = (usage_of(u) for u in usages)
    assert first["cache_creation_input_tokens"] > cache_minimum(MODEL)
    assert first["cache_read_input_tokens"] == 0
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert third["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert second["cache_creation_input_tokens"] == third["cache_creation_input_tokens"] == 0
    assert first["input_tokens"] == tokens("Triage tickets T-1 and T-2.")  # only what follows the entry
    assert third["input_tokens"] > second["input_tokens"] > first["input_tokens"] > 0  # the conversation grows
    # the bill says what the SDK's own usage objects say
    assert [counts(row) for row in stub.bill] == [usage_of(u) for u in usages]
    assert [row.index for row in stub.bill] == [0, 1, 2]
    assert all(row.derived for row in stub.bill)
    stub.check()


def test_the_split_by_lifetime_is_sent_and_billed() -> None:
    stub = ScriptTransport(["Hi.", "Hi again."], usage="derive")
    client = anthropic_client(stub, max_retries=0)
    blocks = [
        {"type": "text", "text": SYSTEM_TEXT, "cache_control": {"type": "ephemeral", "ttl": "1h"}},
        {"type": "text", "text": SYSTEM_TEXT[::-1], "cache_control": {"type": "ephemeral"}},
    ]
    message = client.messages.create(
        model=MODEL, max_tokens=10, system=blocks, messages=[{"role": "user", "content": "x"}]
    )
    split = message.usage.cache_creation
    assert split.ephemeral_1h_input_tokens == tokens(SYSTEM_TEXT)  # each stretch written once
    assert split.ephemeral_5m_input_tokens == tokens(SYSTEM_TEXT[::-1])
    assert (
        split.ephemeral_1h_input_tokens + split.ephemeral_5m_input_tokens == message.usage.cache_creation_input_tokens
    )
    assert stub.bill.rows[0].cache_creation_1h_input_tokens == split.ephemeral_1h_input_tokens
    again = client.messages.create(
        model=MODEL, max_tokens=10, system=blocks, messages=[{"role": "user", "content": "y"}]
    )
    assert again.usage.cache_read_input_tokens == message.usage.cache_creation_input_tokens
    stub.check()


def test_a_prefix_below_the_models_minimum_caches_nothing_and_raises_nothing() -> None:
    stub = ScriptTransport(LOOP, usage="derive")
    short = system("Be brief. " * 60)  # 600 characters: 150 tokens, far below 1,024
    usages = tool_loop(stub, system_blocks=short)
    assert [(u.cache_creation_input_tokens, u.cache_read_input_tokens) for u in usages] == [(0, 0)] * 3
    assert stub.problems == []
    note = stub.bill.rows[1].cache_note
    assert note is not None
    assert "below the 1,024 tokens" in note
    stub.check()


def test_a_changed_system_prompt_misses_and_the_change_is_named() -> None:
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = anthropic_client(stub, max_retries=0)
    for stamp in ("2026-12-01T10:00", "2026-12-01T10:01"):
        client.messages.create(
            model=MODEL,
            max_tokens=10,
            system=system(f"Now: {stamp}. " + SYSTEM_TEXT),
            messages=[{"role": "user", "content": "Hi"}],
        )
    assert stub.bill.rows[1].cache_read_input_tokens == 0
    assert stub.bill.rows[1].cache_creation_input_tokens > 0  # written afresh
    assert stub._ledger.billing.changed(1) == (
        "system[0] differs from requests[0]'s (a timestamp, a date or an id in the system prompt?)"
    )
    stub.check()


def test_after_six_minutes_a_5_minute_entry_misses_and_a_1_hour_entry_hits() -> None:
    for ttl, hits in (("5m", False), ("1h", True)):
        stub = ScriptTransport(["One.", "Two."], usage="derive")
        client = anthropic_client(stub, max_retries=0)
        ask = {
            "model": MODEL,
            "max_tokens": 10,
            "system": system(ttl=ttl),
            "messages": [{"role": "user", "content": "Hi"}],
        }
        written = client.messages.create(**ask).usage.cache_creation_input_tokens
        stub.clock.advance(360)
        read = client.messages.create(**ask).usage.cache_read_input_tokens
        assert read == (written if hits else 0), ttl
        if not hits:
            note = stub.bill.rows[1].cache_note
            assert note is not None
            assert "expired" in note
            assert "lifetime is 5m" in note
        stub.check()


def test_a_read_refreshes_a_5_minute_entry() -> None:
    stub = ScriptTransport(["One.", "Two.", "Three."], usage="derive")
    client = anthropic_client(stub, max_retries=0)
    ask = {"model": MODEL, "max_tokens": 10, "system": system(), "messages": [{"role": "user", "content": "Hi"}]}
    written = client.messages.create(**ask).usage.cache_creation_input_tokens
    stub.clock.advance(240)
    assert client.messages.create(**ask).usage.cache_read_input_tokens == written  # read at 4 minutes: refreshed
    stub.clock.advance(240)
    assert client.messages.create(**ask).usage.cache_read_input_tokens == written  # 8 minutes after the write
    stub.check()


def test_entries_are_the_models_own() -> None:
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = anthropic_client(stub, max_retries=0)
    for model in (MODEL, "claude-opus-4-8"):
        client.messages.create(
            model=model, max_tokens=10, system=system(), messages=[{"role": "user", "content": "Hi"}]
        )
    assert stub.bill.rows[1].cache_read_input_tokens == 0
    assert stub._ledger.billing.changed(1) == (
        "its model 'claude-opus-4-8' is not requests[0]'s 'claude-sonnet-4-6': entries are per model"
    )
    stub.check()


def test_parallel_cold_requests_all_write() -> None:
    """An entry is readable only once the answer that writes it has begun: two held requests both write."""
    stub = ScriptTransport(["One.", "Two.", "Three."], usage="derive")
    client = anthropic_client(stub, max_retries=0)
    ask = {"model": MODEL, "max_tokens": 10, "system": system(), "messages": [{"role": "user", "content": "Hi"}]}
    results: list[Any] = []
    with stub.holding():
        threads = [threading.Thread(target=lambda: results.append(client.messages.create(**ask))) for _ in range(2)]
        for thread in threads:
            thread.start()
        stub.wait_for_requests(2)
    for thread in threads:
        thread.join()
    written = [message.usage.cache_creation_input_tokens for message in results]
    assert written[0] == written[1] > 0
    assert [message.usage.cache_read_input_tokens for message in results] == [0, 0]
    # released together, either may be answered first, or both at once: a note, when one says why, says this
    notes = [row.cache_note for row in stub.bill.rows]
    assert all(note is None or "parallel requests all write" in note for note in notes), notes
    third = client.messages.create(**ask)  # after both answers began: reads
    assert third.usage.cache_read_input_tokens == written[0]
    stub.check()


def test_automatic_caching_moves_the_breakpoint_forward() -> None:
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = anthropic_client(stub, max_retries=0)
    messages: list[Any] = [{"role": "user", "content": SYSTEM_TEXT}]
    first = client.messages.create(
        model=MODEL, max_tokens=10, messages=messages, extra_body={"cache_control": {"type": "ephemeral"}}
    )
    messages += [{"role": "assistant", "content": "One."}, {"role": "user", "content": "And then?"}]
    second = client.messages.create(
        model=MODEL, max_tokens=10, messages=messages, extra_body={"cache_control": {"type": "ephemeral"}}
    )
    assert first.usage.input_tokens == 0  # the whole prompt is the prefix of its last block
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens > 0  # the breakpoint moved to the new last block
    stub.check()


def test_a_breakpoint_looks_back_twenty_blocks_only() -> None:
    """A turn with many tool results puts the entry more than 20 blocks before the next breakpoint: a miss."""
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = anthropic_client(stub, max_retries=0)
    opening: list[Any] = [{"type": "text", "text": SYSTEM_TEXT, "cache_control": {"type": "ephemeral"}}]
    client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": opening}])
    results = [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "ok"} for i in range(24)]
    calls = [{"type": "tool_use", "id": f"toolu_{i}", "name": "lookup", "input": {}} for i in range(24)]
    results[-1]["cache_control"] = {"type": "ephemeral"}
    plain = [{"type": "text", "text": SYSTEM_TEXT}]  # the same block, its breakpoint moved to the last block
    messages = [
        {"role": "user", "content": plain},
        {"role": "assistant", "content": calls},
        {"role": "user", "content": results},
    ]
    second = client.messages.create(model=MODEL, max_tokens=10, messages=messages, tools=[])
    assert second.usage.cache_read_input_tokens == 0
    note = stub.bill.rows[1].cache_note
    assert note is not None
    assert "looks back 20" in note
    stub.check()


def test_changing_tool_choice_keeps_the_system_entry_and_misses_the_messages() -> None:
    # `tool_choice` any: the second answer calls a tool, as the real API's must
    stub = ScriptTransport(["One.", {"tool": {"name": "lookup", "input": {"id": "T-2"}}}], usage="derive")
    client = anthropic_client(stub, max_retries=0)
    long_user = [{"type": "text", "text": SYSTEM_TEXT[::-1], "cache_control": {"type": "ephemeral"}}]
    ask = {
        "model": MODEL,
        "max_tokens": 10,
        "system": system(),
        "tools": TOOLS,
        "messages": [{"role": "user", "content": long_user}],
    }
    first = client.messages.create(**ask)
    second = client.messages.create(**ask, tool_choice={"type": "any"})
    system_part = stub.bill.rows[0].cache_creation_input_tokens - second.usage.cache_creation_input_tokens
    assert second.usage.cache_read_input_tokens == system_part > 0
    assert 0 < second.usage.cache_creation_input_tokens < first.usage.cache_creation_input_tokens
    stub.check()


def test_scripted_counts_win_field_by_field() -> None:
    turns = [
        {"text": "Hi.", "usage": {"output_tokens": 77}},
        {"text": "Again.", "usage": {"cache_read_input_tokens": 5}},
    ]
    stub = ScriptTransport(turns, usage="derive")
    client = anthropic_client(stub, max_retries=0)
    ask = {"model": MODEL, "max_tokens": 10, "system": system(), "messages": [{"role": "user", "content": "Hi"}]}
    first = client.messages.create(**ask).usage
    second = client.messages.create(**ask).usage
    assert first.output_tokens == 77
    assert first.cache_creation_input_tokens > 0
    assert second.cache_read_input_tokens == 5
    assert second.output_tokens == 2
    assert [row.output_tokens for row in stub.bill] == [77, 2]
    stub.check()


def test_a_turn_derives_alone_or_opts_out() -> None:
    stub = ScriptTransport(["Plain.", {"text": "Derived.", "usage": "derive"}])
    client = anthropic_client(stub, max_retries=0)
    ask = {"model": MODEL, "max_tokens": 10, "system": system(), "messages": [{"role": "user", "content": "Hi"}]}
    assert client.messages.create(**ask).usage.input_tokens == 10  # the scripted default
    derived = client.messages.create(**ask).usage
    assert derived.cache_creation_input_tokens > 1000
    assert [row.derived for row in stub.bill] == [False, True]
    off = ScriptTransport([{"text": "Mine.", "usage": {"derive": False}}], usage="derive")
    assert anthropic_client(off, max_retries=0).messages.create(**ask).usage.input_tokens == 10
    stub.check()
    off.check()


def test_a_counter_of_your_own_counts_every_block() -> None:
    stub = ScriptTransport(["Hello."], usage=lambda text: len(text.split()))
    message = anthropic_client(stub, max_retries=0).messages.create(
        model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "one two three four"}]
    )
    assert (message.usage.input_tokens, message.usage.output_tokens) == (4, 1)
    stub.check()


def test_async_and_raw_streams_carry_the_derived_usage() -> None:
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = anthropic_client(stub, is_async=True, max_retries=0)
    ask = {"model": MODEL, "max_tokens": 10, "system": system(), "messages": [{"role": "user", "content": "Hi"}]}

    async def main() -> list[Any]:
        starts = []
        for _ in range(2):
            events = await client.messages.create(**ask, stream=True)
            async for event in events:
                if event.type == "message_start":
                    starts.append(event.message.usage)
        return starts

    first, second = asyncio.run(main())
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens > 0  # in message_start
    assert [counts(row)["cache_read_input_tokens"] for row in stub.bill] == [0, first.cache_creation_input_tokens]
    stub.check()


# ---------------------------------------------------------------------------- the bill


PRICES = {MODEL: {"input": 3.0, "output": 15.0, "cache_write_5m": 3.75, "cache_write_1h": 6.0, "cache_read": 0.3}}


def test_the_bill_has_a_row_per_answered_request_even_without_derivation() -> None:
    turns = [
        "Hello.",
        {"error": {"status": 500}},
        {"text": "Cached.", "usage": {"input_tokens": 10, "cache_read_input_tokens": 900, "output_tokens": 3}},
    ]
    stub = ScriptTransport(turns, prices=PRICES)
    client = anthropic_client(stub, max_retries=0)
    usages = []
    for _ in range(3):
        with contextlib.suppress(anthropic.InternalServerError):  # the scripted 500: no message, no row
            usages.append(
                client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "Hi"}]).usage
            )
    assert [row.index for row in stub.bill] == [0, 2]
    assert [counts(row) for row in stub.bill] == [usage_of(u) for u in usages]
    assert not any(row.derived for row in stub.bill)
    expected = (10 * 3.0 + 2 * 15.0) / 1e6 + (10 * 3.0 + 900 * 0.3 + 3 * 15.0) / 1e6
    assert stub.bill.total_usd == pytest.approx(expected)
    stub.check()


def test_the_bill_equals_genai_prices_on_the_same_usage() -> None:
    genai_prices = pytest.importorskip("genai_prices")
    stub = ScriptTransport(LOOP, usage="derive")
    usages = tool_loop(stub)
    expected = 0.0
    for usage in usages:
        total = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
        price = genai_prices.calc_price(
            genai_prices.Usage(
                input_tokens=total,
                cache_write_tokens=usage.cache_creation_input_tokens or None,
                cache_read_tokens=usage.cache_read_input_tokens or None,
                output_tokens=usage.output_tokens,
            ),
            MODEL,
            provider_id="anthropic",
        )
        expected += float(price.total_price)
    assert stub.bill.total_usd == pytest.approx(expected)
    cold, warm = stub.bill.rows[0].usd, stub.bill.rows[1].usd
    assert cold is not None
    assert warm is not None
    assert warm < cold
    stub.check()


def test_cached_requests_cost_less_than_uncached_ones() -> None:
    cached = ScriptTransport(LOOP, usage="derive", prices=PRICES)
    tool_loop(cached)
    uncached = ScriptTransport(LOOP, usage="derive", prices=PRICES)
    tool_loop(uncached, system_blocks=[{"type": "text", "text": SYSTEM_TEXT}])
    assert [row.cache_read_input_tokens for row in uncached.bill] == [0, 0, 0]
    assert cached.bill.total_usd < uncached.bill.total_usd
    assert [row.usd for row in cached.bill][1:] < [row.usd for row in uncached.bill][1:]
    assert cached.bill.cache_hit_ratio(from_request=1) > 0.9
    assert uncached.bill.cache_hit_ratio() == 0.0
    cached.check()
    uncached.check()


def test_without_a_price_source_total_usd_names_the_extra_and_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "genai_prices", None)  # not installed
    stub = ScriptTransport(["Hi."])
    anthropic_client(stub, max_retries=0).messages.create(
        model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "Hi"}]
    )
    assert stub.bill.rows[0].usd is None
    with pytest.raises(UsageError) as info:
        stub.bill.total_usd  # noqa: B018 - the property raises
    assert "requests[0] (model 'claude-sonnet-4-6') has no price" in str(info.value)
    assert "wirescript[prices]" in str(info.value)
    assert "prices={model:" in str(info.value)
    stub.check()


def test_a_price_table_missing_a_price_it_needs_says_which() -> None:
    stub = ScriptTransport(["Hi."], usage="derive", prices={MODEL: {"input": 3, "output": 15}})
    anthropic_client(stub, max_retries=0).messages.create(
        model=MODEL, max_tokens=10, system=system(), messages=[{"role": "user", "content": "Hi"}]
    )
    with pytest.raises(UsageError, match=r"prices\['claude-sonnet-4-6'\] has no 'cache_write_5m' price"):
        stub.bill.total_usd  # noqa: B018
    stub.check()


def test_a_batch_item_is_priced_at_the_batch_rate() -> None:
    table = {MODEL: {"input": 3.0, "output": 15.0, "batch_multiplier": 0.5}}
    stub = ScriptTransport(["Hi.", "Hi."], prices=table)
    client = anthropic_client(stub, max_retries=0)
    for _ in range(2):
        client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
    stub._ledger.billing.mark_batch(1)  # what the batch endpoints do for their items
    full, batch = stub.bill.rows
    assert (full.batch, batch.batch) == (False, True)
    assert batch.usd == pytest.approx((full.usd or 0) / 2)
    stub.check()


def test_bad_usage_and_prices_fail_at_construction_naming_the_field() -> None:
    with pytest.raises(ScriptError, match="usage: expected 'derive'"):
        ScriptTransport([], usage="yes")
    with pytest.raises(
        ScriptError, match=r"prices\['m'\]: unknown price 'cache_writes'; did you mean 'cache_write_5m'\?"
    ):
        ScriptTransport([], prices={"m": {"input": 1, "output": 2, "cache_writes": 1}})
    with pytest.raises(ScriptError, match=r"prices\['m'\]: needs 'output'"):
        ScriptTransport([], prices={"m": {"input": 1}})
    with pytest.raises(ScriptError, match=r"field 'usage': .*expected token counts"):
        ScriptTransport([{"text": "x", "usage": "derived"}])
    with pytest.raises(ScriptError, match="'cache_creation_1h_input_tokens' is part of 'cache_creation_input_tokens'"):
        ScriptTransport([{"usage": {"cache_creation_input_tokens": 1, "cache_creation_1h_input_tokens": 2}}])
    assert Turn(usage="derive").usage == Turn(usage={"derive": True}).usage


def test_a_failing_caching_rule_is_a_loud_problem_not_an_exception() -> None:
    from wirescript.wires import AnthropicWire, Caching

    class Broken(Caching):
        def tally(self, *args: Any) -> Any:
            raise RuntimeError("boom")

    class BrokenWire(AnthropicWire):
        caching = Broken()

    stub = ScriptTransport(["Hi."], usage="derive", wires=[BrokenWire()])
    with pytest.raises(anthropic.BadRequestError) as info:
        anthropic_client(stub, max_retries=0).messages.create(
            model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "Hi"}]
        )
    assert "deriving the anthropic usage (RuntimeError: boom)" in str(info.value)
    assert [problem.kind for problem in stub.problems] == ["render_error"]


def test_a_wire_that_declares_no_caching_gets_derived_counts_and_no_cache() -> None:
    from wirescript.wires import AnthropicWire, Caching

    class Plain(AnthropicWire):
        caching = Caching()  # what a wire of your own gets: counts from its record, no caching

    stub = ScriptTransport(["Hi.", "Hi."], usage="derive", wires=[Plain()])
    client = anthropic_client(stub, max_retries=0)
    ask = {"model": MODEL, "max_tokens": 10, "system": system(), "messages": [{"role": "user", "content": "Hi"}]}
    usages = [client.messages.create(**ask).usage for _ in range(2)]
    assert usages[0].input_tokens == usages[1].input_tokens > 1000  # the system prompt and the message, counted
    assert [(u.cache_creation_input_tokens, u.cache_read_input_tokens) for u in usages] == [(0, 0)] * 2
    assert stub.bill.rows[1].cache_note == "the anthropic wire declares no prompt caching"
    assert isinstance(stub.bill, Bill)
    assert len(stub.bill) == 2
    stub.check()


def test_the_minimum_table_is_keyed_by_model_prefix() -> None:
    assert cache_minimum("claude-opus-4-5-20251101") == 4096
    assert cache_minimum("claude-opus-4-20250514") == 1024
    assert cache_minimum("us.anthropic.claude-haiku-4-5-20251001-v1:0") == 4096
    assert cache_minimum("claude-sonnet-4-5@20250929") == 1024
    assert cache_minimum("claude-unknown-9") == 1024
    assert cache_minimum("claude-x", {"claude-x": 2048}) == 2048
    assert set(CACHE_MINIMUMS) >= {"claude-opus-4-8", "claude-sonnet-5", "claude-opus-5"}


def test_a_changed_tool_definition_misses_the_system_prompt_after_it() -> None:
    """The prefix is tools, then system: the system prompt's entry is read only while the tools before it hold."""
    stub = ScriptTransport(["One.", "Two.", "Three."], usage="derive")
    client = anthropic_client(stub, max_retries=0)
    ask = {"model": MODEL, "max_tokens": 10, "system": system(), "messages": [{"role": "user", "content": "Hi"}]}
    client.messages.create(**ask, tools=TOOLS)
    renamed = [{**TOOLS[0], "description": "Look a ticket up by its id."}]
    changed = client.messages.create(**ask, tools=renamed).usage
    assert changed.cache_read_input_tokens == 0
    assert changed.cache_creation_input_tokens > 0
    assert stub._ledger.billing.changed(1) == (
        "tools[0] differs from requests[0]'s (a tool definition changed: every entry after it misses)"
    )
    assert client.messages.create(**ask, tools=renamed).usage.cache_read_input_tokens == (
        changed.cache_creation_input_tokens
    )
    stub.check()


def test_a_breakpoint_moved_along_the_conversation_reads_what_the_last_one_wrote() -> None:
    """`cache_control` is no part of the prefix: the block it left is the same block, and its entry is read."""
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = anthropic_client(stub, max_retries=0)

    def text(value: str, *, marked: bool) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "text", "text": value}
        if marked:
            block["cache_control"] = {"type": "ephemeral"}
        return block

    opening = {"role": "user", "content": [text(SYSTEM_TEXT, marked=True)]}
    written = client.messages.create(model=MODEL, max_tokens=10, messages=[opening]).usage.cache_creation_input_tokens
    messages = [
        {"role": "user", "content": [text(SYSTEM_TEXT, marked=False)]},
        {"role": "assistant", "content": "One."},
        {"role": "user", "content": [text("And then?", marked=True)]},
    ]
    later = client.messages.create(model=MODEL, max_tokens=10, messages=messages).usage
    assert later.cache_read_input_tokens == written == tokens(SYSTEM_TEXT)
    assert later.cache_creation_input_tokens == tokens("One.") + tokens("And then?")
    stub.check()


@pytest.mark.parametrize(("back", "hits"), [(20, True), (21, False)])
def test_the_lookback_reaches_twenty_blocks_before_a_breakpoint_and_no_further(back: int, hits: bool) -> None:
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = anthropic_client(stub, max_retries=0)
    marked = {"type": "text", "text": SYSTEM_TEXT, "cache_control": {"type": "ephemeral"}}
    first = client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": [marked]}])
    notes: list[dict[str, Any]] = [{"type": "text", "text": f"Note {i}."} for i in range(back)]
    notes[-1]["cache_control"] = {"type": "ephemeral"}  # `back` blocks after the entry's last block
    content = [{"type": "text", "text": SYSTEM_TEXT}, *notes]
    later = client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": content}])
    assert later.usage.cache_read_input_tokens == (first.usage.cache_creation_input_tokens if hits else 0)
    stub.check()


def test_a_refused_request_has_no_row_and_a_stream_left_unread_has_one() -> None:
    stub = ScriptTransport(["Streamed, half read.", "Answered."], usage="derive")
    client = anthropic_client(stub, max_retries=0)
    five = [{"type": "text", "text": f"Part {i}.", "cache_control": {"type": "ephemeral"}} for i in range(5)]
    with pytest.raises(anthropic.BadRequestError):  # more than 4 breakpoints: the strict rule refuses it
        client.messages.create(model=MODEL, max_tokens=10, system=five, messages=[{"role": "user", "content": "Hi"}])
    ask = {"model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": "Hi"}]}
    with client.messages.stream(**ask) as events:
        next(iter(events))  # the app stops reading after the first event: the provider bills it all the same
    client.messages.create(**ask)
    assert [row.index for row in stub.bill] == [1, 2]
    stub.check(allow=["strict", "unfinished_stream"])  # which marks the stream left unread
    assert [problem.kind for problem in stub.problems] == ["strict", "unfinished_stream"]
    assert [row.index for row in stub.bill] == [1, 2]


def test_cache_entries_age_with_the_wall_clock_as_freezegun_moves_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """freezegun replaces `time.time` (time-machine moves the C clock): the stub's clock follows either way."""
    import time

    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = anthropic_client(stub, max_retries=0)
    ask = {"model": MODEL, "max_tokens": 10, "system": system(), "messages": [{"role": "user", "content": "Hi"}]}
    client.messages.create(**ask)
    start = time.time()
    monkeypatch.setattr(time, "time", lambda: start + 360)  # six minutes later, as freezegun's tick() would say
    assert client.messages.create(**ask).usage.cache_read_input_tokens == 0
    assert stub.requests[1].received_at == pytest.approx(start + 360)
    stub.check()


def test_a_stub_keeping_few_records_keeps_few_turns_for_its_bill() -> None:
    """`max_records` bounds what the bill keeps too: a long-running stub does not grow with every request."""
    stub = ScriptTransport([], fallback=lambda record: "Again.", usage="derive", max_records=3)
    client = anthropic_client(stub, max_retries=0)
    for _ in range(10):
        client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
    assert [row.index for row in stub.bill] == [7, 8, 9]
    assert len(stub._ledger._asked_turns) <= 3
    assert len(stub._ledger.billing._derived) <= 3
