"""``StateTtlConfig``: the RocksDB compaction-filter cleanup settings (the behaviours PyFlink's own
``test_state_ttl_config.py`` checks, without its JVM and protobuf round trips), the builder, its
defaults, validation and the mapping onto ``fs_api_advanced.TtlConfig``."""

from __future__ import annotations

import itertools
import pickle
from typing import Any

import attrs
import cloudpickle
import pytest

from fs_api_advanced import TtlConfig, TtlUpdate, TtlVisibility
from fs_compat.common import Duration, Time
from fs_compat.datastream.state import StateTtlConfig

CS = StateTtlConfig.CleanupStrategies


# The RocksDB compaction-filter cleanup: defaults, explicit values, serialization. -------------------


def _compaction(config: StateTtlConfig) -> Any:
    strategy = config.get_cleanup_strategies().get_rocksdb_compact_filter_cleanup_strategy()
    assert strategy is not None
    return strategy


def test_compaction_filter_cleanup_is_on_by_default() -> None:
    strategy = _compaction(StateTtlConfig.new_builder(Time.hours(6)).build())
    assert strategy.get_query_time_after_num_entries() == 1000
    assert strategy.get_periodic_compaction_time() == Duration.of_days(30)


@pytest.mark.parametrize("no_period", [(), (None,), (0,), (False,), ("",)], ids=repr)
def test_a_missing_or_empty_compaction_period_means_the_default(no_period: tuple[Any, ...]) -> None:
    config = (
        StateTtlConfig.new_builder(Time.minutes(90))
        .cleanup_in_rocksdb_compact_filter(250, *no_period)
        .build()
    )
    strategy = _compaction(config)
    assert strategy.get_query_time_after_num_entries() == 250
    assert strategy.get_periodic_compaction_time() == Duration.of_days(30)


@pytest.mark.parametrize("serializer", [pickle, cloudpickle])
@pytest.mark.parametrize("entries", [None, 42])
def test_serialized_configs_keep_ttl_and_compaction_settings(entries: int | None, serializer: Any) -> None:
    builder = StateTtlConfig.new_builder(Time.seconds(45))
    if entries is not None:
        builder.cleanup_in_rocksdb_compact_filter(entries)
    config = builder.build()
    restored = serializer.loads(serializer.dumps(config))
    assert restored.get_ttl() == Time.seconds(45)
    assert _compaction(restored).get_query_time_after_num_entries() == (1000 if entries is None else entries)
    assert restored == config
    assert restored.to_ttl_config() == config.to_ttl_config()


def test_the_default_compaction_period_is_made_once_by_its_accessor() -> None:
    strategy = CS.RocksdbCompactFilterCleanupStrategy(8)
    first = strategy.get_periodic_compaction_time()
    assert first == Duration.of_days(30)
    assert strategy.get_periodic_compaction_time() is first


@pytest.mark.parametrize(
    "period", [Duration.of_millis(0), Duration.of_minutes(5), Duration.of_days(2)], ids=str
)
def test_an_explicit_compaction_period_is_kept_as_given(period: Duration) -> None:
    config = StateTtlConfig.new_builder(Time.days(3)).cleanup_in_rocksdb_compact_filter(9, period).build()
    assert _compaction(config).get_periodic_compaction_time() is period


# Enums. ---------------------------------------------------------------------------------------------


def test_enum_values_match_pyflink() -> None:
    assert {m.name: m.value for m in StateTtlConfig.UpdateType} == {
        "Disabled": 0,
        "OnCreateAndWrite": 1,
        "OnReadAndWrite": 2,
    }
    assert {m.name: m.value for m in StateTtlConfig.StateVisibility} == {
        "ReturnExpiredIfNotCleanedUp": 0,
        "NeverReturnExpired": 1,
    }
    assert {m.name: m.value for m in StateTtlConfig.TtlTimeCharacteristic} == {"ProcessingTime": 0}
    assert {m.name: m.value for m in CS.Strategies} == {
        "FULL_STATE_SCAN_SNAPSHOT": 0,
        "INCREMENTAL_CLEANUP": 1,
        "ROCKSDB_COMPACTION_FILTER": 2,
    }


# Builder defaults and methods. -----------------------------------------------------------------------


def test_builder_defaults() -> None:
    config = StateTtlConfig.new_builder(Time.seconds(1)).build()
    assert config.get_ttl() == Time.seconds(1)
    assert config.get_update_type() is StateTtlConfig.UpdateType.OnCreateAndWrite
    assert config.get_state_visibility() is StateTtlConfig.StateVisibility.NeverReturnExpired
    assert config.get_ttl_time_characteristic() is StateTtlConfig.TtlTimeCharacteristic.ProcessingTime
    assert config.is_enabled()
    strategies = config.get_cleanup_strategies()
    assert strategies.is_cleanup_in_background()
    assert not strategies.in_full_snapshot()
    incremental = strategies.get_incremental_cleanup_strategy()
    assert incremental is not None
    assert incremental.get_cleanup_size() == 5
    assert incremental.run_cleanup_for_every_record() is False
    assert strategies.get_strategies() == {}


def test_builder_class_can_be_used_directly() -> None:
    config = StateTtlConfig.Builder(Time.seconds(2)).build()
    assert config == StateTtlConfig.new_builder(Time.seconds(2)).build()


def test_every_builder_method_returns_the_builder() -> None:
    builder = StateTtlConfig.new_builder(Time.seconds(1))
    calls = [
        lambda b: b.set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite),
        lambda b: b.update_ttl_on_create_and_write(),
        lambda b: b.update_ttl_on_read_and_write(),
        lambda b: b.set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired),
        lambda b: b.return_expired_if_not_cleaned_up(),
        lambda b: b.never_return_expired(),
        lambda b: b.set_ttl_time_characteristic(StateTtlConfig.TtlTimeCharacteristic.ProcessingTime),
        lambda b: b.use_processing_time(),
        lambda b: b.cleanup_full_snapshot(),
        lambda b: b.cleanup_incrementally(10, True),
        lambda b: b.cleanup_in_rocksdb_compact_filter(100),
        lambda b: b.cleanup_in_rocksdb_compact_filter(100, Duration.of_hours(1)),
        lambda b: b.disable_cleanup_in_background(),
        lambda b: b.set_ttl(Time.minutes(1)),
    ]
    for call in calls:
        assert call(builder) is builder


@pytest.mark.parametrize(
    ("method", "update_type"),
    [
        ("update_ttl_on_create_and_write", StateTtlConfig.UpdateType.OnCreateAndWrite),
        ("update_ttl_on_read_and_write", StateTtlConfig.UpdateType.OnReadAndWrite),
    ],
)
def test_update_type_shortcuts(method: str, update_type: StateTtlConfig.UpdateType) -> None:
    builder = StateTtlConfig.new_builder(Time.seconds(1)).set_update_type(StateTtlConfig.UpdateType.Disabled)
    assert getattr(builder, method)().build().get_update_type() is update_type


@pytest.mark.parametrize(
    ("method", "visibility"),
    [
        ("return_expired_if_not_cleaned_up", StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp),
        ("never_return_expired", StateTtlConfig.StateVisibility.NeverReturnExpired),
    ],
)
def test_visibility_shortcuts(method: str, visibility: StateTtlConfig.StateVisibility) -> None:
    builder = StateTtlConfig.new_builder(Time.seconds(1))
    builder.set_state_visibility(StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)
    builder.never_return_expired()
    assert getattr(builder, method)().build().get_state_visibility() is visibility


def test_use_processing_time() -> None:
    config = StateTtlConfig.new_builder(Time.seconds(1)).use_processing_time().build()
    assert config.get_ttl_time_characteristic() is StateTtlConfig.TtlTimeCharacteristic.ProcessingTime


def test_set_ttl_replaces_the_ttl() -> None:
    config = StateTtlConfig.new_builder(Time.seconds(1)).set_ttl(Time.hours(2)).build()
    assert config.get_ttl() == Time.hours(2)
    # The ttl is checked when built, so a bad one can still be replaced.
    assert StateTtlConfig.new_builder(Time.milliseconds(0)).set_ttl(Time.seconds(1)).build().is_enabled()


def test_cleanup_full_snapshot() -> None:
    strategies = (
        StateTtlConfig.new_builder(Time.seconds(1)).cleanup_full_snapshot().build().get_cleanup_strategies()
    )
    assert strategies.in_full_snapshot()
    assert strategies.get_strategies() == {CS.Strategies.FULL_STATE_SCAN_SNAPSHOT: CS.EMPTY_STRATEGY}
    assert isinstance(CS.EMPTY_STRATEGY, CS.EmptyCleanupStrategy)
    assert isinstance(CS.EMPTY_STRATEGY, CS.CleanupStrategy)


def test_cleanup_incrementally() -> None:
    config = StateTtlConfig.new_builder(Time.seconds(1)).cleanup_incrementally(10, True).build()
    strategy = config.get_cleanup_strategies().get_incremental_cleanup_strategy()
    assert strategy is not None
    assert strategy.get_cleanup_size() == 10
    assert strategy.run_cleanup_for_every_record() is True
    assert isinstance(strategy, CS.CleanupStrategy)


def test_cleanup_in_rocksdb_compact_filter_with_duration() -> None:
    config = (
        StateTtlConfig.new_builder(Time.seconds(1))
        .cleanup_in_rocksdb_compact_filter(500, Duration.of_hours(12))
        .build()
    )
    strategy = config.get_cleanup_strategies().get_rocksdb_compact_filter_cleanup_strategy()
    assert strategy is not None
    assert strategy.get_query_time_after_num_entries() == 500
    assert strategy.get_periodic_compaction_time() == Duration.of_hours(12)


def test_disable_cleanup_in_background() -> None:
    strategies = (
        StateTtlConfig.new_builder(Time.seconds(1))
        .disable_cleanup_in_background()
        .build()
        .get_cleanup_strategies()
    )
    assert not strategies.is_cleanup_in_background()
    assert strategies.get_incremental_cleanup_strategy() is None
    assert strategies.get_rocksdb_compact_filter_cleanup_strategy() is None


def test_disable_cleanup_in_background_keeps_explicit_strategies() -> None:
    strategies = (
        StateTtlConfig.new_builder(Time.seconds(1))
        .disable_cleanup_in_background()
        .cleanup_incrementally(3, False)
        .cleanup_in_rocksdb_compact_filter(7)
        .build()
        .get_cleanup_strategies()
    )
    incremental = strategies.get_incremental_cleanup_strategy()
    rocksdb = strategies.get_rocksdb_compact_filter_cleanup_strategy()
    assert incremental is not None and incremental.get_cleanup_size() == 3
    assert rocksdb is not None and rocksdb.get_query_time_after_num_entries() == 7


def test_cleanup_strategies_constructed_directly() -> None:
    strategies = CS({CS.Strategies.INCREMENTAL_CLEANUP: CS.IncrementalCleanupStrategy(2, False)}, False)
    incremental = strategies.get_incremental_cleanup_strategy()
    assert incremental is not None and incremental.get_cleanup_size() == 2
    assert strategies.get_rocksdb_compact_filter_cleanup_strategy() is None
    config = StateTtlConfig(
        StateTtlConfig.UpdateType.OnReadAndWrite,
        StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp,
        StateTtlConfig.TtlTimeCharacteristic.ProcessingTime,
        Time.seconds(3),
        strategies,
    )
    assert config.get_cleanup_strategies() is strategies
    assert config.to_ttl_config() == TtlConfig(
        3000, TtlUpdate.ON_READ_AND_WRITE, TtlVisibility.RETURN_EXPIRED_IF_NOT_CLEANED_UP, 2, False
    )


# Disabled. ----------------------------------------------------------------------------------------


def test_disabled_update_type() -> None:
    config = (
        StateTtlConfig.new_builder(Time.seconds(1))
        .set_update_type(StateTtlConfig.UpdateType.Disabled)
        .build()
    )
    assert not config.is_enabled()
    assert config.to_ttl_config() is None, "a disabled config gives a state without TTL, as in Flink"


# Immutability, equality, pickling, repr. ---------------------------------------------------------


def test_built_config_is_immutable_and_independent_of_the_builder() -> None:
    builder = StateTtlConfig.new_builder(Time.seconds(1))
    config = builder.build()
    builder.cleanup_incrementally(9, False).update_ttl_on_read_and_write().set_ttl(Time.seconds(5))
    assert config.get_update_type() is StateTtlConfig.UpdateType.OnCreateAndWrite
    assert config.get_ttl() == Time.seconds(1)
    assert config.get_cleanup_strategies().get_strategies() == {}
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        config._ttl = Time.seconds(9)  # type: ignore[misc]
    strategies = config.get_cleanup_strategies()
    strategies.get_strategies()[CS.Strategies.FULL_STATE_SCAN_SNAPSHOT] = CS.EMPTY_STRATEGY
    assert not strategies.in_full_snapshot(), "get_strategies() returns a copy"
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        CS.IncrementalCleanupStrategy(1, False)._cleanup_size = 2  # type: ignore[misc]


def test_equality_and_hash() -> None:
    def build() -> StateTtlConfig:
        return (
            StateTtlConfig.new_builder(Time.minutes(1))
            .update_ttl_on_read_and_write()
            .cleanup_incrementally(3, True)
            .cleanup_full_snapshot()
            .build()
        )

    assert build() == build()
    assert hash(build()) == hash(build())
    assert build() != StateTtlConfig.new_builder(Time.minutes(1)).build()
    assert CS.IncrementalCleanupStrategy(3, True) == CS.IncrementalCleanupStrategy(3, True)
    assert CS.EmptyCleanupStrategy() == CS.EMPTY_STRATEGY


def test_pickle_round_trip_of_every_strategy() -> None:
    config = (
        StateTtlConfig.new_builder(Time.minutes(1))
        .cleanup_full_snapshot()
        .cleanup_incrementally(3, True)
        .cleanup_in_rocksdb_compact_filter(17, Duration.of_hours(1))
        .return_expired_if_not_cleaned_up()
        .build()
    )
    restored = pickle.loads(pickle.dumps(config))
    assert restored == config
    assert (
        restored.get_cleanup_strategies().get_strategies() == config.get_cleanup_strategies().get_strategies()
    )


def test_repr_names_the_settings() -> None:
    text = repr(StateTtlConfig.new_builder(Time.seconds(1)).build())
    assert text.startswith("StateTtlConfig<")
    for part in ("OnCreateAndWrite", "NeverReturnExpired", "ProcessingTime", "1000 ms"):
        assert part in text


def test_importable_where_pyflink_has_it() -> None:
    import fs_compat.datastream.state as state_module

    assert state_module.StateTtlConfig is StateTtlConfig
    assert "StateTtlConfig" in state_module.__all__


# Validation. --------------------------------------------------------------------------------------


@pytest.mark.parametrize("ttl", [Time.milliseconds(0), Time.milliseconds(-1), Time.seconds(-5)], ids=str)
def test_non_positive_ttl_is_a_value_error_naming_the_ttl(ttl: Time) -> None:
    builder = StateTtlConfig.new_builder(ttl)
    with pytest.raises(ValueError, match=rf"ttl must be positive, got ttl={ttl.to_milliseconds()} ms"):
        builder.build()


@pytest.mark.parametrize("ttl", [1000, 1.5, "10 s", None, object()], ids=repr)
def test_ttl_of_the_wrong_type_is_a_type_error(ttl: Any) -> None:
    with pytest.raises(TypeError, match="ttl must be a Time"):
        StateTtlConfig.new_builder(ttl).build()


def test_duration_is_accepted_as_the_ttl() -> None:
    config = StateTtlConfig.new_builder(Duration.of_seconds(2)).build()  # type: ignore[arg-type]
    ttl = config.to_ttl_config()
    assert ttl is not None and ttl.ttl_ms == 2000


@pytest.mark.parametrize(
    ("configure", "message"),
    [
        (lambda b: b.set_update_type("OnReadAndWrite"), "update_type must be a StateTtlConfig.UpdateType"),
        (lambda b: b.set_update_type(2), "update_type must be a StateTtlConfig.UpdateType"),
        (lambda b: b.set_state_visibility(None), "state_visibility must be a StateTtlConfig.StateVisibility"),
        (
            lambda b: b.set_ttl_time_characteristic("EventTime"),
            "ttl_time_characteristic must be a StateTtlConfig.TtlTimeCharacteristic",
        ),
    ],
)
def test_wrong_enum_types_are_type_errors_when_built(configure: Any, message: str) -> None:
    builder = StateTtlConfig.new_builder(Time.seconds(1))
    configure(builder)
    with pytest.raises(TypeError, match=message):
        builder.build()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda b: b.cleanup_incrementally(0, False), ValueError, "cleanup_size must be >= 1"),
        (lambda b: b.cleanup_incrementally(-3, False), ValueError, "cleanup_size must be >= 1"),
        (lambda b: b.cleanup_incrementally("5", False), TypeError, "cleanup_size must be an int"),
        (
            lambda b: b.cleanup_incrementally(5, "yes"),
            TypeError,
            "run_cleanup_for_every_record must be a bool",
        ),
        (lambda b: b.cleanup_in_rocksdb_compact_filter("17"), TypeError, "query_time_after_num_entries"),
        (lambda b: b.cleanup_in_rocksdb_compact_filter(-1), ValueError, "query_time_after_num_entries"),
        (lambda b: b.cleanup_in_rocksdb_compact_filter(17, 5), TypeError, "periodic_compaction_time"),
        (
            lambda b: b.cleanup_in_rocksdb_compact_filter(17, Time.days(1)),
            TypeError,
            "periodic_compaction_time",
        ),
    ],
)
def test_bad_cleanup_arguments(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call(StateTtlConfig.new_builder(Time.seconds(1)))


def test_bad_cleanup_strategies_are_type_errors() -> None:
    with pytest.raises(TypeError, match="strategies keys must be"):
        CS({"INCREMENTAL_CLEANUP": CS.IncrementalCleanupStrategy(1, False)}, True)
    with pytest.raises(TypeError, match="must be a CleanupStrategy"):
        CS({CS.Strategies.INCREMENTAL_CLEANUP: 5}, True)
    with pytest.raises(TypeError, match="is_cleanup_in_background must be a bool"):
        CS({}, 1)
    with pytest.raises(TypeError, match=r"cleanup_strategies must be a StateTtlConfig\.CleanupStrategies"):
        StateTtlConfig(
            StateTtlConfig.UpdateType.OnCreateAndWrite,
            StateTtlConfig.StateVisibility.NeverReturnExpired,
            StateTtlConfig.TtlTimeCharacteristic.ProcessingTime,
            Time.seconds(1),
            {},  # type: ignore[arg-type]
        )


# Mapping onto fs_api_advanced.TtlConfig. --------------------------------------------------------------

UPDATES = {
    StateTtlConfig.UpdateType.OnCreateAndWrite: TtlUpdate.ON_CREATE_AND_WRITE,
    StateTtlConfig.UpdateType.OnReadAndWrite: TtlUpdate.ON_READ_AND_WRITE,
}
VISIBILITIES = {
    StateTtlConfig.StateVisibility.NeverReturnExpired: TtlVisibility.NEVER_RETURN_EXPIRED,
    StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp: (
        TtlVisibility.RETURN_EXPIRED_IF_NOT_CLEANED_UP
    ),
}


@pytest.mark.parametrize(("update", "visibility"), list(itertools.product(UPDATES, VISIBILITIES)))
def test_to_ttl_config_maps_update_type_and_visibility(
    update: StateTtlConfig.UpdateType, visibility: StateTtlConfig.StateVisibility
) -> None:
    config = (
        StateTtlConfig.new_builder(Time.minutes(2))
        .set_update_type(update)
        .set_state_visibility(visibility)
        .build()
    )
    assert config.to_ttl_config() == TtlConfig(
        ttl_ms=120_000,
        update=UPDATES[update],
        visibility=VISIBILITIES[visibility],
        incremental_cleanup_size=5,
        cleanup_full_snapshot=False,
    )


@pytest.mark.parametrize(
    ("configure", "size", "full_snapshot"),
    [
        (lambda b: b, 5, False),
        (lambda b: b.cleanup_incrementally(12, False), 12, False),
        (lambda b: b.disable_cleanup_in_background(), 0, False),
        (lambda b: b.disable_cleanup_in_background().cleanup_incrementally(7, True), 7, False),
        (lambda b: b.cleanup_full_snapshot(), 5, True),
        (lambda b: b.disable_cleanup_in_background().cleanup_full_snapshot(), 0, True),
        (lambda b: b.cleanup_in_rocksdb_compact_filter(17), 5, False),
    ],
    ids=[
        "default",
        "incremental",
        "no-background",
        "no-background+incremental",
        "full",
        "full-only",
        "rocksdb",
    ],
)
def test_to_ttl_config_maps_cleanup(configure: Any, size: int, full_snapshot: bool) -> None:
    builder = StateTtlConfig.new_builder(Time.seconds(1))
    configure(builder)
    ttl = builder.build().to_ttl_config()
    assert ttl is not None
    assert ttl.incremental_cleanup_size == size
    assert ttl.cleanup_full_snapshot is full_snapshot
