"""The built-in host dialects: their ids, their wires, and the table that routes their default addresses.

A private module of `wires/`: it puts the OpenAI package's Chat Completions dialects and Ollama's
native wire together (no provider package imports another's).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NoReturn

from .._text import did_you_mean
from ..errors import UsageError
from ._declared import declared
from ._later import LaterWires
from .base import Wire

if TYPE_CHECKING:
    from .openai.dialects import ChatDialect

    DIALECTS: Mapping[str, tuple[type[ChatDialect], ...]]
    """Every built-in dialect id, with its Chat Completions dialect class (Ollama's native wire goes with `ollama`)."""

__all__ = ["DIALECTS", "Addresses", "address_table", "dialect_wires", "dialects", "hosted_wires", "quirk_table"]

_IDS = (
    "ollama",
    "vllm",
    "sglang",
    "lmstudio",
    "groq",
    "mistral",
    "deepseek",
    "openrouter",
    "together",
    "xai",
    "gemini-openai",
    "azure",
)
"""The ids of `DIALECTS`, in order, known without importing a dialect's class (a test keeps them the same)."""


@functools.cache
def _tables() -> tuple[Mapping[str, tuple[type[ChatDialect], ...]], Mapping[str, tuple[type[Wire], ...]]]:
    """`DIALECTS` and the dialects' native wires (`_native`): their classes imported on first use."""
    from .ollama import OllamaWire
    from .openai.dialects import (
        AzureWire,
        DeepSeekWire,
        GeminiOpenAIWire,
        GroqWire,
        LMStudioWire,
        MistralWire,
        OllamaChatWire,
        OpenRouterWire,
        SGLangWire,
        TogetherWire,
        VLLMWire,
        XAIWire,
    )

    chat: Mapping[str, tuple[type[ChatDialect], ...]] = MappingProxyType(
        {
            "ollama": (OllamaChatWire,),
            "vllm": (VLLMWire,),
            "sglang": (SGLangWire,),
            "lmstudio": (LMStudioWire,),
            "groq": (GroqWire,),
            "mistral": (MistralWire,),
            "deepseek": (DeepSeekWire,),
            "openrouter": (OpenRouterWire,),
            "together": (TogetherWire,),
            "xai": (XAIWire,),
            "gemini-openai": (GeminiOpenAIWire,),
            "azure": (AzureWire,),
        }
    )
    # The dialects' wires that are not Chat Completions (Ollama's `/api/chat`), which take no version.
    native: Mapping[str, tuple[type[Wire], ...]] = MappingProxyType({"ollama": (OllamaWire,)})
    return chat, native


def __getattr__(name: str) -> Any:
    if name == "DIALECTS":  # every built-in dialect id, with its Chat Completions dialect class
        return _tables()[0]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def dialects() -> tuple[str, ...]:
    """The ids of the built-in host dialects, for `ScriptTransport(dialect=...)` and `@pytest.mark.parametrize`."""
    return _IDS


def dialect_wires(dialect: object, name: str = "dialect") -> list[Wire]:
    """Fresh wires of one dialect: an id (`"ollama"`, `"ollama@0.20.4"` for a release), or a `Wire` instance.

    Raises:
        UsageError: An unknown id (the message names the closest), a version the dialect does not
            take, or a value that is neither an id nor a `Wire` instance.

    """
    if isinstance(dialect, Wire):
        return [dialect]
    if isinstance(dialect, type) and issubclass(dialect, Wire):
        raise UsageError(f"{name}: expected a dialect id or a Wire instance, got the class {dialect.__name__}; call it")
    if not isinstance(dialect, str):
        raise UsageError(
            f"{name}: expected a dialect id (one of {', '.join(_IDS)}) or a Wire instance, "
            f"got {type(dialect).__name__} {dialect!r}"
        )
    key, at, version = dialect.partition("@")
    chat, native = _tables()
    classes = chat.get(key.strip().lower())
    if classes is None:
        raise UsageError(
            f"{name}: unknown dialect {dialect!r}{did_you_mean(key, _IDS)} "
            f"(wirescript.dialects() lists them: {', '.join(_IDS)})"
        )
    if at and not version.strip():
        raise UsageError(f"{name}: {dialect!r} names no release after '@' (write '{key}@0.20.4', or '{key}')")
    chosen = version.strip() if at else None
    return [
        *(kind(chosen) for kind in classes),
        *(kind() for kind in native.get(key.strip().lower(), ())),
    ]


def hosted_wires() -> list[Wire]:
    """A fresh wire of every built-in dialect that has default addresses: what a stub without `dialect=` routes."""
    return [make() for make in _hosted_kinds()]


@functools.lru_cache(maxsize=1)
def _hosted_kinds() -> tuple[Callable[[], Wire], ...]:
    """How to make each of `hosted_wires`, in order (its class, at the newest release): found once per process.

    A built-in dialect's `addresses` are declared on its class, so every stub routes the same ones.
    """
    found: list[Callable[[], Wire]] = []
    chat, native = _tables()
    for key, classes in chat.items():
        found += [functools.partial(kind, None) for kind in classes if kind.addresses]
        found += [kind for kind in native.get(key, ()) if kind.addresses]
    return tuple(found)


class Addresses:
    """Which wire answers at which address: precomputed once, one dictionary look-up per request.

    Args:
        wires: The wires routed by address, in order (the first to claim an address keeps it).

    Raises:
        UsageError: An address is not `host` or `host:port`.

    """

    __slots__ = ("_by_host", "wires")

    def __init__(self, wires: Sequence[Wire]) -> None:
        self.wires: Sequence[Wire] = wires if wires.__class__ is LaterWires else tuple(wires)
        """The wires it routes, in order (a stub's built-in dialects: a run of stand-ins, each made when asked for)."""
        self._by_host = declared(self.wires, "addresses", _places_of)
        """Per host: each (port or None, position of the wire whose address it is): shared by every stub alike."""

    def __bool__(self) -> bool:
        return bool(self._by_host)

    def find(self, method: str, path: str, host: str, url: object) -> Wire | None:
        """The wire whose address this is and that serves the request, or None (the common case: one miss)."""
        entries = self._by_host.get(host)
        if entries is None:
            return None
        port = getattr(url, "port", None)
        for wanted, at in entries:
            wire = self.wires[at]
            if (wanted is None or wanted == port) and wire.matches(method, path, host=host):
                return wire
        return None


_ADDRESSES = operator.attrgetter("addresses")


def _places_of(wires: Sequence[Wire]) -> _Places:
    """The address table of these wires (`_places`), or `UsageError` naming a wire's bad address."""
    addresses = tuple(map(_ADDRESSES, wires))
    try:
        places = _places(addresses)
    except TypeError:  # a wire of one's own declares them in a list
        places = _places(tuple(tuple(declared) for declared in addresses))
    if places is None:
        _refuse_bad_address(wires)
    return places


_Places = Mapping[str, tuple[tuple[int | None, int], ...]]
"""Per host, in order: each (port or None, position of the wire whose address it is)."""


@functools.lru_cache(maxsize=64)  # every stub without `dialect=` routes the same addresses: one table for them
def _places(addresses: tuple[tuple[str, ...], ...]) -> _Places | None:
    """The table of wires with these `addresses`, in order (worked out once); None when one is no address."""
    table: dict[str, list[tuple[int | None, int]]] = {}
    for at, given in enumerate(addresses):
        for address in given:
            parsed = _parsed_address(address)
            if parsed is None:
                return None
            table.setdefault(parsed[0], []).append((parsed[1], at))
    return MappingProxyType({host: tuple(entries) for host, entries in table.items()})


def _refuse_bad_address(wires: Sequence[Wire]) -> NoReturn:
    """Raise the error that names the first of `wires` whose address is neither `host` nor `host:port`."""
    for wire in wires:
        for address in wire.addresses:
            if _parsed_address(address) is None:
                raise UsageError(f"the {wire.name} wire's address {address!r}: expected 'host' or 'host:port'")
    raise AssertionError("every address parses")  # pragma: no cover - called only when one does not


@functools.lru_cache(maxsize=512)  # every stub routes the built-in dialects' addresses: each parsed once
def _parsed_address(address: str) -> tuple[str, int | None] | None:
    """`(host, port)` of `host` or `host:port`, lower-cased; None for anything else."""
    host, colon, port = address.strip().lower().rpartition(":") if ":" in address else (address.strip().lower(), "", "")
    if (colon and not port.isdigit()) or not host or "/" in host:
        return None
    return host, int(port) if colon else None


def quirk_table() -> str:
    """The docs table of every built-in dialect's quirks (`docs/dialects.md`, kept true by a test)."""
    rows = ["| dialect | quirk | side | what | versions | source |", "|---|---|---|---|---|---|"]
    for key, classes in _tables()[0].items():
        for kind in classes:
            for quirk in kind.quirks:
                cells = [key, f"`{quirk.id}`", quirk.side, quirk.summary, quirk.versions or "all", quirk.source]
                rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows)


def address_table() -> str:
    """The docs table of where each built-in dialect answers without `dialect=` (`docs/dialects.md`)."""
    rows = ["| dialect | provider ids | answers by default at | intercepted hosts |", "|---|---|---|---|"]
    chat, native = _tables()
    for key, classes in chat.items():
        kinds: list[type[Wire]] = [*classes, *native.get(key, ())]
        addresses = sorted({a for kind in kinds for a in kind.addresses})
        hosts = sorted({h for kind in kinds for h in kind.hosts})
        names = ", ".join(f"`{kind.name}`" for kind in kinds)
        where = ", ".join(f"`{a}`" for a in addresses) or "only with `dialect=`"
        rows.append(f"| `{key}` | {names} | {where} | {', '.join(f'`{h}`' for h in hosts) or '—'} |")
    return "\n".join(rows)
