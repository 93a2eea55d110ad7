"""Processing-time clocks driven by the data, so that processing-time timers and TTL give the
same results on every run and every target."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class HasTimestamp(Protocol):
    """What a record-following clock reads: the timestamp of the record being handled (an
    ``OperatorRuntime``, or a timestamp assigner's stand-in)."""

    timestamp: int | None


class RecordTimeClock:
    """A processing-time clock that follows the records' timestamps: each operator instance's
    processing time is the largest timestamp among the records (and event-time timers) it has
    handled so far, ``start`` before the first. Use it with
    ``env.set_processing_time_clock(RecordTimeClock())`` on records that carry timestamps (a
    ``WatermarkStrategy`` with a timestamp assigner, upstream of the steps that use processing
    time): a job then runs as if each record arrived at its timestamp.

    Timers fire as the runtime checks them: after each record of a keyed step in STREAMING mode,
    every processing-time timer of the instance that the record's timestamp reached fires. So a
    timer due between two records of an instance fires after the second one, not before it.

    The clock is picklable: on Spark every task gets a copy, and each operator instance in it its
    own time (``for_task``, which the runtime calls when it starts an instance). Called directly,
    it reads ``start``.

    >>> from fs_compat.runtime import OperatorRuntime, TaskInfo
    >>> rt = OperatorRuntime(TaskInfo("step", 1, 0), None, RecordTimeClock(start=5))
    >>> rt.clock()
    5
    >>> rt.timestamp = 1_000
    >>> rt.clock()
    1000
    >>> rt.timestamp = 400  # an older record: processing time does not go back
    >>> rt.clock()
    1000
    """

    def __init__(self, start: int = 0) -> None:
        self.start = start

    def __call__(self) -> int:
        return self.start

    def for_task(self, runtime: HasTimestamp) -> Callable[[], int]:
        """The clock of one operator instance: follows ``runtime.timestamp``."""
        latest = self.start

        def now() -> int:
            nonlocal latest
            ts = runtime.timestamp
            if ts is not None and ts > latest:
                latest = ts
            return latest

        return now

    def __repr__(self) -> str:
        return f"RecordTimeClock(start={self.start})"
