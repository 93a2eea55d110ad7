"""What a running job shows: one line per micro-batch of a streaming query (``StreamProgress``,
from a ``StreamingQueryListener``, which PySpark runs in the driver's process on a classic session
and in the client's over Spark Connect).

A streaming DataFrame built by ``stream_dataframe`` is *watched*: between its passes, named
observations (``DataFrame.observe``, which Spark reports in each micro-batch's
``observedMetrics``, over Connect too) count the records going from one keyed step to the next
and the largest timestamp the first one saw. The listener turns them, with Spark's own figures
(input rows, the state operators' rows and bytes, the batch's duration), into a line on stderr::

    [orders] batch 3: 200 in | Keyed Process 200 in, 180 out | state 31 rows, 12.0 KiB |
    watermark 1500 | 0.84 s

and into the query's ``JobSummary`` for the Prometheus exporter (``fs_compat.monitoring``).
The figures are per micro-batch; the state's are Spark's (state store rows: per key group with
state, its row, and one row per bucket of its keys when it has more than a few hundred keys, see
``_stream``).
"""

from __future__ import annotations

import atexit
import base64
import pickle
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import attrs

from fs_compat.runtime import (
    MAX_TIMESTAMP,
    JobSummary,
    MetricValue,
    StepSummary,
    merge_metrics,
    snapshot_metrics,
)

#: Per step (node id): its metrics by name.
StepMetrics = dict[int, dict[str, MetricValue]]

#: Observation names start with this (then the plan's id and the point).
_PREFIX = "fs_compat_"
#: The column of the last keyed step's output whose rows carry its calls' metrics.
METRICS_COLUMN = "__fs_compat_metrics"


@attrs.frozen
class Watched:
    """A watched streaming plan: ``stages`` are the step labels between observation points
    (the first: the stateless steps before the first keyed step, or None when there are none),
    ``delay`` what to take off the observed watermark (0: the markers carry it; None: no
    watermark)."""

    plan_id: str
    before: str | None
    stages: tuple[str, ...]
    delay: int | None
    names: tuple[tuple[int, str], ...] = ()  # the keyed steps and those after them: id, name
    channels: int = 1  # the first keyed step's input channels (the watermark: the smallest)


_plans: dict[str, Watched] = {}


# Metrics of a key-group call (in Spark's workers). ---------------------------------------------


def runner_metrics(runner: Any) -> StepMetrics:
    """The metrics of the steps a SubtaskRunner runs (a key group's), per step."""
    found: StepMetrics = {}
    for task in runner._chain:
        values = merge_metrics(snapshot_metrics(inst.rt.metrics) for inst in task.instances)
        if values:
            found[task.node.id] = values
    return found


def metric_changes(before: StepMetrics, after: StepMetrics) -> bytes | None:
    """What a call added to its key group's metrics (counts and sums as differences; a gauge, a
    distribution's minimum and maximum as they are now), pickled; None when nothing changed."""
    changed: StepMetrics = {}
    for step, values in after.items():
        old = before.get(step, {})
        for name, now in values.items():
            was = old.get(name)
            if was == now:
                continue
            if was is not None and now.kind != "gauge":
                now = attrs.evolve(
                    now, value=now.value - was.value, count=now.count - was.count, total=now.total - was.total
                )
            changed.setdefault(step, {})[name] = now
    return pickle.dumps(changed) if changed else None


def _unpack(blobs: Sequence[Any] | None) -> StepMetrics:
    """The metrics of the observed blobs, merged: bytes on a classic session; over Spark Connect
    the progress event is JSON, where Spark writes binary values in base64."""
    merged: StepMetrics = {}
    for blob in blobs or ():
        if isinstance(blob, str):
            blob = base64.b64decode(blob)
        elif isinstance(blob, list):
            blob = bytes(blob)
        for step, values in pickle.loads(bytes(blob)).items():
            merged[step] = merge_metrics([merged.get(step, {}), values])
    return merged


#: Streaming DataFrames built in this process (``fs-compat run`` says a file ran a job).
built: list[str] = []


def watch(
    df: Any,
    before: Sequence[str],
    stages: Sequence[str],
    delay: int | None,
    names: Sequence[tuple[int, str]] = (),
    channels: int = 1,
) -> Callable[[Any, int, str], Any]:
    """Register a streaming plan whose first pass is ``df`` (its session gets the listener);
    returns ``observe(df, point, kind)``, which adds the observation of point ``point`` (0:
    after the first pass; ``i``: after stage ``i``, ``StreamShape.stages``: usually one keyed
    step) to ``df`` and returns it. ``kind``: ``"events"`` (rows of ``_PRE_FIELDS``: records
    have ``v``, a chunk ``n`` of them; at point 0 also each of the ``channels``' largest marker
    ``ts``, its watermark; after a stage, its calls' markers, ``kg`` below 0, carry the metrics
    its steps added in their ``v``), ``"rows"`` (every row is a record) or the name of the
    column whose non-null rows carry the metrics instead of records (they are dropped after
    it)."""
    plan = Watched(
        uuid.uuid4().hex[:12], " > ".join(before) or None, tuple(stages), delay, tuple(names), channels
    )
    _plans[plan.plan_id] = plan
    built.append(plan.plan_id)
    listen(df.sparkSession)

    def observe(frame: Any, point: int, kind: str) -> Any:
        from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

        name = f"{_PREFIX}{plan.plan_id}_{point}"
        if kind == "rows":
            return frame.observe(name, F.count(F.lit(1)).alias("n"))
        if kind == "events":
            marker = F.col("kg") < 0
            # A record's row counts one, a chunk's its records (``n``).
            records = F.when(~marker & F.col("v").isNotNull(), F.coalesce(F.col("n"), F.lit(1)))
            aggs = [F.coalesce(F.sum(records), F.lit(0)).alias("n")]
            if point == 0:  # each channel's watermark: its markers (no value) carry it
                mark = F.col("v").isNull()
                aggs += [
                    F.max(F.when(mark & (F.col("ch") == c), F.col("ts"))).alias(f"w{c}")
                    for c in range(channels)
                ]
            else:
                aggs.append(F.collect_list(F.when(marker, F.col("v"))).alias("m"))
            return frame.observe(name, *aggs)
        carrier = F.col(kind)
        counted = F.count(F.when(carrier.isNull(), F.lit(1))).alias("n")
        observed = frame.observe(name, counted, F.collect_list(carrier).alias("m"))
        return observed.where(carrier.isNull()).drop(kind)

    return observe


def streams_built() -> int:
    """How many streaming DataFrames this process built (``fs-compat run``: whether a file ran
    a streaming job)."""
    return len(built)


_listening: dict[str, Any] = {}
_lock = threading.Lock()
_hooked: list[bool] = []  # whether ``_stop_listening`` is registered for the interpreter's exit


def _session_key(spark: Any) -> str:
    from ._session import is_connect

    return f"connect:{spark.session_id}" if is_connect(spark) else f"classic:{id(spark.sparkContext)}"


def listen(spark: Any) -> None:
    """Add the listener that prints the micro-batch lines to ``spark``'s streams (once)."""
    with _lock:
        key = _session_key(spark)
        if key in _listening:
            return
        listener = _listener()
        spark.streams.addListener(listener)
        if not _listening and not _hooked:
            # Before the interpreter waits for non-daemon threads: over Connect, the listener
            # bus is such a thread, and it ends only when its listener is removed (an ``atexit``
            # hook runs after that wait: a program ending with an exception would hang). Added
            # now, after the Connect client's thread pools registered theirs, so that it runs
            # before they shut down (threading's hooks run last registered first).
            getattr(threading, "_register_atexit", atexit.register)(_stop_listening)
            _hooked.append(True)
        _listening[key] = listener


def _listener() -> Any:
    from pyspark.sql.streaming.listener import StreamingQueryListener

    class _Lines(StreamingQueryListener):
        def onQueryStarted(self, event: Any) -> None:  # noqa: N802 - Spark's name
            with _events:
                _started.add(str(event.id))

        def onQueryProgress(self, event: Any) -> None:  # noqa: N802
            StreamProgress.report(event.progress)

        def onQueryIdle(self, event: Any) -> None:  # noqa: N802
            pass

        def onQueryTerminated(self, event: Any) -> None:  # noqa: N802
            with _events:
                _ended.add(str(event.id))
                _events.notify_all()

    return _Lines()


#: Queries whose start and end the listener saw (ids), guarded by ``_events``.
_started: set[str] = set()
_ended: set[str] = set()
_events = threading.Condition()


def await_lines(spark: Any, query_id: str | None = None, timeout: float = 30.0) -> bool:
    """Wait until the listener has printed the lines of the streaming queries that ended (or
    of the query ``query_id``, which ended): Spark hands listeners their events after
    ``awaitTermination()`` returns. Whether they all arrived within ``timeout`` seconds. Over
    Connect, when no query runs any more, the listener is removed (until the next streaming
    DataFrame is built)."""
    from ._session import is_connect

    if not is_connect(spark) and _session_key(spark) in _listening:
        # A classic session's listener bus: empty once every event was handed over.
        spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(int(timeout * 1000))
        return True
    active = {str(q.id) for q in spark.streams.active}

    def done() -> bool:
        wanted = {query_id} if query_id is not None else _started - active
        return wanted <= _ended

    with _events:
        arrived = _events.wait_for(done, timeout)
    if arrived and not active:
        # Over Connect, a listener's thread fails noisily when the session stops: with no query
        # running, it goes (the next streaming DataFrame built adds it again).
        with _lock:
            listener = _listening.pop(_session_key(spark), None)
        if listener is not None:
            spark.streams.removeListener(listener)
    return arrived


def _stop_listening() -> None:
    """At exit: let the listener take the events still queued, then remove it (a classic
    session's JVM would otherwise call into a Python process that is going away)."""
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    for key, listener in list(_listening.items()):
        if spark is None or getattr(spark, "is_stopped", False) or _session_key(spark) != key:
            continue  # a stopped Connect session: its listener went with it
        try:
            await_lines(spark, timeout=5.0)
            spark.streams.removeListener(listener)
        except Exception:  # the session may be stopped already: nothing to remove
            pass
    _listening.clear()


#: Where the lines go (None: ``sys.stderr`` at the time of writing).
output: list[TextIO] = []
#: The largest timestamp seen per (query id, plan id), for the watermark.
_max_ts: dict[tuple[str, str], int] = {}


@attrs.frozen
class StreamProgress:
    """One micro-batch of a watched query, as the line shows it."""

    query: str
    batch: int
    records_in: int
    steps: tuple[tuple[str, int, int], ...]  # (label, in, out)
    state: tuple[tuple[int, int], ...]  # per keyed step: (state store rows, bytes)
    watermark: int | None
    duration_s: float
    #: Per step with metrics (its name): what the micro-batch added to them (a gauge: its value).
    metrics: tuple[tuple[str, dict[str, MetricValue]], ...] = ()
    #: The same, added up over the query's micro-batches so far (the exported values).
    totals: tuple[tuple[str, dict[str, MetricValue]], ...] = ()
    #: Records in and out per step (as ``steps``) over the query's micro-batches so far.
    step_totals: tuple[tuple[str, int, int], ...] = ()

    @classmethod
    def of(cls, progress: Any) -> StreamProgress | None:
        """The micro-batch of ``progress`` (a ``StreamingQueryProgress``); None when its query
        is not a watched one."""
        observed = progress.observedMetrics or {}
        found: dict[str, dict[int, Any]] = {}
        for name, row in observed.items():
            if name.startswith(_PREFIX):
                plan_id, _, point = name[len(_PREFIX) :].rpartition("_")
                found.setdefault(plan_id, {})[int(point)] = row
        plans = [(_plans[p], rows) for p, rows in found.items() if p in _plans]
        if not plans:
            return None
        plan, rows = plans[0]
        count = [_int(rows.get(i), "n") for i in range(len(plan.stages) + 1)]
        records_in = int(progress.numInputRows or 0)
        steps: list[tuple[str, int, int]] = []
        if plan.before is not None:
            steps.append((plan.before, records_in, count[0]))
        for i, label in enumerate(plan.stages):
            steps.append((label, count[i], count[i + 1]))
        state = tuple((int(op.numRowsTotal or 0), _state_bytes(op)) for op in (progress.stateOperators or ()))
        query = progress.name or str(progress.id)[:8]
        watermark = None
        marks = [_int(rows.get(0), f"w{c}", None) for c in range(plan.channels)]
        top = None if None in marks else min(marks)
        key = (str(progress.id), plan.plan_id)
        if top is not None and top > _max_ts.get(key, top - 1):
            _max_ts[key] = top
        if plan.delay is not None and key in _max_ts:
            watermark = _max_ts[key] - plan.delay
        duration = (progress.batchDuration or 0) / 1000
        added = _unpack([b for i in range(1, len(plan.stages) + 1) for b in _list(rows.get(i), "m")])
        names = dict(plan.names)
        total = _totals.setdefault(key, {})
        for step, values in added.items():
            total[step] = {**total.get(step, {}), **_running(total.get(step, {}), values)}
        metrics = tuple(
            (names.get(step, str(step)), dict(sorted(v.items()))) for step, v in sorted(added.items())
        )
        totals = tuple(
            (names.get(step, str(step)), dict(sorted(v.items()))) for step, v in sorted(total.items())
        )
        seen = _records.setdefault(key, {})
        for label, n_in, n_out in steps:
            was_in, was_out = seen.get(label, (0, 0))
            seen[label] = (was_in + n_in, was_out + n_out)
        so_far = tuple((label, *seen[label]) for label, _i, _o in steps)
        return cls(
            query,
            int(progress.batchId),
            records_in,
            tuple(steps),
            state,
            watermark,
            duration,
            metrics,
            totals,
            so_far,
        )

    @staticmethod
    def report(progress: Any) -> None:
        """Print the line of ``progress``'s micro-batch (when its query is watched) and keep it
        as the query's latest summary (``fs_compat.monitoring``)."""
        found = StreamProgress.of(progress)
        if found is None:
            return
        stream = output[-1] if output else sys.stderr
        print(found.line(), file=stream, flush=True)
        from fs_compat import monitoring

        monitoring.stream_summaries[found.query] = found.summary()

    def line(self) -> str:
        """The micro-batch as one line.

        >>> StreamProgress("q", 2, 5, (("Keyed", 5, 4),), ((3, 2048),), 1500, 0.25).line()
        '[q] batch 2: 5 in | Keyed 5 in, 4 out | state 3 rows, 2.0 KiB | watermark 1500 | 0.25 s'

        The end of a bounded input moves the watermark to ``MAX_TIMESTAMP`` (Flink's
        MAX_WATERMARK, ``Long.MAX_VALUE``); the line says so:

        >>> StreamProgress("q", 3, 0, (), (), MAX_TIMESTAMP, 0.5).line()
        '[q] batch 3: 0 in | watermark +inf (end of input) | 0.50 s'
        """
        parts = [f"[{self.query}] batch {self.batch}: {self.records_in:,} in"]
        parts += [f"{label} {n_in:,} in, {n_out:,} out" for label, n_in, n_out in self.steps]
        if self.state:
            rows = sum(r for r, _ in self.state)
            size = sum(b for _, b in self.state)
            parts.append(f"state {rows:,} rows, {_size(size)}")
        if self.watermark is not None:
            end = self.watermark == MAX_TIMESTAMP
            parts.append(f"watermark {'+inf (end of input)' if end else self.watermark}")
        parts.append(f"{self.duration_s:.2f} s")
        for step, values in self.metrics:
            parts.append(f"{step}: " + "; ".join(f"{name} {m.render()}" for name, m in values.items()))
        return " | ".join(parts)

    def summary(self) -> JobSummary:
        """The query so far as a JobSummary: records and metrics over its micro-batches (since
        this process started it), state as of this micro-batch."""
        steps = []
        offset = len(self.steps) - len(self.state)  # the keyed steps are the last ones
        for i, (label, n_in, n_out) in enumerate(self.step_totals or self.steps):
            size = None
            if 0 <= offset <= i:
                # Spark counts state store rows (a key group's header and its buckets), not keys:
                # the number of keys is not known here (None).
                size = self.state[i - offset][1]
            steps.append(StepSummary(label, i, "step", n_in, n_out, None, size))
        for name, values in self.totals:  # the metrics so far, on their steps
            at = next((j for j, step in enumerate(steps) if step.name == name), None)
            if at is None:
                steps.append(StepSummary(name, len(steps), "step", None, None, metrics=values))
            else:
                steps[at] = attrs.evolve(steps[at], metrics=values)
        return JobSummary(self.query, "spark streaming", self.duration_s, tuple(steps))


#: The metrics of each (query id, plan id) added up over its micro-batches (``_running``), and
#: the records in and out of each of its steps.
_totals: dict[tuple[str, str], StepMetrics] = {}
_records: dict[tuple[str, str], dict[str, tuple[int, int]]] = {}


def _running(total: dict[str, MetricValue], added: dict[str, MetricValue]) -> dict[str, MetricValue]:
    """``total`` with a micro-batch's ``added`` values: counts and sums add up; a gauge, a
    distribution's minimum and maximum the smaller and the larger."""
    out = dict(total)
    for name, value in added.items():
        old = out.get(name)
        if old is None or value.kind == "gauge":
            out[name] = value
        else:
            out[name] = attrs.evolve(old.merged(value), value=old.value + value.value)
    return out


def _list(row: Any, field: str) -> list[Any]:
    if row is None or field not in row.asDict():
        return []
    return list(row[field] or [])


def _int(row: Any, field: str, default: int | None = 0) -> Any:
    if row is None:
        return default
    value = row[field] if field in row.asDict() else None
    return default if value is None else int(value)


def _state_bytes(op: Any) -> int:
    custom = op.customMetrics or {}
    for name in ("rocksdbSstFileSize", "stateOnCurrentVersionSizeBytes"):
        if custom.get(name):
            return int(custom[name])
    return int(op.memoryUsedBytes or 0)


def _size(n: int) -> str:
    """
    >>> _size(512), _size(12_288), _size(3 << 20)
    ('512 B', '12.0 KiB', '3.0 MiB')
    """
    if n < 1024:
        return f"{n} B"
    if n < 1 << 20:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1 << 20):.1f} MiB"
