"""`NetworkGuard`: no real network during a wirescript test; loopback stays open.

The pytest fixture (`wirescript`, and `wirescript_server` through it) keeps a guard active for
the whole test. While it is active:

- a connection to an address that is not loopback (`socket.socket.connect` / `connect_ex`,
  `socket.create_connection`) fails at once with `NetworkBlockedError`, a `ConnectionError`; so
  does a datagram or a TCP Fast Open connection sent there (`sendto` / `sendmsg` with an address);
- so does a request sent *through a proxy* to a host that is not loopback: the first bytes sent
  on any socket are read for an HTTP proxy's `CONNECT host:port` or absolute-URI request line
  (`GET http://host/...`), and for a SOCKS4/4a/5 connect request, so a loopback `HTTPS_PROXY`
  (cntlm, px, mitmproxy, `ssh -D`) does not carry a forgotten client to the real API;
- so does a name lookup (`socket.getaddrinfo`, `gethostbyname`, `gethostbyname_ex`,
  `gethostbyaddr`) of a known provider host (`KNOWN_HOSTS`), so the failure costs no resolver
  time and names the host;
- every refused attempt is recorded (`guard.blocked`), and the fixture fails the test at teardown
  with them, even when the app swallowed the error.

A request of an httpx or httpx2 client on its default transport whose connection was refused is
answered by the guard instead, with a 403 error response marked `x-should-retry: false` and the
same message: the provider SDKs retry a connection error twice with backoff (over a second), but
not that answer, so a test that forgot to give its client the stub fails in milliseconds. A
request mocked below the transport (respx, pytest-httpx) opens no socket and is never touched.

Always allowed: loopback addresses (127.0.0.0/8, ::1), the unspecified address, `localhost`
(and `*.localhost`), unix sockets and other non-IP families, and the `allowed_hosts`.

What the guard cannot see: code that opens sockets outside Python's `socket` module (C
extensions with their own networking, uvloop's event loop, c-ares DNS through aiodns) is not
stopped, nor is a proxy reached over TLS (`HTTPS_PROXY=https://...`: what goes to it is
encrypted). It guards the process it runs in only: a subprocess has its own network.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import re
import socket
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, NamedTuple, TypeVar

from . import _hooks
from .errors import NetworkBlockedError, UsageError
from .intercept import KNOWN_HOSTS, host_matcher

__all__ = ["BlockedAttempt", "NetworkGuard", "active_guard", "hold_patches", "release_patches"]

_LOCK = threading.Lock()
"""Guards what the guards saw (refused attempts, resolved names): one lock for all, as one guard is active at a time."""
_IP_FAMILIES = frozenset({socket.AF_INET, socket.AF_INET6})
_CLIENT_HINT = "http_client=httpx2.Client(transport=stub)"
"""How most SDKs' clients take the stub; a wire whose SDK differs says so (`Wire.client_hint`)."""
_HINT = (
    "Give the app's client the stub ({client}), or intercept the "
    "clients the app builds itself (stub = wirescript(script, intercept=True)); to let this host through, "
    "mark the test @pytest.mark.wirescript(allowed_hosts=[...]) or @pytest.mark.wirescript(allow_network=True)."
)
_PROXIED = "connection through a proxy"
_METADATA = frozenset({"169.254.169.254", "fd00:ec2::254"})
"""The EC2 instance metadata service's addresses, where botocore looks for credentials a client was not given."""
_METADATA_HINT = (
    "{host} is the EC2 instance metadata service: botocore asks it for credentials when a boto3 client "
    "is built without any. Give every boto3 client credentials (aws_access_key_id=..., aws_secret_access_key=...; "
    "a framework that builds a client of its own takes them too), or set AWS_EC2_METADATA_DISABLED=true."
)


class BlockedAttempt(NamedTuple):
    """A connection, datagram or name lookup the guard refused."""

    kind: str
    """`"connection"`, `"connection through a proxy"`, `"datagram"` or `"DNS lookup"`."""
    host: str
    """The host name, or the address when no name is known."""
    port: int | None
    """The port, when known."""
    address: str | None
    """The address connected to: the one a name resolved to earlier in the test, or the proxy's
    (`127.0.0.1:3128`) for a connection through a proxy; None when not known."""

    @property
    def target(self) -> str:
        """`host:port`, and what it went through: `api.example.com:443 (203.0.113.7)`."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        shown = f"{host}:{self.port}" if self.port is not None else host
        if self.kind == _PROXIED:
            return f"{shown} through the proxy at {self.address or 'an unknown address'}"
        return f"{shown} ({self.address})" if self.address is not None else shown

    def __str__(self) -> str:
        kind = "connection" if self.kind == _PROXIED else self.kind
        return f"{kind} {'of' if kind == 'DNS lookup' else 'to'} {self.target}"


class NetworkGuard:
    """Refuse every connection to a host that is not loopback, direct or through a proxy; and lookups of provider hosts.

    Args:
        allowed_hosts: Host names, addresses or patterns (`*` within one DNS label, as for
            `Interception`) that stay reachable.

    Raises:
        UsageError: A host is not a host name.

    A context manager; one guard is active at a time in a process (entering a second raises
    `UsageError`). Exiting puts back exactly what entering laid: the original socket and transport
    functions, or nothing when their wrappers were laid already (the pytest session holds them,
    `hold_patches`): those stay, and pass every call through while no guard is active.

    """

    def __init__(self, *, allowed_hosts: Iterable[str] = ()) -> None:
        # Made for every test that uses the fixture: only what a test without network calls needs.
        self.allowed_hosts: tuple[str, ...] = tuple(allowed_hosts)
        """The hosts that stay reachable."""
        self._allows = host_matcher(self.allowed_hosts) if self.allowed_hosts else _nothing
        self._blocked: list[BlockedAttempt] = []
        self._names: dict[str, str] = {}  # address -> the host name it was resolved from
        self._allowed_addresses: set[str] = set()
        self._through: dict[str, str] = {}  # host -> the message of a refused connection to it through a proxy
        self._active = False
        self._holds = False  # whether this guard holds the patches itself (else: the session's hold has them)

    def allow(self, hosts: Iterable[str]) -> None:
        """Let `hosts` through from now on too (record mode lets the provider hosts through).

        Raises:
            UsageError: A host is not a host name.

        """
        added = tuple(host for host in hosts if host not in self.allowed_hosts)
        if added:
            matcher = host_matcher((*self.allowed_hosts, *added))
            with _LOCK:
                self.allowed_hosts = (*self.allowed_hosts, *added)
                self._allows = matcher

    @property
    def active(self) -> bool:
        """Whether the guard is on."""
        return self._active

    @property
    def blocked(self) -> list[BlockedAttempt]:
        """Every attempt refused so far, in order."""
        with _LOCK:
            return list(self._blocked)

    def report(self) -> str | None:
        """The teardown failure message listing the refused attempts, or None when there were none."""
        blocked = self.blocked
        if not blocked:
            return None
        counts = Counter(str(attempt) for attempt in blocked)
        lines = [f"  - {what}" + (f" ({n} times)" if n > 1 else "") for what, n in counts.items()]
        clients = dict.fromkeys(_client_hint(attempt.host) for attempt in blocked if attempt.host not in _METADATA)
        metadata = dict.fromkeys(_METADATA_HINT.format(host=a.host) for a in blocked if a.host in _METADATA)
        return "\n".join(
            [
                f"wirescript: the test tried to reach the network ({len(blocked)} attempt(s) refused by the guard):",
                *lines,
                *metadata,
                *([_HINT.format(client="; ".join(clients))] if clients else []),
            ]
        )

    # ------------------------------------------------------------------ checks

    def allows(self, host: str) -> bool:
        """Whether a connection to `host` (a name or an address) goes through."""
        name = host.lower().rstrip(".")
        if name == "localhost" or name.endswith(".localhost"):
            return True
        address = _address(name)
        if address is None:
            return self._allows(name)
        if address.is_loopback or address.is_unspecified:
            return True
        mapped = getattr(address, "ipv4_mapped", None)
        if mapped is not None and (mapped.is_loopback or mapped.is_unspecified):
            return True
        shown = str(address)
        with _LOCK:
            if shown in self._allowed_addresses:
                return True
        return self._allows(shown)

    def _refuse(self, kind: str, host: str, port: int | None, via: str | None = None) -> NetworkBlockedError:
        with _LOCK:
            name = self._names.get(host) if via is None else None
            address = via if via is not None else (host if name is not None else None)
            attempt = BlockedAttempt(kind, name or host, port, address)
            self._blocked.append(attempt)
        hint = (
            _METADATA_HINT.format(host=attempt.host)
            if attempt.host in _METADATA
            else _HINT.format(client=_client_hint(attempt.host))
        )
        return NetworkBlockedError(
            f"wirescript: blocked a {attempt}: a test that uses the wirescript fixture "
            f"does not reach the network. {hint}",
            host=attempt.host,
            port=port,
        )

    def _check_connect(self, family: int, address: Any) -> None:
        if family not in _IP_FAMILIES or not isinstance(address, tuple) or len(address) < 2:
            return
        host, port = _text(address[0]), address[1]
        if host is not None and not self.allows(host):
            raise self._refuse("connection", host, port if isinstance(port, int) else None)

    def _check_sendto(self, sock: socket.socket, address: Any) -> None:
        """A datagram, or a TCP Fast Open connection (`MSG_FASTOPEN`), sent to `address`."""
        if sock.family not in _IP_FAMILIES or not isinstance(address, tuple) or len(address) < 2:
            return
        host, port = _text(address[0]), address[1]
        if host is not None and not self.allows(host):
            kind = "datagram" if sock.type == socket.SOCK_DGRAM else "connection"
            raise self._refuse(kind, host, port if isinstance(port, int) else None)

    def _check_sent(self, sock: socket.socket, data: Any) -> None:
        """Bytes about to be sent: a proxy's connect request to a host that is not allowed is refused."""
        try:
            if data[0] not in _SUSPECT:  # most sends: one look at the first byte
                return
            head = bytes(data[:_PEEK])
        except Exception:  # empty, or not a byte buffer: the send itself says what is wrong
            return
        target = _proxied_target(head)
        if target is None or self.allows(target[0]):
            return
        refusal = self._refuse(_PROXIED, target[0], target[1], via=_peer(sock))
        with _LOCK:
            self._through[target[0].lower()] = str(refusal)
        with contextlib.suppress(OSError):  # a stack that reads on after a failed write gets EOF at once, not a timeout
            sock.shutdown(socket.SHUT_RDWR)
        raise refusal

    def _check_lookup(self, host: str | None, port: Any) -> None:
        if host is None or _address(host) is not None or self.allows(host) or not _known_hosts()(host):
            return
        raise self._refuse("DNS lookup", host, port if isinstance(port, int) else None)

    def _named(self, host: str | None, addresses: Iterable[Any]) -> None:
        """`_resolved` for the addresses `gethostbyname(_ex)` returned."""
        self._resolved(host, [(0, 0, 0, "", (address, 0)) for address in addresses if isinstance(address, str)])

    def _resolved(self, host: str | None, results: Any) -> None:
        """Remember the addresses a name resolved to: to name them in messages, and to let allowed ones through."""
        if host is None or _address(host) is not None:
            return
        allowed = self._allows(host)
        with _LOCK:
            for result in results:
                sockaddr = result[4] if isinstance(result, tuple) and len(result) > 4 else None
                if isinstance(sockaddr, tuple) and sockaddr and isinstance(sockaddr[0], str):
                    shown = sockaddr[0].partition("%")[0]
                    self._names[shown] = host
                    if allowed:
                        self._allowed_addresses.add(shown)

    # ------------------------------------------------------------------ httpx answer

    def answer_blocked(self, request: Any, exc: BaseException, is_async: bool) -> Any | None:
        """The answer to an httpx/httpx2 request whose connection the guard refused, or None for other errors.

        A 403 error response that the provider SDKs do not retry, carrying the guard's message in
        the shapes both the Anthropic and the OpenAI SDKs read.
        """
        blocked = _find_blocked(exc)
        if blocked is not None:
            message = str(blocked)
        else:  # httpcore reads on after a failed write: a refused proxy tunnel surfaces as the read's error
            with _LOCK:
                refused = self._through.get(str(request.url.host).lower())
            if refused is None:
                return None
            message = refused
        from ._adapters import http as _http
        from .wires.base import loud_error

        answer = loud_error(403, "permission_error", message, "wirescript_network_blocked")
        return _http.make_response(request, answer.status, answer.headers, answer.body, is_async=is_async)

    # ------------------------------------------------------------------ on and off

    def __enter__(self) -> NetworkGuard:
        global _current
        with _hooks.lock:
            if _current is not None:
                raise UsageError("wirescript: a network guard is already active in this process; one at a time")
            if not _hold.intact():
                _SOCKETS.acquire(self)  # no session hold, or someone patched since: lay what is missing
                _hooks.transports.acquire(self)
                self._holds = True
            _hooks.transports.rescue = self.answer_blocked
            _current = self
            self._active = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        global _current
        with _hooks.lock:
            if not self._active:
                return
            self._active = False
            if _current is self:
                _current = None
                _hooks.transports.rescue = None
            if self._holds:
                self._holds = False
                _hooks.transports.release(self)
                _SOCKETS.release(self)

    def __repr__(self) -> str:
        allowed = f" allowed_hosts={list(self.allowed_hosts)!r}" if self.allowed_hosts else ""
        return f"<NetworkGuard {'active' if self._active else 'off'}{allowed} blocked={len(self.blocked)}>"


_current: NetworkGuard | None = None
"""The active guard (one at a time in a process), set and cleared under `_hooks.lock`; the wrappers read it."""


def active_guard() -> NetworkGuard | None:
    """The network guard active in this process, or None."""
    return _current


class _Session:
    """The pytest session's hold on the guard's patches (`hold_patches`)."""

    def __repr__(self) -> str:
        return "<the session's hold on the network guard's patches>"


_SESSION = _Session()


class _Hold:
    """Whether the session holds the patches (`hold_patches`), and what it laid, to check it in one go."""

    def __init__(self) -> None:
        self.on = False
        self.spots: tuple[tuple[Any, str, Any], ...] = ()  # (owner, name, the wrapper laid there)
        self.modules: tuple[tuple[str, Any], ...] = ()  # (name, the module the spots were found in)

    def take(self) -> None:
        """Remember what is at every spot of both sets now (under the lock, right after acquiring them)."""
        self.on = True
        spots = (*_SOCKETS.spots, *_hooks.transports.spots)
        self.spots = tuple((owner, name, getattr(owner, name)) for owner, name in spots)
        self.modules = tuple((name, sys.modules.get(name)) for name in _hooks.MODULES)

    @property
    def laid(self) -> tuple[Any, ...]:
        """The wrappers laid, spot by spot."""
        return tuple(laid for _, _, laid in self.spots)

    def intact(self) -> bool:
        """Whether every wrapper is still in place, on the same modules (each guard's one check: a plain loop)."""
        if not self.on:
            return False
        for owner, name, laid in self.spots:
            if getattr(owner, name, None) is not laid:
                return False
        modules = sys.modules
        for name, module in self.modules:  # noqa: SIM110 - all() over a generator costs each test more
            if modules.get(name) is not module:
                return False
        return True


_hold = _Hold()


def hold_patches() -> bool:
    """Lay the guard's patches now and keep them until `release_patches()`, whether a guard is active or not.

    The pytest plugin takes this hold at the first test that uses the fixture and lets go when the
    session ends, so that entering and leaving each test's guard only sets which guard is active,
    once it has checked that the wrappers are all still in place (where someone patched over one
    since, the guard lays its own on top for the test, as without the hold). In between, the
    wrappers pass every call through unchanged: no guard is active.

    Returns:
        True when this call took the hold (call `release_patches()` once); False when it was held.

    """
    with _hooks.lock:
        if _hold.on:
            return False
        _SOCKETS.acquire(_SESSION)
        _hooks.transports.acquire(_SESSION)
        _hold.take()
        return True


def release_patches() -> None:
    """Let go of `hold_patches()`'s hold: the last holder puts the original functions back exactly.

    A guard active on the hold then holds what the hold laid, until it exits.
    """
    with _hooks.lock:
        if not _hold.on:
            return
        _hold.on = False
        guard = _current
        if guard is not None and not guard._holds:
            _SOCKETS.acquire(guard)
            _hooks.transports.acquire(guard)
            guard._holds = True
        _hooks.transports.release(_SESSION)
        _SOCKETS.release(_SESSION)


_Wrapper = TypeVar("_Wrapper", bound=Callable[..., Any])


def _wrapping(function: _Wrapper, original: Any) -> _Wrapper:
    function.__wrapped__ = original  # type: ignore[attr-defined]
    function.__doc__ = original.__doc__
    return function


def _wrap_connect(original: Callable[..., Any]) -> Callable[..., Any]:
    def connect(self: socket.socket, address: Any) -> None:
        guard = _current
        if guard is not None:
            guard._check_connect(self.family, address)
        original(self, address)

    return _wrapping(connect, original)


def _wrap_connect_ex(original: Callable[..., Any]) -> Callable[..., Any]:
    def connect_ex(self: socket.socket, address: Any) -> int:
        guard = _current
        if guard is not None:
            guard._check_connect(self.family, address)
        return original(self, address)  # type: ignore[no-any-return]

    return _wrapping(connect_ex, original)


def _wrap_create_connection(original: Callable[..., Any]) -> Callable[..., Any]:
    def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        guard = _current
        if guard is not None:
            guard._check_connect(socket.AF_INET, address)
        return original(address, *args, **kwargs)  # type: ignore[no-any-return]

    return _wrapping(create_connection, original)


def _wrap_send(original: Callable[..., Any]) -> Callable[..., Any]:
    def send(self: socket.socket, data: Any, *args: Any) -> Any:
        guard = _current
        if guard is not None:
            guard._check_sent(self, data)
        return original(self, data, *args)

    return _wrapping(send, original)


def _wrap_sendto(original: Callable[..., Any]) -> Callable[..., Any]:
    def sendto(self: socket.socket, data: Any, *args: Any) -> Any:
        guard = _current
        if guard is not None:
            if args:  # sendto(data, address) or sendto(data, flags, address)
                guard._check_sendto(self, args[-1])
            guard._check_sent(self, data)
        return original(self, data, *args)

    return _wrapping(sendto, original)


def _wrap_sendmsg(original: Callable[..., Any]) -> Callable[..., Any]:
    def sendmsg(self: socket.socket, buffers: Any, *args: Any) -> Any:
        guard = _current
        if guard is not None:
            if len(args) >= 3 and args[2] is not None:  # sendmsg(buffers, ancdata, flags, address)
                guard._check_sendto(self, args[2])
            if not isinstance(buffers, (list, tuple)):
                buffers = list(buffers)  # an iterator is read once: read it here, send the list
            if buffers:
                guard._check_sent(self, buffers[0])
        return original(self, buffers, *args)

    return _wrapping(sendmsg, original)


def _wrap_getaddrinfo(original: Callable[..., Any]) -> Callable[..., Any]:
    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        guard = _current
        if guard is None:
            return original(host, port, *args, **kwargs)
        name = _text(host)
        guard._check_lookup(name, port)
        results = original(host, port, *args, **kwargs)
        guard._resolved(name, results)
        return results

    return _wrapping(getaddrinfo, original)


def _wrap_name_lookup(addresses: Callable[[Any], Iterable[Any]]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A wrapper maker for `gethostbyname` (`addresses`: its one address) or `gethostbyname_ex` (its third item)."""

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def lookup(host: Any) -> Any:
            guard = _current
            if guard is None:
                return original(host)
            name = _text(host)
            guard._check_lookup(name, None)
            result = original(host)
            guard._named(name, addresses(result))
            return result

        lookup.__name__ = original.__name__
        return _wrapping(lookup, original)

    return wrap


def _ex_addresses(result: Any) -> Iterable[Any]:
    return result[2] if isinstance(result, tuple) and len(result) > 2 else ()


def _wrap_gethostbyaddr(original: Callable[..., Any]) -> Callable[..., Any]:
    def gethostbyaddr(host: Any) -> Any:
        guard = _current
        if guard is not None:
            guard._check_lookup(_text(host), None)  # a provider host's name; an address is looked up as asked
        return original(host)

    return _wrapping(gethostbyaddr, original)


_SOCKET_SPOTS = (
    _hooks.Spot(socket.socket, "connect", _wrap_connect),
    _hooks.Spot(socket.socket, "connect_ex", _wrap_connect_ex),
    _hooks.Spot(socket, "create_connection", _wrap_create_connection),
    _hooks.Spot(socket.socket, "send", _wrap_send),
    _hooks.Spot(socket.socket, "sendall", _wrap_send),
    _hooks.Spot(socket.socket, "sendto", _wrap_sendto),
    _hooks.Spot(socket.socket, "sendmsg", _wrap_sendmsg),
    _hooks.Spot(socket, "getaddrinfo", _wrap_getaddrinfo),
    _hooks.Spot(socket, "gethostbyname", _wrap_name_lookup(lambda address: (address,))),
    _hooks.Spot(socket, "gethostbyname_ex", _wrap_name_lookup(_ex_addresses)),
    _hooks.Spot(socket, "gethostbyaddr", _wrap_gethostbyaddr),
)
"""The socket functions the guard replaces while it is active (or the session holds them).

Each wrapper checks against the active guard (`_current`); with none, it calls what it wraps and
nothing else, as one left laid between tests or behind a later patch must. `send` and `sendall`
share a wrapper (both take `(data, flags=0)`).
"""

_SOCKETS = _hooks.Patches(lambda: _SOCKET_SPOTS)
"""The socket patches: held by the active guard (and the pytest session's hold)."""

_PEEK = 1024
"""How many of the first bytes sent are read for a proxy's request line (the host comes early)."""
_SUSPECT = frozenset(b"CGPDHOT\x04\x05")
"""The first bytes that may start a proxy's connect request: an HTTP method's first letter
(`CONNECT`, or `GET`/`POST`/... with an absolute URI), SOCKS4 (4) and SOCKS5 (5). Anything else is
sent without a look."""
_PROXY_LINE = re.compile(
    rb"CONNECT (?P<authority>[^\s/]+) "
    rb"|[A-Z]{3,10} (?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<host>[^\s/?#]+)[\s/?#]"
)
_DEFAULT_PORTS = {b"http": 80, b"ws": 80, b"https": 443, b"wss": 443}


def _proxied_target(head: bytes) -> tuple[str, int | None] | None:
    """The host and port a proxy is asked to reach by the first bytes of a connection, or None.

    An HTTP proxy's `CONNECT host:port` (authority form) or a request with an absolute URI
    (`GET http://host/path`); a SOCKS5 or SOCKS4/4a connect request (the SOCKS5 greeting before it
    names no host). A request line in origin form (`GET /path`) names no other host: None.
    """
    match = _PROXY_LINE.match(head)
    if match is not None:
        if match["authority"] is not None:
            return _split_authority(match["authority"], None)
        return _split_authority(match["host"], _DEFAULT_PORTS.get(match["scheme"].lower()))
    if len(head) >= 7 and head[0] == 5 and head[1] == 1 and head[2] == 0:  # SOCKS5 CONNECT
        kind, port = head[3], head[-2:]
        if kind == 1 and len(head) == 10:
            return str(ipaddress.IPv4Address(head[4:8])), int.from_bytes(port, "big")
        if kind == 4 and len(head) == 22:
            return str(ipaddress.IPv6Address(head[4:20])), int.from_bytes(port, "big")
        if kind == 3 and len(head) == 7 + head[4]:
            return _text(head[5 : 5 + head[4]]) or "", int.from_bytes(port, "big")
        return None
    if len(head) >= 9 and head[0] == 4 and head[1] == 1 and head.endswith(b"\0"):  # SOCKS4 / SOCKS4a CONNECT
        port_number, address = int.from_bytes(head[2:4], "big"), head[4:8]
        if address[:3] == b"\0\0\0" and address[3]:  # 4a: the host name follows the user id
            _, _, name = head[8:].partition(b"\0")
            return _text(name.rstrip(b"\0")) or "", port_number
        return str(ipaddress.IPv4Address(address)), port_number
    return None


def _split_authority(authority: bytes, default_port: int | None) -> tuple[str, int | None]:
    """`host` and port of `user@host:port`, `[v6]:port` or `host`."""
    text = authority.decode("latin-1").rpartition("@")[2]
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = text.partition(":") if text.count(":") == 1 else (text, "", "")
    return host, int(port_text) if port_text.isdigit() else default_port


def _peer(sock: socket.socket) -> str | None:
    """`host:port` of the socket's peer (the proxy), or None."""
    try:
        peer = sock.getpeername()
    except OSError:
        return None
    if isinstance(peer, tuple) and len(peer) >= 2:
        host = f"[{peer[0]}]" if ":" in str(peer[0]) else str(peer[0])
        return f"{host}:{peer[1]}"
    return str(peer) or None


def _client_hint(host: str) -> str:
    """How the app's client takes the stub, for the SDK of the API at `host` (`Wire.client_hint`)."""
    name = host.lower().rstrip(".")
    for wire in _hinting_wires():
        if wire.claims(name):
            return str(wire.client_hint)
    return _CLIENT_HINT


@functools.cache
def _hinting_wires() -> tuple[Any, ...]:
    from .wires import default_wires

    return tuple(wire for wire in default_wires() if wire.client_hint is not None)


@functools.cache
def _known_hosts() -> Callable[[str], bool]:
    return host_matcher(KNOWN_HOSTS)


def _nothing(host: str) -> bool:
    return False


def _text(host: Any) -> str | None:
    if isinstance(host, bytes):
        try:
            return host.decode("idna")
        except UnicodeError:
            return host.decode("ascii", "replace")
    return host if isinstance(host, str) else None


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return None


def _find_blocked(exc: BaseException) -> NetworkBlockedError | None:
    """The `NetworkBlockedError` behind `exc`: itself, a cause or context, or inside an exception group."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, NetworkBlockedError):
            return current
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
    return None
