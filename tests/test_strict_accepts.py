"""No false positives: requests the real APIs accept, sent through the real SDKs to a strict stub, are served.

The cases are the shapes an outside check found valid (providers' docs and guides, the SDKs' examples and
replay tests, cookbooks) and that lie near a rule's line: cache breakpoints spread over every place they
may sit, split assistant turns, server tool and MCP passback, interleaved and redacted thinking, thinking
toggled mid-loop (the docs' graceful degradation), prefills where models take them, Vertex AI, beta and
Azure endpoints, legacy functions, `previous_response_id` chains, item references, conversations, stored
prompts, Gemini's two spellings, ids and roles, Bedrock ARNs, prompt management, cache points and
reasoning passback. Then the requests the SDKs' own helpers build (parse, stream, strict tools).
Frameworks (pydantic-ai, openai-agents) are in `agents/test_strict_agents.py`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anthropic
import openai
import pytest
from pydantic import BaseModel

from _support import anthropic_client, httpx2, no_aws_environment, openai_client
from wirescript import ScriptTransport

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

OK = "Served."
ANY_OK = {"text": "Served.", "unchecked": True}
"""What a request's tool choice or output format may forbid (a text, not JSON): these tests are of requests."""
USER = {"role": "user", "content": "Weather in Paris?"}
TOOL = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
USE = {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_01", "content": "15 degrees"}
SIG = "EqQBCkgIARABGAIiQL"
SONNET45 = "claude-sonnet-4-5-20250929"
CACHED = {"type": "ephemeral"}
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def messages_post(
    stub: ScriptTransport, body: dict[str, Any], *, version: str | None = None, betas: str | None = None
) -> Any:
    """A Messages body as it is, through the anthropic SDK's own request path."""
    headers = {"anthropic-version": version} if version else {}
    if betas:
        headers["anthropic-beta"] = betas
    client = anthropic_client(stub, max_retries=0)
    return client.post("/v1/messages", body=body, cast_to=anthropic.types.Message, options={"headers": headers})


def claude(body: dict[str, Any], **options: Any) -> Callable[[ScriptTransport], Any]:
    return lambda stub: messages_post(stub, {"model": SONNET45, "max_tokens": 1024, **body}, **options)


def chat_post(stub: ScriptTransport, body: dict[str, Any]) -> Any:
    client = openai_client(stub, max_retries=0)
    return client.post("/chat/completions", body={"model": "gpt-4.1", **body}, cast_to=openai.types.chat.ChatCompletion)


def chat(body: dict[str, Any]) -> Callable[[ScriptTransport], Any]:
    return lambda stub: chat_post(stub, body)


def responses_post(stub: ScriptTransport, body: dict[str, Any]) -> Any:
    client = openai_client(stub, max_retries=0)
    return client.post("/responses", body=body, cast_to=openai.types.responses.Response)


def responses(body: dict[str, Any]) -> Callable[[ScriptTransport], Any]:
    return lambda stub: responses_post(stub, {"model": "gpt-4.1", **body})


VALID: dict[str, Callable[[ScriptTransport], Any]] = {
    # Anthropic: thinking toggled mid-loop (the docs' graceful degradation: accepted, thinking disabled)
    "thinking-toggled-on-mid-loop": claude(
        {
            "max_tokens": 16000,
            "thinking": {"type": "enabled", "budget_tokens": 4000},
            "tools": [TOOL],
            "messages": [USER, {"role": "assistant", "content": [USE]}, {"role": "user", "content": [RESULT]}],
        }
    ),
    "thinking-toggled-off-prefill": claude(
        {
            "thinking": {"type": "disabled"},
            "messages": [
                {"role": "user", "content": "Continue."},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "...", "signature": SIG},
                        {"type": "text", "text": "The answer is"},
                    ],
                },
            ],
        }
    ),
    "four-cache-breakpoints-everywhere": claude(
        {
            "tools": [{**TOOL, "cache_control": CACHED}],
            "system": [{"type": "text", "text": "Be brief.", "cache_control": CACHED}],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                            "cache_control": CACHED,
                        },
                        {"type": "text", "text": "What is this?"},
                    ],
                },
                {"role": "assistant", "content": [USE]},
                {
                    "role": "user",
                    "content": [
                        {**RESULT, "content": [{"type": "text", "text": "15 degrees", "cache_control": CACHED}]}
                    ],
                },
            ],
        }
    ),
    "split-assistant-turns": claude(
        {
            "messages": [
                USER,
                {"role": "assistant", "content": "Part one."},
                {"role": "assistant", "content": "Part two."},
                {"role": "user", "content": "Go on."},
            ]
        }
    ),
    "results-then-more-user-messages": claude(
        {
            "tools": [TOOL],
            "messages": [
                USER,
                {"role": "assistant", "content": [USE]},
                {"role": "user", "content": [RESULT, {"type": "text", "text": "Also this."}]},
                {"role": "user", "content": "And in Rome?"},
            ],
        }
    ),
    "server-tool-passback": claude(
        {
            "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}],
            "messages": [
                {"role": "user", "content": "News today?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Searching."},
                        {
                            "type": "server_tool_use",
                            "id": "srvtoolu_1",
                            "name": "web_search",
                            "input": {"query": "news"},
                        },
                        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                        {"type": "text", "text": "Nothing yet."},
                    ],
                },
                {"role": "user", "content": "Thanks."},
            ],
        }
    ),
    "mcp-passback": claude(
        {
            "mcp_servers": [{"type": "url", "url": "https://mcp.example.com/sse", "name": "example"}],
            "messages": [
                USER,
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "mcp_tool_use",
                            "id": "mcptoolu_1",
                            "name": "echo",
                            "server_name": "example",
                            "input": {},
                        },
                        {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": False, "content": []},
                        {"type": "text", "text": "Done."},
                    ],
                },
                {"role": "user", "content": "Thanks."},
            ],
        },
        betas="mcp-client-2025-04-04",
    ),
    "interleaved-thinking": claude(
        {
            "max_tokens": 2048,
            "thinking": {"type": "enabled", "budget_tokens": 8000},  # above max_tokens: interleaved thinking allows it
            "tools": [TOOL],
            "messages": [
                USER,
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "Look.", "signature": SIG}, USE]},
                {"role": "user", "content": [RESULT]},
                {"role": "assistant", "content": [{**USE, "id": "toolu_02"}]},
                {"role": "user", "content": [{**RESULT, "tool_use_id": "toolu_02"}]},
            ],
        },
        betas="interleaved-thinking-2025-05-14",
    ),
    "redacted-thinking": claude(
        {
            "max_tokens": 2048,
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "tools": [TOOL],
            "messages": [
                USER,
                {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "EmwKAhgB"}, USE]},
                {"role": "user", "content": [RESULT]},
            ],
        }
    ),
    "earlier-turns-thinking-stripped": claude(
        {
            "max_tokens": 2048,
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "tools": [TOOL],
            "messages": [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello."},
                USER,
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "Look.", "signature": SIG}, USE]},
                {"role": "user", "content": [RESULT]},
            ],
        }
    ),
    "pause-turn-continuation-on-a-model-without-prefills": claude(
        {
            "model": "claude-opus-4-6",
            "tools": [{"type": "web_search_20250305", "name": "web_search"}],
            "messages": [
                {"role": "user", "content": "Research this."},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Searching."},
                        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}},
                    ],
                },
            ],
        }
    ),
    "prefill-where-the-model-takes-one": claude({"messages": [USER, {"role": "assistant", "content": "{"}]}),
    "mid-conversation-system-message": claude(
        {"model": "claude-opus-4-8", "messages": [USER, {"role": "system", "content": "Answer in French."}]}
    ),
    "temperature-and-top-k-on-api-version-2023-06-01": claude(
        {"temperature": 0.2, "top_k": 5, "messages": [USER]}, version="2023-06-01"
    ),
    "temperature-and-top-p-on-a-model-that-takes-both": claude(
        {"model": "claude-3-7-sonnet-20250219", "temperature": 0.2, "top_p": 0.9, "messages": [USER]},
        version="2023-06-01",
    ),
    "max-tokens-0-prewarms-the-cache": claude({"max_tokens": 0, "messages": [USER]}),
    "max-tokens-at-the-model-limit": claude({"model": "claude-opus-4-6", "max_tokens": 128_000, "messages": [USER]}),
    "max-tokens-above-the-limit-with-an-output-beta": claude(
        {"model": "claude-3-7-sonnet-20250219", "max_tokens": 128_000, "messages": [USER]},
        betas="output-128k-2025-02-19",
    ),
    "forced-tool-choice-without-thinking": claude(
        {"tools": [TOOL], "tool_choice": {"type": "tool", "name": "get_weather"}, "messages": [USER]}
    ),
    "adaptive-thinking": claude(
        {"model": "claude-opus-4-6", "max_tokens": 16000, "thinking": {"type": "adaptive"}, "messages": [USER]}
    ),
    "server-tool-without-input-schema": claude(
        {"tools": [{"type": "bash_20250124", "name": "bash"}, TOOL], "messages": [USER]}
    ),
    "all-image-media-types": claude(
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        *(
                            {"type": "image", "source": {"type": "base64", "media_type": kind, "data": PNG}}
                            for kind in ("image/jpeg", "image/png", "image/gif", "image/webp")
                        ),
                        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.jpg"}},
                        {"type": "text", "text": "Compare."},
                    ],
                }
            ]
        }
    ),
    "beta-endpoint": lambda stub: anthropic_client(stub).beta.messages.create(
        model=SONNET45, max_tokens=64, messages=[USER], betas=["context-management-2025-06-27"]
    ),
    # OpenAI Chat Completions
    "legacy-functions-and-role-function": chat(
        {
            "functions": [{"name": "get_weather", "parameters": {"type": "object"}}],
            "messages": [
                USER,
                {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": "{}"}},
                {"role": "function", "name": "get_weather", "content": "15 degrees"},
            ],
        }
    ),
    "json-object-with-json-in-the-system-message": chat(
        {
            "response_format": {"type": "json_object"},
            "messages": [{"role": "system", "content": "Reply with a JSON object."}, USER],
        }
    ),
    "tool-options-with-tools": chat(
        {
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
            "tool_choice": "required",
            "parallel_tool_calls": False,
            "messages": [USER],
        }
    ),
    "non-strict-json-schema-without-additional-properties": chat(
        {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "card", "schema": {"type": "object", "properties": {"a": {}}}},
            },
            "messages": [USER],
        }
    ),
    "strict-schema-with-nested-objects-and-defs": chat(
        {
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": "card",
                    "strict": True,
                    "schema": {
                        "type": "object",
                        "properties": {"tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}}},
                        "required": ["tags"],
                        "additionalProperties": False,
                        "$defs": {
                            "tag": {
                                "type": "object",
                                "properties": {"name": {"type": ["string", "null"]}},
                                "required": ["name"],
                                "additionalProperties": False,
                            }
                        },
                    },
                },
            },
            "messages": [USER],
        }
    ),
    "reasoning-model-with-max-completion-tokens": chat(
        {"model": "o3", "max_completion_tokens": 2000, "reasoning_effort": "low", "temperature": 1, "messages": [USER]}
    ),
    "sampling-options-in-range": chat(
        {
            "messages": [{"role": "developer", "content": "Be brief."}, USER],
            "temperature": 2,
            "presence_penalty": -2,
            "frequency_penalty": 2,
            "logprobs": True,
            "top_logprobs": 20,
            "n": 2,
            "stop": ["\n"],
        }
    ),
    # OpenAI Responses
    "responses-stored-prompt-without-model": lambda stub: responses_post(
        stub, {"prompt": {"id": "pmpt_123", "variables": {"city": "Paris"}}}
    ),
    "responses-conversation": responses({"conversation": "conv_123", "input": "And in Rome?"}),
    "responses-item-reference": responses(
        {
            "input": [
                USER,
                {"type": "item_reference", "id": "fc_123"},
                {"type": "function_call_output", "call_id": "call_123", "output": "15 degrees"},
            ]
        }
    ),
    "responses-custom-tool-call-passback": responses(
        {
            "tools": [{"type": "custom", "name": "code_exec", "description": "Runs code."}],
            "input": [
                USER,
                {"type": "custom_tool_call", "call_id": "call_1", "name": "code_exec", "input": "print(1)"},
                {"type": "custom_tool_call_output", "call_id": "call_1", "output": "1"},
            ],
        }
    ),
    "responses-reasoning-passback-stateless": responses(
        {
            "store": False,
            "include": ["reasoning.encrypted_content"],
            "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}],
            "input": [
                USER,
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"},
                {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "15 degrees"},
            ],
        }
    ),
    "responses-non-strict-function-and-built-in-tools": responses(
        {
            "tools": [
                {
                    "type": "function",
                    "name": "loose",
                    "strict": False,
                    "parameters": {"type": "object", "properties": {}},
                },
                {"type": "web_search"},
            ],
            "temperature": 2,
            "max_output_tokens": 16,
            "input": "Hi",
        }
    ),
    "responses-chat-fields-it-shares": responses({"input": "Hi", "text": {"format": {"type": "json_object"}}}),
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_a_valid_request_is_served(name: str) -> None:
    stub = ScriptTransport([ANY_OK])
    VALID[name](stub)
    assert stub.problems == [], stub.problems
    assert stub.requests[0].turn_index == 0


# --- Anthropic on its clouds, Azure OpenAI ------------------------------------------------------------------


@pytest.mark.skipif(httpx2 is None, reason="anthropic >= 1 runs on httpx2")
def test_vertex_ai_and_azure_are_served() -> None:
    from test_clouds import azure, vertex

    stub = ScriptTransport([OK, OK])
    vertex(stub).messages.create(model="claude-sonnet-4-5@20250929", max_tokens=64, messages=[USER])
    azure(stub).chat.completions.create(model="my-deployment", messages=[USER])
    assert stub.problems == []


def test_a_three_step_previous_response_id_chain_with_parallel_outputs_in_any_order_is_served() -> None:
    two = {"tools": [{"name": "get_weather", "input": {"city": "Paris"}}, {"name": "get_weather", "input": {}}]}
    stub = ScriptTransport([two, two, OK])
    client = openai_client(stub)
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}]
    response = client.responses.create(model="gpt-4.1", input="Weather?", tools=tools, background=True)
    while response.status in ("queued", "in_progress"):  # a background response runs as it is polled
        response = client.responses.retrieve(response.id)
    for turn in range(2):
        calls = [item for item in response.output if item.type == "function_call"]
        outputs = [{"type": "function_call_output", "call_id": c.call_id, "output": "15"} for c in calls]
        if turn == 1:
            outputs.reverse()  # the outputs in any order
        with client.responses.stream(
            model="gpt-4.1", input=outputs, tools=tools, previous_response_id=response.id
        ) as streamed:
            response = streamed.get_final_response()
    assert response.output_text == OK
    assert stub.problems == []


# --- Gemini: both spellings, ids, the legacy role, computer use, empty thought parts ---------------------


def test_gemini_valid_contents_are_served() -> None:
    pytest.importorskip("google.genai")
    from google.genai import types

    from test_gemini import gemini_client

    stub = ScriptTransport([OK, OK, OK])
    client = gemini_client(stub)
    call = {"functionCall": {"id": "fc_1", "name": "get_weather", "args": {"city": "Paris"}}}
    contents = [
        {"role": "user", "parts": [{"text": "Weather?"}]},
        {"role": "model", "parts": [{"text": "", "thought": True}, call]},
        {
            "role": "function",  # the legacy role of function responses
            "parts": [{"function_response": {"id": "fc_1", "name": "get_weather", "response": {"output": "15"}}}],
        },
    ]
    config = types.GenerateContentConfig(
        temperature=2.0,
        response_mime_type="text/x.enum",
        response_schema={"type": "STRING", "enum": ["sunny", "rainy"]},
        tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name="mcp:get.weather-2")])],
    )
    client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)
    computer = {
        "function_response": {
            "name": "click",
            "response": {"url": "https://example.com"},
            "parts": [{"inline_data": {"mime_type": "image/png", "data": PNG}}],
        }
    }
    client.models.generate_content(
        model="gemini-2.5-computer-use-preview",
        contents=[
            {"role": "user", "parts": [{"text": "Click it."}]},
            {"role": "model", "parts": [{"function_call": {"name": "click", "args": {"x": 1}}}]},
            {"role": "user", "parts": [computer]},
        ],
    )
    client.models.generate_content(model="gemini-2.5-flash", contents="Hi")
    assert stub.problems == []


# --- Bedrock: ARNs, prompt management, cache points, reasoning passback, Claude's invoke body -------------


def test_bedrock_valid_requests_are_served(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    boto3 = pytest.importorskip("boto3")
    no_aws_environment(monkeypatch, tmp_path)
    stub = ScriptTransport([OK] * 4)
    bedrock = stub.attach(
        boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="AKID", aws_secret_access_key="x")
    )
    profile = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    cache = {"cachePoint": {"type": "default"}}
    bedrock.converse(
        modelId=profile,
        system=[{"text": "Be brief."}, cache],
        messages=[
            {"role": "user", "content": [{"text": "Weather?"}, cache]},
            {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "Look.", "signature": "sig"}}},
                    {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {}}},
                ],
            },
            {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "15"}]}}]},
        ],
        toolConfig={"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {}}}}, cache]},
        inferenceConfig={"temperature": 1, "topP": 1, "maxTokens": 512},
        additionalModelRequestFields={"thinking": {"type": "enabled", "budget_tokens": 1024}},
    )
    prompt = "arn:aws:bedrock:us-east-1:123456789012:prompt/PROMPT12345:1"
    bedrock.converse(modelId=prompt, promptVariables={"city": {"text": "Paris"}})  # prompt management: no messages
    body = {"anthropic_version": "bedrock-2023-05-31", "anthropic_beta": ["token-efficient-tools-2025-02-19"]}
    body |= {"max_tokens": 64, "messages": [USER], "temperature": 0.5}
    bedrock.invoke_model(modelId="anthropic.claude-sonnet-4-5-20250929-v1:0", body=json.dumps(body))
    bedrock.invoke_model(modelId="amazon.titan-text-express-v1", body=json.dumps({"inputText": "Hi"}))  # not Claude's
    assert stub.problems == []


# Other models' own InvokeModel bodies with `messages` (AWS's model-parameters pages): no Claude rule reads them.
OTHER_INVOKE_BODIES = {
    "us.amazon.nova-lite-v1:0": {
        "schemaVersion": "messages-v1",
        "messages": [{"role": "user", "content": [{"text": "Hi"}]}],
        "inferenceConfig": {"maxTokens": 64},
    },
    "mistral.mistral-large-2407-v1:0": {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 64},
    "openai.gpt-oss-120b-1:0": {
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        "max_completion_tokens": 64,
        "stream": False,
    },
    "meta.llama3-70b-instruct-v1:0": {"prompt": "Hi", "max_gen_len": 64},
}


@pytest.mark.parametrize("model", list(OTHER_INVOKE_BODIES))
def test_bedrock_other_models_invoke_bodies_are_not_read_as_claudes(
    model: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    boto3 = pytest.importorskip("boto3")
    no_aws_environment(monkeypatch, tmp_path)
    stub = ScriptTransport([OK])
    bedrock = stub.attach(
        boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="AKID", aws_secret_access_key="x")
    )
    bedrock.invoke_model(modelId=model, body=json.dumps(OTHER_INVOKE_BODIES[model]))
    assert stub.problems == []


# --- what the SDKs' own helpers build ------------------------------------------------------------------------


class Card(BaseModel):
    title: str
    tags: list[str]


CARD = '{"title": "x", "tags": ["a"]}'


def test_anthropic_messages_parse_and_stream_are_served() -> None:
    stub = ScriptTransport([{"text": CARD}, {"text": "Hi", "tool": {"name": "get_weather", "input": {}}}])
    client = anthropic_client(stub)
    parsed = client.messages.parse(model=SONNET45, max_tokens=512, messages=[USER], output_format=Card)
    assert parsed.parsed_output == Card(title="x", tags=["a"])
    with client.messages.stream(model=SONNET45, max_tokens=512, messages=[USER], tools=[TOOL]) as stream:
        stream.get_final_message()
    assert stub.problems == []


def test_openai_chat_parse_stream_and_strict_pydantic_tools_are_served() -> None:
    class Weather(BaseModel):
        city: str
        unit: str | None

    stub = ScriptTransport(
        [{"text": CARD}, {"text": CARD}, {"tool": {"name": "Weather", "input": {"city": "P", "unit": None}}}]
    )
    client = openai_client(stub)
    parsed = client.chat.completions.parse(model="gpt-4.1", messages=[USER], response_format=Card)
    assert parsed.choices[0].message.parsed == Card(title="x", tags=["a"])
    with client.chat.completions.stream(model="gpt-4.1", messages=[USER], response_format=Card) as stream:
        assert stream.get_final_completion().choices[0].message.parsed == Card(title="x", tags=["a"])
    tools = [openai.pydantic_function_tool(Weather)]  # strict: true, with the SDK's own strict schema
    client.chat.completions.parse(model="gpt-4.1", messages=[USER], tools=tools)
    assert stub.requests[2].body["tools"][0]["function"]["strict"] is True
    assert stub.problems == []


def test_openai_responses_parse_and_stream_are_served() -> None:
    stub = ScriptTransport([{"text": CARD}, {"text": "Hi", "tool": {"name": "get_weather", "input": {}}}])
    client = openai_client(stub)
    parsed = client.responses.parse(model="gpt-4.1", input="A card", text_format=Card)
    assert parsed.output_parsed == Card(title="x", tags=["a"])
    assert stub.requests[0].body["text"]["format"]["strict"] is True
    tools = [
        {
            "type": "function",
            "name": "get_weather",
            "strict": True,
            "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
        }
    ]
    with client.responses.stream(model="gpt-4.1", input="Weather?", tools=tools) as stream:
        stream.get_final_response()
    assert stub.problems == []
