"""The protobuf message PyFlink's ``StateTtlConfig._to_proto`` gives: Flink's
``org.apache.flink.fn_execution.v1.StateDescriptor.StateTTLConfig`` (``flink-fn-execution.proto``),
described here field by field with Flink's names and numbers, so the messages are wire-compatible
with PyFlink's (``SerializeToString`` / ``ParseFromString`` either way). Built on first use in a
private descriptor pool, from ``protobuf`` (a dependency; no JVM and no PyFlink needed).

>>> message = state_ttl_config_message()()
>>> message.ttl = 1000
>>> message.cleanup_strategies.is_cleanup_in_background = True
>>> type(message).FromString(message.SerializeToString()).ttl
1000
"""

from __future__ import annotations

import functools
from typing import Any

_PACKAGE = "org.apache.flink.fn_execution.v1"

# Field types and labels of descriptor.proto (FieldDescriptorProto.Type / Label).
_INT32, _INT64, _BOOL, _MESSAGE, _ENUM = 5, 3, 8, 11, 14
_OPTIONAL, _REPEATED = 1, 3


def _fields(message: Any, *fields: tuple[str, int, int, int, str | None, int | None]) -> None:
    """Add ``(name, number, type, label, type name, oneof index)`` fields to ``message``."""
    for name, number, kind, label, type_name, oneof in fields:
        field = message.field.add(name=name, number=number, type=kind, label=label)
        if type_name is not None:
            field.type_name = type_name
        if oneof is not None:
            field.oneof_index = oneof


def _enum(message: Any, name: str, *values: str) -> None:
    enum = message.enum_type.add(name=name)
    for number, value in enumerate(values):
        enum.value.add(name=value, number=number)


@functools.cache
def state_ttl_config_message() -> Any:
    """The ``StateDescriptor.StateTTLConfig`` message class."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    ttl_name = f".{_PACKAGE}.StateDescriptor.StateTTLConfig"
    cs_name = f"{ttl_name}.CleanupStrategies"
    file = descriptor_pb2.FileDescriptorProto(
        name="fs_compat/flink_fn_execution_state_ttl.proto", package=_PACKAGE, syntax="proto3"
    )
    ttl = file.message_type.add(name="StateDescriptor").nested_type.add(name="StateTTLConfig")
    _enum(ttl, "UpdateType", "Disabled", "OnCreateAndWrite", "OnReadAndWrite")
    _enum(ttl, "StateVisibility", "ReturnExpiredIfNotCleanedUp", "NeverReturnExpired")
    _enum(ttl, "TtlTimeCharacteristic", "ProcessingTime")
    _fields(
        ttl,
        ("update_type", 1, _ENUM, _OPTIONAL, f"{ttl_name}.UpdateType", None),
        ("state_visibility", 2, _ENUM, _OPTIONAL, f"{ttl_name}.StateVisibility", None),
        ("ttl_time_characteristic", 3, _ENUM, _OPTIONAL, f"{ttl_name}.TtlTimeCharacteristic", None),
        ("ttl", 4, _INT64, _OPTIONAL, None, None),
        ("cleanup_strategies", 5, _MESSAGE, _OPTIONAL, cs_name, None),
    )
    cs = ttl.nested_type.add(name="CleanupStrategies")
    _enum(cs, "Strategies", "FULL_STATE_SCAN_SNAPSHOT", "INCREMENTAL_CLEANUP", "ROCKSDB_COMPACTION_FILTER")
    _enum(cs, "EmptyCleanupStrategy", "EMPTY_STRATEGY")
    _fields(
        cs.nested_type.add(name="IncrementalCleanupStrategy"),
        ("cleanup_size", 1, _INT32, _OPTIONAL, None, None),
        ("run_cleanup_for_every_record", 2, _BOOL, _OPTIONAL, None, None),
    )
    _fields(
        cs.nested_type.add(name="RocksdbCompactFilterCleanupStrategy"),
        ("query_time_after_num_entries", 1, _INT64, _OPTIONAL, None, None),
    )
    entry = cs.nested_type.add(name="MapStrategiesEntry")
    entry.oneof_decl.add(name="CleanupStrategy")
    _fields(
        entry,
        ("strategy", 1, _ENUM, _OPTIONAL, f"{cs_name}.Strategies", None),
        ("empty_strategy", 2, _ENUM, _OPTIONAL, f"{cs_name}.EmptyCleanupStrategy", 0),
        ("incremental_cleanup_strategy", 3, _MESSAGE, _OPTIONAL, f"{cs_name}.IncrementalCleanupStrategy", 0),
        (
            "rocksdb_compact_filter_cleanup_strategy",
            4,
            _MESSAGE,
            _OPTIONAL,
            f"{cs_name}.RocksdbCompactFilterCleanupStrategy",
            0,
        ),
    )
    _fields(
        cs,
        ("is_cleanup_in_background", 1, _BOOL, _OPTIONAL, None, None),
        ("strategies", 2, _MESSAGE, _REPEATED, f"{cs_name}.MapStrategiesEntry", None),
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(ttl_name[1:]))
