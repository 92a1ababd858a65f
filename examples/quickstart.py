"""A real anthropic SDK tool loop against a wirescript script, printing what the wire saw.

Run it with `uv run examples/quickstart.py`. No network, no API key: the SDK talks to a
ScriptTransport, which serves the scripted turns and records every request.
"""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2

from wirescript import ScriptTransport


def create_card(title: str) -> str:
    """The app's tool: file a card on a board."""
    return f"card #7 created: {title!r}"


def run_agent(client: anthropic.Anthropic, question: str) -> str:
    """A small app: a hand-written tool loop on the streaming API."""
    tools: list[Any] = [
        {
            "name": "create_card",
            "description": "File a card on the team board.",
            "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
        }
    ]
    messages: list[Any] = [{"role": "user", "content": question}]
    while True:
        with client.messages.stream(
            model="claude-sonnet-5", max_tokens=512, system="You file cards.", messages=messages, tools=tools
        ) as stream:
            reply = stream.get_final_message()
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        results = [
            {"type": "tool_result", "tool_use_id": block.id, "content": create_card(**block.input)}
            for block in reply.content
            if block.type == "tool_use"
        ]
        messages.append({"role": "user", "content": results})


def main() -> None:
    """Script two turns, drive the app unmodified, then look at the evidence."""
    stub = ScriptTransport(
        [
            {"text": "Filing a card.", "tool": {"name": "create_card", "input": {"title": "Fix the login bug"}}},
            {"text": "Done: card #7 is on the board."},
        ]
    )
    client = anthropic.Anthropic(api_key="test-key", http_client=httpx2.Client(transport=stub))

    answer = run_agent(client, "Please file a card for the login bug.")
    print(f"app answered: {answer!r}\n")

    for request in stub.requests:
        print(request.summary())
        print(f"  stream={request.stream} tools offered={request.tool_names} system={request.system!r}")
        for result in request.tool_results:
            print(f"  tool_result for {result['tool_use_id']}: {result['content']!r}")
    print(f"\noverflow={stub.overflow} (no unscripted model call), unused turns={len(stub.pending)}")

    assert answer == "Done: card #7 is on the board."
    assert stub.requests[1].tool_results[0]["content"] == "card #7 created: 'Fix the login bug'"
    assert stub.overflow == 0
    stub.check()


if __name__ == "__main__":
    main()
