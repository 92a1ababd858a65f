"""The one-line summary of a recorded request, written above its turn, and drift: a replay that asks otherwise.

`summary` is the comment `RecordingTransport.save()` writes above each YAML turn; `recorded_summaries`
reads them back from a file; `drift` compares a replay's requests with them
(`@pytest.mark.wirescript(match_recorded=True)`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from .._text import clip
from ..recorded import RecordedRequest
from ..script import DEFAULT_QUEUE
from ._secrets import scrub_text

__all__ = ["NOT_IN_COMMENT", "drift", "recorded_summaries", "summary"]

NOT_IN_COMMENT = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")
"""What ends a YAML comment: the line breaks of YAML 1.1 (which PyYAML reads), and control characters."""


def summary(record: RecordedRequest) -> str:
    """The request a turn answered, in one comment line: number, path, model, last message, tools offered.

    What looks like a key (`scrub_text`: a key pasted into the prompt) is left out of it.
    """
    tools = f" tools=[{', '.join(clip(name, 40) for name in record.tool_names)}]" if record.tool_names else ""
    return NOT_IN_COMMENT.sub("?", scrub_text(f"{record.summary()}{tools}"))


_HEAD = re.compile(r"^requests\[\d+\] ")
_COMMENT = re.compile(r"^(?P<indent> *)# (?P<summary>requests\[\d+\] .*)$")
_QUEUE = re.compile(r'^(?P<key>"(?:[^"\\]|\\.)*"):\s*$')


def recorded_summaries(text: str) -> dict[tuple[str, int], str]:
    """The summary comment written above each turn of a recorded YAML script, by (queue, turn index).

    The default queue (a plain list) is `"*"`. A turn without a summary comment (added by hand) has
    no entry. Only what `RecordingTransport.save()` writes is read: one comment line right above
    each turn, queue keys as JSON strings.
    """
    lines = text.splitlines()
    queued = any(_QUEUE.match(line) for line in lines)
    item = "  - " if queued else "- "
    found: dict[tuple[str, int], str] = {}
    queue, index, pending = DEFAULT_QUEUE, -1, None
    for line in lines:
        key = _QUEUE.match(line)
        if key is not None:
            queue, index, pending = json.loads(key["key"]), -1, None
            continue
        comment = _COMMENT.match(line)
        if comment is not None and len(comment["indent"]) == len(item) - 2:
            pending = comment["summary"]
            continue
        if line.startswith(item) or (line == item.rstrip()):
            index += 1
            if pending is not None:
                found[(queue, index)] = pending
            pending = None
    return found


def drift(records: Sequence[RecordedRequest], summaries: Mapping[tuple[str, int], str]) -> list[str]:
    """Each request that asks something else than the one its turn was recorded for, in words.

    Compared: the model, the last message and the tools offered, as the summary comment says them.
    A request answered by a turn with no summary (or by no turn) is not compared.
    """
    found = []
    for record in records:
        if record.turn_index is None:
            continue
        recorded = summaries.get((record.queue or DEFAULT_QUEUE, record.turn_index))
        if recorded is None:
            continue
        now = _HEAD.sub("", summary(record))
        then = _HEAD.sub("", scrub_text(recorded))  # a file written before keys were left out compares alike
        if now != then:
            found.append(
                f"{record.summary().split(' model=')[0]} asks something else than the request its turn was "
                f"recorded for:\n    recorded: {then}\n    now:      {now}"
            )
    return found
