"""The record classes written out by hand (`_plain.Plain`) behave as the dataclasses they replaced."""

from __future__ import annotations

import pytest

from wirescript._plain import Plain
from wirescript.wires.base import Frame, Item, Offer, Parsed, Rendered

CLASSES = [Frame, Item, Parsed, Rendered, Offer]


@pytest.mark.parametrize("kind", CLASSES)
def test_the_fields_are_the_slots_in_the_constructors_order(kind: type[Plain]) -> None:
    assert sorted(kind._fields) == sorted(kind.__slots__)
    params = list(kind.__init__.__code__.co_varnames[1 : kind.__init__.__code__.co_argcount])
    assert params == list(kind._fields)


def test_equality_and_repr_are_a_dataclasses() -> None:
    assert Parsed(model="m") == Parsed(model="m")
    assert Parsed(model="m") != Parsed(model="n")
    assert Frame("a", b"x") != ("a", b"x")  # another type is never equal
    assert repr(Frame("a", b"x")) == "Frame(name='a', data=b'x')"
    assert repr(Item({}, "/v1/messages")) == "Item(body={}, path='/v1/messages', custom_id=None, method='POST')"
    with pytest.raises(TypeError):
        hash(Parsed())  # mutable: unhashable, as a dataclass with `eq` and no `frozen`


def test_each_parsed_gets_lists_of_its_own() -> None:
    first, second = Parsed(), Parsed()
    first.messages.append("x")
    assert second.messages == []
    assert first.tools is not second.tools
    assert Rendered(200, {}).body == b""
