"""The Gemini wire's answers, byte for byte, against a golden file.

Every representative answer (text of one and of many deltas, thinking, function calls, usage, stop
reasons, grounding and code execution parts, errors, in-stream errors and the other faults) is sent
for `:generateContent`, `:streamGenerateContent?alt=sse` and the JSON-array stream, read event by
event and in chunks: the status, the headers, every chunk of the event-by-event reading and the
problems the stub reports must be exactly those in `golden/gemini.json`, and the body read in
chunks must be the same bytes. The file was written by an earlier rendering of the same answers;
`python tests/test_gemini_golden.py` writes it again (only when the rendering is meant to change).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from wirescript import ScriptTransport

httpx2 = pytest.importorskip("httpx2")

GOLDEN = Path(__file__).parent / "golden" / "gemini.json"
HOST = "https://generativelanguage.googleapis.com"
PER_EVENT = "wirescript.per_event"

_PROSE = "The quick brown fox jumps over the lazy dog, and then it runs far away into the woods. "
_WEATHER = {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
_LOOKUP = {"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}
BODY: dict[str, Any] = {
    "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
    "tools": [{"functionDeclarations": [_WEATHER, _LOOKUP]}, {"googleSearch": {}}, {"codeExecution": {}}],
}
PLAIN_BODY: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
RESULTS = [
    {"url": "https://en.wikipedia.org/wiki/Dune_(novel)", "title": "Dune (novel)"},
    {"url": "https://www.dunenovels.com", "title": "Dune Novels"},
]
_WEIRD = 'Quotes " and \\ backslashes,\nnew lines\r\n, tabs\t, \x00\x1f\x7f controls, é, 日本語, emoji 🦊 and \u2028.'

TURNS: dict[str, Any] = {
    "one-char": {"text": "x"},
    "short": {"text": "Hello there!"},
    "hundred-deltas": {"text": (_PROSE * 10)[:800]},
    "escapes": {"text": _WEIRD},
    "long-non-ascii": {"text": ("ü日" + _WEIRD) * 12},
    "empty-text": {"text": ""},
    "empty": {},
    "thinking": {"thinking": "Let me think about this carefully.", "text": "Answer."},
    "thinking-only": {"thinking": "Hmm, pondering."},
    "thinking-empty": {"thinking": ""},
    "thinking-tools": {
        "thinking": "Two lookups.",
        "tools": [
            {"name": "get_weather", "input": {"city": "Zürich"}},
            {"name": "lookup", "input": {"q": 'a "quoted" thing'}, "id": "call_given"},
        ],
    },
    "thinking-code": {
        "thinking": "Run it.",
        "server_tools": [{"name": "code_execution", "input": {"code": "print(1)"}, "result": {"stdout": "1\n"}}],
    },
    "tool-only": {"tool": {"name": "lookup", "input": {}, "id": "call_fixed"}},
    "text-and-tools": {
        "text": "Checking both.",
        "tools": [{"name": "get_weather", "input": {"city": "Paris"}}, {"name": "lookup", "input": {"q": "x"}}],
    },
    "usage": {"text": "Counted.", "usage": {"input_tokens": 7, "output_tokens": 3, "cache_read_input_tokens": 2}},
    "usage-derive": {"text": "Derived usage.", "usage": "derive"},
    "max-tokens": {"text": "Cut off mid", "stop_reason": "max_tokens"},
    "refusal": {"text": "No.", "stop_reason": "refusal"},
    "recitation": {"text": "Quoted.", "stop_reason": "RECITATION"},
    "grounded": {
        "server_tools": [
            {"name": "web_search", "input": {"query": "Dune author"}, "result": RESULTS},
            {"name": "code_execution", "input": {"code": "print(2026 - 1965)"}, "result": {"stdout": "61\n"}},
        ],
        "text": "Dune (1965) is by Frank Herbert, 61 years ago. Überall.",
        "citations": [{"source": 0, "span": "Frank Herbert"}, {"source": 1, "span": "Überall"}],
    },
    "code-failed": {
        "server_tools": [
            {"name": "code_execution", "input": {"code": "1/0"}, "result": {"stderr": "ZeroDivision", "return_code": 1}}
        ],
        "text": "It failed.",
    },
    "search-queries": {
        "server_tools": [{"name": "web_search", "input": {"queries": ["a", "b"]}, "result": RESULTS}],
        "text": "Searched twice.",
    },
    "malformed-tool-json": {"tool": {"name": "lookup", "input": {"q": "x"}}, "fault": {"malformed_tool_json": True}},
    "stream-error-first": {"text": "Never sent.", "fault": {"stream_error": {"after": 0}}},
    "stream-error-later": {
        "text": "Half of this answer is sent.",
        "fault": {"stream_error": {"type": "rate_limit_error", "message": "Slow down", "after": 2}},
    },
    "stream-error-status": {"text": "Some text.", "fault": {"stream_error": {"type": "UNAVAILABLE", "after": 1}}},
    "stream-error-other": {"text": "Some text.", "fault": {"stream_error": {"type": "weird_thing", "after": 1}}},
    "cut-after": {"text": "An answer that is cut.", "fault": {"cut_after": 2}},
    "drop-final": {"text": "An answer without its end.", "fault": {"drop": ["final_chunk"]}},
    "disconnect": {"text": "An answer that drops.", "fault": {"disconnect_after": 1}},
    "error-429": {"error": {"status": 429}},
    "error-400-code": {"error": {"status": 400, "message": "Bad field", "code": "FIELD_INVALID"}},
    "error-503-type": {"error": {"status": 503, "type": "OVERLOADED", "headers": {"Retry-After": "2"}}},
    "error-418": {"error": {"status": 418, "message": "Teapot"}},
    "impossible-tool": {"tool": {"name": "not_offered", "input": {}}},
}
"""Each answer, by name."""

MODES = {
    "json": ("/v1beta/models/{model}:generateContent", {}),
    "sse": ("/v1beta/models/{model}:streamGenerateContent", {"alt": "sse"}),
    "array": ("/v1beta/models/{model}:streamGenerateContent", {}),
}
"""How the answer is asked for: the path and the query."""

MODELS = ("gemini-2.5-flash",)
EXTRA: dict[str, tuple[str, dict[str, Any]]] = {
    "non-ascii-model": ("gemini-ünï", BODY),
    "tuned-model": ("tunedModels/my-tune", BODY),
    "plain-request": ("gemini-2.5-flash", PLAIN_BODY),
    "snake-case-request": (
        "gemini-2.5-flash",
        {
            "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
            "generation_config": {"max_output_tokens": 50, "temperature": 0.5},
            "system_instruction": {"parts": [{"text": "Be brief."}]},
        },
    ),
}
"""Requests other than the usual one, each answered with a few of the turns."""
EXTRA_TURNS = ("short", "thinking-tools", "grounded", "stream-error-later")


def _read(stub: ScriptTransport, mode: str, model: str, body: dict[str, Any], per_event: bool) -> dict[str, Any]:
    path, params = MODES[mode]
    url = HOST + path.format(model=model)
    extensions = {PER_EVENT: True} if per_event else {}
    chunks: list[bytes] = []
    failure = None
    with httpx2.Client(transport=stub) as http:
        request = http.build_request("POST", url, json=body, params=params, extensions=extensions)
        response = http.send(request, stream=True)
        try:
            for chunk in response.iter_raw():
                chunks.append(chunk)
        except httpx2.HTTPError as exc:
            failure = type(exc).__name__
        response.close()
    headers = [[k, v] for k, v in response.headers.items() if k not in ("content-length", "transfer-encoding")]
    return {"status": response.status_code, "headers": headers, "chunks": chunks, "failure": failure}


def _answer(turn: Any, mode: str, model: str, body: dict[str, Any]) -> dict[str, Any]:
    """The answer to the turn, read event by event, with the problems reported; its body read in chunks too."""
    stub = ScriptTransport([turn])
    got = _read(stub, mode, model, body, per_event=True)
    problems = [str(p) for p in stub.problems]
    joined = _read(ScriptTransport([turn]), mode, model, body, per_event=False)
    return {
        "status": got["status"],
        "headers": got["headers"],
        "chunks": [c.decode() for c in got["chunks"]],
        "failure": got["failure"],
        "problems": problems,
        "joined": {key: joined[key] for key in ("status", "headers", "failure")},
        "joined_body": b"".join(joined["chunks"]).decode(),
    }


def _cases() -> dict[str, tuple[Any, str, str, dict[str, Any]]]:
    cases = {}
    for name, turn in TURNS.items():
        for mode in MODES:
            for model in MODELS:
                cases[f"{name}/{mode}"] = (turn, mode, model, BODY)
    for label, (model, body) in EXTRA.items():
        for name in (*EXTRA_TURNS, "hundred-deltas") if label == "non-ascii-model" else EXTRA_TURNS:
            for mode in MODES:
                cases[f"{label}/{name}/{mode}"] = (TURNS[name], mode, model, body)
    return cases


CASES = _cases()


def _golden() -> dict[str, Any]:
    golden: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return golden


def _differences(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """What differs between two answers, field by field (chunk by chunk); empty when they are the same."""
    found = []
    for key in sorted(set(expected) | set(got)):
        if key == "chunks" and key in expected and key in got:
            if len(expected[key]) != len(got[key]):
                found.append(f"{len(got[key])} chunks, expected {len(expected[key])}")
            for n, (want, have) in enumerate(zip(expected[key], got[key], strict=False)):
                if want != have:
                    found.append(f"chunk {n}: {have!r}, expected {want!r}")
        elif expected.get(key) != got.get(key):
            found.append(f"{key}: {got.get(key)!r}, expected {expected.get(key)!r}")
    return found


def test_the_golden_file_holds_every_case() -> None:
    assert sorted(_golden()) == sorted(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_answer_is_the_golden_bytes(case: str) -> None:
    turn, mode, model, body = CASES[case]
    got = _answer(turn, mode, model, body)
    expected = _golden()[case]
    # Read in chunks (a stub of its own): the same bytes as event by event.
    assert got.pop("joined_body") == "".join(expected["chunks"])
    assert _differences(expected, got) == []


def test_a_changed_byte_is_caught() -> None:
    """The comparison sees one byte changed anywhere in an answer: a chunk, the joined body, a header."""
    expected = _golden()["hundred-deltas/sse"]
    assert _differences(expected, json.loads(json.dumps(expected))) == []
    for where in ("chunk", "failure", "header"):
        changed = json.loads(json.dumps(expected))
        if where == "chunk":
            text = changed["chunks"][40]
            changed["chunks"][40] = text[:30] + chr(ord(text[30]) ^ 1) + text[31:]
        elif where == "failure":
            changed["joined"]["failure"] = "ReadTimeout"
        else:
            changed["headers"][0][1] += " "
        assert _differences(expected, changed) != [], where


def _write() -> None:
    GOLDEN.parent.mkdir(exist_ok=True)
    answers = {}
    for case in sorted(CASES):
        answer = _answer(*CASES[case])
        assert answer.pop("joined_body") == "".join(answer["chunks"]), case
        answers[case] = answer
    GOLDEN.write_text(json.dumps(answers, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(answers)} answers to {GOLDEN}", file=sys.stderr)


if __name__ == "__main__":
    _write()
