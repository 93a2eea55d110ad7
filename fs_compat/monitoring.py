"""Metrics for scraping, in Prometheus' text format (through ``prometheus_client``, the library
Bytewax users know: ``pip install 'fs-compat[metrics]'``).

What is exported, from this process (the driver):

- per finished batch job (its latest run) and per streaming query (its latest micro-batch), each
  step's records in and out and keyed state, with labels ``job_name`` and ``operator_name``:
  ``fs_compat_records_in``, ``fs_compat_records_out``, ``fs_compat_state_keys``,
  ``fs_compat_state_bytes``;
- the metrics of PyFlink's metric group (``get_metrics_group()``), summed over a step's subtasks
  and collected from Spark's workers, named as Flink's Prometheus reporter names operator
  metrics: ``flink_taskmanager_job_task_operator_<group>_<name>`` (a counter, a gauge and a
  meter's count as gauges, a distribution as a summary with ``_min`` and ``_max`` gauges);
- everything in ``prometheus_client``'s default registry: the metrics a Bytewax flow defines
  with ``prometheus_client`` (on Spark, their workers' updates are added to the driver's metric
  objects when each job ends), and the process collectors.

``prometheus_text()`` gives the text; ``serve_metrics(port)`` serves it over HTTP at
``/metrics`` (``fs-compat run --conf metrics.reporter.prom.port=PORT`` does it for a job run from the
command line).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

from fs_compat import runtime as _runtime

__all__ = ["metric_name", "prometheus_text", "serve_metrics", "stream_summaries"]

#: The per-step summary of each streaming query's latest micro-batch, by query name (set by
#: ``fs_compat.spark``'s streaming listener).
stream_summaries: dict[str, _runtime.JobSummary] = {}

_registered = threading.Lock()
_collector: list[Any] = []


def _registry() -> Any:
    """prometheus_client's default registry, with fs-compat's collector registered once."""
    try:
        from prometheus_client import REGISTRY
    except ImportError as exc:
        raise ImportError(
            "exporting metrics needs prometheus_client: pip install 'fs-compat[metrics]' "
            "(or pip install prometheus_client)"
        ) from exc
    with _registered:
        if not _collector:
            collector = _Collector()
            REGISTRY.register(collector)
            _collector.append(collector)
    return REGISTRY


def prometheus_text() -> str:
    """All metrics of this process in Prometheus' text format (what ``serve_metrics`` serves)."""
    from prometheus_client import generate_latest

    return generate_latest(_registry()).decode("utf-8")


def serve_metrics(port: int, addr: str = "0.0.0.0") -> Any:
    """Serve ``prometheus_text()`` over HTTP on ``addr:port`` (``/metrics``; port 0: a free
    one), from a daemon thread; returns the server (``server.server_port`` is the port,
    ``server.shutdown()`` stops it)."""
    from prometheus_client import start_http_server

    server, _thread = start_http_server(port, addr, registry=_registry())
    return server


_INVALID = re.compile(r"[^a-zA-Z0-9_]")


def metric_name(name: str) -> str:
    """The Prometheus name of a PyFlink metric ``name`` (its groups joined by ``.``), as Flink's
    Prometheus reporter makes it.

    >>> metric_name("orders.seen")
    'flink_taskmanager_job_task_operator_orders_seen'
    """
    return "flink_taskmanager_job_task_operator_" + _INVALID.sub("_", name)


class _Collector:
    """Reads the latest summaries when scraped."""

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        labels = ["job_name", "operator_name"]
        families = {
            "records_in": GaugeMetricFamily("fs_compat_records_in", "Records a step received", labels=labels),
            "records_out": GaugeMetricFamily(
                "fs_compat_records_out", "Records a step emitted", labels=labels
            ),
            "state_keys": GaugeMetricFamily(
                "fs_compat_state_keys", "Keys holding keyed state", labels=labels
            ),
            "state_bytes": GaugeMetricFamily("fs_compat_state_bytes", "Bytes of keyed state", labels=labels),
        }
        user: dict[str, Any] = {}
        for summary in [*_runtime.latest_summaries.values(), *stream_summaries.values()]:
            for step in summary.steps:
                at = [summary.job_name, step.name]
                for field, family in families.items():
                    value = getattr(step, field)
                    if value is not None:
                        family.add_metric(at, value)
                for name, value in step.metrics.items():
                    _add_user(user, metric_name(name), at, value)
        yield from families.values()
        yield from user.values()


def _add_user(families: dict[str, Any], name: str, at: list[str], value: _runtime.MetricValue) -> None:
    from prometheus_client.core import GaugeMetricFamily, SummaryMetricFamily

    labels = ["job_name", "operator_name"]
    if value.kind != "distribution":
        family = families.setdefault(name, GaugeMetricFamily(name, f"PyFlink {value.kind}", labels=labels))
        family.add_metric(at, value.value)
        return
    summary = families.setdefault(name, SummaryMetricFamily(name, "PyFlink distribution", labels=labels))
    summary.add_metric(at, count_value=value.count, sum_value=value.total)
    for suffix, bound in (("_min", value.low), ("_max", value.high)):
        if bound is not None:
            gauge = families.setdefault(
                name + suffix,
                GaugeMetricFamily(name + suffix, f"PyFlink distribution{suffix}", labels=labels),
            )
            gauge.add_metric(at, bound)
