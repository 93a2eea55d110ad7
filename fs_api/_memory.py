"""The default backend: an ordered in-memory KvStore."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Any

from ._keys import ComplexKey, check_part
from ._store import KvIterator, KvStore, ListKvIterator

_Prefix = tuple[bytes, bytes, bytes]


def _checked(key_group: object, key: object, namespace: object) -> _Prefix:
    if type(key_group) is not bytes or type(key) is not bytes or type(namespace) is not bytes:
        # Same rules as the persistent backends: bytes-like parts are accepted, anything else is a KvError.
        return (
            bytes(check_part("key_group", key_group)),
            bytes(check_part("key", key)),
            bytes(check_part("namespace", namespace)),
        )
    return (key_group, key, namespace)


def _user_key(ck: ComplexKey) -> bytes:
    uk = ck.user_key
    if type(uk) is bytes:
        return uk
    return bytes(check_part("user_key", uk))


def _value(value: object) -> bytes:
    if type(value) is bytes:
        return value
    return bytes(check_part("value", value))


class MemoryKvStore(KvStore):
    """An in-memory KvStore: one dict per (key_group, key, namespace), so a point access is a
    dict lookup and a scan sorts only that group's user keys.

    >>> store = MemoryKvStore()
    >>> store.put(ComplexKey(b"g", b"k", b"ns", b"b"), b"2")
    >>> store.put(ComplexKey(b"g", b"k", b"ns", b"a"), b"1")
    >>> list(store.scan_complex(b"g", b"k", b"ns"))
    [(b'a', b'1'), (b'b', b'2')]
    """

    __slots__ = ("_complex", "_plain")

    def __init__(self) -> None:
        self._plain: dict[bytes, bytes] = {}
        self._complex: dict[_Prefix, dict[bytes, bytes | bytearray]] = {}

    # Plain keyspace.
    def put_state(self, key: bytes, value: bytes) -> None:
        self._plain[_plain_key(key)] = _value(value)

    def get_state(self, key: bytes) -> bytes | None:
        return self._plain.get(_plain_key(key))

    def delete_state(self, key: bytes) -> None:
        self._plain.pop(_plain_key(key), None)

    def list_states(self, start_inclusive: bytes, end_exclusive: bytes) -> list[bytes]:
        start = check_part("start_inclusive", start_inclusive)
        return _in_range(self._plain, start, check_part("end_exclusive", end_exclusive))

    # Complex keyspace.
    def put(self, key: ComplexKey, value: bytes) -> None:
        prefix = _checked(key.key_group, key.key, key.namespace)
        uk, data = _user_key(key), _value(value)
        entries = self._complex.get(prefix)
        if entries is None:
            entries = self._complex[prefix] = {}
        entries[uk] = data

    def get(self, key: ComplexKey) -> bytes | None:
        entries = self._complex.get(_checked(key.key_group, key.key, key.namespace))
        uk = _user_key(key)
        if entries is None:
            return None
        value = entries.get(uk)
        return None if value is None else _frozen(value)

    def delete(self, key: ComplexKey) -> None:
        prefix = _checked(key.key_group, key.key, key.namespace)
        uk = _user_key(key)
        entries = self._complex.get(prefix)
        if entries is not None:
            entries.pop(uk, None)
            if not entries:
                del self._complex[prefix]

    def merge(self, key: ComplexKey, value: bytes) -> None:
        prefix = _checked(key.key_group, key.key, key.namespace)
        uk, data = _user_key(key), _value(value)
        entries = self._complex.get(prefix)
        if entries is None:
            entries = self._complex[prefix] = {}
        old = entries.get(uk)
        if old is None:
            entries[uk] = data
        elif type(old) is bytearray:
            old += data  # appends in place: n merges cost O(total size), not O(n * size)
        else:
            entries[uk] = bytearray(old) + data

    def delete_prefix(self, key: ComplexKey) -> None:
        self._complex.pop(_checked(key.key_group, key.key, key.namespace), None)

    def list_complex(
        self,
        key_group: bytes,
        key: bytes,
        namespace: bytes,
        start_inclusive: bytes,
        end_exclusive: bytes,
    ) -> list[bytes]:
        entries = self._complex.get(_checked(key_group, key, namespace))
        start = check_part("start_inclusive", start_inclusive)
        end = check_part("end_exclusive", end_exclusive)
        if not entries:
            return []
        return _in_range(entries, start, end)

    def scan_complex(self, key_group: bytes, key: bytes, namespace: bytes) -> KvIterator:
        entries = self._complex.get(_checked(key_group, key, namespace))
        if not entries:
            return ListKvIterator(())
        return ListKvIterator(sorted((uk, _frozen(v)) for uk, v in entries.items()))

    def complex_items(self, key_group: bytes | None = None) -> list[tuple[ComplexKey, bytes]]:
        """Every entry of the complex keyspace (of one ``key_group`` when given), unordered: what a
        snapshot of keyed state copies.

        >>> store = MemoryKvStore()
        >>> store.put(ComplexKey(b"g", b"k", b"", b"u"), b"v")
        >>> store.complex_items(b"g")
        [(ComplexKey(key_group=b'g', key=b'k', namespace=b'', user_key=b'u'), b'v')]
        >>> store.complex_items(b"other")
        []
        """
        kg = None if key_group is None else check_part("key_group", key_group)
        return [
            (ComplexKey(prefix[0], prefix[1], prefix[2], uk), _frozen(value))
            for prefix, entries in self._complex.items()
            if kg is None or prefix[0] == kg
            for uk, value in entries.items()
        ]

    def complex_entries(self, key_group: bytes) -> list[tuple[bytes, bytes, bytes, bytes]]:
        """The entries of ``key_group`` as ``(key, namespace, user_key, value)``, unordered:
        ``complex_items`` of one key group without a ``ComplexKey`` each (a snapshot of a key
        group reads every entry it holds).

        >>> store = MemoryKvStore()
        >>> store.put(ComplexKey(b"g", b"k", b"", b"u"), b"v")
        >>> store.complex_entries(b"g"), store.complex_entries(b"other")
        ([(b'k', b'', b'u', b'v')], [])
        """
        kg = check_part("key_group", key_group)
        return [
            (prefix[1], prefix[2], uk, _frozen(value))
            for prefix, entries in self._complex.items()
            if prefix[0] == kg
            for uk, value in entries.items()
        ]

    def put_entries(self, key_group: bytes, entries: Iterable[tuple[bytes, bytes, bytes, bytes]]) -> None:
        """``put`` of each ``(key, namespace, user_key, value)`` of ``entries`` in ``key_group``,
        in order, without a ``ComplexKey`` each: ``complex_entries``' inverse (a restore of a key
        group, or a write-back of many keys' values, writes them all).

        >>> store = MemoryKvStore()
        >>> store.put_entries(b"g", [(b"k", b"", b"u", b"v"), (b"j", b"", b"", b"w")])
        >>> store.put_entries(b"g", [(b"k", b"", b"u", b"x")])
        >>> sorted(store.complex_entries(b"g"))
        [(b'j', b'', b'', b'w'), (b'k', b'', b'u', b'x')]
        """
        kg = check_part("key_group", key_group)
        held = self._complex
        for key, namespace, user_key, value in entries:
            prefix = _checked(kg, key, namespace)
            uk = user_key if type(user_key) is bytes else bytes(check_part("user_key", user_key))
            found = held.get(prefix)
            if found is None:
                found = held[prefix] = {}
            found[uk] = _value(value)

    def __len__(self) -> int:
        """Number of entries in both keyspaces."""
        return len(self._plain) + sum(len(e) for e in self._complex.values())


def _frozen(value: bytes | bytearray) -> bytes:
    """A stored value as ``bytes``: merged values grow in place as a ``bytearray``."""
    return bytes(value) if type(value) is bytearray else value  # type: ignore[return-value]


def _plain_key(key: object) -> bytes:
    if type(key) is bytes:
        return key
    return bytes(check_part("state key", key))


def _in_range(entries: dict[bytes, Any], start: bytes, end: bytes) -> list[bytes]:
    keys = sorted(entries)
    lo = bisect.bisect_left(keys, start)
    hi = bisect.bisect_left(keys, end)
    return keys[lo:hi] if lo < hi else []
