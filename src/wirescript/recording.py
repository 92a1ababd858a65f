"""`RecordingTransport`: real traffic becomes an editable, key-free script (record mode).

An httpx/httpx2 transport that forwards each request to an upstream transport (by default the real
network), passes the answer through to the app unchanged (a stream streams as it arrives), and
decodes it into a provider-neutral turn with the same wires the stub serves with (`Wire.decode`),
or, for a side endpoint, into side-script data (`TurnlessWire.decode_side`). `save()` writes the
turns (and the side answers, as `"$side"`) as a script file that `load_script` reads and
`ScriptTransport` replays, on any wire: what the model said, not the bytes it was said in. A boto3
client is recorded through botocore's `before-send` hook (`attach`); with an `Episodes` upstream,
`save()` appends to the replayed file instead of writing it afresh (`_append`).

Nothing of a header can reach the file: a turn has no field for one, and the file is written from
turns, side answers and the request summaries (model, last message, tools offered) alone.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import pathlib
import re
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from . import __version__, _http
from ._append import append_json, append_yaml, check_appendable
from ._cursor import Refusal
from ._record import Vocabulary, read
from ._text import clip
from .errors import ScriptError, UsageError
from .recorded import RecordedRequest
from .script import DEFAULT_QUEUE, Turn, parse_turn
from .side import SIDE_KEY, SideScript, parse_side
from .wires import Wire, merge_wires

__all__ = ["Episodes", "RecordingTransport", "Rehost", "drift", "record_command", "recorded_summaries"]

if TYPE_CHECKING:  # pragma: no cover - typing only: lets `httpx2.Client(transport=rec)` type-check
    import httpx
    import httpx2

    class _TransportBase(  # type: ignore[misc]
        httpx2.BaseTransport, httpx2.AsyncBaseTransport, httpx.BaseTransport, httpx.AsyncBaseTransport
    ):
        pass

else:
    _TransportBase = object  # as `ScriptTransport`: the clients duck-type their transport

_SUFFIXES = {".json": "JSON", ".yaml": "YAML", ".yml": "YAML"}

_SDKS = {"anthropic": "anthropic", "openai_chat": "openai", "openai_responses": "openai", "gemini": "google-genai"}
"""The SDK distribution that speaks each default wire, for the file's header."""

_USER_AGENTS = {
    re.compile(r"anthropic\w*/python", re.IGNORECASE): "anthropic",  # Anthropic/, AnthropicBedrock/, AnthropicVertex/
    re.compile(r"openai\w*/python", re.IGNORECASE): "openai",  # OpenAI/, AzureOpenAI/
    re.compile(r"google-genai-sdk/", re.IGNORECASE): "google-genai",
}
"""The SDK distribution a `User-Agent` names (the side endpoints and Bedrock serve several SDKs)."""


def _sdks_of(user_agent: str) -> set[str]:
    return {sdk for pattern, sdk in _USER_AGENTS.items() if pattern.search(user_agent)}


# What ends a YAML comment: the line breaks of YAML 1.1 (which PyYAML reads), and control characters.
_NOT_IN_COMMENT = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


class _Entry:
    """One recorded request: its record, and the turn its answer decoded to (None: not recorded)."""

    __slots__ = ("forwarded", "record", "side", "summary", "turn")

    def __init__(self, record: RecordedRequest, summary: str) -> None:
        self.record = record
        self.summary = summary
        self.turn: Turn | None = None
        self.side: dict[str, Any] | None = None
        """What a side endpoint answered, as side-script data (`TurnlessWire.decode_side`)."""
        self.forwarded = True
        """False for a request an `Episodes` upstream answered from its script: its turn is in the file."""


class RecordingTransport(_TransportBase):
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
        fmt = _SUFFIXES.get(self.path.suffix.lower())
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
        self._format = fmt
        self._upstream = upstream
        self._wires = merge_wires(wires)
        self._vocabulary = Vocabulary(self._wires)
        self._entries: list[_Entry] = []
        self._notes: list[str] = []
        self._network: dict[tuple[str, bool], Any] = {}
        self._libraries: set[str] = set()
        self._lock = threading.Lock()
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
    def requests(self) -> list[RecordedRequest]:
        """Every request forwarded so far, in arrival order, recorded as a stub records them."""
        with self._lock:
            return [entry.record for entry in self._entries]

    @property
    def turns(self) -> list[Turn]:
        """The turns recorded so far, in the order their requests arrived."""
        with self._lock:
            return [entry.turn for entry in self._entries if entry.turn is not None]

    @property
    def notes(self) -> list[str]:
        """Why some requests have no turn: no wire serves them, or their answer could not be read."""
        with self._lock:
            return list(self._notes)

    @property
    def side(self) -> SideScript | None:
        """What the side endpoints answered (token counts, embeddings, model listings), as the file's `"$side"`."""
        with self._lock:
            entries = list(self._entries)
        data = _side_data(entries)
        return parse_side(data) if data is not None else None

    def script(self) -> list[Turn] | dict[str, list[Turn]]:
        """The recorded turns as the script `save()` writes: one queue per model when several were called."""
        with self._lock:
            entries = [entry for entry in self._entries if entry.turn is not None]
        queues = _queues(entries)
        if queues is None:
            return [entry.turn for entry in entries if entry.turn is not None]
        return {model: [e.turn for e in group if e.turn is not None] for model, group in queues.items()}

    # ------------------------------------------------------------------ the file

    def save(self) -> pathlib.Path:
        """Write the recorded turns to `path` (replacing it) and return the path.

        YAML: a header comment (when, and with which wirescript, SDK and HTTP library versions), then
        each turn after a comment summarising the request it answered (number, path, model, last
        message, tools offered), then the side answers as `"$side"` (the turns then go under the
        default queue `"*"` when one model was called). JSON cannot hold comments (and the script
        schema allows no extra field), so a JSON file holds the turns and side answers alone. Either
        loads with `load_script`.

        With an `Episodes` upstream and a file to append to, the file is the one read when this
        transport was made, with the turns forwarded past its end appended to the queues that serve
        them (`_append`); saving again writes the same, with a later end time.
        """
        with self._lock:
            every = list(self._entries)
            entries = [entry for entry in every if entry.turn is not None]
            providers = {entry.record.provider for entry in entries}
            libraries = set(self._libraries)
        side = _side_data(every)
        if self._base is not None:
            text = self._appended([entry for entry in entries if entry.forwarded], providers, libraries)
            self._note_side([entry for entry in every if entry.forwarded and entry.side])
        elif self._format == "JSON":
            text = _json_text(entries, side)
        else:
            text = _yaml_text(entries, self._header(providers, libraries), side)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(f".{self.path.name}.partial")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, self.path)
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
        if self._format == "JSON":
            return append_json(self._base, [(e.record.model, _turn_data(e.turn)) for e in entries if e.turn], where)
        note = _NOT_IN_COMMENT.sub("?", f"Appended {self._when(providers, libraries)} (new_episodes)")
        new = [(entry.record.model, _yaml_item(entry, "")) for entry in entries]
        return append_yaml(self._base, new, note, where)

    def _when(self, providers: set[str | None], libraries: set[str]) -> str:
        """`by wirescript 0.1.0 from … to … with anthropic 2.14.0, httpx2 …`, for the file's comments."""
        names = sorted({_SDKS[p] for p in providers if p in _SDKS} | libraries)
        versions = [f"{name} {_version(name)}" for name in names]
        return f"by wirescript {__version__} from {self._started} to {_now()}" + (
            f" with {', '.join(versions)}" if versions else ""
        )

    def _header(self, providers: set[str | None], libraries: set[str]) -> list[str]:
        return [
            f"Recorded {self._when(providers, libraries)}.",
            "Each turn is what the model answered; the comment above it, the request it answered.",
            "Edit freely: this is a wirescript script (load_script); it holds no header, key or cookie.",
        ]

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
        from . import _botocore

        _botocore.attach(client, _botocore.serve_with(self.handle_request, client), fast_retries=False)
        with self._lock:
            self._libraries.add("botocore")
        return client

    def detach(self, client: Any) -> None:
        """Give a client `attach` recorded back to botocore's own sending."""
        from . import _botocore

        _botocore.detach(client)

    # ------------------------------------------------------------------ transport protocol

    def handle_request(self, request: Any) -> Any:
        """Forward one request of a sync httpx/httpx2 client and pass its answer through."""
        request.read()
        entry, wire = self._arrive(request)
        try:
            response = self._upstream_for(request, is_async=False).handle_request(request)
        finally:
            self._replayed(entry, request)
        return _http.teed_response(request, response, self._finisher(entry, wire), is_async=False)

    async def handle_async_request(self, request: Any) -> Any:
        """Forward one request of an async httpx/httpx2 client and pass its answer through."""
        await request.aread()
        entry, wire = self._arrive(request)
        try:
            response = await self._upstream_for(request, is_async=True).handle_async_request(request)
        finally:
            self._replayed(entry, request)
        return _http.teed_response(request, response, self._finisher(entry, wire), is_async=True)

    def close(self) -> None:
        """Called when the client closes: save the file, and close the network transports built here."""
        self.closed = True
        with self._lock:
            network, self._network = list(self._network.values()), {}
        for transport in network:
            if callable(getattr(transport, "close", None)):
                transport.close()
        self.save()

    async def aclose(self) -> None:
        """Called when the async client closes: save the file, and close the network transports built here."""
        self.closed = True
        with self._lock:
            network, self._network = list(self._network.values()), {}
        for transport in network:
            if callable(getattr(transport, "aclose", None)):
                await transport.aclose()
            elif callable(getattr(transport, "close", None)):
                transport.close()
        self.save()

    def __enter__(self) -> RecordingTransport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> RecordingTransport:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<RecordingTransport {os.fspath(self.path)!r} requests={len(self._entries)} turns={len(self.turns)}>"

    # ------------------------------------------------------------------ recording

    def _arrive(self, request: Any) -> tuple[_Entry, Wire | None]:
        reading = read(_http.read(request), self._vocabulary)
        record = reading.record
        with self._lock:
            record.index = len(self._entries)
            entry = _Entry(record, _summary(record))
            self._entries.append(entry)
            self._libraries.add(_http.http_module(request).__name__)
            self._libraries.update(_sdks_of(request.headers.get("user-agent", "")))
            if reading.wire is None:
                self._notes.append(
                    f"{record.summary()}: not recorded: "
                    f"{reading.decision.reason if isinstance(reading.decision, Refusal) else ''}"
                )
        return entry, reading.wire

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

    def _upstream_for(self, request: Any, *, is_async: bool) -> Any:
        if self._upstream is not None:
            return self._upstream
        key = (_http.http_module(request).__name__, is_async)
        with self._lock:
            transport = self._network.get(key)
            if transport is None:
                transport = self._network[key] = _http.network_transport(request, is_async=is_async)
        return transport

    def _finisher(self, entry: _Entry, wire: Wire | None) -> _http.Finished:
        def finished(status: int, headers: dict[str, str], body: bytes) -> None:
            if wire is not None:
                self._keep(entry, wire, status, headers, body)

        return finished

    def _keep(self, entry: _Entry, wire: Wire, status: int, headers: Mapping[str, str], body: bytes) -> None:
        """Decode an answer into its entry's turn; never raises (the app is reading its response)."""
        note: str | None = None
        turn: Turn | None = None
        if wire.turnless:
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


# ---------------------------------------------------------------------- writing


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


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"


def _summary(record: RecordedRequest) -> str:
    """The request a turn answered, in one comment line: number, path, model, last message, tools offered."""
    tools = f" tools=[{', '.join(clip(name, 40) for name in record.tool_names)}]" if record.tool_names else ""
    return _NOT_IN_COMMENT.sub("?", f"{record.summary()}{tools}")


_HEAD = re.compile(r"^requests\[\d+\] ")
_COMMENT = re.compile(r"^(?P<indent> *)# (?P<summary>requests\[\d+\] .*)$")
_QUEUE = re.compile(r'^(?P<key>"(?:[^"\\]|\\.)*"):\s*$')


def recorded_summaries(text: str) -> dict[tuple[str, int], str]:
    """The summary comment written above each turn of a recorded YAML script, by (queue, turn index).

    The default queue (a plain list) is `"*"`. A turn without a summary comment (added by hand) has
    no entry. Only what `RecordingTransport.save()` writes is read: one comment line right above
    each turn, queue keys as JSON strings.
    """
    lines = text.splitlines()
    queued = any(_QUEUE.match(line) for line in lines)
    item = "  - " if queued else "- "
    found: dict[tuple[str, int], str] = {}
    queue, index, pending = DEFAULT_QUEUE, -1, None
    for line in lines:
        key = _QUEUE.match(line)
        if key is not None:
            queue, index, pending = json.loads(key["key"]), -1, None
            continue
        comment = _COMMENT.match(line)
        if comment is not None and len(comment["indent"]) == len(item) - 2:
            pending = comment["summary"]
            continue
        if line.startswith(item) or (line == item.rstrip()):
            index += 1
            if pending is not None:
                found[(queue, index)] = pending
            pending = None
    return found


def drift(records: Sequence[RecordedRequest], summaries: Mapping[tuple[str, int], str]) -> list[str]:
    """Each request that asks something else than the one its turn was recorded for, in words.

    Compared: the model, the last message and the tools offered, as the summary comment says them.
    A request answered by a turn with no summary (or by no turn) is not compared.
    """
    found = []
    for record in records:
        if record.turn_index is None:
            continue
        recorded = summaries.get((record.queue or DEFAULT_QUEUE, record.turn_index))
        if recorded is None:
            continue
        now = _summary(record)
        if _HEAD.sub("", now) != _HEAD.sub("", recorded):
            found.append(
                f"{record.summary().split(' model=')[0]} asks something else than the request its turn was "
                f"recorded for:\n    recorded: {_HEAD.sub('', recorded)}\n    now:      {_HEAD.sub('', now)}"
            )
    return found


def _queues(entries: list[_Entry]) -> dict[str, list[_Entry]] | None:
    """The entries by model when more than one model was called (an unnamed one under `"*"`), else None."""
    queues: dict[str, list[_Entry]] = {}
    for entry in entries:
        queues.setdefault(entry.record.model or DEFAULT_QUEUE, []).append(entry)
    return queues if len(queues) > 1 else None


def _turn_data(turn: Turn) -> Any:
    """A turn as the file writes it: only the fields it sets; a text-only turn as its text."""
    data = turn.model_dump(mode="json", exclude_defaults=True)
    return data["text"] if list(data) == ["text"] else data


def _json_text(entries: list[_Entry], side: dict[str, Any] | None = None) -> str:
    queues = _queues(entries)
    if side is not None and queues is None:  # a plain list has no room for "$side": the default queue
        queues = {DEFAULT_QUEUE: entries} if entries else {}
    data: Any
    if queues is None:
        data = [_turn_data(e.turn) for e in entries if e.turn is not None]
    else:
        data = {model: [_turn_data(e.turn) for e in group if e.turn is not None] for model, group in queues.items()}
        if side is not None:
            data[SIDE_KEY] = side
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _yaml_text(entries: list[_Entry], header: list[str], side: dict[str, Any] | None = None) -> str:
    lines = [f"# {_NOT_IN_COMMENT.sub('?', line)}" for line in header]
    queues = _queues(entries)
    if side is not None:
        if queues is None:  # a plain list has no room for "$side": the default queue serves every model
            queues = {DEFAULT_QUEUE: entries} if entries else {}
        for model, group in queues.items():
            lines.append(f"{json.dumps(model, ensure_ascii=False)}:")
            for entry in group:
                lines.extend(_yaml_item(entry, "  "))
        return "\n".join([*lines, *_yaml_side(side), ""])
    if not entries:
        return "\n".join([*lines, "[]", ""])
    if queues is None:
        for entry in entries:
            lines.extend(_yaml_item(entry, ""))
    else:
        for model, group in queues.items():
            lines.append(f"{json.dumps(model, ensure_ascii=False)}:")
            for entry in group:
                lines.extend(_yaml_item(entry, "  "))
    return "\n".join([*lines, ""])


def _yaml_side(side: dict[str, Any]) -> list[str]:
    import yaml

    dumped = yaml.dump(side, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100, default_flow_style=None)
    return [
        "# What the side endpoints answered: token counts in arrival order, a vector per embedded text,",
        "# the model ids listed.",
        f"{json.dumps(SIDE_KEY)}:",
        *(f"  {line}" for line in dumped.rstrip("\n").split("\n")),
    ]


def _yaml_item(entry: _Entry, indent: str) -> list[str]:
    import yaml

    assert entry.turn is not None
    dumped = yaml.dump([_turn_data(entry.turn)], Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100)
    return [f"{indent}# {entry.summary}", *(f"{indent}{line}" for line in dumped.rstrip("\n").split("\n"))]


def _dumper() -> Any:
    """PyYAML's safe dumper, writing text of several lines as a literal block (`|`), as a person would."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return Dumper


class Episodes(_TransportBase):
    """Replay a script, and forward what runs past its end (pytest-recording's `new_episodes`).

    Each request goes to `stub` first; one the stub cannot answer as scripted (its script ran
    out, no queue serves its model) is forwarded to `upstream` instead (by default the real
    network, as `RecordingTransport`'s). Give it to a `RecordingTransport` of the file the stub
    replays, as its upstream: `save()` then appends the forwarded turns to that file, whose own
    bytes stay as they are.
    """

    def __init__(self, stub: Any, upstream: Any = None) -> None:
        self.stub = stub
        self._upstream = upstream
        self._network: dict[tuple[str, bool], Any] = {}
        self._lock = threading.Lock()
        self._forwarded: weakref.WeakSet[Any] = weakref.WeakSet()  # the requests sent upstream, until asked

    def was_forwarded(self, request: Any) -> bool:
        """Whether `request` (answered already) went upstream rather than being answered from the script.

        Asked once per request, by the `RecordingTransport` this is the upstream of.
        """
        with self._lock:
            if request in self._forwarded:
                self._forwarded.discard(request)
                return True
            return False

    def _refused(self, before: int, response: Any) -> bool:
        """Whether the stub refused this request: a problem was recorded, and its answer is the error that says so.

        The status is looked at too, so that a replayed answer is not forwarded because another
        request, at the same time, ran past the end.
        """
        return len(self.stub.problems) > before and response.status_code >= 400

    def handle_request(self, request: Any) -> Any:
        """Answer from the script, or forward a sync request past its end."""
        before = len(self.stub.problems)
        response = self.stub.handle_request(request)
        if not self._refused(before, response):
            return response
        response.close()
        with self._lock:
            self._forwarded.add(request)
        return self._forward_to(request, is_async=False).handle_request(request)

    async def handle_async_request(self, request: Any) -> Any:
        """Answer from the script, or forward an async request past its end."""
        before = len(self.stub.problems)
        response = await self.stub.handle_async_request(request)
        if not self._refused(before, response):
            return response
        await response.aclose()
        with self._lock:
            self._forwarded.add(request)
        return await self._forward_to(request, is_async=True).handle_async_request(request)

    def _forward_to(self, request: Any, *, is_async: bool) -> Any:
        if self._upstream is not None:
            return self._upstream
        key = (_http.http_module(request).__name__, is_async)
        with self._lock:
            transport = self._network.get(key)
            if transport is None:
                transport = self._network[key] = _http.network_transport(request, is_async=is_async)
        return transport

    def close(self) -> None:
        """Close the network transports built here."""
        with self._lock:
            network, self._network = list(self._network.values()), {}
        for transport in network:
            if callable(getattr(transport, "close", None)):
                transport.close()

    async def aclose(self) -> None:
        """Close the network transports built here."""
        with self._lock:
            network, self._network = list(self._network.values()), {}
        for transport in network:
            if callable(getattr(transport, "aclose", None)):
                await transport.aclose()
            elif callable(getattr(transport, "close", None)):
                transport.close()


class Rehost(_TransportBase):
    """Send each request to its provider's host instead of the loopback address it arrived at.

    For the recording server: a request for `127.0.0.1:8123/v1/messages` goes to
    `https://api.anthropic.com/v1/messages`, the first host of the wire that serves it (or to
    `base_url` when given: a stand-in provider). The path and query are kept.
    """

    def __init__(
        self, upstream: Any = None, *, base_url: str | None = None, wires: Sequence[Wire] | None = None
    ) -> None:
        self._wires = merge_wires(wires)
        self._base = base_url.rstrip("/") if base_url else None
        self._upstream = upstream
        self._network: dict[tuple[str, bool], Any] = {}
        self._lock = threading.Lock()

    def _moved(self, request: Any) -> Any:
        url = request.url
        if self._base is not None:
            target = type(url)(self._base)
        else:
            wire = next((w for w in self._wires if w.matches(request.method, url.path, host=url.host)), None)
            hosts = [h for h in (wire.hosts if wire is not None else ()) if "*" not in h]
            if not hosts:
                return None
            target = type(url)(f"https://{hosts[0]}")
        request.url = url.copy_with(scheme=target.scheme, host=target.host, port=target.port)
        request.headers["host"] = target.netloc.decode("ascii")
        return request

    def _transport(self, request: Any, *, is_async: bool) -> Any:
        if self._upstream is not None:
            return self._upstream
        key = (_http.http_module(request).__name__, is_async)
        with self._lock:
            transport = self._network.get(key)
            if transport is None:
                transport = self._network[key] = _http.network_transport(request, is_async=is_async)
        return transport

    def handle_request(self, request: Any) -> Any:
        """Forward a sync request to its provider (a request no wire serves gets a 404)."""
        moved = self._moved(request)
        if moved is None:
            return _not_found(request)
        return self._transport(request, is_async=False).handle_request(moved)

    async def handle_async_request(self, request: Any) -> Any:
        """Forward an async request to its provider (a request no wire serves gets a 404)."""
        moved = self._moved(request)
        if moved is None:
            return _not_found(request)
        return await self._transport(request, is_async=True).handle_async_request(moved)

    def close(self) -> None:
        """Close the sync network transports built here."""
        with self._lock:
            network = [t for (_, is_async), t in self._network.items() if not is_async]
        for transport in network:
            transport.close()

    async def aclose(self) -> None:
        """Close the async network transports built here."""
        with self._lock:
            network = [t for (_, is_async), t in self._network.items() if is_async]
        for transport in network:
            await transport.aclose()

    def __enter__(self) -> Rehost:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Rehost:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _not_found(request: Any) -> Any:
    hx = _http.http_module(request)
    body = json.dumps(
        {"error": {"type": "not_found_error", "message": "wirescript record: no provider serves this path"}}
    )
    return hx.Response(404, headers={"content-type": "application/json"}, content=body.encode(), request=request)


def record_command(
    out_path: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    upstream: str | None = None,
    out: Any = None,
    err: Any = None,
) -> int:
    """`wirescript record --out FILE`: a loopback server recording what it forwards, until SIGINT or SIGTERM.

    The base URL is printed alone on one line of `out` (stdout) once the server accepts connections:
    point the app's SDK at it (`ANTHROPIC_BASE_URL`; `OPENAI_BASE_URL` is it plus `/v1`). Each request
    goes on to its provider (`upstream`: a base URL standing in for every provider), and stopping
    writes the script. Bad arguments are reported on stderr with exit status 2.
    """
    import signal
    import sys

    from .server import ScriptServer

    out = out or sys.stdout
    err = err or sys.stderr
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            forward = Rehost(base_url=upstream)
            rec = RecordingTransport(out_path, upstream=forward)
            server = ScriptServer(rec, host=host, port=port)  # type: ignore[arg-type]  # it only forwards requests
            server.start()
        except UsageError as exc:
            print(f"wirescript record: {exc}", file=err, flush=True)
            return 2
        try:
            print(server.base_url, file=out, flush=True)
            print(
                f"wirescript record: recording to {os.fspath(out_path)} at {server.base_url}, forwarding to "
                f"{upstream or 'the providers'}; stop with Ctrl-C to write the script",
                file=err,
                flush=True,
            )
            while not stop.wait(0.2):
                pass
        finally:
            server.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    rec.save()  # the network connections belonged to the server's event loop, which has ended with it
    print(
        f"wirescript record: wrote {len(rec.turns)} turn(s) of {len(rec.requests)} request(s) to {rec.path}", file=err
    )
    for note in rec.notes:
        print(f"  - {note}", file=err)
    err.flush()
    return 0
