"""A record shares one read-only empty container for each field its request left empty.

A request with no tools, no tool results and no query would otherwise leave six fresh empty
containers in its record: a sixth of the record's memory, and six more objects counted towards the
garbage collector's next run (anthropic's SDK rebuilds its parsed-message classes after each). These
tests pin that the shared empties read as the empty list and dict they stand for everywhere a test
reads a record (equality, dumps, copies, pickles), refuse items loudly, and never stand in for a
field the request filled.
"""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest

from wirescript import ScriptTransport
from wirescript.recorded import RecordedRequest

httpx2 = pytest.importorskip("httpx2")
anthropic = pytest.importorskip("anthropic")

TOOL = {"name": "save", "description": "Save a note.", "input_schema": {"type": "object", "properties": {}}}


def _records(*calls: dict[str, Any]) -> list[RecordedRequest]:
    stub = ScriptTransport([{"text": "ok"}] * len(calls))
    client = anthropic.Anthropic(api_key="test-key", http_client=httpx2.Client(transport=stub), max_retries=0)
    for call in calls:
        client.messages.create(model="claude-test", max_tokens=16, **call)
    stub.check()
    return stub.requests


def test_records_of_requests_without_tools_share_one_empty_list_and_dict() -> None:
    first, second = _records(
        {"messages": [{"role": "user", "content": "hi"}]}, {"messages": [{"role": "user", "content": "again"}]}
    )
    for name in ("tools", "tool_names", "tool_results", "all_tool_results", "query", "path_params"):
        assert getattr(first, name) is getattr(second, name), name
        assert not getattr(first, name), name
    assert first.tools == []
    assert first.query == {}
    assert first.path_params == {}
    assert isinstance(first.tools, list)
    assert isinstance(first.query, dict)
    assert first.messages is not second.messages  # what the request carried is its own


def test_a_field_the_request_filled_is_its_own() -> None:
    (record,) = _records({"messages": [{"role": "user", "content": "hi"}], "tools": [TOOL]})
    assert record.tool_names == ["save"]
    record.tool_names.append("another")  # its own list: changed like any list
    assert record.tool_names == ["save", "another"]


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("tools", lambda v: v.append({})),
        ("tool_names", lambda v: v.extend(["x"])),
        ("tool_results", lambda v: v.insert(0, {})),
        ("all_tool_results", lambda v: v.__setitem__(slice(0, 0), [{}])),
        ("tools", lambda v: v.__iadd__([{}])),
        ("query", lambda v: v.__setitem__("a", "b")),
        ("query", lambda v: v.update(a="b")),
        ("path_params", lambda v: v.setdefault("a", "b")),
        ("path_params", lambda v: v.__ior__({"a": "b"})),
    ],
)
def test_the_shared_empties_refuse_items_and_say_how_to_change_one(field: str, change: Any) -> None:
    (record,) = _records({"messages": [{"role": "user", "content": "hi"}]})
    with pytest.raises(TypeError, match=r"every record shares its one empty .*copy it to change it"):
        change(getattr(record, field))
    assert getattr(record, field) == ([] if field not in ("query", "path_params") else {})


def test_a_record_with_shared_empties_reads_dumps_copies_and_pickles_as_one_with_fresh_ones() -> None:
    (record,) = _records({"messages": [{"role": "user", "content": "hi"}]})
    fresh = record.model_copy(update={"tools": [], "tool_names": [], "query": {}, "path_params": {}})
    assert record == fresh
    assert record.model_dump() == fresh.model_dump()
    assert json.loads(record.model_dump_json())["tools"] == []
    assert json.dumps(record.query) == "{}"
    deep = copy.deepcopy(record)
    assert deep == record
    assert type(copy.copy(record.tools)) is list  # a shallow copy of the field is a fresh list to change
    loaded = pickle.loads(pickle.dumps(record))
    assert loaded == record
    assert loaded.tools == []
    assert loaded.path_params == {}
    tools = list(record.tools)  # the fix the error names: a copy changes freely
    tools.append(TOOL)
    assert tools == [TOOL]


@pytest.mark.parametrize("how", ["deepcopy", "model_copy", "pickle"])
def test_a_deep_copy_or_pickle_keeps_each_empty_field_apart(how: str) -> None:
    # copy.deepcopy memoises by identity: a copy that gave each shared empty a fresh container would give
    # every empty field of every record copied together the same one, so appending a tool to one copy
    # would fill its tool names, its tool results and the other records' tools too. A deep copy (or a
    # pickle) keeps the shared read-only empty instead, as a tuple's deep copy is the tuple itself.
    records = _records(
        {"messages": [{"role": "user", "content": "hi"}]}, {"messages": [{"role": "user", "content": "x"}]}
    )
    if how == "deepcopy":
        copies = copy.deepcopy(records)
    elif how == "model_copy":
        copies = [record.model_copy(deep=True) for record in records]
    else:
        copies = pickle.loads(pickle.dumps(records))
    assert copies == records
    for field in ("tools", "tool_names", "tool_results", "all_tool_results", "query", "path_params"):
        assert getattr(copies[0], field) is getattr(records[0], field), field
    with pytest.raises(TypeError, match="copy it to change it"):
        copies[0].tools.append(TOOL)
    assert copies[0].tool_names == []
    assert copies[0].tool_results == []
    assert copies[1].tools == []
    assert records[0].tools == []
