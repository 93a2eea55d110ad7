"""Row and RowKind behave as PyFlink's (pyflink/common/types.py)."""

from __future__ import annotations

import copy
import pickle

import pytest

from fs_compat.common import Row, RowKind


def test_named_row_keeps_argument_order_and_reads_by_name_attribute_and_index() -> None:
    row = Row(name="Alice", age=11)
    assert repr(row) == "Row(name='Alice', age=11)"
    assert row["name"] == "Alice"
    assert row.age == 11
    assert row[0] == "Alice"
    assert row[-1] == 11
    assert row[0:2] == ["Alice", 11]
    assert len(row) == 2
    assert list(row) == ["Alice", 11]
    assert "name" in row
    assert "Alice" not in row  # named rows search their names


def test_positional_row() -> None:
    row = Row("a", 2, None)
    assert repr(row) == "<Row('a', 2, None)>"
    assert row[1] == 2
    assert "a" in row  # positional rows search their values
    assert tuple(row) == ("a", 2, None)
    with pytest.raises(AttributeError):
        _ = row.f0
    with pytest.raises(TypeError, match="Cannot convert a Row class into dict"):
        row.as_dict()


def test_args_and_kwargs_together_are_refused() -> None:
    with pytest.raises(ValueError, match="Can not use both args and kwargs"):
        Row(1, a=2)


def test_row_as_factory() -> None:
    person = Row("name", "age")
    assert repr(person) == "<Row('name', 'age')>"
    assert "name" in person
    alice = person("Alice", 11)
    assert alice == Row(name="Alice", age=11)
    assert repr(alice) == "Row(name='Alice', age=11)"
    with pytest.raises(ValueError, match="expected 2 values"):
        person(1, 2, 3)


def test_missing_names() -> None:
    row = Row(a=1)
    with pytest.raises(ValueError):
        row["b"]
    with pytest.raises(AttributeError):
        _ = row.b
    with pytest.raises(IndexError):
        row[5]
    with pytest.raises(AttributeError):
        _ = row._private


def test_setitem_by_index_and_name_but_attributes_are_read_only() -> None:
    row = Row(a=1, b=2)
    row[0] = 10
    row["b"] = 20
    assert row == Row(a=10, b=20)
    with pytest.raises(AttributeError):
        row.a = 5  # PyFlink refuses attribute assignment
    with pytest.raises(ValueError):
        row["missing"] = 1


def test_as_dict_plain_and_recursive() -> None:
    row = Row(key=1, value=Row(name="a", age=2), items=[Row(x=1)], more={"k": Row(y=2)})
    assert row.as_dict() == {
        "key": 1,
        "value": Row(name="a", age=2),
        "items": [Row(x=1)],
        "more": {"k": Row(y=2)},
    }
    assert row.as_dict(True) == {
        "key": 1,
        "value": {"name": "a", "age": 2},
        "items": [{"x": 1}],
        "more": {"k": {"y": 2}},
    }


def test_equality_compares_kind_and_values() -> None:
    assert Row(a=1, b=2) == Row(b=2, a=1)
    assert Row(a=1, b=2) != Row(a=1, b=3)
    assert Row(a=1) != Row(b=1)
    assert Row(1, 2) == Row(1, 2)
    assert Row(1, 2) != Row(2, 1)
    assert Row(a=1) != Row(1)  # named vs positional
    assert Row(1) != (1,)
    deleted = Row(1, 2)
    deleted.set_row_kind(RowKind.DELETE)
    assert deleted != Row(1, 2)
    assert deleted == Row.of_kind(RowKind.DELETE, 1, 2)


def test_hash_is_consistent_with_equality() -> None:
    assert hash(Row(a=1, b=2)) == hash(Row(b=2, a=1))
    assert hash(Row(1, "x")) == hash(Row(1, "x"))
    assert len({Row(a=1, b=2), Row(b=2, a=1), Row(1, 2)}) == 2
    with pytest.raises(TypeError):
        hash(Row([1]))


def test_row_kind_strings_and_accessors() -> None:
    assert [str(k) for k in RowKind] == ["+I", "-U", "+U", "-D"]
    assert [k.value for k in RowKind] == [0, 1, 2, 3]
    row = Row(1)
    assert row.get_row_kind() is RowKind.INSERT
    row.set_row_kind(RowKind.UPDATE_BEFORE)
    assert row.get_row_kind() is RowKind.UPDATE_BEFORE
    assert row._is_retract_msg() and not row._is_accumulate_msg()
    with pytest.raises(TypeError):
        row.set_row_kind("+I")  # type: ignore[arg-type]


def test_set_field_names_and_get_fields_by_names() -> None:
    row = Row(1, 2)
    row.set_field_names(["a", "b"])
    assert repr(row) == "Row(a=1, b=2)"
    assert row.get_fields_by_names(["b", "a"]) == [2, 1]
    assert row.get_fields_by_names(["a", "b"]) == [1, 2]
    with pytest.raises(ValueError, match="not exist"):
        row.get_fields_by_names(["c"])


@pytest.mark.parametrize(
    "row",
    [Row(1, "a"), Row(a=1, b=Row(c=[1, 2])), Row.of_kind(RowKind.UPDATE_AFTER, x=None), Row()],
)
def test_pickle_and_copy_keep_names_values_and_kind(row: Row) -> None:
    for clone in (pickle.loads(pickle.dumps(row)), copy.copy(row), copy.deepcopy(row)):
        assert clone == row
        assert repr(clone) == repr(row)
        assert clone.get_row_kind() is row.get_row_kind()


def test_a_field_read_as_an_attribute_reads_each_rows_own_fields() -> None:
    # After the first read of ``.zz_name`` (Row.__getattr__), Row reads it through a descriptor;
    # every row still answers with its own field, or an AttributeError.
    first, other = Row(zz_name="a", n=1), Row(n=2, zz_name="b")
    assert (first.zz_name, other.zz_name) == ("a", "b")
    assert not hasattr(Row, "zz_name")  # not a class attribute to anyone looking
    assert Row(zz_name=None).zz_name is None
    with pytest.raises(AttributeError):
        _ = Row(n=3).zz_name  # no such field
    with pytest.raises(AttributeError):
        _ = Row("zz_name", 1).zz_name  # positional: no names at all
    with pytest.raises(AttributeError):
        Row(zz_name=1).zz_name = 2  # still read-only
    row = Row(zz_name=1, n=2)
    row["zz_name"] = 5
    assert row.zz_name == 5  # reads the value as it is now
    methods = Row(as_dict=1)
    assert callable(methods.as_dict) and methods["as_dict"] == 1  # Row's methods come first
    assert Row(mro=1).mro == 1 and Row.mro()[0] is Row  # the class's own (type's) names stay
