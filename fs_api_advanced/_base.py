"""What every keyed state shares: its factory (store, key group, TTL) and the TTL framing."""

from __future__ import annotations

import struct
from typing import Protocol

from fs_api import ComplexKey, KvError, KvStore

from ._ttl import Clock, TtlConfig, TtlUpdate, TtlVisibility, system_clock

_TS = struct.Struct(">q")
TS_SIZE = _TS.size


class HasStores(Protocol):
    """Anything that opens stores by name, as ``fs_api.Context`` does."""

    def getOrCreateKVStore(self, name: str) -> KvStore: ...  # noqa: N802 - FunctionStream name


def as_bytes(what: str, value: object) -> bytes:
    """``value`` as bytes (``str`` is UTF-8 encoded); ``KvError`` naming ``what`` otherwise."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if value is None:
        raise KvError(f"{what} must not be None")
    raise KvError(f"{what} must be bytes or str, got {type(value).__name__}")


def require(what: str, value: object) -> None:
    if value is None:
        raise KvError(f"{what} must not be None")


class Ttl:
    """TTL framing and rules: a stored payload is preceded by its last-access time (8 bytes)."""

    __slots__ = ("clock", "config", "ttl_ms")

    def __init__(self, config: TtlConfig, clock: Clock) -> None:
        self.config = config
        self.ttl_ms = config.ttl_ms
        self.clock = clock

    @property
    def refresh_on_read(self) -> bool:
        return self.config.update is TtlUpdate.ON_READ_AND_WRITE

    @property
    def return_expired(self) -> bool:
        return self.config.visibility is TtlVisibility.RETURN_EXPIRED_IF_NOT_CLEANED_UP

    @staticmethod
    def stamp(payload: bytes, now: int) -> bytes:
        return _TS.pack(now) + payload

    @staticmethod
    def split(raw: bytes) -> tuple[int, bytes]:
        if len(raw) < TS_SIZE:
            raise ValueError(f"TTL state entry of {len(raw)} bytes is shorter than its timestamp")
        return _TS.unpack_from(raw)[0], raw[TS_SIZE:]

    def expired(self, ts: int, now: int) -> bool:
        return now >= ts + self.ttl_ms


class TtlCleanupQueue:
    """Which (factory, primary key, namespace) entries hold TTL state, and a lazy cursor over them
    for incremental cleanup. Factories of one state that differ only in key group share a queue
    (``share_ttl_cleanup``), so accesses under any key group clean up idle keys of every group, as
    Flink's incremental cleanup walks the whole state table."""

    __slots__ = ("cursor", "index")

    def __init__(self) -> None:
        self.index: dict[tuple[KeyedFactoryBase, bytes, bytes], None] = {}
        self.cursor: list[tuple[KeyedFactoryBase, bytes, bytes]] = []


class KeyedFactoryBase:
    """Store, key group and optional TTL of a keyed state factory.

    With TTL, the factory remembers which (primary key, namespace) pairs hold state, and each
    state access checks up to ``incremental_cleanup_size`` of them for expired entries (Flink's
    incremental cleanup), so an idle key's expired state is removed too. ``purge_expired()``
    checks them all, for cleanup when state is snapshotted. Factories sharing a cleanup queue
    (``share_ttl_cleanup``) clean up each other's entries.
    """

    _kind = "keyed"

    def __init__(
        self,
        store: KvStore,
        key_group: bytes,
        ttl: TtlConfig | None = None,
        clock: Clock | None = None,
    ) -> None:
        require(f"{self._kind} state factory store", store)
        self._store = store
        self._key_group = as_bytes(f"{self._kind} state factory key_group", key_group)
        self._ttl = Ttl(ttl, clock or system_clock) if ttl is not None else None
        self._cleanup = TtlCleanupQueue()

    @property
    def store(self) -> KvStore:
        return self._store

    @property
    def key_group(self) -> bytes:
        return self._key_group

    @property
    def ttl_config(self) -> TtlConfig | None:
        return None if self._ttl is None else self._ttl.config

    def complex_key(self, primary_key: bytes, namespace: bytes, user_key: bytes = b"") -> ComplexKey:
        return ComplexKey(self._key_group, primary_key, namespace, user_key)

    # TTL cleanup.
    @property
    def ttl_cleanup_queue(self) -> TtlCleanupQueue:
        return self._cleanup

    def share_ttl_cleanup(self, other: KeyedFactoryBase) -> None:
        """Use ``other``'s cleanup queue (same state, another key group) from now on."""
        if other._cleanup is not self._cleanup:
            other._cleanup.index.update(self._cleanup.index)
            self._cleanup = other._cleanup

    def track_ttl(self, primary_key: bytes, namespace: bytes) -> None:
        """Record that (primary_key, namespace) holds TTL state that was written without this
        factory (restored from a snapshot), so that cleanup finds it. No-op without TTL."""
        if self._ttl is not None:
            self._cleanup.index[(self, primary_key, namespace)] = None

    def note_written(self, primary_key: bytes, namespace: bytes) -> None:
        """Record that (primary_key, namespace) holds TTL state, and run incremental cleanup."""
        self._cleanup.index[(self, primary_key, namespace)] = None
        self.cleanup_incrementally()

    def cleanup_incrementally(self) -> None:
        ttl, queue = self._ttl, self._cleanup
        if ttl is None:
            return
        budget = ttl.config.incremental_cleanup_size
        index = queue.index
        if budget <= 0 or not index:
            return
        now = ttl.clock()
        for _ in range(min(budget, len(index))):
            if not queue.cursor:
                queue.cursor = list(index)
            entry = queue.cursor.pop()
            if entry in index and entry[0].purge(entry[1], entry[2], now):
                del index[entry]

    def purge_expired(self) -> int:
        """Remove every expired entry now (of every factory sharing this one's cleanup queue);
        returns how many (primary key, namespace) pairs were emptied."""
        if self._ttl is None:
            return 0
        now, index = self._ttl.clock(), self._cleanup.index
        emptied = [entry for entry in list(index) if entry[0].purge(entry[1], entry[2], now)]
        for entry in emptied:
            del index[entry]
        self._cleanup.cursor = []
        return len(emptied)

    def purge(self, primary_key: bytes, namespace: bytes, now: int) -> bool:
        """Drop expired entries of one (primary key, namespace); True when nothing is left."""
        raw = self._store.get(self.complex_key(primary_key, namespace))
        if raw is None:
            return True
        assert self._ttl is not None
        ts, _ = self._ttl.split(raw)
        if self._ttl.expired(ts, now):
            self._store.delete(self.complex_key(primary_key, namespace))
            return True
        return False
