"""Keyed state snapshots per key group: what leaves the process for a Spark state store."""

from __future__ import annotations

from typing import Any

import pytest

from fs_api_advanced import IntCodec, StringCodec, TtlConfig
from fs_compat.runtime import KeyedStateBackend, StateAccessError, StateKind, StateSpec

COUNT = StateSpec("count", StateKind.VALUE, IntCodec())
ITEMS = StateSpec("items", StateKind.LIST, StringCodec())
FIELDS = StateSpec("fields", StateKind.MAP, IntCodec(), key_codec=StringCodec())
TOTAL = StateSpec("total", StateKind.REDUCING, IntCodec(), reduce_function=lambda a, b: a + b)


def _fill(backend: KeyedStateBackend, keys: list[str]) -> None:
    for i, key in enumerate(keys):
        backend.set_current_key(key)
        backend.get_state(COUNT).update(i)
        backend.get_state(ITEMS).add(f"x{i}")
        backend.get_state(FIELDS).put(f"f{i}", i)
        backend.get_state(TOTAL).add(i)


def _read(backend: KeyedStateBackend, key: str) -> tuple[Any, ...]:
    backend.set_current_key(key)
    return (
        backend.get_state(COUNT).value(),
        backend.get_state(ITEMS).get(),
        dict(backend.get_state(FIELDS).items()),
        backend.get_state(TOTAL).get(),
    )


def _by_group(backend: KeyedStateBackend, keys: list[str]) -> dict[int, list[str]]:
    groups: dict[int, list[str]] = {}
    for key in keys:
        backend.set_current_key(key)
        groups.setdefault(backend.current_key_group, []).append(key)
    return groups


def test_round_trip_per_key_group_restores_every_state_kind() -> None:
    keys = [f"k{i}" for i in range(40)]
    source = KeyedStateBackend()
    _fill(source, keys)
    groups = _by_group(source, keys)
    assert len(groups) > 1
    target = KeyedStateBackend()
    for kg in groups:
        target.restore_key_group(kg, source.snapshot_key_group(kg))
    for key in keys:
        assert _read(target, key) == _read(source, key)


def test_restore_replaces_only_its_key_group() -> None:
    keys = [f"k{i}" for i in range(40)]
    backend = KeyedStateBackend()
    _fill(backend, keys)
    groups = _by_group(backend, keys)
    kg, members = next(iter(groups.items()))
    others = [k for k in keys if k not in members]
    before = {k: _read(backend, k) for k in others}
    backend.restore_key_group(kg, None)
    for key in members:
        assert _read(backend, key) == (None, [], {}, None)
    assert {k: _read(backend, k) for k in others} == before


def test_snapshot_of_unchanged_group_is_stable_and_empty_group_restores_empty() -> None:
    backend = KeyedStateBackend()
    _fill(backend, ["a"])
    backend.set_current_key("a")
    kg = backend.current_key_group
    assert backend.snapshot_key_group(kg) == backend.snapshot_key_group(kg)
    empty = KeyedStateBackend()
    empty.restore_key_group(kg, backend.snapshot_key_group((kg + 1) % 128))
    assert _read(empty, "a") == (None, [], {}, None)


def test_changed_descriptor_is_refused_naming_state_and_both_types() -> None:
    backend = KeyedStateBackend()
    _fill(backend, ["a"])
    backend.set_current_key("a")
    data = backend.snapshot_key_group(backend.current_key_group)
    restored = KeyedStateBackend()
    restored.restore_key_group(backend.current_key_group, data)
    changed = StateSpec("count", StateKind.VALUE, StringCodec())
    with pytest.raises(StateAccessError) as info:
        restored.get_state(changed)
    message = str(info.value)
    assert "state 'count'" in message
    assert "value state of IntCodec()" in message
    assert "value state of StringCodec()" in message
    # Declared first, restored after: refused before anything is replaced.
    declared = KeyedStateBackend()
    declared.get_state(changed)
    with pytest.raises(StateAccessError, match="state 'count' was saved as value state of IntCodec"):
        declared.restore_key_group(backend.current_key_group, data)
    assert declared.stores == {} or all(len(s) == 0 for s in declared.stores.values())  # type: ignore[arg-type]


def test_corrupt_snapshot_is_a_clear_error() -> None:
    with pytest.raises(StateAccessError, match="cannot restore key group 3: the snapshot is corrupt"):
        KeyedStateBackend().restore_key_group(3, b"not a snapshot")


def test_a_snapshot_of_the_crc32_key_groups_is_refused_naming_why_and_what_to_do() -> None:
    """Format 1 put keys in key groups by crc32: restored, its keys would not be found under
    Flink's key groups, so its state would be lost without a word."""
    import pickle

    backend = KeyedStateBackend()
    _fill(backend, ["a"])
    stores = pickle.loads(backend.snapshot_key_group(backend.current_key_group))[2]
    old = pickle.dumps((1, {"count": "value state of IntCodec"}, stores))
    fresh = KeyedStateBackend()
    why = r"snapshot format 1, expected 2: .*by crc32.*new checkpoint location"
    with pytest.raises(StateAccessError, match=why):
        fresh.restore_key_group(7, old)
    assert all(len(s) == 0 for s in fresh.stores.values())  # type: ignore[arg-type]


@pytest.mark.parametrize("declare_first", [True, False])
def test_restored_ttl_state_expires_and_is_cleaned_up(declare_first: bool) -> None:
    now = [1_000]
    spec = StateSpec("seen", StateKind.VALUE, IntCodec(), ttl=TtlConfig(ttl_ms=100))
    source = KeyedStateBackend(clock=lambda: now[0])
    keys = [f"k{i}" for i in range(30)]
    for key in keys:
        source.set_current_key(key)
        source.get_state(spec).update(1)
    groups = _by_group(source, keys)
    target = KeyedStateBackend(clock=lambda: now[0])
    if declare_first:
        target.get_state(spec)
    for kg in groups:
        target.restore_key_group(kg, source.snapshot_key_group(kg))
    target.set_current_key("k0")
    assert target.get_state(spec).value() == 1
    now[0] += 100
    target.purge_expired()
    assert sum(len(s) for s in target.stores.values()) == 0  # type: ignore[arg-type]
