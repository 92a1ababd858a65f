"""A stub's default wires are built when a request first reaches them: what that changes is nothing but when.

Each stand-in declares what its class declares (so every table a stub works out over its wires at
construction is the same), becomes exactly the fresh wire `default_wires()` would have made (in
place, so whatever holds it holds the wire), and a wire no request reached has nothing to report.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

import wirescript
from wirescript import ScriptTransport
from wirescript._core.cursor import _NO_SIDE
from wirescript.wires import Wire, default_wires, hosted_wires
from wirescript.wires._later import Later, become, is_later
from wirescript.wires.base import _stop_map

anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2", reason="the legacy SDKs' environment has no httpx2")


def _kinds() -> list[tuple[type[Later], type[Wire]]]:
    stub = ScriptTransport([])
    stub.check()
    pairs = [(type(wire), wire._later_kind) for wire in stub._ledger._wires if isinstance(wire, Later)]
    assert len(pairs) == len(stub._ledger._wires)  # a fresh stub: every wire a stand-in
    return pairs


def _declared(kind: type[Any]) -> dict[str, Any]:
    """Every attribute of a class as its instances resolve it, but its functions: their owners instead."""
    found: dict[str, Any] = {}
    for name in dir(kind):
        if name.startswith("__") or name in ("_abc_impl", "_later_kind", "_later_make"):
            continue
        value = getattr(kind, name)
        found[name] = ("overridden", name) if callable(value) and getattr(Wire, name, None) is not value else value
        if callable(value) and getattr(Wire, name, None) is value:
            found[name] = ("Wire's own", name)
    return found


def test_a_stub_holds_the_default_wires_and_the_dialects_in_their_order() -> None:
    eager = [*default_wires(), *hosted_wires()]
    assert [kind for _, kind in _kinds()] == [type(wire) for wire in eager]


@pytest.mark.parametrize("pair", _kinds(), ids=lambda pair: pair[1].__name__)
def test_each_stand_in_declares_what_its_class_declares(pair: tuple[type[Later], type[Wire]]) -> None:
    stand_in, kind = pair
    mine, theirs = _declared(stand_in), _declared(kind)
    # Only the stub's stop map (bound on the wires of every stub: `bind_stops`) and how it is made differ.
    assert mine.pop("_stop_map") is not None
    assert theirs.pop("_stop_map") is None
    assert mine.pop("of") == ("overridden", "of")
    assert mine == theirs
    # What the stub reads off the classes at construction: which wires settle jobs and list unused answers.
    for method in ("settle", "unused", "matches", "claims", "api_key", "owns", "bodiless"):
        assert (getattr(stand_in, method) is getattr(Wire, method)) == (getattr(kind, method) is getattr(Wire, method))
    assert isinstance(object.__new__(stand_in), tuple(base for base in kind.__mro__ if base is not kind))


def test_the_stop_map_is_the_one_bind_stops_gives() -> None:
    eager = [*default_wires(), *hosted_wires()]
    expected = _stop_map(tuple(type(wire) for wire in eager))
    stub = ScriptTransport([])
    stub.check()
    assert all(wire.stop_map is expected for wire in stub._ledger._wires)  # unbuilt
    assert all(wire._stop_map is expected for wire in stub.wires)  # built


@pytest.mark.parametrize("pair", _kinds(), ids=lambda pair: pair[1].__name__)
def test_a_wire_made_for_a_stand_in_is_referred_to_by_nothing_else(pair: tuple[type[Later], type[Wire]]) -> None:
    # Its state moves into the stand-in: nothing the fresh wire made may hold the fresh wire itself.
    stand_in, _ = pair
    stub = ScriptTransport([])
    stub.check()
    for wire in stub._ledger._wires:
        if type(wire) is stand_in:
            fresh = stand_in._later_make(wire)
            assert sys.getrefcount(fresh) == 2
            assert not any(value is fresh for value in vars(fresh).values())


def test_a_built_wire_is_the_fresh_wire_with_its_partners() -> None:
    stub = ScriptTransport([])
    stub.check()
    held = stub._ledger._wires
    built = stub.wires
    assert all(a is b for a, b in zip(held, built, strict=True))  # built in place: the stub's tables hold them
    assert not any(is_later(wire) for wire in built)
    eager = [*default_wires(), *hosted_wires()]
    for wire, fresh in zip(built, eager, strict=True):
        assert type(wire) is type(fresh)
        assert sorted(vars(wire)) == sorted({*vars(fresh), "_stop_map"})
    by_name = {wire.name: wire for wire in built}
    assert by_name["openai_conversations"].store is by_name["openai_responses"].conversations  # type: ignore[attr-defined]
    assert by_name["gemini_caches"].caches is by_name["gemini"].cached_contents  # type: ignore[attr-defined]


def test_a_wire_no_request_reached_has_nothing_unused_without_a_side_script() -> None:
    # Why `check()` skips the stand-ins of a stub with no side script: a fresh wire lists nothing.
    for wire in [*default_wires(), *hosted_wires()]:
        assert wire.unused(_NO_SIDE) == []


def test_a_side_script_never_asked_is_still_listed_as_unused() -> None:
    stub = ScriptTransport([], side={"count_tokens": [7]})
    with pytest.raises(AssertionError, match="side script answer"):
        stub.check()


def test_a_request_builds_only_the_wires_it_walks() -> None:
    stub = ScriptTransport(["Hi", "Hi"])
    client = anthropic.Anthropic(api_key="k", http_client=httpx2.Client(transport=stub), max_retries=0)
    client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "q"}])
    assert [wire.name for wire in stub._ledger._wires if not is_later(wire)] == ["anthropic"]
    body = {"model": "m", "messages": [{"role": "user", "content": "q"}]}
    headers = {"authorization": "Bearer k"}  # else every wire is asked for the key: Bedrock's reads its own
    httpx2.Client(transport=stub).post("https://api.openai.com/v1/chat/completions", json=body, headers=headers)
    assert [wire.name for wire in stub._ledger._wires if not is_later(wire)] == ["anthropic", "openai_chat"]
    stub.check()
    assert [record.provider for record in stub.requests] == ["anthropic", "openai_chat"]


def test_a_later_stub_is_not_walked_past_the_wires_an_earlier_one_found() -> None:
    # A stub of the default wires takes the wire an earlier one found for the same method and URL (every such
    # stub has the same wires in the same order): it builds that wire alone, not the ones a walk passes.
    body = {"model": "m", "messages": [{"role": "user", "content": "q"}]}
    headers = {"authorization": "Bearer k"}
    url = "https://api.openai.com/v1/chat/completions"
    for _ in range(2):
        walked = not _found(url)  # the first such request of the process walks past the anthropic wire
        stub = ScriptTransport(["Hi"])
        httpx2.Client(transport=stub).post(url, json=body, headers=headers)
        built = [wire.name for wire in stub._ledger._wires if not is_later(wire)]
        assert built == (["anthropic", "openai_chat"] if walked else ["openai_chat"])
        assert _found(url)
        stub.check()
        assert [record.provider for record in stub.requests] == ["openai_chat"]
    other = ScriptTransport(["Hi"], wires=[*default_wires()])  # a stub of its own wires walks them: no place kept
    httpx2.Client(transport=other).post(url, json=body, headers=headers)
    other.check()
    assert [record.provider for record in other.requests] == ["openai_chat"]


def _found(url: str) -> bool:  # (the one URL above, by its parts)
    from wirescript._core.record import _FOUND_AT

    return ("POST", "/v1/chat/completions", "api.openai.com", None) in _FOUND_AT


def test_a_request_no_wire_serves_is_answered_as_before() -> None:
    stub = ScriptTransport([])
    response = httpx2.Client(transport=stub).get("https://api.anthropic.com/v1/nothing-here")
    assert response.status_code == 404
    assert "no wire serves this endpoint" in response.text
    assert [p.kind for p in stub.problems] == ["unknown_endpoint"]
    stub.check(problems=False)


def test_a_wire_reached_from_two_threads_at_once_is_built_once() -> None:
    stub = ScriptTransport([])
    stub.check()
    wire = stub._ledger._wires[2]
    seen: list[Any] = []
    barrier = threading.Barrier(8)

    def reach() -> None:
        barrier.wait()
        seen.append(wire._stored)  # type: ignore[attr-defined]  # the Responses wire's own state

    threads = [threading.Thread(target=reach) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 8
    assert all(found is seen[0] for found in seen)
    assert type(wire).__name__ == "OpenAIResponsesWire"


def test_become_leaves_a_built_wire_as_it_is() -> None:
    wire = default_wires()[0]
    assert become(wire) is wire
    assert type(wire).__name__ == "AnthropicWire"


def test_the_public_names_are_unchanged() -> None:
    assert wirescript.wires.AnthropicWire.__name__ == "AnthropicWire"
    assert wirescript.wires.DIALECTS["ollama"][0].__name__ == "OllamaChatWire"
    assert callable(wirescript.strict.check_anthropic)
    assert "anthropic.messages-empty" in wirescript.strict.RULES


def test_the_tables_shared_by_stand_ins_are_those_of_the_eager_wires() -> None:
    """What a stub works out over its wires' declarations, shared by stubs of stand-ins, is what built wires give."""
    from wirescript._core.record import _credentials
    from wirescript.wires._dialects import _places
    from wirescript.wires.base import CANONICAL_STOP_REASONS

    walked, addressed = default_wires(), hosted_wires()
    stops = CANONICAL_STOP_REASONS.union(*(wire.stop_reasons for wire in [*walked, *addressed]))
    credentials = _credentials(
        tuple((w.credential_headers, w.credential_query, w.retry_count_header, w.per_request_headers) for w in walked)
    )
    places = _places(tuple(tuple(wire.addresses) for wire in addressed))
    for _ in range(2):  # worked out, then shared
        stub = ScriptTransport([])
        stub.check()
        ledger = stub._ledger
        assert all(is_later(wire) for wire in ledger._wires)
        assert ledger._cursor._known == stops
        shared = ledger._vocabulary
        assert (shared.headers, shared.query, shared.retry_headers, shared.per_request) == credentials
        assert shared.per_request == {"amz-sdk-invocation-id", "x-amz-date"}  # the Bedrock wire's, from its stand-in
        assert shared.addresses is not None
        assert shared.addresses._by_host == places


def test_a_wire_of_ones_own_gets_tables_of_its_own() -> None:
    """A list with any wire but a stand-in (a built one, one of one's own) is worked out afresh: no table goes stale."""
    from wirescript.wires.base import known_stop_reasons

    class Mine(type(default_wires()[0])):  # type: ignore[misc]
        name = "mine"

    stub = ScriptTransport([])
    stub.check()
    stand_ins = list(stub._ledger._wires)
    own = Mine()
    own.stop_reasons = {"my_own_reason": "end_turn"}
    assert "my_own_reason" in known_stop_reasons([own, *stand_ins[1:]])
    own.stop_reasons = {"another_reason": "end_turn"}
    assert "another_reason" in known_stop_reasons([own, *stand_ins[1:]])
    assert "my_own_reason" not in known_stop_reasons(stand_ins)
    with pytest.raises(wirescript.ScriptError, match="unknown stop reason 'my_own_reason'"):
        ScriptTransport([{"text": "x", "stop_reason": "my_own_reason"}])
