"""OpenAI's Conversations API and the tracing ingest: turnless, recorded, with per-stub state."""

from __future__ import annotations

from typing import Any

import pytest

from _support import openai_client
from wirescript import ScriptTransport
from wirescript.wires import OpenAIConversationsWire, OpenAIResponsesWire

openai = pytest.importorskip("openai")


def client(stub: ScriptTransport) -> Any:
    return openai_client(stub, max_retries=0)


def test_items_created_are_listed_back_as_the_api_stores_them() -> None:
    stub = ScriptTransport([])
    api = client(stub)
    conversation = api.conversations.create(items=[{"role": "user", "content": "Hi"}], metadata={"topic": "demo"})
    assert (conversation.object, conversation.metadata) == ("conversation", {"topic": "demo"})
    added = api.conversations.items.create(
        conversation.id,
        items=[
            {"type": "message", "role": "assistant", "content": "Hello."},
            {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
        ],
    )
    assert [item.type for item in added.data] == ["message", "function_call", "function_call_output"]
    assert added.first_id == added.data[0].id
    assert added.last_id == added.data[-1].id
    listed = list(api.conversations.items.list(conversation.id, order="asc"))
    assert [item.id for item in listed] == [listed[0].id, *(item.id for item in added.data)]
    first = listed[0]
    assert (first.type, first.role, first.content[0].type, first.content[0].text) == (
        "message",
        "user",
        "input_text",
        "Hi",
    )
    assert listed[1].content[0].type == "output_text"  # the assistant's text
    assert all(item.status == "completed" for item in listed)
    assert [item.id for item in api.conversations.items.list(conversation.id)] == [i.id for i in listed[::-1]]
    assert stub.pending == []
    assert stub.problems == []
    assert {r.provider for r in stub.requests} == {"openai_conversations"}
    assert stub.requests[1].messages[0]["content"] == "Hello."  # a record's messages: the items it added


def test_listing_pages_with_limit_and_after() -> None:
    stub = ScriptTransport([])
    api = client(stub)
    conversation = api.conversations.create(items=[{"role": "user", "content": str(n)} for n in range(5)])
    page = api.conversations.items.list(conversation.id, order="asc", limit=2)
    assert [item.content[0].text for item in page.data] == ["0", "1"]
    assert page.has_more is True
    every = [item.content[0].text for item in api.conversations.items.list(conversation.id, order="asc", limit=2)]
    assert every == ["0", "1", "2", "3", "4"]  # the SDK's auto-paging follows `after`
    assert len([r for r in stub.requests if r.method == "GET"]) == 4  # one page, then three to page through


def test_retrieve_update_delete_and_the_apis_404() -> None:
    stub = ScriptTransport([])
    api = client(stub)
    conversation = api.conversations.create()
    assert api.conversations.retrieve(conversation.id).id == conversation.id
    assert api.conversations.update(conversation.id, metadata={"k": "v"}).metadata == {"k": "v"}
    [item] = api.conversations.items.create(conversation.id, items=[{"role": "user", "content": "x"}]).data
    assert api.conversations.items.retrieve(item.id, conversation_id=conversation.id).id == item.id
    assert api.conversations.items.delete(item.id, conversation_id=conversation.id).id == conversation.id
    assert list(api.conversations.items.list(conversation.id)) == []
    with pytest.raises(openai.NotFoundError, match=f"Item with id '{item.id}' not found"):
        api.conversations.items.retrieve(item.id, conversation_id=conversation.id)
    deleted = api.conversations.delete(conversation.id)
    assert (deleted.deleted, deleted.object) == (True, "conversation.deleted")
    with pytest.raises(openai.NotFoundError, match=f"Conversation with id '{conversation.id}' not found"):
        api.conversations.retrieve(conversation.id)
    assert stub.problems == []  # the API's own answers, not the stub's refusals


def test_a_response_with_conversation_reads_it_and_adds_its_input_and_output() -> None:
    stub = ScriptTransport(["Blue.", "Still blue."])
    api = client(stub)
    conversation = api.conversations.create(items=[{"role": "user", "content": "My colour is blue."}])
    reply = api.responses.create(model="gpt-5", conversation=conversation.id, input="What colour?")
    assert reply.output_text == "Blue."
    assert reply.conversation.id == conversation.id
    asked = stub.requests[1]
    assert [
        m["content"][0]["text"] if isinstance(m["content"], list) else m["content"] for m in asked.conversation
    ] == [
        "My colour is blue.",
        "What colour?",
    ]
    items = list(api.conversations.items.list(conversation.id, order="asc"))
    assert [item.role for item in items] == ["user", "user", "assistant"]
    assert items[-1].id == reply.output[0].id  # the response's own output item
    again = api.responses.create(model="gpt-5", conversation={"id": conversation.id}, input="And now?")
    assert again.output_text == "Still blue."
    assert len(stub.requests[-1].conversation) == 4  # three stored items, then the new input


def test_the_conversations_follow_a_responses_wire_given_in_its_place() -> None:
    mine = OpenAIResponsesWire()
    stub = ScriptTransport(["ok"], wires=[mine])
    [conversations] = [w for w in stub.wires if isinstance(w, OpenAIConversationsWire)]
    assert conversations.store is mine.conversations


def test_the_tracing_ingest_is_answered_empty_and_recorded() -> None:
    stub = ScriptTransport([])
    hx = pytest.importorskip("httpx2")
    with hx.Client(transport=stub) as http:
        response = http.post(
            "https://api.openai.com/v1/traces/ingest",
            json={"data": [{"object": "trace", "id": "trace_1", "workflow_name": "w"}]},
            headers={"Authorization": "Bearer test-key", "OpenAI-Beta": "traces=v1"},
        )
    assert (response.status_code, response.json()) == (200, {})
    [record] = stub.requests
    assert (record.provider, record.messages) == (
        "openai_traces",
        [{"object": "trace", "id": "trace_1", "workflow_name": "w"}],
    )
    assert stub.problems == []
