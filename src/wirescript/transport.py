"""`ScriptTransport`: a scripted LLM provider that lives in an httpx/httpx2 client.

A thin shell over the sans-IO core: it offers the public API and drives each request down one
straight line: an adapter reads it into the core's neutral request (`_http` for httpx and httpx2,
`_botocore` for botocore, `_asgi` for the loopback server), the ledger admits it (the record
builder reads it, the strict rules check it, the cursor decides its turn, in arrival order), it
waits at the hold gate when held, the renderer answers it, and the adapter turns the answer into
its library's response. It knows no provider: the wires do. One instance serves `httpx.Client`,
`httpx.AsyncClient`, `httpx2.Client` and `httpx2.AsyncClient` alike, and boto3/aiobotocore clients
through `attach`.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from ._adapters import http as _http
from ._clock import Clock
from ._core.cursor import Ask, PendingTurn, Turnless
from ._core.ledger import Ledger
from ._core.signal import seconds
from ._exchange import PER_EVENT, Answer, Request
from .errors import NotAClientError
from .recorded import Problem, ProblemKind, RecordedRequest
from .script import ScriptLike, TurnLike
from .side import SideScript
from .wires import Wire

__all__ = ["PER_EVENT", "Offload", "PendingTurn", "ScriptTransport", "serve_offloaded"]

_Client = TypeVar("_Client")
_Result = TypeVar("_Result")

Offload = Callable[[Callable[[], _Result], float], Awaitable[_Result]]
"""`run(function, seconds)`: the function's result, computed on another thread; `TimeoutError` past `seconds`."""

if TYPE_CHECKING:  # pragma: no cover - typing only: lets `httpx2.Client(transport=stub)` type-check
    import httpx
    import httpx2

    from ._core.bill import Bill, PriceTable, UsageMode
    from .intercept import Interception
    from .wires.mcp import MCPScript
    from .wires.routes import RouteHandler

    class _TransportBase(  # type: ignore[misc]
        httpx2.BaseTransport, httpx2.AsyncBaseTransport, httpx.BaseTransport, httpx.AsyncBaseTransport
    ):
        pass

else:
    # No runtime base class: anthropic 2.x rejects any subclass of `httpx.BaseTransport`, and
    # neither library is a dependency. The clients duck-type their transport.
    _TransportBase = object


_NOT_A_CLIENT = (
    "http_client=stub: a {name} is the transport of an HTTP client, not the client. Pass "
    "http_client=httpx2.Client(transport=stub) (httpx2.AsyncClient(transport=stub) for an async client; "
    "httpx.Client / httpx.AsyncClient for anthropic 0.x and openai 2.x)."
)
"""What reading a transport's `timeout` raises: the SDKs read it first from the `http_client` they are given."""


class ScriptTransport(_TransportBase):
    """A scripted LLM provider: serves turns in order, records every request, fails loudly.

    Args:
        script: The turns to serve. A list of turns (dicts, `Turn`s or strings) served in arrival
            order; a dict of such lists keyed by model name, `"*"` serving every other model; or
            a function `(RecordedRequest) -> turn | None` (None: the request is unscripted).
        hold_timeout: Seconds a held request waits for `release()` before it is answered with an error that
            says so (and reported in `problems`), instead of hanging the suite.
        fallback: Answers a request its queue can no longer serve (the script ran out, or no queue matches its
            model): a function `(RecordedRequest) -> turn | None`; None from it is a problem too.
        wires: Extra provider APIs (`Wire` instances), served first; one named as a default wire replaces it.
        side: What the side endpoints (token counts, embeddings, model listings) answer, consuming no turn: a
            `SideScript` or its mapping (or a mapping script's `"$side"` entry); without it, deterministic answers.
        routes: The escape hatch for endpoints no wire serves: `{"GET /v1/files/{file_id}":
            handler}`, `handler(record)` returning a JSON-able dict (200) or `(status, dict)`; the
            placeholders are in `record.path_params`. Tried before every wire; consume no turn.
        max_records: Keep only the last this many requests in `requests` (None: all); the counts, `problems`
            and their requests are kept. A record costs about 2.4 KB (5 times the body for a long chat).
        strict: Refuse what the real API would refuse (on by default): a request that breaks one of
            its wires' strict rules (`Wire.rules`; the built-in ones in `docs/strict-requests.md`) gets
            the provider's own error, consumes no turn and is a `strict` problem; a turn the real API could not
            give to its request (`Wire.answer_rules`, `docs/answers.md`) is an `impossible_answer`. False: neither.
        strict_skip: Rule ids not to check (`["anthropic.cache-control-limit"]`), request or answer rules.
        check_tool_input: Hold every tool call's input to its tool's schema, strict tool or not (opt-in).
        mcp: A scripted MCP server (`wirescript.MCPScript`), answered in-process at its path (`/mcp`)
            next to the model, consuming no turn; its requests are recorded too (`docs/mcp.md`).
        dialect: Answer as one OpenAI-compatible host, whatever the host (`docs/dialects.md`): an id of
            `wirescript.dialects()` (`"ollama@0.20.4"` for a release) or a dialect `Wire` of your own.
        clock: The time caches, background jobs and batches run on (`wirescript.Clock`; one may serve
            several stubs); by default a clock of its own: the wall time plus every `clock.advance()`.
        usage: `"derive"`, or a token counter (text -> tokens): usage worked out from each request by its
            provider's rules, caching included, scripted counts winning (`docs/usage.md`); None: as scripted.
        prices: Dollars per million tokens by model (`{model: {"input", "output", …}}`) for `stub.bill`.

    Raises:
        ScriptError: The script is malformed (the message names the turn and the field), `strict` or
            `check_tool_input` is no bool, `strict_skip` names an unknown rule (naming the closest), or
            `usage`/`prices` are wrong.
        UsageError: `dialect` is no dialect id of `dialects()` (the message names the closest) nor a `Wire`.

    Use it as the transport of any httpx or httpx2 client::

        client = anthropic.Anthropic(api_key="test", http_client=httpx2.Client(transport=stub))

    """

    def __init__(
        self,
        script: ScriptLike,
        *,
        hold_timeout: float = 30.0,
        fallback: Callable[[RecordedRequest], TurnLike | None] | None = None,
        wires: Sequence[Wire] | None = None,
        side: SideScript | Mapping[str, Any] | None = None,
        routes: Mapping[str, RouteHandler] | None = None,
        max_records: int | None = None,
        strict: bool = True,
        strict_skip: Iterable[str] = (),
        mcp: MCPScript | None = None,
        dialect: str | Wire | None = None,
        clock: Clock | None = None,
        usage: UsageMode = None,
        prices: PriceTable | None = None,
        check_tool_input: bool = False,
    ) -> None:
        self._ledger = Ledger(
            script,
            fallback,
            wires,
            side,
            routes,
            max_records,
            strict,
            strict_skip,
            mcp,
            dialect,
            clock,
            usage,
            prices,
            check_tool_input,
        )
        self.max_records = max_records
        self.hold_timeout = seconds(hold_timeout, "hold_timeout")
        self.closed = False
        self._ledger.own(self)  # the pytest plugin checks the stubs a test builds or uses

    @property
    def wires(self) -> tuple[Wire, ...]:
        """The wires that serve this stub, in matching order: its `wires=`, then the default wires they leave."""
        return self._ledger.wires

    @property
    def clock(self) -> Clock:
        """The stub's clock: `stub.clock.advance("6m")` ages every cache entry and job by six minutes."""
        return self._ledger.clock

    @property
    def bill(self) -> Bill:
        """What the requests cost (`wirescript.Bill`): a row per request answered with a message, from its usage."""
        return self._ledger.bill()

    @property
    def strict(self) -> bool:
        """Whether requests are checked against the strict rules (`strict=`)."""
        return self._ledger.strict

    @property
    def strict_skip(self) -> frozenset[str]:
        """The strict rule ids not checked (`strict_skip=`): request and answer rules."""
        return self._ledger.strict_skip

    @property
    def check_tool_input(self) -> bool:
        """Whether every tool call's input is held to its tool's schema, strict or not (`check_tool_input=`)."""
        return self._ledger.check_tool_input

    # ------------------------------------------------------------------ evidence

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a snapshot list)."""
        return self._ledger.records()

    @property
    def request_count(self) -> int:
        """How many requests arrived, including those `max_records` no longer keeps."""
        return self._ledger.count

    @property
    def problems(self) -> list[Problem]:
        """Every request the stub could not answer as scripted, as a `Problem`; its `kind` (a `ProblemKind`) says why.

        A passing test has none: past the script, an unknown endpoint, a strict rule, held too long, and so on.
        """
        return self._ledger.problems()

    @property
    def overflow(self) -> int:
        """How many requests got no scripted turn (problems of the kinds in `OVERFLOW_KINDS`). A passing test has 0."""
        return self._ledger.overflow()

    @property
    def pending(self) -> list[PendingTurn]:
        """The scripted turns no request has consumed yet, queue by queue."""
        return self._ledger.pending()

    def check(
        self,
        *,
        problems: bool = True,
        unused_turns: bool = True,
        unanswered: bool | None = None,
        allow: Iterable[ProblemKind] = (),
    ) -> None:
        """Raise `AssertionError` listing every problem, every held request and every unconsumed turn.

        What the pytest fixture runs at teardown. `problems=False` leaves out the problems and held
        requests (`unanswered` is its former name), `unused_turns=False` the turns never requested,
        `allow` the problems of the kinds it names (`"hold_timeout"` also the requests still held).

        Raises:
            UsageError: `allow` names a kind that is not a `ProblemKind`.

        """
        problems = problems if unanswered is None else unanswered
        message = self._ledger.check(problems=problems, unused_turns=unused_turns, allow=allow)
        if message is not None:
            raise AssertionError(message)

    # ------------------------------------------------------------------ hold / release

    def hold(self) -> None:
        """Hold every response from now on: requests are recorded, then wait for `release()`."""
        self._ledger.hold()

    def release(self) -> None:
        """Answer every held request. `release(); hold()` frees exactly the requests held so far."""
        self._ledger.release()

    def holding(self) -> _Holding:
        """Hold responses for a `with` or `async with` block; release them when it ends, even on error."""
        return _Holding(self)

    @property
    def held(self) -> bool:
        """Whether responses are being held."""
        return self._ledger.gate is not None

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least `n` requests have been recorded; return them.

        Raises:
            WaitTimeoutError: Fewer than `n` arrived within `timeout` seconds.

        """
        return self._ledger.wait_for(n, timeout)

    async def wait_for_requests_async(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """The async twin of `wait_for_requests`: awaits without blocking the event loop (asyncio or trio)."""
        return await self._ledger.wait_for_async(n, timeout)

    # ------------------------------------------------------------------ other ways in

    @contextlib.contextmanager
    def serve(self, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
        """Serve this stub over real HTTP on a loopback port while the block runs; yield the base URL.

        For an app in another process (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL` + `/v1`); needs `wirescript[server]`.
        """
        from .server import ScriptServer  # the convenience above: the server imports nothing of this module

        with ScriptServer(self, host=host, port=port) as server:
            yield server.base_url

    def intercept(self, hosts: Iterable[str] | str | None = None) -> Interception:
        """A context manager: while open, every httpx/httpx2 client's requests to `hosts` come to this stub.

        `hosts` replaces the hosts its wires declare (`"*"`: every host). See `wirescript.intercept.Interception`.
        """
        from .intercept import Interception

        return Interception(self, hosts)

    def attach(self, client: _Client) -> _Client:
        """Serve a boto3/botocore or aiobotocore client (`bedrock-runtime`) with this stub, in-process; return it.

        Through botocore's own `before-send` hook (no httpx needed); its retry modes decide for real, without
        sleeping. Give the client explicit credentials and region, so that botocore looks for none.

        Raises:
            UsageError: `client` is not a botocore client, or is already attached.

        """
        from ._adapters import botocore as _botocore

        _botocore.attach(client, _botocore.Door(self._serve, self._serve_async))
        return client

    def detach(self, client: Any) -> None:
        """Give a client `attach` served back to botocore's own sending; one never attached is left as it is."""
        from ._adapters import botocore as _botocore

        _botocore.detach(client)

    @property
    def timeout(self) -> NoReturn:
        """Raises `NotAClientError`, a `UsageError` naming the fix: the SDK reading it was given the stub as client."""
        raise NotAClientError(_NOT_A_CLIENT.format(name=type(self).__name__))

    # ------------------------------------------------------------------ transport protocol

    def handle_request(self, request: Any) -> Any:
        """Serve one request of a sync httpx/httpx2 client."""
        request.read()
        return _http.response(request, self._serve(_http.read(request)))

    async def handle_async_request(self, request: Any) -> Any:
        """Serve one request of an async httpx/httpx2 client."""
        await request.aread()
        return await _http.response_async(request, await self._serve_async(_http.read(request)))

    def _serve(self, request: Request) -> Answer:
        """The one pass down for a request: admitted (read, checked, decided), held if need be, answered."""
        if (arrival := self._ledger.admit(request)).gate is not None:
            self._ledger.wait(arrival, self.hold_timeout)
        return self._ledger.render(arrival, request)

    async def _serve_async(self, request: Request) -> Answer:
        """`_serve` for a task: a held request waits without blocking its event loop."""
        if (arrival := self._ledger.admit(request)).gate is not None:
            await self._ledger.wait_async(arrival, self.hold_timeout)
        return self._ledger.render(arrival, request)

    def close(self) -> None:
        """Called when the client closes; the stub keeps its records."""
        self.closed = True

    async def aclose(self) -> None:
        """Called when the async client closes; the stub keeps its records."""
        self.closed = True

    def __enter__(self) -> ScriptTransport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> ScriptTransport:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return (
            f"<ScriptTransport requests={self._ledger.count} pending={self._ledger.pending_count()} "
            f"overflow={self.overflow}{' held' if self.held else ''}>"
        )


class _Holding:
    """`stub.holding()`: hold on entering the block, release on leaving it; for `with` and `async with`."""

    __slots__ = ("_stub",)

    def __init__(self, stub: ScriptTransport) -> None:
        self._stub = stub

    def __enter__(self) -> ScriptTransport:
        self._stub.hold()
        return self._stub

    def __exit__(self, *exc_info: object) -> None:
        self._stub.release()

    async def __aenter__(self) -> ScriptTransport:
        return self.__enter__()

    async def __aexit__(self, *exc_info: object) -> None:
        self.__exit__()


async def serve_offloaded(stub: ScriptTransport, request: Request, run: Offload[Any]) -> Answer:
    """`_serve_async` for an event loop that serves other requests meanwhile (the loopback server).

    The user's code (the script function, the fallback, a route's handler) runs through `run`, on
    another thread, so one that blocks delays only its own request. Past `hold_timeout` the
    request is a `script_error` problem, answered loudly, whatever the function returns later.
    """
    ledger, bound = stub._ledger, stub.hold_timeout
    arrival = ledger.admit(request, ask=False)
    if arrival.draw is not None:  # the turns a batch or a background job drew: a script function may answer them
        try:
            await run(functools.partial(ledger.finish, arrival), bound)
        except TimeoutError:
            ledger.late(arrival, bound)
    if isinstance(arrival.decision, Ask):
        try:
            await run(functools.partial(ledger.ask, arrival), bound)
        except TimeoutError:
            ledger.late(arrival, bound)
    if arrival.gate is not None:
        await ledger.wait_async(arrival, bound)
    if isinstance(arrival.decision, Turnless) and _routed(arrival.wire):  # the handler runs here
        try:
            answer: Answer = await run(functools.partial(ledger.render, arrival, request), bound)
        except TimeoutError:
            return ledger.render(ledger.late(arrival, bound), request)
        return answer
    return ledger.render(arrival, request)


def _routed(wire: Wire | None) -> bool:
    """Whether `wire` is a stub's `routes=` (whose module is loaded only by a stub given routes)."""
    from .wires.routes import RouteWire

    return isinstance(wire, RouteWire)
