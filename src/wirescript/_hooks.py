"""The class-wide patches of httpx's and httpx2's default transports, shared by interception and the guard.

`HTTPTransport.handle_request` and `AsyncHTTPTransport.handle_async_request` of each library that
is importable are replaced by one wrapper while anything holds the patch (an open `Interception`,
an active `NetworkGuard`), and put back exactly, the original function objects, when the last
holder lets go. The wrapper reads the live state on every request:

1. an open interception whose hosts match the request's host: the stub answers it;
2. otherwise the original transport sends it; when an active guard blocked the connection it
   tried to open, the guard answers instead, with an error response the SDKs do not retry.

Patching the classes reaches every client on those transports: clients built before the patch,
inside it, by the SDKs (`anthropic.DefaultHttpxClient`, openai's equivalent) and by frameworks.
Neither library is imported until something holds the patch.

botocore does not use httpx: while an interception is open (`hook_botocore`), `ClientCreator.create_client`
is wrapped too, so each client created then is handed to the interception (`Interception.created`),
which serves a bedrock-runtime client of a routed host in-process (`ScriptTransport.attach`).
botocore is imported for that only when it is installed, and the original function is put back
when the interception closes.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .guard import NetworkGuard
    from .intercept import Interception

__all__ = [
    "BOTOCORE_TARGET",
    "TARGETS",
    "acquire",
    "botocore_client_creator",
    "hook_botocore",
    "patch_all",
    "release",
    "restore_all",
    "state",
    "unhook_botocore",
]

TARGETS = (
    ("httpx", "HTTPTransport", "handle_request"),
    ("httpx", "AsyncHTTPTransport", "handle_async_request"),
    ("httpx2", "HTTPTransport", "handle_request"),
    ("httpx2", "AsyncHTTPTransport", "handle_async_request"),
)
"""(module, class, method) patched while the hooks are held."""

_MODULES = tuple(dict.fromkeys(module for module, _, _ in TARGETS))

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
    """`patch` each `(owner, name, replacement)`, in order (one call: the guard patches eight per test)."""
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


class _State:
    """Who holds the transport patches, and what each request is checked against."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.holders: list[object] = []
        self.saved: list[Saved] = []
        self.interception: Interception | None = None
        self.guard: NetworkGuard | None = None
        self.botocore: Saved | None = None


state = _State()
"""The process-wide patch state (under pytest-xdist, each worker process has its own)."""


def acquire(holder: object) -> None:
    """Hold the transport patches (installed by the first holder); call `release(holder)` to let go."""
    with state.lock:
        if not state.holders:
            state.saved = patch_all(_targets())
        state.holders.append(holder)


def release(holder: object) -> None:
    """Let go of the patches; the last holder restores the original functions."""
    with state.lock:
        if holder in state.holders:
            state.holders.remove(holder)
        if not state.holders:
            saved, state.saved = state.saved, []
            restore_all(reversed(saved))


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


def hook_botocore() -> None:
    """Wrap botocore's `ClientCreator.create_client` (when botocore is installed) until `unhook_botocore`."""
    with state.lock:
        cls = botocore_client_creator()
        if state.botocore is not None or cls is None:
            return
        method = BOTOCORE_TARGET[2]
        state.botocore = patch(cls, method, _create_client_wrapper(getattr(cls, method)))


def unhook_botocore() -> None:
    """Put back what `hook_botocore` replaced."""
    with state.lock:
        saved, state.botocore = state.botocore, None
        if saved is not None:
            restore(saved)


def _create_client_wrapper(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = original(self, *args, **kwargs)
        interception = state.interception
        if interception is not None:
            interception.created(client)
        return client

    return create_client


class _Built(NamedTuple):
    """The targets `_targets` built, and what they were built from."""

    modules: tuple[Any, ...]
    """`sys.modules[name]` (or None) for each module of `TARGETS`, when they were built."""
    targets: list[tuple[Any, str, Any]]
    originals: tuple[Any, ...]
    """The function each target wraps, as the class held it then."""


_built: _Built | None = None


def _targets() -> list[tuple[Any, str, Any]]:
    """`(class, method name, wrapper)` for each library that is imported or importable.

    Built once and reused while nothing it was built from changed: the same module objects in
    `sys.modules` (a library imported, re-imported or removed since builds them again, so httpx2
    imported after the first use is patched from then on) and the same functions on the classes
    (someone else's patch of `handle_request`, pytest-httpx's say, is wrapped, not skipped).
    Called under the lock.
    """
    global _built
    built = _built
    if built is not None and _still(built):
        return built.targets
    targets: list[tuple[Any, str, Any]] = []
    originals: list[Any] = []
    for module_name, class_name, method in TARGETS:
        try:
            if module_name not in sys.modules and importlib.util.find_spec(module_name) is None:
                continue
            cls = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError, ValueError):  # pragma: no cover - blocked, broken or unrelated
            continue
        original = getattr(cls, method)
        wrap = _async_wrapper if method == "handle_async_request" else _sync_wrapper
        targets.append((cls, method, wrap(original)))
        originals.append(original)
    modules = tuple(sys.modules.get(name) for name in _MODULES)
    _built = _Built(modules, targets, tuple(originals))
    return targets


def _still(built: _Built) -> bool:
    """Whether `built` was built from the modules and functions that are there now."""
    get = sys.modules.get
    if tuple([get(name) for name in _MODULES]) != built.modules:  # modules compare by identity
        return False
    return tuple([getattr(cls, method) for cls, method, _ in built.targets]) == built.originals


def _sync_wrapper(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def handle_request(self: Any, request: Any) -> Any:
        interception = state.interception
        if interception is not None and interception.routes(request.url.host):
            return interception.stub.handle_request(request)
        guard = state.guard
        if guard is None:
            return original(self, request)
        try:
            return original(self, request)
        except Exception as exc:
            answer = guard.answer_blocked(request, exc, is_async=False)
            if answer is None:
                raise
            return answer

    return handle_request


def _async_wrapper(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    async def handle_async_request(self: Any, request: Any) -> Any:
        interception = state.interception
        if interception is not None and interception.routes(request.url.host):
            return await interception.stub.handle_async_request(request)
        guard = state.guard
        if guard is None:
            return await original(self, request)
        try:
            return await original(self, request)
        except Exception as exc:
            answer = guard.answer_blocked(request, exc, is_async=True)
            if answer is None:
                raise
            return answer

    return handle_async_request
