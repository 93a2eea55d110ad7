"""What a running job shows: one line per micro-batch of a streaming query (``StreamProgress``,
from a ``StreamingQueryListener``, which PySpark runs in the driver's process on a classic session
and in the client's over Spark Connect).

A streaming DataFrame built by ``stream_dataframe`` is *watched*: between its passes, named
observations (``DataFrame.observe``, which Spark reports in each micro-batch's
``observedMetrics``, over Connect too) count the records going from one keyed step to the next
and the largest timestamp the first one saw. The listener turns them, with Spark's own figures
(input rows, the state operators' rows and bytes, the batch's duration), into a line on stderr::

    [orders] batch 3: 200 in | Keyed Process 200 in, 180 out | state 31 key groups, 12.0 KiB |
    watermark 1500 | 0.84 s

and into the query's ``JobSummary`` for the Prometheus exporter (``fs_compat.monitoring``).
The figures are per micro-batch; the state's are Spark's (key groups with state: the job's
keyed state lives in one state row per key group).
"""

from __future__ import annotations

import atexit
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import attrs

from fs_compat.runtime import JobSummary, StepSummary

#: Observation names start with this (then the plan's id and the point).
_PREFIX = "fs_compat_"


@attrs.frozen
class Watched:
    """A watched streaming plan: ``stages`` are the step labels between observation points
    (the first: the stateless steps before the first keyed step, or None when there are none),
    ``delay`` the watermark's delay (None: no watermark)."""

    plan_id: str
    before: str | None
    stages: tuple[str, ...]
    delay: int | None


_plans: dict[str, Watched] = {}
#: Streaming DataFrames built in this process (``fs-compat run`` says a file ran a job).
built: list[str] = []


def watch(
    df: Any, before: Sequence[str], stages: Sequence[str], delay: int | None
) -> Callable[[Any, int, bool], Any]:
    """Register a streaming plan whose first pass is ``df`` (its session gets the listener);
    returns ``observe(df, point, records)``, which adds the observation of point ``point``
    (0: after the first pass; ``i``: after keyed step ``i``) to ``df``: rows with a value
    (``records``: rows of the ``v`` column; else every row) and, at point 0, the largest ``ts``."""
    plan = Watched(uuid.uuid4().hex[:12], " > ".join(before) or None, tuple(stages), delay)
    _plans[plan.plan_id] = plan
    built.append(plan.plan_id)
    listen(df.sparkSession)

    def observe(frame: Any, point: int, records: bool) -> Any:
        from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

        counted = F.count(F.col("v")) if records else F.count(F.lit(1))
        aggs = [counted.alias("n")]
        if point == 0 and records:
            aggs.append(F.max(F.col("ts")).alias("ts"))
        return frame.observe(f"{_PREFIX}{plan.plan_id}_{point}", *aggs)

    return observe


def streams_built() -> int:
    """How many streaming DataFrames this process built (``fs-compat run``: whether a file ran
    a streaming job)."""
    return len(built)


_listening: dict[str, Any] = {}
_lock = threading.Lock()


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
        if spark is None or _session_key(spark) != key:
            continue
        try:
            await_lines(spark, timeout=5.0)
            spark.streams.removeListener(listener)
        except Exception:  # the session may be stopped already: nothing to remove
            pass
    _listening.clear()


atexit.register(_stop_listening)


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
    state: tuple[tuple[int, int], ...]  # per keyed step: (key groups with state, bytes)
    watermark: int | None
    duration_s: float

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
        top = _int(rows.get(0), "ts", None)
        key = (str(progress.id), plan.plan_id)
        if top is not None and top > _max_ts.get(key, top - 1):
            _max_ts[key] = top
        if plan.delay is not None and key in _max_ts:
            watermark = _max_ts[key] - plan.delay
        duration = (progress.batchDuration or 0) / 1000
        return cls(query, int(progress.batchId), records_in, tuple(steps), state, watermark, duration)

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
        '[q] batch 2: 5 in | Keyed 5 in, 4 out | state 3 key groups, 2.0 KiB | watermark 1500 | 0.25 s'
        """
        parts = [f"[{self.query}] batch {self.batch}: {self.records_in:,} in"]
        parts += [f"{label} {n_in:,} in, {n_out:,} out" for label, n_in, n_out in self.steps]
        if self.state:
            rows = sum(r for r, _ in self.state)
            size = sum(b for _, b in self.state)
            parts.append(f"state {rows:,} key groups, {_size(size)}")
        if self.watermark is not None:
            parts.append(f"watermark {self.watermark}")
        parts.append(f"{self.duration_s:.2f} s")
        return " | ".join(parts)

    def summary(self) -> JobSummary:
        """The micro-batch as a JobSummary (records of this batch; state now)."""
        steps = []
        offset = len(self.steps) - len(self.state)  # the keyed steps are the last ones
        for i, (label, n_in, n_out) in enumerate(self.steps):
            keys = size = None
            if 0 <= offset <= i:
                keys, size = self.state[i - offset]
            steps.append(StepSummary(label, i, "step", n_in, n_out, keys, size))
        return JobSummary(self.query, "spark streaming", self.duration_s, tuple(steps))


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
