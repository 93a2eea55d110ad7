"""PyFlink's ``pyflink.metrics``: the metric types a function's metric group hands out.

Metrics live in the operator instance that made them. When a job ends, each step's metrics
(summed over its subtasks; on Spark, collected from the workers) appear in its summary
(``JobExecutionResult.get_job_summary()``) and in the Prometheus text of
``fs_compat.monitoring`` (``prometheus_text``, ``serve_metrics``); a streaming query shows them in
its line per micro-batch.

>>> group = MetricGroup({})
>>> group.add_group("orders").counter("seen").inc(2)
>>> group.add_group("orders").counter("seen").get_count()
2
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fs_compat.runtime import MetricValue as _MetricValue

__all__ = ["Counter", "Distribution", "Meter", "MetricGroup"]


class Counter:
    """A count that goes up and down (``MetricGroup.counter``)."""

    def __init__(self) -> None:
        self._count = 0

    def inc(self, n: int = 1) -> None:
        """Add ``n``."""
        self._count += n

    def dec(self, n: int = 1) -> None:
        """Subtract ``n``."""
        self._count -= n

    def get_count(self) -> int:
        """The current count."""
        return self._count

    def metric_value(self) -> _MetricValue:
        """The value the job's summary and the exporters show."""
        return _MetricValue("counter", self._count)


class Meter:
    """Events over time (``MetricGroup.meter``); kept as a total count, no rate is reported."""

    def __init__(self, time_span_in_seconds: int = 60) -> None:
        self._count = 0
        self.time_span_in_seconds = time_span_in_seconds

    def mark_event(self, value: int = 1) -> None:
        """Record ``value`` events."""
        self._count += value

    def get_count(self) -> int:
        """The events recorded so far."""
        return self._count

    def metric_value(self) -> _MetricValue:
        """The value the job's summary and the exporters show (the events so far)."""
        return _MetricValue("meter", self._count)


class Distribution:
    """The values recorded (``MetricGroup.distribution``), in order."""

    def __init__(self) -> None:
        self.values: list[int] = []

    def update(self, value: int) -> None:
        """Record ``value``."""
        self.values.append(value)

    def metric_value(self) -> _MetricValue:
        """The value the job's summary and the exporters show: count, sum, minimum, maximum."""
        values = self.values
        if not values:
            return _MetricValue("distribution")
        return _MetricValue(
            "distribution", count=len(values), total=sum(values), low=min(values), high=max(values)
        )


class MetricGroup:
    """Metrics of one operator instance (shown in the job's summary and exported; see the module)."""

    def __init__(self, store: dict[str, Any], prefix: str = "") -> None:
        self._store = store
        self._prefix = prefix

    def _get(self, name: str, make: Callable[[], Any]) -> Any:
        full = self._prefix + name
        metric = self._store.get(full)
        if metric is None:
            metric = self._store[full] = make()
        return metric

    def add_group(self, name: str, extra: str | None = None) -> MetricGroup:
        """A subgroup: its metrics' names start with ``name.`` (``name.extra.`` with ``extra``)."""
        sub = name if extra is None else f"{name}.{extra}"
        return MetricGroup(self._store, f"{self._prefix}{sub}.")

    def counter(self, name: str) -> Counter:
        """The counter ``name`` of this group, made on first use."""
        counter: Counter = self._get(name, Counter)
        return counter

    def gauge(self, name: str, obj: Callable[[], int]) -> None:
        """Register ``obj``, a function giving the gauge's current value, as ``name``."""
        self._store[self._prefix + name] = obj

    def meter(self, name: str, time_span_in_seconds: int = 60) -> Meter:
        """The meter ``name`` of this group, made on first use."""
        meter: Meter = self._get(name, lambda: Meter(time_span_in_seconds))
        return meter

    def distribution(self, name: str) -> Distribution:
        """The distribution ``name`` of this group, made on first use."""
        dist: Distribution = self._get(name, Distribution)
        return dist
