"""The Gemini stream's chunks, built from JSON encoded once per answer, are `json_dumps` of each chunk whole.

The reference here builds every chunk's `GenerateContentResponse` as a dict and encodes it with
`json_dumps` (a lone surrogate escapes the whole chunk to ASCII), framed as SSE or as the elements
of a JSON array. The wire's renderer must give the same bytes for any parts: runs of text pieces
(thought or not, the last one signed), other parts (function calls, code), any text, any usage and
model, grounding metadata or none, joined or event by event. Scripts refuse lone surrogates, but
the renderer still escapes one as `json_dumps` would.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support import examples
from wirescript.sse import encode_event, json_dumps
from wirescript.wires.gemini.wire import _TEXT_PART, _THOUGHT_PART, _around, _candidate, _element, _stream

PROPERTY = settings(
    max_examples=examples(300),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

texts = st.text(max_size=12) | st.sampled_from(["", "\ud800", "a\udfffb", "é", "日本", '"\\\n\x00', "🦊"])
values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
runs = st.lists(
    st.tuples(st.lists(texts, min_size=1, max_size=40), st.sampled_from([_TEXT_PART, _THOUGHT_PART]))
    | st.builds(lambda n, a: {"functionCall": {"name": n, "args": a}}, texts, st.dictionaries(texts, values))
    | st.builds(lambda code: {"executableCode": {"language": "PYTHON", "code": code}}, texts),
    max_size=4,
)


def _reference(
    parts: list[Any], finish: str, envelope: dict[str, Any], metadata: Any, *, array: bool, signature: str | None
) -> bytes:
    """Each chunk a dict encoded whole: the parts one per chunk, the last with the finish and the full usage."""
    flat: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, dict):
            flat.append(part)
        else:
            pieces, (_, after) = part
            flat.extend({"text": p, "thought": True} if "thought" in after else {"text": p} for p in pieces)
    if signature is not None:
        flat[-1] = {**flat[-1], "thoughtSignature": signature}
    prompt = envelope["usageMetadata"]["promptTokenCount"]
    partial = {**envelope, "usageMetadata": {"promptTokenCount": prompt, "totalTokenCount": prompt}}
    groups = [[part] for part in flat] or [[]]
    out = []
    for number, group in enumerate(groups):
        last = number == len(groups) - 1
        chunk = {"candidates": [_candidate(group, finish if last else None, metadata if last else None)]}
        chunk.update(envelope if last else partial)
        data = json_dumps(chunk)
        out.append(_element(data, first=number == 0, last=last) if array else encode_event(None, data))
    return b"".join(out)


@PROPERTY
@given(
    parts=runs,
    finish=st.sampled_from(["STOP", "MAX_TOKENS", "RECITATION"]),
    tokens=st.tuples(st.integers(0, 10**9), st.integers(0, 10**9)),
    model=texts,
    metadata=st.none() | st.dictionaries(texts, values, max_size=3),
    array=st.booleans(),
    joined=st.booleans(),
    signed=st.booleans(),
)
def test_the_chunks_are_each_chunk_encoded_whole(
    parts: list[Any],
    finish: str,
    tokens: tuple[int, int],
    model: str,
    metadata: Any,
    array: bool,
    joined: bool,
    signed: bool,
) -> None:
    signature = "c2lnXzAwMDA=" if signed and parts and not isinstance(parts[-1], dict) else None
    usage = {"promptTokenCount": tokens[0], "candidatesTokenCount": tokens[1], "totalTokenCount": sum(tokens)}
    envelope = {"usageMetadata": usage, "modelVersion": model, "responseId": "resp_0003"}
    expected = _reference(parts, finish, envelope, metadata, array=array, signature=signature)
    runs = [part if isinstance(part, dict) else (part[0], *part[1]) for part in parts]
    around = _around(envelope, finish, metadata, array=array)
    frames = list(_stream(runs, *around, array=array, joined=joined, signature=signature))
    assert b"".join(frame.data for frame in frames) == expected
    assert [frame.name for frame in frames][-1:] == ["final_chunk"]
    assert all(frame.name == "chunk" for frame in frames[:-1])
    if not joined:  # one frame per chunk
        assert len(frames) == max(1, sum(1 if isinstance(p, dict) else len(p[0]) for p in parts))


def test_a_long_run_joined_is_a_few_frames_of_the_same_bytes() -> None:
    envelope = {"usageMetadata": {"promptTokenCount": 1, "totalTokenCount": 1}, "modelVersion": "m", "responseId": "r"}
    pieces = ["abcdefgh", "é\ud800", '"\n'] * 400
    for array in (False, True):
        around = _around(envelope, "STOP", array=array)
        one_by_one = list(_stream([(pieces, *_TEXT_PART)], *around, array=array))
        joined = list(_stream([(pieces, *_TEXT_PART)], *around, array=array, joined=True))
        assert len(one_by_one) == len(pieces)
        assert 2 < len(joined) < len(pieces) // 10
        expected = _reference([(pieces, _TEXT_PART)], "STOP", envelope, None, array=array, signature=None)
        assert b"".join(f.data for f in joined) == b"".join(f.data for f in one_by_one) == expected


def test_each_answer_streams_its_own_id_model_usage_and_finish() -> None:
    """What surrounds the parts is kept by model, usage, finish and framing: each answer still gets its own values."""
    httpx2 = pytest.importorskip("httpx2")  # the legacy run (anthropic 0.x, openai 2.x on httpx) has neither
    genai = pytest.importorskip("google.genai")
    types = genai.types

    from wirescript import ScriptTransport

    # Each answer's shape differs from the first's in one value: the id, the prompt tokens, the model, the
    # finish reason, the cached tokens, the framing.
    turns = [
        {"text": "one"},
        {"text": "one"},
        {"text": "one", "usage": {"input_tokens": 7}},
        {"text": "one"},
        {"text": "cut", "stop_reason": "max_tokens"},
        {"text": "one", "usage": {"cache_read_input_tokens": 2}},
        {"text": "one"},
    ]
    stub = ScriptTransport(turns)
    http = httpx2.Client(transport=stub)
    client = genai.Client(api_key="k", http_options=types.HttpOptions(httpx_client=http))
    finals = []
    for model in ("gemini-a", "gemini-a", "gemini-a", "gemini-b", "gemini-a", "gemini-a"):
        chunks = list(client.models.generate_content_stream(model=model, contents="hi"))
        assert {c.response_id for c in chunks} == {chunks[-1].response_id}
        assert {c.model_version for c in chunks} == {model}
        assert all(c.usage_metadata.candidates_token_count is None for c in chunks[:-1])  # type: ignore[union-attr]
        finals.append(chunks[-1])
    assert [f.response_id for f in finals] == [f"resp_000{n}" for n in range(6)]
    assert [f.candidates[0].finish_reason for f in finals] == ["STOP"] * 4 + ["MAX_TOKENS", "STOP"]  # type: ignore[index]
    usage = [f.usage_metadata for f in finals]
    prompts = [u.prompt_token_count for u in usage]  # type: ignore[union-attr]
    assert prompts[2] == 7
    assert prompts[:2] + prompts[3:] == [prompts[0]] * 5 != [7] * 5
    assert [u.candidates_token_count for u in usage] == [1] * 6  # type: ignore[union-attr]
    assert [u.cached_content_token_count for u in usage] == [None] * 5 + [2]  # type: ignore[union-attr]
    url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-a:streamGenerateContent"
    array = json.loads(http.post(url, json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).content)
    assert {element["responseId"] for element in array} == {"resp_0006"}
    assert "".join(element["candidates"][0]["content"]["parts"][0]["text"] for element in array) == "one"
    assert stub.problems == []
