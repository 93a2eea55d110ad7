"""Timers: per time domain, (timestamp, key) pairs, deduplicated, fired in timestamp order."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator, Set
from typing import Any

MIN_TIMESTAMP = -9223372036854775808
MAX_TIMESTAMP = 9223372036854775807


class TimerQueue:
    """Timers of one time domain of one operator instance.

    Registering the same (timestamp, key) twice keeps one timer, as Flink does; deleting is lazy.
    """

    __slots__ = ("_heap", "_live", "_seq")

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, bytes, Any]] = []
        self._live: set[tuple[int, bytes]] = set()
        self._seq = itertools.count()

    def register(self, timestamp: int, key_bytes: bytes, key: Any) -> None:
        if (timestamp, key_bytes) in self._live:
            return
        self._live.add((timestamp, key_bytes))
        heapq.heappush(self._heap, (timestamp, next(self._seq), key_bytes, key))

    def delete(self, timestamp: int, key_bytes: bytes) -> None:
        self._live.discard((timestamp, key_bytes))

    def _drop_dead(self) -> None:
        heap = self._heap
        while heap and (heap[0][0], heap[0][2]) not in self._live:
            heapq.heappop(heap)

    def next_timestamp(self) -> int | None:
        self._drop_dead()
        return self._heap[0][0] if self._heap else None

    def pop_due(self, upto: int) -> Iterator[tuple[int, bytes, Any]]:
        """Pop timers with ``timestamp <= upto`` in order, including ones registered meanwhile."""
        while True:
            self._drop_dead()
            if not self._heap or self._heap[0][0] > upto:
                return
            ts, _, key_bytes, key = heapq.heappop(self._heap)
            self._live.discard((ts, key_bytes))
            yield ts, key_bytes, key

    def pop_key(self, key_bytes: bytes) -> list[tuple[int, Any]]:
        """Remove and return every timer of one key, in timestamp order."""
        mine = sorted(
            (ts, key) for ts, _, kb, key in self._heap if kb == key_bytes and (ts, kb) in self._live
        )
        for ts, _ in mine:
            self._live.discard((ts, key_bytes))
        return mine

    def __len__(self) -> int:
        return len(self._live)

    @property
    def pending(self) -> Set[tuple[int, bytes]]:
        """The ``(timestamp, key bytes)`` of the live timers (registered, neither fired nor
        deleted), read only. It is the same object for the queue's whole life and follows its
        changes, so a per-record loop may fetch it once and test it (``if pending:``) per record."""
        return self._live

    def snapshot(self) -> list[tuple[int, bytes, Any]]:
        return sorted((ts, kb, key) for ts, _, kb, key in self._heap if (ts, kb) in self._live)

    def restore(self, timers: list[tuple[int, bytes, Any]]) -> None:
        for ts, kb, key in timers:
            self.register(ts, kb, key)
