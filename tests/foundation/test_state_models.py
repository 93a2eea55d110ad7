"""Model-based tests of the six state types against plain Python models.

Each machine drives one state type in two forms at once: the non-keyed state (its own
MemoryKvStore) and keyed views made by factories of two key groups over one shared store, for
several primary keys and namespaces. Keyed views are made afresh for every operation, so state
must live in the store, and every step checks that each (key group, primary key, namespace) sees
exactly its own model, so isolation between keys, namespaces and key groups is checked throughout.
"""

from __future__ import annotations

from typing import Any, ClassVar

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from fs_api import KvStore, MemoryKvStore, SqliteKvStore
from fs_api_advanced import (
    AggregatingState,
    Codec,
    IntCodec,
    JsonCodec,
    KeyedAggregatingState,
    KeyedAggregatingStateFactory,
    KeyedListState,
    KeyedListStateFactory,
    KeyedMapState,
    KeyedMapStateFactory,
    KeyedPriorityQueueState,
    KeyedPriorityQueueStateFactory,
    KeyedReducingState,
    KeyedReducingStateFactory,
    KeyedValueState,
    KeyedValueStateFactory,
    ListState,
    MapState,
    PickleCodec,
    PriorityQueueState,
    ReducingState,
    StringCodec,
    ValueState,
)

SETTINGS = settings(max_examples=50, stateful_step_count=30, deadline=None)

KEY_GROUPS = [b"", b"g"]
PRIMARY_KEYS = [b"", b"k1", b"k1\x00", b"k2"]
NAMESPACES = [b"", b"n", b"n2"]

Slot = tuple[bytes, bytes, bytes] | None  # (key group, primary key, namespace); None: the non-keyed state

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
SMALL_INTS = st.one_of(st.integers(-3, 3), st.sampled_from([-(2**63), -(2**32), 2**32, 2**63 - 1]))
SHORT_TEXT = st.text(alphabet="ab\x00\u00e9\U0001f600|", max_size=3)


def slots(namespaces: list[bytes] = NAMESPACES) -> st.SearchStrategy[Slot]:
    keyed = st.tuples(st.sampled_from(KEY_GROUPS), st.sampled_from(PRIMARY_KEYS), st.sampled_from(namespaces))
    return st.one_of(st.none(), keyed)


def all_keyed_slots(namespaces: list[bytes] = NAMESPACES) -> list[tuple[bytes, bytes, bytes]]:
    return [(kg, pk, ns) for kg in KEY_GROUPS for pk in PRIMARY_KEYS for ns in namespaces]


def as_given(name: bytes, as_str: bool) -> bytes | str:
    """Keyed states take str names too (UTF-8 encoded), so ``"n"`` and ``b"n"`` are the same state."""
    return name.decode("utf-8") if as_str else name


class StateModel(RuleBasedStateMachine):
    """Shared set-up: one store for the keyed factories, one for the non-keyed state."""

    backend: ClassVar[str] = "memory"

    def __init__(self) -> None:
        super().__init__()
        self.stores: list[KvStore] = []
        self.keyed_store = self.new_store()
        self.plain_store = self.new_store()

    def new_store(self) -> KvStore:
        store: KvStore = MemoryKvStore() if self.backend == "memory" else SqliteKvStore()
        self.stores.append(store)
        return store

    def teardown(self) -> None:
        for store in self.stores:
            store.close()


# ValueState ----------------------------------------------------------------------------------


class ValueModel(StateModel):
    def __init__(self) -> None:
        super().__init__()
        self.factories = {kg: KeyedValueStateFactory(self.keyed_store, kg, IntCodec()) for kg in KEY_GROUPS}
        self.plain: ValueState[Any] = ValueState(self.plain_store, PickleCodec())
        self.model: dict[Slot, int] = {}

    def view(self, slot: tuple[bytes, bytes, bytes], as_str: bool = False) -> KeyedValueState[int]:
        kg, pk, ns = slot
        return self.factories[kg].new_keyed_value(pk, as_given(ns, as_str))

    @rule(slot=slots(), v=INT64, as_str=st.booleans())
    def update(self, slot: Slot, v: int, as_str: bool) -> None:
        if slot is None:
            self.plain.update(v)
        else:
            self.view(slot, as_str).update(v)
        self.model[slot] = v

    @rule(slot=slots())
    def clear(self, slot: Slot) -> None:
        if slot is None:
            self.plain.clear()
        else:
            self.view(slot).clear()
        self.model.pop(slot, None)

    @rule(slot=slots(), as_str=st.booleans())
    def read(self, slot: Slot, as_str: bool) -> None:
        if slot is None:
            assert self.plain.value() == self.model.get(None)
        else:
            expected = (self.model[slot], True) if slot in self.model else (None, False)
            assert self.view(slot, as_str).value() == expected

    @invariant()
    def every_slot_sees_its_own_value(self) -> None:
        assert self.plain.value() == self.model.get(None)
        for slot in all_keyed_slots():
            expected = (self.model[slot], True) if slot in self.model else (None, False)
            assert self.view(slot).value() == expected


# ListState -----------------------------------------------------------------------------------


class ListModel(StateModel):
    codec: ClassVar[Codec[Any]] = IntCodec()
    elements: ClassVar[st.SearchStrategy[Any]] = SMALL_INTS

    def __init__(self) -> None:
        super().__init__()
        self.factories = {kg: KeyedListStateFactory(self.keyed_store, kg, self.codec) for kg in KEY_GROUPS}
        self.plain: ListState[Any] = ListState(self.plain_store, self.codec)
        self.model: dict[Slot, list[Any]] = {}

    def state(self, slot: Slot, as_str: bool = False) -> ListState[Any] | KeyedListState[Any]:
        if slot is None:
            return self.plain
        kg, pk, ns = slot
        return self.factories[kg].new_keyed_list(pk, as_given(ns, as_str))

    @rule(slot=slots(), data=st.data(), as_str=st.booleans())
    def add(self, slot: Slot, data: st.DataObject, as_str: bool) -> None:
        v = data.draw(self.elements)
        self.state(slot, as_str).add(v)
        self.model.setdefault(slot, []).append(v)

    @rule(slot=slots(), data=st.data(), as_generator=st.booleans())
    def add_all(self, slot: Slot, data: st.DataObject, as_generator: bool) -> None:
        vs = data.draw(st.lists(self.elements, max_size=3))
        self.state(slot).add_all(iter(vs) if as_generator else vs)
        self.model.setdefault(slot, []).extend(vs)

    @rule(slot=slots(), data=st.data())
    def update(self, slot: Slot, data: st.DataObject) -> None:
        vs = data.draw(st.lists(self.elements, max_size=3))
        self.state(slot).update(vs)
        self.model[slot] = list(vs)

    @rule(slot=slots())
    def clear(self, slot: Slot) -> None:
        self.state(slot).clear()
        self.model.pop(slot, None)

    @invariant()
    def every_slot_sees_its_own_list(self) -> None:
        for slot in [None, *all_keyed_slots()]:
            assert self.state(slot).get() == self.model.get(slot, [])


class StringListModel(ListModel):
    """Variable-size encodings: keyed lists use length frames instead of fixed-size ones."""

    codec = StringCodec()
    elements = SHORT_TEXT


# MapState ------------------------------------------------------------------------------------

MAP_NAMESPACES = [b"n", b"n2", b"\xff"]  # keyed maps need a non-empty map name


class MapModel(StateModel):
    key_codec: ClassVar[Codec[Any]] = StringCodec()
    map_keys: ClassVar[st.SearchStrategy[Any]] = SHORT_TEXT
    map_values = st.one_of(st.none(), st.integers(-5, 5), st.text(max_size=2))

    def __init__(self) -> None:
        super().__init__()
        self.factories = {
            kg: KeyedMapStateFactory(self.keyed_store, kg, self.key_codec, PickleCodec()) for kg in KEY_GROUPS
        }
        self.plain: MapState[Any, Any] = MapState(self.plain_store, self.key_codec, PickleCodec())
        self.model: dict[Slot, dict[Any, Any]] = {}

    def view(self, slot: tuple[bytes, bytes, bytes], as_str: bool = False) -> KeyedMapState[Any, Any]:
        kg, pk, ns = slot
        name = as_given(ns, as_str) if ns != b"\xff" else ns
        return self.factories[kg].new_keyed_map(pk, name)

    def expected_items(self, slot: Slot) -> list[tuple[Any, Any]]:
        return sorted(self.model.get(slot, {}).items(), key=lambda kv: kv[0])

    @rule(slot=slots(MAP_NAMESPACES), data=st.data(), as_str=st.booleans())
    def put(self, slot: Slot, data: st.DataObject, as_str: bool) -> None:
        k, v = data.draw(self.map_keys), data.draw(self.map_values)
        if slot is None:
            self.plain.put(k, v)
        else:
            self.view(slot, as_str).put(k, v)
        self.model.setdefault(slot, {})[k] = v

    @rule(slot=slots(MAP_NAMESPACES), data=st.data())
    def get(self, slot: Slot, data: st.DataObject) -> None:
        k = data.draw(self.map_keys)
        entries = self.model.get(slot, {})
        if slot is None:
            assert self.plain.get(k) == entries.get(k)
        else:
            view = self.view(slot)
            expected = (entries[k], True) if k in entries else (None, False)
            assert view.get(k) == expected
            assert view.contains(k) == (k in entries)

    @rule(slot=slots(MAP_NAMESPACES), data=st.data())
    def delete(self, slot: Slot, data: st.DataObject) -> None:
        k = data.draw(self.map_keys)
        if slot is None:
            self.plain.delete(k)
        else:
            self.view(slot).delete(k)
        self.model.get(slot, {}).pop(k, None)

    @rule(slot=slots(MAP_NAMESPACES))
    def clear(self, slot: Slot) -> None:
        if slot is None:
            self.plain.clear()
        else:
            self.view(slot).clear()
        self.model.pop(slot, None)

    @rule(slot=st.sampled_from(all_keyed_slots(MAP_NAMESPACES)))
    def keys_values_is_empty(self, slot: tuple[bytes, bytes, bytes]) -> None:
        view, items = self.view(slot), self.expected_items(slot)
        assert list(view.keys()) == [k for k, _ in items]
        assert list(view.values()) == [v for _, v in items]
        assert view.is_empty() == (not items)

    @invariant()
    def every_map_holds_its_own_entries_in_key_order(self) -> None:
        assert list(self.plain.all()) == self.expected_items(None)
        for slot in all_keyed_slots(MAP_NAMESPACES):
            assert list(self.view(slot).all()) == self.expected_items(slot)


class IntKeyMapModel(MapModel):
    """Signed integer keys: negative keys must come before positive ones."""

    key_codec = IntCodec()
    map_keys = SMALL_INTS


# PriorityQueueState --------------------------------------------------------------------------


class PriorityQueueModel(StateModel):
    codec: ClassVar[Codec[Any]] = IntCodec()
    elements: ClassVar[st.SearchStrategy[Any]] = SMALL_INTS

    def __init__(self) -> None:
        super().__init__()
        self.factories = {
            kg: KeyedPriorityQueueStateFactory(self.keyed_store, kg, self.codec) for kg in KEY_GROUPS
        }
        self.plain: PriorityQueueState[Any] = PriorityQueueState(self.plain_store, self.codec)
        self.model: dict[Slot, list[Any]] = {}

    def state(
        self, slot: Slot, as_str: bool = False
    ) -> PriorityQueueState[Any] | KeyedPriorityQueueState[Any]:
        if slot is None:
            return self.plain
        kg, pk, ns = slot
        return self.factories[kg].new_keyed_priority_queue(pk, as_given(ns, as_str))

    @rule(slot=slots(), data=st.data(), as_str=st.booleans())
    def add(self, slot: Slot, data: st.DataObject, as_str: bool) -> None:
        v = data.draw(self.elements)
        self.state(slot, as_str).add(v)
        self.model.setdefault(slot, []).append(v)

    @rule(slot=slots())
    def peek(self, slot: Slot) -> None:
        queue = self.model.get(slot, [])
        assert self.state(slot).peek() == ((min(queue), True) if queue else (None, False))

    @rule(slot=slots())
    def poll(self, slot: Slot) -> None:
        queue = self.model.get(slot, [])
        if queue:
            smallest = min(queue)
            queue.remove(smallest)  # one copy only: equal elements are all kept
            assert self.state(slot).poll() == (smallest, True)
        else:
            assert self.state(slot).poll() == (None, False)

    @rule(slot=slots())
    def clear(self, slot: Slot) -> None:
        self.state(slot).clear()
        self.model.pop(slot, None)

    @invariant()
    def every_queue_holds_its_own_elements_ascending_with_duplicates(self) -> None:
        for slot in [None, *all_keyed_slots()]:
            assert list(self.state(slot).all()) == sorted(self.model.get(slot, []))


class StringPriorityQueueModel(PriorityQueueModel):
    codec = StringCodec()
    elements = SHORT_TEXT


# AggregatingState ----------------------------------------------------------------------------


class SumCountLast:
    """Accumulator ``[sum, count, last]`` (a JSON list); the result is ``(sum, count, last)``."""

    def create_accumulator(self) -> list[int]:
        return [0, 0, 0]

    def add(self, value: int, accumulator: list[int]) -> list[int]:
        return [accumulator[0] + value, accumulator[1] + 1, value]

    def get_result(self, accumulator: list[int]) -> tuple[int, int, int]:
        return (accumulator[0], accumulator[1], accumulator[2])

    def merge(self, acc_a: list[int], acc_b: list[int]) -> list[int]:
        return [acc_a[0] + acc_b[0], acc_a[1] + acc_b[1], acc_b[2]]


def aggregate(values: list[int]) -> tuple[tuple[int, int, int] | None, bool]:
    if not values:
        return (None, False)
    return ((sum(values), len(values), values[-1]), True)


class AggregatingModel(StateModel):
    def __init__(self) -> None:
        super().__init__()
        agg = SumCountLast()
        self.factories = {
            kg: KeyedAggregatingStateFactory(self.keyed_store, kg, JsonCodec(), agg) for kg in KEY_GROUPS
        }
        self.plain: AggregatingState[int, list[int], tuple[int, int, int]] = AggregatingState(
            self.plain_store, JsonCodec(), agg
        )
        self.model: dict[Slot, list[int]] = {}

    def state(
        self, slot: Slot, as_str: bool = False
    ) -> (
        AggregatingState[int, list[int], tuple[int, int, int]]
        | KeyedAggregatingState[int, list[int], tuple[int, int, int]]
    ):
        if slot is None:
            return self.plain
        kg, pk, ns = slot
        return self.factories[kg].new_aggregating_state(pk, as_given(ns, as_str))

    @rule(slot=slots(), v=SMALL_INTS, as_str=st.booleans())
    def add(self, slot: Slot, v: int, as_str: bool) -> None:
        self.state(slot, as_str).add(v)
        self.model.setdefault(slot, []).append(v)

    @rule(slot=slots())
    def clear(self, slot: Slot) -> None:
        self.state(slot).clear()
        self.model.pop(slot, None)

    @invariant()
    def every_slot_sees_its_own_aggregate(self) -> None:
        for slot in [None, *all_keyed_slots()]:
            assert self.state(slot).get() == aggregate(self.model.get(slot, []))


# ReducingState -------------------------------------------------------------------------------


def join(current: str, value: str) -> str:
    """Order-sensitive, and tells a stored-as-is first value from a reduced one."""
    return f"{current}|{value}"


class ReducingModel(StateModel):
    def __init__(self) -> None:
        super().__init__()
        self.factories = {
            kg: KeyedReducingStateFactory(self.keyed_store, kg, StringCodec(), join) for kg in KEY_GROUPS
        }
        self.plain: ReducingState[str] = ReducingState(self.plain_store, StringCodec(), join)
        self.model: dict[Slot, list[str]] = {}

    def state(self, slot: Slot, as_str: bool = False) -> ReducingState[str] | KeyedReducingState[str]:
        if slot is None:
            return self.plain
        kg, pk, ns = slot
        return self.factories[kg].new_reducing_state(pk, as_given(ns, as_str))

    @rule(slot=slots(), v=SHORT_TEXT, as_str=st.booleans())
    def add(self, slot: Slot, v: str, as_str: bool) -> None:
        self.state(slot, as_str).add(v)
        self.model.setdefault(slot, []).append(v)

    @rule(slot=slots())
    def clear(self, slot: Slot) -> None:
        self.state(slot).clear()
        self.model.pop(slot, None)

    @invariant()
    def every_slot_sees_its_own_reduction(self) -> None:
        for slot in [None, *all_keyed_slots()]:
            values = self.model.get(slot)
            expected = ("|".join(values), True) if values else (None, False)
            assert self.state(slot).get() == expected


# The same map and queue machines over the sqlite backend (their scans read real byte order).


class SqliteMapModel(IntKeyMapModel):
    backend = "sqlite"


class SqlitePriorityQueueModel(PriorityQueueModel):
    backend = "sqlite"


SQLITE_SETTINGS = settings(max_examples=20, stateful_step_count=30, deadline=None)

TestValueModel = ValueModel.TestCase
TestListModel = ListModel.TestCase
TestStringListModel = StringListModel.TestCase
TestMapModel = MapModel.TestCase
TestIntKeyMapModel = IntKeyMapModel.TestCase
TestPriorityQueueModel = PriorityQueueModel.TestCase
TestStringPriorityQueueModel = StringPriorityQueueModel.TestCase
TestAggregatingModel = AggregatingModel.TestCase
TestReducingModel = ReducingModel.TestCase
TestSqliteMapModel = SqliteMapModel.TestCase
TestSqlitePriorityQueueModel = SqlitePriorityQueueModel.TestCase

for _case in (
    TestValueModel,
    TestListModel,
    TestStringListModel,
    TestMapModel,
    TestIntKeyMapModel,
    TestPriorityQueueModel,
    TestStringPriorityQueueModel,
    TestAggregatingModel,
    TestReducingModel,
):
    _case.settings = SETTINGS
for _case in (TestSqliteMapModel, TestSqlitePriorityQueueModel):
    _case.settings = SQLITE_SETTINGS
del _case  # not a test of its own
