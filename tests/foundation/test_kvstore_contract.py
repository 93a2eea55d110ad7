"""The KvStore contract, one rule per test, for every backend."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fs_api import (
    ComplexKey,
    KvError,
    KvIOError,
    KvIterator,
    KvNotFoundError,
    KvOtherError,
    KvStore,
    ListKvIterator,
    MemoryKvStore,
    SqliteKvStore,
)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KvStore]:
    s: KvStore = MemoryKvStore() if request.param == "memory" else SqliteKvStore(tmp_path / "kv.sqlite")
    yield s
    s.close()


def ck(kg: bytes, k: bytes, ns: bytes, uk: bytes = b"") -> ComplexKey:
    return ComplexKey(kg, k, ns, uk)


def test_get_of_missing_key_is_none(store: KvStore) -> None:
    assert store.get(ck(b"g", b"k", b"ns", b"u")) is None
    assert store.get_state(b"missing") is None
    store.put(ck(b"g", b"k", b"ns", b"u"), b"v")
    assert store.get(ck(b"g", b"k", b"ns", b"other")) is None
    assert store.get(ck(b"g", b"k", b"other", b"u")) is None


def test_put_then_get_and_overwrite(store: KvStore) -> None:
    key = ck(b"g", b"k", b"ns", b"u")
    store.put(key, b"one")
    assert store.get(key) == b"one"
    store.put(key, b"two")
    assert store.get(key) == b"two"
    store.put(key, b"")
    assert store.get(key) == b"", "an empty value is stored, not the same as missing"


def test_merge_appends_bytes_and_stores_when_missing(store: KvStore) -> None:
    key = ck(b"g", b"k", b"ns", b"u")
    store.merge(key, b"ab")
    assert store.get(key) == b"ab"
    store.merge(key, b"cd")
    store.merge(key, b"")
    store.merge(key, b"e")
    assert store.get(key) == b"abcde"
    store.put(key, b"X")
    store.merge(key, b"Y")
    assert store.get(key) == b"XY"


def test_scan_complex_yields_user_key_value_pairs_ascending(store: KvStore) -> None:
    for uk in (b"b", b"\xff", b"", b"a\x00", b"a", b"ab"):
        store.put(ck(b"g", b"k", b"ns", uk), b"v" + uk)
    store.put(ck(b"g", b"k", b"ns2", b"0"), b"other namespace")
    with store.scan_complex(b"g", b"k", b"ns") as it:
        pairs = list(it)
    expected_keys = [b"", b"a", b"a\x00", b"ab", b"b", b"\xff"]
    assert pairs == [(uk, b"v" + uk) for uk in expected_keys]


def test_scan_of_empty_prefix_yields_nothing(store: KvStore) -> None:
    it = store.scan_complex(b"g", b"k", b"nothing-here")
    assert not it.has_next()
    assert it.next() is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ((b"a", b"bc", b""), (b"ab", b"c", b"")),
        ((b"", b"a", b"bc"), (b"", b"ab", b"c")),
        ((b"a", b"", b"b"), (b"", b"a", b"b")),
        ((b"a", b"b", b""), (b"", b"", b"ab")),
    ],
)
def test_key_and_namespace_parts_never_collide(
    store: KvStore, first: tuple[bytes, bytes, bytes], second: tuple[bytes, bytes, bytes]
) -> None:
    store.put(ck(*first, b"u"), b"first")
    store.put(ck(*second, b"u"), b"second")
    assert store.get(ck(*first, b"u")) == b"first"
    assert store.get(ck(*second, b"u")) == b"second"
    assert list(store.scan_complex(*first)) == [(b"u", b"first")]
    assert list(store.scan_complex(*second)) == [(b"u", b"second")]


def test_namespace_and_user_key_never_collide(store: KvStore) -> None:
    store.put(ck(b"g", b"k", b"n", b"s1"), b"short namespace")
    store.put(ck(b"g", b"k", b"ns", b"1"), b"long namespace")
    assert list(store.scan_complex(b"g", b"k", b"n")) == [(b"s1", b"short namespace")]
    assert list(store.scan_complex(b"g", b"k", b"ns")) == [(b"1", b"long namespace")]


def test_scan_of_namespace_m_never_returns_namespace_m2(store: KvStore) -> None:
    store.put(ck(b"g", b"k", b"m", b"x"), b"in m")
    store.put(ck(b"g", b"k", b"m2", b"x"), b"in m2")
    store.put(ck(b"g", b"k", b"m2", b""), b"in m2 too")
    store.put(ck(b"g", b"k", b"m\xff", b""), b"in m-ff")
    assert list(store.scan_complex(b"g", b"k", b"m")) == [(b"x", b"in m")]
    assert store.list_complex(b"g", b"k", b"m", b"", b"\xff\xff") == [b"x"]
    assert list(store.scan_complex(b"g", b"k", b"m2")) == [(b"", b"in m2 too"), (b"x", b"in m2")]


def test_delete_prefix_deletes_exactly_one_prefix_and_ignores_user_key(store: KvStore) -> None:
    keep = [
        ck(b"g", b"k", b"ns2", b"a"),
        ck(b"g", b"k", b"n", b"sa"),
        ck(b"g", b"k2", b"ns", b"a"),
        ck(b"g2", b"k", b"ns", b"a"),
        ck(b"", b"gk", b"ns", b"a"),
    ]
    gone = [ck(b"g", b"k", b"ns", uk) for uk in (b"", b"a", b"b", b"\xff\xff")]
    for key in keep + gone:
        store.put(key, b"v")
    store.put_state(b"g", b"plain")
    store.delete_prefix(ck(b"g", b"k", b"ns", b"user key that matches nothing"))
    for key in gone:
        assert store.get(key) is None
    for key in keep:
        assert store.get(key) == b"v"
    assert store.get_state(b"g") == b"plain"
    assert list(store.scan_complex(b"g", b"k", b"ns")) == []


def test_delete_of_missing_keys_is_not_an_error(store: KvStore) -> None:
    store.delete(ck(b"g", b"k", b"ns", b"u"))
    store.delete_prefix(ck(b"g", b"k", b"ns", b""))
    store.delete_state(b"nope")
    assert store.get(ck(b"g", b"k", b"ns", b"u")) is None


def test_kv_iterator_protocol(store: KvStore) -> None:
    for uk in (b"a", b"b"):
        store.put(ck(b"g", b"k", b"ns", uk), uk.upper())
    it = store.scan_complex(b"g", b"k", b"ns")
    assert isinstance(it, KvIterator)
    assert it.has_next()
    assert it.next() == (b"a", b"A")
    assert it.has_next()
    assert it.next() == (b"b", b"B")
    assert not it.has_next()
    assert it.next() is None
    assert it.next() is None


def test_kv_iterator_is_a_python_iterator(store: KvStore) -> None:
    for uk in (b"a", b"b", b"c"):
        store.put(ck(b"g", b"k", b"ns", uk), uk)
    it = store.scan_complex(b"g", b"k", b"ns")
    assert it.next() == (b"a", b"a")
    assert list(it) == [(b"b", b"b"), (b"c", b"c")], "iteration continues where next() left off"
    assert list(it) == []


def test_kv_iterator_close_and_context_manager(store: KvStore) -> None:
    for uk in (b"a", b"b"):
        store.put(ck(b"g", b"k", b"ns", uk), uk)
    it = store.scan_complex(b"g", b"k", b"ns")
    it.close()
    assert not it.has_next()
    assert it.next() is None
    with store.scan_complex(b"g", b"k", b"ns") as it2:
        assert it2.next() == (b"a", b"a")
    assert not it2.has_next(), "leaving the with block closes the iterator"
    assert it2.next() is None


def test_scan_is_a_snapshot(store: KvStore) -> None:
    for uk in (b"a", b"b"):
        store.put(ck(b"g", b"k", b"ns", uk), uk)
    with store.scan_complex(b"g", b"k", b"ns") as it:
        first = it.next()
        store.delete(ck(b"g", b"k", b"ns", b"b"))
        store.put(ck(b"g", b"k", b"ns", b"c"), b"c")
        rest = list(it)
    assert first == (b"a", b"a")
    assert rest == [(b"b", b"b")]


def test_list_kv_iterator_directly() -> None:
    it = ListKvIterator([(b"a", b"1")])
    with it:
        assert list(it) == [(b"a", b"1")]
    assert it.next() is None


def test_list_complex_range_bounds(store: KvStore) -> None:
    for uk in (b"", b"a", b"ab", b"b", b"c", b"\xff"):
        store.put(ck(b"g", b"k", b"ns", uk), b"v")
    store.put(ck(b"g", b"k", b"ns2", b"b"), b"other namespace")
    lc = store.list_complex
    assert lc(b"g", b"k", b"ns", b"a", b"c") == [b"a", b"ab", b"b"], "start inclusive, end exclusive"
    assert lc(b"g", b"k", b"ns", b"", b"a") == [b""]
    assert lc(b"g", b"k", b"ns", b"aa", b"b") == [b"ab"], "bounds need not be stored keys"
    assert lc(b"g", b"k", b"ns", b"b", b"\xff\xff") == [b"b", b"c", b"\xff"]
    assert lc(b"g", b"k", b"ns", b"b", b"b") == []
    assert lc(b"g", b"k", b"ns", b"c", b"a") == [], "an inverted range is empty"
    assert lc(b"g", b"k", b"missing", b"", b"\xff") == []


def test_list_states_range_bounds(store: KvStore) -> None:
    for key in (b"", b"a", b"ab", b"b", b"\xff"):
        store.put_state(key, b"v")
    store.put(ck(b"", b"", b"", b"a"), b"complex entries are not plain states")
    assert store.list_states(b"a", b"b") == [b"a", b"ab"]
    assert store.list_states(b"", b"\xff\xff") == [b"", b"a", b"ab", b"b", b"\xff"]
    assert store.list_states(b"b", b"a") == []
    assert store.list_states(b"c", b"d") == []


def test_plain_keyspace_put_get_delete(store: KvStore) -> None:
    store.put_state(b"k", b"v1")
    store.put_state(b"k", b"v2")
    assert store.get_state(b"k") == b"v2"
    store.delete_state(b"k")
    assert store.get_state(b"k") is None


@pytest.mark.parametrize("part_name", ["key_group", "key", "namespace", "user_key"])
@pytest.mark.parametrize("bad", ["text", 3, None])
def test_non_bytes_parts_raise_kv_error_naming_the_part(store: KvStore, part_name: str, bad: object) -> None:
    parts: dict[str, object] = {"key_group": b"g", "key": b"k", "namespace": b"ns", "user_key": b"u"}
    parts[part_name] = bad
    key = ComplexKey(**parts)  # type: ignore[arg-type]
    # Reads and deletes first, on a store where nothing under the key's prefix exists yet.
    ops: list[Callable[[], object]] = [
        lambda: store.get(key),
        lambda: store.delete(key),
        lambda: store.put(key, b"v"),
        lambda: store.merge(key, b"v"),
    ]
    if part_name != "user_key":
        ops.append(lambda: store.delete_prefix(key))
        ops.append(lambda: store.scan_complex(key.key_group, key.key, key.namespace))
        ops.append(lambda: store.list_complex(key.key_group, key.key, key.namespace, b"", b"z"))
    for op in ops:
        with pytest.raises(KvError, match=part_name):
            op()
    assert list(store.scan_complex(b"g", b"k", b"ns")) == [], "nothing was written"


def test_non_bytes_range_bounds_and_plain_keys_raise_kv_error(store: KvStore) -> None:
    with pytest.raises(KvError, match="start_inclusive"):
        store.list_complex(b"g", b"k", b"ns", "a", b"b")  # type: ignore[arg-type]
    with pytest.raises(KvError, match="end_exclusive"):
        store.list_complex(b"g", b"k", b"ns", b"a", 5)  # type: ignore[arg-type]
    with pytest.raises(KvError, match="start_inclusive"):
        store.list_states(None, b"b")  # type: ignore[arg-type]
    with pytest.raises(KvError, match="state key"):
        store.put_state("k", b"v")  # type: ignore[arg-type]
    with pytest.raises(KvError, match="state key"):
        store.get_state(1)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [3, "text", None, [1, 2]])
def test_non_bytes_values_raise_kv_error_and_store_nothing(store: KvStore, bad: object) -> None:
    # bytes(3) would silently store three zero bytes.
    key = ck(b"g", b"k", b"ns", b"u")
    with pytest.raises(KvError, match="value"):
        store.put(key, bad)  # type: ignore[arg-type]
    with pytest.raises(KvError, match="value"):
        store.merge(key, bad)  # type: ignore[arg-type]
    with pytest.raises(KvError, match="value"):
        store.put_state(b"k", bad)  # type: ignore[arg-type]
    assert store.get(key) is None
    assert store.get_state(b"k") is None


def test_bytes_like_parts_and_values_are_accepted_alike(store: KvStore) -> None:
    store.put(ComplexKey(bytearray(b"g"), b"k", memoryview(b"ns"), b"u"), bytearray(b"v"))  # type: ignore[arg-type]
    assert store.get(ck(b"g", b"k", b"ns", b"u")) == b"v"
    assert type(store.get(ck(b"g", b"k", b"ns", b"u"))) is bytes


def test_sqlite_store_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    first = SqliteKvStore(path)
    first.put(ck(b"g", b"k", b"ns", b"u"), b"v")
    first.merge(ck(b"g", b"k", b"ns", b"u"), b"w")
    first.put_state(b"plain", b"p")
    first.close()
    again = SqliteKvStore(path)
    assert again.get(ck(b"g", b"k", b"ns", b"u")) == b"vw"
    assert again.get_state(b"plain") == b"p"
    again.close()


def test_sqlite_store_without_path_uses_a_temporary_file() -> None:
    s = SqliteKvStore()
    s.put(ck(b"g", b"k", b"ns", b"u"), b"v")
    path = Path(s.path)
    assert path.exists()
    s.close()
    assert not path.exists()


def test_sqlite_store_that_cannot_be_opened_raises_kv_io_error(tmp_path: Path) -> None:
    with pytest.raises(KvIOError, match="cannot open sqlite store") as info:
        SqliteKvStore(tmp_path / "no-such-dir" / "kv.sqlite")
    assert "no-such-dir" in info.value.message


def test_error_types() -> None:
    assert issubclass(KvNotFoundError, KvError)
    assert issubclass(KvIOError, KvError)
    assert issubclass(KvOtherError, KvError)
    assert issubclass(KvError, Exception)
    nf = KvNotFoundError()
    assert isinstance(nf, KvError)
    with pytest.raises(TypeError):
        KvNotFoundError("no args allowed")  # type: ignore[call-arg]
    io = KvIOError("disk on fire")
    assert io.message == "disk on fire"
    assert str(io) == "disk on fire"
    other = KvOtherError("something else")
    assert other.message == "something else"
    assert str(other) == "something else"
    with pytest.raises(TypeError):
        KvIOError()  # type: ignore[call-arg]
    with pytest.raises(KvError):
        raise KvOtherError("caught as the base class")
