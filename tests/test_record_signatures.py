"""Record mode keeps a thinking block's signature: the replayed `ThinkingBlock.signature` is the recorded one.

The stand-in provider (a `ScriptTransport`) sends a distinctive signature, not wirescript's `sig_NNNN`
placeholder, so a replay that made up its own would differ.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anthropic
import pytest

from _support import ANTHROPIC_HX, anthropic_client, httpx2
from wirescript import RecordingTransport, ScriptError, ScriptTransport, Turn, load_script, script_json_schema
from wirescript.wires import AnthropicWire

SIGNATURE = "EqQBCkYIBxgCKkDwirescriptRecordedSignature0123456789+/=="
THOUGHT = {"thinking": "Paris first, then Rome.", "thinking_signature": SIGNATURE, "text": "Both sunny."}
ASK = [{"role": "user", "content": "Weather?"}]


def _ask(client: Any, *, stream: bool) -> Any:
    if stream:
        with client.messages.stream(model="claude-test", max_tokens=64, messages=ASK) as events:
            return events.get_final_message()
    return client.messages.create(model="claude-test", max_tokens=64, messages=ASK)


async def _ask_async(client: Any, *, stream: bool) -> Any:
    if stream:
        async with client.messages.stream(model="claude-test", max_tokens=64, messages=ASK) as events:
            return await events.get_final_message()
    return await client.messages.create(model="claude-test", max_tokens=64, messages=ASK)


def _signature(message: Any) -> str:
    [block] = [b for b in message.content if b.type == "thinking"]
    return str(block.signature)


@pytest.mark.parametrize("name", ["rec.yaml", "rec.json"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_recorded_signature_is_the_one_the_replay_gives_back(
    tmp_path: Path, stream: bool, is_async: bool, name: str
) -> None:
    rec = RecordingTransport(tmp_path / name, upstream=ScriptTransport([THOUGHT]))
    replay_path = tmp_path / name
    if is_async:

        async def both() -> tuple[Any, Any]:
            client = anthropic_client(rec, is_async=True)
            live = await _ask_async(client, stream=stream)
            await client.close()  # saves
            replay = ScriptTransport(load_script(replay_path))
            again = await _ask_async(anthropic_client(replay, is_async=True), stream=stream)
            assert replay.problems == []
            return live, again

        live, again = asyncio.run(both())
    else:
        client = anthropic_client(rec)
        live = _ask(client, stream=stream)
        client.close()
        replay = ScriptTransport(load_script(replay_path))
        again = _ask(anthropic_client(replay), stream=stream)
        assert replay.problems == []
    assert _signature(live) == SIGNATURE  # what the provider sent
    assert rec.turns[0].thinking_signature == SIGNATURE
    assert SIGNATURE in replay_path.read_text(encoding="utf-8")
    assert _signature(again) == SIGNATURE
    assert again.content[0].thinking == "Paris first, then Rome."


def test_a_turn_without_a_signature_renders_the_placeholder_as_before() -> None:
    stub = ScriptTransport([{"thinking": "Hm.", "text": "Hi."}, {"thinking": "Hm.", "text": "Hi."}])
    client = anthropic_client(stub)
    assert _signature(_ask(client, stream=False)) == "sig_0000"
    assert _signature(_ask(client, stream=True)) == "sig_0001"


def test_several_thinking_blocks_record_their_text_joined_and_no_signature() -> None:
    """A signature signs one block: the joined text of two blocks has none that fits."""
    message = {
        "type": "message",
        "content": [
            {"type": "thinking", "thinking": "One. ", "signature": "sig-a"},
            {"type": "thinking", "thinking": "Two.", "signature": "sig-b"},
            {"type": "text", "text": "Done."},
        ],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 2},
    }
    import json

    decoded = AnthropicWire().decode(200, {"content-type": "application/json"}, json.dumps(message).encode())
    assert decoded is not None
    assert decoded["thinking"] == "One. Two."
    assert "thinking_signature" not in decoded
    single = {**message, "content": message["content"][1:]}
    decoded = AnthropicWire().decode(200, {"content-type": "application/json"}, json.dumps(single).encode())
    assert decoded is not None
    assert decoded["thinking_signature"] == "sig-b"


def test_a_signature_needs_thinking_and_no_error() -> None:
    with pytest.raises(ScriptError, match="'thinking_signature' signs a thinking block, so the turn needs 'thinking'"):
        ScriptTransport([{"text": "Hi", "thinking_signature": SIGNATURE}])
    with pytest.raises(ScriptError, match="cannot also have 'thinking_signature'"):
        ScriptTransport([{"error": {"status": 500}, "thinking_signature": SIGNATURE}])
    assert Turn(thinking="", thinking_signature=SIGNATURE).thinking == ""  # omitted thinking, signature only
    turn = script_json_schema()["$defs"]["Turn"]["properties"]["thinking_signature"]
    assert "signature" in turn["description"]


@pytest.mark.skipif(httpx2 is None, reason="AnthropicBedrock runs on httpx2 (anthropic >= 1)")
@pytest.mark.parametrize("stream", [False, True], ids=["invoke", "invoke-stream"])
def test_bedrock_hosted_anthropic_sends_the_turns_signature(stream: bool) -> None:
    pytest.importorskip("botocore", reason="AnthropicBedrock signs its requests with botocore (the bedrock group)")
    stub = ScriptTransport([THOUGHT])
    client = anthropic.AnthropicBedrock(
        aws_access_key="AKIDTEST",
        aws_secret_key="test-secret",
        aws_region="us-east-1",
        http_client=ANTHROPIC_HX.Client(transport=stub),
    )
    message = _ask(client, stream=stream)
    assert _signature(message) == SIGNATURE
    assert stub.problems == []
