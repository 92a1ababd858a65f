"""The answers every wire gives a fixed set of requests: what `test_answer_bytes` holds the transport to.

`python tests/_golden.py` rewrites `answers.json` from the wirescript it imports: run it
against the release whose bytes are the reference, never to make a failing comparison pass.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import httpx2

from wirescript import ScriptTransport
from wirescript.transport import PER_EVENT

GOLDEN = Path(__file__).parent / "golden" / "answers.json"

TOOL = {"name": "save", "input": {"path": "notes/a.txt", "text": 'line one\nline "two" é'}}
LONG = 'ab\n"é\\ ' * 300 + "ü" * 600 + "plain text " * 200
TURNS: list[dict[str, Any]] = [
    {"text": "x"},
    {"text": 'Hello there: a longer answer, with é, "quotes", \\ and\nnew lines.'},
    {"tool": TOOL, "unchecked": True},
    {"text": "I will save it.", "tools": [TOOL, {**TOOL, "name": "load", "input": {}}], "unchecked": True},
    {"thinking": "Let me think about it.", "thinking_signature": "sig-1", "text": "Done."},
    {"text": "counted", "usage": {"input_tokens": 7, "output_tokens": 3, "cache_read_input_tokens": 2}},
    {"text": "cut short", "stop_reason": "max_tokens"},
    {"error": {"status": 429, "message": "slow down"}},
    {"error": {"status": 500}},
    {"text": "broken mid-way", "fault": {"stream_error": {"type": "overloaded_error", "message": "busy"}}},
    {"tool": TOOL, "unchecked": True, "fault": {"malformed_tool_json": True}},
    {"text": "one two three four five six", "fault": {"drop": ["ping"], "cut_after": 4}},
    {"text": LONG, "thinking": LONG[::-1], "tool": TOOL, "unchecked": True},
    {"text": "x"},  # the same answer again, a later index
]

_MESSAGES = [{"role": "user", "content": "hi"}]
_CONVERSE = [{"role": "user", "content": [{"text": "hi"}]}]


def _requests(model: str) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """(host, path, body) by case name, each asking for a stream when its name ends in `stream`."""
    return {
        "anthropic": ("api.anthropic.com", "/v1/messages", {"model": model, "max_tokens": 99, "messages": _MESSAGES}),
        "anthropic stream": (
            "api.anthropic.com",
            "/v1/messages",
            {"model": model, "max_tokens": 99, "messages": _MESSAGES, "stream": True},
        ),
        "openai_chat": ("api.openai.com", "/v1/chat/completions", {"model": model, "messages": _MESSAGES}),
        "openai_chat stream": (
            "api.openai.com",
            "/v1/chat/completions",
            {"model": model, "messages": _MESSAGES, "stream": True},
        ),
        "openai_chat usage stream": (
            "api.openai.com",
            "/v1/chat/completions",
            {"model": model, "messages": _MESSAGES, "stream": True, "stream_options": {"include_usage": True}},
        ),
        "deepseek stream": (
            "api.deepseek.com",
            "/v1/chat/completions",
            {"model": model, "messages": _MESSAGES, "stream": True, "stream_options": {"include_usage": True}},
        ),
        "openai_responses": ("api.openai.com", "/v1/responses", {"model": model, "input": "hi"}),
        "openai_responses stream": ("api.openai.com", "/v1/responses", {"model": model, "input": "hi", "stream": True}),
        "gemini": (
            "generativelanguage.googleapis.com",
            f"/v1beta/models/{model.encode().hex()}:generateContent",
            {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        ),
        "gemini stream": (
            "generativelanguage.googleapis.com",
            f"/v1beta/models/{model.encode().hex()}:streamGenerateContent?alt=sse",
            {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        ),
        "bedrock converse": (
            "bedrock-runtime.us-east-1.amazonaws.com",
            "/model/amazon.nova-lite-v1:0/converse",
            {"messages": _CONVERSE},
        ),
        "bedrock converse stream": (
            "bedrock-runtime.us-east-1.amazonaws.com",
            "/model/amazon.nova-lite-v1:0/converse-stream",
            {"messages": _CONVERSE},
        ),
        "bedrock invoke stream": (
            "bedrock-runtime.us-east-1.amazonaws.com",
            "/model/anthropic.claude-3-haiku-20240307-v1:0/invoke-with-response-stream",
            {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 99, "messages": _MESSAGES},
        ),
        "ollama stream": ("localhost:11434", "/api/chat", {"model": model, "messages": _MESSAGES, "stream": True}),
    }


MODELS = ("m", "modèle-é")
MODES = ("joined", "per_event")


def answers(case: str, model: str, mode: str) -> list[dict[str, Any]]:
    """Each turn's answer to the case's request, in order from one stub: status, headers and raw chunks."""
    host, path, body = _requests(model)[case]
    stub = ScriptTransport([dict(turn) for turn in TURNS])
    extensions = {PER_EVENT: True} if mode == "per_event" else {}
    out = []
    with httpx2.Client(transport=stub, base_url=f"https://{host}") as client:
        for _ in TURNS:
            request = client.build_request(
                "POST",
                path,
                content=json.dumps(body).encode(),
                headers={"content-type": "application/json", "x-api-key": "k", "authorization": "Bearer k"},
                extensions=extensions,
            )
            response = client.send(request, stream=True)
            try:
                chunks = [chunk.decode("latin-1") for chunk in response.iter_raw()]
            except httpx2.HTTPError as exc:  # a fault's dropped connection, after what it sent
                chunks = [f"<{type(exc).__name__}>"]
            out.append(summary(response.status_code, response.headers.multi_items(), chunks))
    return out


def summary(status: int, headers: list[tuple[str, str]], chunks: list[str]) -> dict[str, Any]:
    """An answer as the golden file keeps it: its status, headers, body digest and where each chunk ends."""
    body = "".join(chunks)
    kept: dict[str, Any] = {"status": status, "headers": [list(pair) for pair in headers]}
    kept["chunk_sizes"] = [len(chunk) for chunk in chunks]
    kept["sha256"] = hashlib.sha256(body.encode("latin-1")).hexdigest()
    return kept


def everything() -> dict[str, list[dict[str, Any]]]:
    """Every case, model and mode."""
    return {
        f"{case} | {model} | {mode}": answers(case, model, mode)
        for case in _requests("m")
        for model in MODELS
        for mode in MODES
    }


if __name__ == "__main__":
    lines = [f"{json.dumps(key)}: {json.dumps(value)}" for key, value in everything().items()]
    GOLDEN.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    print(f"wrote {GOLDEN} from {sys.modules['wirescript'].__file__}")
