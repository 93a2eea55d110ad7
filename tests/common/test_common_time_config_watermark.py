"""Time, Duration, Instant, Configuration and WatermarkStrategy."""

from __future__ import annotations

import copy
import importlib
import pickle
from typing import Any

import pytest

from fs_compat.common import (
    Configuration,
    Duration,
    Instant,
    Row,
    Time,
    TimestampAssigner,
    Types,
    WatermarkStrategy,
)

MIN_LONG = -(2**63)

# Time -----------------------------------------------------------------------------------------


def test_time_factories_and_str() -> None:
    assert Time.milliseconds(5).to_milliseconds() == 5
    assert Time.seconds(2).to_milliseconds() == 2_000
    assert Time.minutes(2).to_milliseconds() == 120_000
    assert Time.hours(1).to_milliseconds() == 3_600_000
    assert Time.days(1).to_milliseconds() == 86_400_000
    assert str(Time.seconds(1)) == "1000 ms"
    assert str(Time(0)) == "0 ms"


def test_time_equality_and_hash() -> None:
    assert Time.seconds(60) == Time.minutes(1)
    assert Time.seconds(1) != Time.seconds(2)
    assert Time.seconds(1) != 1000
    assert Time.seconds(1) != Duration.of_seconds(1)
    assert len({Time.seconds(60), Time.minutes(1)}) == 1
    assert pickle.loads(pickle.dumps(Time.hours(3))) == Time.hours(3)


def test_time_refuses_non_ints() -> None:
    with pytest.raises(TypeError, match="milliseconds must be an int"):
        Time(1.5)  # type: ignore[arg-type]


# Duration -------------------------------------------------------------------------------------


def test_duration_factories() -> None:
    assert Duration.of_days(1).to_milliseconds() == 86_400_000
    assert Duration.of_hours(2).to_milliseconds() == 7_200_000
    assert Duration.of_minutes(3).to_milliseconds() == 180_000
    assert Duration.of_seconds(4).to_milliseconds() == 4_000
    assert Duration.of_millis(5).to_milliseconds() == 5
    assert Duration.of_nanos(1_999_999).to_milliseconds() == 1
    assert Duration.of_nanos(-1).to_milliseconds() == -1  # Java's toMillis rounds down
    assert Duration.of_seconds(1) == Duration.of_millis(1000)
    assert Duration.of_seconds(1) != Duration.of_millis(1001)
    assert hash(Duration.of_minutes(1)) == hash(Duration.of_seconds(60))
    assert pickle.loads(pickle.dumps(Duration.of_millis(7))) == Duration.of_millis(7)


@pytest.mark.parametrize(
    ("duration", "text"),
    [
        (Duration.of_seconds(0), "PT0S"),
        (Duration.of_seconds(20), "PT20S"),
        (Duration.of_hours(1), "PT1H"),
        (Duration.of_seconds(3_661), "PT1H1M1S"),
        (Duration.of_millis(500), "PT0.5S"),
        (Duration.of_millis(-500), "PT-0.5S"),
        (Duration.of_millis(-1500), "PT-1.5S"),
        (Duration.of_days(2), "PT48H"),
        (Duration.of_nanos(1), "PT0.000000001S"),
    ],
)
def test_duration_str_is_javas(duration: Duration, text: str) -> None:
    assert str(duration) == text


# Instant --------------------------------------------------------------------------------------


@pytest.mark.parametrize("millis", [0, 1, 999, 1000, 1_700_000_000_123, -1, -999, -1000, -1001])
def test_instant_epoch_millis_round_trip(millis: int) -> None:
    instant = Instant.of_epoch_milli(millis)
    assert 0 <= instant.nanos < 1_000_000_000
    assert instant.to_epoch_milli() == millis
    assert instant == Instant.of_epoch_milli(millis)


def test_instant_repr_and_order() -> None:
    assert repr(Instant(1, 2)) == "Instant<1, 2>"
    assert Instant.of_epoch_milli(-1) < Instant.of_epoch_milli(0) < Instant.of_epoch_milli(1)


# Configuration --------------------------------------------------------------------------------


def test_configuration_getters_return_defaults_for_missing_keys() -> None:
    config = Configuration()
    assert config.get_string("k", "d") == "d"
    assert config.get_integer("k", 3) == 3
    assert config.get_boolean("k", True) is True
    assert config.get_float("k", 1) == 1.0
    assert isinstance(config.get_float("k", 1), float)
    assert config.get_bytearray("k", bytearray(b"x")) == bytearray(b"x")
    assert not config.contains_key("k")


def test_configuration_typed_values_and_conversions() -> None:
    config = (
        Configuration()
        .set_string("s", "hello")
        .set_integer("i", 42)
        .set_boolean("b", False)
        .set_float("f", 2.5)
        .set_bytearray("bytes", bytearray(b"\x00\x01"))
        .set_string("i_str", " 7 ")
        .set_string("b_str", "TRUE")
    )
    assert config.get_string("s", "") == "hello"
    assert config.get_integer("i", 0) == 42
    assert config.get_string("i", "") == "42"
    assert config.get_boolean("b", True) is False
    assert config.get_string("b", "") == "false"
    assert config.get_float("f", 0.0) == 2.5
    assert config.get_string("f", "") == "2.5"
    assert config.get_float("i", 0.0) == 42.0
    assert config.get_bytearray("bytes", bytearray()) == bytearray(b"\x00\x01")
    assert config.get_integer("i_str", 0) == 7
    assert config.get_boolean("b_str", False) is True
    assert config.contains_key("s")
    assert config.key_set() == {"s", "i", "b", "f", "bytes", "i_str", "b_str"}
    assert config.keys()[:3] == ["s", "i", "b"]


def test_configuration_bad_conversions_name_key_and_value() -> None:
    config = Configuration().set_string("n", "abc").set_float("f", 1.5)
    with pytest.raises(ValueError, match="Could not parse value 'abc' for key 'n'"):
        config.get_integer("n", 0)
    with pytest.raises(ValueError, match="'abc' for key 'n'"):
        config.get_boolean("n", False)
    with pytest.raises(ValueError, match=r"'1\.5' for key 'f'"):
        config.get_integer("f", 0)
    with pytest.raises(ValueError):
        config.get_bytearray("n", bytearray())
    with pytest.raises(TypeError):
        config.set_integer("x", "1")  # type: ignore[arg-type]


def test_configuration_to_dict_from_dict_add_all_remove_copy() -> None:
    config = Configuration().set_integer("parallelism.default", 2).set_boolean("flag", True)
    assert config.to_dict() == {"parallelism.default": "2", "flag": "true"}
    from_dict = Configuration.from_dict({"a": "1", "b": "x"})
    assert from_dict.get_integer("a", 0) == 1
    other = Configuration(from_dict)
    assert other == from_dict
    other.set_string("c", "y")
    assert not from_dict.contains_key("c")  # a copy, not a view
    merged = Configuration().add_all(from_dict).add_all(from_dict, prefix="p.")
    assert merged.to_dict() == {"a": "1", "b": "x", "p.a": "1", "p.b": "x"}
    assert merged.remove_config("a") is True
    assert merged.remove_config("a") is False
    target: dict[str, Any] = {}
    config.add_all_to_dict(target)
    assert target == {"parallelism.default": 2, "flag": True}
    clone = copy.deepcopy(config)
    assert clone == config and clone is not config
    assert hash(clone) == hash(config)
    assert str(Configuration().set_string("a", "1")) == "{a=1}"
    assert str(Configuration().set_string("my.password", "hunter2")) == "{my.password=******}"


def test_configuration_parse_list_value() -> None:
    assert Configuration.parse_list_value("") == []
    assert Configuration.parse_list_value("a.jar;b.jar") == ["a.jar", "b.jar"]
    assert Configuration.parse_list_value("['a.jar', 'b.jar']") == ["a.jar", "b.jar"]


def test_configuration_without_jvm() -> None:
    with pytest.raises(NotImplementedError, match="without a JVM"):
        Configuration(j_configuration=object())


# WatermarkStrategy ----------------------------------------------------------------------------


class EventTime(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[1])


def test_watermark_strategy_delays() -> None:
    assert WatermarkStrategy.for_monotonous_timestamps().max_out_of_orderness_ms == 0
    bounded = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(5))
    assert bounded.max_out_of_orderness_ms == 5_000
    assert WatermarkStrategy.no_watermarks().max_out_of_orderness_ms is None
    with pytest.raises(ValueError, match="negative"):
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(-1))
    with pytest.raises(TypeError, match="must be a Duration"):
        WatermarkStrategy.for_bounded_out_of_orderness(5000)  # type: ignore[arg-type]


def test_without_assigner_the_record_timestamp_is_kept() -> None:
    ws = WatermarkStrategy.for_monotonous_timestamps()
    assert ws.extract_timestamp("x", 17) == 17
    assert ws.extract_timestamp("x", None) is None


def test_with_timestamp_assigner_is_immutable_and_takes_instances_or_callables() -> None:
    base = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(10))
    with_class = base.with_timestamp_assigner(EventTime())
    with_fn = base.with_timestamp_assigner(lambda value, ts: value[1] * 2)
    assert base.extract_timestamp(("a", 3), None) is None
    assert with_class.extract_timestamp(("a", 3), None) == 3
    assert with_fn.extract_timestamp(("a", 3), 99) == 6
    assert with_class.max_out_of_orderness_ms == 10
    with pytest.raises(TypeError, match="TimestampAssigner or a callable"):
        base.with_timestamp_assigner(42)  # type: ignore[arg-type]


def test_assigner_sees_min_long_when_the_record_has_no_timestamp() -> None:
    seen: list[int] = []

    def remember(value: Any, ts: int) -> int:
        seen.append(ts)
        return 1

    ws = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(remember)
    ws.extract_timestamp("x", None)
    ws.extract_timestamp("x", 5)
    assert seen == [MIN_LONG, 5]


def test_assigner_must_return_an_int() -> None:
    ws = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda v, ts: 1.5,  # type: ignore[arg-type,return-value]
    )
    with pytest.raises(TypeError, match=r"must return an int.*1\.5.*'x'"):
        ws.extract_timestamp("x", None)


def test_idleness_and_alignment_are_accepted() -> None:
    base = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(20))
    idle = base.with_idleness(Duration.of_minutes(1))
    aligned = idle.with_watermark_alignment("g", Duration.of_seconds(20), Duration.of_seconds(1))
    assert aligned.max_out_of_orderness_ms == 20_000
    assert idle is not base
    assert "with_idleness" in repr(idle)
    with pytest.raises(TypeError):
        base.with_idleness(60)  # type: ignore[arg-type]


def test_strategy_with_class_assigner_pickles() -> None:
    ws = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(EventTime())
    clone = pickle.loads(pickle.dumps(ws))
    assert clone.extract_timestamp(("a", 8), None) == 8
    assert clone.max_out_of_orderness_ms == 0


# Module layout --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("fs_compat.common.typeinfo", ["Types", "TypeInformation", "RowTypeInfo", "TupleTypeInfo"]),
        ("fs_compat.common.types", ["Row", "RowKind"]),
        ("fs_compat.common.time", ["Time", "Duration", "Instant"]),
        ("fs_compat.common.configuration", ["Configuration"]),
        ("fs_compat.common.watermark_strategy", ["WatermarkStrategy", "TimestampAssigner"]),
    ],
)
def test_pyflink_module_paths_re_export_the_same_objects(module: str, names: list[str]) -> None:
    mod = importlib.import_module(module)
    common = importlib.import_module("fs_compat.common")
    for name in names:
        assert getattr(mod, name) is getattr(common, name)


def test_common_does_not_import_pyspark_eagerly() -> None:
    import subprocess
    import sys

    code = "import sys, fs_compat.common; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_row_and_types_work_together_in_a_from_collection_style_round_trip() -> None:
    info = Types.ROW_NAMED(["word", "count"], [Types.STRING(), Types.LONG()])
    codec = info.codec()
    assert codec.decode(codec.encode(Row(word="a", count=2))).count == 2
