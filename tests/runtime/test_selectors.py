"""``row_field`` / ``row_fields``: which field, or tuple of fields, of a Row a key selector
returns, when that is certain."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import pytest

from fs_compat.common import Row
from fs_compat.runtime import row_field, row_fields

NAMES = ["key", "amount", "count", "as_dict"]


def _row() -> Row:
    return Row(key="k", amount=3, count=7, as_dict=0)


def _def_selector(e: Any) -> Any:
    """A key selector written as a def."""
    return e[1]


FOLDED: list[tuple[Callable[[Any], Any], int]] = [
    (lambda e: e[0], 0),
    (lambda e: e[2], 2),
    (lambda e: e[-1], 3),
    (lambda r: r.key, 0),
    (lambda r: r.amount, 1),
    (lambda r: r.count, 2),
    (lambda r: r["amount"], 1),
    (_def_selector, 1),
    (operator.itemgetter(1), 1),
    (operator.itemgetter("key"), 0),
    (operator.attrgetter("amount"), 1),
]

k = 0
NOT_FOLDED: list[Callable[[Any], Any]] = [
    lambda e: e[4],  # out of range: the selector's own error must come
    lambda e: e[k],  # a global: could change
    lambda e: e[True],
    lambda e: e[0][0],
    lambda e: e[0] + 1,
    lambda e: e,
    lambda r: r.as_dict,  # a Row method: the attribute is not a field
    lambda r: r.missing,
    lambda r: r["missing"],
    lambda r: r._values,
    lambda r: r.as_dict(),
    lambda e, i=0: e[i],
    lambda *e: e[0],
    operator.itemgetter(0, 1),
    operator.attrgetter("key.real"),
    str,
]


@pytest.mark.parametrize(("selector", "field"), FOLDED)
def test_a_selector_that_returns_one_field_is_read_as_that_field(selector: Any, field: int) -> None:
    assert row_field(selector, NAMES) == field
    row = _row()
    assert selector(row) is row[field]


@pytest.mark.parametrize("selector", NOT_FOLDED)
def test_anything_else_is_called(selector: Any) -> None:
    assert row_field(selector, NAMES) is None


def test_a_closure_is_called() -> None:
    i = 0
    assert row_field(lambda e: e[i], NAMES) is None


TUPLES: list[tuple[Callable[[Any], Any], tuple[int, ...]]] = [
    (lambda e: (e[0], e[2]), (0, 2)),
    (lambda r: (r.amount, r["key"], r[-1]), (1, 0, 3)),
    (lambda r: (r.key, r.key), (0, 0)),
    (operator.itemgetter(0, 1), (0, 1)),
    (operator.itemgetter("count", "key"), (2, 0)),
    (operator.attrgetter("amount", "key"), (1, 0)),
]

NOT_TUPLES: list[Callable[[Any], Any]] = [
    lambda e: (e[0],),  # a one-tuple is not its field
    lambda e: [e[0], e[1]],
    lambda e: (e[0], e[0] + 1),
    lambda e: (e[0], 1),
    lambda e: (e[0], e[k]),
    lambda r: (r.key, r.as_dict),
    lambda e: (e[0], (e[1], e[2])),
    operator.itemgetter(0, 9),
    operator.attrgetter("key", "key.real"),
]


@pytest.mark.parametrize(("selector", "fields"), TUPLES)
def test_a_selector_that_returns_a_tuple_of_fields_is_read_as_those_fields(
    selector: Any, fields: tuple[int, ...]
) -> None:
    assert row_fields(selector, NAMES) == fields
    assert row_field(selector, NAMES) is None
    assert selector(_row()) == tuple(_row()[f] for f in fields)


@pytest.mark.parametrize(("selector", "field"), FOLDED)
def test_one_field_is_a_one_position_tuple(selector: Any, field: int) -> None:
    assert row_fields(selector, NAMES) == (field,)


@pytest.mark.parametrize(
    "selector", NOT_TUPLES + [s for s in NOT_FOLDED if not isinstance(s, operator.itemgetter)]
)
def test_other_tuples_are_called(selector: Any) -> None:
    assert row_fields(selector, NAMES) is None
