"""Keyed state without TTL kept as objects (``_HeapCell``): same answers as encoding on every
access, values only handed out shared when they are immutable, errors where the value is written,
and the store written on ``flush`` (snapshots) with unchanged keys' bytes kept."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fs_api_advanced import (
    BoolCodec,
    BytesCodec,
    Codec,
    FloatCodec,
    IntCodec,
    JsonCodec,
    PickleCodec,
    StringCodec,
)
from fs_compat.common import Row, Types
from fs_compat.runtime import KeyedStateBackend, StateKind, StateSpec

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=4)
    | st.binary(max_size=4),
    lambda children: st.lists(children, max_size=3) | st.tuples(children, children),
    max_leaves=6,
)
CODECS: list[Codec[Any]] = [
    IntCodec(),
    FloatCodec(),
    BoolCodec(),
    StringCodec(),
    BytesCodec(),
    JsonCodec(),
    PickleCodec(),
    Types.TUPLE([Types.LONG(), Types.LONG()]).codec(),
    Types.TUPLE([Types.INT(), Types.STRING()]).codec(),
    Types.INT().codec(),
]


@settings(max_examples=300, deadline=None)
@given(values)
def test_kept_as_is_only_for_values_that_read_back_as_themselves(value: Any) -> None:
    for codec in CODECS:
        if codec.kept_as_is(value):
            back = codec.decode(codec.encode(value))
            assert back == value and type(back) is type(value), (codec, value)


def test_a_codec_subclass_that_changes_the_encoding_gets_the_safe_default() -> None:
    class Tagged(IntCodec):
        def encode(self, value: int) -> bytes:
            return b"t" + super().encode(value)

        def decode(self, data: bytes) -> int:
            return super().decode(data[1:])

    assert IntCodec().kept_as_is(3)
    assert not Tagged().kept_as_is(3)


def _value_state(codec: Codec[Any], name: str = "v") -> tuple[KeyedStateBackend, Any]:
    backend = KeyedStateBackend()
    return backend, backend.get_state(StateSpec(name, StateKind.VALUE, codec))


def test_mutable_values_are_not_shared_with_the_state() -> None:
    backend, state = _value_state(PickleCodec())
    backend.set_current_key("k")
    items = [1, 2]
    state.update(items)
    items.append(3)  # after update: not seen by the state
    read = state.value()
    assert read == [1, 2]
    read.append(4)  # a read value is a copy
    assert state.value() == [1, 2]


def test_immutable_values_read_back_equal_and_typed_values_take_their_codecs_shape() -> None:
    backend, state = _value_state(Types.TUPLE([Types.LONG(), Types.LONG()]).codec())
    backend.set_current_key(1)
    state.update((1, 2))
    assert state.value() == (1, 2)
    state.update([3, 4])  # a list: kept encoded, read back as the codec decodes it
    assert state.value() == (3, 4)
    backend2, rows = _value_state(Types.ROW_NAMED(["a"], [Types.LONG()]).codec())
    backend2.set_current_key(1)
    rows.update((5,))
    assert rows.value() == Row(a=5)


def test_a_bad_value_fails_at_update_and_leaves_the_state_as_it_was() -> None:
    backend, state = _value_state(Types.TUPLE([Types.LONG(), Types.LONG()]).codec())
    backend.set_current_key("k")
    state.update((1, 2))
    with pytest.raises((TypeError, ValueError)):
        state.update((1, "x"))
    with pytest.raises((TypeError, ValueError)):
        state.update((1, 2**64))
    assert state.value() == (1, 2)


def test_update_none_and_clear_remove_the_value_also_from_the_store() -> None:
    backend, state = _value_state(IntCodec())
    for key in ("a", "b"):
        backend.set_current_key(key)
        state.update(7)
    backend.flush()
    assert len(backend.stores["v"]) == 2
    backend.set_current_key("a")
    state.update(None)
    backend.set_current_key("b")
    state.clear()
    assert state.value() is None
    backend.flush()
    assert len(backend.stores["v"]) == 0


def test_flush_writes_only_what_changed_and_snapshots_see_it() -> None:
    backend, state = _value_state(IntCodec())
    backend.set_current_key("a")
    state.update(1)
    kg = backend.current_key_group
    first = backend.snapshot_key_group(kg)
    assert backend.snapshot_key_group(kg) == first
    state.update(2)
    second = backend.snapshot_key_group(kg)
    assert second != first
    restored = KeyedStateBackend()
    restored.restore_key_group(kg, second)
    restored.set_current_key("a")
    assert restored.get_state(StateSpec("v", StateKind.VALUE, IntCodec())).value() == 2


def test_restore_replaces_values_written_since_the_last_flush() -> None:
    backend, state = _value_state(IntCodec())
    backend.set_current_key("a")
    state.update(1)
    kg = backend.current_key_group
    saved = backend.snapshot_key_group(kg)
    state.update(5)  # not flushed yet
    backend.restore_key_group(kg, saved)
    assert state.value() == 1


def test_a_key_missing_from_the_cache_is_read_from_the_store_whenever_it_may_be_there() -> None:
    """A key the view never saw is looked up in the store once that store may hold values: after
    the view flushed and forgot (a worker dropping its copy), and with a ``store_factory`` that
    hands out stores written before. A fresh backend skips the lookup (its stores start empty)."""
    backend, state = _value_state(IntCodec())
    backend.set_current_key("a")
    state.update(1)
    backend.flush()
    state.forget()
    assert state.value() == 1
    backend.set_current_key("b")
    assert state.value() is None

    shared = backend.stores["v"]
    other = KeyedStateBackend(store_factory=lambda _name: shared)
    view = other.get_state(StateSpec("v", StateKind.VALUE, IntCodec()))
    other.set_current_key("a")
    assert view.value() == 1


@pytest.mark.parametrize("kind", [StateKind.REDUCING, StateKind.AGGREGATING])
def test_folding_states_keep_a_none_accumulator_apart_from_no_value(kind: StateKind) -> None:
    class KeepLast:
        def create_accumulator(self) -> Any:
            return None

        def add(self, value: Any, acc: Any) -> Any:
            return value

        def get_result(self, acc: Any) -> Any:
            return ("result", acc)

        def merge(self, a: Any, b: Any) -> Any:
            return b

    spec = (
        StateSpec("f", kind, PickleCodec(), reduce_function=lambda a, b: b)
        if kind is StateKind.REDUCING
        else StateSpec("f", kind, PickleCodec(), aggregate_function=KeepLast())
    )
    backend = KeyedStateBackend()
    state = backend.get_state(spec)
    backend.set_current_key("k")
    assert state.get() is None
    state.add(None)
    expected = None if kind is StateKind.REDUCING else ("result", None)
    assert state.get() == expected
    backend.flush()
    assert len(backend.stores["f"]) == 1  # a value None is stored, as without the cache
