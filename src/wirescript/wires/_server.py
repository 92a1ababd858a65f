"""What the wires share to render server tools and citations: the cited sources, where they sit in the text.

Provider-neutral: each wire renders a turn's `server_tools` and `citations` in its own vocabulary
from these. Nothing here runs for a turn without them: a wire tests the two fields inline
(`turn.server_tools is not None or turn.citations is not None`), so the common answer pays two
attribute reads and no call.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from ..recorded import RecordedRequest
from ..script import Turn, citation_spans, sources

__all__ = [
    "Cited",
    "citations_from_spans",
    "cited",
    "counts",
    "first_problem",
    "request_tool_types",
    "segments",
]


class Cited(NamedTuple):
    """A citation resolved against the turn: what it names and where its span is in the text."""

    url: str | None
    title: str
    file_id: str | None
    filename: str
    cited_text: str
    start: int
    """The span's first character in the turn's text."""
    end: int
    """One past the span's last character."""
    source: int | None
    """The index of the cited search result among the turn's sources, when it is one."""


def cited(turn: Turn) -> list[Cited]:
    """Each of the turn's citations, its source resolved (a search result's url and title), in order."""
    text = turn.text or ""
    found = sources(turn)
    out = []
    for citation, (start, end) in zip(turn.citations or (), citation_spans(turn), strict=True):
        result: Mapping[str, Any] = found[citation.source][1] if citation.source is not None else {}
        url = citation.url or result.get("url")
        file_id = citation.file_id or result.get("file_id")
        title = citation.title or result.get("title") or url or ""
        filename = citation.filename or result.get("filename") or file_id or ""
        quoted = citation.cited_text if citation.cited_text is not None else text[start:end]
        out.append(Cited(url, title, file_id, filename, quoted, start, end, citation.source))
    return out


def segments(turn: Turn) -> list[tuple[str, list[Cited]]]:
    """The turn's text cut at the citations' spans: each piece in order with the citations backing it (or none)."""
    text = turn.text or ""
    by_span: dict[tuple[int, int], list[Cited]] = {}
    for citation in cited(turn):
        by_span.setdefault((citation.start, citation.end), []).append(citation)
    pieces: list[tuple[str, list[Cited]]] = []
    at = 0
    for (start, end), backing in sorted(by_span.items()):
        if start > at:
            pieces.append((text[at:start], []))
        pieces.append((text[start:end], backing))
        at = end
    if at < len(text):
        pieces.append((text[at:], []))
    return pieces


def counts(turn: Turn) -> tuple[int, int]:
    """The web searches and fetches the turn is billed for: its scripted counts, else the calls that did not fail."""
    usage = turn.usage
    searches = fetches = 0
    for tool in turn.server_tools or ():
        if tool.server is None and tool.error is None:
            searches += tool.name == "web_search"
            fetches += tool.name == "web_fetch"
    if usage is not None and usage.web_search_requests is not None:
        searches = usage.web_search_requests
    if usage is not None and usage.web_fetch_requests is not None:
        fetches = usage.web_fetch_requests
    return searches, fetches


def request_tool_types(record: RecordedRequest) -> list[str]:
    """The `type` of each tool the request offers (for a continued thread: the thread's tools)."""
    return [t["type"] for t in record.tools if isinstance(t, dict) and isinstance(t.get("type"), str)]


def first_problem(problems: Iterable[str | None]) -> str | None:
    """The first of these messages that is not None."""
    return next((problem for problem in problems if problem is not None), None)


def citations_from_spans(
    text: str, spans: Iterable[tuple[int, int, dict[str, Any]]], known: Sequence[Mapping[str, Any]]
) -> Iterator[int | dict[str, Any]]:
    """Decoded citations as a turn's: `(start, end, source)` each, the source an index when it is a known result.

    `known` is the decoded turn's search results (what an index names); a span covering the whole
    text is left out (the default), as is a title that only repeats the url.
    """
    for start, end, source in spans:
        url, file_id = source.get("url"), source.get("file_id")
        index = next(
            (
                i
                for i, result in enumerate(known)
                if (url is not None and result.get("url") == url)
                or (file_id is not None and result.get("file_id") == file_id)
            ),
            None,
        )
        citation: dict[str, Any] = {"source": index} if index is not None else {}
        if index is None:
            citation.update({k: v for k, v in source.items() if k != "cited_text" and isinstance(v, str) and v})
            if citation.get("title") == citation.get("url"):
                citation.pop("title", None)
        else:  # a title the result does not give (an OpenAI search source has none) is the citation's own
            title = source.get("title")
            if isinstance(title, str) and title != (known[index].get("title") or known[index].get("url")):
                citation["title"] = title
        quoted = source.get("cited_text")
        if isinstance(quoted, str) and quoted != text[start:end]:
            citation["cited_text"] = quoted
        if (start, end) != (0, len(text)) and 0 <= start < end <= len(text):
            citation["span"] = text[start:end]
        yield citation["source"] if list(citation) == ["source"] else citation
