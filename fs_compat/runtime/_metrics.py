"""User metrics as values that travel: what an operator instance's metric store holds
(``OperatorRuntime.metrics``: objects with a ``metric_value()`` method, or a gauge's function)
becomes a ``MetricValue`` in the task that ran it, and the values of a step's subtasks merge into
one (``merge_metrics``) where the job's summary is made: in this process, or on Spark's driver.

>>> class Hits:
...     def metric_value(self) -> MetricValue:
...         return MetricValue("counter", 2)
>>> found = snapshot_metrics({"hits": Hits(), "queue": lambda: 5})
>>> [(name, value.kind, value.value) for name, value in found.items()]
[('hits', 'counter', 2), ('queue', 'gauge', 5)]
>>> merge_metrics([{"hits": MetricValue("counter", 2)}, {"hits": MetricValue("counter", 3)}])["hits"].value
5
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

#: The kinds of metric values (PyFlink's metric types).
METRIC_KINDS = ("counter", "gauge", "meter", "distribution")


@attrs.frozen
class MetricValue:
    """One metric's value: ``value`` for a counter, a gauge (the gauge function's result) or a
    meter (events so far); ``count``, ``total``, ``low`` and ``high`` (count, sum, minimum and
    maximum of the values recorded) for a distribution."""

    kind: str
    value: float = 0
    count: int = 0
    total: float = 0
    low: float | None = None
    high: float | None = None

    def merged(self, other: MetricValue) -> MetricValue:
        """This value and ``other``'s (another subtask's) as one: counters, meters and gauges
        add up; distributions combine."""
        if self.kind != "distribution":
            return attrs.evolve(self, value=self.value + other.value)
        lows = [v for v in (self.low, other.low) if v is not None]
        highs = [v for v in (self.high, other.high) if v is not None]
        return attrs.evolve(
            self,
            count=self.count + other.count,
            total=self.total + other.total,
            low=min(lows) if lows else None,
            high=max(highs) if highs else None,
        )

    def render(self) -> str:
        """The value as the summary shows it.

        >>> MetricValue("distribution", count=2, total=5, low=1, high=4).render()
        'count 2, min 1, mean 2.5, max 4'
        >>> MetricValue("meter", 7).render()
        '7'
        """
        if self.kind != "distribution":
            return _number(self.value)
        if not self.count:
            return "count 0"
        mean = self.total / self.count
        return f"count {self.count}, min {_number(self.low)}, mean {_number(mean)}, max {_number(self.high)}"


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.3g}"


def snapshot_metrics(store: Mapping[str, Any]) -> dict[str, MetricValue]:
    """The values of the metrics in ``store`` (an operator instance's): objects give their
    ``metric_value()``, a function is a gauge and gives its result (a gauge that fails or gives
    no number is left out: reading metrics never fails a job)."""
    values: dict[str, MetricValue] = {}
    for name, metric in store.items():
        read = getattr(metric, "metric_value", None)
        if read is not None:
            values[name] = read()
            continue
        if callable(metric):
            try:
                value = metric()
            except Exception:
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                values[name] = MetricValue("gauge", value)
    return values


def merge_metrics(parts: Iterable[Mapping[str, MetricValue]]) -> dict[str, MetricValue]:
    """The metrics of several subtasks of one step, merged by name (``MetricValue.merged``)."""
    merged: dict[str, MetricValue] = {}
    for part in parts:
        for name, value in part.items():
            seen = merged.get(name)
            merged[name] = value if seen is None else seen.merged(value)
    return merged
