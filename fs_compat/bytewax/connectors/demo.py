"""Sources for local demo dataflows (``bytewax.connectors.demo``).

>>> from datetime import timedelta
>>> import fs_compat.bytewax.operators as op
>>> from fs_compat.bytewax.dataflow import Dataflow
>>> from fs_compat.bytewax.testing import TestingSink, run_main
>>> out = []
>>> flow = Dataflow("eg")
>>> src = RandomMetricSource("temp", interval=timedelta(0), count=3, next_random=lambda: 7)
>>> op.output("out", op.input("inp", flow, src), TestingSink(out))
>>> run_main(flow)
>>> out
[('temp', 7), ('temp', 7), ('temp', 7)]
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC as _UTC
from datetime import datetime, timedelta

from ..inputs import FixedPartitionedSource as _FixedPartitionedSource
from ..inputs import StatefulSourcePartition as _StatefulSourcePartition

__all__ = ["RandomMetricSource"]


@dataclass
class _MetricState:
    """When the next value is due and how many have been emitted (the resume state)."""

    awake_at: datetime
    count: int


class _MetricPartition(_StatefulSourcePartition[tuple[str, float], _MetricState]):
    def __init__(
        self,
        name: str,
        interval: timedelta,
        count: int,
        next_random: Callable[[], float],
        state: _MetricState,
    ) -> None:
        self._name = name
        self._interval = interval
        self._count = count
        self._next_random = next_random
        self._state = state

    def next_batch(self) -> list[tuple[str, float]]:
        self._state.awake_at += self._interval
        self._state.count += 1
        if self._state.count > self._count:
            raise StopIteration()
        return [(self._name, self._next_random())]

    def next_awake(self) -> datetime | None:
        return self._state.awake_at

    def snapshot(self) -> _MetricState:
        return self._state


def _random_digit() -> float:
    return random.randrange(0, 10)


class RandomMetricSource(_FixedPartitionedSource[tuple[str, float], _MetricState]):
    """Emits ``(metric_name, value)`` every ``interval`` (default 0.7 s), ``count`` times
    (default: practically forever); values from ``next_random`` (default: a random int 0-9).
    One partition named after the metric; merge several inputs for several metrics."""

    def __init__(
        self,
        metric_name: str,
        interval: timedelta = timedelta(seconds=0.7),
        count: int = sys.maxsize,
        next_random: Callable[[], float] = _random_digit,
    ) -> None:
        self._metric_name = metric_name
        self._interval = interval
        self._count = count
        self._next_random = next_random

    def list_parts(self) -> list[str]:
        return [self._metric_name]

    def build_part(self, step_id: str, for_part: str, resume_state: _MetricState | None) -> _MetricPartition:
        state = resume_state if resume_state is not None else _MetricState(datetime.now(_UTC), 0)
        return _MetricPartition(for_part, self._interval, self._count, self._next_random, state)
