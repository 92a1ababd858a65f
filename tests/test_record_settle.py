"""Record mode reads what it kept when the recording is read: it shows what reading each at once would have shown.

A recorder keeps each request as it arrived and each answer's bytes, and reads them into records,
turns and notes when `requests`, `turns`, `notes`, `side`, `script()` or `save()` first asks: in
the order they happened. So a request is in `requests` as soon as it arrived, a bad answer is in
`notes` as soon as its body ended (not before), the notes keep the order of what happened, what an
upstream does to a request after it arrived changes nothing of its record, and reading the
recording as it goes writes the same file as reading it once at the end.
"""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anthropic
import pytest

from _support import ANTHROPIC_HX, SAMPLE_TURNS, anthropic_client, anthropic_tools
from wirescript import RecordingTransport, ScriptTransport

MESSAGES = "https://api.anthropic.com/v1/messages"
BODY = {"model": "claude-a", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
ANSWER = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-a",
    "content": [{"type": "text", "text": "Fine."}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 3, "output_tokens": 2},
}

TOOLS = anthropic_tools()  # every tool SAMPLE_TURNS calls


def _upstream(hx: Any) -> Any:
    """Messages: an answer no wire can read (`not json`), sent in two chunks; any other path: a 404."""

    def answer(request: Any) -> Any:
        if request.url.path == "/v1/messages":
            return hx.Response(200, headers={"content-type": "application/json"}, content=iter([b"not ", b"json"]))
        return hx.Response(404, json={"type": "error", "error": {"type": "not_found_error", "message": "no"}})

    return hx.MockTransport(answer)


def test_a_request_is_recorded_when_it_arrives_and_a_bad_answer_noted_when_its_body_ends(tmp_path: Path) -> None:
    hx = ANTHROPIC_HX
    rec = RecordingTransport(tmp_path / "rec.json", upstream=_upstream(hx))
    with hx.Client(transport=rec) as client:
        with client.stream("POST", MESSAGES, json=BODY) as response:
            # Arrived, its answer not read yet: recorded, nothing noted, no turn.
            assert [(r.index, r.path, r.model) for r in rec.requests] == [(0, "/v1/messages", "claude-a")]
            assert rec.notes == []
            assert rec.turns == []
            # Another request, which no wire serves, arrives meanwhile: noted at once.
            assert client.get("https://api.anthropic.com/v1/skills").status_code == 404
            assert len(rec.requests) == 2
            [skills] = rec.notes
            assert skills.startswith("requests[1] GET /v1/skills")
            assert "not recorded" in skills
            chunks = response.iter_raw()
            first = next(chunks)
            assert rec.notes == [skills]  # the body has not ended: its answer is not read yet
            rest = b"".join(chunks)
        assert first + rest == b"not json"  # the app read the upstream's bytes
        # The body ended: its answer is read, and noted after what was noted before it ended.
        assert rec.notes == [
            skills,
            (
                "requests[0] POST /v1/messages model='claude-a' last=user:'Hi': the anthropic wire could not read its "
                "answer (status 200)"
            ),
        ]
        assert rec.turns == []


def test_the_notes_keep_the_order_of_what_happened(tmp_path: Path) -> None:
    """An answer that ended before a later request arrived is noted before it (and after it, the other way)."""
    hx = ANTHROPIC_HX
    rec = RecordingTransport(tmp_path / "rec.json", upstream=_upstream(hx))
    with hx.Client(transport=rec) as client:
        client.post(MESSAGES, json=BODY).read()  # requests[0]: its answer ends
        client.get("https://api.anthropic.com/v1/skills")  # requests[1] arrives
        with client.stream("POST", MESSAGES, json=BODY) as response:  # requests[2] arrives
            client.get("https://api.anthropic.com/v1/models/x")  # requests[3] arrives
            response.read()  # requests[2]'s answer ends
    assert [note.split(" ", 1)[0] for note in rec.notes] == ["requests[0]", "requests[1]", "requests[3]", "requests[2]"]


def test_what_an_upstream_does_to_a_request_after_it_arrived_is_not_recorded(tmp_path: Path) -> None:
    """The record is of the request as the app sent it, and the key it sent is what is kept out of the file."""
    hx = ANTHROPIC_HX
    sent_key = "sk-ant-app-key-0123456789abcdef"

    def answer(request: Any) -> Any:  # an upstream that rewrites the request, as a rehosting proxy does
        request.headers["x-api-key"] = "sk-ant-other-key-9876543210fedcba"
        request.headers["anthropic-version"] = "1999-01-01"
        request.url = request.url.copy_with(host="elsewhere.example", path="/v1/complete")
        return hx.Response(200, json={**ANSWER, "content": [{"type": "text", "text": f"echo {sent_key}"}]})

    reference = ScriptTransport([{"text": "Fine."}])  # what the app sends, as a stub records it
    rec = RecordingTransport(tmp_path / "rec.json", upstream=hx.MockTransport(answer))
    for transport in (reference, rec):
        client = anthropic.Anthropic(api_key=sent_key, max_retries=0, http_client=hx.Client(transport=transport))
        client.messages.create(model="claude-a", max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
    [record] = rec.requests
    [sent] = reference.requests
    assert (record.provider, record.path, record.content) == ("anthropic", "/v1/messages", sent.content)
    assert record.headers == sent.headers
    assert record.headers["anthropic-version"] != "1999-01-01"
    assert record.api_key is not None
    assert record.api_key.get_secret_value() == sent_key
    assert [turn.text for turn in rec.turns] == ["echo <redacted>"]
    assert sent_key not in rec.save().read_text(encoding="utf-8")


def _session(rec: RecordingTransport, *, read_as_it_goes: bool) -> list[Any]:
    """Every sample turn shape, an error, an unknown endpoint and an unreadable answer, through one recorder."""
    seen: list[Any] = []

    def look() -> None:
        if read_as_it_goes:
            seen.append(([r.summary() for r in rec.requests], [t.model_dump() for t in rec.turns], list(rec.notes)))

    http = ANTHROPIC_HX.Client(transport=rec)
    client = anthropic.Anthropic(api_key="test-key", max_retries=0, http_client=http)
    ask: dict[str, Any] = {"max_tokens": 10, "messages": [{"role": "user", "content": "Hi"}], "tools": TOOLS}
    for _ in SAMPLE_TURNS:
        with client.messages.stream(model="claude-a", **ask) as stream:
            stream.get_final_message()
        look()
    with pytest.raises(anthropic.APIStatusError):
        client.messages.create(model="claude-b", **ask)
    look()
    http.get("https://api.anthropic.com/v1/skills")
    look()
    return seen


def test_reading_the_recording_as_it_goes_shows_and_writes_what_reading_it_once_does(tmp_path: Path) -> None:
    turns = [*SAMPLE_TURNS.values(), {"error": {"status": 400, "type": "invalid_request_error", "message": "No."}}]
    once = RecordingTransport(tmp_path / "once.json", upstream=ScriptTransport(list(turns)))
    often = RecordingTransport(tmp_path / "often.json", upstream=ScriptTransport(list(turns)))
    _session(once, read_as_it_goes=False)
    seen = _session(often, read_as_it_goes=True)
    assert len(seen) == len(turns) + 1
    assert [len(requests) for requests, _, _ in seen] == list(range(1, len(turns) + 2))
    final = ([r.summary() for r in once.requests], [t.model_dump() for t in once.turns], once.notes)
    assert seen[-1] == final
    assert [requests for requests, _, _ in seen] == [final[0][: len(r)] for r, _, _ in seen]
    assert once.save().read_bytes() == often.save().read_bytes()
    queues = json.loads(once.path.read_text(encoding="utf-8"))  # two models: a queue each
    assert [len(queue) for queue in queues.values()] == [len(turns) - 1, 1]


def test_async_answers_are_read_when_their_body_ends_too(tmp_path: Path) -> None:
    hx = ANTHROPIC_HX
    rec = RecordingTransport(tmp_path / "rec.json", upstream=ScriptTransport([{"text": "One."}, {"text": "Two."}]))

    async def main() -> None:
        async with hx.AsyncClient(transport=rec) as client:
            async with client.stream("POST", MESSAGES, json=BODY) as response:
                assert len(rec.requests) == 1
                assert rec.turns == []
                await client.post(MESSAGES, json=BODY)  # read to its end by the client
                assert [t.text for t in rec.turns] == ["Two."]
                await response.aread()
            assert [t.text for t in rec.turns] == ["One.", "Two."]  # in arrival order, as the file holds them

    asyncio.run(main())


def test_a_recorder_holds_at_most_a_few_mib_of_answers_undecoded(tmp_path: Path) -> None:
    """Answers nobody has read the recording for yet are decoded once they pass the bound: memory stays bounded."""
    from wirescript.recording import _transport

    text = "x" * (1 << 20)  # each answer is over 1 MiB
    rec = RecordingTransport(tmp_path / "rec.json", upstream=ScriptTransport(lambda r: {"text": text}))
    client = anthropic_client(rec)
    for _ in range(6):
        client.messages.create(model="claude-a", max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
    assert rec._waiting <= _transport._WAITING_BYTES
    assert len(rec._events) < 6
    assert [len(t.text or "") for t in rec.turns] == [len(text)] * 6


def test_reading_the_recording_while_requests_arrive_shows_only_requests_it_has_read(tmp_path: Path) -> None:
    """A request arriving while the recording is read is not half shown: it is there, read, or not yet."""
    rec = RecordingTransport(tmp_path / "rec.json", upstream=ScriptTransport(lambda r: {"text": r.last_user_text}))
    client = anthropic_client(rec, max_retries=0)
    done = threading.Event()
    seen: list[int] = []
    failures: list[BaseException] = []

    def read() -> None:
        try:
            while not done.is_set():
                turns = rec.turns
                records = rec.requests  # read after: every turn's request is in it
                assert [r.index for r in records] == list(range(len(records)))
                assert len(turns) <= len(records)
                seen.append(len(records))
        except BaseException as exc:
            failures.append(exc)

    def ask(number: int) -> None:
        client.messages.create(model="claude-a", max_tokens=10, messages=[{"role": "user", "content": f"n{number}"}])

    readers = [threading.Thread(target=read) for _ in range(2)]
    for reader in readers:
        reader.start()
    with ThreadPoolExecutor(6) as pool:
        list(pool.map(ask, range(120)))
    done.set()
    for reader in readers:
        reader.join()
    assert failures == []
    assert len(seen) > 1
    assert [t.text for t in rec.turns] == [r.last_user_text for r in rec.requests]
    assert sorted(t.text or "" for t in rec.turns) == sorted(f"n{n}" for n in range(120))
