"""`ScriptTransport`: a scripted LLM provider that lives in an httpx/httpx2 client.

It keeps the script cursor, the records, the overflow count and the hold gate. It knows no
provider: the wires do. One instance serves `httpx.Client`, `httpx.AsyncClient`,
`httpx2.Client` and `httpx2.AsyncClient` alike; the response is built with the library of the
incoming request.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import parse_qsl

from . import _http
from ._faults import Step, check_script_faults, plain_steps, plan_fault
from .errors import HoldTimeoutError, ScriptError
from .recorded import REDACTED, SENSITIVE_HEADERS, RecordedRequest, Secret
from .script import DEFAULT_QUEUE, ScriptLike, Turn, TurnLike, parse_turn, parse_turns
from .wires import Rendered, Wire, default_wires

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

PER_EVENT = "wirescript.per_event"
"""A request extension: when true, an unfaulted stream is sent one event per chunk instead of in
batches of whole events (the loopback server sets it, so each event is flushed to the network)."""

_SECRET_QUERY = frozenset({"key", "api_key", "api-key"})
_ARRIVAL_NOTICE = "wirescript: a request arrived"


class PendingTurn(NamedTuple):
    """A scripted turn that no request has consumed yet."""

    queue: str
    """The queue: a model name, or `"*"` for the default queue."""
    position: int
    """The turn's position in its queue."""
    turn: Turn
    """The turn."""


class _Gate:
    """One hold period. `open()` frees every request waiting on it, in threads and event loops."""

    __slots__ = ("_lock", "_waiters", "event")

    def __init__(self) -> None:
        self.event = threading.Event()
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def open(self) -> None:
        with self._lock:
            self.event.set()
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            _wake(loop, future)

    def wait(self, timeout: float) -> bool:
        return self.event.wait(timeout)

    async def wait_async(self, timeout: float) -> bool:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio (trio): wait in a worker thread
            import anyio

            return await anyio.to_thread.run_sync(self.event.wait, timeout)
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self.event.is_set():
                return True
            self._waiters.append((loop, future))
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            with self._lock:  # forget the waiter: its loop may be closed by the time the gate opens
                if (loop, future) in self._waiters:
                    self._waiters.remove((loop, future))
            return self.event.is_set()
        return True


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _wake(loop: asyncio.AbstractEventLoop, future: asyncio.Future[None]) -> None:
    """Resolve `future` on its loop from any thread; a closed loop has nobody waiting any more."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(_resolve, future)


@dataclass(slots=True)
class _Plan:
    """What one request will get, decided when it arrives."""

    record: RecordedRequest
    wire: Wire | None
    turn: Turn | None
    gate: _Gate | None
    unscripted: str | None = None


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
            None from it is an overflow. Without a fallback, exhaustion is always an overflow.

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
    ) -> None:
        self._function: Callable[[RecordedRequest], TurnLike | None] | None = None
        if fallback is not None and not callable(fallback):
            raise ScriptError(f"fallback: expected a function (RecordedRequest) -> turn, got {type(fallback).__name__}")
        for what, function in (("script", script), ("fallback", fallback)):
            if inspect.iscoroutinefunction(function):
                raise ScriptError(
                    f"{what}: {getattr(function, '__name__', 'the function')} is async, but script functions must "
                    "be plain functions (they answer sync and async clients alike); make it a plain def"
                )
        self._fallback = fallback
        self._queues: dict[str, list[Turn]] = {}
        if callable(script) and not isinstance(script, (Sequence, Mapping)):
            self._function = script
        elif isinstance(script, Mapping):
            for key, turns in script.items():
                if not isinstance(key, str):
                    raise ScriptError(f"script: queue keys are model names (str), got {type(key).__name__} {key!r}")
                self._queues[key] = parse_turns(turns, f"script[{key!r}]")
        else:
            self._queues[DEFAULT_QUEUE] = parse_turns(script, "script")
        if not isinstance(hold_timeout, (int, float)) or hold_timeout <= 0:
            raise ScriptError(f"hold_timeout: expected a positive number of seconds, got {hold_timeout!r}")
        self.hold_timeout = float(hold_timeout)
        self._cursor = dict.fromkeys(self._queues, 0)
        self._records: list[RecordedRequest] = []
        self._problems: list[str] = []
        self._overflow = 0
        self._lock = threading.Lock()
        self._arrival = threading.Condition(self._lock)
        self._arrival_waiters: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._sync_waiters = 0  # threads in wait_for_requests: an arrival notifies only when someone waits
        self._gate: _Gate | None = None
        self._wires = default_wires()
        self._wire_by_endpoint: dict[tuple[str, str], Wire | None] = {}
        check_script_faults(
            (
                (("script" if queue == DEFAULT_QUEUE else f"script[{queue!r}]") + f"[{i}]", turn)
                for queue, turns in self._queues.items()
                for i, turn in enumerate(turns)
            ),
            self._wires,
        )
        self.closed = False

    # ------------------------------------------------------------------ evidence

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a snapshot list)."""
        with self._lock:
            return list(self._records)

    @property
    def overflow(self) -> int:
        """How many requests got no scripted turn. A passing test has 0.

        A request overflows when it is past the script's end, unscripted by the function, for a model
        with no queue, or to an endpoint no wire knows.
        """
        return self._overflow

    @property
    def problems(self) -> list[str]:
        """A message for every request the stub could not answer as scripted. A passing test has none.

        Overflowing requests, held requests never released and script functions that failed all appear here.
        """
        with self._lock:
            return list(self._problems)

    @property
    def pending(self) -> list[PendingTurn]:
        """The scripted turns no request has consumed yet, queue by queue."""
        with self._lock:
            return [
                PendingTurn(queue, index, turn)
                for queue, turns in self._queues.items()
                for index, turn in enumerate(turns)
                if index >= self._cursor[queue]
            ]

    def check(self, *, unanswered: bool = True, unused_turns: bool = True) -> None:
        """Raise `AssertionError` listing every problem and every unconsumed turn (each unless disabled).

        Each request the stub could not answer as scripted is listed by its `summary()` (number, method,
        path, model, last message) and the reason.

        This is what the pytest fixture runs at teardown; call it yourself when not using the plugin.
        """
        lines: list[str] = []
        offending = [r for r in self.requests if r.problem is not None] if unanswered else []
        if offending:
            lines.append(f"wirescript: {len(offending)} request(s) were not answered as scripted:")
            for record in offending:
                assert record.problem is not None
                reason = record.problem.removeprefix(f"requests[{record.index}] {record.method} {record.path}")
                if record.model is not None:
                    reason = reason.removeprefix(f" (model {record.model!r})")
                lines.append(f"  - {record.summary()}")
                lines.append(f"    {reason.removeprefix(':').strip()}")
        pending = self.pending if unused_turns else []
        if pending:
            lines.append(f"wirescript: {len(pending)} scripted turn(s) were never requested:")
            for p in pending:
                where = "script" if p.queue == DEFAULT_QUEUE else f"script[{p.queue!r}]"
                lines.append(f"  - {where}[{p.position}]: {p.turn.describe()}")
        if lines:
            raise AssertionError("\n".join(lines))

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
            gate.open()

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
            HoldTimeoutError: Fewer than `n` arrived within `timeout` seconds.

        """
        with self._arrival:
            self._sync_waiters += 1
            try:
                if not self._arrival.wait_for(lambda: len(self._records) >= n, timeout):
                    raise HoldTimeoutError(self._short_of(n, timeout))
            finally:
                self._sync_waiters -= 1
            return list(self._records)

    async def wait_for_requests_async(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """The async twin of `wait_for_requests`: awaits without blocking the event loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if len(self._records) >= n:
                return list(self._records)
            self._arrival_waiters.append((n, loop, future))
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            with self._lock:
                self._arrival_waiters = [w for w in self._arrival_waiters if w[2] is not future]
                if len(self._records) < n:
                    raise HoldTimeoutError(self._short_of(n, timeout)) from None
        return self.requests

    def _short_of(self, n: int, timeout: float) -> str:
        return (
            f"wirescript: waited {timeout} s for {n} request(s), {len(self._records)} arrived. "
            "Is the app still running, or did it send fewer requests than the test expects?"
        )

    # ------------------------------------------------------------------ another process

    @contextlib.contextmanager
    def serve(self, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
        """Serve this stub over real HTTP on a loopback port while the block runs; yield the base URL.

        For an app under test in another process: point its SDK at the URL (`ANTHROPIC_BASE_URL`,
        `OPENAI_BASE_URL` + `/v1`). Recording, overflow, hold and faults are the same as in-process.
        Needs the `wirescript[server]` extra (uvicorn); see `wirescript.server.ScriptServer`.
        """
        from .server import ScriptServer

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
        plan = self._arrive(request)
        if plan.gate is not None and not plan.gate.wait(self.hold_timeout):
            self._held_too_long(plan)
        answer = self._render(request, plan)
        if answer.lead:
            _http.sync_lead(request, answer.lead)
        return _http.make_response(request, answer.status, answer.headers, answer.body, is_async=False)

    async def handle_async_request(self, request: Any) -> Any:
        """Serve one request of an async httpx/httpx2 client."""
        await request.aread()
        plan = self._arrive(request)
        if plan.gate is not None and not await plan.gate.wait_async(self.hold_timeout):
            self._held_too_long(plan)
        answer = self._render(request, plan)
        if answer.lead:
            await _http.async_lead(request, answer.lead)
        return _http.make_response(request, answer.status, answer.headers, answer.body, is_async=True)

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
            f"<ScriptTransport requests={len(self._records)} pending={len(self.pending)} "
            f"overflow={self._overflow}{' held' if self.held else ''}>"
        )

    # ------------------------------------------------------------------ core

    def _arrive(self, request: Any) -> _Plan:
        """Record the request and decide its turn, atomically, in arrival order."""
        method = request.method
        url = request.url
        path = url.path
        content = request.content
        headers = _headers(request.headers)
        raw_query = url.query
        query = {}
        if raw_query:
            query = dict(parse_qsl(raw_query.decode() if isinstance(raw_query, bytes) else str(raw_query)))
        api_key = _api_key(headers, query)
        retry_count = _int(headers.get("x-stainless-retry-count"))
        body, body_error = _parse_body(content)
        wire = self._wire_for(method, path)
        parsed = None
        wire_failure: str | None = None
        if wire is not None and isinstance(body, dict):
            try:
                parsed = wire.parse(body, path)
            except Exception as exc:  # a wire's bug must be loud, not a retried "Connection error."
                wire_failure = f"the {wire.name} wire could not parse the body ({type(exc).__name__}: {exc})"
        # Both dicts are this request's own copies: redacted in place once the key is read from them.
        record = _new_record(
            {
                "index": 0,
                "provider": wire.name if wire is not None else None,
                "method": method,
                "path": path,
                "query": _redact(query, _SECRET_QUERY),
                "headers": _redact(headers, SENSITIVE_HEADERS),
                "content": content,
                "body": body,
                "body_error": body_error,
                **(_parsed_fields(parsed) if parsed is not None else _empty_fields()),
                "api_key": Secret(api_key) if api_key is not None else None,
                "retry_count": retry_count,
                "turn_index": None,
                "queue": None,
                "problem": None,
            }
        )
        turn: Turn | None = None
        unscripted: str | None = None
        with self._lock:
            index = len(self._records)
            fields = record.__dict__  # set without pydantic's per-assignment work: every field is set already
            fields["index"] = index
            if wire is not None:
                wire.resolve(record)
            if wire is None:
                unscripted = (
                    f"requests[{index}] {method} {path}: no wire serves this endpoint "
                    f"(known: {', '.join(w.endpoint for w in self._wires)}). Nothing was consumed from the script."
                )
            elif parsed is None:
                reason = wire_failure or f"the body is not a JSON object ({body_error or 'not an object'})"
                unscripted = f"requests[{index}] {method} {path}: {reason}; nothing was consumed from the script."
            elif self._function is None:
                turn, unscripted = self._next_turn(record)
            if unscripted is not None and self._fallback is not None and wire is not None and parsed is not None:
                fallback_for = unscripted
                unscripted = None
            else:
                fallback_for = None
            if unscripted is not None:
                self._overflow += 1
                record.problem = unscripted
                self._problems.append(unscripted)
            self._records.append(record)
            gate = self._gate
            if self._sync_waiters:
                self._arrival.notify_all()
            if self._arrival_waiters:
                self._notify_async_arrivals()
        plan = _Plan(record, wire, turn, gate, unscripted)
        if fallback_for is not None:
            assert self._fallback is not None
            self._ask_function(plan, self._fallback, "fallback", fallback_for)
        elif self._function is not None and unscripted is None:
            self._ask_function(plan, self._function, "script function", None)
        return plan

    def _wire_for(self, method: str, path: str) -> Wire | None:
        """The wire that serves `method path` (a wire's `matches` depends on nothing else), remembered."""
        key = (method, path)
        try:
            return self._wire_by_endpoint[key]
        except KeyError:
            pass
        wire = next((w for w in self._wires if w.matches(method, path)), None)
        if len(self._wire_by_endpoint) < _ENDPOINTS_REMEMBERED:
            self._wire_by_endpoint[key] = wire
        return wire

    def _next_turn(self, record: RecordedRequest) -> tuple[Turn | None, str | None]:
        queue = record.model if record.model in self._queues else DEFAULT_QUEUE
        turns = self._queues.get(queue)
        if turns is not None and (position := self._cursor[queue]) < len(turns):
            self._cursor[queue] = position + 1
            fields = record.__dict__  # every field is set already: no pydantic per-assignment work
            fields["turn_index"] = position
            fields["queue"] = queue
            return turns[position], None
        head = f"requests[{record.index}] {record.method} {record.path}"
        if turns is None:
            known = ", ".join(repr(q) for q in self._queues)
            return None, (
                f"{head}: no queue for model {record.model!r} and no default queue '*' (queues: {known}). "
                "Add a queue for this model or a '*' queue."
            )
        where = "the script" if queue == DEFAULT_QUEUE else f"the queue for model {queue!r}"
        return None, (
            f"{head} (model {record.model!r}) is past the end of {where}: it has {len(turns)} turn(s), "
            f"all served. The app made a model call the script does not expect; add a turn for it "
            f"or find the extra call."
        )

    def _ask_function(
        self,
        plan: _Plan,
        function: Callable[[RecordedRequest], TurnLike | None],
        what: str,
        exhausted: str | None,
    ) -> None:
        record = plan.record
        head = f"requests[{record.index}] {record.method} {record.path}"
        problem: str | None = None
        try:
            answer = function(record)
        except Exception as exc:  # the user's function failed: answer loudly, keep serving
            problem = f"{head}: the {what} raised {type(exc).__name__}: {exc}"
        else:
            if answer is None:
                problem = exhausted or f"{head}: the {what} returned None (unscripted request)."
                if exhausted is not None:
                    problem += f" The {what} returned None for it too."
            else:
                try:
                    plan.turn = parse_turn(answer, f"{what}'s answer to requests[{record.index}]")
                except ScriptError as exc:
                    problem = f"{head}: {exc}"
        if problem is not None:
            self._fail(plan, problem, overflow=True)

    def _notify_async_arrivals(self) -> None:
        count = len(self._records)
        keep = []
        for n, loop, future in self._arrival_waiters:
            if count >= n:
                _wake(loop, future)
            else:
                keep.append((n, loop, future))
        self._arrival_waiters = keep

    def _held_too_long(self, plan: _Plan) -> None:
        record = plan.record
        problem = (
            f"requests[{record.index}] {record.method} {record.path} was held for {self.hold_timeout} s and "
            "never released: call stub.release() once the test has seen what it needs (or raise hold_timeout)."
        )
        self._fail(plan, problem, overflow=False)

    def _fail(self, plan: _Plan, problem: str, *, overflow: bool) -> None:
        """Record why `plan`'s request gets no scripted answer; it is answered with `problem` instead."""
        with self._lock:
            if overflow:
                self._overflow += 1
            plan.record.problem = problem
            self._problems.append(problem)
        plan.unscripted = problem

    def _render(self, request: Any, plan: _Plan) -> _Answer:
        record, wire, turn = plan.record, plan.wire, plan.turn
        message = f"wirescript: {plan.unscripted}" if plan.unscripted is not None else None
        if wire is None:
            assert message is not None
            body = json.dumps(
                {
                    "type": "error",
                    "error": {
                        "type": "not_found_error",
                        "message": message,
                        "code": "wirescript_unscripted",
                        "details": {"error_code": "wirescript_unscripted"},
                    },
                }
            ).encode()
            headers = {"content-type": "application/json", "x-should-retry": "false"}
            return _Answer(404, headers, (), iter((body,)))
        if message is not None or turn is None:
            rendered = wire.unscripted(message or "wirescript: no turn", record)
            return _Answer(rendered.status, rendered.headers, (), iter((rendered.body,)))
        fault = turn.fault
        # Unfaulted and read in chunks: nothing looks at events one by one, so the wire may join them.
        plain = fault is None and not getattr(request, "extensions", {}).get(PER_EVENT)
        if turn.error is not None:
            rendered = wire.error(turn.error, record)
        else:
            malformed = fault is not None and fault.malformed_tool_json
            rendered = wire.render(turn, record, malformed_tool_json=malformed, joined=plain)
        if fault is None:
            return _Answer(rendered.status, rendered.headers, (), _steps_of(rendered, per_event=not plain))
        frames = list(rendered.frames) if rendered.frames is not None else None
        if turn.error is not None:
            why_json = "an 'error' turn answers with one JSON body"
        else:
            why_json = "the request did not ask for a stream, so the answer is one JSON body"
        stream_error = fault.stream_error
        planned = plan_fault(
            fault,
            frames,
            rendered.body,
            wire=wire,
            why_json=why_json,
            error_frame=wire.stream_error(stream_error, record) if stream_error is not None else None,
            read_timeout=_http.read_timeout(request),
        )
        if isinstance(planned, str):
            self._fault_cannot_apply(plan, planned)
            return self._render(request, plan)
        return _Answer(rendered.status, rendered.headers, planned.lead, planned.body)

    def _fault_cannot_apply(self, plan: _Plan, why: str) -> None:
        record = plan.record
        self._fail(plan, f"requests[{record.index}] {record.method} {record.path}: {why}", overflow=False)


class _Answer(NamedTuple):
    """A response before it meets an HTTP library."""

    status: int
    headers: dict[str, str]
    lead: tuple[Step, ...]
    """Run before the response exists (`FaultPlan.lead`)."""
    body: Iterator[Step]


def _steps_of(rendered: Rendered, *, per_event: bool) -> Iterator[Step]:
    if rendered.frames is None:
        return iter((rendered.body,))
    if per_event:
        return (frame.data for frame in rendered.frames)
    return plain_steps(rendered.frames)


def _empty_fields() -> dict[str, Any]:
    """The provider fields of a request no wire parsed: fresh lists each time, so records share nothing."""
    return {
        "model": None,
        "system": None,
        "messages": [],
        "conversation": [],
        "tools": [],
        "tool_names": [],
        "tool_results": [],
        "stream": False,
        "max_tokens": None,
        "temperature": None,
    }


def _parsed_fields(parsed: Any) -> dict[str, Any]:
    return {
        "model": parsed.model,
        "system": parsed.system,
        "messages": parsed.messages,
        "conversation": parsed.conversation if parsed.conversation is not None else parsed.messages,
        "tools": parsed.tools,
        "tool_names": parsed.tool_names,
        "tool_results": parsed.tool_results,
        "stream": parsed.stream,
        "max_tokens": parsed.max_tokens,
        "temperature": parsed.temperature,
    }


def _redact(values: dict[str, str], secret: frozenset[str]) -> dict[str, str]:
    """`values` with the value of every name in `secret` redacted in place (the order is kept)."""
    for name in secret.intersection(values):
        values[name] = REDACTED
    return values


_ENDPOINTS_REMEMBERED = 256
"""How many (method, path) pairs a stub remembers the wire of; an app with more still gets served."""

_RECORD_FIELDS = tuple(RecordedRequest.model_fields)
_PLAIN_CONSTRUCT = not RecordedRequest.__pydantic_post_init__ and all(
    field.alias is None and field.validation_alias is None for field in RecordedRequest.model_fields.values()
)


def _new_record(values: dict[str, Any]) -> RecordedRequest:
    """`RecordedRequest.model_construct(**values)` for a value of every field, without its per-field work.

    `model_construct` walks every field for aliases and defaults and collects the names set; with
    every field given in declaration order, no aliases and no post-init hook, what it builds is this
    `__dict__` (in the same order, so repr and dumps agree) with every field set.
    """
    if not _PLAIN_CONSTRUCT or tuple(values) != _RECORD_FIELDS:
        return RecordedRequest.model_construct(**values)
    record = RecordedRequest.__new__(RecordedRequest)
    object.__setattr__(record, "__dict__", values)
    object.__setattr__(record, "__pydantic_fields_set__", set(_RECORD_FIELDS))
    object.__setattr__(record, "__pydantic_extra__", None)
    object.__setattr__(record, "__pydantic_private__", None)
    return record


def _headers(headers: Any) -> dict[str, str]:
    """A request's headers as a dict with lower-cased names, exactly as `dict(headers.items())` gives them.

    Decoded from the entries httpx and httpx2 keep (raw name, lower-cased name, value), which is
    cheaper than `items()`. `items()` decodes with the headers' encoding: one set (by hand, or found
    and kept by an earlier read) is used as is; otherwise ASCII, else UTF-8, else Latin-1 for all of
    them, so decoding as UTF-8 gives the same text whenever it succeeds. Anything else (Latin-1, a
    name sent twice, which `items()` joins with ", ", or another `Headers`) takes the library's path.
    """
    try:
        entries = headers._list
        encoding = headers._encoding or "utf-8"
        if encoding not in _DECODED_HERE:
            return dict(headers.items())
        values = {name.decode(encoding): value.decode(encoding) for _, name, value in entries}
    except (AttributeError, TypeError, ValueError):  # UnicodeDecodeError is a ValueError
        return dict(headers.items())
    if len(values) != len(entries):
        return dict(headers.items())
    return values


_DECODED_HERE = frozenset({"ascii", "utf-8"})


_JSON = json.JSONDecoder()
_UTF8_OPENERS = frozenset(b"{[")


def _parse_body(content: bytes) -> tuple[Any, str | None]:
    """The JSON of a request body, as `json.loads(content)` gives it, or why there is none."""
    if not content:
        return None, "empty body"
    try:
        # `json.loads` guesses a body's encoding from its first bytes, then decodes it with
        # "surrogatepass". A body opening with `{` or `[` then any byte but NUL is UTF-8 by that
        # guess (no BOM, no UTF-16/32 NULs): decode it so directly and skip the guess.
        if content[0] in _UTF8_OPENERS and len(content) > 1 and content[1]:
            return _JSON.decode(content.decode("utf-8", "surrogatepass")), None
        return json.loads(content), None
    except ValueError as exc:  # UnicodeDecodeError included
        return None, f"not JSON: {exc}"
    except RecursionError:  # raised out of the transport, the SDK would retry it as a connection error
        return None, "not JSON that can be read: nested deeper than Python's recursion limit"


def _api_key(headers: dict[str, str], query: dict[str, str]) -> str | None:
    for name in ("x-api-key", "x-goog-api-key", "api-key"):
        if name in headers:
            return headers[name]
    auth = headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() == "bearer" and token:
        return token.strip()
    return query.get("key")


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
