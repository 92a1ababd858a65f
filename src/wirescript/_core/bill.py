"""The bill: what each request a stub answered costs, from the usage it sent. Sans-IO, provider-neutral.

`Billing` is a stub's usage machinery: whether it derives usage (`usage="derive"`, or a turn's own
`usage: "derive"`), its token counter, its prompt cache (`_cache_store.CacheStore`) and its prices.
For each request whose usage is derived, it asks the request's wire (`Wire.caching`: the provider's
rules) for the prompt, the cache reads and writes, and the usage the wire then sends, and keeps the
row. The rows of the other requests are made only when the bill is read (`Bill`), from the usage the
wire sent for their scripted turns, so a stub that derives nothing does no work per request for it.

Prices are a table given to the stub (`prices={model: {"input": …, "output": …, …}}`, dollars per
million tokens) or `genai-prices` (the `wirescript[prices]` extra), asked for each row when the bill
is read; without either, a row's `usd` is None and `Bill.total_usd` says how to get one.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .._cache_store import CacheStore, Counter, Moment, approximate_tokens
from .._text import did_you_mean
from ..errors import ScriptError, UsageError
from ..recorded import RecordedRequest
from ..script import Turn, Usage
from ..wires._caching import Prompt, Tally, output_text

if TYPE_CHECKING:
    from ..wires.base import Wire

__all__ = ["PRICE_KEYS", "Bill", "BillRow", "Billing", "PriceTable", "UsageMode", "parse_prices", "parse_usage"]

UsageMode = str | Callable[[str], int] | None
"""`usage=`: None (usage as scripted), `"derive"` (derived with the default counter), or a token counter."""

PriceTable = Mapping[str, Mapping[str, float]]
"""`prices=`: per model (or model id prefix), dollars per million tokens of each kind (`PRICE_KEYS`)."""

PRICE_KEYS = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read", "batch_multiplier")
"""The keys of a model's prices: `input` and `output` are needed; the cache prices when its requests
cache; `batch_multiplier` (0.5 for half price) when some are batch items."""

_EXTRA = (
    "install the prices extra (pip install 'wirescript[prices]', which brings genai-prices), or give the stub a "
    "table: ScriptTransport(..., prices={model: {'input': ..., 'output': ..., 'cache_write_5m': ..., "
    "'cache_write_1h': ..., 'cache_read': ...}}) in dollars per million tokens"
)


def parse_usage(usage: object) -> Counter | None:
    """The token counter of `usage=` (None: usage is not derived), checked.

    Raises:
        ScriptError: `usage` is neither None, `"derive"` nor a function.

    """
    if usage is None:
        return None
    if usage == "derive":
        return approximate_tokens
    if callable(usage) and not isinstance(usage, type):
        return usage
    raise ScriptError(
        f"usage: expected 'derive' (usage worked out from each request, prompt caching included), a token "
        f"counter (a function from text to a number of tokens) or None, got {type(usage).__name__} {usage!r}"
    )


def parse_prices(prices: object) -> dict[str, dict[str, float]] | None:
    """`prices=` checked: a mapping of model to a mapping of `PRICE_KEYS` to non-negative numbers.

    Raises:
        ScriptError: Naming the model and the key that is wrong.

    """
    if prices is None:
        return None
    if not isinstance(prices, Mapping):
        raise ScriptError(
            f"prices: expected a dict of model to its prices per million tokens, got {type(prices).__name__}"
        )
    table: dict[str, dict[str, float]] = {}
    for model, entry in prices.items():
        where = f"prices[{model!r}]"
        if not isinstance(model, str) or not model:
            raise ScriptError(f"{where}: a model id (a non-empty string) is the key")
        if not isinstance(entry, Mapping):
            raise ScriptError(f"{where}: expected a dict of {', '.join(PRICE_KEYS)}, got {type(entry).__name__}")
        for key, value in entry.items():
            if key not in PRICE_KEYS:
                raise ScriptError(
                    f"{where}: unknown price {key!r}{did_you_mean(str(key), PRICE_KEYS)} "
                    f"(expected some of: {', '.join(PRICE_KEYS)})"
                )
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ScriptError(
                    f"{where}[{key!r}]: expected dollars per million tokens (a number >= 0), got {value!r}"
                )
        missing = [key for key in ("input", "output") if key not in entry]
        if missing:
            raise ScriptError(f"{where}: needs {' and '.join(map(repr, missing))} (dollars per million tokens)")
        table[model] = {key: float(value) for key, value in entry.items()}
    return table


@dataclass(frozen=True, slots=True)
class BillRow:
    """What one request cost: its tokens by kind, and their price.

    `input_tokens` is always the uncached input (Anthropic's convention), whatever the provider's own
    field counts: an OpenAI row's `prompt_tokens` is the SDK's `usage.prompt_tokens`.
    """

    index: int
    """Which request: `stub.requests[index]`."""
    provider: str
    """The wire that answered it (`RecordedRequest.provider`)."""
    model: str | None
    """The model it named."""
    input_tokens: int
    """Input tokens neither read from the cache nor written to it."""
    output_tokens: int
    """Output tokens."""
    cache_creation_input_tokens: int
    """Input tokens written to the cache."""
    cache_read_input_tokens: int
    """Input tokens read from the cache."""
    cache_creation_1h_input_tokens: int = 0
    """Of the tokens written, those written with a 1-hour lifetime (the rest: 5 minutes)."""
    usd: float | None = None
    """Its price in dollars; None when no price is known (`unpriced` says why)."""
    unpriced: str | None = None
    """Why `usd` is None."""
    derived: bool = False
    """Whether its usage was derived from the request (`usage="derive"`), not scripted."""
    batch: bool = False
    """Whether it was a batch item (priced at the batch rate)."""
    cache_note: str | None = None
    """When a derived request read nothing from the cache, why (a changed block, an expired entry, …)."""

    @property
    def prompt_tokens(self) -> int:
        """Every input token: uncached, written to the cache and read from it (OpenAI's `prompt_tokens`)."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def __str__(self) -> str:
        price = f"${self.usd:.6f}" if self.usd is not None else "unpriced"
        return (
            f"requests[{self.index}] {self.model or '?'}: {self.input_tokens:,} input, "
            f"{self.cache_creation_input_tokens:,} "
            f"written, {self.cache_read_input_tokens:,} read, {self.output_tokens:,} output: {price}"
        )


class Bill:
    """A stub's bill (`stub.bill`): a row per request it answered with a message, in arrival order.

    Requests answered with an error, refused (a strict rule, past the script) or answered by a side
    endpoint cost nothing and have no row, as the providers bill none of them.
    """

    __slots__ = ("rows",)

    def __init__(self, rows: tuple[BillRow, ...]) -> None:
        self.rows = rows
        """The rows, in arrival order (a row's `index` is its request's)."""

    def __iter__(self) -> Iterator[BillRow]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def row(self, index: int) -> BillRow:
        """The row of `stub.requests[index]`.

        Raises:
            KeyError: That request has no row (it was not answered with a message).

        """
        for row in self.rows:
            if row.index == index:
                return row
        raise KeyError(f"requests[{index}] has no row in the bill (it was not answered with a message)")

    @property
    def total_usd(self) -> float:
        """The sum of the rows' prices, in dollars.

        Raises:
            UsageError: A row has no price, naming it, why, and how to give prices.

        """
        unpriced = [row for row in self.rows if row.usd is None]
        if unpriced:
            first = unpriced[0]
            more = f" (and {len(unpriced) - 1} more)" if len(unpriced) > 1 else ""
            raise UsageError(
                f"stub.bill.total_usd: requests[{first.index}] (model {first.model!r}) has no price{more}: "
                f"{first.unpriced}"
            )
        return sum(row.usd or 0.0 for row in self.rows)

    @property
    def input_tokens(self) -> int:
        """The uncached input tokens of every row."""
        return sum(row.input_tokens for row in self.rows)

    @property
    def output_tokens(self) -> int:
        """The output tokens of every row."""
        return sum(row.output_tokens for row in self.rows)

    @property
    def cache_read_input_tokens(self) -> int:
        """The tokens every row read from the cache."""
        return sum(row.cache_read_input_tokens for row in self.rows)

    @property
    def cache_creation_input_tokens(self) -> int:
        """The tokens every row wrote to the cache."""
        return sum(row.cache_creation_input_tokens for row in self.rows)

    def cache_hit_ratio(self, from_request: int = 0) -> float:
        """The share of input tokens read from the cache, over the rows of requests numbered `from_request` on.

        0.0 when those rows have no input tokens (or there are none).
        """
        rows = [row for row in self.rows if row.index >= from_request]
        total = sum(row.prompt_tokens for row in rows)
        return sum(row.cache_read_input_tokens for row in rows) / total if total else 0.0

    def __repr__(self) -> str:
        priced = all(row.usd is not None for row in self.rows)
        cost = f" ${sum(row.usd or 0.0 for row in self.rows):.6f}" if priced and self.rows else ""
        return f"<Bill rows={len(self.rows)}{cost} cache_hit_ratio={self.cache_hit_ratio():.2f}>"


_LOCK = threading.Lock()
"""Guards every stub's usage machinery (its cache store's making, its derived rows, its batch items): each holds
it for a dict operation, so one lock serves them all, and no stub makes one of its own."""


@dataclass(frozen=True, slots=True)
class _Derived:
    """A derived request's usage as sent, its tally, and its prompt's blocks (to say what changed)."""

    usage: Usage
    tally: Tally
    blocks: tuple[tuple[str, bytes], ...]
    model: str | None


class Billing:
    """A stub's usage machinery: derivation, the cache store, the derived rows, the prices and batch items."""

    __slots__ = ("_batch", "_derived", "_keep", "_store", "counter", "derive", "prices")

    def __init__(self, usage: object = None, prices: object = None, *, keep: int | None = None) -> None:
        counter = None if usage is None else parse_usage(usage)
        self.derive = counter is not None
        """Whether every turn's usage is derived (a turn's `usage.derive` overrides it)."""
        self.counter: Counter = counter or approximate_tokens
        self.prices = None if prices is None else parse_prices(prices)
        self._store: CacheStore | None = None
        self._derived: dict[int, _Derived] = {}
        self._batch: dict[int, None] = {}
        """The indices of the requests that are batch items (a dict as a set: an empty one is no collector's work)."""
        self._keep = keep
        """How many derived requests to keep (the stub's `max_records`), or None: all."""

    @property
    def store(self) -> CacheStore:
        """The stub's prompt cache: made when a request's usage is first derived (most stubs derive none)."""
        store = self._store
        if store is None:
            with _LOCK:
                store = self._store
                if store is None:
                    store = self._store = CacheStore()
        return store

    def mark_batch(self, index: int) -> None:
        """Price `requests[index]` as a batch item (`BillRow.batch`): what the batch endpoints call."""
        with _LOCK:
            self._batch[index] = None

    def derived_turn(self, wire: Wire, record: RecordedRequest, turn: Turn, arrived: int) -> Turn:
        """The turn with its usage derived from the request by its wire's rules; the row kept.

        Args:
            wire: The wire that answers it (its `caching` holds the provider's rules).
            record: The request (numbered, its arrival on the stub's clock).
            turn: Its turn (not an error turn).
            arrived: How many requests had arrived when its answer began.

        """
        caching = wire.caching
        counter = self.counter
        prompt: Prompt = caching.prompt(wire, record, counter)
        tally = caching.tally(wire, record, prompt, self.store, Moment(record.received_at, record.index, arrived))
        scripted = turn.usage
        output = scripted.output_tokens if scripted is not None and scripted.output_tokens is not None else None
        if output is None:
            output = max(1, int(counter(output_text(turn))))
        sent = caching.usage(tally, output, scripted)
        blocks = tuple((block.where, block.digest) for block in prompt.blocks)
        with _LOCK:
            kept = self._derived
            kept[record.index] = _Derived(sent, tally, blocks, prompt.model or record.model)
            if self._keep is not None and len(kept) > self._keep:  # the oldest goes, as its record did
                del kept[next(iter(kept))]
        return turn.model_copy(update={"usage": sent})

    def row(self, wire: Wire, record: RecordedRequest, turn: Turn | None) -> BillRow | None:
        """The bill's row of an answered request: its derived usage, else what its wire sent for `turn`."""
        with _LOCK:
            derived = self._derived.get(record.index)
            batch = record.index in self._batch
        if derived is not None:
            usage, note = derived.usage, derived.tally.note if derived.tally.read == 0 else None
        elif turn is not None and turn.error is None:
            usage, note = wire.caching.sent(wire, turn, record), None
        else:
            return None
        read = usage.cache_read_input_tokens or 0
        written = usage.cache_creation_input_tokens or 0
        given = usage.input_tokens or 0
        uncached = max(0, given - read - written) if wire.caching.input_includes_cache else given
        row = BillRow(
            index=record.index,
            provider=wire.name,
            model=record.model,
            input_tokens=uncached,
            output_tokens=usage.output_tokens or 0,
            cache_creation_input_tokens=written,
            cache_read_input_tokens=read,
            cache_creation_1h_input_tokens=min(written, usage.cache_creation_1h_input_tokens or 0),
            derived=derived is not None,
            batch=batch,
            cache_note=note,
        )
        usd, why = self._price(wire, record, row)
        return dataclasses.replace(row, usd=usd, unpriced=why)

    def changed(self, index: int) -> str | None:
        """What made a derived request miss: the first block that differs from the previous request's, or its note."""
        with _LOCK:
            derived = self._derived.get(index)
            earlier = [i for i in self._derived if i < index]
            previous = self._derived.get(max(earlier)) if earlier else None
        if derived is None:
            return None
        if previous is not None:
            prior = max(earlier)
            if previous.model != derived.model:
                return (
                    f"its model {derived.model!r} is not requests[{prior}]'s {previous.model!r}: entries are per model"
                )
            for (where, digest), (_, before) in zip(derived.blocks, previous.blocks, strict=False):
                if digest != before:
                    return f"{where} differs from requests[{prior}]'s{_hint(where)}"
        return derived.tally.note

    def _price(self, wire: Wire, record: RecordedRequest, row: BillRow) -> tuple[float | None, str | None]:
        if self.prices is not None:
            return _table_price(self.prices, row)
        try:
            import genai_prices
        except ImportError:
            return None, f"no price source: {_EXTRA}"
        try:
            usage = genai_prices.Usage(
                input_tokens=row.prompt_tokens,
                cache_read_tokens=row.cache_read_input_tokens or None,
                cache_write_tokens=row.cache_creation_input_tokens or None,
                output_tokens=row.output_tokens,
            )
            if row.cache_creation_1h_input_tokens:
                usage.cache_write_1h_tokens = row.cache_creation_1h_input_tokens
                usage.cache_write_5m_tokens = row.cache_creation_input_tokens - row.cache_creation_1h_input_tokens
            provider = wire.caching.provider_for_prices(record)
            options: dict[str, Any] = {
                "genai_request_timestamp": datetime.fromtimestamp(record.received_at, UTC),
                "price_context": {"processing": "batch"} if row.batch else None,
            }
            if provider is not None:
                options["provider_id"] = provider
            calculation = genai_prices.calc_price(usage, row.model or "", **options)
        except Exception as exc:  # genai-prices knows no such model or provider: unpriced, with its words
            return None, f"genai-prices could not price it ({type(exc).__name__}: {exc}); give prices={{...}} for it"
        return float(calculation.total_price), None


def _hint(where: str) -> str:
    """What a changed block usually is, by where it is."""
    if where.startswith(("system", "instructions")):
        return " (a timestamp, a date or an id in the system prompt?)"
    if where.startswith(("tools", "toolConfig")):
        return " (a tool definition changed: every entry after it misses)"
    return " (an earlier message of the conversation changed)"


def _table_price(table: Mapping[str, Mapping[str, float]], row: BillRow) -> tuple[float | None, str | None]:
    """A row's price from a `prices=` table: its model's entry (or its longest prefix's), per million tokens."""
    model = row.model or ""
    key = model if model in table else max((k for k in table if model.startswith(k)), key=len, default=None)
    if key is None:
        return None, f"prices= has no entry for the model {model!r} (its keys: {', '.join(map(repr, table))})"
    entry = table[key]
    written_1h = row.cache_creation_1h_input_tokens
    kinds = (
        ("input", row.input_tokens),
        ("output", row.output_tokens),
        ("cache_write_5m", row.cache_creation_input_tokens - written_1h),
        ("cache_write_1h", written_1h),
        ("cache_read", row.cache_read_input_tokens),
    )
    total = 0.0
    for name, tokens in kinds:
        if not tokens:
            continue
        if name not in entry:
            return None, f"prices[{key!r}] has no {name!r} price, and requests[{row.index}] has {tokens:,} such tokens"
        total += tokens * entry[name] / 1_000_000
    if row.batch:
        if "batch_multiplier" not in entry:
            return None, f"prices[{key!r}] has no 'batch_multiplier', and requests[{row.index}] is a batch item"
        total *= entry["batch_multiplier"]
    return total, None
