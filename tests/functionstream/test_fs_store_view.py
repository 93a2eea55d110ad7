"""A processor's KvStore on the runtime: a view over the keyed state backend, scoped to the current
key. The KvStore contract holds inside one key; keys never see each other's entries; snapshots of a
key group carry the entries of its keys only."""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fs_api import ComplexKey, KvStore
from fs_api_advanced import IntCodec, KeyedMapStateFactory, KeyedValueStateFactory, ListState, StringCodec
from fs_compat.functionstream import PLAIN_NAMESPACE, KeyedStoreView, encode_namespace
from fs_compat.runtime import KeyedStateBackend, KeyEncoder, StateAccessError


def _contract_module() -> Any:
    path = Path(__file__).parents[1] / "foundation" / "test_kvstore_contract.py"
    spec = importlib.util.spec_from_file_location("_fs_kvstore_contract", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Every contract test that takes the ``store`` fixture runs here against the view.
_CONTRACT = _contract_module()
for _name, _fn in vars(_CONTRACT).items():
    if _name.startswith("test_") and "store" in inspect.signature(_fn).parameters:
        globals()[f"{_name}__view"] = _fn


@pytest.fixture
def store() -> Iterator[KvStore]:
    """The view for key ``"alice"``, with another key's entries beside it in the same store."""
    backend = KeyedStateBackend(KeyEncoder())
    view = KeyedStoreView(backend, "s")
    backend.set_current_key("bob")
    view.put(ComplexKey(b"g", b"k", b"ns", b"a"), b"bob's")
    view.put_state(b"a", b"bob's")
    backend.set_current_key("alice")
    yield view
    backend.set_current_key("bob")
    assert view.get(ComplexKey(b"g", b"k", b"ns", b"a")) == b"bob's", "another key's entry changed"
    assert view.get_state(b"a") == b"bob's"


def _backend() -> tuple[KeyedStateBackend, KeyedStoreView]:
    backend = KeyedStateBackend(KeyEncoder(StringCodec()))
    return backend, KeyedStoreView(backend, "store")


def test_entries_are_isolated_per_key_in_both_keyspaces() -> None:
    backend, view = _backend()
    for key in ("alice", "bob"):
        backend.set_current_key(key)
        view.put(ComplexKey(b"g", b"k", b"ns", b"u"), key.encode())
        view.put_state(b"p", key.encode())
        view.merge(ComplexKey(b"g", b"k", b"list", b""), key.encode())
    backend.set_current_key("alice")
    assert view.get(ComplexKey(b"g", b"k", b"ns", b"u")) == b"alice"
    assert view.get_state(b"p") == b"alice"
    assert view.get(ComplexKey(b"g", b"k", b"list", b"")) == b"alice"
    view.delete_prefix(ComplexKey(b"g", b"k", b"ns", b""))
    view.delete_state(b"p")
    assert view.get(ComplexKey(b"g", b"k", b"ns", b"u")) is None
    backend.set_current_key("carol")
    assert view.get(ComplexKey(b"g", b"k", b"ns", b"u")) is None
    assert view.list_states(b"", b"\xff") == []
    backend.set_current_key("bob")
    assert view.get(ComplexKey(b"g", b"k", b"ns", b"u")) == b"bob"
    assert view.get_state(b"p") == b"bob"


def test_plain_and_complex_keyspaces_never_meet() -> None:
    backend, view = _backend()
    backend.set_current_key("alice")
    view.put_state(b"u", b"plain")
    view.put(ComplexKey(b"", b"", b"", b"u"), b"complex")
    assert view.get_state(b"u") == b"plain"
    assert view.get(ComplexKey(b"", b"", b"", b"u")) == b"complex"
    assert view.list_states(b"", b"\xff") == [b"u"]
    assert list(view.scan_complex(b"", b"", b"")) == [(b"u", b"complex")]


def test_scans_and_ranges_are_ascending_and_exact() -> None:
    backend, view = _backend()
    backend.set_current_key("alice")
    for uk in (b"c", b"a", b"\xff", b"", b"ab"):
        view.put(ComplexKey(b"g", b"k", b"m", uk), uk)
    view.put(ComplexKey(b"g", b"k", b"m2", b"b"), b"other namespace")
    view.put(ComplexKey(b"g", b"kk", b"m", b"b"), b"other key")
    for key in (b"b", b"a", b"c"):
        view.put_state(key, key)
    assert [uk for uk, _ in view.scan_complex(b"g", b"k", b"m")] == [b"", b"a", b"ab", b"c", b"\xff"]
    assert view.list_complex(b"g", b"k", b"m", b"a", b"c") == [b"a", b"ab"]
    assert view.list_states(b"a", b"c") == [b"a", b"b"]
    view.delete_prefix(ComplexKey(b"g", b"k", b"m", b"ignored"))
    assert list(view.scan_complex(b"g", b"k", b"m")) == []
    assert view.list_complex(b"g", b"k", b"m2", b"", b"\xff") == [b"b"]
    assert view.list_complex(b"g", b"kk", b"m", b"", b"\xff") == [b"b"]


def test_namespace_encoding_is_unambiguous() -> None:
    encoded = {
        encode_namespace(kg, k, ns)
        for kg, k, ns in [(b"a", b"bc", b""), (b"ab", b"c", b""), (b"", b"abc", b""), (b"", b"", b"abc")]
    }
    assert len(encoded) == 4
    assert PLAIN_NAMESPACE not in encoded


def test_fs_api_advanced_states_work_through_the_view() -> None:
    backend, view = _backend()
    values = KeyedValueStateFactory(view, b"by_key", IntCodec())
    maps = KeyedMapStateFactory(view, b"by_key", StringCodec(), IntCodec())
    for key, n in (("alice", 3), ("bob", 5)):
        backend.set_current_key(key)
        values.new_keyed_value(b"pk", b"count").update(n)
        m = maps.new_keyed_map(b"pk", b"fields")
        for i in range(n):
            m.put(f"f{i}", i)
        ListState(view, IntCodec()).add_all([n, n])
    backend.set_current_key("alice")
    assert values.new_keyed_value(b"pk", b"count").value() == (3, True)
    assert [k for k, _ in maps.new_keyed_map(b"pk", b"fields").all()] == ["f0", "f1", "f2"]
    assert ListState(view, IntCodec()).get() == [3, 3]


def test_snapshot_of_a_key_group_carries_the_views_entries() -> None:
    backend, view = _backend()
    encoder = backend.key_encoder
    keys = [f"user-{i}" for i in range(20)]
    for key in keys:
        backend.set_current_key(key)
        view.put(ComplexKey(b"g", key.encode(), b"ns", b"u"), key.encode())
        view.put_state(b"p", key.encode())
    groups = {encoder.key_group(encoder.encode(k)) for k in keys}
    restored, restored_view = _backend()
    for kg in groups:
        restored.restore_key_group(kg, backend.snapshot_key_group(kg))
    for key in keys:
        restored.set_current_key(key)
        assert restored_view.get(ComplexKey(b"g", key.encode(), b"ns", b"u")) == key.encode()
        assert restored_view.get_state(b"p") == key.encode()
    # A snapshot of one group holds that group's keys only.
    one = next(iter(groups))
    alone, alone_view = _backend()
    alone.restore_key_group(one, backend.snapshot_key_group(one))
    for key in keys:
        alone.set_current_key(key)
        expected = key.encode() if encoder.key_group(encoder.encode(key)) == one else None
        assert alone_view.get_state(b"p") == expected


def test_use_without_a_current_key_is_an_error_naming_the_store() -> None:
    _, view = _backend()
    view.outside = " (in init)"
    with pytest.raises(StateAccessError, match=r"store 'store' was used with no current key \(in init\)"):
        view.get_state(b"k")
    with pytest.raises(StateAccessError, match="no current key"):
        list(view.scan_complex(b"", b"", b""))
