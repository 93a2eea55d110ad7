"""PyFlink's ``StateTtlConfig``: state time-to-live in processing time, mapped onto
``fs_api_advanced.TtlConfig``.

Semantics (Flink's): every stored value - each list element and each map entry on its own - carries
its last-access time; it has expired when ``now >= last_access + ttl``. ``OnCreateAndWrite`` refreshes
the time on writes, ``OnReadAndWrite`` also on successful reads. Reading an expired value removes it;
it is returned (that once) only under ``ReturnExpiredIfNotCleanedUp``. Background cleanup is on by
default: every state access checks up to 5 other entries of the same state (Flink's incremental
cleanup on the heap backend), whatever their key.

Where this differs from PyFlink:

- ``UpdateType.Disabled`` switches TTL off, as in Flink: a descriptor given a disabled config
  (``is_enabled()`` False) makes an ordinary state, without timestamps.
- ``run_cleanup_for_every_record`` is kept but has no effect: cleanup runs on state accesses only.
- ``cleanup_in_rocksdb_compact_filter`` is kept for the API; there is no RocksDB compaction to hook
  (as with Flink's heap backend, where it is ignored too).
- The config is validated when built (``ttl`` must be a positive ``Time``): a bad value raises
  ``ValueError``/``TypeError`` naming it, where PyFlink defers the error to the JVM.
- A ``Duration`` is accepted wherever a ``Time`` is (PyFlink's docs show ``Duration``).

>>> from fs_compat.common import Time
>>> config = (StateTtlConfig.new_builder(Time.seconds(1))
...           .update_ttl_on_read_and_write()
...           .return_expired_if_not_cleaned_up()
...           .build())
>>> config.get_update_type(), config.is_enabled()
(<UpdateType.OnReadAndWrite: 2>, True)
>>> config.to_ttl_config().ttl_ms
1000
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from fs_api_advanced import TtlConfig, TtlUpdate, TtlVisibility

if TYPE_CHECKING:
    from fs_compat.common import Duration, Time

__all__ = ["StateTtlConfig"]

#: Flink's default cleanup budgets and periodic compaction time.
_DEFAULT_INCREMENTAL_CLEANUP_SIZE = 5
_DEFAULT_QUERY_TIME_AFTER_NUM_ENTRIES = 1000
_DEFAULT_PERIODIC_COMPACTION_DAYS = 30


def _type_name(value: object) -> str:
    return type(value).__name__


def _ttl_milliseconds(what: str, ttl: object) -> int:
    """``ttl.to_milliseconds()`` as an int; TypeError when ``ttl`` is not a Time (or Duration)."""
    to_ms = getattr(ttl, "to_milliseconds", None)
    if not callable(to_ms):
        raise TypeError(
            f"{what} must be a Time (e.g. Time.seconds(10) from fs_compat.common), "
            f"got {ttl!r} ({_type_name(ttl)})"
        )
    ms = to_ms()
    if isinstance(ms, bool) or not isinstance(ms, int):
        raise TypeError(f"{what} must be a whole number of milliseconds, got {ttl!r} ({ms!r} ms)")
    return ms


def _check_int(what: str, value: object, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {value!r} ({_type_name(value)})")
    if value < minimum:
        raise ValueError(f"{what} must be >= {minimum}, got {value}")
    return value


def _check_bool(what: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be a bool, got {value!r} ({_type_name(value)})")
    return value


def _cleanup_size(value: object) -> int:
    return _check_int("cleanup_size", value, minimum=1)


def _run_cleanup_for_every_record(value: object) -> bool:
    return _check_bool("run_cleanup_for_every_record", value)


def _query_time_after_num_entries(value: object) -> int:
    return _check_int("query_time_after_num_entries", value, minimum=0)


def _is_cleanup_in_background(value: object) -> bool:
    return _check_bool("is_cleanup_in_background", value)


@functools.cache
def _default_periodic_compaction_time() -> Duration:
    from fs_compat.common import Duration

    return Duration.of_days(_DEFAULT_PERIODIC_COMPACTION_DAYS)


def _periodic_compaction_time(value: object) -> Duration | None:
    """None for "not given" (PyFlink treats every falsy value so, e.g. 0 or ''); else a Duration."""
    if value is None or (isinstance(value, (bool, int, float, str, bytes, tuple, list, dict)) and not value):
        return None
    from fs_compat.common import Duration

    if isinstance(value, Duration):
        return value
    raise TypeError(
        "periodic_compaction_time must be a Duration (e.g. Duration.of_days(30) from fs_compat.common) "
        f"or None, got {value!r} ({_type_name(value)})"
    )


def _strategies(value: object) -> tuple[tuple[Any, Any], ...]:
    """The strategies, as an immutable tuple of (Strategies, CleanupStrategy) in ordinal order."""
    if not isinstance(value, Mapping):
        raise TypeError(
            f"strategies must be a dict of Strategies to CleanupStrategy, got {_type_name(value)}"
        )
    cs = StateTtlConfig.CleanupStrategies
    for key, strategy in value.items():
        if not isinstance(key, cs.Strategies):
            raise TypeError(f"strategies keys must be CleanupStrategies.Strategies, got {key!r}")
        if not isinstance(strategy, cs.CleanupStrategy):
            raise TypeError(f"strategies[{key.name}] must be a CleanupStrategy, got {strategy!r}")
    return tuple(sorted(value.items(), key=lambda kv: int(kv[0].value)))


def _enum_validator(enum_type_name: str) -> Any:
    def check(_inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
        expected = getattr(StateTtlConfig, enum_type_name)
        if not isinstance(value, expected):
            raise TypeError(
                f"{attribute.name.lstrip('_')} must be a StateTtlConfig.{enum_type_name}, "
                f"got {value!r} ({_type_name(value)})"
            )

    return check


def _ttl_validator(_inst: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    ms = _ttl_milliseconds("StateTtlConfig ttl", value)
    if ms <= 0:
        raise ValueError(f"StateTtlConfig ttl must be positive, got ttl={value} ({ms} ms)")


def _cleanup_strategies_validator(_inst: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, StateTtlConfig.CleanupStrategies):
        raise TypeError(
            f"cleanup_strategies must be a StateTtlConfig.CleanupStrategies, got {_type_name(value)}"
        )


@attrs.frozen(repr=False)
class StateTtlConfig:
    """Time-to-live of a state: build one with ``StateTtlConfig.new_builder(Time.xxx(n))`` and pass
    it to ``StateDescriptor.enable_time_to_live``. Immutable.

    >>> from fs_compat.common import Time
    >>> config = StateTtlConfig.new_builder(Time.minutes(5)).build()
    >>> config.get_update_type(), config.get_state_visibility()
    (<UpdateType.OnCreateAndWrite: 1>, <StateVisibility.NeverReturnExpired: 1>)
    >>> config.get_cleanup_strategies().get_incremental_cleanup_strategy().get_cleanup_size()
    5
    """

    class UpdateType(enum.Enum):
        """When the last-access time, which prolongs a value's life, is refreshed."""

        Disabled = 0
        """TTL is disabled: state never expires."""
        OnCreateAndWrite = 1
        """Set when a value is created and on every write."""
        OnReadAndWrite = 2
        """As OnCreateAndWrite, and also on every read."""

        def _to_proto(self) -> int:
            """The value of Flink's protobuf enum of the same name (PyFlink's ``_to_proto``)."""
            return int(self.value)

        @staticmethod
        def _from_proto(proto: int) -> StateTtlConfig.UpdateType:
            return StateTtlConfig.UpdateType(proto)

    class StateVisibility(enum.Enum):
        """Whether an expired value that is not cleaned up yet may be returned."""

        ReturnExpiredIfNotCleanedUp = 0
        """Return it (once: reading removes it)."""
        NeverReturnExpired = 1
        """Never return an expired value."""

        def _to_proto(self) -> int:
            """The value of Flink's protobuf enum of the same name (PyFlink's ``_to_proto``)."""
            return int(self.value)

        @staticmethod
        def _from_proto(proto: int) -> StateTtlConfig.StateVisibility:
            return StateTtlConfig.StateVisibility(proto)

    class TtlTimeCharacteristic(enum.Enum):
        """The time scale of TTL (only processing time)."""

        ProcessingTime = 0

        def _to_proto(self) -> int:
            """The value of Flink's protobuf enum of the same name (PyFlink's ``_to_proto``)."""
            return int(self.value)

        @staticmethod
        def _from_proto(proto: int) -> StateTtlConfig.TtlTimeCharacteristic:
            return StateTtlConfig.TtlTimeCharacteristic(proto)

    _update_type: StateTtlConfig.UpdateType = attrs.field(validator=_enum_validator("UpdateType"))
    _state_visibility: StateTtlConfig.StateVisibility = attrs.field(
        validator=_enum_validator("StateVisibility")
    )
    _ttl_time_characteristic: StateTtlConfig.TtlTimeCharacteristic = attrs.field(
        validator=_enum_validator("TtlTimeCharacteristic")
    )
    _ttl: Time = attrs.field(validator=_ttl_validator)
    _cleanup_strategies: StateTtlConfig.CleanupStrategies = attrs.field(
        validator=_cleanup_strategies_validator
    )

    @staticmethod
    def new_builder(ttl: Time) -> StateTtlConfig.Builder:
        """A builder with PyFlink's defaults and this ``ttl``."""
        return StateTtlConfig.Builder(ttl)

    def get_update_type(self) -> StateTtlConfig.UpdateType:
        """When an entry's time-to-live restarts (on create and write, or also on read)."""
        return self._update_type

    def get_state_visibility(self) -> StateTtlConfig.StateVisibility:
        """Whether an expired entry not yet cleaned up may still be read."""
        return self._state_visibility

    def get_ttl(self) -> Time:
        """How long an entry lives."""
        return self._ttl

    def get_ttl_time_characteristic(self) -> StateTtlConfig.TtlTimeCharacteristic:
        """The time TTL is measured in (processing time)."""
        return self._ttl_time_characteristic

    def get_cleanup_strategies(self) -> StateTtlConfig.CleanupStrategies:
        """How expired entries are removed."""
        return self._cleanup_strategies

    def is_enabled(self) -> bool:
        """False when the update type is ``Disabled``."""
        return self._update_type is not StateTtlConfig.UpdateType.Disabled

    def to_ttl_config(self) -> TtlConfig | None:
        """The state layer's TTL config, or None when TTL is disabled (the state gets no TTL).

        >>> from fs_compat.common import Time
        >>> b = StateTtlConfig.new_builder(Time.seconds(3)).cleanup_incrementally(10, False)
        >>> b.cleanup_full_snapshot().build().to_ttl_config()  # doctest: +NORMALIZE_WHITESPACE
        TtlConfig(ttl_ms=3000, update=<TtlUpdate.ON_CREATE_AND_WRITE: 'on_create_and_write'>,
                  visibility=<TtlVisibility.NEVER_RETURN_EXPIRED: 'never_return_expired'>,
                  incremental_cleanup_size=10, cleanup_full_snapshot=True)
        """
        if not self.is_enabled():
            return None
        ut, sv = StateTtlConfig.UpdateType, StateTtlConfig.StateVisibility
        strategies = self._cleanup_strategies
        incremental = strategies.get_incremental_cleanup_strategy()
        return TtlConfig(
            ttl_ms=_ttl_milliseconds("StateTtlConfig ttl", self._ttl),
            update=(
                TtlUpdate.ON_READ_AND_WRITE
                if self._update_type is ut.OnReadAndWrite
                else TtlUpdate.ON_CREATE_AND_WRITE
            ),
            visibility=(
                TtlVisibility.RETURN_EXPIRED_IF_NOT_CLEANED_UP
                if self._state_visibility is sv.ReturnExpiredIfNotCleanedUp
                else TtlVisibility.NEVER_RETURN_EXPIRED
            ),
            incremental_cleanup_size=0 if incremental is None else incremental.get_cleanup_size(),
            cleanup_full_snapshot=strategies.in_full_snapshot(),
        )

    def _to_proto(self) -> Any:
        """This config as PyFlink's protobuf message (Flink's ``StateDescriptor.StateTTLConfig``,
        wire-compatible with PyFlink's): what PyFlink sends its Java operators. As in PyFlink, a
        compaction filter's periodic compaction time is not part of it.

        >>> from fs_compat.common import Time
        >>> config = StateTtlConfig.new_builder(Time.seconds(2)).cleanup_incrementally(7, True).build()
        >>> restored = StateTtlConfig._from_proto(config._to_proto())
        >>> restored == config
        True
        """
        from ._ttl_proto import state_ttl_config_message

        proto = state_ttl_config_message()()
        proto.update_type = self._update_type._to_proto()
        proto.state_visibility = self._state_visibility._to_proto()
        proto.ttl_time_characteristic = self._ttl_time_characteristic._to_proto()
        proto.ttl = _ttl_milliseconds("StateTtlConfig ttl", self._ttl)
        proto.cleanup_strategies.CopyFrom(self._cleanup_strategies._to_proto())
        return proto

    @staticmethod
    def _from_proto(proto: Any) -> StateTtlConfig:
        """The config of PyFlink's protobuf message (``_to_proto``'s, or PyFlink's own)."""
        from fs_compat.common import Time

        return StateTtlConfig(
            StateTtlConfig.UpdateType._from_proto(proto.update_type),
            StateTtlConfig.StateVisibility._from_proto(proto.state_visibility),
            StateTtlConfig.TtlTimeCharacteristic._from_proto(proto.ttl_time_characteristic),
            Time.milliseconds(proto.ttl),
            StateTtlConfig.CleanupStrategies._from_proto(proto.cleanup_strategies),
        )

    def __repr__(self) -> str:
        return (
            f"StateTtlConfig<update_type={self._update_type}, state_visibility={self._state_visibility}, "
            f"ttl_time_characteristic={self._ttl_time_characteristic}, ttl={self._ttl}>"
        )

    class Builder:
        """Builds a StateTtlConfig. Defaults (PyFlink's): OnCreateAndWrite, NeverReturnExpired,
        ProcessingTime, cleanup in background, no explicit cleanup strategy. Every method returns
        the builder; ``build()`` validates."""

        def __init__(self, ttl: Time) -> None:
            self._ttl = ttl
            self._update_type = StateTtlConfig.UpdateType.OnCreateAndWrite
            self._state_visibility = StateTtlConfig.StateVisibility.NeverReturnExpired
            self._ttl_time_characteristic = StateTtlConfig.TtlTimeCharacteristic.ProcessingTime
            self._is_cleanup_in_background = True
            self._strategies: dict[
                StateTtlConfig.CleanupStrategies.Strategies, StateTtlConfig.CleanupStrategies.CleanupStrategy
            ] = {}

        def set_update_type(self, update_type: StateTtlConfig.UpdateType) -> StateTtlConfig.Builder:
            """When the last-access time is refreshed."""
            self._update_type = update_type
            return self

        def update_ttl_on_create_and_write(self) -> StateTtlConfig.Builder:
            return self.set_update_type(StateTtlConfig.UpdateType.OnCreateAndWrite)

        def update_ttl_on_read_and_write(self) -> StateTtlConfig.Builder:
            return self.set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)

        def set_state_visibility(
            self, state_visibility: StateTtlConfig.StateVisibility
        ) -> StateTtlConfig.Builder:
            """Whether an expired value not cleaned up yet may be returned."""
            self._state_visibility = state_visibility
            return self

        def return_expired_if_not_cleaned_up(self) -> StateTtlConfig.Builder:
            return self.set_state_visibility(StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)

        def never_return_expired(self) -> StateTtlConfig.Builder:
            return self.set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)

        def set_ttl_time_characteristic(
            self, ttl_time_characteristic: StateTtlConfig.TtlTimeCharacteristic
        ) -> StateTtlConfig.Builder:
            self._ttl_time_characteristic = ttl_time_characteristic
            return self

        def use_processing_time(self) -> StateTtlConfig.Builder:
            return self.set_ttl_time_characteristic(StateTtlConfig.TtlTimeCharacteristic.ProcessingTime)

        def cleanup_full_snapshot(self) -> StateTtlConfig.Builder:
            """Drop expired state when a full snapshot (checkpoint) is taken."""
            cs = StateTtlConfig.CleanupStrategies
            self._strategies[cs.Strategies.FULL_STATE_SCAN_SNAPSHOT] = cs.EMPTY_STRATEGY
            return self

        def cleanup_incrementally(
            self, cleanup_size: int, run_cleanup_for_every_record: bool
        ) -> StateTtlConfig.Builder:
            """On every state access, check up to ``cleanup_size`` entries of the state (any key)
            and remove the expired ones. ``run_cleanup_for_every_record`` is accepted and ignored
            here: cleanup runs on state accesses."""
            cs = StateTtlConfig.CleanupStrategies
            self._strategies[cs.Strategies.INCREMENTAL_CLEANUP] = cs.IncrementalCleanupStrategy(
                cleanup_size, run_cleanup_for_every_record
            )
            return self

        def cleanup_in_rocksdb_compact_filter(
            self, query_time_after_num_entries: int, periodic_compaction_time: Duration | None = None
        ) -> StateTtlConfig.Builder:
            """RocksDB compaction-filter cleanup (kept for the API; no effect here). A missing or
            falsy ``periodic_compaction_time`` means 30 days."""
            cs = StateTtlConfig.CleanupStrategies
            self._strategies[cs.Strategies.ROCKSDB_COMPACTION_FILTER] = (
                cs.RocksdbCompactFilterCleanupStrategy(query_time_after_num_entries, periodic_compaction_time)
            )
            return self

        def disable_cleanup_in_background(self) -> StateTtlConfig.Builder:
            """No default background cleanup; explicitly configured strategies still apply."""
            self._is_cleanup_in_background = False
            return self

        def set_ttl(self, ttl: Time) -> StateTtlConfig.Builder:
            self._ttl = ttl
            return self

        def build(self) -> StateTtlConfig:
            """The config; ValueError when the ttl is not positive, TypeError on a wrong type."""
            return StateTtlConfig(
                self._update_type,
                self._state_visibility,
                self._ttl_time_characteristic,
                self._ttl,
                StateTtlConfig.CleanupStrategies(self._strategies, self._is_cleanup_in_background),
            )

    @attrs.frozen
    class CleanupStrategies:
        """When expired state is cleaned up, besides on reading it. Immutable."""

        class Strategies(enum.Enum):
            """The ordinals of the cleanup strategies."""

            FULL_STATE_SCAN_SNAPSHOT = 0
            INCREMENTAL_CLEANUP = 1
            ROCKSDB_COMPACTION_FILTER = 2

            def _to_proto(self) -> int:
                """The value of Flink's protobuf enum of the same name (PyFlink's ``_to_proto``)."""
                return int(self.value)

            @staticmethod
            def _from_proto(proto: int) -> StateTtlConfig.CleanupStrategies.Strategies:
                return StateTtlConfig.CleanupStrategies.Strategies(proto)

        class CleanupStrategy:
            """Base of the cleanup strategy configurations."""

            __slots__ = ()

        @attrs.frozen
        class EmptyCleanupStrategy(CleanupStrategy):
            """A strategy without parameters (full-snapshot cleanup)."""

        @attrs.frozen
        class IncrementalCleanupStrategy(CleanupStrategy):
            """Check ``cleanup_size`` entries for expiry on every state access."""

            _cleanup_size: int = attrs.field(converter=_cleanup_size)
            _run_cleanup_for_every_record: bool = attrs.field(converter=_run_cleanup_for_every_record)

            def get_cleanup_size(self) -> int:
                return self._cleanup_size

            def run_cleanup_for_every_record(self) -> bool:
                return self._run_cleanup_for_every_record

        @attrs.frozen
        class RocksdbCompactFilterCleanupStrategy(CleanupStrategy):
            """RocksDB compaction-filter cleanup parameters (no effect here)."""

            _query_time_after_num_entries: int = attrs.field(converter=_query_time_after_num_entries)
            _periodic_compaction_time: Duration | None = attrs.field(
                default=None, converter=_periodic_compaction_time
            )

            def get_query_time_after_num_entries(self) -> int:
                return self._query_time_after_num_entries

            def get_periodic_compaction_time(self) -> Duration:
                """The given time, or 30 days."""
                if self._periodic_compaction_time is None:
                    return _default_periodic_compaction_time()
                return self._periodic_compaction_time

        EMPTY_STRATEGY = EmptyCleanupStrategy()

        _strategies: tuple[tuple[Any, Any], ...] = attrs.field(converter=_strategies)
        _is_cleanup_in_background: bool = attrs.field(converter=_is_cleanup_in_background)

        def _get(self, strategy: StateTtlConfig.CleanupStrategies.Strategies) -> Any:
            for key, value in self._strategies:
                if key is strategy:
                    return value
            return None

        def is_cleanup_in_background(self) -> bool:
            return self._is_cleanup_in_background

        def in_full_snapshot(self) -> bool:
            return self._get(StateTtlConfig.CleanupStrategies.Strategies.FULL_STATE_SCAN_SNAPSHOT) is not None

        def get_incremental_cleanup_strategy(
            self,
        ) -> StateTtlConfig.CleanupStrategies.IncrementalCleanupStrategy | None:
            """The configured one; else (5, False) when cleanup in background is on; else None."""
            cs = StateTtlConfig.CleanupStrategies
            found = self._get(cs.Strategies.INCREMENTAL_CLEANUP)
            if found is None and self._is_cleanup_in_background:
                return cs.IncrementalCleanupStrategy(_DEFAULT_INCREMENTAL_CLEANUP_SIZE, False)
            return found  # type: ignore[no-any-return]

        def get_rocksdb_compact_filter_cleanup_strategy(
            self,
        ) -> StateTtlConfig.CleanupStrategies.RocksdbCompactFilterCleanupStrategy | None:
            """The configured one; else (1000 entries) when cleanup in background is on; else None."""
            cs = StateTtlConfig.CleanupStrategies
            found = self._get(cs.Strategies.ROCKSDB_COMPACTION_FILTER)
            if found is None and self._is_cleanup_in_background:
                return cs.RocksdbCompactFilterCleanupStrategy(_DEFAULT_QUERY_TIME_AFTER_NUM_ENTRIES)
            return found  # type: ignore[no-any-return]

        def get_strategies(self) -> dict[Any, Any]:
            """The explicitly configured strategies (a copy)."""
            return dict(self._strategies)

        def _to_proto(self) -> Any:
            """These strategies as PyFlink's protobuf message (``StateTTLConfig.CleanupStrategies``)."""
            from ._ttl_proto import state_ttl_config_message

            cs = StateTtlConfig.CleanupStrategies
            proto = state_ttl_config_message().CleanupStrategies()
            proto.is_cleanup_in_background = self._is_cleanup_in_background
            for key, strategy in self._strategies:
                entry = proto.strategies.add()
                entry.strategy = key._to_proto()
                if isinstance(strategy, cs.IncrementalCleanupStrategy):
                    entry.incremental_cleanup_strategy.cleanup_size = strategy.get_cleanup_size()
                    entry.incremental_cleanup_strategy.run_cleanup_for_every_record = (
                        strategy.run_cleanup_for_every_record()
                    )
                elif isinstance(strategy, cs.RocksdbCompactFilterCleanupStrategy):
                    entry.rocksdb_compact_filter_cleanup_strategy.query_time_after_num_entries = (
                        strategy.get_query_time_after_num_entries()
                    )
                else:
                    entry.empty_strategy = 0  # EMPTY_STRATEGY
            return proto

        @staticmethod
        def _from_proto(proto: Any) -> StateTtlConfig.CleanupStrategies:
            cs = StateTtlConfig.CleanupStrategies
            strategies: dict[Any, Any] = {}
            for entry in proto.strategies:
                key = cs.Strategies._from_proto(entry.strategy)
                if entry.HasField("incremental_cleanup_strategy"):
                    incremental = entry.incremental_cleanup_strategy
                    strategies[key] = cs.IncrementalCleanupStrategy(
                        incremental.cleanup_size, incremental.run_cleanup_for_every_record
                    )
                elif entry.HasField("rocksdb_compact_filter_cleanup_strategy"):
                    rocksdb = entry.rocksdb_compact_filter_cleanup_strategy
                    strategies[key] = cs.RocksdbCompactFilterCleanupStrategy(
                        rocksdb.query_time_after_num_entries
                    )
                elif entry.HasField("empty_strategy"):
                    strategies[key] = cs.EMPTY_STRATEGY
            return cs(strategies, proto.is_cleanup_in_background)
