"""`Interception`: send the requests of clients an app builds itself to a stub, by host.

```
stub = ScriptTransport(["Hello!"])
with stub.intercept():                                  # or Interception(stub)
    client = anthropic.Anthropic(api_key="test-key")    # no http_client: it is reached anyway
    client.messages.create(...)                         # answered by the stub
```

While an interception is open, every httpx and httpx2 client, sync and async, sends its
requests for a matching host to the stub instead of the network: clients built before the block
and inside it, the SDKs' default clients (`anthropic.DefaultHttpxClient`, openai's
`DefaultHttpxClient`) and the clients frameworks build for themselves (langchain's
`ChatAnthropic`, ...). Requests for other hosts go where they were going.

How: the default transports' methods are patched class-wide (`httpx.HTTPTransport.handle_request`,
`httpx.AsyncHTTPTransport.handle_async_request`, and the same two of httpx2), as pytest-httpx
does, and put back exactly as they were when the block opened, on error too: the original function
objects, or, in a pytest session once a test used the fixture, the network guard's wrappers, which
stay laid until the session ends and pass every request through while nothing is open.

boto3: a client (boto3's or botocore's, sync) of an AWS service a wire of the stub serves
(`Wire.boto_service`: `bedrock-runtime`) *created* while the block is open, for a matching host
(`bedrock-runtime.{region}.amazonaws.com`, or its `endpoint_url=`'s), is served by the stub
in-process (as `stub.attach(client)` does) until the block ends, when it is given back to
botocore. botocore's `ClientCreator.create_client` is wrapped for that while the block is open, when
botocore is installed. A client created before the block is not reached: `stub.attach(client)` it.

aiohttp: a session created while the block is open (or while the pytest session holds the patches)
sends its requests for a matching host to the stub too, through aiohttp's client middlewares
(`_aiohttp`, aiohttp 3.12 or later): google-genai's async client sends over aiohttp whenever it is
installed. The interception imports aiohttp, where it is installed, when it opens.

What it cannot reach: a client built with a transport of another class (`httpx.MockTransport`,
`WSGITransport`/`ASGITransport`, a stub passed explicitly, a `BaseTransport` subclass of your own)
keeps its transport, and code that uses neither httpx, httpx2 nor aiohttp (aiobotocore, requests,
a library's own sockets such as dspy's lm15 engine) is not seen; nor is an aiohttp session created
before the patches were laid. The network guard of the pytest fixture still stops those from
reaching the internet.

The hosts taken by default are those the stub's wires declare (`Wire.hosts`): for a stub without
wires of its own, `KNOWN_HOSTS`; an outside wire's hosts are intercepted with them.

Host patterns: a host matches a pattern equal to it (case-insensitively, a trailing dot
ignored), and `*` in a pattern matches one or more characters within one DNS label, never a dot:
`*.openai.azure.com` matches `my-resource.openai.azure.com` but neither `openai.azure.com` nor
`a.b.openai.azure.com`. The pattern `"*"` alone matches every host.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from . import _hooks
from ._adapters import aiohttp as _aiohttp
from .errors import UsageError
from .wires import Wire, default_wires, hosted_wires
from .wires._hosts import ALL_HOSTS, host_matcher

if TYPE_CHECKING:
    from .recording import RecordingTransport
    from .transport import ScriptTransport

__all__ = ["ALL_HOSTS", "KNOWN_HOSTS", "Interception", "host_matcher", "hosts_of", "open_interception"]


def hosts_of(wires: Iterable[Wire]) -> frozenset[str]:
    """Every host pattern the wires declare (`Wire.hosts`)."""
    return frozenset(host for wire in wires for host in wire.hosts)


_hooks.transports.finders = (_aiohttp.spot,)  # aiohttp sessions are reached with the transports

KNOWN_HOSTS: frozenset[str] = hosts_of([*default_wires(), *hosted_wires()])
"""The hosts the default wires declare (`Wire.hosts`): what a stub without wires of its own intercepts."""


_current: Interception | None = None
"""The open interception (one at a time in a process), set and cleared under `_hooks.lock`."""


def open_interception() -> Interception | None:
    """The interception open in this process, or None."""
    return _current


class Interception:
    """Route the requests of every httpx/httpx2 client on its default transport, and aiohttp session, to `stub`.

    Args:
        stub: The stub that answers intercepted requests (or a `RecordingTransport`, which records them).
        hosts: The hosts to take: None for the hosts the stub's wires declare (`KNOWN_HOSTS` for the
            default wires); `"*"` for every request; else host names or patterns (a single string is
            one host), which replace them.

    Raises:
        UsageError: A host is not a host name (a URL, `host:port`, ...).

    Use it as a context manager (`stub.intercept()` makes one). Entering it while another
    interception is open raises `UsageError`: one stub answers at a time. The routing is
    process-wide: requests from every thread are routed while the block is open.

    """

    __slots__ = ("_clients", "_hosts", "_matches", "_open", "_services", "_wired", "stub")

    def __init__(self, stub: ScriptTransport | RecordingTransport, hosts: Iterable[str] | str | None = None) -> None:
        self.stub = stub
        """The stub that answers intercepted requests."""
        self._wired = hosts_of(stub.wires)
        self._services = frozenset(wire.boto_service for wire in stub.wires if wire.boto_service)
        if hosts is None:
            chosen: frozenset[str] = self._wired
        elif isinstance(hosts, str):
            chosen = frozenset({hosts})
        else:
            chosen = frozenset(hosts)
        self._matches = host_matcher(chosen)
        self._hosts = chosen
        self._open = False
        self._clients: list[Any] = []

    @property
    def hosts(self) -> frozenset[str]:
        """The host patterns this interception takes (`frozenset({"*"})` for every host)."""
        return self._hosts

    @property
    def active(self) -> bool:
        """Whether the interception is open (between `__enter__` and `__exit__`)."""
        return self._open

    def routes(self, host: str) -> bool:
        """Whether a request for `host` goes to the stub while the interception is open."""
        return self._matches(host)

    def created(self, client: Any) -> None:
        """Serve a botocore client created while the interception is open, if it is for a routed host.

        Only clients of a service a wire of the stub serves are taken (`Wire.boto_service`); never
        raises, so that creating a client keeps working whatever happens here.
        """
        try:
            meta = client.meta
            if meta.service_model.service_name not in self._services:
                return
            if not self.routes(urlsplit(meta.endpoint_url).hostname or ""):
                return
            self.stub.attach(client)
        except Exception:  # an unusual client stays botocore's (the guard still stops the network)
            return
        self._clients.append(client)

    def _route(self, host: str) -> ScriptTransport | RecordingTransport | None:
        """The transport wrappers' callback while open: the stub for a host it `routes`, else None (the network)."""
        return self.stub if self.routes(host) else None

    def __enter__(self) -> Interception:
        global _current
        _hooks.botocore_client_creator()  # imported outside the lock: the first import takes a while
        _hooks.import_aiohttp()  # so that the aiohttp sessions the app creates in the block are reached
        with _hooks.lock:
            current = _current
            if current is not None:
                same = " (this very interception)" if current is self else ""
                raise UsageError(
                    f"wirescript: cannot intercept for {self.stub!r}: {current.stub!r} is already intercepting"
                    f"{same}. One stub answers intercepted requests at a time: close the first interception, "
                    "or give one of the clients its stub explicitly (http_client=httpx2.Client(transport=stub))."
                )
            _hooks.acquire(self)
            _hooks.hook_botocore(self.created)
            _hooks.transports.route = self._route
            _current = self
            self._open = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        global _current
        with _hooks.lock:
            if not self._open:
                return
            self._open = False
            if _current is self:
                _current = None
                _hooks.transports.route = None
                _hooks.unhook_botocore()
            _hooks.release(self)
            clients, self._clients = self._clients, []
        for client in clients:
            self.stub.detach(client)

    def __repr__(self) -> str:
        if self._hosts == {ALL_HOSTS}:
            hosts = "every host"
        elif self._hosts == self._wired:
            hosts = "its wires' hosts"
        else:
            hosts = ", ".join(sorted(self._hosts))
        return f"<Interception {'open' if self._open else 'closed'} {self.stub!r} hosts: {hosts}>"
