"""Host patterns: the one syntax of `Wire.hosts`, `intercept(hosts=...)` and the guard's `allowed_hosts`.

A host matches a pattern equal to it (case-insensitively, a trailing dot ignored), and `*` in a
pattern matches one or more characters within one DNS label, never a dot: `*.example.com` matches
`a.example.com` but neither `example.com` nor `a.b.example.com`. The pattern `"*"` alone matches
every host; an IP address matches itself, in any of its spellings.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable, Iterable

from ..errors import UsageError

__all__ = ["ALL_HOSTS", "host_matcher"]

ALL_HOSTS = "*"
"""`hosts="*"`: intercept every request, whatever its host."""

_NOT_A_HOST = re.compile(r"[/:@\s?#]")


def host_matcher(hosts: Iterable[str]) -> Callable[[str], bool]:
    """A predicate `host -> bool` true for hosts matching any of the patterns.

    Args:
        hosts: Host names or patterns (`*` stands for one or more characters within one DNS
            label; `"*"` alone matches every host); a single string is one pattern.

    Raises:
        UsageError: A pattern is not a string, is empty, or looks like a URL or `host:port`.

    """
    if isinstance(hosts, str):
        hosts = (hosts,)
    try:
        chosen = frozenset(hosts)
    except TypeError:
        raise UsageError(f"host patterns must be strings, got {hosts!r}") from None
    return _compiled(chosen)


@functools.lru_cache(maxsize=64)
def _compiled(hosts: frozenset[str]) -> Callable[[str], bool]:
    """`host_matcher` for a set of patterns, compiled once (the guard builds one per test)."""
    exact: set[str] = set()
    patterns: list[str] = []
    for host in hosts:
        if not isinstance(host, str):
            raise UsageError(f"a host pattern must be a string, got {type(host).__name__} {host!r}")
        pattern = host.strip().lower().rstrip(".")
        if _is_ip(pattern):
            exact.add(str(ipaddress.ip_address(pattern)))
            continue
        if not pattern or _NOT_A_HOST.search(pattern):
            raise UsageError(
                f"{host!r} is not a host name: give the host alone, as in 'api.example.com' "
                "(no scheme, port or path; '*' matches within one label)"
            )
        if pattern == ALL_HOSTS:
            return _every_host
        if "*" in pattern:
            patterns.append(r"[^.]+".join(re.escape(part) for part in pattern.split("*")))
        else:
            exact.add(pattern)
    regex = re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None

    def matches(host: str) -> bool:
        name = host.lower().rstrip(".")
        return name in exact or (regex is not None and regex.fullmatch(name) is not None)

    return matches


def _every_host(host: str) -> bool:
    return True


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
