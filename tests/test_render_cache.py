"""The frames an Anthropic answer keeps encoded between answers still carry each answer's own values.

`message_start` is kept around its id by model and usage, `message_delta` by stop reason and output
count, a delta's data by block index and type: a second answer that differs in any of them, or
only in its id, must not get the first one's bytes.
"""

from __future__ import annotations

from _support import anthropic_client
from wirescript import ScriptTransport


def test_each_answer_streams_its_own_id_model_usage_and_stop() -> None:
    turns = [
        {"text": "one"},
        {"text": "one"},  # the same answer again: only the id differs
        {"text": "a longer answer", "usage": {"input_tokens": 7, "output_tokens": 3, "cache_read_input_tokens": 2}},
        {"text": "cut", "stop_reason": "max_tokens"},
    ]
    stub = ScriptTransport(turns)
    client = anthropic_client(stub)
    finals = []
    for model in ("claude-a", "claude-a", "claude-b", "claude-a"):
        with client.messages.stream(model=model, max_tokens=64, messages=[{"role": "user", "content": "hi"}]) as s:
            finals.append(s.get_final_message())
    assert [m.id for m in finals] == ["msg_0000", "msg_0001", "msg_0002", "msg_0003"]
    assert [m.model for m in finals] == ["claude-a", "claude-a", "claude-b", "claude-a"]
    assert [m.content[0].text for m in finals] == ["one", "one", "a longer answer", "cut"]  # type: ignore[union-attr]
    assert [m.stop_reason for m in finals] == ["end_turn", "end_turn", "end_turn", "max_tokens"]
    assert (finals[2].usage.input_tokens, finals[2].usage.output_tokens) == (7, 3)
    assert finals[2].usage.cache_read_input_tokens == 2
    assert finals[0].usage.cache_read_input_tokens == 0
    assert finals[0].usage.input_tokens != 7
    assert stub.problems == []
