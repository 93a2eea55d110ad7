"""Timers: per time domain, (timestamp, key) pairs, deduplicated, fired in timestamp order.

Timers due at the same time fire in the order PyFlink 2.3 fires them. Its keyed operators keep a
subtask's timers in one binary heap ordered by timestamp alone (Flink's ``HeapPriorityQueue``), so
among equal timestamps the order is the heap's, not the order of registration: twelve keys that
each register a timer for 1000 fire as k0, k11, k10, ..., k1 (measured on PyFlink 2.3.0). The
queue here is that heap, with the same sift rules.
"""

from __future__ import annotations

from collections.abc import Iterator, Set
from typing import Any

MIN_TIMESTAMP = -9223372036854775808
MAX_TIMESTAMP = 9223372036854775807


class _Timer:
    __slots__ = ("index", "kb", "key", "ts")

    def __init__(self, ts: int, kb: bytes, key: Any, index: int) -> None:
        self.ts = ts
        self.kb = kb
        self.key = key
        self.index = index


class TimerQueue:
    """Timers of one time domain of one operator instance.

    Registering the same (timestamp, key) twice keeps one timer, as Flink does. Timers pop in
    timestamp order; equal timestamps pop in the order of Flink's heap (a binary heap ordered by
    timestamp only: removing the first timer moves the last one to the top and sifts it down past
    strictly earlier timers only):

    >>> q = TimerQueue()
    >>> for key in "abcd":
    ...     q.register(1000, key.encode(), key)
    >>> q.register(999, b"e", "e")
    >>> q.register(1000, b"a", "a")  # already there
    >>> q.delete(1000, b"c")
    >>> [key for _ts, _kb, key in q.pop_due(1000)]
    ['e', 'd', 'b', 'a']
    """

    __slots__ = ("_heap", "_live", "_pending")

    def __init__(self) -> None:
        self._heap: list[_Timer] = []
        self._live: dict[tuple[int, bytes], _Timer] = {}
        self._pending = self._live.keys()

    def register(self, timestamp: int, key_bytes: bytes, key: Any) -> None:
        live = self._live
        if (timestamp, key_bytes) in live:
            return
        heap = self._heap
        index = len(heap)
        timer = live[(timestamp, key_bytes)] = _Timer(timestamp, key_bytes, key, index)
        heap.append(timer)
        if index and timestamp < heap[(index - 1) >> 1].ts:
            self._sift_up(index)

    def delete(self, timestamp: int, key_bytes: bytes) -> None:
        timer = self._live.pop((timestamp, key_bytes), None)
        if timer is not None:
            self._remove_at(timer.index)

    def next_timestamp(self) -> int | None:
        return self._heap[0].ts if self._heap else None

    def pop_due(self, upto: int) -> Iterator[tuple[int, bytes, Any]]:
        """Pop timers with ``timestamp <= upto`` in order, including ones registered meanwhile."""
        heap = self._heap
        while heap and heap[0].ts <= upto:
            timer = heap[0]
            self._remove_at(0)
            del self._live[(timer.ts, timer.kb)]
            yield timer.ts, timer.kb, timer.key

    def pop_key(self, key_bytes: bytes) -> list[tuple[int, Any]]:
        """Remove and return every timer of one key, in timestamp order."""
        mine = sorted((t.ts, t.key) for t in self._heap if t.kb == key_bytes)
        for ts, _ in mine:
            self.delete(ts, key_bytes)
        return mine

    def __len__(self) -> int:
        return len(self._heap)

    @property
    def pending(self) -> Set[tuple[int, bytes]]:
        """The ``(timestamp, key bytes)`` of the live timers (registered, neither fired nor
        deleted), read only. It is the same object for the queue's whole life and follows its
        changes, so a per-record loop may fetch it once and test it (``if pending:``) per record."""
        return self._pending

    def snapshot(self) -> list[tuple[int, bytes, Any]]:
        """The timers in heap order (the first is due first). ``restore`` of it into an empty
        queue rebuilds the same heap (each timer added at the end stays there), so timers due at
        the same time fire in the same order after a restart."""
        return [(t.ts, t.kb, t.key) for t in self._heap]

    def restore(self, timers: list[tuple[int, bytes, Any]]) -> None:
        for ts, kb, key in timers:
            self.register(ts, kb, key)

    # Flink's HeapPriorityQueue, 0-based: a timer moves only past a strictly later timestamp.
    def _remove_at(self, index: int) -> None:
        heap = self._heap
        last = heap.pop()
        if index < len(heap):
            heap[index] = last
            last.index = index
            self._sift_down(index)
            if heap[index] is last:
                self._sift_up(index)

    def _sift_up(self, index: int) -> None:
        heap = self._heap
        timer = heap[index]
        ts = timer.ts
        while index > 0:
            parent_index = (index - 1) >> 1
            parent = heap[parent_index]
            if ts >= parent.ts:
                break
            heap[index] = parent
            parent.index = index
            index = parent_index
        heap[index] = timer
        timer.index = index

    def _sift_down(self, index: int) -> None:
        heap = self._heap
        size = len(heap)
        timer = heap[index]
        ts = timer.ts
        child_index = 2 * index + 1
        while child_index < size:
            child = heap[child_index]
            if child_index + 1 < size:
                right = heap[child_index + 1]
                if right.ts < child.ts:
                    child = right
                    child_index += 1
            if child.ts >= ts:
                break
            heap[index] = child
            child.index = index
            index = child_index
            child_index = 2 * index + 1
        heap[index] = timer
        timer.index = index
