"""Declared types (``output_type``, ``type_info``, ``key_type``) are checked where the value is
produced, on every target, naming the step, the function, the record, the type and what arrived;
where PyFlink's coders convert silently (an int for DOUBLE, a list for a TUPLE), the value is
converted the same way."""

from __future__ import annotations

import datetime
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from fs_compat.common import Configuration, Row, Types
from fs_compat.common.internal import DeclaredTypeError, conformer
from fs_compat.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from fs_compat.runtime import LocalConfig, OperatorNode, StepError
from fs_compat.runtime._subtask import SubtaskRunner

#: The messages as ``migration_guide/troubleshooting.md`` shows them (``<...>``: what varies).
DOCUMENTED = {
    "output": (
        "step '<step>': function <function> returned <value> (<type>) for record <record> (key <key>), "
        "declared output type <type info>"
    ),
    "element": (
        "step 'Collection Source': element <index> <value> (<type>) does not fit the declared type "
        "<type info>: <the part that does not fit>"
    ),
}
GUIDE = Path(__file__).resolve().parents[2] / "migration_guide" / "troubleshooting.md"


def _fits(case: str, message: str) -> bool:
    pattern = ".+?".join(re.escape(p) for p in re.split(r"<[^<>]+>", DOCUMENTED[case]))
    return re.fullmatch(pattern, message) is not None


def test_the_messages_are_documented() -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    assert all(f"`{message}`" in guide for message in DOCUMENTED.values())


def _env(target: str = "local") -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", target))
    return env


def _map_to_a_str_declared_int(env: StreamExecutionEnvironment) -> None:
    stream = env.from_collection([("a", 1)]).map(lambda r: r[0], output_type=Types.INT())
    with pytest.raises(StepError) as info:
        stream.execute_and_collect(limit=1)
    text = str(info.value)
    assert re.match(r"step 'Map': function \S*<lambda> \(test_declared_types\.py:\d+\) returned", text)
    assert "returned 'a' (str) for record ('a', 1), declared output type Integer" in text


def test_a_map_returning_a_value_of_another_type_names_step_function_record_and_type() -> None:
    _map_to_a_str_declared_int(_env())


def test_a_field_of_a_tuple_output_is_checked_when_the_output_is_converted() -> None:
    stream = (
        _env()
        .from_collection([1])
        .map(lambda v: [v, "x"], output_type=Types.TUPLE([Types.INT(), Types.INT()]))
    )
    with pytest.raises(StepError, match=r"returned \[1, 'x'\] \(list\) for record 1, declared output type "):
        stream.execute_and_collect(limit=1)
    with pytest.raises(StepError, match=r"field f1: 'x' \(str\) is not Integer"):
        stream.execute_and_collect(limit=1)


class Emit(KeyedProcessFunction[str, tuple[str, str], int]):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value[1]


def test_a_process_function_output_is_checked_with_its_key() -> None:
    stream = (
        _env()
        .from_collection([("k", "not a number")])
        .key_by(lambda r: r[0])
        .process(Emit(), output_type=Types.LONG())
    )
    with pytest.raises(StepError) as info:
        stream.execute_and_collect(limit=1)
    assert str(info.value) == (
        "step 'Keyed Process': function Emit returned 'not a number' (str) for record "
        "('k', 'not a number') (key 'k'), declared output type Long"
    )
    assert _fits("output", str(info.value))


def test_out_of_range_integers_are_refused() -> None:
    stream = _env().from_collection([1]).flat_map(lambda v: [[2**40]], output_type=Types.ROW([Types.INT()]))
    with pytest.raises(
        StepError, match=r"field f0: 1099511627776 \(int\) out of range \[-2147483648, 2147483647\]"
    ):
        stream.execute_and_collect(limit=1)


def test_from_collection_elements_must_fit_their_type_info() -> None:
    env = _env()
    with pytest.raises(DeclaredTypeError) as info:
        env.from_collection([(1, 2), ("a", 1)], type_info=Types.TUPLE([Types.INT(), Types.INT()]))
    assert str(info.value) == (
        "step 'Collection Source': element 1 ('a', 1) (tuple) does not fit the declared type "
        "TupleTypeInfo(Integer, Integer): field f0: 'a' (str) is not Integer"
    )
    assert _fits("element", str(info.value))
    assert isinstance(info.value, TypeError)
    with pytest.raises(DeclaredTypeError, match="field f1: 2 \\(int\\) is not String"):
        env.from_collection([("a", 2)], type_info=Types.ROW([Types.STRING(), Types.STRING()]))


def test_a_key_of_another_type_than_key_type_is_refused() -> None:
    stream = _env().from_collection([("a", 1)]).key_by(lambda r: r[0], key_type=Types.INT()).map(lambda r: r)
    with pytest.raises(
        StepError, match=r"step 'Keyed Map': the key selector returned a key .* record \('a', 1\)"
    ):
        stream.execute_and_collect(limit=1)


def test_values_convert_where_pyflink_converts_them() -> None:
    env = _env()
    assert env.from_collection([1, 2]).map(lambda v: v, output_type=Types.DOUBLE()).execute_and_collect(
        limit=2
    ) == [
        1.0,
        2.0,
    ]
    out = env.from_collection([1]).map(
        lambda v: [v, True], output_type=Types.TUPLE([Types.FLOAT(), Types.LONG()])
    )
    assert out.execute_and_collect(limit=1) == [(1.0, 1)]
    rows = env.from_collection(
        [("a", 1)], type_info=Types.ROW_NAMED(["k", "n"], [Types.STRING(), Types.DOUBLE()])
    )
    assert rows.execute_and_collect(limit=1) == [Row(k="a", n=1.0)]


@pytest.mark.parametrize(
    ("type_info", "good", "bad"),
    [
        (Types.STRING(), "s", 1),
        (Types.BOOLEAN(), True, "true"),
        (Types.INT(), 7, 1.5),
        (Types.LONG(), 2**62, "7"),
        (Types.DOUBLE(), 1.5, "1.5"),
        (Types.CHAR(), "c", "cc"),
        (Types.BIG_DEC(), Decimal("1.5"), 1.5),
        (Types.SQL_DATE(), datetime.date(2026, 1, 1), "2026-01-01"),
        (Types.LIST(Types.INT()), [1, 2], [1, "2"]),
        (Types.MAP(Types.STRING(), Types.INT()), {"a": 1}, {"a": "1"}),
        (Types.PRIMITIVE_ARRAY(Types.BYTE()), b"ab", "ab"),
    ],
)
def test_the_check_accepts_its_type_and_refuses_others(type_info: Any, good: Any, bad: Any) -> None:
    conform = conformer(type_info, full=True)
    assert conform is not None
    assert conform(good) == good
    assert conform(None) is None
    with pytest.raises(DeclaredTypeError):
        conform(bad)


def test_any_value_fits_no_type_and_pickled_bytes() -> None:
    assert conformer(None) is None
    assert conformer(Types.PICKLED_BYTE_ARRAY()) is None


@pytest.mark.spark
@pytest.mark.slow
def test_declared_types_are_checked_on_spark_too() -> None:
    env = _env("spark")
    _map_to_a_str_declared_int(env)
    doubled = env.from_collection([1, 2]).map(lambda v: v, output_type=Types.DOUBLE())
    assert doubled.execute_and_collect(limit=2) == [1.0, 2.0]


@pytest.mark.parametrize("fields_only", [False, True])
def test_a_map_into_columns_hands_on_a_fitting_tuple_for_its_declared_row_with_the_same_checks(
    fields_only: bool,
) -> None:
    """A map whose one consumer reads its outputs only field by field (a DataFrame's columns:
    ``SinkNode.fields_only``) hands a tuple that fits its declared ``ROW`` on as it is, where
    another consumer gets the Row made of it (which the columns would only take apart again); a
    value that needs converting becomes a Row either way, and a misfit fails alike."""
    declared = Types.ROW_NAMED(["k", "n"], [Types.STRING(), Types.LONG()])
    stream = _env().from_collection([("a", 1)]).key_by(lambda r: r[0]).map(lambda r: r, output_type=declared)
    node = stream._node
    assert isinstance(node, OperatorNode)
    values: list[Any] = []
    runner = SubtaskRunner(node, 0, LocalConfig(), [1], values=values, fields_only=fields_only)
    runner.records(0, [("a", 1), ["b", True], ("c", None)], [None, None, None])
    assert [list(v) for v in values] == [["a", 1], ["b", 1], ["c", None]]
    assert [type(v) for v in values] == [tuple if fields_only else Row, Row, tuple if fields_only else Row]
    assert [type(f) for f in values[1]] == [str, int]  # the bool became the LONG's int
    with pytest.raises(StepError) as info:
        runner.records(0, [("d", "x")], [None])
    assert _fits("output", str(info.value))
    assert "returned ('d', 'x') (tuple) for record ('d', 'x') (key 'd')" in str(info.value)
    assert "field n: 'x' (str) is not Long" in str(info.value)
