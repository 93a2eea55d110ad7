"""What ``print()`` writes for each kind of stream, as PyFlink 2.3.0 writes it (measured on it:
a ROW-typed stream is made text on PyFlink's Python side, its fields with Python's ``str`` joined
by commas; a tuple-typed one by Java's ``Tuple.toString``; values of no declared type with
Python's ``str``)."""

from __future__ import annotations

from typing import Any

import pytest

from fs_compat.common import Configuration, Row, Types
from fs_compat.datastream import StreamExecutionEnvironment


def _printed(capsys: Any, target: str, build: Any) -> list[str]:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", target)
    )
    env.set_parallelism(1)
    rows = env.from_collection(
        [("a", 1, 0.5), ("b", 2, 1 / 3)], type_info=Types.ROW([Types.STRING(), Types.INT(), Types.DOUBLE()])
    )
    build(rows)
    capsys.readouterr()
    env.execute()
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("target", ["local", pytest.param("spark", marks=pytest.mark.spark)])
def test_rows_print_as_pyflink_prints_them(capsys: Any, target: str) -> None:
    assert _printed(capsys, target, lambda rows: rows.print()) == [
        "+I[a,1,0.5]",
        "+I[b,2,0.3333333333333333]",
    ]
    nested = Types.ROW_NAMED(
        ["s", "l", "m"], [Types.STRING(), Types.LIST(Types.INT()), Types.MAP(Types.STRING(), Types.DOUBLE())]
    )
    assert _printed(
        capsys,
        target,
        lambda rows: rows.map(lambda r: Row(r[0], [r[1], r[1]], {"k": r[2]}), output_type=nested).print(),
    ) == ["+I[a,[1, 1],{'k': 0.5}]", "+I[b,[2, 2],{'k': 0.3333333333333333}]"]
    nulls = Types.ROW([Types.STRING(), Types.STRING()])
    assert _printed(
        capsys, target, lambda rows: rows.map(lambda r: Row(r[0], None), output_type=nulls).print()
    ) == [
        "+I[a,None]",
        "+I[b,None]",
    ]


def test_tuples_and_untyped_values_print_as_before(capsys: Any) -> None:
    pair = Types.TUPLE([Types.STRING(), Types.INT()])
    assert _printed(
        capsys, "local", lambda rows: rows.map(lambda r: (r[0], r[1]), output_type=pair).print()
    ) == [
        "(a,1)",
        "(b,2)",
    ]
    assert _printed(capsys, "local", lambda rows: rows.map(lambda r: (r[0], None)).print("out")) == [
        "out> ('a', None)",
        "out> ('b', None)",
    ]
