"""The wirescript pytest plugin (registered through the `pytest11` entry point).

It provides the `wirescript` fixture, a factory of stubs that are checked at teardown, and the
`wirescript` marker that turns those checks off. While a test uses the fixture, a network guard
refuses connections to anything but loopback (see `wirescript.guard`). Loading it imports neither
wirescript's models nor pydantic: the library is imported when a test first uses the fixture, so
pytest starts as fast with the plugin installed as without it.

```
def test_agent(wirescript):
    stub = wirescript(["Hello!"])        # a ScriptTransport; hand it to the SDK's HTTP client
    ...

def test_framework(wirescript):
    stub = wirescript(["Hello!"], intercept=True)   # every httpx/httpx2 client reaches it until teardown
    ...

@pytest.mark.wirescript(check_unused=False)   # per test, class or module (closest wins)
def test_partial_script(wirescript): ...

@pytest.mark.wirescript(allowed_hosts=["search.internal"])   # or allow_network=True: no guard
def test_with_a_real_service(wirescript): ...

@pytest.mark.wirescript(strict_skip=["anthropic.cache-control-limit"])   # or strict=False: no strict rules
def test_lenient(wirescript): ...

@pytest.mark.wirescript(usage="derive", max_cost_usd=0.05, min_cache_hit=0.8, cache_from_request=1)
def test_cheap_and_cached(wirescript): ...   # the bill is checked at teardown (docs/usage.md)

def test_recorded(wirescript):
    stub = wirescript.recorded()   # scripts/<module>/<test>.yaml; --wirescript-record=once records it
    ...
```
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

if TYPE_CHECKING:
    from .builder import ScriptBuilder
    from .guard import NetworkGuard
    from .intercept import Interception
    from .recorded import ProblemKind, RecordedRequest
    from .recording import RecordingTransport
    from .script import ScriptLike
    from .server import ScriptServer
    from .transport import ScriptTransport

__all__ = [
    "StubFactory",
    "TeardownFailure",
    "pytest_addoption",
    "pytest_configure",
    "pytest_make_parametrize_id",
    "wirescript",
    "wirescript_server",
]

MARKER = "wirescript"

# --- loudness options (issue 14): which problems fail the test, and which stubs are checked.
_LOUD_OPTIONS = ("allow", "check_hand_built")
_LOUD_HELP = (
    " allow=[problem kinds]: let problems of those kinds pass (check_overflow=False is allow=['unscripted', "
    "'unknown_endpoint', 'unreadable', 'script_error']); check_hand_built=False: do not check the "
    "ScriptTransports the test builds itself."
)
_BUDGET_OPTIONS = ("usage", "prices", "max_cost_usd", "min_cache_hit", "cache_from_request")
_BUDGET_HELP = (
    " usage='derive': the stubs derive their usage from the requests (prompt caching included); prices={model: "
    "{...}}: their price table; max_cost_usd=N: "
    "fail when a stub's bill is over N dollars; min_cache_hit=R (cache_from_request=I): fail when less than R of "
    "its input tokens, from requests[I] on, were read from the cache (docs/usage.md)."
)
_OVERFLOW_ALIAS = ("unscripted", "unknown_endpoint", "unreadable", "script_error")  # OVERFLOW_KINDS, unimported
_MARKER_HELP = (
    "wirescript(*, check_overflow=True, check_unused=True, allow_network=False, allowed_hosts=(), strict=True, "
    "strict_skip=(), check_tool_input=False, match_recorded=False): turn off the wirescript fixture's teardown "
    "check of requests the script did not answer, or of scripted turns never requested; let the test reach the "
    "network, or some hosts; turn the strict request and answer rules off for the stubs the fixture makes, or "
    "some of them, or hold every tool call's input to its tool's schema (docs/strict-requests.md); fail when a "
    "request replayed from wirescript.recorded() asks something else than the one recorded for its turn."
    + _LOUD_HELP
    + _BUDGET_HELP
)
_OPTIONS = (
    "check_overflow",
    "check_unused",
    "allow_network",
    "allowed_hosts",
    "strict",
    "strict_skip",
    "check_tool_input",
    "dialect",
    "match_recorded",
    *_LOUD_OPTIONS,
    *_BUDGET_OPTIONS,
)
_STUB_OPTIONS = ("strict", "strict_skip", "check_tool_input", "dialect", "usage", "prices")
"""Marker options that are defaults of the stubs the fixture makes (an argument of the fixture call wins)."""


SECTION_REQUESTS = 20
"""The most requests per stub the failure report's section lists (the first quarter and the last ones)."""


class TeardownFailure(pytest.fail.Exception):  # type: ignore[misc,name-defined]
    """The fixture's teardown failure (a `pytest.fail`): under `xfail` it is reported, not expected."""


class _Watching:
    """The stubs of one test: those built during it, and those built before that it used.

    Made before the test's fixtures are set up, so a stub built by another fixture, listed before
    `wirescript` or after, is the test's own. `checked`: the test uses the fixture, which checks
    them; else its stubs that nothing checked warn at its teardown.
    """

    __slots__ = ("born", "checked", "previous", "used", "watch")

    def __init__(self, *, checked: bool) -> None:
        from ._core import ledger as _ledger

        self.checked = checked
        self.born: list[ScriptTransport] = []
        self.used: list[tuple[ScriptTransport, int]] = []
        self.watch = _ledger.Watch(self._adopt)
        self.previous = _ledger.watch(self.watch)

    def _adopt(self, stub: ScriptTransport, first: int | None) -> None:
        if first is None:  # the test's own: checked at its teardown (or warned of, without the fixture)
            stub._ledger.claimed = True
            self.born.append(stub)
        else:  # shared: this test's requests are checked; its turns are left to whoever checks it
            self.used.append((stub, first))

    def warn(self) -> None:
        """Warn of each stub built during the test that nothing checked, with turns never requested."""
        import warnings

        __tracebackhide__ = True
        from ._core.ledger import unchecked
        from .errors import UncheckedStubWarning

        for stub in self.born:
            message = unchecked(stub._ledger)
            if message is not None:
                warnings.warn(message, UncheckedStubWarning, stacklevel=1)

    def end(self) -> None:
        """Stop watching (a second call does nothing); the watch before it, if any, is back."""
        global _current
        from ._core import ledger as _ledger

        if _ledger._watch is self.watch:
            _ledger.watch(self.previous)
        if _current is self:
            _current = None


_current: _Watching | None = None
"""The watch of the test being set up or run (for the fixtures of wider scope it sets up)."""
_WATCHING = pytest.StashKey["_Watching"]()
_FACTORY = pytest.StashKey["StubFactory | None"]()


def _request_line(stub: ScriptTransport, record: RecordedRequest, records: list[RecordedRequest], label: Any) -> str:
    """`  requests[1] POST /v1/messages model=… last=… -> script[1]: text 'Hello.'`, and what retried what."""
    line = f"  {record.summary()}"
    if record.problem is not None:
        line += f" -> not answered ({getattr(record.problem, 'kind', 'problem')})"
    elif record.answered_by == "script" and record.queue is not None and record.turn_index is not None:
        turn = stub._ledger.turn(record.queue, record.turn_index)
        line += f" -> {label(record.queue)}[{record.turn_index}]" + (f": {turn.describe()}" if turn is not None else "")
    elif record.answered_by is not None:
        line += f" -> the {'script function' if record.answered_by == 'function' else 'fallback'}'s answer"
    if record.retry_count:
        earlier = [r for r in records if r.index < record.index and not r.retry_count and r.path == record.path]
        of = f" of requests[{earlier[-1].index}]" if earlier else ""
        line += f"  <- the SDK's own retry {record.retry_count}{of}, whose answer the app never saw"
    return line


class StubFactory:
    """The `wirescript` fixture: makes stubs and checks every one of them when the test ends.

    `wirescript(script, **kwargs)` returns `ScriptTransport(script, **kwargs)`; `script` may also
    be a `ScriptBuilder`. `wirescript(script, intercept=True)` also sends every httpx/httpx2
    request for a known provider host to the stub until teardown (`intercept=["host", ...]` or
    `"*"` chooses the hosts; see `ScriptTransport.intercept`). At teardown the test fails, listing
    each connection the network guard refused, each request the stub could not answer as scripted
    (past the end of the script, an endpoint no wire knows, ... — even when the app swallowed the
    API error) and each scripted turn no request consumed. `wirescript.recorded()` gives the test
    its recorded script, replayed or recorded as `--wirescript-record` says.
    """

    __slots__ = (
        "_allow",
        "_budgets",
        "_check_hand_built",
        "_check_overflow",
        "_check_unused",
        "_closers",
        "_defaults",
        "_drift",
        "_excluded",
        "_guard",
        "_interceptions",
        "_match_recorded",
        "_record_mode",
        "_recorders",
        "_stubs",
        "_test",
        "_watching",
    )

    def __init__(
        self,
        *,
        check_overflow: bool = True,
        check_unused: bool = True,
        guard: NetworkGuard | None = None,
        allow: Iterable[str] = (),
        check_hand_built: bool = True,
        strict: bool | None = None,
        strict_skip: Iterable[str] | None = None,
        check_tool_input: bool | None = None,
        dialect: str | None = None,
        record_mode: str = "none",
        test: pytest.Item | None = None,
        match_recorded: bool = False,
        usage: Any = None,
        prices: Mapping[str, Mapping[str, float]] | None = None,
        max_cost_usd: float | None = None,
        min_cache_hit: float | None = None,
        cache_from_request: int = 0,
    ) -> None:
        self._budgets = (max_cost_usd, min_cache_hit, cache_from_request)
        self._allow = frozenset(allow) | (frozenset() if check_overflow else frozenset(_OVERFLOW_ALIAS))
        self._check_overflow = True  # every problem kind has its own switch now: `allow`
        self._check_unused = check_unused
        self._guard = guard
        given = {
            "strict": strict,
            "strict_skip": strict_skip,
            "check_tool_input": check_tool_input,
            "dialect": dialect,
            "usage": usage,
            "prices": prices,
        }
        self._defaults = {name: value for name, value in given.items() if value is not None}
        self._stubs: list[ScriptTransport] = []
        self._interceptions: list[Interception] = []
        self._record_mode = record_mode
        self._test = test
        self._recorders: list[RecordingTransport] = []
        self._closers: list[Any] = []
        self._match_recorded = match_recorded
        self._drift: list[tuple[ScriptTransport, dict[tuple[str, int], str]]] = []
        self._excluded: list[ScriptTransport] = []  # made here, but not to be checked (a replay that records on)
        self._watching: _Watching | None = None  # the test's stubs, built by hand or used (set by the fixture)
        self._check_hand_built = check_hand_built

    def _adopt(self, stub: ScriptTransport) -> None:
        """A stub the factory made: checked at teardown."""
        if not any(known is stub for known in self._stubs):
            self._stubs.append(stub)

    def _checked_stubs(self) -> list[ScriptTransport]:
        """Every stub checked in full at teardown: the factory's, and those built during the test (by hand too)."""
        born = self._watching.born if self._watching is not None and self._check_hand_built else []
        chosen = {id(stub): stub for stub in [*born, *self._stubs]}
        return [stub for stub in chosen.values() if not any(stub is excluded for excluded in self._excluded)]

    def _shared_stubs(self) -> list[tuple[ScriptTransport, int]]:
        """The stubs built before the test (module level, a fixture of wider scope) that it sent requests to.

        Each with the index of its first request in this test: only this test's requests are checked.
        """
        if self._watching is None or not self._check_hand_built:
            return []
        checked = {id(stub) for stub in self._checked_stubs()}
        return [(stub, first) for stub, first in self._watching.used if id(stub) not in checked]

    def __call__(
        self, script: ScriptLike | ScriptBuilder, *, intercept: bool | str | Iterable[str] = False, **kwargs: Any
    ) -> ScriptTransport:
        """A new `ScriptTransport` for `script` (`kwargs` go to it), checked at teardown.

        `intercept=True` (the known provider hosts), a list of hosts or `"*"`: the stub also
        intercepts every httpx/httpx2 client until the test ends. The marker's `strict`, `strict_skip`
        and `check_tool_input` are the defaults of the stub's; arguments given here win.
        """
        from .builder import ScriptBuilder
        from .transport import ScriptTransport

        kwargs = {**self._defaults, **kwargs}

        stub = script.build(**kwargs) if isinstance(script, ScriptBuilder) else ScriptTransport(script, **kwargs)
        if intercept is not False and intercept is not None:
            try:
                interception = stub.intercept(None if intercept is True else intercept)
                interception.__enter__()
            except BaseException:  # the test got no stub: nothing of it to check
                self._stubs[:] = [known for known in self._stubs if known is not stub]
                self._excluded.append(stub)
                raise
            self._interceptions.append(interception)
        self._adopt(stub)
        return stub

    def recorded(
        self,
        name: str | None = None,
        *,
        path: str | Path | None = None,
        upstream: Any = None,
        intercept: bool | str | Iterable[str] = False,
        **kwargs: Any,
    ) -> ScriptTransport | RecordingTransport:
        """The test's recorded script, as a transport: replayed, or recorded as `--wirescript-record` says.

        Args:
            name: The file's name without suffix, for a test with several recordings; default the
                test's name (its parameters included).
            path: The script file; default `<test dir>/scripts/<test module>/<name>.yaml`.
            upstream: Where a recording forwards to: default the real provider (the network guard
                then lets the known provider hosts through, and only them); a transport standing
                in for the provider, to test record mode itself.
            intercept: As the fixture's `intercept=`: the replaying stub, or the recorder, also takes
                the requests of every httpx/httpx2 client (and boto3 client) the app builds itself.
            kwargs: Passed to the replaying `ScriptTransport` (`hold_timeout`, `fallback`, `wires`).

        Returns:
            `none` (the default): a checked stub replaying the file; a missing file fails the test
            with the command that records it. `once`: the same, or a `RecordingTransport` when the
            file is missing. `new_episodes`: a recorder that replays the file and appends to it what
            runs past its end. `all`: a recorder, recording afresh. A recorder saves the file at teardown.

        """
        from .errors import UsageError
        from .files import load_script

        __tracebackhide__ = True
        if self._test is None:
            raise UsageError("wirescript.recorded(): only the pytest fixture knows its test")
        file = Path(path) if path is not None else _recorded_path(self._test, name)
        mode = self._record_mode
        exists = file.exists()
        if mode == "none" or (mode == "once" and exists):
            if not exists:
                pytest.fail(
                    f"wirescript: no recorded script at {file} for {self._test.nodeid}.\n"
                    f"Record it (once, against the real provider, with its API key set):\n"
                    f"    pytest '{self._test.nodeid}' --wirescript-record=once",
                    pytrace=False,
                )
            stub = self(load_script(file), intercept=intercept, **kwargs)
            if self._match_recorded:
                from .recording import recorded_summaries

                self._drift.append((stub, recorded_summaries(file.read_text(encoding="utf-8"))))
            return stub
        from .recording import Episodes, RecordingTransport
        from .transport import ScriptTransport

        if kwargs:
            raise UsageError(
                f"wirescript.recorded(): options ({', '.join(kwargs)}) configure the stub that replays the file, "
                f"and --wirescript-record={mode} records it instead: record without them (a recording takes "
                "name=, path=, upstream= and intercept=), and replay with them (--wirescript-record=none)"
            )
        if upstream is None and self._guard is not None:
            from .intercept import KNOWN_HOSTS

            self._guard.allow(sorted(KNOWN_HOSTS))
        forward = upstream
        if mode == "new_episodes" and exists:
            replay = ScriptTransport(load_script(file))
            # Not checked at teardown: past its end is where the new episodes begin, forwarded by design.
            self._excluded.append(replay)
            forward = Episodes(replay, upstream)
            self._closers.append(forward)
        recorder = RecordingTransport(file, upstream=forward)
        self._recorders.append(recorder)
        if intercept is not False and intercept is not None:
            interception = recorder.intercept(None if intercept is True else intercept)
            interception.__enter__()
            self._interceptions.append(interception)
        return recorder

    @property
    def guard(self) -> NetworkGuard | None:
        """The network guard of the test, or None with `@pytest.mark.wirescript(allow_network=True)`."""
        return self._guard

    def close(self) -> None:
        """End the interceptions and the network guard (the fixture calls it at teardown)."""
        if self._watching is not None:
            self._watching.end()
        while self._interceptions:
            self._interceptions.pop().__exit__(None, None, None)
        for recorder in self._recorders:
            recorder.save()
        for closer in self._closers:
            closer.close()
        if self._guard is not None:
            self._guard.__exit__(None, None, None)

    @property
    def stubs(self) -> list[ScriptTransport]:
        """Every stub made so far, in order, those the test built by hand included."""
        return self._checked_stubs()

    def release_all(self) -> None:
        """Release every stub's held requests (the fixture does it after the check), so no thread outlives the test."""
        for stub in self._checked_stubs():
            stub.release()
        for stub, _ in self._shared_stubs():
            stub.release()

    def requests_section(self) -> str | None:
        """What the stubs saw, one line per request, the SDK's own retries marked: the report section of a failure.

        At most `SECTION_REQUESTS` lines per stub (the first and the last ones), for stubs that received requests.
        """
        from .script import queue_label

        stubs = [(stub, 0) for stub in self._checked_stubs()] + self._shared_stubs()
        blocks = []
        retried = False
        for number, (stub, first) in enumerate(stubs, 1):
            records = [record for record in stub.requests if record.index >= first]
            if not records:
                continue
            lines = [_request_line(stub, record, records, queue_label) for record in records]
            if len(lines) > SECTION_REQUESTS:
                head = SECTION_REQUESTS // 4
                tail = SECTION_REQUESTS - head
                lines = [*lines[:head], f"  … {len(lines) - head - tail} request(s) not shown …", *lines[-tail:]]
            since = f", from requests[{first}] on (built before this test)" if first else ""
            name = f"stub {number} of {len(stubs)}" if len(stubs) > 1 else "the stub"
            blocks.append("\n".join([f"{name}: {stub.request_count} request(s){since}", *lines]))
            retried = retried or any(record.retry_count for record in records)
        if retried:
            blocks.append(
                "(The SDK retried on its own: build the client with max_retries=0, or script one turn per attempt.)"
            )
        return "\n".join(blocks) if blocks else None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise AttributeError(
            f"'StubFactory' object has no attribute {name!r}: the `wirescript` fixture is a factory; "
            f"make a stub first (stub = wirescript(script)), then use stub.{name}"
        )

    def report(self) -> str | None:
        """The teardown failure message, or None when the network was untouched and every stub went as scripted."""
        blocks = []
        guarded = self._guard.report() if self._guard is not None else None
        if guarded is not None:
            blocks.append(guarded)
        checked = self._checked_stubs()
        for number, stub in enumerate(checked, 1):
            sections = []
            if self._check_overflow:
                try:
                    stub.check(unused_turns=False, allow=cast("frozenset[ProblemKind]", self._allow))
                except AssertionError as exc:
                    kinds = sorted({p.kind for p in stub.problems} - self._allow)
                    shown = ", ".join(repr(k) for k in kinds) or "'hold_timeout'"
                    strict = ""
                    if "strict" in kinds:
                        strict = (
                            "; a strict refusal is what the real API would answer too: fix the request, or "
                            "turn its rule off with strict_skip as its line says"
                        )
                    sections.append(
                        f"{exc}\n(If the app is meant to get these errors, mark the test "
                        f"@pytest.mark.wirescript(allow=[{shown}]){strict}.)"
                    )
            if self._check_unused:
                try:
                    stub.check(unanswered=False)
                except AssertionError as exc:
                    if stub.requests:
                        hint = "(If that is on purpose, mark the test @pytest.mark.wirescript(check_unused=False).)"
                    else:
                        hint = (
                            "(This stub received no request at all: is it the client's transport? "
                            "http_client=httpx2.Client(transport=stub), or wirescript(script, intercept=True).)"
                        )
                    sections.append(f"{exc}\n{hint}")
            for drifting, summaries in self._drift:
                if drifting is stub:
                    from .recording import drift

                    changed = drift(stub.requests, summaries)
                    if changed:
                        sections.append(
                            "wirescript: the app asks something else than it did when the script was recorded:\n"
                            + "\n".join(f"  - {line}" for line in changed)
                            + "\n(Record it again: --wirescript-record=all; or drop match_recorded=True.)"
                        )
            sections.extend(self._over_budget(stub))
            if sections:
                head = [f"wirescript stub {number} of {len(checked)}:"] if len(checked) > 1 else []
                blocks.append("\n".join([*head, *sections]))
        for stub, first in self._shared_stubs():
            troubled = [p for p in stub.problems if p.index >= first and p.kind not in self._allow]
            if troubled:
                shown = ", ".join(repr(k) for k in sorted({p.kind for p in troubled}))
                title = (
                    f"wirescript: {len(troubled)} request(s) of this test to a stub built before it ({stub!r}: at "
                    "module level, or by a fixture of wider scope) were not answered as scripted:"
                )
                hint = (
                    "(If the app is meant to get these errors, mark the test "
                    f"@pytest.mark.wirescript(allow=[{shown}]). Its unused turns are not checked here: other tests "
                    "may use them.)"
                )
                more = [f"  … and {len(troubled) - 50} more"] if len(troubled) > 50 else []
                blocks.append("\n".join([title, *(f"  - {problem}" for problem in troubled[:50]), *more, hint]))
        return "\n".join(blocks) if blocks else None

    def _over_budget(self, stub: ScriptTransport) -> list[str]:
        """The marker's budgets a stub broke (`max_cost_usd`, `min_cache_hit`), each naming its cause."""
        max_cost, min_hit, start = self._budgets
        if (max_cost is None and min_hit is None) or not stub.requests:
            return []
        from .errors import UsageError

        bill, found = stub.bill, []
        if max_cost is not None:
            try:
                total = bill.total_usd
            except UsageError as exc:
                found.append(f"wirescript: max_cost_usd={max_cost} cannot be checked: {exc}")
            else:
                if total > max_cost:
                    top = max(bill, key=lambda row: row.usd or 0.0)
                    found.append(
                        f"wirescript: the bill is ${total:.6f}, over max_cost_usd={max_cost} ({len(bill)} request(s); "
                        f"the costliest: {top})"
                    )
        ratio = bill.cache_hit_ratio(from_request=start)
        if min_hit is not None and ratio < min_hit:
            rows = [row for row in bill if row.index >= start]
            worst = min(rows, key=lambda row: row.cache_read_input_tokens / (row.prompt_tokens or 1), default=None)
            cause = f"no request from requests[{start}] on was answered with a message"
            if worst is not None:
                why = stub._ledger.billing.changed(worst.index) if worst.derived else None
                if not worst.derived:
                    why = "its usage is scripted, not derived (usage='derive' works it out from the requests)"
                cause = (
                    f"requests[{worst.index}] read {worst.cache_read_input_tokens:,} of its {worst.prompt_tokens:,} "
                    f"input tokens from the cache" + (f": {why}" if why else "")
                )
            found.append(
                f"wirescript: the cache hit ratio from requests[{start}] on is {ratio:.2f}, below "
                f"min_cache_hit={min_hit}: {cause}"
            )
        return found


@pytest.fixture
def wirescript(request: pytest.FixtureRequest) -> Iterator[StubFactory]:
    """A factory of scripted LLM providers, each checked at teardown: call it with a script for a stub.

    The test fails at teardown when a request was not answered as scripted (a request the real API
    would refuse included) or a scripted turn was never requested.
    `@pytest.mark.wirescript(check_overflow=False, check_unused=False)` on the test, its class or its
    module turns either check off; `strict=False` or `strict_skip=[rule ids]` turn the strict request
    and answer rules off for the stubs the fixture makes, `check_tool_input=True` holds every tool call's
    input to its tool's schema (`wirescript(script, strict=...)` wins over the marker).

    During the test a network guard refuses any connection that is not to loopback, and any DNS
    lookup of a known provider host, at once (and fails the test at teardown, even when the app
    swallowed the error): `allowed_hosts=[...]` lets some hosts through, `allow_network=True`
    turns the guard off. Recording (`wirescript.recorded()` under `--wirescript-record=once`,
    `new_episodes` or `all`) lets the known provider hosts through, and only them.
    """
    options = _marker_options(request.node)
    guard = None
    if not options.pop("allow_network", False):
        from .guard import NetworkGuard, hold_patches, release_patches

        if hold_patches():  # laid once, at the first test that needs them; the guard of each test only switches on
            request.config.add_cleanup(release_patches)
        guard = NetworkGuard(allowed_hosts=options.pop("allowed_hosts", ())).__enter__()
    options.pop("allowed_hosts", None)
    record_mode = request.config.getoption(RECORD_OPTION, default="none")
    factory = StubFactory(**options, guard=guard, record_mode=record_mode, test=request.node)
    factory._watching = request.node.stash.get(_WATCHING, None)
    request.node.stash[_FACTORY] = factory
    try:
        yield factory
    finally:
        factory.close()
    try:
        message = factory.report()
    finally:
        factory.release_all()  # after the report, which lists them: no held thread leaks into the next test
    if message is not None:
        raise TeardownFailure(message, pytrace=False)


@pytest.fixture
def wirescript_server(wirescript: StubFactory) -> Iterator[Callable[..., ScriptServer]]:
    """Serve stubs over loopback HTTP to an app in another process; each server stops when the test ends.

    `wirescript_server(script, **kwargs)` makes a stub with the `wirescript` fixture (so it is checked
    at teardown, after its server stopped), serves it on `127.0.0.1` and a free port, and returns
    the running `ScriptServer`: point the app at `server.base_url`, assert on `server.stub`; a test
    runner that drives the control API gets `server.token` (its `X-Wirescript-Token` header;
    `server.control_headers`). A `ScriptTransport` may be passed instead of a script (it is checked
    if the `wirescript` fixture made it). Needs `wirescript[server]`.
    """
    from .errors import UsageError
    from .server import ScriptServer
    from .transport import ScriptTransport

    servers: list[ScriptServer] = []

    def serve(script: ScriptLike | ScriptBuilder | ScriptTransport, **kwargs: Any) -> ScriptServer:
        if isinstance(script, ScriptTransport):
            if kwargs:
                raise UsageError(
                    f"wirescript_server: options ({', '.join(kwargs)}) configure a new stub; "
                    "pass a script with them, or the ScriptTransport alone"
                )
            stub = script
        else:
            stub = wirescript(script, **kwargs)
        server = ScriptServer(stub)
        server.start()
        servers.append(server)
        return server

    yield serve
    for server in servers:
        server.stop()


RECORD_OPTION = "wirescript_record"
RECORD_MODES = ("none", "once", "new_episodes", "all")
"""`--wirescript-record`, in pytest-recording's vocabulary: never record, record what is missing,
replay and record what runs past the end, record everything afresh."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add `--wirescript-record`, in its own option group."""
    group = parser.getgroup("wirescript", "wirescript record mode")
    group.addoption(
        "--wirescript-record",
        dest=RECORD_OPTION,
        choices=RECORD_MODES,
        default="none",
        help=(
            "How wirescript.recorded() gets each test's script: none (default: replay, never touch the network), "
            "once (record a missing script), new_episodes (replay, and record what runs past the end), "
            "all (record every script afresh). Recording reaches the real providers."
        ),
    )


def _recorded_path(node: pytest.Item, name: str | None) -> Path:
    """`<test dir>/scripts/<test module>/<name>.yaml`, `name` defaulting to the test's (parameters included).

    A path another test of the session recorded to already fails this one: two tests never share a file.
    """
    from .recording._files import file_stem

    __tracebackhide__ = True
    path = Path(node.path)
    file = path.parent / "scripts" / path.stem / f"{file_stem(name if name is not None else node.name)}.yaml"
    owner = node.config.stash.setdefault(_RECORDED_BY, {}).setdefault(file, node.nodeid)
    if owner != node.nodeid:
        pytest.fail(
            f"wirescript.recorded(): {node.nodeid} and {owner} would share the recorded script {file}; "
            'give one of them its own name: wirescript.recorded("another-name")',
            pytrace=False,
        )
    return file


_RECORDED_BY = pytest.StashKey[dict[Path, str]]()
"""Which test of the session each recorded script belongs to."""


def _marker_options(node: pytest.Item) -> dict[str, Any]:
    """The marker options for `node`, the closest marker winning; a bad option fails the test's setup."""
    __tracebackhide__ = True
    options: dict[str, Any] = {}
    for owner, mark in node.iter_markers_with_node(MARKER):
        # The location is worked out only for a bad option: finding a module's line parses its source.
        if mark.args:
            pytest.fail(
                f"{_location(owner)}: @pytest.mark.wirescript takes keyword options only "
                f"({', '.join(f'{o}=...' for o in _OPTIONS)}), got positional {_args(mark.args)}",
                pytrace=False,
            )
        problem = _check(mark.kwargs)
        if problem is not None:
            pytest.fail(
                f"{_location(owner)}: @pytest.mark.wirescript({_kwargs(mark.kwargs)}): {problem}", pytrace=False
            )
        options = {**mark.kwargs, **options}
    return options


@functools.cache
def _options_model() -> type[Any]:
    """The marker's options, a keyword-only pydantic model (built on first use: pydantic loads lazily)."""
    from pydantic import BaseModel, ConfigDict, Field

    from .recorded import ProblemKind as Kind

    class MarkerOptions(BaseModel):
        """`@pytest.mark.wirescript(...)` options."""

        model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

        check_overflow: bool = True
        """Fail the test when a request was not answered as scripted (overflow, unknown endpoint, ...)."""
        check_unused: bool = True
        """Fail the test when a scripted turn was never requested."""
        allow_network: bool = False
        """Turn the network guard off: the test may connect anywhere."""
        allowed_hosts: list[str] | tuple[str, ...] = ()
        """Hosts (names, addresses, `*` patterns) the network guard lets through."""
        # loudness options
        allow: list[Kind] | tuple[Kind, ...] = ()
        """Problem kinds that do not fail the test (`"fault"`, `"hold_timeout"`, …)."""
        check_hand_built: bool = True
        """Check, at teardown, every `ScriptTransport` built during the test, not only the fixture's."""
        strict: bool = True
        """Check requests against the strict rules (the stubs' `strict=` default)."""
        strict_skip: list[str] | tuple[str, ...] = ()
        """Strict rule ids not to check, request and answer rules (the stubs' `strict_skip=` default)."""
        check_tool_input: bool = False
        """Hold every tool call's input to its tool's schema, strict or not (the stubs' `check_tool_input=` default)."""
        dialect: str | None = None
        """The host dialect the stubs answer as (the stubs' `dialect=` default: `wirescript.dialects()`)."""
        match_recorded: bool = False
        """Fail when a request replayed from `wirescript.recorded()` asks something else (model, last
        message, tools) than the request its turn was recorded for."""
        # budgets (docs/usage.md)
        usage: Any = None
        """`"derive"` (or a token counter): the stubs' `usage=` default."""
        prices: Any = None
        """Dollars per million tokens by model: the stubs' `prices=` default."""
        max_cost_usd: float | None = Field(default=None, ge=0)
        """Fail when a stub's bill (`stub.bill.total_usd`) is over this many dollars."""
        min_cache_hit: float | None = Field(default=None, ge=0, le=1)
        """Fail when less than this share of a stub's input tokens was read from the cache."""
        cache_from_request: int = Field(default=0, ge=0)
        """The first request `min_cache_hit` counts (the cold one before it writes)."""

    return MarkerOptions


def _check(kwargs: Mapping[str, Any]) -> str | None:
    """Validate marker options with the keyword-only model; the problem in words, or None."""
    import difflib

    from pydantic import ValidationError

    try:
        _options_model()(**kwargs)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            name = str(error["loc"][0]) if error["loc"] else "?"
            if error["type"] == "extra_forbidden":
                close = difflib.get_close_matches(name, _OPTIONS, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                problems.append(f"unknown option {name!r}{hint} (options: {', '.join(_OPTIONS)})")
            elif name == "allow":
                from typing import get_args

                from .recorded import ProblemKind

                value = kwargs.get(name)
                problems.append(
                    f"allow must be a list of problem kinds ({', '.join(get_args(ProblemKind))}), "
                    f"got {type(value).__name__} {value!r}"
                )
            elif name == "allowed_hosts":
                value = kwargs.get(name)
                problems.append(f"allowed_hosts must be a list of host names, got {type(value).__name__} {value!r}")
            elif name == "strict_skip":
                value = kwargs.get(name)
                problems.append(f"strict_skip must be a list of strict rule ids, got {type(value).__name__} {value!r}")
            elif name in ("max_cost_usd", "min_cache_hit", "cache_from_request"):
                value = kwargs.get(name)
                expected = {
                    "max_cost_usd": "a number of dollars, 0 or more",
                    "min_cache_hit": "a share of input tokens, from 0 to 1",
                    "cache_from_request": "a request number, 0 or more",
                }[name]
                problems.append(f"{name} must be {expected}, got {type(value).__name__} {value!r}")
            else:
                value = error.get("input")
                problems.append(f"{name} must be True or False, got {type(value).__name__} {value!r}")
        return "; ".join(dict.fromkeys(problems))
    if kwargs.get("usage") is not None or kwargs.get("prices") is not None:
        from ._core.bill import parse_prices, parse_usage
        from .errors import ScriptError

        try:
            parse_usage(kwargs.get("usage"))
            parse_prices(kwargs.get("prices"))
        except ScriptError as exc:
            return str(exc)
    if kwargs.get("strict_skip"):
        from .errors import ScriptError
        from .strict import skip_ids

        try:
            skip_ids(kwargs["strict_skip"], outside=True)  # an outside wire's rules: checked by its stub
        except ScriptError as exc:
            return str(exc)
    if kwargs.get("dialect") is not None:
        from .errors import UsageError
        from .wires import dialect_wires

        try:
            dialect_wires(kwargs["dialect"])
        except UsageError as exc:
            return str(exc)
    hosts = kwargs.get("allowed_hosts")
    if hosts:
        from .errors import UsageError
        from .intercept import host_matcher

        try:
            host_matcher(hosts)
        except UsageError as exc:
            return f"allowed_hosts: {exc}"
    return None


def _location(node: Any) -> str:
    """Where a marker was written: `tests/test_x.py:12`.

    A test function or class: its first decorator line. A module: its `pytestmark` assignment, or the
    path alone when there is none.
    """
    path, line = Path(node.path), None
    reportinfo = getattr(node, "reportinfo", None)
    if isinstance(node, pytest.Module):
        line = _pytestmark_line(path)
    elif reportinfo is not None:
        path_or_str, lineno, _ = reportinfo()
        path, line = Path(path_or_str), lineno
    try:
        shown = str(path.relative_to(node.config.invocation_params.dir))
    except ValueError:
        shown = str(path)
    return f"{shown}:{line + 1}" if line is not None else shown


def _pytestmark_line(path: Path) -> int | None:
    """The 0-based line of the module's `pytestmark` assignment that names wirescript, if any.

    Top-level assignments are read, those inside top-level `if`, `try` and `with` blocks included;
    the last one naming `wirescript` wins, else the last one (it may name a list built elsewhere).
    """
    import ast

    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
    except (OSError, SyntaxError, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    found: list[tuple[int, bool]] = []
    blocks = [tree.body]
    while blocks:
        for statement in blocks.pop():
            if isinstance(statement, (ast.If, ast.Try, ast.With)):
                blocks.extend(
                    getattr(statement, name)
                    for name in ("body", "orelse", "finalbody")
                    if getattr(statement, name, None)
                )
                blocks.extend(handler.body for handler in getattr(statement, "handlers", ()))
                continue
            if isinstance(statement, ast.Assign):
                targets: list[ast.expr] = list(statement.targets)
            elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
                targets = [statement.target]
            else:
                continue
            names = (node for target in targets for node in ast.walk(target))  # tuple targets included
            if any(isinstance(name, ast.Name) and name.id == "pytestmark" for name in names):
                text = ast.get_source_segment(source, statement) or ""
                found.append((statement.lineno - 1, "wirescript" in text))
    if not found:
        return None
    found.sort()
    naming = [line for line, names_wirescript in found if names_wirescript]
    return naming[-1] if naming else found[-1][0]


def _args(args: tuple[Any, ...]) -> str:
    return ", ".join(repr(a) for a in args)


def _kwargs(kwargs: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def pytest_configure(config: pytest.Config) -> None:
    """Register the `wirescript` marker."""
    config.addinivalue_line("markers", _MARKER_HELP)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """Watch the stubs of a test that uses the fixture from before its fixtures are set up; check a marker anyway.

    The marker's options are checked on tests that do not use the fixture too, so a typo is never silent.
    """
    global _current
    uses = "wirescript" in getattr(item, "fixturenames", ())
    if not uses and item.get_closest_marker(MARKER) is not None:
        _marker_options(item)
    if uses or "wirescript._core.ledger" in sys.modules:  # a test without the fixture: its stubs nothing checks warn
        watching = _Watching(checked=uses)
        item.stash[_WATCHING] = watching
        _current = watching
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Iterator[Any]:
    """A stub built by a fixture of wider scope than the test is not the test's own: it may serve other tests."""
    watching = _current
    if watching is None or fixturedef.scope == "function":
        return (yield)
    births, watching.watch.births = watching.watch.births, False
    try:
        return (yield)
    finally:
        watching.watch.births = births


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Stop watching once every fixture of the test is torn down (the fixture stops first, at its own teardown).

    In a test without the fixture, a stub it built that nothing checked, with turns never requested,
    warns (`UncheckedStubWarning`) here rather than whenever it is collected.
    """
    try:
        yield
    finally:
        watching = item.stash.get(_WATCHING, None)
        if watching is not None:
            watching.end()
        item.stash[_FACTORY] = None
    if watching is not None and not watching.checked:
        __tracebackhide__ = True
        watching.warn()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test shows what its stubs saw; wirescript's teardown failure stays a failure under `xfail`.

    The section lists each request of the test in one line (the SDK's own retries marked), as
    pytest shows captured logs. pytest's `xfail` turns any exception of a test, its teardown's
    included, into an expected failure: a test marked `xfail` whose stub went wrong would pass
    green, so that report is made an error again.
    """
    report = yield
    if call.when == "call" and report.failed:
        factory = item.stash.get(_FACTORY, None)
        if factory is not None:
            try:
                section = factory.requests_section()
            except Exception as exc:  # a report section must never hide the test's own failure
                section = f"(wirescript could not list the requests: {type(exc).__name__}: {exc})"
            if section:
                report.sections.append(("wirescript requests", section))
    elif (
        call.when == "teardown"
        and hasattr(report, "wasxfail")
        and call.excinfo is not None
        and isinstance(call.excinfo.value, TeardownFailure)
    ):
        report.outcome = "failed"
        del report.wasxfail
    return report


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """Show an `ErrorCase` of the error catalog by its id in test ids (`[429-rate_limit_error]`)."""
    catalog = sys.modules.get("wirescript.catalog")
    if catalog is not None and isinstance(val, catalog.ErrorCase):
        return str(val.id)
    return None
