"""A tiny agent on the real anthropic SDK, configured only by the environment.

It reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY like any app would, asks the question given as
argv[1], runs the tools the model calls (streamed answers, the SDK's own accumulator) until the
model stops, and prints the final text. An API error is printed as `error: <Class>: <message>`
with exit status 1.
"""

from __future__ import annotations

import json
import sys

import anthropic

TOOLS = [
    {
        "name": "get_weather",
        "description": "The weather in a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]


def get_weather(city: str) -> str:
    return json.dumps({"city": city, "sky": "sunny", "celsius": 21})


def main() -> int:
    # Configured by the environment only, like a deployed app: the test points the base-URL variable at
    # wirescript's loopback server.
    client = anthropic.Anthropic(max_retries=0)  # wirescript: allow[WS103]
    messages: list[dict[str, object]] = [{"role": "user", "content": sys.argv[1]}]
    try:
        for _ in range(5):
            with client.messages.stream(
                model="claude-test", max_tokens=256, system="Be brief.", tools=TOOLS, messages=messages
            ) as stream:
                message = stream.get_final_message()
            messages.append(
                {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]}
            )
            calls = [b for b in message.content if b.type == "tool_use"]
            if not calls:
                print("".join(b.text for b in message.content if b.type == "text"), flush=True)
                return 0
            results = [
                {"type": "tool_result", "tool_use_id": c.id, "content": get_weather(**c.input)}  # type: ignore[arg-type]
                for c in calls
            ]
            messages.append({"role": "user", "content": results})
    except anthropic.APIError as exc:
        print(f"error: {type(exc).__name__}: {exc}", flush=True)
        return 1
    print("error: the model never stopped calling tools", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
