"""Models built from fields already validated, as pydantic's `model_construct` builds them, without its loop.

A record (thirty fields, one per request) and a script's text turns are built so: `model_construct`'s
loop over the fields cost more than the rest of reading a request. `tests/test_record_build.py` and
`tests/test_setup_shortcuts.py` hold what is built to `model_construct`'s and the validator's.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import VERSION, BaseModel

M = TypeVar("M", bound=BaseModel)

_PYDANTIC_2 = VERSION.partition(".")[0] == "2"
_new = object.__new__
_set = object.__setattr__


def fits(model: type[BaseModel]) -> bool:
    """Whether `construct` builds `model` as `model_construct` would.

    It does on pydantic 2, for a model of no aliases, no `model_post_init`, no extra fields and no
    private attributes.
    """
    return (
        _PYDANTIC_2
        and not model.__pydantic_root_model__
        and not model.__pydantic_post_init__
        and not model.__private_attributes__
        and model.model_config.get("extra") != "allow"
        and all(f.alias is None and f.validation_alias is None for f in model.model_fields.values())
    )


def construct(model: type[M], fields_set: set[str], values: dict[str, Any]) -> M:
    """`model.model_construct(fields_set, **values)` for a model that `fits` and `values` holding every field in order.

    What `model_construct` leaves on such a model (pydantic 2's four instance slots: `__dict__`,
    `__pydantic_fields_set__`, `__pydantic_extra__`, `__pydantic_private__`), set directly.
    """
    instance: M = _new(model)
    _set(instance, "__dict__", values)
    _set(instance, "__pydantic_fields_set__", fields_set)
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance
