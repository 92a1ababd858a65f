"""`RecordingTransport`: real traffic becomes an editable, key-free script (record mode).

An httpx/httpx2 transport that forwards each request to an upstream transport (by default the real
network), passes the answer through to the app unchanged (a stream streams as it arrives), and
decodes it into a provider-neutral turn with the same wires the stub serves with (`Wire.decode`),
or, for a side endpoint, into side-script data (`TurnlessWire.decode_side`). `save()` writes the
turns (and the side answers, as `"$side"`) as a script file that `load_script` reads and
`ScriptTransport` replays, on any wire: what the model said, not the bytes it was said in. The
request pays only for keeping what it sent and the bytes of its answer (`_Tee`): both are read into
records, turns and notes when the recording is first read (`_settle`), in the order they
happened, so that what it shows is what reading each at once would have shown. A boto3
client is recorded through botocore's `before-send` hook (`attach`); with an `Episodes` upstream,
`save()` appends to the replayed file instead of writing it afresh (`_append`).

Nothing of a header can reach the file: a turn has no field for one, and the file is written from
turns, side answers and the request summaries (model, last message, tools offered) alone. Nor can a
credential a request sent come back into it through its answer: every one is replaced by
`<redacted>` in all that is written (`_secrets`).
"""

from __future__ import annotations

import datetime
import functools
import importlib.metadata
import json
import os
import pathlib
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from types import ModuleType
from typing import Any, NamedTuple

from pydantic import ValidationError

from .. import __version__
from .._adapters import http as _http
from .._core.cursor import Refusal
from .._core.record import UNREADABLE as _UNREADABLE
from .._core.record import Vocabulary, read
from ..errors import ScriptError, UsageError
from ..files import script_format
from ..intercept import Interception
from ..recorded import REDACTED, RecordedRequest, request_head
from ..script import Turn, parse_turn
from ..side import SideScript, parse_side
from ..wires import Wire, merge_wires
from ._append import append_json, append_yaml, check_appendable
from ._drift import NOT_IN_COMMENT, summary
from ._files import Item, json_text, queues, turn_data, write, yaml_item, yaml_text
from ._forward import FORWARDING, Episodes, Forwarding
from ._secrets import Credentials

__all__ = ["RecordingTransport"]

_WAITING_BYTES = 4 << 20
"""How many bytes of answers a recorder keeps undecoded: past them, it decodes what it holds (`_settle`)."""

_SDKS = {"anthropic": "anthropic", "openai_chat": "openai", "openai_responses": "openai", "gemini": "google-genai"}
"""The SDK distribution that speaks each default wire, for the file's header."""

_USER_AGENTS = {
    re.compile(r"anthropic\w*/python", re.IGNORECASE): "anthropic",  # Anthropic/, AnthropicBedrock/, AnthropicVertex/
    re.compile(r"openai\w*/python", re.IGNORECASE): "openai",  # OpenAI/, AzureOpenAI/
    re.compile(r"google-genai-sdk/", re.IGNORECASE): "google-genai",
}
"""The SDK distribution a `User-Agent` names (the side endpoints and Bedrock serve several SDKs)."""


@functools.lru_cache(maxsize=64)
def _sdks_of(user_agent: str) -> frozenset[str]:
    """The SDK distributions a `User-Agent` names (worked out once per agent: a client sends one every time)."""
    return frozenset(sdk for pattern, sdk in _USER_AGENTS.items() if pattern.search(user_agent))


class _Intercepting(Interception):
    """An interception that routes to a recorder: what the recorder itself sends on is let through."""

    __slots__ = ()

    def routes(self, host: str) -> bool:
        """Whether a request for `host` goes to the recorder: not while the recorder forwards one."""
        return not FORWARDING.get() and super().routes(host)


class _Written(NamedTuple):
    """What the file holds: the turns, the side answers, and where a credential was replaced in them."""

    items: list[Item]
    side: dict[str, Any] | None
    redacted: list[str]
    """`requests[3] POST /v1/messages: a credential it sent came back in text, error.message`, one per request."""


class _Sent:
    """A request as it arrived, apart from the request (an upstream may change it): what `_http.read` reads of it."""

    __slots__ = ("content", "extensions", "headers", "method", "url")

    def __init__(self, request: Any) -> None:
        self.method: str = request.method
        self.url = request.url  # (immutable: a request's URL is replaced, not changed)
        self.headers = request.headers.copy()
        self.content: bytes = request.content
        self.extensions = dict(request.extensions)


class _Entry:
    """One recorded request: as it arrived, then its record, and the turn its answer decoded to (None: not recorded).

    A request is kept as it arrived (`sent`) and read into its record when the recording is first
    read (`RecordingTransport._settle`), as is its answer into its turn: the request pays for
    neither.
    """

    __slots__ = ("forwarded", "index", "record", "sent", "side", "summary", "turn", "wire")

    record: RecordedRequest
    """Set when read (`_settle`)."""
    summary: str
    """Set when read (`_settle`)."""
    wire: Wire | None
    """The wire that reads its answer (None: none does); set when read (`_settle`)."""

    def __init__(self, index: int, sent: _Sent) -> None:
        self.index = index
        self.sent: _Sent | None = sent
        """The request as it arrived (its URL, headers and body as sent), until read into `record`."""
        self.turn: Turn | None = None
        self.side: dict[str, Any] | None = None
        """What a side endpoint answered, as side-script data (`TurnlessWire.decode_side`)."""
        self.forwarded = True
        """False for a request an `Episodes` upstream answered from its script: its turn is in the file."""


class RecordingTransport(Forwarding):
    """Record real traffic as a script: forward each request, pass the answer through, keep it as a turn.

    Args:
        path: The script file to write: `.yaml`/`.yml` (needs PyYAML, the `wirescript[yaml]`
            extra) or `.json`.
        upstream: The transport requests are forwarded to: any httpx or httpx2 transport of the
            requests' library (a `ScriptTransport` to record from a stand-in). Default: the real
            network, an `HTTPTransport`/`AsyncHTTPTransport` of each request's library, built on
            first use and closed with this transport. A given upstream is the caller's to close.
        wires: Extra provider APIs (`wirescript.wires.Wire` instances) to decode answers with,
            before the default wires; as `ScriptTransport(wires=...)`.

    Raises:
        UsageError: The path has another suffix, YAML is asked for without PyYAML, or `upstream`
            is not a transport.

    The answer of every request a wire serves becomes a turn: its text, thinking (with its
    signature, `thinking_signature`), tool calls, usage and stop reason, or an `error` turn
    (status, type, message) for an error status. A request no wire serves, or an answer a wire
    cannot read, is passed through and listed in `notes`. `save()` writes the file; closing the
    client (`close()`/`aclose()`) saves too. With an `Episodes` upstream (`new_episodes`), `save()`
    appends the turns it forwarded to the file it replays, whose own bytes stay as they are::

        rec = RecordingTransport("tests/scripts/weather.yaml")
        client = anthropic.Anthropic(http_client=httpx2.Client(transport=rec))
        ...  # run the app against the real API once
        client.close()  # writes tests/scripts/weather.yaml

    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        upstream: Any = None,
        wires: Sequence[Wire] | None = None,
    ) -> None:
        self.path = pathlib.Path(path)
        fmt = script_format(self.path)
        if fmt is None:
            raise UsageError(f"path: expected a script file ending in .yaml, .yml or .json, got {os.fspath(path)!r}")
        if fmt == "YAML":
            try:
                import yaml  # noqa: F401 - checked now, so a recording is not lost at save time
            except ImportError:
                raise UsageError(
                    f"path: writing YAML ({self.path.name}) needs PyYAML: pip install 'wirescript[yaml]', "
                    "or record to a .json file"
                ) from None
        if upstream is not None and not (
            callable(getattr(upstream, "handle_request", None))
            or callable(getattr(upstream, "handle_async_request", None))
        ):
            raise UsageError(
                "upstream: expected an httpx or httpx2 transport (with handle_request or handle_async_request), "
                f"got {type(upstream).__name__}"
            )
        super().__init__(upstream)
        self._format = fmt
        self._wires = merge_wires(wires)
        self._vocabulary = Vocabulary(self._wires)
        self._credentials = Credentials(self._vocabulary.headers, self._vocabulary.query)
        self._entries: list[_Entry] = []
        self._count_read = 0
        """How many of `_entries` are read (`_settle`): those the recording shows; one arriving meanwhile is not."""
        self._events: list[_Entry | _Answer] = []
        """What happened since the recording was last read, in order: a request arrived (its entry), an answer
        ended (`_Answer`). `_settle` reads them, in that order, into records, turns and notes."""
        self._waiting = 0
        """The bytes of the answers in `_events`."""
        self._settling = threading.Lock()
        self._notes: list[str] = []
        self._libraries: set[str] = set()
        self._classes: set[type] = set()
        """The classes of the requests that arrived: their libraries go to `_libraries` when read."""
        self._started = _now()
        self.closed = False
        self._base: str | None = None
        """With an `Episodes` upstream, the file it replays: new turns are appended to this text."""
        if isinstance(upstream, Episodes) and self.path.exists():
            self._base = self.path.read_text(encoding="utf-8")
            if fmt == "YAML":
                check_appendable(self._base, os.fspath(self.path))
            else:
                append_json(self._base, [], os.fspath(self.path))  # raises now for a file it cannot append to

    # ------------------------------------------------------------------ evidence

    @property
    def wires(self) -> tuple[Wire, ...]:
        """The wires that decode its answers, in matching order: its `wires=`, then the default wires they leave."""
        return tuple(self._vocabulary.wires)  # its own wires: a tuple already (no copy)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request forwarded so far, in arrival order, recorded as a stub records them."""
        return [entry.record for entry in self._settled()]

    @property
    def turns(self) -> list[Turn]:
        """The turns recorded so far, in the order their requests arrived, as `save()` writes them."""
        return [_turn(item) for item in self._written().items]

    @property
    def notes(self) -> list[str]:
        """Why some requests have no turn, and which answers held a credential their request sent.

        No wire serves a request, or its answer could not be read; a credential that came back is
        replaced by `<redacted>` in the file.
        """
        written = self._written()
        with self._lock:
            notes = list(self._notes)
        return notes + [f"{where}: replaced by {REDACTED} in the file" for where in written.redacted]

    @property
    def side(self) -> SideScript | None:
        """What the side endpoints answered (token counts, embeddings, model listings), as the file's `"$side"`."""
        data = self._written().side
        return parse_side(data) if data is not None else None

    def script(self) -> list[Turn] | dict[str, list[Turn]]:
        """The recorded turns as the script `save()` writes: one queue per model when several were called."""
        items = self._written().items
        grouped = queues(items)
        if grouped is None:
            return [_turn(item) for item in items]
        return {model: [_turn(item) for item in group] for model, group in grouped.items()}

    def _written(self, entries: list[_Entry] | None = None) -> _Written:
        """What the file holds of `entries` (default: all): every credential any request sent replaced."""
        if entries is None:
            entries = self._settled()
        scrubber = self._credentials.scrubber()
        items: list[Item] = []
        redacted: list[str] = []
        for entry in entries:
            if entry.turn is None and entry.side is None:
                continue
            head = request_head(entry.record.index, entry.record.method, entry.record.path)
            found: list[str] = []
            if entry.turn is not None:
                data, found = scrubber.data(turn_data(entry.turn))
                comment, count = scrubber.text(entry.summary)
                items.append(Item(entry.record.model, comment, data))
                found += ["the summary comment"] * bool(count)
            if entry.side is not None:
                found += scrubber.data(entry.side, "$side")[1]
            if found:
                redacted.append(f"{head}: a credential it sent came back in {', '.join(dict.fromkeys(found))}")
        side = _side_data(entries)
        return _Written(items, scrubber.data(side)[0] if side is not None else None, redacted)

    # ------------------------------------------------------------------ the file

    def save(self) -> pathlib.Path:
        """Write the recorded turns to `path` (replacing it) and return the path.

        YAML: a header comment (when, and with which wirescript, SDK and HTTP library versions), then
        each turn after a comment summarising the request it answered (number, path, model, last
        message, tools offered), then the side answers as `"$side"` (the turns then go under the
        default queue `"*"` when one model was called). JSON cannot hold comments (and the script
        schema allows no extra field), so a JSON file holds the turns and side answers alone. Either
        loads with `load_script`.

        No credential any recorded request sent is written, in any form: a value the upstream
        echoed back (in a text, a tool input, a thinking signature, an error message, a side
        answer) is replaced by `<redacted>`, as sent, base64-, URL- or hex-encoded. The YAML header
        says where, and so do `notes`. A summary comment leaves out what looks like a key.

        With an `Episodes` upstream and a file to append to, the file is the one read when this
        transport was made, with the turns forwarded past its end appended to the queues that serve
        them (`_append`); saving again writes the same, with a later end time.
        """
        every = self._settled()
        with self._lock:
            providers = {entry.record.provider for entry in every if entry.turn is not None}
            libraries = set(self._libraries)
        if self._base is not None:
            text = self._appended([entry for entry in every if entry.forwarded], providers, libraries)
            self._note_side([entry for entry in every if entry.forwarded and entry.side])
        else:
            written = self._written(every)
            if self._format == "JSON":
                text = json_text(written.items, written.side)
            else:
                text = yaml_text(written.items, self._header(providers, libraries, written.redacted), written.side)
        write(self.path, text)
        return self.path

    def _note_side(self, entries: list[_Entry]) -> None:
        """Say which side answers an append left out: the file's `"$side"` is not rewritten."""
        with self._lock:
            for entry in entries:
                note = (
                    f"{entry.record.summary()}: not appended: new_episodes appends turns, and leaves the file's "
                    "side answers ('$side') as they are; add it by hand or record afresh"
                )
                if note not in self._notes:
                    self._notes.append(note)

    def _appended(self, entries: list[_Entry], providers: set[str | None], libraries: set[str]) -> str:
        """The replayed file with the turns forwarded past its end appended: its own bytes unchanged."""
        assert self._base is not None
        where = os.fspath(self.path)
        written = self._written([entry for entry in entries if entry.turn is not None])
        if self._format == "JSON":
            return append_json(self._base, [(item.model, item.data) for item in written.items], where)
        redacted = f"; {_redaction(written.redacted)}" if written.redacted else ""
        note = NOT_IN_COMMENT.sub("?", f"Appended {self._when(providers, libraries)} (new_episodes){redacted}")
        return append_yaml(self._base, [(item.model, yaml_item(item, "")) for item in written.items], note, where)

    def _when(self, providers: set[str | None], libraries: set[str]) -> str:
        """`by wirescript 0.1.0 from … to … with anthropic 2.14.0, httpx2 …`, for the file's comments."""
        names = sorted({_SDKS[p] for p in providers if p in _SDKS} | libraries)
        versions = [f"{name} {_version(name)}" for name in names]
        return f"by wirescript {__version__} from {self._started} to {_now()}" + (
            f" with {', '.join(versions)}" if versions else ""
        )

    def _header(self, providers: set[str | None], libraries: set[str], redacted: list[str]) -> list[str]:
        header = [
            f"Recorded {self._when(providers, libraries)}.",
            "Each turn is what the model answered; the comment above it, the request it answered.",
            "Edit freely: this is a wirescript script (load_script); it holds no header, key or cookie.",
        ]
        return [*header, f"{_redaction(redacted)}."] if redacted else header

    # ------------------------------------------------------------------ clients the app builds

    def intercept(self, hosts: Iterable[str] | str | None = None) -> Interception:
        """A context manager: while open, every httpx/httpx2 client's requests to `hosts` are recorded here.

        As `ScriptTransport.intercept()`: `hosts` replaces `KNOWN_HOSTS` (`"*"`: every host), and it
        reaches the clients an app or a framework builds for itself, and the boto3 `bedrock-runtime`
        clients created while it is open. What this recorder forwards upstream goes on to the
        network (or `upstream`) as usual, not back to it. See `wirescript.intercept.Interception`.
        """
        return _Intercepting(self, hosts)

    # ------------------------------------------------------------------ boto3

    def attach(self, client: Any) -> Any:
        """Record a boto3/botocore client (`bedrock-runtime`): its requests come here, not to botocore's sender.

        botocore's own `before-send` hook hands each signed request to this transport, which forwards
        it (to `upstream`, by default over the network to the URL botocore signed it for) and passes the
        answer back to botocore's parsers. The recording is that of an httpx client: Converse,
        ConverseStream and InvokeModel (and its stream) become turns. botocore's retry modes decide
        for real. Undo with `detach(client)`; return the client.

        Raises:
            UsageError: `client` is not a botocore client, or is already attached.

        """
        from .._adapters import botocore as _botocore

        _botocore.attach(client, _botocore.serve_with(self.handle_request, client), fast_retries=False)
        with self._lock:
            self._libraries.add("botocore")
        return client

    def detach(self, client: Any) -> None:
        """Give a client `attach` recorded back to botocore's own sending."""
        from .._adapters import botocore as _botocore

        _botocore.detach(client)

    # ------------------------------------------------------------------ transport protocol

    def handle_request(self, request: Any) -> Any:
        """Forward one request of a sync httpx/httpx2 client and pass its answer through."""
        request.read()
        entry = self._arrive(request)
        if _UNREADABLE in request.extensions:
            return self._refused(request, entry)
        try:
            response = self._send(request)
        finally:
            self._replayed(entry, request)
        return _teed(request, response, entry, self._answered, is_async=False)

    async def handle_async_request(self, request: Any) -> Any:
        """Forward one request of an async httpx/httpx2 client and pass its answer through."""
        await request.aread()
        entry = self._arrive(request)
        if _UNREADABLE in request.extensions:
            return self._refused(request, entry)
        try:
            response = await self._send_async(request)
        finally:
            self._replayed(entry, request)
        return _teed(request, response, entry, self._answered, is_async=True)

    def close(self) -> None:
        """Called when the client closes: save the file, and close the network transports built here."""
        self.closed = True
        super().close()
        self.save()

    async def aclose(self) -> None:
        """Called when the async client closes: save the file, and close the network transports built here."""
        self.closed = True
        await super().aclose()
        self.save()

    def __repr__(self) -> str:
        return f"<RecordingTransport {os.fspath(self.path)!r} requests={len(self._entries)} turns={len(self.turns)}>"

    # ------------------------------------------------------------------ recording

    def _arrive(self, request: Any) -> _Entry:
        """Keep `request` as it arrived (before it is forwarded: an upstream may change it); read when settled."""
        sent = _Sent(request)
        with self._lock:
            entry = _Entry(len(self._entries), sent)
            self._entries.append(entry)
            self._events.append(entry)
            self._classes.add(request.__class__)
        return entry

    def _answered(self, answer: _Answer) -> None:
        """An answer's body ended: kept, to be decoded when settled (at once past `_WAITING_BYTES` kept)."""
        size = sum(map(len, answer.chunks))
        with self._lock:
            self._events.append(answer)
            self._waiting += size
            full = self._waiting > _WAITING_BYTES
        if full:
            self._settle()

    def _settle(self) -> None:
        """Read every request that arrived, and decode every answer that ended, since the last time: in that order.

        What the recording shows (`requests`, `turns`, `notes`, the file) is what it would show had
        each request been read when it arrived and each answer decoded when its body ended: the
        events are taken in the order they happened, and the notes they give are written in it.
        Called by each of them first; never raises (`read` does not, and `_keep` catches).
        """
        with self._settling:
            with self._lock:
                events, self._events = self._events, []
                self._waiting = 0
                classes, self._classes = self._classes, set()
                self._libraries.update(cls.__module__.partition(".")[0] for cls in classes)
            for event in events:
                if isinstance(event, _Entry):
                    self._read(event)
                else:
                    entry = event.entry
                    if entry.wire is not None:  # (an answer no wire reads: nothing is kept of it)
                        self._keep(entry, entry.wire, *event.read())

    def _settled(self) -> list[_Entry]:
        """The entries, every one read and every answer that ended decoded (`_settle`)."""
        self._settle()
        with self._lock:
            return self._entries[: self._count_read]

    def _read(self, entry: _Entry) -> None:
        """Read a request that arrived into its record, and find the wire that reads its answer."""
        assert entry.sent is not None
        sent = _http.read(entry.sent)
        entry.sent = None
        self._credentials.add_sent(sent.headers, sent.query)
        reading = read(sent, self._vocabulary)
        record = reading.record
        record.index = entry.index
        entry.record = record
        entry.summary = summary(record)
        entry.wire = reading.wire
        with self._lock:
            self._count_read = entry.index + 1
            self._libraries.update(_sdks_of(record.headers.get("user-agent", "")))
            if reading.wire is None:
                self._notes.append(
                    f"{record.summary()}: not recorded: "
                    f"{reading.decision.reason if isinstance(reading.decision, Refusal) else ''}"
                )

    def _refused(self, request: Any, entry: _Entry) -> Any:
        """The loud answer to a request the loopback server could not read as sent: it is not forwarded."""
        self._settle()
        hx = _http.http_module(request)
        message = f"wirescript record: {entry.record.summary()}: {request.extensions[_UNREADABLE]}"
        body = json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        headers = {"content-type": "application/json", "x-should-retry": "false"}
        return hx.Response(400, headers=headers, content=body.encode(), request=request)

    def _replayed(self, entry: _Entry, request: Any) -> None:
        """Mark a request an `Episodes` upstream answered from its script (its turn is in the file already)."""
        if isinstance(self._upstream, Episodes) and not self._upstream.was_forwarded(request):
            with self._lock:
                entry.forwarded = False

    def _keep_side(self, entry: _Entry, wire: Wire, status: int, headers: Mapping[str, str], body: bytes) -> None:
        """Keep a side endpoint's answer as side-script data; never raises."""
        note: str | None = None
        side: dict[str, Any] | None = None
        decode = getattr(wire, "decode_side", None)
        try:
            side = decode(entry.record, status, headers, body) if callable(decode) else None
            if side is not None:
                parse_side(side, "the decoded answer")
        except ScriptError as exc:
            side, note = None, str(exc)
        except Exception as exc:  # a wire's bug: the app must still get its answer
            side, note = None, f"the {wire.name} wire failed decoding its answer ({type(exc).__name__}: {exc})"
        if side is None and note is None:
            note = (
                f"not recorded: an error answer (status {status}); a side script has no error answers"
                if status >= 400
                else f"the {wire.name} wire could not read its answer (status {status})"
            )
        with self._lock:
            entry.side = side
            if note is not None:
                self._notes.append(f"{entry.record.summary()}: {note}")

    def _keep(self, entry: _Entry, wire: Wire, status: int, headers: Mapping[str, str], body: bytes) -> None:
        """Decode an answer into its entry's turn; never raises (the recording is being read, `_settle`)."""
        note: str | None = None
        turn: Turn | None = None
        try:
            turnless = wire.turnless or (wire.partly_turnless and wire.turnless_request(entry.record))
        except Exception:  # a wire's bug: read it as a generation, whose decoding notes what fails
            turnless = False
        if turnless:  # a side endpoint, a stored response's retrieval, a background job's request
            self._keep_side(entry, wire, status, headers, body)
            return
        try:
            decoded = wire.decode(status, headers, body)
            if decoded is None:
                note = f"the {wire.name} wire could not read its answer (status {status})"
            else:
                turn = parse_turn(decoded, "the decoded answer")
        except (ScriptError, ValidationError) as exc:
            note = str(exc)
        except Exception as exc:  # a wire's bug: the app must still get its answer
            note = f"the {wire.name} wire failed decoding its answer ({type(exc).__name__}: {exc})"
        with self._lock:
            entry.turn = turn
            if note is not None:
                self._notes.append(f"{entry.record.summary()}: {note}")


# ---------------------------------------------------------------------- the tee


class _Answer:
    """An answer whose body ended, as it arrived: its status, headers and chunks, until decoded (`_settle`)."""

    __slots__ = ("chunks", "entry", "headers", "hx", "status")

    def __init__(self, entry: _Entry, hx: ModuleType, status: int, headers: Any, chunks: list[bytes]) -> None:
        self.entry = entry
        self.hx = hx
        self.status = status
        self.headers = headers
        self.chunks = chunks

    def read(self) -> tuple[int, dict[str, str], bytes]:
        """The status, the headers (names lower-cased) and the body decoded as the client decodes it.

        The body is the bytes that arrived, decoded by the library's own decoders (gzip, br, zstd,
        deflate) when it has a `content-encoding`; one the client could not decode either is empty.
        """
        headers = self.headers
        raw = b"".join(self.chunks)
        if "content-encoding" not in headers:  # nothing to decode: the body is the bytes
            body = raw
        else:
            try:
                body = self.hx.Response(self.status, headers=headers, content=raw).content
            except Exception:  # a body the client could not decode either: nothing to keep of it
                body = b""
        return self.status, {k.lower(): v for k, v in headers.items()}, body


class _Tee:
    """The answer passed to the app as it arrives, its chunks kept: what both tees (sync, async) hold.

    Nothing but keeping is done per chunk. When the body ends (read to its end, closed early, or
    failed) the tee hands what arrived, once, to `answered` (an `_Answer`); what its bytes say is
    worked out when the recording is read (`_Answer.read`, from `RecordingTransport._settle`).
    """

    hx: ModuleType
    """The HTTP library (`httpx` or `httpx2`) of the tee's class."""

    def __init__(self, response: Any, owner: _Entry, answered: Callable[[_Answer], None]) -> None:
        self.response = response
        self.owner = owner
        """What the answer belongs to (the recorder's entry of the request)."""
        self.chunks: list[bytes] = []
        self._answered: Callable[[_Answer], None] | None = answered

    def _end(self) -> None:
        answered, self._answered = self._answered, None
        if answered is not None:
            response = self.response
            answered(_Answer(self.owner, self.hx, response.status_code, response.headers, self.chunks))


_TEES: dict[type, tuple[ModuleType, type[_Tee], type[_Tee]]] = {}
"""By request class: its library and the library's sync and async tee classes (`_tees`)."""


def _teed(request: Any, response: Any, owner: _Entry, answered: Callable[[_Answer], None], *, is_async: bool) -> Any:
    """`response` for the app, unchanged (status, headers, extensions), its body passed through a tee.

    `answered` is told once, when the body ends, with what arrived (`_Answer`).
    """
    hx, sync_tee, async_tee = _TEES.get(request.__class__) or _tees(request)
    stream = (async_tee if is_async else sync_tee)(response, owner, answered)
    return hx.Response(
        response.status_code,
        headers=response.headers,
        stream=stream,
        request=request,
        extensions=response.extensions,
    )


def _tees(request: Any) -> tuple[ModuleType, type[_Tee], type[_Tee]]:
    """The library of `request`'s class and its tee classes: subclasses of its own byte-stream classes."""
    hx = _http.http_module(request)

    class SyncTee(_Tee, hx.SyncByteStream):  # type: ignore[misc,name-defined]
        """Passes a sync upstream body through, keeping its chunks."""

        def __iter__(self) -> Iterator[bytes]:
            keep = self.chunks.append
            try:
                for chunk in self.response.stream:
                    keep(chunk)
                    yield chunk
            finally:
                self._end()

        def close(self) -> None:
            try:
                if self._answered is not None and self.response.status_code >= 400:
                    # An SDK retrying an error closes it unread; an error body is short and ends: keep it.
                    self.chunks.extend(self.response.stream)
                self.response.close()
            except Exception:  # the app is done with it: what arrived is kept
                pass
            finally:
                self._end()

    class AsyncTee(_Tee, hx.AsyncByteStream):  # type: ignore[misc,name-defined]
        """Passes an async upstream body through, keeping its chunks."""

        async def __aiter__(self) -> AsyncIterator[bytes]:
            keep = self.chunks.append
            try:
                async for chunk in self.response.stream:
                    keep(chunk)
                    yield chunk
            finally:
                self._end()

        async def aclose(self) -> None:
            try:
                if self._answered is not None and self.response.status_code >= 400:
                    # An SDK retrying an error closes it unread; an error body is short and ends: keep it.
                    self.chunks.extend([chunk async for chunk in self.response.stream])
                await self.response.aclose()
            except Exception:  # the app is done with it: what arrived is kept
                pass
            finally:
                self._end()

    SyncTee.hx = AsyncTee.hx = hx
    found = _TEES[request.__class__] = (hx, SyncTee, AsyncTee)
    return found


# ---------------------------------------------------------------------- what is written


def _turn(item: Item) -> Turn:
    return parse_turn(item.data, "the recorded answer")


def _redaction(redacted: list[str]) -> str:
    """The file's account of the credentials it replaced: in a comment line of its own."""
    shown = [where.split(": ", 1)[0] for where in redacted[:10]]
    more = f" and {len(redacted) - 10} more" if len(redacted) > 10 else ""
    return (
        f"A credential the requests sent came back in {len(redacted)} answer(s) and is replaced by {REDACTED}: "
        f"{', '.join(shown)}{more} (rec.notes says where)"
    )


def _items(entries: list[_Entry]) -> list[Item]:
    return [Item(e.record.model, e.summary, turn_data(e.turn)) for e in entries if e.turn is not None]


def _side_data(entries: list[_Entry]) -> dict[str, Any] | None:
    """The side answers of these entries as one side script: counts in arrival order, vectors by text, model ids."""
    counts: list[int] = []
    vectors: dict[str, list[float]] = {}
    models: list[str] = []
    for entry in entries:
        side = entry.side or {}
        counts.extend(side.get("count_tokens", ()))
        vectors.update(side.get("embeddings", {}))
        models.extend(m for m in side.get("models", ()) if m not in models)
    data: dict[str, Any] = {}
    if counts:
        data["count_tokens"] = counts
    if vectors:
        data["embeddings"] = vectors
    if models:
        data["models"] = models
    return data or None


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@functools.lru_cache(maxsize=32)
def _version(distribution: str) -> str:
    """The installed version of `distribution`, looked up once (a look-up reads the package metadata on disk)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"
