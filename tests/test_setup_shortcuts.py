"""What a test's set-up works out once per process, or only when first needed, is what it would work out each time.

A stub of the default wires takes the tables over its stand-ins' classes from one per-process
record (`_standing`); a declared table found is one look-up; a stub's prompt cache is made when a
request's usage is first derived; a list of dict turns is validated without a look at its types;
a passing test's `check()` says nothing without building a listing. Each is held here to the slow path.
"""

from __future__ import annotations

import math
import threading
import types
from typing import Any

import pydantic
import pytest
from pydantic import BaseModel

import wirescript
import wirescript.script as script_module
import wirescript.strict as strict_module
from wirescript import ScriptTransport, Turn
from wirescript._core.ledger import _declaring, _standing
from wirescript._core.record import Vocabulary
from wirescript._core.signal import seconds
from wirescript.script import parse_turn, parse_turns
from wirescript.strict import StrictRules
from wirescript.wires import Addresses, default_wires
from wirescript.wires._declared import _DECLARED, STAND_INS, declared
from wirescript.wires._later import is_later, made_so_far
from wirescript.wires.base import Wire, _known_stop_reasons

anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2", reason="the legacy SDKs' environment has no httpx2")


def _served(stub: ScriptTransport) -> None:
    client = anthropic.Anthropic(api_key="k", http_client=httpx2.Client(transport=stub), max_retries=0)
    client.messages.create(model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
    client.close()


def test_a_stub_of_the_default_wires_has_the_tables_it_would_work_out_itself() -> None:
    ScriptTransport([]).check()  # the process's first stub works out the tables over its own stand-ins
    for _ in range(3):  # each time after a request made one of the last stub's wires: the next stub's are stand-ins
        stub = ScriptTransport(["Hi"])
        ledger = stub._ledger
        assert made_so_far(ledger._wires) == [None] * len(ledger._wires)  # no stand-in made before it is asked for
        every = list(ledger._wires)
        assert all(is_later(wire) for wire in every)
        assert _standing()[0] == tuple(map(type, every))
        assert ledger._cursor._known == _known_stop_reasons(every)
        vocabulary = ledger._vocabulary
        walked = list(vocabulary.walked)
        afresh = Vocabulary(walked, addresses=Addresses(every[len(walked) :]), defaults=True)
        for name in ("headers", "query", "retry_headers", "_kept"):
            assert getattr(vocabulary, name) == getattr(afresh, name), name
        for name in ("walked", "rest", "first", "wires"):  # the stub's runs of stand-ins, each place the same one
            assert tuple(getattr(vocabulary, name)) == getattr(afresh, name), name
        assert vocabulary.wires is ledger._wires  # one run of them for the stub, not a copy per table
        assert any(map(vocabulary.keeps, range(len(every))))  # the default wires keep what they found
        strict = StrictRules(every)
        assert ledger._strict_rules.rules == strict.rules
        assert ledger._strict_rules.answer_rules == strict.answer_rules
        assert ledger._strict_rules._shapes == strict._shapes
        assert tuple(ledger._strict_rules._wires) == strict._wires
        assert _standing()[3] == _declaring.__wrapped__(tuple(map(type, every)))
        _declares_as_its_wires_do(ledger)
        _served(stub)
        stub.check()
        _declares_as_its_wires_do(ledger)  # the wire that served is built: asked by its own class
        assert sum(not is_later(wire) for wire in ledger._wires) == 1


def _declares_as_its_wires_do(ledger: Any) -> None:
    """Which wires the ledger asks to settle, resolve or list what is unused: those whose wire overrides it."""
    for at, wire in enumerate(ledger._wires):
        kind = type(wire)._later_kind if is_later(wire) else type(wire)
        assert (type(wire) in ledger._settling) == (kind.settle is not Wire.settle), kind
        assert (type(wire) in ledger._resolving) == (kind.resolve is not Wire.resolve), kind
        assert (at in ledger._telling) == (kind.unused is not Wire.unused), kind
    assert any(type(wire) in ledger._settling for wire in ledger._wires)
    assert any(type(wire) in ledger._resolving for wire in ledger._wires)
    assert ledger._telling


def test_a_stub_of_other_wires_works_its_tables_out_itself() -> None:
    mine = type(default_wires()[0])()
    stub = ScriptTransport([{"text": "x", "stop_reason": "refusal"}], wires=[mine])
    stub.check(unused_turns=False)
    assert stub._ledger._wires[0] is mine
    vocabulary = stub._ledger._vocabulary
    assert not any(map(vocabulary.keeps, range(len(vocabulary.wires))))  # only a stub of the default wires keeps
    with pytest.raises(wirescript.ScriptError, match="unknown stop reason 'my_reason'"):
        ScriptTransport([{"text": "x", "stop_reason": "my_reason"}], wires=[mine])


def test_a_declared_table_is_kept_only_for_stand_ins_and_found_as_worked_out() -> None:
    worked: list[int] = []

    def work_out(wires: Any) -> int:
        worked.append(len(wires))
        return len(worked)

    stand_ins = list(ScriptTransport([])._ledger._wires)
    own = [type(default_wires()[0])(), *stand_ins[1:]]
    assert declared(own, "test-table", work_out) == 1
    assert declared(own, "test-table", work_out) == 2  # a wire of one's own: worked out afresh every time
    assert declared(stand_ins, "test-table", work_out) == 3
    assert declared(list(ScriptTransport([])._ledger._wires), "test-table", work_out) == 3  # found
    assert all(STAND_INS.issuperset(kinds) for tables in _DECLARED.values() for kinds in tables)
    assert worked == [len(own)] * 3


def test_the_prompt_cache_is_made_when_usage_is_first_derived() -> None:
    plain = ScriptTransport(["Hi"])
    _served(plain)
    plain.check()
    assert plain._ledger.billing._store is None
    assert plain.bill.rows  # the bill is there without it
    derived = ScriptTransport(["Hi", "Hi"], usage="derive")
    _served(derived)
    store = derived._ledger.billing._store
    assert store is not None
    _served(derived)
    assert derived._ledger.billing.store is store  # one cache for the stub's requests
    derived.check()


class _Turns(list):  # type: ignore[type-arg]
    pass


class _Dict(dict):  # type: ignore[type-arg]
    pass


class _Str(str):
    pass


@pytest.mark.parametrize(
    "script",
    [
        [{"text": "a"}, {"tool": {"name": "f", "input": {}}}],
        ({"text": "a"}, "b"),
        _Turns([{"text": "a"}, "b"]),
        [types.MappingProxyType({"text": "a"}), _Dict(text="b"), Turn(text="c")],
    ],
    ids=["dicts", "tuple", "list-subclass", "mappings"],
)
def test_a_script_reads_as_each_of_its_turns_alone(script: Any) -> None:
    assert parse_turns(script) == [parse_turn(value, "script") for value in script]


@pytest.mark.parametrize("script", ["Hi", b"Hi", {"text": "Hi"}, 3, iter([{"text": "Hi"}])])
def test_what_is_no_list_of_turns_is_refused_as_before(script: Any) -> None:
    with pytest.raises(wirescript.ScriptError, match="script: expected a list of turns"):
        parse_turns(script)


def test_a_turn_of_a_list_that_is_wrong_is_named() -> None:
    with pytest.raises(wirescript.ScriptError, match=r"invalid script\[1\]: unknown field 'txt'"):
        parse_turns([{"text": "a"}, {"txt": "b"}])


def test_check_of_a_passing_test_says_nothing_and_of_any_other_says_what() -> None:
    stub = ScriptTransport(["Hi"])
    _served(stub)
    stub.check()
    left = ScriptTransport(["Hi", "Bye"])
    _served(left)
    with pytest.raises(AssertionError, match=r"1 scripted turn\(s\) were never requested"):
        left.check()
    left.check(unused_turns=False)
    over = ScriptTransport([])
    with pytest.raises(anthropic.APIStatusError):
        _served(over)
    with pytest.raises(AssertionError, match="not answered as scripted"):
        over.check()
    over.check(problems=False)


_TEXTS = ["", "Hi", "  spaced  ", "line\nbreak\ttab", "\x00nul", "é ✓ 日本語 🙂", "x" * 20_000]


@pytest.mark.parametrize("text", _TEXTS, ids=range(len(_TEXTS)))
def test_a_text_alone_is_the_turn_the_validator_makes(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    validated = script_module._turns().validate_python([{"text": text}])[0]
    monkeypatch.setattr(script_module, "_turns", _no_validator)  # made without it
    for made in (*parse_turns([{"text": text}, text]), *parse_turns((text,))):
        assert made == validated
        assert made.model_fields_set == validated.model_fields_set
        assert list(vars(made)) == list(vars(validated))
        assert repr(made) == repr(validated)
        assert made.model_dump_json() == validated.model_dump_json()
        assert made.model_dump(exclude_unset=True) == {"text": text}
    first, second = parse_turns([{"text": text}, {"text": text}])
    assert first is not second
    assert vars(first) is not vars(second)
    # Text turns share one fields set (a turn is frozen: nothing adds to it); a copy gets its own.
    copied = first.model_copy(update={"stop_reason": "end_turn"})
    assert copied.model_fields_set == {"text", "stop_reason"}
    assert first.model_fields_set == second.model_fields_set == {"text"}
    with pytest.raises(pydantic.ValidationError):
        first.text = "changed"  # type: ignore[misc]
    assert second.model_fields_set == {"text"}


def test_a_text_alone_is_made_in_the_layout_of_the_pydantic_it_was_written_for() -> None:
    # `_text_turn` sets a model's four instance slots as `model_construct` does: pydantic 2's layout.
    assert pydantic.VERSION.startswith("2.")
    assert BaseModel.__slots__ == ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
    validated = Turn.model_validate({"text": "Hi"})
    assert validated.__pydantic_extra__ is None  # no extra fields (extra="forbid")
    assert validated.__pydantic_private__ is None  # no private attributes
    made = parse_turns(["Hi"])[0]
    for name in BaseModel.__slots__:
        assert object.__getattribute__(made, name) == object.__getattribute__(validated, name), name


def _no_validator(*args: Any) -> Any:
    raise AssertionError("the turns' validator was asked")


@pytest.mark.parametrize(
    "script",
    [
        [{"text": "a", "stop_reason": "end_turn"}],
        [{"text": 3}],
        [{"text": None}],
        [{"txt": "a"}],
        [_Dict(text="a"), _Str("b")],
        [_Str("b")],
        [{"text": _Str("b")}],
    ],
    ids=["two-fields", "no-str", "none", "unknown", "subclasses", "str-subclass", "text-subclass"],
)
def test_anything_but_a_text_alone_is_validated(script: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        expected: object = [parse_turn(value, "script") for value in script]
    except wirescript.ScriptError as exc:
        expected = str(exc)
    monkeypatch.setattr(script_module, "_text_turn", _no_validator)  # never made as a text alone
    try:
        found: object = parse_turns(script)
    except wirescript.ScriptError as exc:
        found = str(exc).replace("script[0]", "script")
    assert found == expected
    if isinstance(found, list):  # a str subclass is validated into a str
        assert [type(turn.text) for turn in found] == [type(turn.text) for turn in expected]  # type: ignore[attr-defined]


def test_a_text_that_does_not_encode_is_refused_as_the_validator_refuses_it() -> None:
    with pytest.raises(wirescript.ScriptError) as alone:
        parse_turn({"text": "a\ud800b"}, "script[1]")
    with pytest.raises(wirescript.ScriptError) as listed:
        parse_turns(["fine", "a\ud800b"])
    assert str(listed.value) == str(alone.value)
    assert "lone surrogate" in str(alone.value)


@pytest.mark.parametrize("zero", [False, True])
def test_a_timeout_in_seconds_is_checked_as_ever(zero: bool) -> None:
    longest = threading.TIMEOUT_MAX
    for value in (30.0, 1e-9, longest, 5, 0.0, -0.0, -1.0, math.nan, math.inf, longest * 2, True, "3", _Float(2.0)):
        valid = (
            not isinstance(value, (bool, str))
            and math.isfinite(value)
            and (value >= 0 if zero else value > 0)
            and value <= longest
        )
        if valid:
            got = seconds(value, "timeout", zero=zero)
            assert got == value
            assert type(got) is float
        else:
            with pytest.raises(wirescript.ScriptError, match="timeout: expected a"):
                seconds(value, "timeout", zero=zero)


class _Float(float):
    pass


_FOREIGN = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}], "response_format": {}}
"""An Anthropic body with a field OpenAI Chat owns: what `any.body-for-another-wire` refuses."""
_NONE: frozenset[str] = frozenset()


class _Record:
    """What `StrictRules.check` and the Anthropic wire's own rules read of a request."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body
        self.path = "/v1/messages"
        self.headers: dict[str, str] = {}
        self.model = body["model"]


def _shapes_by_identity(rules: StrictRules) -> dict[int, Any]:
    """The slow path: each of the stub's wires' shapes by its identity, from the positions its plan gives."""
    plan = strict_module._plan.__wrapped__(tuple(map(type, rules._wires)))
    return {id(rules._wires[at]): shape for at, shape in plan.shapes}


def test_the_strict_rules_of_a_stub_of_the_default_wires_share_one_table_and_find_each_wires_shape() -> None:
    first, second = ScriptTransport(["Hi"]), ScriptTransport(["Hi"])
    one, other = first._ledger._strict_rules, second._ledger._strict_rules
    assert one._by_class
    assert one._shapes is other._shapes  # no table of the stub's own
    slow = _shapes_by_identity(one)
    assert slow  # the default wires have shapes
    for wire in one._wires:
        assert one._shape(wire) == slow.get(id(wire))
        assert other._shape(wire) is None  # another stub's wire of the same class is not this stub's
    _served(first)  # the Anthropic stand-in became its wire: found by its new class
    anthropic_wire = next(wire for wire in one._wires if not is_later(wire))
    assert one._shape(anthropic_wire) == slow[id(anthropic_wire)]
    for violation in (one.mismatch(anthropic_wire, _FOREIGN), one.check(anthropic_wire, _Record(_FOREIGN), _NONE)):
        assert violation is not None
        assert violation.rule.id == "any.body-for-another-wire"
    assert other.mismatch(anthropic_wire, _FOREIGN) is None
    assert other.check(anthropic_wire, _Record(_FOREIGN), _NONE) is None  # the wire's own rules let it through
    first.check()
    second.check(unused_turns=False)
    fresh = strict_module._plan.__wrapped__(tuple(map(type, other._wires)))  # the shared table never changed
    assert other._shapes == fresh.by_class
    assert strict_module._plan(tuple(map(type, other._wires))).by_class is other._shapes


def test_strict_rules_over_wires_of_one_class_tell_them_apart_by_identity() -> None:
    anthropic_kind, chat_kind = (type(wire) for wire in default_wires()[:2])
    mine, theirs, chat = anthropic_kind(), anthropic_kind(), chat_kind()
    theirs.label = "Their Messages"
    rules = StrictRules([mine, theirs, chat])
    assert not rules._by_class
    for wire, label in ((mine, "Anthropic Messages (POST /v1/messages)"), (theirs, "Their Messages")):
        for violation in (rules.mismatch(wire, _FOREIGN), rules.check(wire, _Record(_FOREIGN), _NONE)):
            assert violation is not None
            assert violation.message.endswith(f"not {label})"), violation
    # A stand-in and the wire of the class it becomes: one class once it is built, so told apart the same way.
    stand_in = next(wire for wire in ScriptTransport([])._ledger._wires if type(wire)._later_kind is anthropic_kind)
    assert not StrictRules([stand_in, theirs, chat])._by_class
    assert StrictRules([stand_in, chat])._by_class
    assert StrictRules([mine, chat]).mismatch(theirs, _FOREIGN) is None  # not one of its wires


def test_an_anthropic_wire_holds_threads_of_its_own_only_once_a_request_carries_one() -> None:
    from wirescript.wires import AnthropicWire

    plain, threaded = ScriptTransport(["Hi"]), ScriptTransport(["Hi", "Hi"])
    _served(plain)
    plain.check()
    built_plain = plain._ledger._wires[0]
    assert type(built_plain) is AnthropicWire
    assert "_threads" not in vars(built_plain)  # nothing made for a test that continues no thread
    client = anthropic.Anthropic(api_key="k", http_client=httpx2.Client(transport=threaded), max_retries=0)
    first = [{"role": "user", "content": "Hi"}]
    extra = {"thread": {"type": "continue", "previous_message_id": "msg_0000"}}
    client.messages.create(model="claude-test", max_tokens=10, messages=first, extra_body={"thread": {"type": "new"}})
    client.messages.create(
        model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "More"}], extra_body=extra
    )
    client.close()
    threaded.check()
    built = threaded._ledger._wires[0]
    assert set(vars(built)["_threads"]) == {"msg_0000", "msg_0001"}
    assert [m["role"] for m in threaded.requests[1].conversation] == ["user", "assistant", "user"]
    assert AnthropicWire._threads is None  # each wire's own dict: the class's default is never filled
    assert "_threads" not in vars(built_plain)


def test_a_text_alone_is_left_to_the_validator_where_the_model_does_not_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a pydantic whose layout `_models.construct` does not know, text turns are validated, not built."""
    assert script_module._TEXT_FITS  # pydantic 2 here
    monkeypatch.setattr(script_module, "_TEXT_FITS", False)
    assert script_module._text_turn("hi") is None
    turns = parse_turns(["hi", {"text": "there"}])
    assert turns == [Turn(text="hi"), Turn(text="there")]
    assert [turn.model_fields_set for turn in turns] == [{"text"}, {"text"}]


def test_a_stub_makes_the_stand_ins_of_the_wires_its_requests_reach_and_no_other() -> None:
    ScriptTransport([]).check()  # the process's first stub works out the tables over its own stand-ins
    stub = ScriptTransport(["Hi", "Again"])
    made = made_so_far(stub._ledger._wires)
    assert made == [None] * 25  # the default wires' 14 and the 11 dialects served by address: none made yet
    _served(stub)
    assert [type(wire).__name__ for wire in made if wire is not None] == ["AnthropicWire"]
    first = next(wire for wire in made if wire is not None)
    _served(stub)
    assert [wire for wire in made if wire is not None] == [first]  # the one wire, found again
    stub.check()  # nothing unused, asking no wire it did not make
    assert len(stub.bill.rows) == 2  # billed by the wire that served them, making no other
    assert [wire for wire in made if wire is not None] == [first]
    every = stub.wires  # asked for: every wire is made, and built
    assert len(every) == 25
    assert not any(map(is_later, every))
    assert every[made.index(first)] is first


def test_threads_asking_for_one_place_at_once_get_one_stand_in() -> None:
    ScriptTransport([]).check()  # the process's first stub works out the tables over its own stand-ins
    kinds = [kind.__name__ for kind in ScriptTransport([])._ledger._wires.kinds]  # type: ignore[attr-defined]
    conversations, responses = kinds.index("LaterOpenAIConversationsWire"), kinds.index("LaterOpenAIResponsesWire")
    stub = ScriptTransport([])
    wires = stub._ledger._wires
    start = threading.Barrier(8)
    got: list[tuple[object, object]] = []

    def ask() -> None:
        start.wait()
        got.append((wires[-1], wires[conversations]))  # a dialect served by address; a wire made on a partner's state

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(dialect) for dialect, _ in got}) == 1
    assert len({id(wire) for _, wire in got}) == 1
    made = made_so_far(wires)
    assert made[responses] is not None  # its partner, made with it
    assert getattr(got[0][1], "_partner") is made[responses]  # noqa: B009 - a stand-in's own slot
    assert sum(wire is not None for wire in made) == 3
    stub.check()
