"""A processor's KvStore as a view over the runtime's keyed state backend, scoped to the current key.

A processor opens stores by name (``ctx.getOrCreateKVStore``); each store it sees is a view of the
backend's store of that name (``KeyedStateBackend.store``), restricted to the backend's current
key. Every entry of the processor becomes one entry of the backend's ComplexKey keyspace:

- ``ComplexKey(kg, key, ns, uk)`` of the processor -> ``ComplexKey(key group of the current key,
  current key bytes, b"\\x01" + length-prefixed kg, key and ns, uk)``;
- the plain key ``k`` (``put_state``) -> ``ComplexKey(key group, current key bytes, b"\\x00", k)``.

So the processor's state is isolated per stream key, snapshots of a key group
(``KeyedStateBackend.snapshot_key_group``) carry it, and the KvStore contract holds inside one key:
scans and ``list_complex`` / ``list_states`` stay ascending by user key (the user key is stored
unchanged), ``delete_prefix`` deletes exactly one (kg, key, ns), and distinct parts never collide
(every part but the user key is length-prefixed, and the tag byte keeps the two keyspaces apart).
"""

from __future__ import annotations

import struct

from fs_api import ComplexKey, KvIterator, KvStore, check_part
from fs_compat.runtime import KeyedStateBackend, StateAccessError, key_group_bytes

_LEN = struct.Struct(">I")
#: The namespace of the processor's plain keyspace inside the current key.
PLAIN_NAMESPACE = b"\x00"
_COMPLEX_TAG = b"\x01"
#: How many encoded namespaces a view remembers before it starts over.
_MEMO_SIZE = 4096


def encode_namespace(key_group: bytes, key: bytes, namespace: bytes) -> bytes:
    """The backend namespace of the processor's (key_group, key, namespace): a tag byte and the
    three parts, each length-prefixed (a part that is not bytes is a KvError naming it).

    >>> encode_namespace(b"a", b"bc", b"") != encode_namespace(b"ab", b"c", b"")
    True
    >>> encode_namespace(b"", b"", b"") != PLAIN_NAMESPACE
    True
    """
    kg = check_part("key_group", key_group)
    k = check_part("key", key)
    ns = check_part("namespace", namespace)
    return b"".join((_COMPLEX_TAG, _LEN.pack(len(kg)), kg, _LEN.pack(len(k)), k, _LEN.pack(len(ns)), ns))


class KeyedStoreView(KvStore):
    """The store ``name`` of a processor, for the backend's current key (see the module docstring).

    The key is read on every call, so a view made once (in ``init``) follows the records' keys.
    Using it with no current key is a StateAccessError (``outside``, when given, says where that
    happens).

    >>> from fs_compat.runtime import KeyEncoder, KeyedStateBackend
    >>> backend = KeyedStateBackend(KeyEncoder())
    >>> store = KeyedStoreView(backend, "counts")
    >>> backend.set_current_key("alice")
    >>> store.put(ComplexKey(b"g", b"k", b"ns", b"u"), b"1")
    >>> backend.set_current_key("bob")
    >>> store.get(ComplexKey(b"g", b"k", b"ns", b"u")) is None
    True
    >>> backend.set_current_key("alice")
    >>> list(store.scan_complex(b"g", b"k", b"ns"))
    [(b'u', b'1')]
    """

    __slots__ = ("_backend", "_memo", "_name", "_store", "outside")

    def __init__(self, backend: KeyedStateBackend, name: str, outside: str = "") -> None:
        self._backend = backend
        self._name = name
        self._store = backend.store(name)
        self._memo: dict[tuple[bytes, bytes, bytes], bytes] = {}
        self.outside = outside

    @property
    def name(self) -> str:
        return self._name

    def _scope(self) -> tuple[bytes, bytes]:
        """``(key group bytes, key bytes)`` of the current key."""
        backend = self._backend
        kb = backend.current_key_bytes
        if kb is None:
            raise StateAccessError(f"store '{self._name}' was used with no current key{self.outside}")
        return key_group_bytes(backend.current_key_group), kb

    def _ns(self, key_group: bytes, key: bytes, namespace: bytes) -> bytes:
        if type(key_group) is bytes and type(key) is bytes and type(namespace) is bytes:
            memo = self._memo
            parts = (key_group, key, namespace)
            found = memo.get(parts)
            if found is None:
                if len(memo) >= _MEMO_SIZE:
                    memo.clear()
                found = memo[parts] = encode_namespace(key_group, key, namespace)
            return found
        return encode_namespace(key_group, key, namespace)

    def _ck(self, ck: ComplexKey) -> ComplexKey:
        ns = self._ns(ck.key_group, ck.key, ck.namespace)
        kgb, kb = self._scope()
        return ComplexKey(kgb, kb, ns, ck.user_key)

    def _plain(self, key: bytes) -> ComplexKey:
        uk = check_part("state key", key)
        kgb, kb = self._scope()
        return ComplexKey(kgb, kb, PLAIN_NAMESPACE, uk)

    # Plain keyspace.
    def put_state(self, key: bytes, value: bytes) -> None:
        self._store.put(self._plain(key), value)

    def get_state(self, key: bytes) -> bytes | None:
        return self._store.get(self._plain(key))

    def delete_state(self, key: bytes) -> None:
        self._store.delete(self._plain(key))

    def list_states(self, start_inclusive: bytes, end_exclusive: bytes) -> list[bytes]:
        kgb, kb = self._scope()
        return self._store.list_complex(kgb, kb, PLAIN_NAMESPACE, start_inclusive, end_exclusive)

    # Complex keyspace.
    def put(self, key: ComplexKey, value: bytes) -> None:
        self._store.put(self._ck(key), value)

    def get(self, key: ComplexKey) -> bytes | None:
        return self._store.get(self._ck(key))

    def delete(self, key: ComplexKey) -> None:
        self._store.delete(self._ck(key))

    def merge(self, key: ComplexKey, value: bytes) -> None:
        self._store.merge(self._ck(key), value)

    def delete_prefix(self, key: ComplexKey) -> None:
        ns = self._ns(key.key_group, key.key, key.namespace)
        kgb, kb = self._scope()
        self._store.delete_prefix(ComplexKey(kgb, kb, ns, b""))

    def list_complex(
        self,
        key_group: bytes,
        key: bytes,
        namespace: bytes,
        start_inclusive: bytes,
        end_exclusive: bytes,
    ) -> list[bytes]:
        ns = self._ns(key_group, key, namespace)
        kgb, kb = self._scope()
        return self._store.list_complex(kgb, kb, ns, start_inclusive, end_exclusive)

    def scan_complex(self, key_group: bytes, key: bytes, namespace: bytes) -> KvIterator:
        ns = self._ns(key_group, key, namespace)
        kgb, kb = self._scope()
        return self._store.scan_complex(kgb, kb, ns)

    def close(self) -> None:
        """Nothing to release: the backend owns the store."""
