"""``StateTtlConfig._to_proto`` / ``_from_proto``: PyFlink's protobuf form of a TTL config
(Flink's ``StateDescriptor.StateTTLConfig`` message), with no JVM and no PyFlink. The expected
bytes are what PyFlink 2.3.0's ``_to_proto(...).SerializeToString()`` gives for the same configs
(checked against its generated ``flink_fn_execution_pb2``), so messages cross between the two."""

from __future__ import annotations

import pytest

from fs_compat.common import Duration, Time
from fs_compat.datastream.state import StateTtlConfig

CS = StateTtlConfig.CleanupStrategies


def _configs() -> list[StateTtlConfig]:
    b = StateTtlConfig.new_builder
    return [
        b(Time.seconds(3)).build(),
        b(Time.days(1)).cleanup_in_rocksdb_compact_filter(17).build(),
        b(Time.minutes(5)).disable_cleanup_in_background().build(),
        b(Time.milliseconds(1)).set_update_type(StateTtlConfig.UpdateType.Disabled).build(),
        (
            b(Time.seconds(3))
            .update_ttl_on_read_and_write()
            .return_expired_if_not_cleaned_up()
            .cleanup_full_snapshot()
            .cleanup_incrementally(7, True)
            .cleanup_in_rocksdb_compact_filter(17)
            .build()
        ),
    ]


@pytest.mark.parametrize("config", _configs(), ids=repr)
def test_a_config_comes_back_equal_from_its_message_and_from_the_messages_bytes(
    config: StateTtlConfig,
) -> None:
    proto = config._to_proto()
    assert StateTtlConfig._from_proto(proto) == config
    assert StateTtlConfig._from_proto(type(proto).FromString(proto.SerializeToString())) == config


def test_the_bytes_are_pyflinks() -> None:
    default = StateTtlConfig.new_builder(Time.seconds(3)).build()
    assert default._to_proto().SerializeToString().hex() == "0801100120b8172a020801"
    every = _configs()[-1]
    assert every._to_proto().SerializeToString().hex() == (
        "080220b8172a18080112021000120808011a04080710011206080222020811"
    )


def test_the_message_has_flinks_fields() -> None:
    proto = _configs()[-1]._to_proto()
    assert (
        type(proto).DESCRIPTOR.full_name == "org.apache.flink.fn_execution.v1.StateDescriptor.StateTTLConfig"
    )
    assert (proto.update_type, proto.state_visibility, proto.ttl_time_characteristic, proto.ttl) == (
        2,
        0,
        0,
        3000,
    )
    strategies = proto.cleanup_strategies
    assert strategies.is_cleanup_in_background
    assert [e.WhichOneof("CleanupStrategy") for e in strategies.strategies] == [
        "empty_strategy",
        "incremental_cleanup_strategy",
        "rocksdb_compact_filter_cleanup_strategy",
    ]
    assert strategies.strategies[1].incremental_cleanup_strategy.cleanup_size == 7
    assert strategies.strategies[2].rocksdb_compact_filter_cleanup_strategy.query_time_after_num_entries == 17


def test_the_periodic_compaction_time_is_not_in_the_message_as_in_pyflink() -> None:
    config = (
        StateTtlConfig.new_builder(Time.days(1))
        .cleanup_in_rocksdb_compact_filter(17, Duration.of_hours(2))
        .build()
    )
    restored = StateTtlConfig._from_proto(config._to_proto())
    strategy = restored.get_cleanup_strategies().get_rocksdb_compact_filter_cleanup_strategy()
    assert strategy is not None
    assert strategy.get_query_time_after_num_entries() == 17
    assert strategy.get_periodic_compaction_time() == Duration.of_days(30)


def test_the_enums_convert_to_and_from_their_proto_values() -> None:
    for kind in (
        StateTtlConfig.UpdateType,
        StateTtlConfig.StateVisibility,
        StateTtlConfig.TtlTimeCharacteristic,
    ):
        for member in kind:
            assert kind._from_proto(member._to_proto()) is member
    for strategy in CS.Strategies:
        assert CS.Strategies._from_proto(strategy._to_proto()) is strategy
