"""`ScriptTransport`: a scripted LLM provider that lives in an httpx/httpx2 client.

A thin shell over the sans-IO core: it holds the lock, the records, the problems and the hold gate,
and offers the public API and the two transport entry points. Which turn answers a request is the
cursor's (`_cursor`), what a request says the record builder's (`_record`), how an answer is sent
the renderer's (`_answer`), and waiting the signal's (`_signal`). It knows no provider: the wires
do. One instance serves `httpx.Client`, `httpx.AsyncClient`, `httpx2.Client` and
`httpx2.AsyncClient` alike; the response is built with the library of the incoming request.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from . import _http
from ._answer import Answer, answer, refuse
from ._cursor import Ask, Cursor, PendingTurn, Refusal
from ._http import PER_EVENT
from ._record import Attempts, Vocabulary, read_request
from ._report import LISTED, abandoned, check_message, failed, held_too_long, short_of
from ._signal import Signal, seconds
from ._steps import Disconnect, Step
from .errors import WaitTimeoutError
from .recorded import OVERFLOW_KINDS, Problem, RecordedRequest
from .script import ScriptLike, Turn, TurnLike
from .wires import Wire, merge_wires

__all__ = ["PER_EVENT", "PendingTurn", "ScriptTransport"]

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

    Raises:
        ScriptError: The script is malformed; the message names the turn and the field.

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
    ) -> None:
        self._wires = merge_wires(wires)
        self._cursor = Cursor(script, fallback, self._wires)
        self._vocabulary = Vocabulary(self._wires)
        self._attempts = Attempts()
        self.hold_timeout = seconds(hold_timeout, "hold_timeout")
        self._records: list[RecordedRequest] = []
        self._problems: list[Problem] = []
        self._held: dict[int, RecordedRequest] = {}
        self._lock = threading.Lock()
        self._signal = Signal(self._lock)
        self._gate: _Gate | None = None
        self.closed = False

    # ------------------------------------------------------------------ evidence

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a snapshot list)."""
        with self._lock:
            return list(self._records)

    @property
    def problems(self) -> list[Problem]:
        """Every request the stub could not answer as scripted, as a `Problem`. A passing test has none.

        Requests past the end of the script, to an endpoint no wire knows, with a body that cannot be
        read, that a script function failed to answer, held and never released, abandoned by their
        client while held, or whose fault could not take effect: each is a `Problem` of its own kind.
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

    def check(self, *, problems: bool = True, unused_turns: bool = True, unanswered: bool | None = None) -> None:
        """Raise `AssertionError` listing every problem, every held request and every unconsumed turn.

        Each request the stub could not answer as scripted is listed by its `summary()` (number,
        method, path, model, last message) and the reason. `problems=False` leaves those (and held
        requests) out, `unused_turns=False` the turns never requested; `unanswered` is the former
        name of `problems`. This is what the pytest fixture runs at teardown; call it yourself when
        not using the plugin.
        """
        with self._lock:
            records, held = list(self._records), list(self._held.values())
            pending, total = self._cursor.pending(LISTED), self._cursor.pending_count()
        problems = problems if unanswered is None else unanswered
        message = check_message(records, held, pending, total, problems=problems, unused_turns=unused_turns)
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
        if not self._signal.wait(lambda: len(self._records) >= n, seconds(timeout, "timeout", zero=True)):
            raise WaitTimeoutError(short_of(n, len(self._records), timeout, sync=True))
        return self.requests

    async def wait_for_requests_async(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """The async twin of `wait_for_requests`: awaits without blocking the event loop (asyncio or trio)."""
        if not await self._signal.wait_async(lambda: len(self._records) >= n, seconds(timeout, "timeout", zero=True)):
            raise WaitTimeoutError(short_of(n, len(self._records), timeout, sync=False))
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
        return _http.make_response(request, reply.status, reply.headers, reply.body, is_async=False)

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
        return _http.make_response(request, reply.status, reply.headers, reply.body, is_async=True)

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
            f"<ScriptTransport requests={len(self._records)} pending={self._cursor.pending_count()} "
            f"overflow={self.overflow}{' held' if self.held else ''}>"
        )

    # ------------------------------------------------------------------ serving

    def _arrive(self, request: Any) -> tuple[RecordedRequest, Wire | None, Turn | Refusal, _Gate | None]:
        """Record the request and decide its turn, atomically, in arrival order."""
        reading = read_request(request, self._vocabulary)
        record, wire = reading.record, reading.wire
        decision: Turn | Ask | Refusal
        with self._lock:
            record.index = len(self._records)
            attempt = self._attempts.arrive(request, record)
            if wire is not None:
                wire.resolve(record)
            decision = reading.refusal if reading.refusal is not None else self._cursor.take(record)
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

    def _answer(self, request: Any, record: RecordedRequest, wire: Wire | None, turn: Turn | Refusal) -> Answer:
        """The response: the turn as its wire renders it, or the loud refusal. Never raises."""
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
        not_found = turn.kind == "unknown_endpoint"
        return refuse(wire, record, f"wirescript: {record.problem}", not_found=not_found)

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
        problem = Problem(record.index, record.method, record.path, refusal.kind, refusal.reason, lead=refusal.lead)
        record.problem = problem
        self._problems.append(problem)
