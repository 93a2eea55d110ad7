"""Bad input fails loudly, early and cleanly: one test per case of issue 7's list, each asserting
the exception type and the exact message, in-process and (where the path differs) on Spark.

``MESSAGES`` holds every message as documented in ``migration_guide/troubleshooting.md``, with
``<placeholders>`` where values vary; each test checks its exact text against its template, and
``test_every_message_is_documented_verbatim`` checks that the guide shows each template as it is.
"""

from __future__ import annotations

import os
import pickle
import re
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fs_compat.bytewax.operators as op
from fs_api import KvError, MemoryKvStore
from fs_api_advanced import IntCodec, KeyedMapStateFactory, PickleCodec
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main
from fs_compat.common import Configuration, Duration, Row, Time, Types
from fs_compat.datastream import (
    KeyedProcessFunction,
    MapFunction,
    ReduceFunction,
    StreamExecutionEnvironment,
)
from fs_compat.datastream.state import (
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from fs_compat.runtime import KeyedStateBackend, StateAccessError, StateKind, StateSpec, StepError

GUIDE = Path(__file__).parents[2] / "migration_guide" / "troubleshooting.md"
HERE = os.path.basename(__file__)

#: Case -> the message as the guide documents it; ``<...>`` stands for a value that varies.
MESSAGES = {
    "user function": (
        "step '<step>': function <function> raised <error type>: <error> (key <key>, record <record>)"
    ),
    "unpicklable function": (
        "step '<step>': the function <function> cannot be pickled: <function>.<attribute> is a <type> "
        "(TypeError: cannot pickle '<type>' object). Every task gets its own pickled copy of a function, "
        "as in Flink and Spark: create such resources in open(), not in __init__ or a closure"
    ),
    "unpicklable key selector": (
        "step '<step>': the key selector <function> cannot be pickled: <function>.<variable> is a <type> "
        "(TypeError: cannot pickle '<type>' object). Every task gets its own pickled copy of a function, "
        "as in Flink and Spark: create such resources in open(), not in __init__ or a closure"
    ),
    "None key": "step '<step>': the key selector returned None for record <record>; key selector: <function>",
    "dict or set key": (
        "step '<step>': the key selector returned a key that cannot be used for record <record>: "
        "the key <key> is a <type>: equal <type>s need not encode alike (their order depends on "
        "insertion or on the process's hash seed), so one key could get two states; use a tuple, "
        "e.g. tuple(sorted(...)); key selector: <function>"
    ),
    "state value of the wrong type": (
        "step '<step>': function <function> raised TypeError: state '<state>' cannot hold <value>: "
        "<TYPE> expects <a type>, got <type>: <value> (key <key>, record <record>)"
    ),
    "output of the declared type": (
        "step '<step>': function <function> returned <value> (<type>) for record <record> (key <key>), "
        "declared output type <type info>"
    ),
    "output of the wrong type (Spark)": (
        "step '<step>': the value <value> does not fit the output type <type>: <what Arrow says>"
    ),
    "row field of the wrong type (Spark)": (
        "step '<step>': field '<field>' of <value> does not fit the output type <type>: <what Arrow says>"
    ),
    "corrupt snapshot": "cannot restore key group <n>: the snapshot is corrupt (<error type>: <error>)",
    "corrupt state bytes": (
        "state '<state>' of key <key>: its stored bytes cannot be decoded with <codec> (<error type>: "
        "<error>); the state is corrupt or was written with another type"
    ),
    "Bytewax item not a 2-tuple": (
        "step <step> requires `(key, value)` 2-tuple from upstream for routing; got a `<type>` instead"
    ),
    "Bytewax key not a str": (
        "step <step> requires `str` keys in `(key, value)` from upstream; got a `<type>` instead"
    ),
    "unordered map key codec": (
        "map state key codec must support ordered key encoding for range scans; <codec> does not "
        "(use IntCodec, FloatCodec, BoolCodec, StringCodec or BytesCodec)"
    ),
    "unordered map key codec (spec)": (
        "map state '<state>' key codec must support ordered key encoding for range scans; <codec> does not "
        "(use IntCodec, FloatCodec, BoolCodec, StringCodec or BytesCodec)"
    ),
    "ttl <= 0": "StateTtlConfig ttl must be positive, got ttl=<ttl> (<n> ms)",
}


def _template(case: str) -> re.Pattern[str]:
    """The case's documented message as a pattern: each ``<placeholder>`` matches any text."""
    parts = re.split(r"<[^<>]+>", MESSAGES[case])
    return re.compile(".+?".join(re.escape(p) for p in parts), re.DOTALL)


def _check(case: str, message: str, expected: str) -> None:
    """``message`` is exactly ``expected``, and fits the case's documented template."""
    assert message == expected
    assert _template(case).fullmatch(message), (case, message)


def _line(fn: Any) -> int:
    return int(fn.__code__.co_firstlineno)


def _local() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "local"))
    return env


def _spark() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    return env


spark_only = [pytest.mark.spark, pytest.mark.slow]


# 1. A user function raises. ---------------------------------------------------------------------


class CountThenFail(KeyedProcessFunction):
    """Counts per key; raises on a negative record after updating the count."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        if value[1] < 0:
            raise ValueError(f"negative amount {value[1]}")
        yield value[0], count


class Invert(MapFunction):
    def map(self, value: int) -> float:
        return 1 / value


def _count_job(env: StreamExecutionEnvironment, fn: CountThenFail, records: list[Any]) -> list[Any]:
    stream = env.from_collection(records).key_by(lambda r: r[0]).process(fn).name("counter")
    return list(stream.execute_and_collect())


def test_a_failing_process_element_names_step_function_key_record_and_leaves_no_state() -> None:
    fn = CountThenFail()
    records = [("a", 1), ("b", 1), ("a", -5), ("a", 2)]
    with pytest.raises(StepError) as info:
        _count_job(_local(), fn, records)
    expected = (
        "step 'counter': function CountThenFail raised ValueError: negative amount -5 "
        "(key 'a', record ('a', -5))"
    )
    _check("user function", str(info.value), expected)
    assert isinstance(info.value.__cause__, ValueError)
    assert str(info.value.__cause__) == "negative amount -5"
    # No partial state: as a failed Flink job restarts from its last checkpoint (here: none), the
    # failed run's state (the count of 'a' it updated before raising included) is gone. The same
    # function object, run again without the bad record, counts from scratch.
    assert not hasattr(fn, "count")  # every task works on its own copy of the function
    clean = [r for r in records if r[1] >= 0]
    assert _count_job(_local(), fn, clean) == [("a", 1), ("b", 1), ("a", 2)]


def test_a_failing_map_names_step_function_and_record() -> None:
    with pytest.raises(StepError) as info:
        list(_local().from_collection([4, 0]).map(Invert()).name("invert").execute_and_collect())
    expected = "step 'invert': function Invert raised ZeroDivisionError: division by zero (record 0)"
    assert str(info.value) == expected
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_a_failing_bytewax_mapper_names_step_and_key() -> None:
    def mapper(state: Any, value: int) -> tuple[Any, Any]:
        if value < 0:
            raise ValueError("negative")
        return value, value

    flow = Dataflow("df")
    keyed = op.input("inp", flow, TestingSource([("a", 1), ("a", -1)]))
    op.output("out", op.stateful_map("sm", keyed, mapper), TestingSink([]))
    from fs_compat.bytewax.errors import BytewaxRuntimeError

    with pytest.raises(BytewaxRuntimeError) as info:
        run_main(flow)
    assert str(info.value) == (
        "error calling `StatefulBatchLogic.on_batch` in step df.sm.stateful_flat_map.stateful.stateful_batch "
        "for key 'a': ValueError: negative"
    )
    assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.spark
@pytest.mark.slow
def test_a_failing_map_on_spark_is_the_same_step_error() -> None:
    with pytest.raises(StepError) as info:
        list(_spark().from_collection([4, 0]).map(Invert()).name("invert").execute_and_collect())
    assert (
        str(info.value)
        == "step 'invert': function Invert raised ZeroDivisionError: division by zero (record 0)"
    )


# 2. A function or descriptor that cannot be pickled. ---------------------------------------------


class Locked(MapFunction):
    def __init__(self) -> None:
        self.lock = threading.Lock()

    def map(self, value: Any) -> Any:
        return value


class LockedAdd(ReduceFunction):
    def __init__(self) -> None:
        self.guard = threading.RLock()

    def reduce(self, a: int, b: int) -> int:
        return a + b


class Totals(KeyedProcessFunction):
    """Holds its state descriptor (and so the descriptor's reduce function) from __init__."""

    def __init__(self) -> None:
        self.totals = ReducingStateDescriptor("total", LockedAdd(), Types.INT())

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        yield value


def test_an_unpicklable_function_or_descriptor_fails_when_the_step_is_built() -> None:
    stream = _local().from_collection([1])
    with pytest.raises(TypeError) as info:
        stream.map(Locked())
    tail = (
        "Every task gets its own pickled copy of a function, as in Flink and Spark: create such "
        "resources in open(), not in __init__ or a closure"
    )
    expected = (
        "step 'Map': the function Locked cannot be pickled: Locked.lock is a _thread.lock "
        f"(TypeError: cannot pickle '_thread.lock' object). {tail}"
    )
    _check("unpicklable function", str(info.value), expected)
    with pytest.raises(TypeError) as info:
        stream.key_by(lambda v: v).process(Totals())
    assert str(info.value) == (
        "step 'Keyed Process': the function Totals cannot be pickled: "
        "Totals.totals.reduce_function.guard is a _thread.RLock "
        f"(TypeError: cannot pickle '_thread.RLock' object). {tail}"
    )


@pytest.mark.spark
@pytest.mark.slow
def test_an_unpicklable_key_selector_fails_on_the_driver_before_the_spark_job() -> None:
    lock = threading.Lock()

    def by_value(v: int) -> int:
        with lock:
            return v

    stream = _spark().from_collection([1]).key_by(by_value).map(lambda v: v).name("m")
    with pytest.raises(TypeError) as info:
        stream.execute_and_collect()
    selector = f"{by_value.__qualname__} ({HERE}:{_line(by_value)})"
    expected = (
        f"step 'm': the key selector {selector} cannot be pickled: {by_value.__qualname__}.lock is a "
        "_thread.lock (TypeError: cannot pickle '_thread.lock' object). Every task gets its own pickled "
        "copy of a function, as in Flink and Spark: create such resources in open(), not in __init__ "
        "or a closure"
    )
    _check("unpicklable key selector", str(info.value), expected)


# 3. A key selector returning None, or a dict/set key. --------------------------------------------


def test_a_none_key_names_step_selector_and_record() -> None:
    def key(r: dict[str, Any]) -> Any:
        return r.get("user")

    with pytest.raises(StepError) as info:
        list(
            _local()
            .from_collection([{"user": None}])
            .key_by(key)
            .map(lambda v: v)
            .name("m")
            .execute_and_collect()
        )
    expected = (
        f"step 'm': the key selector returned None for record {{'user': None}}; key selector: "
        f"{key.__qualname__} ({HERE}:{_line(key)})"
    )
    _check("None key", str(info.value), expected)


def test_a_dict_or_set_key_names_step_selector_and_record() -> None:
    def key(r: dict[str, Any]) -> Any:
        return r

    with pytest.raises(StepError) as info:
        list(
            _local().from_collection([{"a": 1}]).key_by(key).map(lambda v: v).name("m").execute_and_collect()
        )
    expected = (
        "step 'm': the key selector returned a key that cannot be used for record {'a': 1}: the key "
        "{'a': 1} is a dict: equal dicts need not encode alike (their order depends on insertion or on "
        "the process's hash seed), so one key could get two states; use a tuple, e.g. tuple(sorted(...)); "
        f"key selector: {key.__qualname__} ({HERE}:{_line(key)})"
    )
    _check("dict or set key", str(info.value), expected)
    with pytest.raises(StepError, match=r"the key frozenset\(\{1\}\) is a frozenset: equal frozensets"):
        list(
            _local()
            .from_collection([1])
            .key_by(lambda v: frozenset({v}))
            .map(lambda v: v)
            .execute_and_collect()
        )
    # A list key works, as in PyFlink (its own test_keyed_min_by_and_max keys by ``lambda x: [1]``).
    assert list(
        _local().from_collection([[1, 2]]).key_by(lambda r: r).map(lambda v: v).execute_and_collect()
    ) == [[1, 2]]


# 4. A value that does not match its declared type. -----------------------------------------------


class StoreText(KeyedProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.x = runtime_context.get_state(ValueStateDescriptor("x", Types.INT()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        self.x.update(str(value))
        yield value


def test_a_state_value_of_the_wrong_type_names_step_state_type_and_value() -> None:
    with pytest.raises(StepError) as info:
        list(
            _local()
            .from_collection([7])
            .key_by(lambda v: v)
            .process(StoreText())
            .name("p")
            .execute_and_collect()
        )
    expected = (
        "step 'p': function StoreText raised TypeError: state 'x' cannot hold '7': INT expects an int, "
        "got str: '7' (key 7, record 7)"
    )
    _check("state value of the wrong type", str(info.value), expected)
    assert isinstance(info.value.__cause__, TypeError)


def _fails_in_dataframe(ds: Any, case: str, expected: str) -> None:
    """Collecting ``ds.to_dataframe()`` fails with the StepError ``expected``, which fits the
    documented template of ``case``: in-process, ``to_dataframe()`` raises it (the job runs
    there); on Spark the action fails with it in Spark's error text."""
    with pytest.raises(Exception) as info:
        ds.to_dataframe().collect()
    text = f"StepError: {info.value}" if isinstance(info.value, StepError) else str(info.value)
    assert re.search(re.escape(f"StepError: {expected}") + "(\n|$)", text)
    _check(case, expected, expected)


@pytest.fixture(params=["local", "spark"])
def env(request: pytest.FixtureRequest) -> Callable[[], StreamExecutionEnvironment]:
    """An environment factory per target: ``to_dataframe()`` converts a stream's values as
    Spark's Arrow does on every target (the in-process run's values too), so both refuse the
    same misfits with the same StepError."""
    return _local if request.param == "local" else _spark


@pytest.mark.spark
@pytest.mark.slow
def test_an_output_of_the_wrong_type_in_a_dataframe_names_step_type_and_value(
    env: Callable[[], StreamExecutionEnvironment],
) -> None:
    # A value not of the declared type's class is stopped in the step that returns it, as in-process.
    fn = lambda v: v if v == 1 else "two"  # noqa: E731
    ds = env().from_collection([1, 2]).key_by(lambda v: v).map(fn, output_type=Types.INT()).name("m")
    expected = (
        f"step 'm': function {fn.__qualname__} ({HERE}:{_line(fn)}) returned 'two' (str) for record 2 "
        "(key 2), declared output type Integer"
    )
    _fails_in_dataframe(ds, "output of the declared type", expected)
    # A value of the type's class passes the step unchecked; Spark's Arrow conversion names it.
    ds = (
        env().from_collection([1, 2]).map(lambda v: v if v == 1 else 2**40, output_type=Types.INT()).name("m")
    )
    expected = (
        "step 'm': the value 1099511627776 does not fit the output type Integer: "
        "Value 1099511627776 too large to fit in C integer type"
    )
    _fails_in_dataframe(ds, "output of the wrong type (Spark)", expected)
    rows = (
        env()
        .from_collection([1])
        .map(lambda v: Row(v, v), output_type=Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()]))
        .name("r")
    )
    expected = (
        "step 'r': field 'name' of (1, 1) does not fit the output type "
        "RowTypeInfo(id: Integer, name: String): Expected bytes, got a 'int' object"
    )
    _fails_in_dataframe(rows, "row field of the wrong type (Spark)", expected)
    # A float for an integer field, from a step whose outputs are not checked against its declared
    # type (a flat_map): Arrow would store it truncated (pyarrow 26: ``pa.array([1.5],
    # pa.int64())`` is ``[1]``), so the adapter refuses it, naming it.
    floats = (
        env()
        .from_collection([1])
        .flat_map(
            lambda v: [Row(v, v + 0.5)], output_type=Types.ROW_NAMED(["id", "n"], [Types.INT(), Types.LONG()])
        )
        .name("f")
    )
    expected = (
        "step 'f': field 'n' of (1, 1.5) does not fit the output type "
        "RowTypeInfo(id: Integer, n: Long): 1.5 is a float, not an integer"
    )
    _fails_in_dataframe(floats, "row field of the wrong type (Spark)", expected)


@pytest.mark.spark
@pytest.mark.slow
def test_a_float_inside_a_list_row_or_map_field_in_a_dataframe_names_it(
    env: Callable[[], StreamExecutionEnvironment],
) -> None:
    # Arrow stores a float for an integer inside a list, a struct or a map truncated too
    # (``pa.array([[1.5]], pa.list_(pa.int64()))`` is ``[[1]]``): refused as at the top level.
    assert pa.array([[1.5]], pa.list_(pa.int64())).to_pylist() == [[1]]
    lists = Types.ROW_NAMED(["id", "xs"], [Types.INT(), Types.LIST(Types.LONG())])
    rows = Types.ROW_NAMED(["id", "r"], [Types.INT(), Types.ROW_NAMED(["n"], [Types.LONG()])])
    maps = Types.MAP(Types.STRING(), Types.INT())
    cases = [
        (
            lambda v: [Row(v, [v, v + 0.5])],
            lists,
            "field 'xs' of (1, [1, 1.5]) does not fit the output type "
            "RowTypeInfo(id: Integer, xs: ListTypeInfo<Long>): 1.5 is a float, not an integer",
        ),
        (
            lambda v: [Row(v, Row(n=v + 0.5))],
            rows,
            "field 'r' of (1, {'n': 1.5}) does not fit the output type "
            "RowTypeInfo(id: Integer, r: RowTypeInfo(n: Long)): 1.5 is a float, not an integer",
        ),
        (
            lambda v: [{"a": v, "b": v + 0.5}],
            maps,
            "the value [('a', 1), ('b', 1.5)] does not fit the output type "
            "MapTypeInfo<String, Integer>: 1.5 is a float, not an integer",
        ),
    ]
    for fn, output_type, why in cases:
        ds = env().from_collection([1]).flat_map(fn, output_type=output_type).name("f")
        case = (
            "output of the wrong type (Spark)"
            if why.startswith("the value")
            else "row field of the wrong type (Spark)"
        )
        _fails_in_dataframe(ds, case, f"step 'f': {why}")
    # Integers (and None) inside pass, as before.
    ok = env().from_collection([1]).flat_map(lambda v: [Row(v, [v, None])], output_type=lists)
    assert [tuple(r) for r in ok.to_dataframe().collect()] == [(1, [1, None])]


@pytest.mark.spark
@pytest.mark.slow
def test_an_output_that_does_not_fit_in_a_streaming_query_names_the_step(tmp_path: Path) -> None:
    # The same refusals in a streaming query: from a keyed step's key-group pass and from a
    # stateless pass straight from the source, a StepError naming the step, as on the batch target
    # (a stateless pass also names what only Arrow refuses: a str for a DOUBLE).
    from fs_compat.spark import await_query, spark_session

    spark = spark_session()
    spark.createDataFrame([("a", 1)], "key STRING, n LONG").write.parquet(str(tmp_path / "in"))
    longs = Types.ROW_NAMED(["key", "n"], [Types.STRING(), Types.LONG()])
    doubles = Types.ROW_NAMED(["key", "n"], [Types.STRING(), Types.DOUBLE()])

    def halves(r: Any) -> list[Any]:
        return [Row(r.key, r.n + 0.5)]

    def pairs(r: Any) -> list[Any]:
        return [Row(r.key, r.n, 0)]

    def words(r: Any) -> list[Any]:
        return [Row(r.key, "x")]

    def keyed(ds: Any, fn: Any, out: Any) -> Any:
        return ds.key_by(lambda r: r.key).flat_map(fn, output_type=out).name("f")

    def stateless(ds: Any, fn: Any, out: Any) -> Any:
        return ds.flat_map(fn, output_type=out).name("f")

    wanted = "the output type RowTypeInfo(key: String, n: Long)"
    floats = f"field 'n' of ('a', 1.5) does not fit {wanted}: 1.5 is a float, not an integer"
    cases = [
        (keyed, halves, longs, floats, "row field of the wrong type (Spark)"),
        (stateless, halves, longs, floats, "row field of the wrong type (Spark)"),
        (keyed, pairs, longs, f"output type {longs!r}: expected 2 fields, got <Row('a', 1, 0)>", None),
        (
            stateless,
            words,
            doubles,
            f"field 'n' of ('a', 'x') does not fit the output type {doubles!r}: "
            "Could not convert 'x' with type str: tried to convert to double",
            "row field of the wrong type (Spark)",
        ),
    ]
    for i, (shape, fn, out, why, case) in enumerate(cases):
        source = spark.readStream.schema("key STRING, n LONG").parquet(str(tmp_path / "in"))
        query = (
            shape(_spark().from_dataframe(source), fn, out)
            .to_dataframe()
            .writeStream.format("parquet")
            .option("checkpointLocation", str(tmp_path / f"ck{i}"))
            .trigger(availableNow=True)
            .start(str(tmp_path / f"out{i}"))
        )
        with pytest.raises(StepError) as info:
            await_query(query)
        assert str(info.value) == f"step 'f': {why}", (shape.__name__, fn.__name__)
        if case is not None:
            _check(case, str(info.value), f"step 'f': {why}")


# 5. Corrupt state bytes found while restoring. ---------------------------------------------------
# tests/runtime/test_snapshot.py::test_corrupt_snapshot_is_a_clear_error covers a corrupt blob;
# here, its exact text and bytes corrupt inside a well-formed snapshot.


def test_a_corrupt_snapshot_and_corrupt_state_bytes_are_clear_errors() -> None:
    with pytest.raises(StateAccessError) as info:
        KeyedStateBackend().restore_key_group(3, b"not a snapshot")
    expected = "cannot restore key group 3: the snapshot is corrupt (UnpicklingError: invalid load key, 'n'.)"
    _check("corrupt snapshot", str(info.value), expected)

    spec = StateSpec("count", StateKind.VALUE, IntCodec())
    source = KeyedStateBackend()
    source.set_current_key("a")
    source.get_state(spec).update(7)
    group = source.current_key_group
    version, signatures, stores = pickle.loads(source.snapshot_key_group(group))
    stores = {name: [(k, ns, uk, b"\x01") for k, ns, uk, _ in entries] for name, entries in stores.items()}
    target = KeyedStateBackend()
    target.restore_key_group(group, pickle.dumps((version, signatures, stores)))
    target.set_current_key("a")
    with pytest.raises(StateAccessError) as info:
        target.get_state(spec).value()
    expected = (
        "state 'count' of key 'a': its stored bytes cannot be decoded with IntCodec() (ValueError: "
        "IntCodec expects 8 bytes, got 1); the state is corrupt or was written with another type"
    )
    _check("corrupt state bytes", str(info.value), expected)


# 6. A Bytewax item that is not a 2-tuple, or whose key is not a str. -----------------------------


@pytest.mark.parametrize(
    ("item", "case", "expected"),
    [
        (
            1,
            "Bytewax item not a 2-tuple",
            "step df.sm.stateful_flat_map.stateful.stateful_batch requires `(key, value)` 2-tuple from "
            "upstream for routing; got a `int` instead",
        ),
        (
            ("a", 1, 2),
            "Bytewax item not a 2-tuple",
            "step df.sm.stateful_flat_map.stateful.stateful_batch requires `(key, value)` 2-tuple from "
            "upstream for routing; got a `tuple` instead",
        ),
        (
            (1, 1),
            "Bytewax key not a str",
            "step df.sm.stateful_flat_map.stateful.stateful_batch requires `str` keys in `(key, value)` "
            "from upstream; got a `int` instead",
        ),
    ],
)
def test_a_bytewax_item_that_is_not_a_str_keyed_2_tuple(item: Any, case: str, expected: str) -> None:
    flow = Dataflow("df")
    up = op.input("inp", flow, TestingSource([item]))
    op.output("out", op.stateful_map("sm", up, lambda s, v: (s, v)), TestingSink([]))
    with pytest.raises(TypeError) as info:
        run_main(flow)
    _check(case, str(info.value), expected)


# 7. A MapState key codec that is not ordered. ----------------------------------------------------


def test_an_unordered_map_key_codec_is_refused_when_the_state_is_made() -> None:
    with pytest.raises(KvError) as info:
        KeyedMapStateFactory(MemoryKvStore(), b"", PickleCodec(), IntCodec())
    expected = (
        "map state key codec must support ordered key encoding for range scans; PickleCodec does not "
        "(use IntCodec, FloatCodec, BoolCodec, StringCodec or BytesCodec)"
    )
    _check("unordered map key codec", str(info.value), expected)
    with pytest.raises(KvError) as info:
        StateSpec("m", StateKind.MAP, IntCodec(), key_codec=PickleCodec())
    _check("unordered map key codec (spec)", str(info.value), expected.replace("map state", "map state 'm'"))
    # PyFlink's descriptors take any key type (PICKLED_BYTE_ARRAY too): their keys are kept in
    # byte order, so the descriptor path has no unordered codec to refuse.
    assert MapStateDescriptor("m", Types.PICKLED_BYTE_ARRAY(), Types.INT())._spec().key_codec is not None


# 8. A TTL of zero or less. -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ttl", "shown"),
    [
        (Duration.of_seconds(0), "PT0S (0 ms)"),
        (Time.seconds(0), "0 ms (0 ms)"),
        (Time.milliseconds(-5), "-5 ms (-5 ms)"),
    ],
)
def test_a_ttl_of_zero_or_less_fails_at_build(ttl: Any, shown: str) -> None:
    builder = StateTtlConfig.new_builder(ttl)  # the builder takes it; build() checks
    with pytest.raises(ValueError) as info:
        builder.build()
    _check("ttl <= 0", str(info.value), f"StateTtlConfig ttl must be positive, got ttl={shown}")


# The guide. ------------------------------------------------------------------------------------------


def test_every_message_is_documented_verbatim() -> None:
    guide = GUIDE.read_text()
    for case, message in MESSAGES.items():
        assert message in guide, f"troubleshooting.md does not show the message of {case!r}"
