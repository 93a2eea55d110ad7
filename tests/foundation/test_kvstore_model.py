"""Model-based tests of both KvStore backends against a plain dict.

Key parts come from a tiny alphabet (``b""``, ``b"a"``, ``b"ab"``, ``b"b"``, ``b"\\xff"``) so that
collisions of concatenated parts, shared prefixes and ``0xff`` upper-bound edge cases come up often.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import fs_api._sqlite as sqlite_backend
from fs_api import ComplexKey, KvIterator, KvStore, MemoryKvStore, SqliteKvStore

PARTS = [b"", b"a", b"ab", b"b", b"\xff"]
part = st.sampled_from(PARTS)
# Range bounds: the key alphabet plus bounds that fall between and around its members.
bound = st.sampled_from([*PARTS, b"\x00", b"aa", b"ac", b"\xff\xff", b"\xff\x00"])
value = st.binary(max_size=3)

Triple = tuple[bytes, bytes, bytes]
Quad = tuple[bytes, bytes, bytes, bytes]

SETTINGS = settings(max_examples=50, stateful_step_count=30, deadline=None)


def drain_with_protocol(it: KvIterator) -> list[tuple[bytes, bytes]]:
    """Read an iterator with FunctionStream's has_next/next protocol."""
    out: list[tuple[bytes, bytes]] = []
    while it.has_next():
        item = it.next()
        assert item is not None, "has_next() was True but next() returned None"
        out.append(item)
    assert it.next() is None
    assert not it.has_next()
    return out


class KvStoreModel(RuleBasedStateMachine):
    """Runs every KvStore operation on a store and on a dict model, comparing all reads."""

    def __init__(self) -> None:
        super().__init__()
        self.store: KvStore = self.open_store()
        self.complex: dict[Quad, bytes] = {}
        self.plain: dict[bytes, bytes] = {}

    def open_store(self) -> KvStore:
        raise NotImplementedError

    def teardown(self) -> None:
        self.store.close()

    # Model helpers.
    def model_scan(self, kg: bytes, k: bytes, ns: bytes) -> list[tuple[bytes, bytes]]:
        return sorted((q[3], v) for q, v in self.complex.items() if q[:3] == (kg, k, ns))

    # Complex keyspace.
    @rule(kg=part, k=part, ns=part, uk=part, v=value)
    def put(self, kg: bytes, k: bytes, ns: bytes, uk: bytes, v: bytes) -> None:
        self.store.put(ComplexKey(kg, k, ns, uk), v)
        self.complex[(kg, k, ns, uk)] = v

    @rule(kg=part, k=part, ns=part, uk=part)
    def get(self, kg: bytes, k: bytes, ns: bytes, uk: bytes) -> None:
        assert self.store.get(ComplexKey(kg, k, ns, uk)) == self.complex.get((kg, k, ns, uk))

    @rule(kg=part, k=part, ns=part, uk=part)
    def delete(self, kg: bytes, k: bytes, ns: bytes, uk: bytes) -> None:
        self.store.delete(ComplexKey(kg, k, ns, uk))
        self.complex.pop((kg, k, ns, uk), None)

    @rule(kg=part, k=part, ns=part, uk=part, v=value)
    def merge(self, kg: bytes, k: bytes, ns: bytes, uk: bytes, v: bytes) -> None:
        self.store.merge(ComplexKey(kg, k, ns, uk), v)
        self.complex[(kg, k, ns, uk)] = self.complex.get((kg, k, ns, uk), b"") + v

    @rule(kg=part, k=part, ns=part, uk=part)
    def delete_prefix(self, kg: bytes, k: bytes, ns: bytes, uk: bytes) -> None:
        # user_key is ignored: every entry of (kg, k, ns) goes, nothing else does.
        self.store.delete_prefix(ComplexKey(kg, k, ns, uk))
        for q in [q for q in self.complex if q[:3] == (kg, k, ns)]:
            del self.complex[q]

    @rule(kg=part, k=part, ns=part, lo=bound, hi=bound)
    def list_complex(self, kg: bytes, k: bytes, ns: bytes, lo: bytes, hi: bytes) -> None:
        expected = [u for u, _ in self.model_scan(kg, k, ns) if lo <= u < hi]
        assert self.store.list_complex(kg, k, ns, lo, hi) == expected

    @rule(kg=part, k=part, ns=part, protocol=st.booleans())
    def scan_complex(self, kg: bytes, k: bytes, ns: bytes, protocol: bool) -> None:
        expected = self.model_scan(kg, k, ns)
        with self.store.scan_complex(kg, k, ns) as it:
            got = drain_with_protocol(it) if protocol else list(it)
        assert got == expected

    # Plain keyspace.
    @rule(key=part, v=value)
    def put_state(self, key: bytes, v: bytes) -> None:
        self.store.put_state(key, v)
        self.plain[key] = v

    @rule(key=part)
    def get_state(self, key: bytes) -> None:
        assert self.store.get_state(key) == self.plain.get(key)

    @rule(key=part)
    def delete_state(self, key: bytes) -> None:
        self.store.delete_state(key)
        self.plain.pop(key, None)

    @rule(lo=bound, hi=bound)
    def list_states(self, lo: bytes, hi: bytes) -> None:
        assert self.store.list_states(lo, hi) == sorted(k for k in self.plain if lo <= k < hi)

    @invariant()
    def keyspaces_are_separate(self) -> None:
        # The plain keyspace never shows complex entries and vice versa.
        assert self.store.list_states(b"", b"\xff\xff\xff") == sorted(self.plain)
        assert self.store.get(ComplexKey(b"", b"", b"", b"")) == self.complex.get((b"", b"", b"", b""))


class MemoryKvStoreModel(KvStoreModel):
    def open_store(self) -> KvStore:
        return MemoryKvStore()

    @invariant()
    def length_counts_both_keyspaces(self) -> None:
        assert isinstance(self.store, MemoryKvStore)
        assert len(self.store) == len(self.complex) + len(self.plain)


class SqliteKvStoreModel(KvStoreModel):
    """The sqlite backend on a temporary file, committing every 7 writes and reopened at random,
    so committed and uncommitted data and persistence across reopen are all exercised."""

    def __init__(self) -> None:
        self._saved_commit_every = sqlite_backend._COMMIT_EVERY
        sqlite_backend._COMMIT_EVERY = 7
        self.tmpdir = tempfile.mkdtemp(prefix="fs-kv-model-")
        self.path = os.path.join(self.tmpdir, "state.sqlite")
        super().__init__()

    def open_store(self) -> KvStore:
        return SqliteKvStore(self.path)

    @precondition(lambda self: bool(self.complex or self.plain))
    @rule()
    def reopen(self) -> None:
        self.store.close()
        self.store = SqliteKvStore(self.path)

    def teardown(self) -> None:
        try:
            super().teardown()
        finally:
            sqlite_backend._COMMIT_EVERY = self._saved_commit_every
            shutil.rmtree(self.tmpdir, ignore_errors=True)


TestMemoryKvStoreModel = MemoryKvStoreModel.TestCase
TestMemoryKvStoreModel.settings = SETTINGS
TestSqliteKvStoreModel = SqliteKvStoreModel.TestCase
TestSqliteKvStoreModel.settings = SETTINGS
