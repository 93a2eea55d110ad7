"""``prometheus_client`` metrics in a job's functions (as Bytewax flows define them) on Spark.

A metric object cannot be pickled (it holds a lock), so functions that use one could not travel
to Spark's workers. While a job is built (``install_reducers``), a metric pickles as a reference
(its class, name, help, label names and options, and a child's label values); in a worker the
reference gives that worker's own copy (``_worker_metric``), made once per Python worker and
registered nowhere. Each task notes its worker's values when it starts (``worker_values``) and
hands what changed when it ends (``changes``: counts and sums as differences, a gauge's last
value) to the driver with the job's counts (``_counters``), where ``apply_changes`` adds them to
the driver's metric objects of the same names in prometheus_client's default registry: the
registry a Bytewax user serves or scrapes shows what the workers did. What another Python worker
changed (a Bytewax source's reader, whose rows a task reads) comes with its rows and is handed on
with that task's own changes (``carry``).

Reads and writes prometheus_client's metric internals (``_value``, ``_buckets``, ``_sum``,
``_count``, ``_metrics``), stable across its releases 0.16-0.26.
"""

from __future__ import annotations

import copyreg
import sys
from typing import Any

from fs_compat.runtime import MetricValue

#: Per metric sample of a worker: ``(class name, metric name, label values)`` -> numbers.
Values = dict[tuple[str, str, tuple[str, ...]], tuple[float, ...]]

_KINDS = ("Counter", "Gauge", "Histogram", "Summary")
_installed: list[bool] = []
#: A worker's metrics, by class name and metric name (``_worker_metric``).
_worker: dict[tuple[str, str], Any] = {}
#: What other Python workers changed, which the task running here hands on (``carry``).
_carried: list[Values] = []


def install_reducers() -> None:
    """Make prometheus_client's Counter, Gauge, Histogram and Summary pickle by reference (when
    prometheus_client is imported; once per process)."""
    if _installed or "prometheus_client" not in sys.modules:
        return
    import prometheus_client

    for kind in _KINDS:
        copyreg.pickle(getattr(prometheus_client, kind), _reduce)
    _installed.append(True)


def _reduce(metric: Any) -> tuple[Any, tuple[Any, ...]]:
    kwargs = {k: v for k, v in metric._kwargs.items() if k in ("buckets",)}
    if type(metric).__name__ == "Histogram" and not kwargs:
        kwargs["buckets"] = tuple(metric._upper_bounds)
    spec = (
        type(metric).__name__,
        metric._name,
        metric._documentation,
        tuple(metric._labelnames),
        kwargs,
    )
    return _worker_metric, (spec, tuple(metric._labelvalues or ()))


def _worker_metric(spec: tuple[Any, ...], labelvalues: tuple[str, ...]) -> Any:
    """This worker's copy of the metric ``spec`` (its child ``labelvalues`` when given). The
    copy pickles by reference too: a worker that re-pickles what holds it (Spark's data-source
    planning worker hands the reader on to the tasks) sends the reference on."""
    import prometheus_client

    install_reducers()

    kind, name, documentation, labelnames, kwargs = spec
    metric = _worker.get((kind, name))
    if metric is None:
        cls = getattr(prometheus_client, kind)
        metric = _worker[(kind, name)] = cls(name, documentation, labelnames, registry=None, **kwargs)
    return metric.labels(*labelvalues) if labelvalues else metric


def _children(metric: Any) -> list[tuple[tuple[str, ...], Any]]:
    if metric._labelnames:
        with metric._lock:
            return list(metric._metrics.items())
    return [((), metric)]


def _numbers(kind: str, child: Any) -> tuple[float, ...]:
    if kind in ("Counter", "Gauge"):
        return (child._value.get(),)
    if kind == "Histogram":
        return (child._sum.get(), *(b.get() for b in child._buckets))
    return (child._count.get(), child._sum.get())


def worker_values() -> Values:
    """The values of this worker's metrics now (empty when none was unpickled here)."""
    values: Values = {}
    for (kind, name), metric in list(_worker.items()):
        for labels, child in _children(metric):
            values[(kind, name, tuple(labels))] = _numbers(kind, child)
    return values


def task_started() -> Values:
    """A task starts: forget what an earlier task here carried and did not hand on (it failed),
    and give the worker's values now (``worker_values``)."""
    _carried.clear()
    return worker_values()


def carry(found: Values) -> None:
    """Hand ``found`` on with what the task running here changes (``task_changes``): what
    another Python worker changed, such as the reader of a data source whose rows this task reads."""
    if found:
        _carried.append(found)


def task_changes(before: Values) -> Values:
    """What the task running here changed since ``before`` (``task_started``), with what it
    carries (``carry``)."""
    found = merge_changes([changes(before), *_carried])
    _carried.clear()
    return found


def changes(before: Values, now: Values | None = None) -> Values:
    """What changed in this worker's metrics from ``before`` to ``now`` (by default, the values
    now): differences, but a gauge's value as it is."""
    found: Values = {}
    for key, numbers in (worker_values() if now is None else now).items():
        old = before.get(key)
        if old == numbers:
            continue
        if key[0] == "Gauge":
            found[key] = numbers
        else:
            found[key] = tuple(n - o for n, o in zip(numbers, old or (0.0,) * len(numbers), strict=True))
    return found


def merge_changes(parts: list[Values]) -> Values:
    """The changes of several tasks as one (a gauge: the last task's value)."""
    merged: Values = {}
    for part in parts:
        for key, numbers in part.items():
            old = merged.get(key)
            if old is None or key[0] == "Gauge":
                merged[key] = numbers
            else:
                merged[key] = tuple(a + b for a, b in zip(old, numbers, strict=True))
    return merged


def apply_changes(found: Values) -> None:
    """Add the workers' changes to the driver's metrics of the same names in prometheus_client's
    default registry (a metric the driver does not have is left out)."""
    if not found:
        return
    from prometheus_client import REGISTRY

    collectors: dict[str, Any] = REGISTRY._names_to_collectors
    for (kind, name, labels), numbers in found.items():
        metric = collectors.get(name)
        if metric is None or type(metric).__name__ != kind:
            continue
        child = metric.labels(*labels) if labels else metric
        if kind == "Counter":
            child._value.inc(numbers[0])
        elif kind == "Gauge":
            child._value.set(numbers[0])
        elif kind == "Histogram":
            child._sum.inc(numbers[0])
            for bucket, n in zip(child._buckets, numbers[1:], strict=True):
                bucket.inc(n)
        else:
            child._count.inc(numbers[0])
            child._sum.inc(numbers[1])


def as_metric_values(found: Values) -> dict[str, MetricValue]:
    """The workers' changes as the job's summary shows them: ``name{label values}`` -> what the
    job added (a gauge: its value; a histogram or summary: a distribution's count and sum)."""
    values: dict[str, MetricValue] = {}
    for (kind, name, labels), numbers in sorted(found.items()):
        label = f"{name}{{{','.join(labels)}}}" if labels else name
        if kind in ("Counter", "Gauge"):
            values[label] = MetricValue(kind.lower(), numbers[0])
        elif kind == "Histogram":
            values[label] = MetricValue("distribution", count=int(sum(numbers[1:])), total=numbers[0])
        else:
            values[label] = MetricValue("distribution", count=int(numbers[0]), total=numbers[1])
    return values
