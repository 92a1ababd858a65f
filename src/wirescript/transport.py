"""`ScriptTransport`: a scripted LLM provider that lives in an httpx/httpx2 client.

A thin shell over the sans-IO core: it holds the lock, the records, the problems and the hold gate,
and offers the public API and the two transport entry points. Which turn answers a request is the
cursor's (`_cursor`), what a request says the record builder's (`_record`), how an answer is sent
the renderer's (`_answer`), and waiting the signal's (`_signal`). It knows no provider: the wires
do. One instance serves `httpx.Client`, `httpx.AsyncClient`, `httpx2.Client` and
`httpx2.AsyncClient` alike; the response is built with the library of the incoming request.
"""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from . import _http
from ._answer import Answer, answer, refuse, refuse_strictly, respond
from ._cursor import Ask, Cursor, PendingTurn, Refusal
from ._http import PER_EVENT
from ._record import Attempts, Vocabulary, read_request
from ._report import (
    LISTED,
    abandoned,
    allowed_kinds,
    check_message,
    failed,
    held_too_long,
    refused_strictly,
    retried,
    short_of,
)
from ._signal import Signal, seconds
from ._steps import Disconnect, Step
from .errors import ScriptError, WaitTimeoutError
from .recorded import OVERFLOW_KINDS, Problem, ProblemKind, RecordedRequest
from .script import ScriptLike, Turn, TurnLike
from .side import SideScript, parse_side
from .strict import skip_ids
from .wires import RouteWire, TurnlessWire, Wire, merge_wires
from .wires.routes import RouteHandler

__all__ = ["PER_EVENT", "PendingTurn", "ScriptTransport"]

_Client = TypeVar("_Client")

if TYPE_CHECKING:  # pragma: no cover - typing only: lets `httpx2.Client(transport=stub)` type-check
    import httpx
    import httpx2

    from .intercept import Interception

    class _TransportBase(  # type: ignore[misc]
        httpx2.BaseTransport, httpx2.AsyncBaseTransport, httpx.BaseTransport, httpx.AsyncBaseTransport
    ):
        pass

else:
    # No runtime base class: anthropic 2.x rejects any subclass of `httpx.BaseTransport`, and
    # neither library is a dependency. The clients duck-type their transport.
    _TransportBase = object


class Turnless:
    """The decision for a request a turnless wire answers: no turn is consumed."""

    __slots__ = ()


TURNLESS = Turnless()

_WATCHERS: list[Callable[[ScriptTransport], None]] = []
"""Called with every new stub: the pytest plugin adopts the stubs a test builds by hand, to check them."""


class _Gate:
    """One hold period: `release()` opens it, freeing exactly the requests that arrived during it."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open = False


class ScriptTransport(_TransportBase):
    """A scripted LLM provider: serves turns in order, records every request, fails loudly.

    Args:
        script: The turns to serve. A list of turns (dicts, `Turn`s or strings) served in arrival
            order; a dict of such lists keyed by model name, `"*"` serving every other model; or
            a function `(RecordedRequest) -> turn | None` (None: the request is unscripted).
        hold_timeout: Seconds a held request waits for `release()` before it is answered with an
            error that says so (and reported in `problems`), instead of hanging the suite.
        fallback: Answers a request its queue can no longer serve (the script ran out, or no queue
            matches its model), from the request: a function `(RecordedRequest) -> turn | None`.
            None from it is a problem too. Without a fallback, exhaustion is always a problem.
        wires: Extra provider APIs (`wirescript.wires.Wire` instances), served before the default
            wires; one with the `name` of a default wire replaces it.
        side: What the side endpoints answer (token counts, embeddings, model listings): a
            `wirescript.SideScript` or its mapping. They consume no turn and, without it, answer
            deterministically. A mapping script may carry it as its `"$side"` entry instead.
        routes: The escape hatch for endpoints no wire serves: `{"GET /v1/files/{file_id}":
            handler}`, `handler(record)` returning a JSON-able dict (200) or `(status, dict)`; the
            placeholders are in `record.path_params`. Tried before every wire; consume no turn.
        max_records: Keep only the last this many requests in `requests` (None: all). Counts
            (`request_count`, `overflow`), `problems` and the requests they name are kept whatever
            the bound, so a long-running server stays loud without growing. A record costs about
            6 KB for a small SDK body and about 6 times the body for a long conversation.
        strict: Refuse what the real API would refuse (on by default): a request that breaks one of
            the strict rules (`wirescript.strict.RULES`, listed in `docs/strict-requests.md`) gets the
            provider's own error, consumes no turn and is a `strict` problem. False turns every rule off.
        strict_skip: Rule ids not to check (`["anthropic.cache-control-limit"]`).

    Raises:
        ScriptError: The script is malformed (the message names the turn and the field), `strict`
            is not a bool, or `strict_skip` names an unknown rule (the message names the closest one).

    Use it as the transport of any httpx or httpx2 client::

        stub = ScriptTransport([{"text": "Hello!"}])
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
    ) -> None:
        if not isinstance(strict, bool):
            raise ScriptError(f"strict: expected True or False, got {type(strict).__name__} {strict!r}")
        self._strict_skip = skip_ids(strict_skip)
        self._strict = strict
        route_wire = RouteWire(routes)
        self._wires = [route_wire, *merge_wires(wires)] if route_wire.routes else merge_wires(wires)
        self._cursor = Cursor(script, fallback, self._wires)
        self._side = self._cursor.side_script(parse_side(side) if side is not None else None)
        self._vocabulary = Vocabulary(self._wires)
        self._attempts = Attempts()
        self.hold_timeout = seconds(hold_timeout, "hold_timeout")
        if max_records is not None and (
            isinstance(max_records, bool) or not isinstance(max_records, int) or max_records < 1
        ):
            raise ScriptError(f"max_records: expected a positive int or None, got {max_records!r}")
        self.max_records = max_records
        self._records: collections.deque[RecordedRequest] = collections.deque(maxlen=max_records)
        self._count = 0
        self._troubled: dict[int, RecordedRequest] = {}
        """The requests with a problem, by index: kept when `max_records` drops them from `_records`."""
        self._problems: list[Problem] = []
        self._held: dict[int, RecordedRequest] = {}
        self._lock = threading.Lock()
        self._signal = Signal(self._lock)
        self._gate: _Gate | None = None
        self.closed = False
        for watcher in tuple(_WATCHERS):  # the pytest plugin checks the stubs a test builds by hand
            watcher(self)

    @property
    def strict(self) -> bool:
        """Whether requests are checked against the strict rules (`strict=`)."""
        return self._strict

    @property
    def strict_skip(self) -> frozenset[str]:
        """The strict rule ids not checked (`strict_skip=`)."""
        return self._strict_skip

    # ------------------------------------------------------------------ evidence

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a snapshot list)."""
        with self._lock:
            return list(self._records)

    @property
    def request_count(self) -> int:
        """How many requests arrived, including those `max_records` no longer keeps."""
        with self._lock:
            return self._count

    @property
    def problems(self) -> list[Problem]:
        """Every request the stub could not answer as scripted, as a `Problem`. A passing test has none.

        Requests past the end of the script, to an endpoint no wire knows, with a body that cannot be
        read, that the real API would refuse (a strict rule), that a script function failed to answer,
        held and never released, abandoned by their client while held, or whose fault could not take
        effect: each is a `Problem` of its own kind.
        """
        with self._lock:
            return list(self._problems)

    @property
    def overflow(self) -> int:
        """How many requests got no scripted turn (problems of the kinds in `OVERFLOW_KINDS`). A passing test has 0."""
        with self._lock:
            return sum(1 for p in self._problems if p.kind in OVERFLOW_KINDS)

    @property
    def pending(self) -> list[PendingTurn]:
        """The scripted turns no request has consumed yet, queue by queue."""
        with self._lock:
            return self._cursor.pending()

    def check(
        self,
        *,
        problems: bool = True,
        unused_turns: bool = True,
        unanswered: bool | None = None,
        allow: Iterable[ProblemKind] = (),
    ) -> None:
        """Raise `AssertionError` listing every problem, every held request and every unconsumed turn.

        Each request the stub could not answer as scripted is listed by its `summary()` (number,
        method, path, model, last message) and the reason. `problems=False` leaves those (and held
        requests) out, `unused_turns=False` the turns never requested; `unanswered` is the former
        name of `problems`. `allow` leaves out the problems of the kinds it names (`"fault"`,
        `"unscripted"`, …; `"hold_timeout"` also leaves out requests still held). This is what the
        pytest fixture runs at teardown; call it yourself when not using the plugin.

        Raises:
            UsageError: `allow` names a kind that is not a `ProblemKind`.

        """
        allowed = allowed_kinds(allow)
        with self._lock:
            records = sorted(self._troubled.values(), key=lambda r: r.index)
            held = list(self._held.values())
            pending, total = self._cursor.pending(LISTED), self._cursor.pending_count()
        problems = problems if unanswered is None else unanswered
        records = [r for r in records if getattr(r.problem, "kind", None) not in allowed]
        if "hold_timeout" in allowed:
            held = []
        message = check_message(records, held, pending, total, problems=problems, unused_turns=unused_turns)
        side = [line for w in self._wires if isinstance(w, TurnlessWire) for line in w.unused(self._side)]
        if unused_turns and side:
            listed = [f"wirescript: {len(side)} side script answer(s) were never requested:"]
            message = "\n".join([*([message] if message else []), *listed, *(f"  - {line}" for line in side)])
        if message is not None:
            raise AssertionError(message)

    # ------------------------------------------------------------------ hold / release

    def hold(self) -> None:
        """Hold every response from now on: requests are recorded, then wait for `release()`."""
        with self._lock:
            if self._gate is None:
                self._gate = _Gate()

    def release(self) -> None:
        """Answer every held request. `release(); hold()` frees exactly the requests held so far."""
        with self._lock:
            gate, self._gate = self._gate, None
            if gate is not None:
                gate.open = True
                self._signal.notify_all()

    @contextlib.contextmanager
    def holding(self) -> Iterator[ScriptTransport]:
        """Hold responses while the block runs and release them when it ends, even on error.

        ::

            with stub.holding():
                start_three_workers()
                stub.wait_for_requests(3)   # three in flight, none answered
        """
        self.hold()
        try:
            yield self
        finally:
            self.release()

    @property
    def held(self) -> bool:
        """Whether responses are being held."""
        return self._gate is not None

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least `n` requests have been recorded; return them.

        Raises:
            WaitTimeoutError: Fewer than `n` arrived within `timeout` seconds.

        """
        if not self._signal.wait(lambda: self._count >= n, seconds(timeout, "timeout", zero=True)):
            raise WaitTimeoutError(short_of(n, self._count, timeout, sync=True))
        return self.requests

    async def wait_for_requests_async(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """The async twin of `wait_for_requests`: awaits without blocking the event loop (asyncio or trio)."""
        if not await self._signal.wait_async(lambda: self._count >= n, seconds(timeout, "timeout", zero=True)):
            raise WaitTimeoutError(short_of(n, self._count, timeout, sync=False))
        return self.requests

    # ------------------------------------------------------------------ other ways in

    @contextlib.contextmanager
    def serve(self, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
        """Serve this stub over real HTTP on a loopback port while the block runs; yield the base URL.

        For an app under test in another process: point its SDK at the URL (`ANTHROPIC_BASE_URL`,
        `OPENAI_BASE_URL` + `/v1`). Recording, problems, hold and faults are the same as in-process.
        Needs the `wirescript[server]` extra (uvicorn); see `wirescript.server.ScriptServer`.
        """
        from .server import ScriptServer  # the convenience above: the server imports nothing of this module

        with ScriptServer(self, host=host, port=port) as server:
            yield server.base_url

    def intercept(self, hosts: Iterable[str] | str | None = None) -> Interception:
        """A context manager that sends the requests of every httpx/httpx2 client to this stub, by host.

        Reaches the clients an app or a framework builds itself (no `http_client=` needed); `hosts`
        replaces `KNOWN_HOSTS` (`"*"`: every host). See `wirescript.intercept.Interception`.
        """
        from .intercept import Interception

        return Interception(self, hosts)

    def attach(self, client: _Client) -> _Client:
        """Serve a boto3/botocore client (`bedrock-runtime`) with this stub, in-process; return the client.

        The client's requests go to the stub through botocore's own `before-send` hook: no port, no
        network. botocore's retry modes decide for real, without sleeping their backoff. Undo with
        `detach(client)`. Create the client with explicit credentials and region
        (`aws_access_key_id="AKIDTEST"`, ...) so that botocore looks for none on the machine.

        Raises:
            UsageError: `client` is not a botocore client, or is already attached.

        """
        from . import _botocore

        read_timeout = getattr(getattr(getattr(client, "meta", None), "config", None), "read_timeout", None)
        timeout = float(read_timeout) if isinstance(read_timeout, (int, float)) else None
        _botocore.attach(client, _botocore.StubServer(self.handle_request, read_timeout=timeout))
        return client

    def detach(self, client: Any) -> None:
        """Give a client `attach` served back to botocore's own sending; one never attached is left as it is."""
        from . import _botocore

        _botocore.detach(client)

    # ------------------------------------------------------------------ transport protocol

    def handle_request(self, request: Any) -> Any:
        """Serve one request of a sync httpx/httpx2 client."""
        request.read()
        record, wire, turn, gate = self._arrive(request)
        if gate is not None and not self._signal.wait(lambda: gate.open, self.hold_timeout):
            turn = self._problem(record, held_too_long(self.hold_timeout))
        self._unhold(record, gate)
        reply = self._answer(request, record, wire, turn)
        if reply.lead:
            _http.sync_lead(request, reply.lead)
        return self._response(request, record, wire, reply, is_async=False)

    async def handle_async_request(self, request: Any) -> Any:
        """Serve one request of an async httpx/httpx2 client."""
        await request.aread()
        record, wire, turn, gate = self._arrive(request)
        try:
            if gate is not None and not await self._signal.wait_async(lambda: gate.open, self.hold_timeout):
                turn = self._problem(record, held_too_long(self.hold_timeout))
        except BaseException:  # cancelled while held: the turn it took is never delivered
            self._problem(record, abandoned())
            raise
        finally:
            self._unhold(record, gate)
        reply = self._answer(request, record, wire, turn)
        if reply.lead:
            await _http.async_lead(request, reply.lead)
        return self._response(request, record, wire, reply, is_async=True)

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
            f"<ScriptTransport requests={self._count} pending={self._cursor.pending_count()} "
            f"overflow={self.overflow}{' held' if self.held else ''}>"
        )

    # ------------------------------------------------------------------ serving

    def _arrive(self, request: Any) -> tuple[RecordedRequest, Wire | None, Turn | Refusal | Turnless, _Gate | None]:
        """Record the request and decide its turn, atomically, in arrival order."""
        reading = read_request(request, self._vocabulary)
        record, wire = reading.record, reading.wire
        refusal = reading.refusal
        if refusal is None and wire is not None and self._strict:
            refusal = self._check(wire, record)
        decision: Turn | Ask | Refusal | Turnless
        with self._lock:
            record.index = self._count
            self._count += 1
            attempt = self._attempts.arrive(request, record)
            if wire is not None:
                wire.resolve(record)
            if refusal is not None:
                decision = refusal
            else:  # a turnless wire (side endpoint, route) consumes no turn
                decision = TURNLESS if wire is not None and wire.turnless else self._cursor.take(record)
            if isinstance(decision, Refusal):
                self._add_problem(record, decision)
            self._records.append(record)
            gate = self._gate
            if gate is not None:
                self._held[record.index] = record
            if self._signal.waiting:
                self._signal.notify_all()
        if isinstance(decision, Ask):
            decision = self._cursor.ask(decision, record)
            if isinstance(decision, Refusal):
                self._problem(record, decision)
        if attempt is not None:  # the retry can only come once this answer is sent
            with self._lock:
                self._attempts.answered(attempt, record, decision, wire)
        return record, reading.answerer if isinstance(decision, Refusal) else wire, decision, gate

    def _answer(
        self, request: Any, record: RecordedRequest, wire: Wire | None, turn: Turn | Refusal | Turnless
    ) -> Answer:
        """The response: the turn as its wire renders it, a turnless wire's answer, or the refusal. Never raises."""
        if isinstance(turn, Turnless) and wire is not None:
            side = respond(wire, record, self._side)
            if isinstance(side, Answer):
                return side._replace(body=self._guarded(record, side.body))
            turn = self._problem(record, side)
        if isinstance(turn, Turn) and wire is not None:
            per_event = bool(getattr(request, "extensions", {}).get(PER_EVENT))
            try:
                reply = answer(wire, record, turn, per_event=per_event, read_timeout=_http.read_timeout(request))
            except Exception as exc:  # a wirescript bug must be loud, never a retried "Connection error."
                turn = self._problem(record, failed("rendering the answer", exc))
            else:
                if not isinstance(reply, str):
                    return reply._replace(body=self._guarded(record, reply.body))
                turn = self._problem(record, Refusal("fault", reply))
        assert isinstance(turn, Refusal)
        if turn.violation is not None and wire is not None:
            return refuse_strictly(wire, record, turn.violation)
        not_found = turn.kind == "unknown_endpoint"
        return refuse(wire, record, f"wirescript: {record.problem}", not_found=not_found)

    def _response(
        self, request: Any, record: RecordedRequest, wire: Wire | None, reply: Answer, *, is_async: bool
    ) -> Any:
        """The HTTP response for `reply`; one that cannot be built is a problem and the loud refusal."""
        try:
            return _http.make_response(request, reply.status, reply.headers, reply.body, is_async=is_async)
        except Exception as exc:  # raised out of the transport, the SDK would retry it as a connection error
            self._problem(record, failed("building the response", exc))
            loud = refuse(wire, record, f"wirescript: {record.problem}")
            return _http.make_response(request, loud.status, loud.headers, loud.body, is_async=is_async)

    def _check(self, wire: Wire, record: RecordedRequest) -> Refusal | None:
        """The strict refusal of a parsed request, or None; outside the lock (a wire guards its own state)."""
        try:
            violation = wire.check(record, skip=self._strict_skip)
        except Exception as exc:  # a rule's or a wire's bug must be loud, never a retried "Connection error."
            return failed("checking the request against the strict rules", exc)
        return refused_strictly(violation) if violation is not None else None

    def _guarded(self, record: RecordedRequest, body: Iterator[Step]) -> Iterator[Step]:
        """The body, with a failure while it is rendered recorded and sent as a dropped connection."""
        try:
            yield from body
        except Exception as exc:
            self._problem(record, failed("streaming the answer", exc))
            yield Disconnect(f"wirescript: {record.problem}")

    def _unhold(self, record: RecordedRequest, gate: _Gate | None) -> None:
        if gate is not None:
            with self._lock:
                self._held.pop(record.index, None)

    def _problem(self, record: RecordedRequest, refusal: Refusal) -> Refusal:
        with self._lock:
            self._add_problem(record, refusal)
        return refusal

    def _add_problem(self, record: RecordedRequest, refusal: Refusal) -> None:
        """Record why `record` was not answered as scripted (under the lock)."""
        reason = refusal.reason
        if refusal.kind == "unscripted" and record.retry_count:
            reason += retried(record, self._records)
        problem = Problem(record.index, record.method, record.path, refusal.kind, reason, lead=refusal.lead)
        record.problem = problem
        self._troubled[record.index] = record
        self._problems.append(problem)
