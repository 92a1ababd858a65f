"""Record mode's less travelled paths: what `script()` gives, a wire that fails decoding, the network
transports `Episodes` and `Rehost` build and close, side answers an append leaves out, and the record
command's bad arguments.

The provider is always a stand-in: a `ScriptTransport` upstream, or one served on a loopback port
for the network path.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anthropic
import pytest

from _support import ANTHROPIC_HX, anthropic_client
from wirescript import RecordingTransport, ScriptTransport, load_script
from wirescript.cli import record_command
from wirescript.recording import Episodes, Rehost, drift, recorded_summaries
from wirescript.wires import AnthropicWire
from wirescript.wires.side import TokenCountWire

ASK = [{"role": "user", "content": "Hi"}]


def _ask(client: Any, model: str = "claude-a", prompt: str = "Hi") -> str:
    message = client.messages.create(model=model, max_tokens=10, messages=[{"role": "user", "content": prompt}])
    return "".join(b.text for b in message.content if b.type == "text")


# ---------------------------------------------------------------------- the evidence before saving


def test_script_is_the_script_save_writes_one_queue_per_model_when_several_were_called(tmp_path: Path) -> None:
    rec = RecordingTransport(tmp_path / "rec.json", upstream=ScriptTransport({"claude-a": ["A"], "claude-b": ["B"]}))
    client = anthropic_client(rec)
    assert rec.script() == []
    assert [_ask(client, "claude-a"), _ask(client, "claude-b")] == ["A", "B"]
    script = rec.script()
    assert isinstance(script, dict)
    assert {model: [t.text for t in turns] for model, turns in script.items()} == {"claude-a": ["A"], "claude-b": ["B"]}
    assert script == load_script(rec.save())
    assert repr(rec) == f"<RecordingTransport {str(rec.path)!r} requests=2 turns=2>"

    one = RecordingTransport(tmp_path / "one.json", upstream=ScriptTransport(["A", "B"]))
    assert [_ask(anthropic_client(one)) for _ in range(2)] == ["A", "B"]
    plain = one.script()
    assert isinstance(plain, list)  # one model: a plain list
    assert [t.text for t in plain] == ["A", "B"]
    assert plain == load_script(one.save())


# ---------------------------------------------------------------------- a wire that cannot decode


class _Raising(AnthropicWire):
    def decode(self, status: int, headers: Mapping[str, str], body: bytes) -> dict[str, Any] | None:
        raise RuntimeError("boom")


class _NoTurn(AnthropicWire):
    def decode(self, status: int, headers: Mapping[str, str], body: bytes) -> dict[str, Any] | None:
        return {"text": 5}  # not a turn a script can hold


class _RaisingCount(TokenCountWire):
    def decode_side(self, record: Any, status: int, headers: Mapping[str, str], body: bytes) -> dict[str, Any] | None:
        raise RuntimeError("side boom")


class _BadCount(TokenCountWire):
    def decode_side(self, record: Any, status: int, headers: Mapping[str, str], body: bytes) -> dict[str, Any] | None:
        return {"count_tokens": ["many"]}


@pytest.mark.parametrize(
    ("wire", "note"),
    [
        (_Raising(), "the anthropic wire failed decoding its answer (RuntimeError: boom)"),
        (_NoTurn(), "the decoded answer"),
    ],
    ids=["raises", "not-a-turn"],
)
def test_a_wire_that_cannot_decode_leaves_the_app_its_answer_and_says_why(
    tmp_path: Path, wire: AnthropicWire, note: str
) -> None:
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=ScriptTransport(["Hi there"]), wires=[wire])
    assert _ask(anthropic_client(rec, max_retries=0)) == "Hi there"  # the app got its answer all the same
    assert rec.turns == []
    [written] = rec.notes
    assert written.startswith("requests[0] POST /v1/messages")
    assert note in written


@pytest.mark.parametrize(
    ("wire", "note"),
    [
        (_RaisingCount(), "the count_tokens wire failed decoding its answer (RuntimeError: side boom)"),
        (_BadCount(), "the decoded answer"),
    ],
    ids=["raises", "not-side-data"],
)
def test_a_side_wire_that_cannot_decode_leaves_the_app_its_answer_and_says_why(
    tmp_path: Path, wire: TokenCountWire, note: str
) -> None:
    upstream = ScriptTransport([], side={"count_tokens": [42]})
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=upstream, wires=[wire])
    assert anthropic_client(rec).messages.count_tokens(model="m", messages=ASK).input_tokens == 42
    assert rec.side is None
    [written] = rec.notes
    assert "count_tokens" in written
    assert note in written


# ---------------------------------------------------------------------- new_episodes


def test_a_side_answer_forwarded_past_the_end_is_noted_not_appended(tmp_path: Path) -> None:
    """`new_episodes` appends turns; the file's `"$side"` stays as it is, and the answer left out is named."""
    path = tmp_path / "rec.yaml"
    first = RecordingTransport(path, upstream=ScriptTransport(["Hello"], side={"count_tokens": [5]}))
    client = anthropic_client(first)
    assert client.messages.count_tokens(model="m", messages=ASK).input_tokens == 5
    assert _ask(client) == "Hello"
    client.close()
    recorded = path.read_text(encoding="utf-8")

    live = ScriptTransport([], side={"count_tokens": [9]})
    rec = RecordingTransport(path, upstream=Episodes(ScriptTransport(load_script(path)), live))
    client = anthropic_client(rec, max_retries=0)
    counts = [client.messages.count_tokens(model="m", messages=ASK).input_tokens for _ in range(2)]
    assert counts == [5, 9]  # the file's count, then the provider's
    client.close()
    assert path.read_text(encoding="utf-8") == recorded  # no turn ran past the end: nothing appended
    [note] = rec.notes
    assert note.startswith("requests[1] POST /v1/messages/count_tokens")
    assert "not appended: new_episodes appends turns, and leaves the file's side answers ('$side')" in note
    rec.save()
    assert rec.notes == [note]  # saving again says it once


def test_episodes_without_an_upstream_forwards_over_the_network_and_closes_what_it_built(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    provider = ScriptTransport(["Past the end", "Sync past the end", "Async past the end"])
    with provider.serve() as url:
        episodes = Episodes(ScriptTransport(["Replayed"]))
        client = anthropic_client(episodes, base_url=url, max_retries=0)
        assert [_ask(client), _ask(client)] == ["Replayed", "Past the end"]
        assert len(episodes._network) == 1
        episodes.close()
        assert episodes._network == {}

        both = Episodes(ScriptTransport([]))  # one sync client and one async client past its end

        async def main() -> tuple[str, str]:
            sync = _ask(anthropic_client(both, base_url=url, max_retries=0))
            aclient = anthropic_client(both, is_async=True, base_url=url, max_retries=0)
            message = await aclient.messages.create(model="claude-a", max_tokens=10, messages=ASK)
            assert len(both._network) == 2  # a network transport of each kind
            await both.aclose()  # the async one with aclose(), the sync one with close()
            assert both._network == {}
            return sync, message.content[0].text

        assert asyncio.run(main()) == ("Sync past the end", "Async past the end")
    assert len(provider.requests) == 3  # only what ran past the end reached the provider


def test_a_recorder_used_by_sync_and_async_clients_closes_both_network_transports(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    provider = ScriptTransport(["Sync", "Async"])
    rec = RecordingTransport(tmp_path / "rec.json")
    with provider.serve() as url:

        async def main() -> str:
            aclient = anthropic_client(rec, is_async=True, base_url=url, max_retries=0)
            message = await aclient.messages.create(model="claude-a", max_tokens=10, messages=ASK)
            assert len(rec._network) == 2
            await rec.aclose()  # what the async client's close calls
            return str(message.content[0].text)

        assert _ask(anthropic_client(rec, base_url=url, max_retries=0)) == "Sync"
        assert asyncio.run(main()) == "Async"
    assert rec._network == {}
    assert rec.closed
    assert [t.text for t in load_script(rec.path)] == ["Sync", "Async"]  # type: ignore[union-attr]


# ---------------------------------------------------------------------- the recording server's forwarding


def test_rehost_forwards_async_requests_and_answers_what_no_provider_serves_with_a_404() -> None:
    seen = ScriptTransport(lambda r: {"text": r.headers["host"]}, strict=False)

    async def main() -> list[tuple[int, str]]:
        async with ANTHROPIC_HX.AsyncClient(transport=Rehost(seen)) as client:
            served = await client.post(
                "http://127.0.0.1:9/v1/messages", json={"model": "m", "max_tokens": 5, "messages": ASK}
            )
            missing = await client.get("http://127.0.0.1:9/elsewhere")
        return [(served.status_code, served.text), (missing.status_code, missing.text)]

    (status, text), (missing, body) = asyncio.run(main())
    assert status == 200
    assert "api.anthropic.com" in text
    assert missing == 404
    assert "no provider serves this path" in body
    assert len(seen.requests) == 1  # the 404 was not forwarded


def anthropic_client_on(http_client: Any) -> Any:
    return anthropic.Anthropic(api_key="test-key", base_url="http://127.0.0.1:9", http_client=http_client)


def anthropic_async_on(http_client: Any) -> Any:
    return anthropic.AsyncAnthropic(api_key="test-key", base_url="http://127.0.0.1:9", http_client=http_client)


def test_rehost_to_a_base_url_builds_a_network_transport_and_closes_it() -> None:
    pytest.importorskip("uvicorn")
    provider = ScriptTransport(["Sync", "Async"])
    with provider.serve() as url:
        rehost = Rehost(base_url=url + "/")
        with ANTHROPIC_HX.Client(transport=rehost) as client:
            assert _ask(anthropic_client_on(client)) == "Sync"
        arehost = Rehost(base_url=url)

        async def main() -> str:
            async with ANTHROPIC_HX.AsyncClient(transport=arehost) as client:
                message = await anthropic_async_on(client).messages.create(model="m", max_tokens=5, messages=ASK)
                return str(message.content[0].text)

        assert asyncio.run(main()) == "Async"
    assert [r.headers["host"] for r in provider.requests] == [url.removeprefix("http://")] * 2


# ---------------------------------------------------------------------- the record command, drift


def test_the_record_command_reports_a_bad_out_path_with_status_2(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert record_command(tmp_path / "rec.txt", out=out, err=err) == 2
    assert err.getvalue().startswith("wirescript record: path: expected a script file ending in .yaml, .yml or .json")
    assert out.getvalue() == ""  # no base URL: nothing is served


def test_drift_skips_a_refused_request_and_a_turn_without_its_summary(tmp_path: Path) -> None:
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=ScriptTransport(["One", "Two"]))
    client = anthropic_client(rec)
    assert [_ask(client, prompt="first"), _ask(client, prompt="second")] == ["One", "Two"]
    summaries = recorded_summaries(rec.save().read_text(encoding="utf-8"))
    assert sorted(summaries) == [("*", 0), ("*", 1)]

    replay = ScriptTransport(load_script(rec.path))
    replay_client = anthropic_client(replay, max_retries=0)
    assert [_ask(replay_client, prompt=p) for p in ["FIRST", "SECOND"]] == ["One", "Two"]
    with pytest.raises(anthropic.APIStatusError):  # past the end: refused, and no turn to compare with
        _ask(replay_client, prompt="third")
    assert [r.turn_index for r in replay.requests] == [0, 1, None]
    assert len(drift(replay.requests, summaries)) == 2
    [found] = drift(replay.requests, {("*", 1): summaries[("*", 1)]})  # turn 0 has no summary: not compared
    assert "recorded: POST /v1/messages model='claude-a' last=user:'second'" in found
