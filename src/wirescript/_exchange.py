"""What the core takes and gives: a neutral request, and a neutral answer. Pure data: no HTTP library.

As httpx's default transport hands httpcore a neutral `httpcore.Request`, each way into a stub (an
httpx/httpx2 client, a botocore or aiobotocore client, the loopback server) is a thin adapter that
turns its library's request into a `Request` and the core's `Answer` into its library's response:
`_http` for httpx and httpx2, `_botocore` for botocore, `_asgi` for the loopback server's ASGI
app. The core reads nothing else, so serving a boto3 client, or a script over the loopback server,
needs neither httpx nor httpx2.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from ._steps import Disconnect, Sleep, Step

if TYPE_CHECKING:
    from .recorded import RecordedRequest

__all__ = ["CHUNK_BYTES", "PER_EVENT", "UNREADABLE", "Answer", "OpenStream", "Request", "run", "tail_at", "whole"]

CHUNK_BYTES = 16 * 1024
"""How many bytes of whole frames an unfaulted stream sends per chunk (`_core.answer`); a wire that renders
a short stream at once knows it is sent as one chunk below it."""

PER_EVENT = "wirescript.per_event"
"""A request extension (httpx/httpx2): when true, an unfaulted stream is sent one event per chunk instead of
in batches of whole events (the loopback server sets it on what it forwards in record mode, so each event is
flushed to the network)."""

UNREADABLE = "wirescript.unreadable"
"""A request extension (httpx/httpx2): why the request reached the recorder only in part (the loopback server
could not read it as sent). Such a request is recorded as an `unreadable` problem and refused."""


class Request:
    """One HTTP request as the core reads it: the parts of its URL, its raw headers, its body, and how to answer.

    Written out rather than a dataclass, so that importing the core compiles no generated code for it.
    """

    __slots__ = (
        "body",
        "headers",
        "host",
        "method",
        "path",
        "per_event",
        "port",
        "query",
        "read_timeout",
        "unreadable",
    )

    def __init__(
        self,
        method: str,
        host: str,
        path: str,
        query: bytes,
        headers: Sequence[tuple[bytes, bytes]],
        body: bytes,
        per_event: bool = False,
        read_timeout: float | None = None,
        unreadable: str | None = None,
        port: int | None = None,
    ) -> None:
        self.method = method
        """The HTTP method, upper case."""
        self.host = host
        """The host, lower case, without the port."""
        self.path = path
        """The URL path, percent-decoded (`/model/anthropic.claude-3:0/converse`)."""
        self.query = query
        """The query string as sent, without the `?` (empty: none)."""
        self.headers = headers
        """The headers as sent: (name, value) byte pairs, in order, repeats included."""
        self.body = body
        """The whole body."""
        self.per_event = per_event
        """Send an unfaulted stream one event per chunk instead of in batches of whole events (the loopback
        server asks for it, to flush each event to the network)."""
        self.read_timeout = read_timeout
        """The client's read timeout in seconds: a fault's delay longer than it becomes a read timeout."""
        self.unreadable = unreadable
        """Why the request reached the stub only in part (the loopback server could not build it as sent):
        it is recorded as an `unreadable` problem and refused."""
        self.port = port
        """The port, when the URL names one other than its scheme's default."""

    def __repr__(self) -> str:
        return f"Request({self.method} {self.host}{self.path}, {len(self.body)} bytes)"


class Answer:
    """A response before it meets an HTTP library: what every adapter turns into its own library's response."""

    __slots__ = ("before", "body", "headers", "status", "watch")

    def __init__(
        self,
        status: int,
        headers: list[tuple[bytes, bytes]],
        before: tuple[Step, ...],
        body: bytes | Iterator[Step],
        watch: OpenStream | None = None,
    ) -> None:
        self.status = status
        self.headers = headers
        """The response headers as byte pairs (Latin-1, as HTTP carries them)."""
        self.before = before
        """Steps run before the response exists (a first-byte delay, a connection that fails before any byte):
        a failure here happens inside the client's send, where its SDK may retry it."""
        self.body = body
        """The whole body, or the steps that send it as the client reads."""
        self.watch = watch
        """For a streamed answer whose body is whole bytes: the adapter sends it with `whole`, so the stub
        knows whether the client read it to its end (`unfinished_stream`). A body of steps tells it itself."""

    def __repr__(self) -> str:
        return f"Answer({self.status})"


class OpenStream:
    """A streamed answer the app should read to its end: open in `streams` until its tail is taken.

    The tail of a streamed answer goes out in a chunk of its own: the last byte of its last frame
    that carries anything (its content), the line ends after it, and the frames that only close the
    stream (`Wire.closing`: `message_stop`, `[DONE]`). A client's decoder asks for the tail only once
    it has read every event before it, and needs it to finish the last one (an SSE event or line
    ends with its line ends, an AWS event-stream message with its checksum). So taking it is reading
    the stream to its end, whatever the SDK does next (anthropic reads on to the end of the body,
    openai closes the response at `[DONE]`, litellm stops at the stop reason), and an app that stops
    early never takes it.
    """

    __slots__ = ("_streams", "cut", "record", "sent")

    def __init__(self, record: RecordedRequest, streams: dict[int, OpenStream]) -> None:
        self.record = record
        self.sent = 0
        """The bytes handed to the client so far."""
        self.cut = 0
        """Where the tail begins in the last chunk (set when the last chunk is made)."""
        self._streams = streams
        streams[record.index] = self

    def end(self) -> None:
        """The stream reached its end (or the stub's own fault ended it): no longer open."""
        self._streams.pop(self.record.index, None)


def tail_at(chunk: bytes, content_end: int) -> int:
    """Where the tail of a stream's last chunk begins: at the last byte of content before `content_end`.

    `content_end` is where the closing frames begin (the chunk's length when there are none); the
    line ends just before it belong to the tail too.
    """
    end = content_end
    while end and chunk[end - 1] in b"\r\n":
        end -= 1
    return end - 1 if end else 0


def whole(body: bytes, watch: OpenStream) -> Iterator[bytes]:
    """A streamed answer's whole body as the client reads it: up to its tail, then, once asked for, the tail."""
    cut = watch.cut
    watch.sent = cut
    yield body[:cut]
    watch.end()
    watch.sent = len(body)
    yield body[cut:]


def run(
    steps: Iterable[Step], dropped: Callable[[str], Exception], timed_out: Callable[[str], Exception]
) -> Iterator[bytes | float]:
    """The one step loop every adapter drives: bytes to send and seconds to wait, yielded; a failure raised.

    `dropped` and `timed_out` make the adapter's library's own exceptions (a dropped connection, a
    read timeout) from the step's message. Each adapter sleeps its own way (a thread's, an event loop's).
    """
    for step in steps:
        if isinstance(step, bytes):
            yield step
        elif isinstance(step, Sleep):
            yield step.seconds
        elif isinstance(step, Disconnect):
            raise dropped(step.message)
        else:
            raise timed_out(step.message)
