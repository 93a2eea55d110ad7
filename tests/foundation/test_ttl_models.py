"""Model-based tests of TTL on keyed value, list and map state, with an injected clock.

The model keeps each value (or element, or map entry) with its last-access time and applies
Flink's rules: an entry expires when ``now >= last_access + ttl``; reading an expired entry removes
it and returns it (that once) only under RETURN_EXPIRED_IF_NOT_CLEANED_UP; ON_READ_AND_WRITE
refreshes the time of entries that are read. Machines with RETURN_EXPIRED turn incremental cleanup
off, so what is "not cleaned up yet" is exactly what the model knows.
"""

from __future__ import annotations

from typing import Any, ClassVar

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from fs_api import MemoryKvStore
from fs_api_advanced import (
    IntCodec,
    KeyedListStateFactory,
    KeyedMapStateFactory,
    KeyedValueStateFactory,
    StringCodec,
    TtlConfig,
    TtlUpdate,
    TtlVisibility,
)

SETTINGS = settings(max_examples=40, stateful_step_count=30, deadline=None)
TTL = 10
SLOTS = st.sampled_from([(b"k1", b"n"), (b"k1", b"m"), (b"k2", b"n")])
VALUES = st.integers(-3, 3)
MAP_KEYS = st.sampled_from(["a", "b", "c"])

Slot = tuple[bytes, bytes]


class TtlModel(RuleBasedStateMachine):
    update: ClassVar[TtlUpdate] = TtlUpdate.ON_CREATE_AND_WRITE
    visibility: ClassVar[TtlVisibility] = TtlVisibility.NEVER_RETURN_EXPIRED
    cleanup: ClassVar[int] = 0

    def __init__(self) -> None:
        super().__init__()
        self.now = 1_000
        self.config = TtlConfig(
            ttl_ms=TTL, update=self.update, visibility=self.visibility, incremental_cleanup_size=self.cleanup
        )
        store = MemoryKvStore()
        clock = self.clock
        self.values = KeyedValueStateFactory(store, b"v", IntCodec(), ttl=self.config, clock=clock)
        self.lists = KeyedListStateFactory(store, b"l", IntCodec(), ttl=self.config, clock=clock)
        self.maps = KeyedMapStateFactory(store, b"m", StringCodec(), IntCodec(), ttl=self.config, clock=clock)
        self.value_model: dict[Slot, tuple[int, int]] = {}
        self.list_model: dict[Slot, list[tuple[int, int]]] = {}
        self.map_model: dict[Slot, dict[str, tuple[int, int]]] = {}

    def clock(self) -> int:
        return self.now

    @property
    def refresh(self) -> bool:
        return self.update is TtlUpdate.ON_READ_AND_WRITE

    @property
    def return_expired(self) -> bool:
        return self.visibility is TtlVisibility.RETURN_EXPIRED_IF_NOT_CLEANED_UP

    def expired(self, ts: int) -> bool:
        return self.now >= ts + TTL

    @rule(ms=st.integers(0, 2 * TTL))
    def advance_clock(self, ms: int) -> None:
        self.now += ms

    # Value.
    @rule(slot=SLOTS, v=VALUES)
    def value_update(self, slot: Slot, v: int) -> None:
        self.values.new_keyed_value(*slot).update(v)
        self.value_model[slot] = (v, self.now)

    @rule(slot=SLOTS)
    def value_read(self, slot: Slot) -> None:
        got = self.values.new_keyed_value(*slot).value()
        entry = self.value_model.get(slot)
        if entry is None:
            assert got == (None, False)
        elif self.expired(entry[1]):
            del self.value_model[slot]
            assert got == ((entry[0], True) if self.return_expired else (None, False))
        else:
            if self.refresh:
                self.value_model[slot] = (entry[0], self.now)
            assert got == (entry[0], True)

    @rule(slot=SLOTS)
    def value_clear(self, slot: Slot) -> None:
        self.values.new_keyed_value(*slot).clear()
        self.value_model.pop(slot, None)

    # List.
    @rule(slot=SLOTS, vs=st.lists(VALUES, min_size=1, max_size=3))
    def list_add_all(self, slot: Slot, vs: list[int]) -> None:
        state = self.lists.new_keyed_list(*slot)
        if len(vs) == 1:
            state.add(vs[0])
        else:
            state.add_all(vs)
        self.list_model.setdefault(slot, []).extend((v, self.now) for v in vs)

    @rule(slot=SLOTS, vs=st.lists(VALUES, max_size=2))
    def list_update(self, slot: Slot, vs: list[int]) -> None:
        self.lists.new_keyed_list(*slot).update(vs)
        self.list_model[slot] = [(v, self.now) for v in vs]

    @rule(slot=SLOTS)
    def list_get(self, slot: Slot) -> None:
        got = self.lists.new_keyed_list(*slot).get()
        entries = self.list_model.get(slot, [])
        live = [(v, ts) for v, ts in entries if not self.expired(ts)]
        shown = entries if self.return_expired else live
        self.list_model[slot] = [(v, self.now) for v, _ in live] if self.refresh else live
        assert got == [v for v, _ in shown]

    # Map.
    @rule(slot=SLOTS, k=MAP_KEYS, v=VALUES)
    def map_put(self, slot: Slot, k: str, v: int) -> None:
        self.maps.new_keyed_map(*slot).put(k, v)
        self.map_model.setdefault(slot, {})[k] = (v, self.now)

    def map_read_entry(self, slot: Slot, k: str) -> tuple[Any, bool]:
        entries = self.map_model.get(slot, {})
        entry = entries.get(k)
        if entry is None:
            return (None, False)
        if self.expired(entry[1]):
            del entries[k]
            return (entry[0], True) if self.return_expired else (None, False)
        if self.refresh:
            entries[k] = (entry[0], self.now)
        return (entry[0], True)

    @rule(slot=SLOTS, k=MAP_KEYS)
    def map_get(self, slot: Slot, k: str) -> None:
        got = self.maps.new_keyed_map(*slot).get(k)
        assert got == self.map_read_entry(slot, k)

    @rule(slot=SLOTS)
    def map_all(self, slot: Slot) -> None:
        got = list(self.maps.new_keyed_map(*slot).all())
        expected = []
        for k in sorted(self.map_model.get(slot, {})):
            v, found = self.map_read_entry(slot, k)
            if found:
                expected.append((k, v))
        assert got == expected

    @rule(slot=SLOTS, k=MAP_KEYS)
    def map_delete(self, slot: Slot, k: str) -> None:
        self.maps.new_keyed_map(*slot).delete(k)
        self.map_model.get(slot, {}).pop(k, None)


class ReadRefreshModel(TtlModel):
    update = TtlUpdate.ON_READ_AND_WRITE


class ReturnExpiredModel(TtlModel):
    visibility = TtlVisibility.RETURN_EXPIRED_IF_NOT_CLEANED_UP


class ReadRefreshReturnExpiredModel(TtlModel):
    update = TtlUpdate.ON_READ_AND_WRITE
    visibility = TtlVisibility.RETURN_EXPIRED_IF_NOT_CLEANED_UP


class IncrementalCleanupModel(TtlModel):
    """Cleanup of other keys must never change what a read returns under NEVER_RETURN_EXPIRED."""

    cleanup = 3


class IncrementalCleanupReadRefreshModel(TtlModel):
    update = TtlUpdate.ON_READ_AND_WRITE
    cleanup = 3


TestTtlModel = TtlModel.TestCase
TestReadRefreshModel = ReadRefreshModel.TestCase
TestReturnExpiredModel = ReturnExpiredModel.TestCase
TestReadRefreshReturnExpiredModel = ReadRefreshReturnExpiredModel.TestCase
TestIncrementalCleanupModel = IncrementalCleanupModel.TestCase
TestIncrementalCleanupReadRefreshModel = IncrementalCleanupReadRefreshModel.TestCase
for _case in (
    TestTtlModel,
    TestReadRefreshModel,
    TestReturnExpiredModel,
    TestReadRefreshReturnExpiredModel,
    TestIncrementalCleanupModel,
    TestIncrementalCleanupReadRefreshModel,
):
    _case.settings = SETTINGS
del _case  # not a test of its own
