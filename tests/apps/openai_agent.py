"""A tiny agent on the real openai SDK (Chat Completions), configured only by the environment.

It reads OPENAI_BASE_URL and OPENAI_API_KEY like any app would, asks the question given as
argv[1], runs the tools the model calls until it stops, and prints the final text.
"""

from __future__ import annotations

import json
import sys

import openai

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def get_weather(city: str) -> str:
    return json.dumps({"city": city, "sky": "sunny", "celsius": 21})


def main() -> int:
    # Configured by the environment only, like a deployed app: the test points the base-URL variable at
    # wirescript's loopback server.
    client = openai.OpenAI(max_retries=0)  # wirescript: allow[WS103]
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": sys.argv[1]},
    ]
    try:
        for _ in range(5):
            reply = client.chat.completions.create(model="gpt-test", tools=TOOLS, messages=messages)  # type: ignore[arg-type]
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                print(message.content, flush=True)
                return 0
            for call in message.tool_calls:
                result = get_weather(**json.loads(call.function.arguments))  # type: ignore[union-attr]
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    except openai.APIError as exc:
        print(f"error: {type(exc).__name__}: {exc}", flush=True)
        return 1
    print("error: the model never stopped calling tools", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
