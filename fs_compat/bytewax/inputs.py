"""Input sources (``bytewax.inputs``): subclass these to feed items into a dataflow.

Fixed-partitioned sources (with resume state), dynamic sources, :class:`SimplePollingSource`, and
the helpers that turn iterables and getters into the batches ``next_batch`` returns
(:func:`batch`, :func:`batch_getter`, :func:`batch_getter_ex`, :func:`batch_async`).
Ready-made sources are in :mod:`fs_compat.bytewax.connectors`.
"""

from __future__ import annotations

import abc
import asyncio
import queue
from collections.abc import AsyncIterable, Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC as _UTC
from datetime import datetime, timedelta
from itertools import islice
from typing import Any, Generic, TypeVar

__all__ = [
    "AbortExecution",
    "DynamicSource",
    "FixedPartitionedSource",
    "SimplePollingSource",
    "Source",
    "StatefulSourcePartition",
    "StatelessSourcePartition",
    "batch",
    "batch_async",
    "batch_getter",
    "batch_getter_ex",
]

_X = TypeVar("_X")
_S = TypeVar("_S")


class AbortExecution(RuntimeError):  # noqa: N818 - Bytewax's name
    """Raise this from ``next_batch`` to abort the execution (for testing)."""


class Source(abc.ABC, Generic[_X]):
    """A location to read input items from. Subclass a specific kind of source."""


class StatefulSourcePartition(abc.ABC, Generic[_X, _S]):
    """One partition of a :class:`FixedPartitionedSource`, with resume state."""

    @abc.abstractmethod
    def next_batch(self) -> Iterable[_X]:
        """The next batch of items; raise ``StopIteration`` when the partition is done."""

    def next_awake(self) -> datetime | None:
        """When to call ``next_batch`` next (``None``: as soon as possible)."""
        return None

    @abc.abstractmethod
    def snapshot(self) -> _S:
        """Resume state: where to continue reading after the items returned so far."""

    def close(self) -> None:
        """Clean up when the execution ends."""


class FixedPartitionedSource(Source[_X], Generic[_X, _S]):
    """A source with a fixed set of named partitions, each resumable."""

    @abc.abstractmethod
    def list_parts(self) -> list[str]:
        """The partition names."""

    @abc.abstractmethod
    def build_part(
        self, step_id: str, for_part: str, resume_state: _S | None
    ) -> StatefulSourcePartition[_X, _S]:
        """Build (or resume, from ``resume_state``) one partition."""


class StatelessSourcePartition(abc.ABC, Generic[_X]):
    """One worker's partition of a :class:`DynamicSource`; no resume state."""

    @abc.abstractmethod
    def next_batch(self) -> Iterable[_X]:
        """The next batch of items; raise ``StopIteration`` when the partition is done."""

    def next_awake(self) -> datetime | None:
        """When to call ``next_batch`` next (``None``: as soon as possible)."""
        return None

    def close(self) -> None:
        """Clean up when the execution ends."""


class DynamicSource(Source[_X]):
    """A source that builds one stateless partition per worker."""

    @abc.abstractmethod
    def build(self, step_id: str, worker_index: int, worker_count: int) -> StatelessSourcePartition[_X]:
        """Build the partition of one worker."""


# Polling. --------------------------------------------------------------------------------------


class _PollingPartition(StatefulSourcePartition[_X, _S]):
    """The one partition of a :class:`SimplePollingSource`: calls ``getter`` once per awake time."""

    def __init__(
        self,
        now: datetime,
        interval: timedelta,
        align_to: datetime | None,
        getter: Callable[[], _X | None],
        snapshot: Callable[[], _S],
    ) -> None:
        self._interval = interval
        self._getter = getter
        self._snapshot = snapshot
        self._awake = now
        if align_to is not None:
            # The first awake time on the grid ``align_to + k * interval`` at or after now.
            late = (now - align_to) % interval
            if late:
                self._awake = now + (interval - late)

    def next_batch(self) -> list[_X]:
        try:
            item = self._getter()
        except SimplePollingSource.Retry as retry:
            self._awake += retry.timeout
            return []
        self._awake += self._interval
        return [] if item is None else [item]

    def next_awake(self) -> datetime | None:
        return self._awake

    def snapshot(self) -> _S:
        return self._snapshot()


class SimplePollingSource(FixedPartitionedSource[_X, _S]):
    """Calls :meth:`next_item` every ``interval`` (aligned to ``align_to`` when given) and emits
    what it returns (``None``: nothing this time). One partition, so one worker polls it.

    Raise :class:`SimplePollingSource.Retry` from ``next_item`` to poll again after its
    ``timeout`` instead of the interval, and ``StopIteration`` to end the input. Override
    :meth:`snapshot` and :meth:`resume` to resume where the last snapshot was taken.
    """

    @dataclass
    class Retry(Exception):  # noqa: N818 - Bytewax's name
        """Poll again after ``timeout`` instead of the usual interval."""

        timeout: timedelta

    def __init__(self, interval: timedelta, align_to: datetime | None = None) -> None:
        self._interval = interval
        self._align_to = align_to

    def list_parts(self) -> list[str]:
        return ["singleton"]

    def build_part(self, step_id: str, for_part: str, resume_state: _S | None) -> _PollingPartition[_X, _S]:
        if resume_state is not None:
            self.resume(resume_state)
        return _PollingPartition(
            datetime.now(_UTC), self._interval, self._align_to, self.next_item, self.snapshot
        )

    @abc.abstractmethod
    def next_item(self) -> _X | None:
        """The next item (``None``: nothing this time)."""

    def snapshot(self) -> _S:
        """Where to resume reading after the items returned so far (default: ``None``)."""
        return None  # type: ignore[return-value]

    def resume(self, resume_state: _S) -> None:
        """Continue from ``resume_state`` (a :meth:`snapshot`); called once before the first
        :meth:`next_item` of a resumed execution."""


# Batching helpers. -----------------------------------------------------------------------------


def batch(ib: Iterable[_X], batch_size: int) -> Iterator[list[_X]]:
    """The items of ``ib`` in lists of at most ``batch_size``.

    >>> list(batch(range(5), 2))
    [[0, 1], [2, 3], [4]]
    """
    it = iter(ib)
    while chunk := list(islice(it, batch_size)):
        yield chunk


def batch_getter(getter: Callable[[], _X], batch_size: int, yield_on: _X | None = None) -> Iterator[list[_X]]:
    """Batches of what ``getter()`` returns: a batch ends after ``batch_size`` items or when
    ``getter`` returns ``yield_on`` (no item yet); ``StopIteration`` from ``getter`` yields the
    last batch and ends.

    >>> items = iter([1, None, 2, 3])
    >>> list(batch_getter(lambda: next(items), 5))
    [[1], [2, 3]]
    """
    while True:
        chunk: list[_X] = []
        while len(chunk) < batch_size:
            try:
                item = getter()
            except StopIteration:
                yield chunk
                return
            if item == yield_on:
                break
            chunk.append(item)
        yield chunk


def batch_getter_ex(
    getter: Callable[[], _X], batch_size: int, yield_ex: type[Exception] = queue.Empty
) -> Iterator[list[_X]]:
    """Batches of what ``getter()`` returns: a batch ends after ``batch_size`` items or when
    ``getter`` raises ``yield_ex`` (no item yet); ``StopIteration`` yields the last batch and ends.

    >>> q: queue.Queue[int] = queue.Queue()
    >>> for i in range(3):
    ...     q.put(i)
    >>> next(batch_getter_ex(q.get_nowait, 5))
    [0, 1, 2]
    """
    while True:
        chunk: list[_X] = []
        while len(chunk) < batch_size:
            try:
                chunk.append(getter())
            except yield_ex:
                break
            except StopIteration:
                yield chunk
                return
        yield chunk


def batch_async(
    aib: AsyncIterable[_X],
    timeout: timedelta,
    batch_size: int,
    loop: asyncio.AbstractEventLoop | None = None,
) -> Iterator[list[_X]]:
    """Batches of an async iterable, read synchronously: each batch waits at most ``timeout``
    for up to ``batch_size`` items (an item still pending at the timeout goes into a later
    batch); ends when the iterable does.

    >>> async def numbers():
    ...     for i in range(3):
    ...         yield i
    >>> list(batch_async(numbers(), timedelta(seconds=1), 2))
    [[0, 1], [2]]
    """
    ait = aib.__aiter__()
    run_loop = loop if loop is not None else asyncio.new_event_loop()
    pending: asyncio.Future[Any] | None = None

    async def next_item() -> Any:
        return await ait.__anext__()

    async def gather() -> list[_X]:
        nonlocal pending
        chunk: list[_X] = []
        while len(chunk) < batch_size:
            if pending is None:
                pending = run_loop.create_task(next_item())
            try:
                # Shielded: a timeout cancels the wait, not the read; the next batch reuses it.
                item = await asyncio.shield(pending)
            except asyncio.CancelledError:
                break
            except StopAsyncIteration:
                if chunk:
                    break
                raise
            pending = None
            chunk.append(item)
        return chunk

    while True:
        try:
            yield run_loop.run_until_complete(asyncio.wait_for(gather(), timeout.total_seconds()))
        except StopAsyncIteration:
            return


#: Bytewax's name for the partition of a :class:`SimplePollingSource` (its tests build it directly).
_SimplePollingPartition = _PollingPartition
