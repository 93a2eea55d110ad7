"""Explicit state contracts: validation errors, decode failures, physical layout, TTL."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import pytest

from fs_api import ComplexKey, KvError, KvStore, MemoryKvStore
from fs_api.testing import LocalContext
from fs_api_advanced import (
    AggregatingState,
    BytesCodec,
    IntCodec,
    JsonCodec,
    KeyedAggregatingStateFactory,
    KeyedListStateFactory,
    KeyedMapStateFactory,
    KeyedPriorityQueueStateFactory,
    KeyedReducingStateFactory,
    KeyedValueStateFactory,
    ListState,
    MapState,
    PickleCodec,
    PriorityQueueState,
    ReducingState,
    StringCodec,
    TtlConfig,
    TtlUpdate,
    TtlVisibility,
    ValueState,
    create_map_state_auto_key_codec,
    infer_ordered_key_codec,
)
from fs_api_advanced import testing as adv_testing

ROOT = ComplexKey(b"", b"", b"", b"")
ORDERED_MESSAGE = "key codec must support ordered key encoding for range scans"


class Summing:
    def create_accumulator(self) -> int:
        return 0

    def add(self, value: int, accumulator: int) -> int:
        return accumulator + value

    def get_result(self, accumulator: int) -> int:
        return accumulator

    def merge(self, acc_a: int, acc_b: int) -> int:
        return acc_a + acc_b


# Ordered key codecs --------------------------------------------------------------------------


@pytest.mark.parametrize("codec", [PickleCodec(), JsonCodec()])
def test_map_state_with_unordered_key_codec_is_a_kv_error(codec: Any) -> None:
    with pytest.raises(KvError, match=ORDERED_MESSAGE) as info:
        MapState(MemoryKvStore(), codec, IntCodec())
    assert type(codec).__name__ in str(info.value)
    with pytest.raises(KvError, match=ORDERED_MESSAGE):
        KeyedMapStateFactory(MemoryKvStore(), b"", codec, IntCodec())
    with pytest.raises(KvError, match=ORDERED_MESSAGE):
        PriorityQueueState(MemoryKvStore(), codec)
    with pytest.raises(KvError, match=ORDERED_MESSAGE):
        KeyedPriorityQueueStateFactory(MemoryKvStore(), b"", codec)


def test_unordered_auto_key_types_are_kv_errors() -> None:
    with pytest.raises(KvError, match=ORDERED_MESSAGE):
        infer_ordered_key_codec(dict)
    with pytest.raises(KvError, match=ORDERED_MESSAGE):
        KeyedMapStateFactory.from_context_auto_codec(LocalContext(), "s", b"", tuple, int)
    with pytest.raises(KvError, match=ORDERED_MESSAGE):
        KeyedPriorityQueueStateFactory.from_context_auto_codec(LocalContext(), "s", b"", object)
    assert infer_ordered_key_codec(str) == StringCodec()


# None and non-bytes names --------------------------------------------------------------------

FACTORIES: dict[str, Callable[[KvStore, Any], Any]] = {
    "value": lambda s, kg: KeyedValueStateFactory(s, kg, IntCodec()),
    "list": lambda s, kg: KeyedListStateFactory(s, kg, IntCodec()),
    "map": lambda s, kg: KeyedMapStateFactory(s, kg, StringCodec(), IntCodec()),
    "pq": lambda s, kg: KeyedPriorityQueueStateFactory(s, kg, IntCodec()),
    "aggregating": lambda s, kg: KeyedAggregatingStateFactory(s, kg, IntCodec(), Summing()),
    "reducing": lambda s, kg: KeyedReducingStateFactory(s, kg, IntCodec(), max),
}
NEW_VIEW: dict[str, Callable[[Any, Any, Any], Any]] = {
    "value": lambda f, pk, ns: f.new_keyed_value(pk, ns),
    "list": lambda f, pk, ns: f.new_keyed_list(pk, ns),
    "map": lambda f, pk, ns: f.new_keyed_map(pk, ns),
    "pq": lambda f, pk, ns: f.new_keyed_priority_queue(pk, ns),
    "aggregating": lambda f, pk, ns: f.new_aggregating_state(pk, ns),
    "reducing": lambda f, pk, ns: f.new_reducing_state(pk, ns),
}


@pytest.mark.parametrize("kind", sorted(FACTORIES))
def test_none_key_group_is_a_kv_error(kind: str) -> None:
    with pytest.raises(KvError, match="key_group must not be None"):
        FACTORIES[kind](MemoryKvStore(), None)


@pytest.mark.parametrize("kind", sorted(FACTORIES))
def test_none_store_is_a_kv_error(kind: str) -> None:
    with pytest.raises(KvError, match="store must not be None"):
        FACTORIES[kind](None, b"")  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", sorted(FACTORIES))
def test_none_primary_key_or_namespace_is_a_kv_error(kind: str) -> None:
    store = MemoryKvStore()
    factory = FACTORIES[kind](store, b"g")
    with pytest.raises(KvError, match="must not be None"):
        NEW_VIEW[kind](factory, None, b"ns")
    # A keyed map's namespace is its map name.
    with pytest.raises(KvError, match="must not be None" if kind != "map" else "map_name is required"):
        NEW_VIEW[kind](factory, b"k", None)
    with pytest.raises(KvError, match="must be bytes or str, got int"):
        NEW_VIEW[kind](factory, 7, b"ns")
    assert len(store) == 0


def test_keyed_map_needs_a_map_name() -> None:
    factory = KeyedMapStateFactory(MemoryKvStore(), b"", StringCodec(), IntCodec())
    with pytest.raises(KvError, match="map_name is required"):
        factory.new_keyed_map(b"k", b"")


def test_str_names_are_utf8_bytes() -> None:
    store = MemoryKvStore()
    factory = KeyedValueStateFactory(store, "gr\u00fcppe", IntCodec())  # type: ignore[arg-type]
    factory.new_keyed_value("k\u00e9y", "n\u00e4me").update(5)  # type: ignore[arg-type]
    raw = store.get(ComplexKey("gr\u00fcppe".encode(), "k\u00e9y".encode(), "n\u00e4me".encode(), b""))
    assert raw == IntCodec().encode(5)


def test_bad_reduce_and_aggregate_functions_are_rejected() -> None:
    with pytest.raises(TypeError, match="reduce_func must be callable"):
        KeyedReducingStateFactory(MemoryKvStore(), b"", IntCodec(), 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="create_accumulator"):
        KeyedAggregatingStateFactory(MemoryKvStore(), b"", IntCodec(), object())  # type: ignore[arg-type]


# Decode failures -----------------------------------------------------------------------------


def test_value_state_decode_failure_is_value_error() -> None:
    store = MemoryKvStore()
    store.put(ROOT, b"\x01\x02")
    with pytest.raises(ValueError):
        ValueState(store, IntCodec()).value()
    with pytest.raises(ValueError):
        ReducingState(store, IntCodec(), max).get()
    with pytest.raises(ValueError):
        AggregatingState(store, IntCodec(), Summing()).get()


@pytest.mark.parametrize("blob", [b"\x00\x00", b"\x00\x00\x00\x05ab", b"\x00\x00\x00\x01a\x00"])
def test_list_state_truncated_blob_is_value_error(blob: bytes) -> None:
    store = MemoryKvStore()
    store.put(ROOT, blob)
    with pytest.raises(ValueError, match="truncated"):
        ListState(store, BytesCodec()).get()


def test_keyed_fixed_size_list_misaligned_blob_is_value_error() -> None:
    store = MemoryKvStore()
    store.put(ComplexKey(b"", b"k", b"ns", b""), b"\x80" * 12)
    with pytest.raises(ValueError, match="not a multiple of 8"):
        KeyedListStateFactory(store, b"", IntCodec()).new_keyed_list(b"k", b"ns").get()


def test_ttl_list_truncated_blob_is_value_error() -> None:
    store = MemoryKvStore()
    store.put(ComplexKey(b"", b"k", b"ns", b""), b"\x00" * 10)
    factory = KeyedListStateFactory(store, b"", StringCodec(), ttl=TtlConfig(ttl_ms=10), clock=lambda: 0)
    with pytest.raises(ValueError, match="truncated"):
        factory.new_keyed_list(b"k", b"ns").get()


def test_priority_queue_corrupt_entries_are_value_errors() -> None:
    store = MemoryKvStore()
    store.put(ComplexKey(b"", b"", b"", IntCodec().encode(1)), b"\x00\x02")  # a bad copy count
    with pytest.raises(ValueError, match="count"):
        list(PriorityQueueState(store, IntCodec()).all())
    store.delete_prefix(ROOT)
    store.put(ComplexKey(b"", b"", b"", b"\x01"), b"")  # not an 8-byte IntCodec element
    with pytest.raises(ValueError):
        PriorityQueueState(store, IntCodec()).peek()


def test_map_state_decode_failure_is_value_error() -> None:
    store = MemoryKvStore()
    store.put(ComplexKey(b"", b"", b"", b"k"), b"not a pickle")
    with pytest.raises(ValueError):
        MapState(store, StringCodec(), PickleCodec()).get("k")
    with pytest.raises(ValueError):
        list(MapState(store, StringCodec(), PickleCodec()).all())


def test_failed_encodes_write_nothing() -> None:
    store = MemoryKvStore()
    items: ListState[int] = ListState(store, IntCodec())
    items.add(1)
    with pytest.raises(TypeError):
        items.add_all([2, "three", 4])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        items.update([5, 2**64])
    assert items.get() == [1]
    m: MapState[str, int] = MapState(MemoryKvStore(), StringCodec(), IntCodec())
    with pytest.raises(TypeError):
        m.put("a", "not an int")  # type: ignore[arg-type]
    assert list(m.all()) == []


# Layout and defaults -------------------------------------------------------------------------


def test_non_keyed_states_live_at_the_empty_complex_key() -> None:
    store = MemoryKvStore()
    ValueState(store, IntCodec()).update(-1)
    assert store.get(ROOT) == bytes.fromhex("7fffffffffffffff")


def test_list_framing() -> None:
    store = MemoryKvStore()
    ListState(store, IntCodec()).add_all([0, -1])
    framed = b"".join(struct.pack(">I", 8) + IntCodec().encode(v) for v in (0, -1))
    assert store.get(ROOT) == framed, "non-keyed lists always use >I length frames"
    keyed = MemoryKvStore()
    KeyedListStateFactory(keyed, b"", IntCodec()).new_keyed_list(b"k", b"ns").add_all([0, -1])
    assert keyed.get(ComplexKey(b"", b"k", b"ns", b"")) == IntCodec().encode(0) + IntCodec().encode(-1)
    text = MemoryKvStore()
    KeyedListStateFactory(text, b"", StringCodec()).new_keyed_list(b"k", b"ns").add_all(["ab", ""])
    assert text.get(ComplexKey(b"", b"k", b"ns", b"")) == b"\x00\x00\x00\x02ab\x00\x00\x00\x00"


def test_map_and_queue_entries_are_keyed_by_the_encoded_element() -> None:
    store = MemoryKvStore()
    KeyedMapStateFactory(store, b"g", IntCodec(), StringCodec()).new_keyed_map(b"k", b"m").put(-1, "v")
    assert store.get(ComplexKey(b"g", b"k", b"m", IntCodec().encode(-1))) == b"v"
    pq_store = MemoryKvStore()
    queue = KeyedPriorityQueueStateFactory(pq_store, b"g", IntCodec()).new_keyed_priority_queue(b"k", b"q")
    queue.add(3)
    assert pq_store.list_complex(b"g", b"k", b"q", b"", b"\xff" * 9) == [IntCodec().encode(3)]


def test_priority_queue_keeps_duplicates() -> None:
    """FunctionStream collapses equal elements (a bug); every copy is kept here."""
    queue = PriorityQueueState(MemoryKvStore(), IntCodec())
    for v in (5, 1, 5, 5, -2, 1):
        queue.add(v)
    assert list(queue.all()) == [-2, 1, 1, 5, 5, 5]
    polled = [queue.poll() for _ in range(7)]
    assert polled == [(-2, True), (1, True), (1, True), (5, True), (5, True), (5, True), (None, False)]
    assert queue.peek() == (None, False)


def test_reducing_state_stores_the_first_value_as_is() -> None:
    calls: list[tuple[str, str]] = []

    def reduce(a: str, b: str) -> str:
        calls.append((a, b))
        return a + b

    state = ReducingState(MemoryKvStore(), StringCodec(), reduce)
    assert state.get() == (None, False)
    state.add("x")
    assert calls == []
    state.add("y")
    assert calls == [("x", "y")]
    assert state.get() == ("xy", True)
    state.clear()
    assert state.get() == (None, False)


def test_auto_codec_defaults() -> None:
    ctx = LocalContext()
    ValueState.from_context_auto_codec(ctx, "v").update({"any": object.__name__})
    assert ctx.getOrCreateKVStore("v").get(ROOT) == PickleCodec().encode({"any": "object"})
    PriorityQueueState.from_context_auto_codec(ctx, "q").add(-1)
    assert ctx.getOrCreateKVStore("q").list_complex(b"", b"", b"", b"", b"\xff" * 9) == [
        IntCodec().encode(-1)
    ]
    m = MapState.from_context_auto_key_codec(ctx, "m", IntCodec())
    m.put(b"\xff", 1)
    m.put(b"", 2)
    assert list(m.all()) == [(b"", 2), (b"\xff", 1)]
    m2 = create_map_state_auto_key_codec(MemoryKvStore(), JsonCodec())
    m2.put(b"k", [1])
    assert m2.get(b"k") == [1]
    assert MapState.with_auto_key_codec(MemoryKvStore(), IntCodec()).get(b"nothing") is None


def test_state_context_mixin_conveniences() -> None:
    ctx = adv_testing.LocalContext()
    counter = ctx.getOrCreateValueStateAutoCodec("counter")
    counter.update(41)
    assert ctx.getOrCreateValueStateAutoCodec("counter").value() == 41
    keyed = ctx.getOrCreateKeyedValueStateFactoryAutoCodec("kv", b"", int)
    keyed.new_keyed_value(b"a", b"n").update(2)
    assert keyed.new_keyed_value(b"a", b"n").value() == (2, True)
    same = ctx.getOrCreateKeyedValueStateFactory("kv", b"", IntCodec())
    assert same.new_keyed_value(b"a", b"n").value() == (2, True)
    queue = ctx.getOrCreatePriorityQueueStateAutoCodec("pq")
    queue.add(2)
    queue.add(2)
    assert list(queue.all()) == [2, 2]


# TTL (injected clock, no sleeping) -----------------------------------------------------------


def test_ttl_value_expires_on_create_and_write() -> None:
    now = [1_000]
    factory = KeyedValueStateFactory(
        MemoryKvStore(), b"", IntCodec(), ttl=TtlConfig(ttl_ms=100), clock=lambda: now[0]
    )
    state = factory.new_keyed_value(b"k", b"n")
    state.update(1)
    now[0] += 99
    assert state.value() == (1, True)
    now[0] += 1  # reads do not refresh under ON_CREATE_AND_WRITE
    assert state.value() == (None, False)
    state.update(2)
    now[0] += 50
    state.update(3)
    now[0] += 99
    assert state.value() == (3, True), "a write refreshes the timestamp"


def test_ttl_value_refreshed_on_read() -> None:
    now = [0]
    config = TtlConfig(ttl_ms=100, update=TtlUpdate.ON_READ_AND_WRITE)
    state = KeyedValueStateFactory(
        MemoryKvStore(), b"", IntCodec(), ttl=config, clock=lambda: now[0]
    ).new_keyed_value(b"k", b"n")
    state.update(7)
    for _ in range(5):
        now[0] += 99
        assert state.value() == (7, True)
    now[0] += 100
    assert state.value() == (None, False)


def test_ttl_return_expired_if_not_cleaned_up_returns_it_once() -> None:
    now = [0]
    config = TtlConfig(
        ttl_ms=10, visibility=TtlVisibility.RETURN_EXPIRED_IF_NOT_CLEANED_UP, incremental_cleanup_size=0
    )
    state = KeyedValueStateFactory(
        MemoryKvStore(), b"", IntCodec(), ttl=config, clock=lambda: now[0]
    ).new_keyed_value(b"k", b"n")
    state.update(5)
    now[0] = 10
    assert state.value() == (5, True)
    assert state.value() == (None, False)


def test_ttl_list_elements_expire_one_by_one() -> None:
    now = [0]
    items = KeyedListStateFactory(
        MemoryKvStore(), b"", IntCodec(), ttl=TtlConfig(ttl_ms=10), clock=lambda: now[0]
    ).new_keyed_list(b"k", b"n")
    items.add(1)
    now[0] = 5
    items.add_all([2, 3])
    now[0] = 10
    assert items.get() == [2, 3]
    now[0] = 15
    assert items.get() == []


def test_ttl_map_entries_expire_one_by_one() -> None:
    now = [0]
    m = KeyedMapStateFactory(
        MemoryKvStore(), b"", StringCodec(), IntCodec(), ttl=TtlConfig(ttl_ms=10), clock=lambda: now[0]
    ).new_keyed_map(b"k", b"m")
    m.put("a", 1)
    now[0] = 5
    m.put("b", 2)
    now[0] = 10
    assert m.get("a") == (None, False)
    assert list(m.all()) == [("b", 2)]
    now[0] = 15
    assert m.is_empty()


def test_ttl_reducing_state_starts_afresh_after_expiry() -> None:
    now = [0]
    state = KeyedReducingStateFactory(
        MemoryKvStore(), b"", IntCodec(), lambda a, b: a + b, ttl=TtlConfig(ttl_ms=10), clock=lambda: now[0]
    ).new_reducing_state(b"k", b"sum")
    state.add(1)
    state.add(2)
    now[0] = 10
    state.add(5)
    assert state.get() == (5, True)


def test_ttl_incremental_cleanup_and_purge_remove_idle_keys() -> None:
    now = [0]
    store = MemoryKvStore()
    factory = KeyedValueStateFactory(
        store, b"", IntCodec(), ttl=TtlConfig(ttl_ms=10, incremental_cleanup_size=100), clock=lambda: now[0]
    )
    for pk in (b"a", b"b", b"c"):
        factory.new_keyed_value(pk, b"n").update(1)
    now[0] = 10
    factory.new_keyed_value(b"d", b"n").update(2)  # touches every indexed key
    assert [store.get(ComplexKey(b"", pk, b"n", b"")) for pk in (b"a", b"b", b"c")] == [None] * 3
    now[0] = 20
    assert factory.purge_expired() == 1
    assert len(store) == 0
