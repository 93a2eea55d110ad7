"""A persistent, embedded KvStore on sqlite3, for state larger than memory.

Why sqlite3: it ships with Python (no new dependency), keeps keys in a B-tree ordered by
``memcmp`` (so the length-prefixed physical layout of ``_keys`` gives ordered scans for free),
and with one long-lived write transaction and ``synchronous=OFF`` it runs point operations in a
few microseconds (see ``bench/state_ops.py``). Durability of job state comes from checkpoints,
not from this file, so fsync on every write would buy nothing. lmdb and rocksdict were the
alternatives: both need a new binary dependency, and lmdb's fixed map size must be guessed up front.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile

from ._errors import KvIOError
from ._keys import PLAIN_TAG, ComplexKey, check_part, physical_key, prefix_of, prefix_upper_bound
from ._store import KvIterator, KvStore, ListKvIterator

_COMMIT_EVERY = 10_000


class SqliteKvStore(KvStore):
    """A KvStore kept in one sqlite3 file (a temporary one when ``path`` is None).

    Writes go into one open transaction committed every 10,000 writes, on ``flush()`` and on
    ``close()``; reads on the same store always see every write.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        if path is None:
            self._tmpdir = tempfile.TemporaryDirectory(prefix="fs-kv-")
            path = os.path.join(self._tmpdir.name, "state.sqlite")
        self.path = os.fspath(path)
        try:
            self._db = sqlite3.connect(self.path, isolation_level="DEFERRED", check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=OFF")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID"
            )
            self._db.commit()
        except sqlite3.Error as exc:
            raise KvIOError(f"cannot open sqlite store at {self.path}: {exc}") from exc
        self._pending = 0

    # Internals.
    def _write(self, sql: str, params: tuple[bytes, ...]) -> None:
        try:
            self._db.execute(sql, params)
        except sqlite3.Error as exc:
            raise KvIOError(f"sqlite store {self.path}: {exc}") from exc
        self._pending += 1
        if self._pending >= _COMMIT_EVERY:
            self.flush()

    def _read(self, k: bytes) -> bytes | None:
        row = self._db.execute("SELECT v FROM kv WHERE k = ?", (k,)).fetchone()
        return None if row is None else bytes(row[0])

    def _range(self, lo: bytes, hi: bytes | None) -> list[tuple[bytes, bytes]]:
        if hi is None:
            cur = self._db.execute("SELECT k, v FROM kv WHERE k >= ? ORDER BY k", (lo,))
        else:
            cur = self._db.execute("SELECT k, v FROM kv WHERE k >= ? AND k < ? ORDER BY k", (lo, hi))
        return [(bytes(k), bytes(v)) for k, v in cur]

    def flush(self) -> None:
        """Commit pending writes."""
        try:
            self._db.commit()
        except sqlite3.Error as exc:
            raise KvIOError(f"sqlite store {self.path}: {exc}") from exc
        self._pending = 0

    def close(self) -> None:
        self.flush()
        self._db.close()
        if self._tmpdir is not None:
            self._tmpdir.cleanup()
            self._tmpdir = None

    # Plain keyspace.
    def put_state(self, key: bytes, value: bytes) -> None:
        k = PLAIN_TAG + check_part("state key", key)
        self._write("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)", (k, check_part("value", value)))

    def get_state(self, key: bytes) -> bytes | None:
        return self._read(PLAIN_TAG + check_part("state key", key))

    def delete_state(self, key: bytes) -> None:
        self._write("DELETE FROM kv WHERE k = ?", (PLAIN_TAG + check_part("state key", key),))

    def list_states(self, start_inclusive: bytes, end_exclusive: bytes) -> list[bytes]:
        lo = PLAIN_TAG + check_part("start_inclusive", start_inclusive)
        hi = PLAIN_TAG + check_part("end_exclusive", end_exclusive)
        if hi <= lo:
            return []
        cur = self._db.execute("SELECT k FROM kv WHERE k >= ? AND k < ? ORDER BY k", (lo, hi))
        return [bytes(k)[1:] for (k,) in cur]

    # Complex keyspace.
    def put(self, key: ComplexKey, value: bytes) -> None:
        v = check_part("value", value)
        self._write("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)", (physical_key(key), v))

    def get(self, key: ComplexKey) -> bytes | None:
        return self._read(physical_key(key))

    def delete(self, key: ComplexKey) -> None:
        self._write("DELETE FROM kv WHERE k = ?", (physical_key(key),))

    def merge(self, key: ComplexKey, value: bytes) -> None:
        k, v = physical_key(key), check_part("value", value)
        old = self._read(k)
        self._write("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)", (k, (old or b"") + v))

    def delete_prefix(self, key: ComplexKey) -> None:
        lo = prefix_of(key.key_group, key.key, key.namespace)
        hi = prefix_upper_bound(lo)
        assert hi is not None  # the prefix starts with the complex tag, never all 0xff
        self._write("DELETE FROM kv WHERE k >= ? AND k < ?", (lo, hi))

    def list_complex(
        self,
        key_group: bytes,
        key: bytes,
        namespace: bytes,
        start_inclusive: bytes,
        end_exclusive: bytes,
    ) -> list[bytes]:
        prefix = prefix_of(key_group, key, namespace)
        lo = prefix + check_part("start_inclusive", start_inclusive)
        hi = prefix + check_part("end_exclusive", end_exclusive)
        if hi <= lo:
            return []
        n = len(prefix)
        cur = self._db.execute("SELECT k FROM kv WHERE k >= ? AND k < ? ORDER BY k", (lo, hi))
        return [bytes(k)[n:] for (k,) in cur]

    def scan_complex(self, key_group: bytes, key: bytes, namespace: bytes) -> KvIterator:
        prefix = prefix_of(key_group, key, namespace)
        n = len(prefix)
        rows = self._range(prefix, prefix_upper_bound(prefix))
        return ListKvIterator([(k[n:], v) for k, v in rows])
