"""The record builder: a neutral request (`_exchange.Request`) becomes a `RecordedRequest`.

It finds the wire that serves the request (by method, path and host), reads the headers, query,
credential and JSON body, and lets the wire parse the provider-level fields. Credentials are
redacted here, before anything is stored: the wires' credential headers and query names, the
generic ones (`authorization`, `cookie`, …) and any header whose name looks like a credential.
"""

from __future__ import annotations

import functools
import json
import operator
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeGuard, TypeVar
from urllib.parse import parse_qsl

from pydantic_core import from_json

from .._exchange import UNREADABLE, Request
from .._models import construct, fits
from ..recorded import (
    _EMPTY_DICT,
    _EMPTY_LIST,
    REDACTED,
    SENSITIVE_HEADERS,
    RecordedRequest,
    Secret,
    is_sensitive_header,
)
from ..script import Turn
from ..sse import json_dumps
from ..wires import Addresses
from ..wires._declared import declared
from ..wires._later import LaterWires
from ..wires.base import Item, Parsed, Wire
from .cursor import Ask, Decision, Refusal
from .report import failed
from .signal import Gate

__all__ = [
    "UNREADABLE",
    "Arrival",
    "Attempts",
    "Declared",
    "Vocabulary",
    "declared_vocabulary",
    "may_be_retried",
    "read",
    "read_item",
]


class Arrival:
    """A request on its way down the core: its record, who answers it, what was decided, the gate it waits at.

    `read` makes it (with the refusal of a request that cannot be served, if so), the ledger decides
    it and the renderer answers it.
    """

    __slots__ = ("answerer", "attempt", "decision", "draw", "gate", "record", "wire")

    def __init__(self, record: RecordedRequest, wire: Wire | None, answerer: Wire | None, refusal: Refusal | None):
        self.record = record
        self.wire = wire
        """The wire that serves it, or None: no wire can."""
        self.answerer = answerer
        """The wire whose error envelope a refusal is sent in: the serving wire, or one whose host it is."""
        self.decision: Decision | Ask | None = refusal
        """Its turn, a turnless answer, or why it gets none; None until the ledger decides (or `read` refuses).
        An `Ask` only after `Ledger.admit(request, ask=False)`, until `Ledger.ask` or `Ledger.late` decides it."""
        self.gate: Gate | None = None
        """The hold period it arrived in, or None: not held."""
        self.attempt: _Key | None = None
        """The key `Attempts.answered` is told its decision under, when the stub derives its retry count."""
        self.draw: Any = None
        """The turns a turnless request drew for the requests inside it (the ledger's `Drawing`), until answered."""


class Vocabulary:
    """What the stub's wires call a credential, in headers and in the query, and the endpoints they serve.

    It also keeps one copy of each header the stub has seen, decoded: an SDK sends the same twenty
    headers with every request, so records share those strings instead of each holding its own (most
    of what a small record would cost), and each is decoded and classified once, not per request.
    """

    __slots__ = (
        "_heads",
        "_kept",
        "_pairs",
        "_queries",
        "_secrets",
        "_sharing",
        "_texts",
        "addresses",
        "first",
        "found",
        "headers",
        "per_request",
        "query",
        "rest",
        "retry_headers",
        "walked",
        "wires",
    )

    def __init__(
        self,
        wires: Sequence[Wire],
        *,
        addresses: Addresses | None = None,
        first: int = 0,
        defaults: bool = False,
        declared: Declared | None = None,
        every: Sequence[Wire] | None = None,
    ) -> None:
        """The vocabulary of `wires`, walked in order, and of the wires `addresses` serves.

        `declared`: what `declared_vocabulary` works out over these wires, when known (the default
        wires'); `every`: the walked wires then the addressed ones, as one sequence (a tuple, or the
        default wires' run of stand-ins), when the caller has it.
        """
        self.walked: Sequence[Wire] = wires if wires.__class__ is LaterWires else tuple(wires)
        """The wires tried in order, each asked whether it `matches` (the default wires: a run of them)."""
        addressed = addresses.wires if addresses else ()
        self.addresses = addresses if addressed else None
        """The wires served by address (a stub's built-in host dialects), tried after the first `first`
        walked wires (routes, `wires=`) and before the others; None when there are none."""
        self.first = self.walked[:first] if first else ()
        self.rest = self.walked[first:] if first else self.walked
        count = len(self.walked) + len(addressed)
        self.wires = every if every is not None and len(every) == count else (*self.walked, *addressed)
        if declared is None:
            declared = declared_vocabulary(self.walked, addressed, keeping=defaults)
        (self.headers, self.query, self.retry_headers, self.per_request), shared = declared
        """`retry_headers`: the headers the wires' SDKs number their attempts in (`Wire.retry_count_header`),
        usually one; `per_request`: the headers they make new for every request (`Wire.per_request_headers`):
        neither such a pair nor a run of pairs holding one is kept, as neither comes again."""
        self._heads: dict[tuple[tuple[bytes, bytes], ...], tuple[dict[str, str], tuple[str, ...]]] = {}
        """Per run of raw pairs (a request's all but its last): the headers and credential names they read to."""
        self._sharing = _SHARING
        """How many more runs this stub may give every stub (`_RUNS`) when it reads one none read before."""
        self._pairs: dict[tuple[bytes, bytes], _Pair] = {}
        """Per raw (name, value) whose value is a credential: the lower-cased name, the value and True (every
        other pair is read once per process, for every stub: `_PUBLIC`)."""
        self._texts: dict[str, str] = {}
        """One copy of each method and path seen (an SDK sends the same few with every request)."""
        self._secrets: dict[str, Secret] = {}
        """One `Secret` per API key seen (a client sends its one key with every request)."""
        self._queries: dict[bytes, dict[str, str]] = {}
        """Per raw query seen (google-genai sends `alt=sse` with every stream): what it parses to, copied per record."""
        self._kept = shared if defaults else 0
        """How many wires, in the order asked (by address, then walked), a found one is kept for: those asked
        before any whose paths another API shares (`keeps`). A count, not a set of the wires: a set of twenty
        wires was a quarter of a stub's memory, for a question asked only when a request is walked."""
        self.found: dict[tuple[str, str, str, int | None], Wire] | None = {} if defaults else None
        """For a stub of the default wires only (whose `matches` read nothing but the method, path, host and
        port): the wire each such request was found to be served by, so that the next one is not walked
        again. A wire asked after one whose paths another API shares (`Wire.shared_paths`: it reads
        headers) is never kept."""

    def keeps(self, at: int) -> bool:
        """Whether the wire at `at` in `wires` is one a found one is kept for (asked before any that shares paths)."""
        walked = len(self.walked)
        asked = at + len(self.wires) - walked if at < walked else at - walked  # its place in the order asked
        return asked < self._kept

    def text(self, value: str) -> str:
        """The stub's one copy of a short, often repeated string (a method, a path): records share it."""
        return _one_copy(self._texts, value, str)

    def parse_query(self, raw: bytes) -> dict[str, str]:
        """A fresh dict of a raw query's names and values, as `parse_qsl` reads it (the last of a repeated name)."""
        parsed = dict(parse_qsl(raw.decode("ascii", "replace")))
        if len(raw) <= _SHARED_LONGEST and len(self._queries) < _SHARED_MOST:
            self._queries[raw] = dict(parsed)  # its own copy: a record's dict is redacted in place, and is the user's
        return parsed

    def secret(self, key: str) -> Secret:
        """The stub's one `Secret` of `key`: every record of a client's requests shares it (it is immutable)."""
        return _one_copy(self._secrets, key, Secret)

    @property
    def endpoints(self) -> str:
        """The endpoints the wires serve, for the answer to one none of them does."""
        return ", ".join(w.endpoint for w in self.walked)

    def read_headers(self, raw_headers: Sequence[tuple[bytes, bytes]]) -> tuple[dict[str, str], Sequence[str]]:
        """The headers by lower-case name (repeats joined with `, `), and the names whose values are credentials.

        Read as httpx's `headers.items()` reads them. A pair seen before is looked up, not decoded
        again; only ASCII pairs are kept (they decode alike in every encoding). A request with any
        other is decoded whole as httpx decodes one: UTF-8 when all of it is, else ISO-8859-1.

        An SDK sends the same headers with every request but the last, `Content-Length` (httpx adds
        it last), so all pairs but the last are also looked up together: what they read to is kept
        once per such run of pairs, and only the last pair is read on its own. (A run with a
        non-ASCII pair reads alike whatever follows it: an ASCII last pair leaves its encoding as it
        is, and a request whose last pair is not ASCII is read whole.)
        """
        count = len(raw_headers)
        if count < 2:
            return self._read_pairs(raw_headers, 0, {}, [])
        head = tuple(raw_headers[: count - 1])
        known = self._heads.get(head)
        if known is not None:  # the usual case: a copy of what these pairs read to, then the last pair
            template, names = known
            last = raw_headers[count - 1]
            pair = _PUBLIC.get(self.headers, _NONE).get(last) or self._pairs.get(last)
            if pair is None or pair[0] in template:  # a new pair, or a repeated name: read as every pair is
                return self._read_pairs(raw_headers, count - 1, template.copy(), names)
            found = template.copy()
            found[pair[0]] = pair[1]
            return found, (*names, pair[0]) if pair[2] else names
        secret: Sequence[str]
        shared = _shared_run(self.headers, head)
        if shared is not None:  # a run an earlier stub read (its credentials and per-request values blanked)
            found, secret, again = shared
        else:
            found, secret = self._read_pairs(head, 0, {}, [])
            again = self.per_request.isdisjoint(found)
            if self._sharing:  # a stub's first few runs: a run that never comes again costs no more than these
                self._sharing -= 1
                _share_run(self.headers, self.per_request, head, found, secret)
        if again and len(self._heads) < _HEADS_MOST:  # a run that can come again
            self._heads[head] = (found.copy(), tuple(secret))
        return self._read_pairs(raw_headers, count - 1, found, secret)

    def _read_pairs(
        self, raw_headers: Sequence[tuple[bytes, bytes]], start: int, found: dict[str, str], secret: Sequence[str]
    ) -> tuple[dict[str, str], Sequence[str]]:
        """`found` and `secret` with the pairs from `start` on read in (a request with a non-ASCII pair: read whole)."""
        pairs = self._pairs
        public = _PUBLIC.get(self.headers, _NONE)  # the pairs any stub of these credential names read
        per_request = self.per_request
        for index in range(start, len(raw_headers)):
            raw = raw_headers[index]
            pair = public.get(raw) or pairs.get(raw)
            if pair is None:
                raw_name, raw_value = raw
                if not (raw_name.isascii() and raw_value.isascii()):
                    return self._read_encoded(raw_headers)
                pair = self._classified(raw_name.lower().decode("ascii"), raw_value.decode("ascii"))
                if len(raw_value) > _SHARED_LONGEST or pair[0] in per_request:
                    pass  # longer values are ids and tokens, and a per-request one never comes again
                elif not pair[2]:
                    public = _publish(self.headers, raw, pair)
                elif len(pairs) < _SHARED_MOST:
                    pairs[raw] = pair  # a credential: kept by this stub alone
            name, value, is_secret = pair
            if name in found:  # a repeated header: joined, as `items()` joins it
                found[name] += f", {value}"
            else:
                found[name] = value
                if is_secret:
                    secret = [*secret, name]
        return found, secret

    def _read_encoded(self, raw_headers: Sequence[tuple[bytes, bytes]]) -> tuple[dict[str, str], Sequence[str]]:
        """`read_headers` for a request with a non-ASCII header: one encoding for all of it, as httpx picks it."""
        try:
            for raw_name, raw_value in raw_headers:
                raw_name.decode("utf-8")
                raw_value.decode("utf-8")
            encoding = "utf-8"
        except UnicodeDecodeError:
            encoding = "iso-8859-1"
        found: dict[str, str] = {}
        secret: list[str] = []
        for raw_name, raw_value in raw_headers:
            name, value, is_secret = self._classified(raw_name.lower().decode(encoding), raw_value.decode(encoding))
            if name in found:
                found[name] += f", {value}"
            else:
                found[name] = value
                if is_secret:
                    secret.append(name)
        return found, secret

    def _classified(self, name: str, value: str) -> tuple[str, str, bool]:
        return name, value, name in self.headers or is_sensitive_header(name)


_CREDENTIALS = operator.attrgetter(
    "credential_headers", "credential_query", "retry_count_header", "per_request_headers"
)


Declared = tuple[tuple[frozenset[str], frozenset[str], tuple[str, ...], frozenset[str]], int]
"""What a `Vocabulary` works out over its wires' declarations: its credential names, retry-count headers and
per-request headers (`_credentials`), and how
many of its wires in the order asked (by address, then walked) come before the first whose paths another
API shares (`Wire.shared_paths`)."""


def declared_vocabulary(walked: Sequence[Wire], addressed: Sequence[Wire], *, keeping: bool = True) -> Declared:
    """What `Vocabulary` works out over the declarations of these wires (walked, and served by address).

    `keeping`: whether a found wire may be kept at all (a stub of the default wires); if not, none is.
    """
    asked = (*addressed, *walked) if keeping else ()
    shared = next((at for at, wire in enumerate(asked) if wire.shared_paths), len(asked))
    return declared(walked, "credentials", _declared_credentials), shared


def _declared_credentials(
    wires: Sequence[Wire],
) -> tuple[frozenset[str], frozenset[str], tuple[str, ...], frozenset[str]]:
    """`_credentials` of what these wires declare."""
    found = tuple(map(_CREDENTIALS, wires))
    try:
        return _credentials(found)
    except TypeError:  # a wire of one's own declares them in lists
        return _credentials.__wrapped__(found)


@functools.lru_cache(maxsize=64)  # every stub of the default wires declares the same: worked out once
def _credentials(
    declared: tuple[tuple[Iterable[str], Iterable[str], str | None, Iterable[str]], ...],
) -> tuple[frozenset[str], frozenset[str], tuple[str, ...], frozenset[str]]:
    """`Vocabulary`'s credential headers, query names, retry-count and per-request headers of wires declaring these."""
    headers = SENSITIVE_HEADERS.union(*(names for names, _, _, _ in declared))
    query = frozenset(name.lower() for _, names, _, _ in declared for name in names) | {"api_key", "api-key"}
    retry = tuple(dict.fromkeys(h.lower() for _, _, h, _ in declared if h))
    return headers, query, retry, frozenset(name.lower() for *_, names in declared for name in names)


_Pair = tuple[str, str, bool]
"""A raw header pair read: its lower-cased name, its value, and whether it is a credential."""

_PUBLIC: dict[frozenset[str], dict[tuple[bytes, bytes], _Pair]] = {}
"""Per set of credential header names (`Vocabulary.headers`, one set shared by every stub of the same
wires): each raw ASCII pair that is no credential, as it reads, for every stub of the process. What a
pair reads to is a function of its bytes and of that set alone, so an entry cannot go stale; a pair
whose value is a credential is never kept here (only by the stub that read it, in `Vocabulary._pairs`),
so no API key outlives its stub. An SDK sends the same twenty headers from every client of every
test: a test's first request finds them read."""

_NONE: dict[tuple[bytes, bytes], _Pair] = {}

_PUBLIC_MOST = 16
"""How many sets of credential header names the process keeps pairs for (a suite's few sets of wires)."""


def _publish(names: frozenset[str], raw: tuple[bytes, bytes], pair: _Pair) -> dict[tuple[bytes, bytes], _Pair]:
    """Keep `pair` (no credential) for every stub whose wires call `names` credentials; the table it is in."""
    table = _PUBLIC.get(names)
    if table is None:
        if len(_PUBLIC) >= _PUBLIC_MOST:  # the oldest set of wires is likely done with
            del _PUBLIC[next(iter(_PUBLIC))]
        table = _PUBLIC[names] = {}
    if len(table) >= _SHARED_MOST:  # a suite's many distinct headers: the newest are kept
        table.clear()
    table[raw] = pair
    return table


_Run = tuple[
    tuple[tuple[int, int, tuple[tuple[bytes, bytes], ...]], ...],
    tuple[tuple[int, bytes, str], ...],
    dict[str, str],
    tuple[str, ...],
    bool,
]
"""A run of raw pairs as every stub may read it (`_RUNS`): its pairs between the blanked ones, by (start, stop,
pairs); each blanked pair's (position, raw name, name); what the run reads to, the blanked names' values empty;
its credential names in order; and whether it holds no per-request pair (so that it can come again)."""

_RUNS: dict[tuple[frozenset[str], int], list[_Run]] = {}
"""Per set of credential header names (as `_PUBLIC`) and length: the runs of all-but-the-last pairs a stub
read, with every credential's and per-request header's value blanked, and every value longer than
`_SHARED_LONGEST` (an id or a token, which `_PUBLIC` does not keep either). A stub's first request finds the run
its SDK sends read by an earlier test's stub, and decodes only the blanked values, instead of looking up
every pair. Only names and public values are kept (what `_PUBLIC` keeps pair by pair), so no API key
outlives its stub; only runs of ASCII pairs with no repeated name are kept (they read pair by pair, in order)."""

_RUNS_MOST = 64
"""How many (credential names, length) the process keeps runs for (a suite's SDKs send a few runs each)."""
_SHARING = 4
"""How many runs one stub may add to `_RUNS` (a client sends one or two)."""
_RUNS_EACH = 8
"""How many runs of one length it keeps per set of credential names."""


def _shared_run(
    names: frozenset[str], head: tuple[tuple[bytes, bytes], ...]
) -> tuple[dict[str, str], tuple[str, ...], bool] | None:
    """What `head` reads to, from the run an earlier stub of these credential names read; None if none did."""
    runs = _RUNS.get((names, len(head)))
    if runs is None:
        return None
    for segments, blanks, template, secret, again in runs:
        for start, stop, pairs in segments:
            if head[start:stop] != pairs:
                break
        else:
            found = template.copy()
            for at, raw_name, name in blanks:
                raw_at, value = head[at]
                if raw_at != raw_name or not value.isascii():  # another name, or a value read with the whole request
                    return None
                found[name] = value.decode("ascii")
            return found, secret, again
    return None


def _share_run(
    names: frozenset[str],
    per_request: frozenset[str],
    head: tuple[tuple[bytes, bytes], ...],
    found: dict[str, str],
    secret: Sequence[str],
) -> None:
    """Keep the run `head` (which read to `found`, `secret`) for every stub of these credential names, blanked."""
    if len(found) != len(head):  # a repeated name (its values joined): read pair by pair
        return
    segments: list[tuple[int, int, tuple[tuple[bytes, bytes], ...]]] = []
    blanks: list[tuple[int, bytes, str]] = []
    template = found.copy()
    start = 0
    for at, (raw_name, raw_value) in enumerate(head):
        if not (raw_name.isascii() and raw_value.isascii()):  # read with the whole request's encoding
            return
        name = raw_name.lower().decode("ascii")
        if name in secret or name in per_request or len(raw_value) > _SHARED_LONGEST:  # kept by no table
            blanks.append((at, raw_name, name))
            template[name] = ""
            if at > start:
                segments.append((start, at, head[start:at]))
            start = at + 1
    if len(head) > start:
        segments.append((start, len(head), head[start:]))
    run = (tuple(segments), tuple(blanks), template, tuple(secret), per_request.isdisjoint(found))
    key = (names, len(head))
    runs = _RUNS.get(key)
    if runs is not None and len(runs) < _RUNS_EACH:
        runs.append(run)
        return
    if runs is None and len(_RUNS) >= _RUNS_MOST:  # a suite's many distinct runs: the newest are kept
        _RUNS.clear()
    _RUNS[key] = [run]


_Shared = TypeVar("_Shared")


def _one_copy(cache: dict[str, _Shared], key: str, make: Callable[[str], _Shared]) -> _Shared:
    """`cache`'s value for `key`, made and kept on first sight when the key is short and there is room."""
    found = cache.get(key)
    if found is None:
        found = make(key)
        if len(key) <= _SHARED_LONGEST and len(cache) < _SHARED_MOST:
            cache[key] = found
    return found


_HEADS_MOST = 64
"""How many distinct runs of all-but-the-last headers a stub keeps what they read to (an SDK sends one or two)."""
_SHARED_MOST = 4096
"""How many distinct headers a stub keeps one decoded copy of."""
_SHARED_LONGEST = 256
"""The longest header value shared (longer ones are ids and tokens, rarely repeated). botocore's
`User-Agent` runs to about 170 bytes and comes with every request, so the bound lies above it."""

_FIELDS_SET = set(RecordedRequest.model_fields)
"""The fields a record is built with: all of them, so every record can share one such set."""

_constructed: Callable[[dict[str, Any]], RecordedRequest] = functools.partial(construct, RecordedRequest, _FIELDS_SET)
"""`RecordedRequest.model_construct(_FIELDS_SET, **values)`, for `values` holding every field in declared order
(`_models.construct`). `tests/test_record_build.py` proves the two build equal records, field for field and in
order, and names the pydantic versions it holds for."""

_fits = fits


def _slow(values: dict[str, Any]) -> RecordedRequest:
    return RecordedRequest.model_construct(_FIELDS_SET, **values)


_record: Callable[[dict[str, Any]], RecordedRequest] = _constructed if _fits(RecordedRequest) else _slow
"""How a record is built from all its fields: directly where the model allows it (checked once), else
`model_construct`."""


def read(request: Request, vocabulary: Vocabulary) -> Arrival:
    """Read `request` into its record (index 0: the ledger numbers it) and find the wire that serves it.

    Never raises: a wire failing while it is asked (`matches`, `parse`, `api_key`, `claims`) makes
    the request a loud problem, as a body no wire can read does.
    """
    texts = vocabulary._texts  # the stub's one copy of each method and path: looked up here, made by `text`
    method: str = texts.get(request.method) or vocabulary.text(request.method)
    path: str = texts.get(request.path) or vocabulary.text(request.path)
    host = request.host
    headers, secret_headers = vocabulary.read_headers(request.headers)
    raw_query = request.query
    query: dict[str, str]
    if raw_query:  # a query seen before is copied, not parsed again
        known = vocabulary._queries.get(raw_query)
        query = known.copy() if known is not None else vocabulary.parse_query(raw_query)
    else:
        query = _EMPTY_DICT  # the one empty dict records share (`recorded._EmptyDict`)
    content = request.body
    refusal: Refusal | None = None
    wire: Wire | None = None
    found = vocabulary.found
    key = (method, path, host, request.port)
    if found is None or (wire := found.get(key)) is None:  # else: the wire such a request was found to be served by
        at = _FOUND_AT.get(key) if found is not None else None
        if found is not None and at is not None:  # another stub of the default wires found it: its own at that place
            wire = found[key] = vocabulary.wires[at]
        else:
            wire, refusal = _walked(vocabulary, method, path, host, headers, request)
            if wire is not None and found is not None and len(found) < _FOUND_MOST:
                at = _position(vocabulary.wires, wire)
                if at is not None and vocabulary.keeps(at):
                    found[key] = wire
                    if len(_FOUND_AT) < _FOUND_MOST:
                        _FOUND_AT[key] = at
    body: Any
    body_error: str | None
    encoding = headers.get("content-encoding")
    try:  # the common body, plain JSON: read here (`_parse_body` decides every other, as it would this one)
        if encoding is not None or not content:
            raise ValueError
        body, body_error = from_json(content), None
    except ValueError:
        body, body_error = _parse_body(content, encoding or "")
    parsed: Parsed | None = None
    if refusal is not None:
        pass
    elif request.unreadable is not None:
        refusal = Refusal("unreadable", request.unreadable)
    elif wire is None:
        refusal = Refusal(
            "unknown_endpoint",
            f"no wire serves this endpoint (known: {vocabulary.endpoints}). Nothing was consumed from the script.",
        )
    elif not isinstance(body, dict) and not _bodiless(wire, method, path, content):
        refusal = Refusal(
            "unreadable",
            f"the body is not a JSON object ({body_error or 'not an object'}); nothing was consumed from the script.",
        )
    else:
        try:
            parsed = wire.parse(body if isinstance(body, dict) else {}, path)  # a turnless GET has no body
        except Exception as exc:  # a wire's bug must be loud, not a retried "Connection error."
            refusal = Refusal(
                "unreadable",
                f"the {wire.name} wire could not parse the body ({type(exc).__name__}: {exc}); "
                "nothing was consumed from the script.",
            )
    api_key, broken = _api_key(wire, vocabulary.wires, headers, query)
    refusal = broken or refusal
    # Every field is given, from values of the declared types (the parsers guarantee them), so the record is
    # built without validating them again, and all records share the one set of fields given.
    query = _redacted(query, vocabulary.query) if query else query
    for name in secret_headers:  # redacted in place, in order (`_without`)
        headers[name] = REDACTED
    secret = None if api_key is None else vocabulary._secrets.get(api_key)  # (a `Secret` has a length: not `or`)
    if secret is None and api_key is not None:
        secret = vocabulary.secret(api_key)
    retry_count: int | None = None
    for name in vocabulary.retry_headers:  # the attempt number the client sent (`_retry_count`), usually in one
        value = headers.get(name)
        if value is not None:
            retry_count = int(value) if value.isdecimal() and value.isascii() else _retry_count(headers, (name,))
            break
    provider = wire.name if wire is not None else None
    # no wire read it: fresh empty values, so records share nothing mutable
    fields = parsed if parsed is not None else Parsed(conversation=[], all_tool_results=[])
    record = _record(
        {
            "index": 0,
            "provider": provider,
            "method": method,
            "path": path,
            "query": query,
            "path_params": _EMPTY_DICT,
            "headers": headers,
            "content": content,
            "body": body,
            "body_error": body_error,
            "model": fields.model,
            "system": fields.system,
            "messages": fields.messages,
            "conversation": fields.messages if fields.conversation is None else fields.conversation,
            # an empty one: the one empty list records share (a fresh one each is a sixth of a record's memory)
            "tools": fields.tools or _EMPTY_LIST,
            "tool_names": fields.tool_names or _EMPTY_LIST,
            "tool_results": fields.tool_results or _EMPTY_LIST,
            "all_tool_results": (fields.tool_results if fields.all_tool_results is None else fields.all_tool_results)
            or _EMPTY_LIST,
            "stream": fields.stream,
            "max_tokens": fields.max_tokens,
            "temperature": fields.temperature,
            "api_key": secret,
            "retry_count": retry_count,
            "turn_index": None,
            "queue": None,
            "answered_by": None,
            "received_at": 0.0,
            "problem": None,
            "custom_id": None,
            "batch": None,
        }
    )
    answerer = wire
    if wire is None:
        answerer, broken = _claimed(vocabulary.wires, host)
        refusal = broken or refusal
    return Arrival(record, wire if parsed is not None and refusal is None else None, answerer, refusal)


_FOUND_MOST = 256
"""How many distinct methods and URLs a stub of the default wires keeps the serving wire of (and the process)."""

_FOUND_AT: dict[tuple[str, str, str, int | None], int] = {}
"""Per method, path, host and port: the place, among its wires, of the wire that serves it in a stub of the
default wires. Every such stub has the same wires in the same order, and their `matches` read nothing else
(what `Vocabulary.found` keeps per stub), so a test's first request is not walked past wires, nor builds
the stand-ins it walks past, when an earlier stub found the wire. Only wires a stub keeps are placed here."""


def _position(wires: Sequence[Wire], wire: Wire) -> int | None:
    """Where `wire` itself (not an equal one) is among `wires`, or None (without making a stand-in)."""
    if isinstance(wires, LaterWires):
        return wires.position(wire)
    return next((at for at, each in enumerate(wires) if each is wire), None)


def _walked(
    vocabulary: Vocabulary, method: str, path: str, host: str, headers: dict[str, str], request: Request
) -> tuple[Wire | None, Refusal | None]:
    """The wire that serves the request, its wires walked in order; or the refusal of a wire that failed saying."""
    wire: Wire | None = None
    try:
        addresses = vocabulary.addresses
        if addresses is None:
            wire = _matching(vocabulary.walked, method, path, host, headers)
        else:  # the given wires, then the host dialect at this address (one dict look-up), then the defaults
            first = vocabulary.first
            wire = _matching(first, method, path, host, headers) if first else None
            if wire is None:
                wire = addresses.find(method, path, host, request)
            if wire is None:
                wire = _matching(vocabulary.rest, method, path, host, headers)
    except _Broken as exc:  # a wire's bug must be loud, never a retried "Connection error."
        return None, _broken(exc.wire, "matches", exc.cause)
    except Exception as exc:  # a host dialect's, found by its address
        return None, _broken(None, "matches", exc)
    return wire, None


def read_item(
    parent: RecordedRequest, item: Item, batch: str, host: str, vocabulary: Vocabulary
) -> tuple[RecordedRequest, Wire | None, Refusal | None]:
    """A batch's item read as a request of its own: the stub's wire for its path (as at the parent's host) parses it.

    The record shares the parent's headers and credential; its content is the item's body as JSON.
    Never raises: a wire failing, or no wire serving the path, is the refusal.
    """
    method, path, body = item.method, item.path, item.body
    refusal: Refusal | None = None
    wire: Wire | None = None
    parsed: Parsed | None = None
    try:
        walked = vocabulary.rest if vocabulary.addresses is not None else vocabulary.walked
        wire = _matching(vocabulary.first, method, path, host, parent.headers)
        if wire is None and vocabulary.addresses is not None:
            wire = vocabulary.addresses.find(method, path, host, None)
        if wire is None:
            wire = _matching(walked, method, path, host, parent.headers)
    except _Broken as exc:
        refusal = _broken(exc.wire, "matches", exc.cause)
    except Exception as exc:
        refusal = _broken(None, "matches", exc)
    if refusal is None and wire is None:
        refusal = Refusal(
            "unknown_endpoint",
            f"no wire serves this batch's item (its url {method} {path}; known: {vocabulary.endpoints}).",
        )
    elif refusal is None and wire is not None:
        if not isinstance(body, dict):
            refusal = Refusal("unreadable", "the batch's item has no JSON object for its body; nothing was consumed.")
        else:
            try:
                parsed = wire.parse(body, path)
            except Exception as exc:
                refusal = Refusal(
                    "unreadable",
                    f"the {wire.name} wire could not parse the batch's item ({type(exc).__name__}: {exc}); "
                    "nothing was consumed from the script.",
                )
    record = RecordedRequest.model_construct(
        _FIELDS_SET,
        index=0,
        provider=wire.name if wire is not None else None,
        method=method,
        path=path,
        query={},
        headers=parent.headers,
        content=json_dumps(body).encode() if body is not None else b"",
        body=body,
        body_error=None,
        api_key=parent.api_key,
        retry_count=0,
        turn_index=None,
        queue=None,
        answered_by=None,
        received_at=parent.received_at,
        problem=None,
        path_params={},
        custom_id=item.custom_id,
        batch=batch,
        **_fields(parsed),
    )
    return record, wire, refusal


def _claimed(wires: Sequence[Wire], host: str) -> tuple[Wire | None, Refusal | None]:
    """The wire whose host `host` is (its error envelope answers what no wire serves there), or None."""
    for wire in wires:
        try:
            if wire.claims(host):
                return wire, None
        except Exception as exc:
            return None, _broken(wire, "claims", exc)
    return None, None


class _Broken(Exception):
    """A wire's member raised: which wire, and what it raised."""

    def __init__(self, wire: Wire, cause: Exception) -> None:
        super().__init__(str(cause))
        self.wire, self.cause = wire, cause


def _matching(
    wires: Sequence[Wire], method: str, path: str, host: str, headers: Mapping[str, str] | None = None
) -> Wire | None:
    """The first of `wires` that serves the request, or None; a wire that fails to say raises `_Broken`.

    A wire whose paths another API shares (`Wire.shared_paths`) is asked whether the headers are its SDK's.
    """
    for wire in wires:
        try:
            if wire.matches(method, path, host=host) and (not wire.shared_paths or wire.owns(headers or {})):
                return wire
        except Exception as exc:
            raise _Broken(wire, exc) from exc
    return None


def _api_key(
    wire: Wire | None, wires: Sequence[Wire], headers: dict[str, str], query: dict[str, str]
) -> tuple[str | None, Refusal | None]:
    """The request's credential: the serving wire's own first; a key sent another wire's way is still the key."""
    asked = wire
    api_key: object = None
    try:
        api_key = _unchecked(wire.api_key(headers, query)) if wire is not None else None
        if api_key is None:
            for asked in wires:
                api_key = _unchecked(asked.api_key(headers, query))
                if api_key is not None:
                    break
    except Exception as exc:
        return None, _broken(asked, "api_key", exc)
    if api_key is None or isinstance(api_key, str):
        return api_key, None
    return None, _broken(asked, "api_key", TypeError(f"it returned {type(api_key).__name__}, not a str"))


def _unchecked(value: object) -> object:
    """What a wire returned, as what it may be (an outside wire's method may return anything)."""
    return value


def _broken(wire: Wire | None, member: str, exc: Exception) -> Refusal:
    """A wire failing while the request is read: loud, never a retried connection error."""
    name = wire.name if wire is not None else "a"
    return failed(f"asking the {name} wire's {member}() about the request; nothing was consumed from the script", exc)


def _bodiless(wire: Wire, method: str, path: str, content: bytes) -> bool:
    """Whether `wire` serves a request whose body is not a JSON object: a route's, or one the wire takes bodiless."""
    return (wire.turnless and wire.any_body) or (not content and wire.bodiless(method, path))


_Key = tuple[str, str, str, bytes]
"""A request's method and URL (host, path, query)."""


class Attempts:
    """Derives `retry_count` for requests that carry no retry-count header (google-genai, litellm, …).

    A retry is what the stub can see: the next request to the same method and URL, with the same
    body bytes, after one this stub answered with an error its wire calls retryable
    (`Wire.retryable`, unless the scripted headers say `x-should-retry: false`) or with a
    connection fault before the response (`disconnect_after: 0`, `timeout_after: 0`). It counts one
    more than that request; any other request counts 0. So an identical request repeated after a
    success, a refusal or a non-retryable error is never labelled a retry, and neither is one sent
    after another request to the same endpoint came in between. What it cannot see: a retry that
    changes the body (a new id or timestamp in it), a client's own retry after an error the wire
    does not call retryable, a retry overtaken by another request to the same endpoint (all counted
    0), and a read timeout from `delay` or `first_byte_delay` (the stub does not know the client's
    timeout when it decides the turn). A request that carries the header keeps the header's count.
    """

    __slots__ = ("_failed",)

    def __init__(self) -> None:
        self._failed: dict[_Key, tuple[bytes, int]] = {}
        """Per method and URL: the body and count of the last request, when it was answered with a retryable failure."""

    def arrive(self, request: Request, record: RecordedRequest) -> _Key | None:
        """Set a header-less record's `retry_count` (under the stub's lock); the key to pass to `answered`."""
        if record.retry_count is not None:
            return None
        key = (record.method, request.host, request.path, request.query)
        failed = self._failed.pop(key, None)
        # set as pydantic's `__setattr__` sets it (the record's fields set names every field), without its calls
        record.__dict__["retry_count"] = failed[1] + 1 if failed is not None and failed[0] == record.content else 0
        return key

    def answered(self, key: _Key, record: RecordedRequest, decision: object, wire: Wire | None) -> None:
        """Remember `record` when `decision` (its turn, or a refusal) answers it with a retryable failure."""
        if wire is None or not may_be_retried(decision) or not _retryable(decision, wire):
            return
        if len(self._failed) >= _FAILED_MOST:  # never retried: forget the oldest
            del self._failed[next(iter(self._failed))]
        self._failed[key] = (record.content, record.retry_count or 0)


_FAILED_MOST = 1024
"""How many retryable failures a stub remembers while it waits for their retries."""


def may_be_retried(decision: object) -> TypeGuard[Turn]:
    """Whether a client could retry the answer of `decision`: a turn with an error or a fault (`_retryable` decides).

    Any other answer is never remembered, so the ledger asks this before taking its lock for `Attempts.answered`.
    """
    return isinstance(decision, Turn) and (decision.error is not None or decision.fault is not None)


def _retryable(turn: Turn, wire: Wire) -> bool:
    if turn.error is not None:
        should = {k.lower(): v for k, v in (turn.error.headers or {}).items()}.get("x-should-retry")
        return should == "true" or (should != "false" and turn.error.status in wire.retryable)
    fault = turn.fault
    return fault is not None and 0 in (fault.disconnect_after, fault.timeout_after)


def _fields(parsed: Parsed | None) -> dict[str, Any]:
    if parsed is None:  # no wire read it: fresh empty values, so records share nothing mutable
        return {
            "model": None,
            "system": None,
            "messages": [],
            "conversation": [],
            "tools": [],
            "tool_names": [],
            "tool_results": [],
            "all_tool_results": [],
            "stream": False,
            "max_tokens": None,
            "temperature": None,
        }
    return {
        "model": parsed.model,
        "system": parsed.system,
        "messages": parsed.messages,
        "conversation": parsed.conversation if parsed.conversation is not None else parsed.messages,
        "tools": parsed.tools,
        "tool_names": parsed.tool_names,
        "tool_results": parsed.tool_results,
        "all_tool_results": parsed.tool_results if parsed.all_tool_results is None else parsed.all_tool_results,
        "stream": parsed.stream,
        "max_tokens": parsed.max_tokens,
        "temperature": parsed.temperature,
    }


def _redacted(values: dict[str, str], secret: frozenset[str]) -> dict[str, str]:
    """`values` with the value of every credential name redacted (in place, in order): in `secret`, or like one."""
    names: Iterable[str] = [n for n in values if (low := n.lower()) in secret or is_sensitive_header(low)]
    for name in names:
        values[name] = REDACTED
    return values


def _parse_body(content: bytes, encoding: str = "") -> tuple[Any, str | None]:
    """The JSON of a request body (gzip and deflate bodies decompressed), or why there is none."""
    if not content:
        return None, "empty body"
    coding = encoding.strip().lower()
    if coding in ("gzip", "x-gzip", "deflate"):
        try:
            content = _decompressed(content, coding)
        except (zlib.error, _TooLarge) as exc:
            return None, f"the body says content-encoding: {coding}, but it cannot be decompressed ({exc})"
    try:
        # pydantic-core reads a body in a third of the time, and keeps one copy of each short string
        # (the keys every message repeats) for all records. Whatever it cannot read, the standard
        # library decides, with its own encodings and errors: both read valid JSON to the same values.
        return from_json(content), None
    except ValueError:
        pass
    try:
        return json.loads(content), None
    except ValueError as exc:  # UnicodeDecodeError included
        if coding and coding != "identity" and coding not in ("gzip", "x-gzip", "deflate"):
            return None, (
                f"the body is {coding}-compressed (content-encoding: {coding}); "
                "wirescript decompresses gzip and deflate only"
            )
        return None, f"not JSON: {exc}"
    except RecursionError:  # raised out of the transport, the SDK would retry it as a connection error
        return None, "not JSON that can be read: nested deeper than Python's recursion limit"


MAX_DECOMPRESSED = 256 * 1024 * 1024
"""The most bytes a compressed request body may expand to (256 MiB): a zip bomb is refused, not read."""


class _TooLarge(Exception):
    pass


def _decompressed(content: bytes, coding: str) -> bytes:
    # gzip: a gzip header; deflate: zlib-wrapped as the RFC says, or raw as some clients send it.
    if coding == "deflate" and content[:1] != b"\x78":
        wbits = -zlib.MAX_WBITS
    else:
        wbits = zlib.MAX_WBITS | (16 if coding != "deflate" else 0)
    inflater = zlib.decompressobj(wbits)
    data = inflater.decompress(content, MAX_DECOMPRESSED)
    if inflater.unconsumed_tail:
        raise _TooLarge(f"it expands beyond {MAX_DECOMPRESSED:,} bytes")
    return data


def _retry_count(headers: dict[str, str], names: tuple[str, ...]) -> int | None:
    """The attempt number the client sent in one of `names`, or None (then `Attempts` derives it)."""
    for name in names:
        value = headers.get(name)
        if value is not None:
            try:
                return int(value)
            except ValueError:
                return None
    return None
