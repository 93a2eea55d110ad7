"""``Types.FLOAT()`` is a 32-bit float, as in Flink: values declared ``FLOAT`` (a source's
``type_info``, a step's ``output_type``, a part of a row, tuple, list, array or map, a
``key_type``) are rounded where they are produced; ``print()`` shows them as Java's
``Float.toString`` and ``execute_and_collect()`` gives back the float of that text, as PyFlink
2.3 does; state declared ``FLOAT`` keeps the float it was given, as PyFlink's Python state cache
does. The numbers below are what PyFlink 2.3.0 gave for the same programs."""

from __future__ import annotations

import math
from typing import Any

import pytest

from fs_compat.common import Configuration, Row, Time, Types
from fs_compat.common.internal import DeclaredTypeError, conformer, exact_class, to_float32
from fs_compat.common.watermark_strategy import TimestampAssigner, WatermarkStrategy
from fs_compat.datastream import KeyedProcessFunction, OutputTag, RuntimeContext, StreamExecutionEnvironment
from fs_compat.datastream.functions import AggregateFunction
from fs_compat.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from fs_compat.datastream.window import TumblingEventTimeWindows
from fs_compat.runtime import StepError

F = Types.FLOAT()
S = Types.STRING()
THIRD = 0.3333333432674408  # 1 / 3 as a 32-bit float


def _env(target: str = "local") -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", target))
    return env


def _seen(stream: Any) -> list[str]:
    """What the next step sees of each value: its repr, through a step of no FLOAT type."""
    return list(stream.map(repr, output_type=S).execute_and_collect())


def test_rounding_is_java_float_rounding() -> None:
    assert to_float32(0.1) == 0.10000000149011612
    assert to_float32(3.4028235e38) == 3.4028234663852886e38  # the largest float
    assert to_float32(3.4028236e38) == math.inf  # past it, as Java's (float)
    assert to_float32(-1e39) == -math.inf
    assert to_float32(1e-50) == 0.0
    assert math.isnan(to_float32(math.nan))


def test_source_elements_declared_float_are_rounded_in_every_shape() -> None:
    env = _env()
    cases: list[tuple[Any, list[Any], str]] = [
        (F, [0.1], "0.10000000149011612"),
        (Types.TUPLE([S, F]), [("a", 0.1)], "('a', 0.10000000149011612)"),
        (Types.ROW([F, S]), [Row(0.1, "x")], "Row(f0=0.10000000149011612, f1='x')"),
        (Types.ROW_NAMED(["a"], [F]), [(0.1,)], "Row(a=0.10000000149011612)"),
        (Types.LIST(F), [[0.1, 0.2]], "[0.10000000149011612, 0.20000000298023224]"),
        (Types.BASIC_ARRAY(F), [[0.1, None]], "[0.10000000149011612, None]"),
        (Types.PRIMITIVE_ARRAY(F), [[0.2]], "[0.20000000298023224]"),
        (Types.MAP(S, F), [{"k": 0.1}], "{'k': 0.10000000149011612}"),
        (Types.MAP(F, S), [{0.1: "v"}], "{0.10000000149011612: 'v'}"),
        (F, [1e39, -1e39, 1e-50], "inf -inf 0.0"),
    ]
    for type_info, items, expected in cases:
        assert " ".join(_seen(env.from_collection(items, type_info=type_info))) == expected, type_info


def test_double_and_the_other_types_keep_their_hot_path() -> None:
    assert exact_class(Types.DOUBLE()) is float
    assert exact_class(Types.TUPLE([S, Types.DOUBLE()])) is tuple
    assert exact_class(F) is None
    assert exact_class(Types.TUPLE([S, F])) is None  # a tuple of exactly tuple is rounded inside
    assert _seen(_env().from_collection([0.1], type_info=Types.DOUBLE())) == ["0.1"]


def test_step_outputs_declared_float_are_rounded() -> None:
    src = _env().from_collection([1.0], type_info=Types.DOUBLE())
    assert _seen(src.map(lambda x: x / 3, output_type=F)) == [repr(THIRD)]
    assert _seen(src.map(lambda x: ("a", x / 3), output_type=Types.TUPLE([S, F]))) == [f"('a', {THIRD!r})"]
    assert _seen(src.map(lambda x: [x / 3], output_type=Types.LIST(F))) == [f"[{THIRD!r}]"]
    assert _seen(src.flat_map(lambda x: [Row(x / 3)], output_type=Types.ROW([F]))) == [f"Row(f0={THIRD!r})"]
    assert _seen(src.map(lambda x: 3, output_type=F)) == ["3.0"]  # an int becomes a float
    assert _seen(src.map(lambda x: x / 3, output_type=Types.DOUBLE())) == [repr(1 / 3)]


def test_a_rolling_reduce_of_a_float_stream_is_rounded() -> None:
    stream = _env().from_collection([("a", 0.1), ("a", 0.2)], type_info=Types.TUPLE([S, F]))
    summed = stream.key_by(lambda r: r[0]).reduce(lambda a, b: (a[0], a[1] + b[1]))
    # 0.1 and 0.2 as 32-bit floats, their sum rounded again (the reduce's type is the stream's)
    assert _seen(summed) == ["('a', 0.10000000149011612)", "('a', 0.30000001192092896)"]


def test_a_float_beyond_any_float_names_the_part() -> None:
    conform = conformer(Types.TUPLE([S, F]))
    assert conform is not None
    with pytest.raises(DeclaredTypeError, match=r"field f1: 10{400} \(int\) out of range of a float"):
        conform(("a", 10**400))
    stream = _env().from_collection([1]).map(lambda v: 10**400, output_type=F)
    with pytest.raises(StepError, match="out of range of a float"):
        stream.execute_and_collect(limit=1)


class _KeyAndValue(KeyedProcessFunction[Any, Any, str]):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def process_element(self, value: Any, ctx: Any) -> Any:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield f"{ctx.get_current_key()!r} {n}"


def test_a_float_key_type_rounds_the_key_so_keys_that_round_alike_are_one_key() -> None:
    env = _env()
    values = env.from_collection([0.1, 0.10000000149011612, 0.1000000001], type_info=Types.DOUBLE())
    keyed = values.key_by(lambda v: v, key_type=F).process(_KeyAndValue(), output_type=S)
    assert list(keyed.execute_and_collect()) == [f"{0.10000000149011612!r} {n}" for n in (1, 2, 3)]
    tuples = values.key_by(lambda v: ("k", v), key_type=Types.TUPLE([S, F]))
    assert list(tuples.process(_KeyAndValue(), output_type=S).execute_and_collect())[-1] == (
        "('k', 0.10000000149011612) 3"
    )
    # no key_type: the key is what the selector returns
    plain = values.key_by(lambda v: v).process(_KeyAndValue(), output_type=S)
    assert list(plain.execute_and_collect()) == ["0.1 1", "0.10000000149011612 1", "0.1000000001 1"]


class _Sum(AggregateFunction[float, float, float]):
    def create_accumulator(self) -> float:
        return 0.0

    def add(self, value: float, accumulator: float) -> float:
        return accumulator + value

    def get_result(self, accumulator: float) -> float:
        return accumulator

    def merge(self, acc_a: float, acc_b: float) -> float:
        return acc_a + acc_b


class _AllStates(KeyedProcessFunction[Any, Any, Any]):
    """Stores x / 3 in a state of every kind declared FLOAT; yields what each gives back."""

    def __init__(self, ttl: bool) -> None:
        self.ttl = ttl

    def open(self, runtime_context: RuntimeContext) -> None:
        value = ValueStateDescriptor("v", F)
        if self.ttl:
            value.enable_time_to_live(StateTtlConfig.new_builder(Time.seconds(60)).build())
        self.v = runtime_context.get_state(value)
        self.l = runtime_context.get_list_state(ListStateDescriptor("l", F))
        self.m = runtime_context.get_map_state(MapStateDescriptor("m", F, F))
        self.r = runtime_context.get_reducing_state(ReducingStateDescriptor("r", lambda a, b: a + b, F))
        self.a = runtime_context.get_aggregating_state(AggregatingStateDescriptor("a", _Sum(), F))

    def process_element(self, value: Any, ctx: Any) -> Any:
        before = self.v.value()
        x = value[1] / 3
        self.v.update(x)
        self.l.add(x)
        self.m.put(x, x)
        self.r.add(x)
        self.a.add(x)
        yield (before, self.v.value(), list(self.l.get()), list(self.m.items()), self.r.get(), self.a.get())


@pytest.mark.parametrize("ttl", [False, True], ids=["plain", "ttl"])
def test_state_declared_float_gives_back_the_float_it_was_given(ttl: bool) -> None:
    """As PyFlink's Python state cache: no rounding on the way into state and back, in the same
    record or a later one (PyFlink rounds only what it re-reads from its Java state backend)."""
    stream = _env().from_collection([("a", 1.0), ("a", 2.0)], type_info=Types.TUPLE([S, Types.DOUBLE()]))
    out = list(stream.key_by(lambda r: r[0]).process(_AllStates(ttl)).execute_and_collect())
    third, two_thirds = 1 / 3, 2 / 3
    assert out == [
        (None, third, [third], [(third, third)], third, third),
        (third, two_thirds, [third, two_thirds], [(third, third), (two_thirds, two_thirds)], 1.0, 1.0),
    ]


def test_print_shows_float_values_as_java_does(capsys: pytest.CaptureFixture[str]) -> None:
    env = _env()
    env.set_parallelism(1)  # one printing subtask: ``f> ``, not ``f:N> `` on a machine of several cores
    src = env.from_collection([1.0, 1e-5, 100.0], type_info=Types.DOUBLE())
    src.map(lambda x: x / 3, output_type=F).print("f")
    src.map(lambda x: ("a", x / 3), output_type=Types.TUPLE([S, F])).print("t")
    src.map(lambda x: [x / 3], output_type=Types.LIST(F)).print("l")
    src.map(lambda x: x / 3, output_type=Types.DOUBLE()).print("d")
    env.execute()
    assert sorted(capsys.readouterr().out.splitlines()) == sorted(
        [
            *("f> 0.33333334", "f> 3.3333333E-6", "f> 33.333332"),
            *("t> (a,0.33333334)", "t> (a,3.3333333E-6)", "t> (a,33.333332)"),
            *("l> [0.33333334]", "l> [3.3333333E-6]", "l> [33.333332]"),
            *("d> 0.3333333333333333", "d> 3.3333333333333337E-6", "d> 33.333333333333336"),
        ]
    )


def test_collect_gives_back_the_float_java_prints() -> None:
    env = _env()
    assert env.from_collection([0.1, 110.1], type_info=F).execute_and_collect(limit=2) == [0.1, 110.1]
    src = env.from_collection([1.0], type_info=Types.DOUBLE())
    tuples = src.map(lambda x: ("a", x / 3), output_type=Types.TUPLE([S, F]))
    assert tuples.execute_and_collect(limit=1) == [("a", 0.33333334)]
    rows = src.map(lambda x: Row(x / 3, x), output_type=Types.ROW_NAMED(["f", "d"], [F, Types.DOUBLE()]))
    assert rows.execute_and_collect(limit=1) == [Row(f=0.33333334, d=1.0)]


class _RunningSum(KeyedProcessFunction[str, tuple[str, float], tuple[str, float]]):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.total = runtime_context.get_state(ValueStateDescriptor("total", F))

    def process_element(self, value: Any, ctx: Any) -> Any:
        total = (self.total.value() or 0) + value[1]
        self.total.update(total)
        yield value[0], total


def _running_sums(target: str) -> list[Any]:
    env = _env(target)
    amounts = [("x", 110.1), ("y", 30.2), ("x", 20.0), ("x", 13.1)]
    stream = env.from_collection(amounts, type_info=Types.TUPLE([S, F]))
    return list(stream.key_by(lambda r: r[0]).process(_RunningSum()).execute_and_collect())


#: PyFlink 2.3.0's output for the program of ``_running_sums``: the amounts are 32-bit floats,
#: the sums (kept in state as they were computed) are not rounded again.
PYFLINK_SUMS = [
    ("x", 110.0999984741211),
    ("y", 30.200000762939453),
    ("x", 130.0999984741211),
    ("x", 143.19999885559082),
]


def test_running_sums_of_float_amounts_are_pyflinks() -> None:
    assert _running_sums("local") == PYFLINK_SUMS


@pytest.mark.spark
@pytest.mark.slow
def test_running_sums_of_float_amounts_are_pyflinks_on_spark() -> None:
    assert sorted(_running_sums("spark")) == sorted(PYFLINK_SUMS)


def test_json_and_csv_row_formats_read_float_fields_as_32_bit_and_write_javas_digits() -> None:
    from fs_compat.datastream.formats.csv import CsvRowDeserializationSchema, CsvRowSerializationSchema
    from fs_compat.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema

    row_type = Types.ROW_NAMED(["s", "f", "d", "l"], [S, F, Types.DOUBLE(), Types.LIST(F)])
    json_in = JsonRowDeserializationSchema.builder().type_info(row_type).build()
    row = json_in.deserialize(b'{"s":"a","f":0.1,"d":0.1,"l":[0.2]}')
    assert row == Row(s="a", f=0.10000000149011612, d=0.1, l=[0.20000000298023224])
    json_out = JsonRowSerializationSchema.builder().with_type_info(row_type).build()
    assert json_out.serialize(row) == b'{"s":"a","f":0.1,"d":0.1,"l":[0.2]}'
    assert json_out.serialize(("a", 1 / 3, 1 / 3, [1 / 3])) == (
        b'{"s":"a","f":0.33333334,"d":0.3333333333333333,"l":[0.33333334]}'
    )
    csv_type = Types.ROW_NAMED(["s", "f", "d"], [S, F, Types.DOUBLE()])
    assert CsvRowDeserializationSchema.Builder(csv_type).build().deserialize(b"a,0.1,0.1") == Row(
        s="a", f=0.10000000149011612, d=0.1
    )
    csv_out = CsvRowSerializationSchema.Builder(csv_type).build()
    assert csv_out.serialize(Row(s="a", f=1 / 3, d=1 / 3)) == b"a,0.33333334,0.3333333333333333\n"


def test_a_sink_function_gets_float_values_as_javas_sink_would() -> None:
    """PyFlink's sink functions are Java's: a FLOAT arrives as Java's Float, so the test sink
    shows ``1.1`` for the 32-bit float of 1.1 (a step in between sees ``1.100000023841858``)."""
    from fs_compat.datastream.tests.test_util import DataStreamTestSinkFunction

    env = _env()
    sink = DataStreamTestSinkFunction()
    prices = Types.ROW([Types.STRING(), Types.PRIMITIVE_ARRAY(F), F])
    env.from_collection([("a", [1.1, 2.5], 0.3)], type_info=prices).add_sink(sink)
    env.execute()
    assert sink.get_results() == ["+I[a, [1.1, 2.5], 0.3]"]


class _ToSide(KeyedProcessFunction[Any, Any, Any]):
    """Sends ``value / 3`` (or what ``make`` makes of it) to side output ``tag``, the value on."""

    def __init__(self, tag: Any, make: Any = None) -> None:
        self.tag = tag
        self.make = make

    def process_element(self, value: Any, ctx: Any) -> Any:
        yield self.tag, (value / 3 if self.make is None else self.make(value))
        yield value


def _side(target: str, type_info: Any, make: Any = None) -> list[Any]:

    tag = OutputTag("side", type_info)
    src = _env(target).from_collection([1.0, 2.0], type_info=Types.DOUBLE())
    main = src.key_by(lambda v: v).process(_ToSide(tag, make), output_type=Types.DOUBLE())
    return list(main.get_side_output(tag).execute_and_collect())


def test_side_output_values_are_checked_and_rounded_as_their_tags_type() -> None:
    # PyFlink 2.3.0 serializes a side output's values with its OutputTag's type: a FLOAT tag
    # rounds them (collect gives back Java's digits: [0.33333334, 0.6666667] as floats), and
    # a value that does not fit fails the job ("must be real number, not str").
    assert _side("local", F) == [0.33333334, 0.6666667]
    assert _side("local", Types.TUPLE([S, F]), lambda v: ("a", v / 3)) == [
        ("a", 0.33333334),
        ("a", 0.6666667),
    ]
    assert _side("local", None) == [1 / 3, 2 / 3]  # no type: the values as they are
    with pytest.raises(StepError, match=r"returned 'x' \(str\).*declared type of side output 'side' Float"):
        _side("local", F, lambda v: "x")
    with pytest.raises(
        StepError, match=r"side output 'side' TupleTypeInfo\(String, Long\): field f1: 'y' \(str\)"
    ):
        _side("local", Types.TUPLE([S, Types.LONG()]), lambda v: ("a", "y"))


@pytest.mark.spark
def test_side_output_values_are_checked_and_rounded_on_spark() -> None:
    assert sorted(_side("spark", F)) == [0.33333334, 0.6666667]


def test_a_keyed_stream_collects_its_rows_with_float_parts_as_pyflink() -> None:
    # PyFlink 2.3.0 gives Row(f0='a', f1=('a', 0.1)) and, keyed with key_type FLOAT,
    # Row(f0=0.1, ...): the ROW([key type, stream type]) it collects is typed.
    stream = _env().from_collection([("a", 0.1)], type_info=Types.TUPLE([S, F]))
    assert list(stream.key_by(lambda v: v[0], key_type=S).execute_and_collect()) == [
        Row(f0="a", f1=("a", 0.1))
    ]
    assert list(stream.key_by(lambda v: v[0]).execute_and_collect()) == [Row(f0="a", f1=("a", 0.1))]
    untyped = _env().from_collection([(0.1, 1)])
    assert list(untyped.key_by(lambda v: v[0], key_type=F).execute_and_collect()) == [
        Row(f0=0.1, f1=(0.1, 1))
    ]


class _AtSecondField(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[1])


def _late(tag_type: Any, target: str = "local") -> list[Any]:
    """The late-data side output (tag ``late`` of ``tag_type``) of a 10 ms tumbling window over
    ``(key, ms, amount)`` events: the third arrives after the watermark passed its window."""
    env = _env(target)
    events = Types.TUPLE([S, Types.LONG(), Types.DOUBLE()])
    strategy = (
        WatermarkStrategy.for_monotonous_timestamps()
        .with_timestamp_assigner(_AtSecondField())
        .with_per_element_watermarks()
    )
    late = OutputTag("late", tag_type)
    windows = (
        env.from_collection([("k", 2, 0.5), ("k", 14, 1.0), ("k", 7, 1 / 3)], type_info=events)
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda e: e[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
        .side_output_late_data(late)
        .reduce(lambda a, b: (a[0], b[1], a[2] + b[2]), output_type=events)
    )
    return list(windows.get_side_output(late).execute_and_collect())


def test_late_data_has_its_side_outputs_type() -> None:
    """As any side output (PyFlink serializes the late record with the tag's type): a FLOAT
    field is rounded to 32 bits, a record that does not fit fails the step, naming the tag."""
    assert _late(Types.TUPLE([S, Types.LONG(), Types.DOUBLE()])) == [("k", 7, 1 / 3)]
    assert _late(Types.TUPLE([S, Types.LONG(), F])) == [("k", 7, 0.33333334)]
    with pytest.raises(
        StepError, match=r"record \('k', 7, 0\.333.*declared type of side output 'late' String"
    ):
        _late(S)


@pytest.mark.spark
def test_late_data_has_its_side_outputs_type_on_spark() -> None:
    assert _late(Types.TUPLE([S, Types.LONG(), F]), "spark") == [("k", 7, 0.33333334)]
