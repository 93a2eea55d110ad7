"""TTL semantics (Flink's ``AbstractTtlDecorator`` and Ttl*State) for every keyed state type, through
``KeyedStateBackend`` with specs built from ``StateTtlConfig.to_ttl_config()`` and an injected clock.

Flink's rules checked here: a value expires when ``now >= last_access + ttl``; OnCreateAndWrite stamps
on writes only, OnReadAndWrite also on successful reads; reading an expired value clears it and returns
it only under ReturnExpiredIfNotCleanedUp, and only that once; list elements and map entries expire on
their own; reducing/aggregating states have one stamp and ``add`` is a read plus a write; expired
entries leave the store on read, incrementally on accesses to other keys, and on ``purge_expired()``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from fs_api_advanced import PickleCodec, StringCodec, TtlConfig
from fs_compat.common import Time
from fs_compat.datastream.state import StateTtlConfig
from fs_compat.runtime import KeyedStateBackend, StateKind, StateSpec

TTL = 10
UpdateType = StateTtlConfig.UpdateType
Visibility = StateTtlConfig.StateVisibility
MODES = list(
    itertools.product(
        [UpdateType.OnCreateAndWrite, UpdateType.OnReadAndWrite],
        [Visibility.NeverReturnExpired, Visibility.ReturnExpiredIfNotCleanedUp],
    )
)
KINDS = [StateKind.VALUE, StateKind.LIST, StateKind.MAP, StateKind.REDUCING, StateKind.AGGREGATING]


class ManualClock:
    """Processing time that only moves when the test says so."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


class Average:
    """An AggregateFunction-shaped object: mean of the values added."""

    def create_accumulator(self) -> tuple[int, int]:
        return (0, 0)

    def add(self, value: int, acc: tuple[int, int]) -> tuple[int, int]:
        return (acc[0] + value, acc[1] + 1)

    def get_result(self, acc: tuple[int, int]) -> float:
        return acc[0] / acc[1]

    def merge(self, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
        return (a[0] + b[0], a[1] + b[1])


def ttl_config(
    update: StateTtlConfig.UpdateType,
    visibility: StateTtlConfig.StateVisibility,
    configure: Callable[[StateTtlConfig.Builder], Any] | None = None,
) -> TtlConfig:
    builder = StateTtlConfig.new_builder(Time.milliseconds(TTL)).set_update_type(update)
    builder.set_state_visibility(visibility)
    if configure is not None:
        configure(builder)
    config = builder.build().to_ttl_config()
    assert config is not None
    return config


def make_spec(kind: StateKind, ttl: TtlConfig | None, name: str = "s") -> StateSpec:
    if kind is StateKind.MAP:
        return StateSpec(name, kind, PickleCodec(), key_codec=StringCodec(), ttl=ttl)
    if kind is StateKind.REDUCING:
        return StateSpec(name, kind, PickleCodec(), reduce_function=lambda a, b: a + b, ttl=ttl)
    if kind is StateKind.AGGREGATING:
        return StateSpec(name, kind, PickleCodec(), aggregate_function=Average(), ttl=ttl)
    return StateSpec(name, kind, PickleCodec(), ttl=ttl)


class Harness:
    """One keyed state with TTL on a backend whose clock the test moves."""

    def __init__(
        self,
        kind: StateKind,
        update: StateTtlConfig.UpdateType,
        visibility: StateTtlConfig.StateVisibility,
        configure: Callable[[StateTtlConfig.Builder], Any] | None = None,
        *,
        config: StateTtlConfig | None = None,
    ) -> None:
        self.kind = kind
        self.return_expired = visibility is Visibility.ReturnExpiredIfNotCleanedUp
        self.on_read = update is UpdateType.OnReadAndWrite
        self.clock = ManualClock()
        self.backend = KeyedStateBackend(clock=self.clock)
        ttl = ttl_config(update, visibility, configure) if config is None else config.to_ttl_config()
        self.spec = make_spec(kind, ttl)
        self.state = self.backend.get_state(self.spec)

    def at(self, now: int, key: Any = "k") -> Any:
        """The state, for ``key``, at processing time ``now``."""
        assert now >= self.clock.now, "time only moves forward"
        self.clock.now = now
        self.backend.set_current_key(key)
        return self.state

    def expired(self, value: Any) -> Any:
        """What reading an expired ``value`` the first time gives."""
        return value if self.return_expired else None

    def entries(self) -> int:
        """Entries physically in the state's store."""
        store = self.backend.stores.get(self.spec.name)
        return 0 if store is None else len(store)

    # One "write" and one "read" per kind, for the tests every kind shares.
    def write(self, now: int, value: int, key: Any = "k") -> None:
        state = self.at(now, key)
        if self.kind is StateKind.VALUE:
            state.update(value)
        elif self.kind is StateKind.LIST:
            state.add(value)
        elif self.kind is StateKind.MAP:
            state.put("m", value)
        else:
            state.add(value)

    def read(self, now: int, key: Any = "k") -> Any:
        state = self.at(now, key)
        if self.kind is StateKind.VALUE:
            return state.value()
        if self.kind is StateKind.LIST:
            items = state.get()
            return items[0] if items else None
        if self.kind is StateKind.MAP:
            return state.get("m")
        result = state.get()
        return None if result is None else int(result)


@pytest.fixture(params=MODES, ids=[f"{u.name}-{v.name}" for u, v in MODES])
def mode(request: pytest.FixtureRequest) -> tuple[StateTtlConfig.UpdateType, StateTtlConfig.StateVisibility]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=KINDS, ids=[k.name.lower() for k in KINDS])
def kind(request: pytest.FixtureRequest) -> StateKind:
    return request.param  # type: ignore[no-any-return]


# Every state type: expiry, refresh, visibility, removal on read. ---------------------------------


def test_alive_until_just_before_ttl(kind: StateKind, mode: Any) -> None:
    h = Harness(kind, *mode)
    h.write(0, 7)
    assert h.read(TTL - 1) == 7


def test_expired_at_exactly_ttl_returned_at_most_once_then_gone(kind: StateKind, mode: Any) -> None:
    h = Harness(kind, *mode)
    h.write(0, 7)
    assert h.entries() == 1
    assert h.read(TTL) == h.expired(7)
    assert h.entries() == 0, "reading an expired value removes it from the store"
    assert h.read(TTL) is None
    assert h.read(TTL + 100) is None


def test_successful_read_prolongs_only_on_read_and_write(kind: StateKind, mode: Any) -> None:
    h = Harness(kind, *mode)
    h.write(0, 7)
    assert h.read(6) == 7
    if h.on_read:
        assert h.read(15) == 7  # stamped at 6, alive until 16
        assert h.read(24) == 7  # stamped at 15
        assert h.read(34) == h.expired(7)  # stamped at 24, expired at 34
    else:
        assert h.read(TTL) == h.expired(7)
    assert h.read(100) is None
    assert h.entries() == 0


def test_write_prolongs_in_every_mode(kind: StateKind, mode: Any) -> None:
    h = Harness(kind, *mode)
    h.write(0, 7)
    h.write(6, 7)  # value: 7; list: [7, 7] (second element newer); map: 7; reducing: 14
    expected_after_write = {
        StateKind.VALUE: 7,
        StateKind.LIST: 7,
        StateKind.MAP: 7,
        StateKind.REDUCING: 14,
        StateKind.AGGREGATING: 7,
    }[kind]
    if kind is StateKind.LIST:
        # The first element was stamped at 0: at 15 only the second (stamped at 6) is live.
        assert h.at(15).get() == ([7, 7] if h.return_expired else [7])
        assert h.at(15).get() == [7]
    else:
        assert h.read(15) == expected_after_write
    if not h.on_read:
        assert h.read(16) == h.expired(expected_after_write)
        assert h.read(16) is None


def test_keys_expire_independently(kind: StateKind, mode: Any) -> None:
    h = Harness(kind, *mode)
    h.write(0, 1, key="a")
    h.write(5, 2, key="b")
    assert h.read(12, key="a") == h.expired(1)
    assert h.read(12, key="b") == 2
    assert h.read(12, key="a") is None


def test_clear_removes_the_entry(kind: StateKind, mode: Any) -> None:
    h = Harness(kind, *mode)
    h.write(0, 7)
    h.at(1).clear()
    assert h.entries() == 0
    assert h.read(2) is None


# Value state. ------------------------------------------------------------------------------------


def test_value_update_none_clears(mode: Any) -> None:
    h = Harness(StateKind.VALUE, *mode)
    h.at(0).update(3)
    h.at(1).update(None)
    assert h.entries() == 0
    assert h.at(20).value() is None


# List state: per-element TTL. ---------------------------------------------------------------------


def test_list_elements_expire_independently(mode: Any) -> None:
    h = Harness(StateKind.LIST, *mode)
    h.at(0).add("a")
    h.at(5).add("b")
    assert h.at(9).get() == ["a", "b"]
    if h.on_read:
        # The read at 9 stamped both: alive until 19.
        assert h.at(18).get() == ["a", "b"]
        assert h.at(28).get() == (["a", "b"] if h.return_expired else [])
        assert h.entries() == 0
        return
    assert h.at(12).get() == (["a", "b"] if h.return_expired else ["b"])
    assert h.at(12).get() == ["b"], "an expired element is returned at most once"
    assert h.entries() == 1
    assert h.at(14).get() == ["b"]
    assert h.at(15).get() == (["b"] if h.return_expired else [])
    assert h.at(15).get() == []
    assert h.entries() == 0


def test_list_read_refreshes_only_live_elements(mode: Any) -> None:
    h = Harness(StateKind.LIST, *mode)
    h.at(0).add("a")
    h.at(5).add("b")
    assert h.at(12).get() == (["a", "b"] if h.return_expired else ["b"])
    # "a" expired and is gone in every mode; "b" was stamped at 5, or at 12 on read.
    assert h.at(16).get() == (["b"] if h.on_read or h.return_expired else [])
    assert h.at(16).get() == (["b"] if h.on_read else [])


def test_list_add_all_and_update_stamp_every_element_now(mode: Any) -> None:
    h = Harness(StateKind.LIST, *mode)
    h.at(0).update(["x", "y"])
    h.at(4).add_all(["z"])
    assert h.at(10).get() == (["x", "y", "z"] if h.return_expired else ["z"])
    assert h.at(10).get() == ["z"]
    h.at(11).update(["p", "q"])  # replaces the list, all stamped at 11
    assert h.at(20).get() == ["p", "q"]
    if not h.on_read:
        assert h.at(21).get() == (["p", "q"] if h.return_expired else [])
        assert h.at(21).get() == []


def test_list_iteration_follows_get(mode: Any) -> None:
    h = Harness(StateKind.LIST, *mode)
    h.at(0).add("a")
    h.at(5).add("b")
    assert list(h.at(12)) == (["a", "b"] if h.return_expired else ["b"])
    assert list(h.at(12)) == ["b"]


# Map state: per-entry TTL. ----------------------------------------------------------------------


def test_map_entries_expire_independently(mode: Any) -> None:
    h = Harness(StateKind.MAP, *mode)
    h.at(0).put("a", 1)
    h.at(5).put("b", 2)
    assert h.entries() == 2
    state = h.at(12)
    assert state.get("a") == h.expired(1)
    assert state.get("a") is None
    assert not state.contains("a")
    assert state.get("b") == 2
    assert h.entries() == 1


def test_map_items_return_expired_entries_at_most_once(mode: Any) -> None:
    h = Harness(StateKind.MAP, *mode)
    h.at(0).put_all({"a": 1, "c": 3})
    h.at(5).put("b", 2)
    expected_first = [("a", 1), ("b", 2), ("c", 3)] if h.return_expired else [("b", 2)]
    assert sorted(h.at(12).items()) == expected_first
    assert sorted(h.at(12).items()) == [("b", 2)]
    assert list(h.at(12).keys()) == ["b"]
    assert list(h.at(12).values()) == [2]
    assert h.entries() == 1


def test_map_read_refreshes_only_the_entry_read(mode: Any) -> None:
    # Without background cleanup: the incremental cleanup run by get("a") would otherwise be free
    # to drop the expired "b" first ("return expired if *not cleaned up*").
    h = Harness(StateKind.MAP, *mode, configure=lambda b: b.disable_cleanup_in_background())
    h.at(0).put_all({"a": 1, "b": 2})
    assert h.at(8).get("a") == 1
    state = h.at(10)
    assert state.get("a") == (1 if h.on_read else h.expired(1))
    assert state.get("b") == h.expired(2)
    assert state.get("b") is None


def test_map_is_empty_when_every_entry_expired(mode: Any) -> None:
    h = Harness(StateKind.MAP, *mode)
    h.at(0).put("a", 1)
    assert not h.at(9).is_empty()
    if h.on_read:
        # is_empty() read "a" at 9: it lives until 19.
        assert h.at(19).is_empty() is (not h.return_expired)
    else:
        assert h.at(10).is_empty() is (not h.return_expired)
    assert h.at(40).is_empty()
    assert h.entries() == 0


def test_map_remove_and_put_restamp(mode: Any) -> None:
    h = Harness(StateKind.MAP, *mode)
    h.at(0).put("a", 1)
    h.at(3).remove("a")
    assert h.entries() == 0
    h.at(4).put("a", 5)
    assert h.at(13).get("a") == 5


# Reducing and aggregating state: one stamp, add = read + write. ----------------------------------


def test_reducing_add_refreshes_the_single_stamp(mode: Any) -> None:
    h = Harness(StateKind.REDUCING, *mode)
    h.at(0).add(1)
    h.at(5).add(2)
    assert h.at(14).get() == 3
    if h.on_read:
        assert h.at(23).get() == 3
    else:
        assert h.at(15).get() == h.expired(3)
        assert h.at(15).get() is None


def test_reducing_add_after_expiry(mode: Any) -> None:
    # Flink's TtlReduceFunction folds the old value in when it may still be returned
    # (ReturnExpiredIfNotCleanedUp), and starts afresh under NeverReturnExpired.
    h = Harness(StateKind.REDUCING, *mode)
    h.at(0).add(1)
    h.at(10).add(5)
    assert h.at(19).get() == (6 if h.return_expired else 5)
    assert h.entries() == 1


def test_aggregating_add_refreshes_the_single_stamp(mode: Any) -> None:
    h = Harness(StateKind.AGGREGATING, *mode)
    h.at(0).add(1)
    h.at(5).add(3)
    assert h.at(14).get() == 2.0
    if h.on_read:
        assert h.at(23).get() == 2.0
    else:
        assert h.at(15).get() == h.expired(2.0)
        assert h.at(15).get() is None


def test_aggregating_add_after_expiry(mode: Any) -> None:
    # Flink's TtlAggregateFunction.add uses getUnexpired(accumulator): the expired accumulator
    # under ReturnExpiredIfNotCleanedUp, a new one under NeverReturnExpired.
    h = Harness(StateKind.AGGREGATING, *mode)
    h.at(0).add(1)
    h.at(10).add(3)
    assert h.at(19).get() == (2.0 if h.return_expired else 3.0)
    assert h.entries() == 1


# Cleanup: incremental (on accesses to other keys) and full (purge_expired). ---------------------


def test_idle_keys_are_cleaned_up_by_accesses_to_other_keys(kind: StateKind, mode: Any) -> None:
    h = Harness(kind, *mode)
    for i in range(40):
        h.write(0, i, key=f"idle-{i}")
    assert h.entries() == 40
    h.write(20, 1, key="busy")
    for t in range(21, 41):
        h.read(t, key="busy")
        h.write(t, 1, key="busy")
    assert h.entries() == 1, "the idle keys' expired entries should have been removed in the background"
    for i in range(40):
        assert h.read(41, key=f"idle-{i}") is None, "cleaned up: not returned even once"


def test_incremental_cleanup_size_is_the_budget_per_access(kind: StateKind, mode: Any) -> None:
    h = Harness(kind, *mode, configure=lambda b: b.cleanup_incrementally(1, False))
    for i in range(40):
        h.write(0, i, key=f"idle-{i}")
    h.write(20, 1, key="busy")
    assert h.entries() > 30, "one access checks a handful of entries, not all of them"
    for t in range(21, 121):
        h.write(t, 1, key="busy")
    assert h.entries() == 1


def test_no_background_cleanup_leaves_idle_keys_until_read(kind: StateKind, mode: Any) -> None:
    h = Harness(kind, *mode, configure=lambda b: b.disable_cleanup_in_background())
    h.write(0, 7, key="idle")
    for t in range(20, 40):
        h.write(t, 1, key="busy")
    assert h.entries() == 2
    assert h.read(40, key="idle") == h.expired(7)
    assert h.entries() == 1


def test_purge_expired_removes_every_expired_entry(kind: StateKind, mode: Any) -> None:
    h = Harness(kind, *mode, configure=lambda b: b.disable_cleanup_in_background().cleanup_full_snapshot())
    for i in range(10):
        h.write(0, i, key=f"old-{i}")
    for i in range(3):
        h.write(8, i, key=f"new-{i}")
    h.clock.now = 10
    h.backend.purge_expired()
    assert h.entries() == 3
    for i in range(10):
        assert h.read(10, key=f"old-{i}") is None, "purged entries are not returned, even once"
    for i in range(3):
        assert h.read(10, key=f"new-{i}") is not None


def test_purge_expired_drops_expired_list_elements_and_map_entries(mode: Any) -> None:
    lists = Harness(StateKind.LIST, *mode, configure=lambda b: b.disable_cleanup_in_background())
    lists.at(0).add("a")
    lists.at(5).add("b")
    lists.clock.now = 12
    lists.backend.purge_expired()
    assert lists.at(12).get() == ["b"], "the expired element left the stored list"

    maps = Harness(StateKind.MAP, *mode, configure=lambda b: b.disable_cleanup_in_background())
    maps.at(0).put("a", 1)
    maps.at(5).put("b", 2)
    maps.clock.now = 12
    maps.backend.purge_expired()
    assert maps.entries() == 1
    assert sorted(maps.at(12).items()) == [("b", 2)]


# TTL off. -------------------------------------------------------------------------------------------


def test_disabled_update_type_means_no_ttl(kind: StateKind) -> None:
    config = StateTtlConfig.new_builder(Time.milliseconds(TTL)).set_update_type(UpdateType.Disabled).build()
    assert not config.is_enabled()
    assert config.to_ttl_config() is None
    h = Harness(kind, UpdateType.Disabled, Visibility.NeverReturnExpired, config=config)
    assert h.spec.ttl is None
    h.write(0, 7)
    assert h.read(10**12) == 7


# Through the PyFlink descriptors (what ported code does). -----------------------------------------


def _descriptors() -> dict[StateKind, Any]:
    from fs_compat.common import Types
    from fs_compat.datastream.functions import AggregateFunction
    from fs_compat.datastream.state import (
        AggregatingStateDescriptor,
        ListStateDescriptor,
        MapStateDescriptor,
        ReducingStateDescriptor,
        ValueStateDescriptor,
    )

    class Mean(Average, AggregateFunction):  # type: ignore[misc]
        pass

    return {
        StateKind.VALUE: ValueStateDescriptor("d", Types.INT()),
        StateKind.LIST: ListStateDescriptor("d", Types.INT()),
        StateKind.MAP: MapStateDescriptor("d", Types.STRING(), Types.INT()),
        StateKind.REDUCING: ReducingStateDescriptor("d", lambda a, b: a + b, Types.INT()),
        StateKind.AGGREGATING: AggregatingStateDescriptor("d", Mean(), Types.PICKLED_BYTE_ARRAY()),
    }


def test_descriptor_with_ttl_expires(kind: StateKind, mode: Any) -> None:
    update, visibility = mode
    config = (
        StateTtlConfig.new_builder(Time.milliseconds(TTL))
        .set_update_type(update)
        .set_state_visibility(visibility)
        .build()
    )
    descriptor = _descriptors()[kind]
    descriptor.enable_time_to_live(config)
    spec = descriptor._spec()
    assert spec.ttl == config.to_ttl_config()
    h = Harness(kind, update, visibility)
    h.spec, h.state = spec, h.backend.get_state(spec)
    h.write(0, 7)
    assert h.read(TTL - 1) == 7
    if h.on_read:
        assert h.read(2 * TTL - 2) == 7
        assert h.read(3 * TTL) == h.expired(7)
    else:
        assert h.read(TTL) == h.expired(7)
    assert h.read(3 * TTL) is None
    assert h.entries() == 0


def test_descriptor_with_disabled_ttl_config_has_no_ttl(kind: StateKind) -> None:
    config = StateTtlConfig.new_builder(Time.milliseconds(TTL)).set_update_type(UpdateType.Disabled).build()
    descriptor = _descriptors()[kind]
    descriptor.enable_time_to_live(config)
    assert descriptor._spec().ttl is None
