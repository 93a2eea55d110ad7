"""Output sinks (``bytewax.outputs``): subclass these to write items out of a dataflow."""

from __future__ import annotations

import abc
import zlib
from typing import Generic, TypeVar

__all__ = [
    "DynamicSink",
    "FixedPartitionedSink",
    "Sink",
    "StatefulSinkPartition",
    "StatelessSinkPartition",
]

_X = TypeVar("_X")
_S = TypeVar("_S")


class Sink(abc.ABC, Generic[_X]):
    """A location to write output items to. Subclass a specific kind of sink."""


class StatelessSinkPartition(abc.ABC, Generic[_X]):
    """One worker's partition of a :class:`DynamicSink`."""

    @abc.abstractmethod
    def write_batch(self, items: list[_X]) -> None:
        """Write a batch of items."""

    def close(self) -> None:
        """Clean up when the execution ends."""


class DynamicSink(Sink[_X]):
    """A sink where every worker writes concurrently through its own partition."""

    @abc.abstractmethod
    def build(self, step_id: str, worker_index: int, worker_count: int) -> StatelessSinkPartition[_X]:
        """Build the partition of one worker."""


class StatefulSinkPartition(abc.ABC, Generic[_X, _S]):
    """One partition of a :class:`FixedPartitionedSink`, with resume state."""

    @abc.abstractmethod
    def write_batch(self, values: list[_X]) -> None:
        """Write a batch of values."""

    @abc.abstractmethod
    def snapshot(self) -> _S:
        """Resume state of this partition."""

    def close(self) -> None:
        """Clean up when the execution ends."""


class FixedPartitionedSink(Sink[tuple[str, _X]], Generic[_X, _S]):
    """A sink of ``(key, value)`` items routed to a fixed set of named partitions."""

    @abc.abstractmethod
    def list_parts(self) -> list[str]:
        """The partition names."""

    def part_fn(self, item_key: str) -> int:
        """Which partition (index into ``list_parts()``, wrapped) a key goes to."""
        return zlib.adler32(item_key.encode())

    @abc.abstractmethod
    def build_part(
        self, step_id: str, for_part: str, resume_state: _S | None
    ) -> StatefulSinkPartition[_X, _S]:
        """Build (or resume) one partition."""
