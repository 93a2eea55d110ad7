"""The line of a micro-batch from a StreamingQueryProgress: the observed counts and metrics as a
classic session gives them (bytes) and as Spark Connect's JSON events give them (base64)."""

from __future__ import annotations

import base64
import pickle
from types import SimpleNamespace
from typing import Any

import pytest

from fs_compat.runtime import MetricValue
from fs_compat.spark import _progress


class _Row(dict[str, Any]):
    def asDict(self) -> dict[str, Any]:  # noqa: N802 - pyspark Row's name
        return dict(self)


def _progress_of(plan: _progress.Watched, batch: int, blob: Any) -> Any:
    p = plan.plan_id
    return SimpleNamespace(
        observedMetrics={
            f"fs_compat_{p}_0": _Row(n=2, w0=500),  # the channel's watermark
            f"fs_compat_{p}_1": _Row(n=1, m=[blob]),
        },
        numInputRows=3,
        stateOperators=[SimpleNamespace(numRowsTotal=2, memoryUsedBytes=2048, customMetrics={})],
        name="q",
        id=f"query-{plan.plan_id}",
        batchId=batch,
        batchDuration=250,
    )


@pytest.mark.parametrize("connect", [False, True])
def test_a_micro_batch_line_with_metrics(connect: bool) -> None:
    plan = _progress.Watched(f"plan{int(connect)}", "positive", ("count",), 0, ((7, "count"),))
    _progress._plans[plan.plan_id] = plan
    raw = pickle.dumps({7: {"seen": MetricValue("counter", 2)}})
    blob = base64.b64encode(raw).decode() if connect else raw
    first = _progress.StreamProgress.of(_progress_of(plan, 0, blob))
    assert first is not None
    assert first.line() == (
        "[q] batch 0: 3 in | positive 3 in, 2 out | count 2 in, 1 out | state 2 rows, 2.0 KiB"
        " | watermark 500 | 0.25 s | count: seen 2"
    )
    second = _progress.StreamProgress.of(_progress_of(plan, 1, blob))
    assert second is not None
    summary = second.summary()  # what the exporter shows: the query so far
    assert summary.step("count").metrics == {"seen": MetricValue("counter", 4)}
    assert summary.step("positive").records_in == 6
