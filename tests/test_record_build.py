"""A record is built without `model_construct`'s loop over its fields; it must be the record that loop builds.

The stub sets a record's `__dict__` and pydantic's three slots directly (what `model_construct`
does for a model of no aliases, no `model_post_init`, no extra and no private attributes), and
sets the fields it fills in later straight in `__dict__`. These tests drive the real SDKs over
the stub and compare every record, field for field and in order, with the one `model_construct`
builds from the same values, after the stub has numbered and answered it.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

import anthropic
import openai
import pydantic
import pytest
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr

from wirescript import ScriptTransport
from wirescript._core import record as _record
from wirescript.recorded import _EMPTY_LIST, RecordedRequest

httpx2 = pytest.importorskip("httpx2")  # the legacy run (anthropic 0.x, openai 2.x on httpx) has none

FIELDS = list(RecordedRequest.model_fields)

TOOLS = [{"name": "save", "description": "Save.", "input_schema": {"type": "object", "properties": {}}}]


def _rebuilt(record: RecordedRequest) -> RecordedRequest:
    return RecordedRequest.model_construct(set(FIELDS), **record.__dict__)


def _assert_built_alike(record: RecordedRequest) -> None:
    rebuilt = _rebuilt(record)
    assert list(record.__dict__) == FIELDS  # every field, in the declared order
    assert record.__dict__ == rebuilt.__dict__
    assert record.model_fields_set == rebuilt.model_fields_set == set(FIELDS)
    assert record.__pydantic_extra__ is None
    assert rebuilt.__pydantic_extra__ is None
    assert record.__pydantic_private__ is None
    assert rebuilt.__pydantic_private__ is None
    assert record == rebuilt
    assert repr(record) == repr(rebuilt)
    assert record.model_dump() == rebuilt.model_dump()
    assert record.model_dump_json() == rebuilt.model_dump_json()
    assert RecordedRequest.model_validate_json(record.model_dump_json()) == RecordedRequest.model_validate_json(
        rebuilt.model_dump_json()
    )
    assert record.model_copy() == record
    assert copy.deepcopy(record) == record
    assert pickle.loads(pickle.dumps(record)) == record


def _anthropic_requests(stub: ScriptTransport) -> None:
    client = anthropic.Anthropic(api_key="sk-ant-test", max_retries=0, http_client=httpx2.Client(transport=stub))
    messages: list[Any] = [{"role": "user", "content": "hi"}]
    with client.messages.stream(model="claude-test", max_tokens=64, messages=messages) as stream:
        stream.get_final_message()
    asked = client.messages.create(model="claude-test", max_tokens=64, tools=TOOLS, messages=messages)  # type: ignore[arg-type]
    call = next(block for block in asked.content if block.type == "tool_use")
    client.messages.create(
        model="claude-test",
        max_tokens=64,
        tools=TOOLS,  # type: ignore[arg-type]
        system="Be brief.",
        messages=[
            *messages,
            {"role": "assistant", "content": asked.content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "saved"}]},
        ],
    )
    with pytest.raises(anthropic.BadRequestError):  # refused by a strict rule: max_tokens missing
        client.post("/v1/messages", body={"model": "claude-test", "messages": messages}, cast_to=object)
    with pytest.raises(anthropic.APIStatusError):  # no wire serves it: a record of no provider
        client.post("/v1/nowhere", body={"x": 1}, cast_to=object)
    with pytest.raises(anthropic.APIStatusError):  # not JSON: a record of no parsed fields
        client.post("/v1/messages", content=b"not json", cast_to=object)


def _openai_requests(stub: ScriptTransport) -> None:
    client = openai.OpenAI(api_key="sk-test", max_retries=0, http_client=httpx2.Client(transport=stub))
    with client.chat.completions.stream(model="gpt-test", messages=[{"role": "user", "content": "hi"}]) as stream:
        stream.get_final_completion()
    client.chat.completions.create(
        model="gpt-test",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        max_completion_tokens=32,
        temperature=1,
    )
    client.responses.create(model="gpt-test", input="hi")


def test_every_record_of_the_sdks_is_the_record_model_construct_builds() -> None:
    stub = ScriptTransport(
        [
            {"text": "a"},
            {"tool": {"name": "save", "input": {}}},
            {"text": "b"},
            {"text": "c"},
            {"text": "d"},
            {"text": "e"},
        ],
    )
    _anthropic_requests(stub)
    _openai_requests(stub)
    records = stub.requests
    assert [r.provider for r in records] == [
        "anthropic",
        "anthropic",
        "anthropic",
        "anthropic",
        None,
        "anthropic",
        "openai_chat",
        "openai_chat",
        "openai_responses",
    ]
    assert [r.index for r in records] == list(range(len(records)))
    assert records[2].tool_results
    assert records[2].system == "Be brief."
    assert records[7].temperature == 1.0
    assert records[7].max_tokens == 32
    assert records[3].problem is not None
    assert records[5].body_error is not None
    unread = records[4], records[5]  # no wire read them: their own empty messages, the shared empty rest
    for name in ("messages", "conversation"):
        assert getattr(unread[0], name) == []
        assert getattr(unread[0], name) is not getattr(unread[1], name)
    for name in ("tools", "tool_names", "tool_results", "all_tool_results"):
        assert getattr(unread[0], name) == []
        assert getattr(unread[0], name) is getattr(unread[1], name) is _EMPTY_LIST
    assert [r.answered_by for r in records if r.problem is None] == ["script"] * 6
    for record in records:
        _assert_built_alike(record)


def test_records_built_by_model_construct_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the direct build does not fit (another pydantic), `model_construct` builds records that read the same."""

    def requests() -> list[RecordedRequest]:
        stub = ScriptTransport([{"text": "a"}, {"tool": {"name": "save", "input": {}}}, {"text": "b"}])
        _anthropic_requests(stub)
        return stub.requests

    fast = requests()
    monkeypatch.setattr(_record, "_record", _record._slow)
    slow = requests()
    assert len(fast) == len(slow) == 6
    for a, b in zip(fast, slow, strict=True):
        a_fields, b_fields = dict(a.__dict__), dict(b.__dict__)
        a_fields.pop("received_at"), b_fields.pop("received_at")
        assert list(a.__dict__) == list(b.__dict__) == FIELDS
        assert a_fields == b_fields
        assert a.model_fields_set == b.model_fields_set


def test_the_direct_build_holds_for_pydantic_2_and_for_no_other_model() -> None:
    """The layout set directly is pydantic 2's (2.14 here); a model it does not fit is built the slow way."""
    assert pydantic.VERSION.startswith("2.")
    assert _record._fits(RecordedRequest)
    assert _record._record is _record._constructed

    class Aliased(BaseModel):
        name: str = Field(alias="Name")

    class Chosen(BaseModel):
        name: str = Field(validation_alias=AliasChoices("name", "n"))

    class Extra(BaseModel):
        model_config = ConfigDict(extra="allow")
        name: str

    class Private(BaseModel):
        name: str
        _seen: int = PrivateAttr(default=0)

    class PostInit(BaseModel):
        name: str

        def model_post_init(self, context: Any, /) -> None:
            pass

    for model in (Aliased, Chosen, Extra, Private, PostInit):
        assert not _record._fits(model), model.__name__
