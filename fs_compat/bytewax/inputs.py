"""Input sources (``bytewax.inputs``): subclass these to feed items into a dataflow.

Only what the in-process runner needs is provided: fixed-partitioned sources (with resume state)
and dynamic sources.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable
from datetime import datetime
from typing import Generic, TypeVar

__all__ = [
    "AbortExecution",
    "DynamicSource",
    "FixedPartitionedSource",
    "Source",
    "StatefulSourcePartition",
    "StatelessSourcePartition",
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
