"""Routes: the escape hatch for an endpoint no wire serves, answered by a function of the test's.

`ScriptTransport(script, routes={"GET /v1/files/{file_id}": handler})`: `handler(record)` returns
a JSON-able dict or list (sent with status 200) or a `(status, body)` pair; the `{name}`
placeholders of the path are in `record.path_params`. A route matches the end of the URL path at a
segment boundary (so `/v1/files` also serves a client whose base URL adds a prefix), for its one
method; routes are tried before every wire, in the order given. Requests are recorded like any
other and consume no turn. A handler that raises, or returns anything else, makes the request a
`script_error` problem, answered loudly.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..errors import ScriptError, UsageError
from ..recorded import RecordedRequest
from ..script import _not_json
from ..side import SideScript
from ..sse import json_dumps
from .base import Rendered, TurnlessWire

__all__ = ["METHODS", "RouteHandler", "RouteWire", "parse_routes"]

RouteHandler: TypeAlias = Callable[[RecordedRequest], Any]
"""`handler(record) -> dict | list | (status, dict | list)`."""

METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
"""The HTTP methods a route may name."""

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SEGMENT = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@%-]+")


@dataclass(frozen=True, slots=True)
class Route:
    """One route: its method, its path template and the pattern it compiles to, and its handler."""

    key: str
    method: str
    template: str
    pattern: re.Pattern[str]
    handler: RouteHandler


def parse_routes(routes: Mapping[str, RouteHandler] | None) -> list[Route]:
    """Validate `routes` at construction.

    Raises:
        UsageError: A key is not `METHOD /path` (a known method, a path of segments and `{name}`
            placeholders, no query), a placeholder repeats, or a handler is not a plain function.

    """
    if routes is None:
        return []
    if not isinstance(routes, Mapping):
        raise UsageError(f"routes: expected a mapping of 'METHOD /path' to a handler, got {type(routes).__name__}")
    parsed = []
    for key, handler in routes.items():
        where = f"routes[{key!r}]"
        if not isinstance(key, str):
            raise UsageError(f"{where}: expected a 'METHOD /path' string, got {type(key).__name__}")
        method, _, template = key.strip().partition(" ")
        template = template.strip()
        if method not in METHODS:
            raise UsageError(f"{where}: expected 'METHOD /path' with METHOD one of {', '.join(sorted(METHODS))}")
        if not template.startswith("/") or "?" in template or "#" in template or template.endswith("/"):
            raise UsageError(f"{where}: expected a path such as '/v1/files/{{file_id}}' (no query, no trailing '/')")
        parts = template[1:].split("/")
        names: list[str] = []
        pattern = ""
        for part in parts:
            if (placeholder := _PLACEHOLDER.fullmatch(part)) is not None:
                names.append(placeholder.group(1))
                pattern += f"/(?P<{placeholder.group(1)}>[^/]+)"
            elif _SEGMENT.fullmatch(part) and "{" not in part:
                pattern += "/" + re.escape(part)
            else:
                raise UsageError(
                    f"{where}: path segment {part!r} is neither literal text nor one '{{name}}' placeholder"
                )
        if len(set(names)) != len(names):
            raise UsageError(f"{where}: a placeholder name repeats")
        if not callable(handler):
            raise UsageError(f"{where}: expected a function (RecordedRequest) -> dict, got {type(handler).__name__}")
        if inspect.iscoroutinefunction(handler):
            raise UsageError(f"{where}: the handler is async; routes answer sync and async clients alike, use a def")
        parsed.append(Route(key, method, template, re.compile(f"(?:/.*)?{pattern}"), handler))
    return parsed


class RouteWire(TurnlessWire):
    """Serves the test's own routes (`ScriptTransport(routes=...)`)."""

    name = "routes"
    endpoint = "the routes given"
    any_body = True

    def __init__(self, routes: Mapping[str, RouteHandler] | None) -> None:
        self.routes = parse_routes(routes)

    def _route(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        for route in self.routes:
            if route.method == method and (found := route.pattern.fullmatch(path)) is not None:
                return route, found.groupdict()
        return None

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """Whether a route serves `method` on `path`."""
        return self._route(method, path) is not None

    def resolve(self, record: RecordedRequest) -> None:
        """Fill `record.path_params` from the route's placeholders."""
        found = self._route(record.method, record.path)
        if found is not None:
            record.path_params = found[1]

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """The handler's answer.

        Raises:
            ScriptError: The handler raised, or returned something that is not an answer.

        """
        found = self._route(record.method, record.path)
        assert found is not None  # matched when the request arrived
        route = found[0]
        try:
            result = route.handler(record)
        except Exception as exc:
            raise ScriptError(f"the handler of route {route.key!r} raised {type(exc).__name__}: {exc}") from exc
        status = 200
        if isinstance(result, tuple) and len(result) == 2:
            status, result = result
        if isinstance(status, bool) or not isinstance(status, int) or not 200 <= status <= 599:
            raise ScriptError(f"the handler of route {route.key!r} returned status {status!r}; expected 200 to 599")
        if not isinstance(result, (dict, list)):
            raise ScriptError(
                f"the handler of route {route.key!r} returned {type(result).__name__}; "
                "expected a JSON-able dict or list, or (status, dict)"
            )
        # Checked as a turn's tool input is: the encoder would carry a date, a set or bytes without a word.
        problem = _not_json(result, "", set(), 1)
        if problem is not None:
            raise ScriptError(f"the handler of route {route.key!r} returned a body JSON cannot carry: {problem}")
        body = json_dumps(result).encode()
        return Rendered(status, {"content-type": "application/json"}, body)
