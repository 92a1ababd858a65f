"""The class-wide patches of httpx's and httpx2's default transports, shared by interception and the guard.

`HTTPTransport.handle_request` and `AsyncHTTPTransport.handle_async_request` of each library that
is importable are replaced by one wrapper while anything holds the patch (an open `Interception`,
an active `NetworkGuard`, the pytest session once a test used the fixture), and put back exactly,
the original function objects, when the last holder lets go. The wrapper knows nothing of who
holds it: it calls the callbacks the layer above registered on `transports` (as respx's `Mocker`
holds its routers), read afresh on every request:

1. `transports.route(host)`, set by an open interception: the transport it returns (the stub)
   answers the request;
2. otherwise the original transport sends it; when that raises, `transports.rescue(request,
   exception, is_async)`, set by an active guard, may answer instead (the guard's refusal, an
   error response the SDKs do not retry).

With neither set, the wrapper calls the original and returns what it returns: a wrapper that
stays laid between tests changes nothing.

Patching the classes reaches every client on those transports: clients built before the patch,
inside it, by the SDKs (`anthropic.DefaultHttpxClient`, openai's equivalent) and by frameworks.
Neither library is imported until something holds the patch.

botocore does not use httpx: while an interception is open (`hook_botocore(created)`),
`ClientCreator.create_client` is wrapped too, and each client created then is handed to the
`created` callback (the interception serves a bedrock-runtime client of a routed host in-process).
botocore is imported for that only when it is installed, and the original function is put back
when the interception closes (`unhook_botocore`).

aiohttp does not use httpx either: the layer above registers a finder (`transports.finders`) for
aiohttp's `ClientSession.__init__`, patched with the transports while aiohttp is imported, and each
session created then gets a middleware that reads the same two callbacks (`_aiohttp`, the adapter
between aiohttp and the stub's httpx path). An interception imports aiohttp, where it is installed,
before it takes the patches (`import_aiohttp`); nothing else imports it.

Nothing here imports the rest of wirescript: the layers above register, this floor calls back.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

__all__ = [
    "BOTOCORE_TARGET",
    "MODULES",
    "TARGETS",
    "Patches",
    "Spot",
    "TransportPatches",
    "acquire",
    "botocore_client_creator",
    "hook_botocore",
    "import_aiohttp",
    "lock",
    "patch_all",
    "release",
    "restore_all",
    "transports",
    "unhook_botocore",
]

TARGETS = (
    ("httpx", "HTTPTransport", "handle_request"),
    ("httpx", "AsyncHTTPTransport", "handle_async_request"),
    ("httpx2", "HTTPTransport", "handle_request"),
    ("httpx2", "AsyncHTTPTransport", "handle_async_request"),
)
"""(module, class, method) patched while the hooks are held."""

MODULES = (*dict.fromkeys(module for module, _, _ in TARGETS), "aiohttp")
"""The modules of `TARGETS`, and aiohttp (its `ClientSession.__init__` is patched while it is imported: `_aiohttp`)."""

BOTOCORE_TARGET = ("botocore.client", "ClientCreator", "create_client")
"""(module, class, method) wrapped while an interception is open, when botocore is installed."""

_MISSING = object()


class Saved(NamedTuple):
    """What a patch replaced, to put back exactly."""

    owner: Any
    name: str
    original: Any
    """The attribute as it was in `owner.__dict__`, or `_MISSING` when it was inherited."""
    patched: Any


_new_saved = functools.partial(tuple.__new__, Saved)  # Saved(...) without the keyword-handling constructor


def patch(owner: Any, name: str, replacement: Any) -> Saved:
    """Set `owner.name` to `replacement`; the `Saved` record restores it (`restore`)."""
    return patch_all(((owner, name, replacement),))[0]


def patch_all(targets: Iterable[tuple[Any, str, Any]]) -> list[Saved]:
    """`patch` each `(owner, name, replacement)`, in order."""
    saved = []
    for owner, name, replacement in targets:
        saved.append(_new_saved((owner, name, owner.__dict__.get(name, _MISSING), replacement)))
        setattr(owner, name, replacement)
    return saved


def restore(saved: Saved) -> None:
    """Put back what `patch` replaced, unless someone patched over it since (their restore brings ours back).

    A patch left behind that way is harmless: the wrappers pass every request through once
    nothing holds them.
    """
    restore_all((saved,))


def restore_all(saved: Iterable[Saved]) -> None:
    """`restore` each record, in the order given (give them in reverse of `patch_all`'s)."""
    for owner, name, original, patched in saved:
        if owner.__dict__.get(name, _MISSING) is not patched:
            continue
        if original is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, original)


class Spot(NamedTuple):
    """One function a `Patches` set replaces: `owner.name`, and how to wrap what is there."""

    owner: Any
    name: str
    wrap: Callable[[Any], Any]
    """(the function there now) -> its wrapper."""


class _Layer:
    """What one holder of a `Patches` set laid (nothing, when the wrappers were in place already)."""

    __slots__ = ("holder", "laid")

    def __init__(self, holder: object, laid: list[Saved]) -> None:
        self.holder = holder
        self.laid = laid


class Patches:
    """A set of functions replaced by wrappers while anything holds them; each holder undoes what it laid.

    Args:
        find: The spots to patch now (may import a library: called only when something changed).
        modules: The names of the modules `find` looks in: one imported, re-imported or removed
            since the last look makes the next holder look again.

    `acquire(holder)` lays a wrapper on each spot that does not hold one of this set's wrappers
    already: on the original function, or on someone else's patch made since (pytest-httpx's,
    say), which is wrapped, not skipped. While the wrappers laid last are all in place and the
    modules are the same, it only compares them, so a holder entered while another holds the set
    (the fixture's guard, with the pytest session holding the patches) lays nothing.
    `release(holder)` puts back exactly what that holder laid, unless someone patched over it
    since (their restore brings ours back, and a wrapper left behind that way passes everything
    through once nothing is active); a holder that lets go before one entered after it hands what
    it laid to that one, so the patches stay while anything holds them. Wrappers built for a
    function are reused while that function is there. Called under `lock`.

    """

    def __init__(self, find: Callable[[], Iterable[Spot]], modules: tuple[str, ...] = ()) -> None:
        self._find = find
        self._modules = modules
        self._owners: tuple[Any, ...] = ()
        self._names: tuple[str, ...] = ()
        self._wraps: tuple[Callable[[Any], Any], ...] = ()
        self._seen: tuple[Any, ...] | None = None  # the functions at the spots right after the last laying
        self._seen_modules: tuple[Any, ...] = ()
        self._layers: list[_Layer] = []
        self._ours: weakref.WeakSet[Any] = weakref.WeakSet()
        self._made: dict[tuple[Any, str], tuple[Any, Any]] = {}  # spot -> (function wrapped, its wrapper)

    @property
    def holders(self) -> list[object]:
        """Who holds the set, in the order they took it."""
        return [layer.holder for layer in self._layers]

    def ours(self, function: Any) -> bool:
        """Whether `function` is one of this set's wrappers."""
        return function in self._ours

    @property
    def spots(self) -> tuple[tuple[Any, str], ...]:
        """`(owner, name)` of each spot, as the last laying found them."""
        return tuple(zip(self._owners, self._names, strict=True))

    def current(self) -> bool:
        """Whether the wrappers laid last are all still in place, and the modules the same (a cheap comparison)."""
        return tuple(map(getattr, self._owners, self._names)) == self._seen and (
            not self._modules or tuple(map(sys.modules.get, self._modules)) == self._seen_modules
        )

    def acquire(self, holder: object) -> None:
        """Hold the set: lay what is not in place; `release(holder)` undoes it."""
        laid = self._lay() if not self._layers or not self.current() else []
        self._layers.append(_Layer(holder, laid))

    def release(self, holder: object) -> None:
        """Let go: put back what `holder` laid, or hand it to a holder that came after it."""
        layers = self._layers
        for index in range(len(layers) - 1, -1, -1):
            if layers[index].holder is holder:
                layer = layers.pop(index)
                break
        else:
            return
        if index < len(layers):
            layers[index].laid[:0] = layer.laid
        elif layer.laid:
            restore_all(reversed(layer.laid))

    def _lay(self) -> list[Saved]:
        modules = tuple(map(sys.modules.get, self._modules))
        if self._seen is None or modules != self._seen_modules:
            spots = tuple(self._find())  # may import the modules
            self._owners = tuple(spot.owner for spot in spots)
            self._names = tuple(spot.name for spot in spots)
            self._wraps = tuple(spot.wrap for spot in spots)
            modules = tuple(map(sys.modules.get, self._modules))
        laid: list[Saved] = []
        made = self._made
        for owner, name, wrap in zip(self._owners, self._names, self._wraps, strict=True):
            current = getattr(owner, name)
            last = made.get((owner, name))
            if last is not None and current is last[1]:
                continue  # ours, laid already
            if last is not None and current is last[0]:
                wrapper = last[1]
            elif current in self._ours:
                continue  # an older wrapper of ours, left under a patch that is gone now
            else:
                wrapper = wrap(current)
                made[(owner, name)] = (current, wrapper)
                self._ours.add(wrapper)
            laid.append(_new_saved((owner, name, owner.__dict__.get(name, _MISSING), wrapper)))
            setattr(owner, name, wrapper)
        self._seen = tuple(map(getattr, self._owners, self._names))
        self._seen_modules = modules
        return laid


lock = threading.RLock()
"""Every patch is laid and removed, and every callback set, under this lock (process-wide: under
pytest-xdist each worker process has its own)."""


Route = Callable[[str], Any]
"""`(host) -> transport | None`: the transport that answers a request for `host`, or None for the network."""
Rescue = Callable[[Any, BaseException, bool], Any]
"""`(request, exception, is_async) -> response | None`: the answer to a request whose sending raised, or None."""


def _find_transports() -> list[Spot]:
    """A spot for each method of `TARGETS` of a library that is imported or importable (imported then).

    A library that could not be imported at one look is looked for again once it is in `sys.modules`.
    And the spots the layer above's finders return (aiohttp's `ClientSession.__init__`, `_aiohttp.spot`).
    """
    spots: list[Spot] = []
    for module_name, class_name, method in TARGETS:
        try:
            if module_name not in sys.modules and importlib.util.find_spec(module_name) is None:
                continue
            cls = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError, ValueError):  # pragma: no cover - blocked, broken or unrelated
            continue
        spots.append(Spot(cls, method, _async_wrapper if method == "handle_async_request" else _sync_wrapper))
    for find in transports.finders:
        found = find()
        if found is not None:
            spots.append(found)
    return spots


class TransportPatches(Patches):
    """The transports' patches and the callbacks their wrappers call (set under `lock` by the layer above).

    Attributes:
        route: Set by an open interception: which transport answers a request, by host.
        rescue: Set by an active network guard: the answer to a request its refusal made fail.
        finders: Set by the layer above: functions that find more spots of these patches, patched
            with the transports' (aiohttp's `ClientSession.__init__`: `_aiohttp.spot`); empty: none.

    """

    def __init__(self, find: Callable[[], Iterable[Spot]], modules: tuple[str, ...] = ()) -> None:
        super().__init__(find, modules)
        self.route: Route | None = None
        self.rescue: Rescue | None = None
        self.finders: tuple[Callable[[], Spot | None], ...] = ()


transports = TransportPatches(_find_transports, MODULES)
"""The transport patches: held by open interceptions and active guards (and the pytest session's hold)."""


def acquire(holder: object) -> None:
    """Hold the transport patches (laid by the first holder); call `release(holder)` to let go."""
    with lock:
        transports.acquire(holder)


def release(holder: object) -> None:
    """Let go of the transport patches; the last holder restores the original functions."""
    with lock:
        transports.release(holder)


@functools.cache
def botocore_client_creator() -> Any:
    """The `ClientCreator` class of botocore, imported once, or None when botocore is not installed.

    Called before taking the lock too: the first import of botocore takes a while.
    """
    module_name, class_name, _ = BOTOCORE_TARGET
    try:
        if importlib.util.find_spec("botocore") is None:
            return None
        return getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError):  # pragma: no cover - blocked or broken
        return None


@functools.cache
def import_aiohttp() -> bool:
    """Import aiohttp once when it is installed (an interception does, outside the lock); whether it is there."""
    try:
        if "aiohttp" not in sys.modules and importlib.util.find_spec("aiohttp") is None:
            return False
        importlib.import_module("aiohttp")
    except (ImportError, ValueError):  # pragma: no cover - blocked or broken
        return False
    return True


class _Botocore:
    """What `hook_botocore` laid, and the callback its wrapper calls."""

    saved: Saved | None = None
    created: Callable[[Any], None] | None = None


def hook_botocore(created: Callable[[Any], None]) -> None:
    """Wrap botocore's `ClientCreator.create_client` (when installed): each client created is given to `created`.

    Until `unhook_botocore`; one hook at a time (a second call while hooked changes nothing).
    """
    with lock:
        cls = botocore_client_creator()
        if _Botocore.saved is not None or cls is None:
            return
        method = BOTOCORE_TARGET[2]
        _Botocore.created = created
        _Botocore.saved = patch(cls, method, _create_client_wrapper(getattr(cls, method)))


def unhook_botocore() -> None:
    """Put back what `hook_botocore` replaced."""
    with lock:
        saved, _Botocore.saved, _Botocore.created = _Botocore.saved, None, None
        if saved is not None:
            restore(saved)


def _create_client_wrapper(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = original(self, *args, **kwargs)
        created = _Botocore.created
        if created is not None:
            created(client)
        return client

    return create_client


def _sync_wrapper(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def handle_request(self: Any, request: Any) -> Any:
        route = transports.route
        if route is not None:
            target = route(request.url.host)
            if target is not None:
                return target.handle_request(request)
        rescue = transports.rescue
        if rescue is None:
            return original(self, request)
        try:
            return original(self, request)
        except Exception as exc:
            answer = rescue(request, exc, False)
            if answer is None:
                raise
            return answer

    return handle_request


def _async_wrapper(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    async def handle_async_request(self: Any, request: Any) -> Any:
        route = transports.route
        if route is not None:
            target = route(request.url.host)
            if target is not None:
                return await target.handle_async_request(request)
        rescue = transports.rescue
        if rescue is None:
            return await original(self, request)
        try:
            return await original(self, request)
        except Exception as exc:
            answer = rescue(request, exc, True)
            if answer is None:
                raise
            return answer

    return handle_async_request
