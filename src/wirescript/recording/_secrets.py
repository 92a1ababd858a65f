"""Keeping the credentials a recorder saw out of the file it writes, whatever the upstream echoes.

`Credentials` collects every credential value of every recorded request (each credential header
and query value, the token after an auth scheme, a SigV4 signature and key id, a Basic password,
each cookie) and looks for each in every string written: as sent, base64-encoded (at any
alignment, standard and URL-safe), URL-encoded and hex-encoded. What it finds is replaced by
`<redacted>`, and where it was found is told. `scrub_text` leaves out of a one-line summary what
looks like a key even when no request sent it (a key pasted into a prompt).
"""

from __future__ import annotations

import base64
import binascii
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus

from ..recorded import REDACTED, is_sensitive_header

__all__ = ["MIN_SECRET", "Credentials", "Scrubber", "scrub_text"]

MIN_SECRET = 8
"""The shortest credential value searched for: no provider key is shorter, and a shorter value
(`"test"`) would be found in ordinary words."""

_PARAMS = re.compile(r"[,;\s]+")
_PERCENT = re.compile(r"%[0-9A-F]{2}")
_NOT_SECRET_PARAMS = frozenset({"signedheaders", "algorithm", "realm", "version"})

_KEY_LIKE = re.compile(
    r"(?<![A-Za-z0-9])(?:sk-|AIza|AKIA|ASIA|gsk_|xai-|hf_|pplx-|r8_|ya29\.|gh[pousr]_|github_pat_|xox[abpr]-|glpat-)"
    r"[A-Za-z0-9_.\-]{8,}"
)
_LONG_TOKEN = re.compile(r"(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_+/=-]{32,}")


def scrub_text(text: str) -> str:
    """`text` with what looks like a key replaced by `<redacted>`.

    That is a provider key's prefix and what follows it (`sk-…`, `AIza…`, `AKIA…`, `ya29.…`,
    `ghp_…`), or a run of 32 or more key characters mixing letters and digits (an Azure key, a
    base64 secret).
    """
    text = _KEY_LIKE.sub(REDACTED, text)
    return _LONG_TOKEN.sub(lambda m: REDACTED if _mixed(m[0]) else m[0], text)


def _mixed(run: str) -> bool:
    return any(c.isdigit() for c in run) and any(c.isalpha() for c in run)


_NAMES_KEPT = 1024
"""How many distinct header names a recorder remembers the classification of."""
_VALUES_KEPT = 1024
"""How many distinct credential header values a recorder remembers the secret values of."""


class Credentials:
    """Every credential value the requests of one recorder sent (thread-safe)."""

    def __init__(self, headers: Iterable[str], query: Iterable[str]) -> None:
        self._headers = frozenset(headers)
        self._query = frozenset(query)
        self._values: set[str] = set()
        self._lock = threading.Lock()
        self._scrubber: Scrubber | None = None
        self._sensitive: dict[bytes, bool] = {}
        """Per raw header name: whether its value is a credential."""
        self._known: dict[bytes, frozenset[str]] = {}
        """Per raw credential header value: the secret values in it (`_pieces`, the long enough ones)."""

    def add(self, request: Any) -> None:
        """Collect the credential values of an httpx/httpx2 request, as it is about to be sent."""
        self.add_sent(request.headers.raw, request.url.query)

    def add_sent(self, headers: Iterable[tuple[bytes, bytes]], query: bytes | str) -> None:
        """Collect the credential values of a request's raw headers and query string, as it was sent."""
        found: set[str] = set()
        sensitive = self._sensitive
        known = self._known
        for raw_name, raw_value in headers:
            secret = sensitive.get(raw_name)
            if secret is None:  # each header name classified once (an SDK sends the same twenty every time)
                name = raw_name.decode("latin-1").lower()
                secret = name in self._headers or is_sensitive_header(name)
                if len(sensitive) < _NAMES_KEPT:
                    sensitive[raw_name] = secret
            if secret:
                pieces = known.get(raw_value)
                if pieces is None:  # each credential value taken apart once (a client sends its one key every time)
                    pieces = _long(_pieces(raw_value.decode("latin-1")))
                    if len(known) < _VALUES_KEPT:
                        known[raw_value] = pieces
                found |= pieces
        if query:
            text = query.decode("latin-1") if isinstance(query, bytes) else str(query)
            for name, value in parse_qsl(text, keep_blank_values=False):
                if name.lower() in self._query or is_sensitive_header(name.lower()):
                    found |= _long(_pieces(value))
        with self._lock:
            if not found <= self._values:
                self._values |= found
                self._scrubber = None

    def scrubber(self) -> Scrubber:
        """What replaces each of the values collected so far, in all its forms."""
        with self._lock:
            if self._scrubber is None:
                self._scrubber = Scrubber(self._values)
            return self._scrubber


class Scrubber:
    """Replaces each of a set of secret values, in each of its encodings, by `<redacted>`."""

    def __init__(self, values: Iterable[str]) -> None:
        needles = {form for value in values for form in _forms(value)}
        ordered = sorted(needles, key=len, reverse=True)  # a longer form first: never half of one replaced
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def text(self, text: str) -> tuple[str, int]:
        """`text` with every secret replaced, and how many were."""
        if self._pattern is None:
            return text, 0
        return self._pattern.subn(REDACTED, text)

    def data(self, data: Any, where: str = "") -> tuple[Any, list[str]]:
        """`data` (JSON values) with every secret replaced in every string, keys included; where each was."""
        found: list[str] = []
        if self._pattern is None:
            return data, found
        return self._walk(data, where, found), found

    def _walk(self, value: Any, where: str, found: list[str]) -> Any:
        if isinstance(value, str):
            text, count = self.text(value)
            if count:
                found.append(where or "text")
            return text
        if isinstance(value, list):
            return [self._walk(item, f"{where}[{i}]", found) for i, item in enumerate(value)]
        if isinstance(value, dict):
            walked = {}
            for key, item in value.items():
                name = self._walk(key, where, found) if isinstance(key, str) else key  # a key is named by its mapping
                walked[name] = self._walk(item, f"{where}.{name}" if where else str(name), found)
            return walked
        return value


def _pieces(value: str) -> set[str]:
    """The secret parts of a credential value: itself, the token after a scheme, each `k=v` value, a password."""
    value = value.strip()
    pieces = {value}
    scheme, _, rest = value.partition(" ")
    rest = rest.strip()
    if rest:
        pieces.add(rest)
        if scheme.lower() == "basic":
            pieces.update(_basic(rest))
    for part in _PARAMS.split(rest or value):
        name, equals, given = part.partition("=")
        if not equals or name.lower() in _NOT_SECRET_PARAMS:
            continue
        given = given.strip('"')
        pieces.add(given)
        if name.lower() == "credential":  # SigV4: <key id>/<date>/<region>/<service>/aws4_request
            pieces.add(given.split("/", 1)[0])
    return pieces


def _long(pieces: set[str]) -> frozenset[str]:
    """The pieces long enough to be searched for (`MIN_SECRET`)."""
    return frozenset(piece for piece in pieces if len(piece) >= MIN_SECRET)


def _basic(token: str) -> set[str]:
    try:
        decoded = base64.b64decode(token, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return set()
    _, _, password = decoded.partition(":")
    return {decoded, password} if password else {decoded}


def _forms(value: str) -> set[str]:
    """`value` as sent, and as base64 (any alignment, both alphabets), URL-encoding and hex would show it."""
    raw = value.encode("utf-8")
    forms = {value, raw.hex(), raw.hex().upper()}
    for quoted in (quote(value, safe=""), quote_plus(value, safe="")):
        forms.add(quoted)
        forms.add(_PERCENT.sub(lambda m: m[0].lower(), quoted))
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for offset, skip in ((0, 0), (1, 2), (2, 3)):  # the first characters that hold only the prefix's bits
            encoded = encode(b"\0" * offset + raw).decode("ascii")
            whole = (offset + len(raw)) // 3 * 4  # the last group holds bits of what follows: left out
            forms.add(encoded[skip:whole])
    return {form for form in forms if len(form) >= MIN_SECRET}
