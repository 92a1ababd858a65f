"""Record mode writes the same bytes it always wrote: every recorded exchange against its stored file.

A representative set of recordings (every wire and surface, sync and async, over every turn shape;
a streamed tool loop with thinking; error answers, retries and an in-stream error; side endpoints;
two models; a compressed answer; a request no wire serves; credentials echoed back in every form;
`new_episodes` appends) is made through the real SDKs, and each file it writes, with the recorder's
`notes`, is compared byte for byte with the copy stored in `tests/recordings/`. Only the header
line that says when, and with which versions, the file was recorded is compared with its time and
versions left out.

A change to what a recording holds shows here as a diff. When it is meant, write the stored copies
afresh (`python tests/test_record_bytes.py tests/recordings`, from the repository root) and review
the diff.
"""

from __future__ import annotations

import contextlib
import datetime
import gzip
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import anthropic
import pytest

from _drivers import DRIVERS, SURFACES, run
from _support import SAMPLE_TURNS, anthropic_client, anthropic_tools
from wirescript import RecordingTransport, ScriptTransport, load_script
from wirescript.recording import Episodes

httpx2 = pytest.importorskip("httpx2")  # the legacy run (anthropic 0.x, openai 2.x on httpx) has none
pytest.importorskip("boto3")  # the set records Bedrock too (the `bedrock` group, which CI installs)

STORED = Path(__file__).parent / "recordings"

_WHEN = re.compile(
    r"^(# (?:Recorded|Appended) )by wirescript \S+ from \S+ to \S+(?: with .*?)?(?=\.?$| \(new_episodes\))",
    re.MULTILINE,
)
"""The time and versions in a header line: the part of a file that differs from run to run."""

SUFFIXES = (".yaml", ".json")
NOTES = "notes.json"
"""The stored file of every recorder's `notes`, by the file it wrote."""


def _stable(text: str) -> str:
    return _WHEN.sub(r"\1by wirescript (version) from (start) to (end) with (versions)", text)


# ---------------------------------------------------------------------- the recordings


def _shapes(wire: str) -> Callable[[Path], list[RecordingTransport]]:
    """Every turn shape on every surface of one wire, sync then async, into one file."""

    def record(path: Path) -> list[RecordingTransport]:
        driver = DRIVERS[wire]
        runs = [(surface, is_async) for is_async in (False, True) for surface in SURFACES]
        upstream = ScriptTransport([turn for _ in runs for turn in SAMPLE_TURNS.values()])
        rec = RecordingTransport(path, upstream=upstream)
        for surface, is_async in runs:
            for _ in SAMPLE_TURNS:
                run(driver, surface, rec, is_async=is_async)  # type: ignore[arg-type]
        return [rec]

    return record


def _weather(path: Path) -> list[RecordingTransport]:
    """A streamed tool loop with thinking and its signature, then a 429 the SDK retries, then a stream error."""
    tools = [{"name": "weather", "input_schema": {"type": "object"}}]
    upstream = ScriptTransport(
        [
            {
                "thinking": "Two cities.",
                "thinking_signature": "EqQBCkYIBxgC",
                "tools": [
                    {"name": "weather", "input": {"city": "Paris"}},
                    {"name": "weather", "input": {"city": "Rome"}},
                ],
            },
            {"text": "Sunny in both.", "usage": {"input_tokens": 80, "output_tokens": 5}},
            {"error": {"status": 429, "message": "slow down"}},
            {"text": "After the wait."},
            {"text": "Cut ", "fault": {"stream_error": {"type": "overloaded_error", "message": "Overloaded"}}},
            {"error": {"status": 400, "type": "invalid_request_error", "message": "max_tokens: too large"}},
        ]
    )
    rec = RecordingTransport(path, upstream=upstream)
    client = anthropic_client(rec, max_retries=1)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris and Rome?"}]
    with client.messages.stream(model="claude-sonnet-5", max_tokens=512, messages=messages, tools=tools) as stream:
        first = stream.get_final_message()
    calls = [block for block in first.content if block.type == "tool_use"]
    messages += [
        {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": c.id, "content": "sunny"} for c in calls]},
    ]
    client.messages.create(model="claude-sonnet-5", max_tokens=512, messages=messages, tools=tools)
    client.messages.create(model="claude-sonnet-5", max_tokens=512, messages=[{"role": "user", "content": "Again"}])
    with (
        pytest.raises(anthropic.APIStatusError),
        client.messages.stream(
            model="claude-sonnet-5", max_tokens=512, messages=[{"role": "user", "content": "Cut"}]
        ) as stream,
    ):
        stream.get_final_message()
    with pytest.raises(anthropic.BadRequestError):
        client.messages.create(model="claude-sonnet-5", max_tokens=64, messages=[{"role": "user", "content": "x"}])
    client.close()
    return [rec]


def _side_and_models(path: Path) -> list[RecordingTransport]:
    """Two models (one queue each), side answers, a compressed answer and a request no wire serves."""
    import openai

    upstream = ScriptTransport(
        {"claude-sonnet-5": ["Hello.", "Again."], "gpt-test": [{"text": "From GPT.", "tool": {"name": "get"}}]},
        side={"count_tokens": [42, 7], "embeddings": {"cat": [0.5, -0.25], "dog": [1.0]}, "models": ["gpt-test"]},
    )
    rec = RecordingTransport(path, upstream=upstream)
    claude = anthropic_client(rec)
    gpt = openai.OpenAI(api_key="test-key", http_client=httpx2.Client(transport=rec))
    ask = [{"role": "user", "content": "Hi"}]
    claude.messages.create(model="claude-sonnet-5", max_tokens=64, messages=ask)
    claude.messages.count_tokens(model="claude-sonnet-5", messages=ask)
    gpt.embeddings.create(model="text-embedding-3-small", input=["cat", "dog"])
    gpt.chat.completions.create(
        model="gpt-test",
        messages=ask,  # type: ignore[arg-type]
        tools=[{"type": "function", "function": {"name": "get", "parameters": {"type": "object"}}}],
    )
    assert [m.id for m in gpt.models.list()]
    claude.messages.count_tokens(model="claude-sonnet-5", messages=ask)
    with httpx2.Client(transport=rec) as raw:
        raw.get("https://api.anthropic.com/v1/not-an-endpoint")
    claude.messages.create(model="claude-sonnet-5", max_tokens=64, messages=ask)

    def gzipped(request: Any) -> Any:
        body: dict[str, Any] = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-5"}
        body |= {"content": [{"type": "text", "text": "Squeezed."}], "stop_reason": "max_tokens"}
        body |= {"stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 2}}
        headers = {"content-type": "application/json", "content-encoding": "gzip"}
        return httpx2.Response(200, headers=headers, content=gzip.compress(json.dumps(body).encode()))

    squeezed = RecordingTransport(path.with_name(f"gzip{path.suffix}"), upstream=httpx2.MockTransport(gzipped))
    anthropic_client(squeezed).messages.create(model="claude-sonnet-5", max_tokens=64, messages=ask)
    return [rec, squeezed]


def _secrets(case: str) -> Callable[[Path], list[RecordingTransport]]:
    """Every credential the requests sent, echoed back by the upstream as sent and encoded."""

    def record(path: Path) -> list[RecordingTransport]:
        from test_record_secrets import CASES, _upstream

        answer, calls = CASES[case]
        rec = RecordingTransport(path, upstream=_upstream(answer, []))
        with contextlib.ExitStack() as stack:
            if case.startswith("bedrock"):  # a SigV4 signature signs the time: one fixed time, one signature
                clock = datetime.datetime(2026, 12, 1, 9, 0, 0)  # botocore's own clock: naive UTC
                stack.enter_context(mock.patch("botocore.auth.get_current_datetime", return_value=clock))
            calls(rec)
        return [rec]

    return record


def _episodes(path: Path) -> list[RecordingTransport]:
    """A recording replayed with `new_episodes`: what runs past its end is appended."""
    first = RecordingTransport(path, upstream=ScriptTransport(["One.", {"text": "Two.", "tool": {"name": "get"}}]))
    client = anthropic_client(first)
    tools = anthropic_tools(["get"])
    for question in ("1", "2"):
        ask = [{"role": "user", "content": question}]
        client.messages.create(model="claude-sonnet-5", max_tokens=64, messages=ask, tools=tools)
    first.save()
    stand_in = ScriptTransport([{"text": "Three.", "thinking": "New."}, "Four."])
    rec = RecordingTransport(path, upstream=Episodes(ScriptTransport(load_script(path)), upstream=stand_in))
    client = anthropic_client(rec)
    for question in ("1", "2", "3", "4"):
        ask = [{"role": "user", "content": question}]
        client.messages.create(model="claude-sonnet-5", max_tokens=64, messages=ask, tools=tools)
    return [rec]


_TEXTS: list[Any] = [
    " ".join(f"word{n}" for n in range(60)),  # longer than a line: folded
    "First line.\n\n  indented line\nlast line with trailing newline\n",  # a literal block
    "- a: b # not a comment",
    "'single' and \"double\" quotes: null yes 123 ~",
    "  leading and trailing spaces  ",
    "Zürich ☃ 🌧 ünïcödé, a tab\there and a bell \x07",
    {
        "text": "Numbers.",
        "tool": {
            "name": "get",
            "input": {"big": 2**70, "tiny": 1e-30, "neg": -0.0, "list": [True, None, "x" * 120], "": "empty key"},
        },
    },
    {"thinking": "Line one.\nLine two.", "text": "x" * 250},
]
"""Texts that test how YAML writes a string: folded, as a literal block, quoted, escaped."""

_ROTATED = "sk-test-~~~?>?~~~-0123456789"  # wirescript: allow[WS101] a planted fake
"""A key whose encodings differ between the base64 alphabets (`+/` and `-_`)."""


def _texts(path: Path) -> list[RecordingTransport]:
    """Every kind of string YAML writes, streamed and not, on two wires."""
    import openai

    upstream = ScriptTransport([*_TEXTS, *_TEXTS])
    rec = RecordingTransport(path, upstream=upstream)
    claude = anthropic_client(rec)
    gpt = openai.OpenAI(api_key="test-key", http_client=httpx2.Client(transport=rec))
    tools = anthropic_tools(["get"])
    for number in range(len(_TEXTS)):
        ask = [{"role": "user", "content": f"Say {number}"}]
        with claude.messages.stream(model="claude-sonnet-5", max_tokens=64, messages=ask, tools=tools) as stream:
            stream.get_final_message()
    chat_tools = [{"type": "function", "function": {"name": "get", "parameters": {"type": "object"}}}]
    for number in range(len(_TEXTS)):
        ask = [{"role": "user", "content": f"Say {number}"}]
        gpt.chat.completions.create(model="claude-sonnet-5", messages=ask, tools=chat_tools)
    return [rec]


def _echoed(path: Path) -> list[RecordingTransport]:
    """A key echoed back in every encoding record mode searches for, in long and several-line texts."""
    import base64
    from urllib.parse import quote, quote_plus

    def echo(request: Any) -> Any:
        raw = _ROTATED.encode()
        forms = [_ROTATED, raw.hex(), raw.hex().upper(), quote(_ROTATED, safe=""), quote_plus(_ROTATED, safe="")]
        forms += [quote(_ROTATED, safe="").lower()]
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            forms += [encode(prefix + raw).decode() for prefix in (b"", b"k", b"ke")]
        text = " | ".join(forms) + "\nsecond line " + " ".join(forms)
        body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-5"}
        body |= {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None}
        body |= {"usage": {"input_tokens": 1, "output_tokens": 2}}
        return httpx2.Response(200, json=body)

    rec = RecordingTransport(path, upstream=httpx2.MockTransport(echo))
    client = anthropic_client(rec, api_key=_ROTATED)
    client.messages.create(model="claude-sonnet-5", max_tokens=64, messages=[{"role": "user", "content": "Hi"}])
    return [rec]


def recordings() -> dict[str, Callable[[Path], list[RecordingTransport]]]:
    """Each recording by name: it writes `<name>.yaml` or `.json` (and maybe more) into a folder."""
    from test_record_secrets import CASES

    found: dict[str, Callable[[Path], list[RecordingTransport]]] = {f"shapes-{wire}": _shapes(wire) for wire in DRIVERS}
    found |= {"weather": _weather, "side-and-models": _side_and_models, "episodes": _episodes}
    found |= {"texts": _texts, "echoed": _echoed}
    found |= {f"secrets-{case}": _secrets(case) for case in CASES}
    return found


def record_all(folder: Path) -> dict[str, str]:
    """Make every recording in `folder`: each file written by its name, and every recorder's notes as `NOTES`."""
    written: dict[str, str] = {}
    notes: dict[str, list[str]] = {}
    for name, record in recordings().items():
        for suffix in SUFFIXES:
            for rec in record(folder / f"{name}{suffix}"):
                rec.save()
                written[rec.path.name] = _stable(rec.path.read_text(encoding="utf-8"))
                notes[rec.path.name] = rec.notes
    written[NOTES] = json.dumps(notes, indent=2, ensure_ascii=False) + "\n"
    return written


# ---------------------------------------------------------------------- the comparison


def _differences(made: dict[str, str], stored: dict[str, str]) -> list[str]:
    """Each file that differs from its stored copy, with its first differing line; each one missing or extra."""
    found = [f"{name}: not stored" for name in sorted(set(made) - set(stored))]
    found += [f"{name}: stored, not written" for name in sorted(set(stored) - set(made))]
    for name in sorted(set(made) & set(stored)):
        if made[name] != stored[name]:
            ours, theirs = made[name].splitlines(keepends=True), stored[name].splitlines(keepends=True)
            same = (i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b)
            line = next(same, min(len(ours), len(theirs)))
            shown = ours[line] if line < len(ours) else "(end of file)"
            was = theirs[line] if line < len(theirs) else "(end of file)"
            found.append(f"{name} line {line + 1}: wrote {shown!r}, stored {was!r}")
    return found


def _stored() -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(STORED.iterdir()) if path.is_file()}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return record_all(tmp_path_factory.mktemp("recordings"))


def test_every_recording_writes_the_bytes_it_always_wrote(made: dict[str, str]) -> None:
    assert _differences(made, _stored()) == []


def test_the_recordings_cover_what_record_mode_writes(made: dict[str, str]) -> None:
    """The set exercises every part of a file: redaction, side answers, queues, errors, faults, appends."""
    every = "".join(made.values())
    for needle in (
        "<redacted>",
        "# A credential the requests sent came back in",
        '"$side":',
        "count_tokens",
        "embeddings",
        '"claude-sonnet-5":',
        "status: 429",
        "stream_error",
        "thinking_signature: EqQBCkYIBxgC",
        "# Appended by wirescript",
        "Squeezed.",
        "not recorded",
        "a credential it sent came back in",
    ):
        assert needle in every, needle
    assert sum(name.endswith(".json") for name in made) >= len(recordings())


def test_one_byte_changed_anywhere_is_a_difference(made: dict[str, str]) -> None:
    """The comparison is exact: a byte changed, added or removed in any file is reported, naming the file."""
    stored = _stored()
    for name in sorted(stored)[::7]:
        text = stored[name]
        middle = len(text) // 2
        flipped = text[:middle] + ("x" if text[middle] != "x" else "y") + text[middle + 1 :]
        for changed in (flipped, text + " ", text[:-1]):
            [difference] = _differences(made, {**stored, name: changed})
            assert difference.startswith(f"{name} line "), difference


if __name__ == "__main__":  # write the stored copies afresh: python tests/test_record_bytes.py tests/recordings
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        for file_name, content in record_all(Path(scratch)).items():
            (target / file_name).write_text(content, encoding="utf-8")
