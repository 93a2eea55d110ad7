"""The streaming jobs of ``test_crash_restart.py``, and a script that runs one of them in its own
process so that the test can kill it (SIGKILL) and start it again from its checkpoint.

Input: JSON files of numbered events ``{"key", "n", "ts"}`` (:func:`write_events`), read with
``maxFilesPerTrigger=1`` (one file per micro-batch). Two jobs over them:

- ``datastream``: a ``KeyedProcessFunction`` with a ``ValueState`` count and sum, a ``ListState``
  of the key's last three values and an event-time timer per record (``ts + TIMER_DELAY_MS``,
  firing when the ``withWatermark`` watermark passes it). Each record's output row carries the
  key's state after it; each timer's row the state when it fired.
- ``bytewax``: the same running state in a Bytewax ``stateful_map``.
- ``whole``: two keyed steps, a ``connect`` and a broadcast, every input read from the same
  files (:func:`whole_output`). Its output does not depend on where micro-batches start and end,
  so a restarted run must give the batch target's output exactly.

Both write a parquet sink (Spark's file sink commits each micro-batch once, in its
``_spark_metadata`` log). A :class:`Gate` lets a run block inside the job, on the record with a
given ``n``, after announcing it in a file, so that the test can kill the process in the middle
of a micro-batch.

Run as a script::

    python crash_job.py SOURCE WORKDIR [--jobs datastream,bytewax] [--block MODE:N ...]

it starts a ``local[2]`` session and runs the jobs as concurrent queries with
``trigger(availableNow=True)``, each with its checkpoint, sink and gate folder under
``WORKDIR/<job>/`` (:func:`job_paths`); ``--block MODE:N`` blocks job MODE at record ``n=N``. It
prints ``STARTED <pid>``, then, once the input is used up, the micro-batches each query ran
(``BATCH <job> <id> <durations>``) and ``DONE``.

When the suite runs over Spark Connect (``FS_COMPAT_TEST_CONNECT=1``), the script starts its own
Connect server on ``local[2]`` (``connect_server``), in its process group, and runs the jobs over
it: a kill then kills the driver, as it does a classic session's, not only its client.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.spark import DataFrameSource, to_dataframe
from fs_compat.common import (
    Configuration,
    Duration,
    TimestampAssigner,
    TypeInformation,
    Types,
    WatermarkStrategy,
)
from fs_compat.datastream import (
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
)
from fs_compat.datastream.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor

SCHEMA = "key STRING, n LONG, ts TIMESTAMP"
KEYS = ("ka", "kb", "kc", "kd", "ke")
N_FILES = 6
PER_FILE = 8
BASE_MS = 1_700_000_000_000
TIMER_DELAY_MS = 1500
LAST = 3  # values the ListState keeps
KEY_GROUPS = 16  # the DataStream job's max parallelism: fewer calls per micro-batch than 128

#: The child's session: what the library's embedded session uses, on 2 cores with few partitions.
CHILD_SETTINGS = {
    "spark.master": "local[2]",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
}

DATASTREAM_OUT = Types.ROW_NAMED(
    ["key", "n", "count", "sum", "last", "kind"],
    [Types.STRING(), Types.LONG(), Types.LONG(), Types.LONG(), Types.LIST(Types.LONG()), Types.STRING()],
)
BYTEWAX_OUT = Types.ROW_NAMED(
    ["key", "state"],
    [Types.STRING(), Types.TUPLE([Types.LONG(), Types.LONG(), Types.LONG(), Types.LIST(Types.LONG())])],
)


# Input. ----------------------------------------------------------------------------------------


def events(n_files: int = N_FILES, per_file: int = PER_FILE) -> list[list[tuple[str, int, int]]]:
    """``(key, n, ts_ms)`` per file: ``n`` counts up over all files, keys rotate irregularly and
    timestamps go up with ``n``, slightly out of order within a file."""
    files = []
    for f in range(n_files):
        rows = []
        for i in range(per_file):
            n = f * per_file + i
            rows.append((KEYS[(n * 7 + n // 3) % len(KEYS)], n, BASE_MS + n * 300 - (n % 4) * 200))
        files.append(rows)
    return files


def write_events(source: Path, files: Sequence[Sequence[tuple[str, int, int]]], first: int = 0) -> None:
    """One JSON file per element of ``files`` (named by index from ``first``), modification times
    one second apart so that the file source reads them in this order."""
    source.mkdir(parents=True, exist_ok=True)
    base = time.time() - 1000
    for index, rows in enumerate(files, start=first):
        path = source / f"events-{index:03d}.json"
        with path.open("w") as out:
            for key, n, ms in rows:
                stamp = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
                out.write(json.dumps({"key": key, "n": n, "ts": stamp.isoformat()}) + "\n")
        os.utime(path, (base + index, base + index))


def expected_elements(
    files: Iterable[Iterable[tuple[str, int, int]]],
) -> list[tuple[str, int, int, int, tuple[int, ...]]]:
    """``(key, n, count, sum, last values)`` after each event, in order, computed without Spark."""
    state: dict[str, tuple[int, int, tuple[int, ...]]] = {}
    out = []
    for rows in files:
        for key, n, _ in rows:
            count, total, last = state.get(key, (0, 0, ()))
            state[key] = count, total, last = (count + 1, total + n, (*last, n)[-LAST:])
            out.append((key, n, count, total, last))
    return out


def expected_final_state(
    files: Iterable[Iterable[tuple[str, int, int]]],
) -> dict[str, tuple[int, int, tuple[int, ...]]]:
    """Per key, (count, sum, last values) after every event, computed without Spark."""
    state: dict[str, tuple[int, int, tuple[int, ...]]] = {}
    for rows in files:
        for key, n, _ in rows:
            count, total, last = state.get(key, (0, 0, ()))
            state[key] = (count + 1, total + n, (*last, n)[-LAST:])
    return state


# The gate. -------------------------------------------------------------------------------------


class Gate:
    """Blocks the job on the record whose ``n`` is ``block_at``: writes ``<folder>/blocked``
    (the micro-batch id and the process id), then waits for ``<folder>/release``, which the test
    never writes: it kills the process instead. The wait ends with an error after
    ``deadline_s`` so that a forgotten worker does not outlive the test for long. With
    ``witness`` set, every record it sees leaves a file ``<folder>/seen-<n>``. With ``fail_at``
    set, the record ``n=fail_at`` raises while ``<folder>/armed`` exists, which it removes: the
    task fails once."""

    def __init__(
        self,
        block_at: int | None,
        folder: str | None,
        deadline_s: float = 600.0,
        witness: bool = False,
        fail_at: int | None = None,
    ) -> None:
        self.block_at = block_at
        self.folder = folder
        self.deadline_s = deadline_s
        self.witness = witness
        self.fail_at = fail_at

    def check(self, n: int) -> None:
        if self.folder is None:
            return
        if self.witness:
            with open(os.path.join(self.folder, f"seen-{n}"), "w"):
                pass
        if n == self.fail_at:
            try:
                os.remove(os.path.join(self.folder, "armed"))
            except FileNotFoundError:
                pass
            else:
                raise RuntimeError(f"planned failure at record n={n}")
        if n != self.block_at:
            return
        from fs_compat.spark._task import micro_batch_id

        tmp = os.path.join(self.folder, f"blocked.{os.getpid()}")
        with open(tmp, "w") as out:
            out.write(f"{micro_batch_id()} {os.getpid()}")
        os.replace(tmp, os.path.join(self.folder, "blocked"))
        release = os.path.join(self.folder, "release")
        deadline = time.monotonic() + self.deadline_s
        while not os.path.exists(release):
            if time.monotonic() > deadline:
                raise RuntimeError(f"gate at record n={n}: not released within {self.deadline_s} s")
            time.sleep(0.05)


# The DataStream job. ---------------------------------------------------------------------------


class RunningState(KeyedProcessFunction):
    """Per key: a count (``ValueState``, of ``count_type``), a sum (``ValueState``), the last three
    values (``ListState``); an event-time timer ``TIMER_DELAY_MS`` after each record reports
    the state when it fires."""

    def __init__(self, gate: Gate, count_type: str = "long") -> None:
        self.gate = gate
        self.count_type = count_type

    def open(self, runtime_context: RuntimeContext) -> None:
        count_info: TypeInformation[Any] = Types.STRING() if self.count_type == "string" else Types.LONG()
        self.count = runtime_context.get_state(ValueStateDescriptor("count", count_info))
        self.sum = runtime_context.get_state(ValueStateDescriptor("sum", Types.LONG()))
        self.last = runtime_context.get_list_state(ListStateDescriptor("last", Types.LONG()))

    def _state(self) -> tuple[int, int, list[int]]:
        return int(self.count.value() or 0), int(self.sum.value() or 0), list(self.last.get())

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterator[Any]:
        self.gate.check(value.n)
        count, total, last = self._state()
        count, total, last = count + 1, total + value.n, [*last, value.n][-LAST:]
        self.count.update(str(count) if self.count_type == "string" else count)
        self.sum.update(total)
        self.last.update(last)
        timestamp = ctx.timestamp()
        assert timestamp is not None
        ctx.timer_service().register_event_time_timer(timestamp + TIMER_DELAY_MS)
        yield (value.key, value.n, count, total, last, "element")

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterator[Any]:
        count, total, last = self._state()
        yield (ctx.get_current_key(), timestamp, count, total, last, "timer")


def read_events(spark: Any, source: Path) -> Any:
    """The events as a streaming DataFrame, one file per micro-batch."""
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))


def datastream_output(spark: Any, source: Path, gate: Gate, count_type: str = "long") -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    env.set_max_parallelism(KEY_GROUPS)
    df = read_events(spark, source).withWatermark("ts", "1 second")
    out = (
        env.from_dataframe(df)
        .key_by(lambda r: r.key)
        .process(RunningState(gate, count_type), output_type=DATASTREAM_OUT)
    )
    return out.to_dataframe()


# The Bytewax flow. -----------------------------------------------------------------------------


class Running:
    """The ``stateful_map`` mapper: (count, sum, last values) per key; blocks at the gate."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    def __call__(
        self, state: tuple[int, int, list[int]] | None, row: Any
    ) -> tuple[tuple[int, int, list[int]], tuple[int, int, int, list[int]]]:
        self.gate.check(row.n)
        count, total, last = state or (0, 0, [])
        new = (count + 1, total + row.n, [*last, row.n][-LAST:])
        return new, (row.n, *new)


def bytewax_output(spark: Any, source: Path, gate: Gate) -> Any:
    flow = Dataflow("running")
    s: Any = op.input("inp", flow, DataFrameSource(read_events(spark, source)))
    s = op.key_on("key", s, lambda row: row.key)
    s = op.stateful_map("running", s, Running(gate))
    return to_dataframe(s, BYTEWAX_OUT)


# The whole job: two keyed steps, a connect and a broadcast. ----------------------------------------

WHOLE_OUT = Types.ROW_NAMED(
    ["key", "at", "events", "marks", "limits", "kind"],
    [Types.STRING(), Types.LONG(), Types.LONG(), Types.LONG(), Types.LONG(), Types.STRING()],
)
#: The key of the last event of the whole job's input (``whole_end``): far ahead in event time, it
#: moves the watermark past every timer; it sets none itself.
END = "~end"
#: Broadcast: every event whose ``n`` is a multiple of 5, by ``n``: ``[key, ts]``.
LIMITS = MapStateDescriptor("limits", Types.LONG(), Types.LIST(Types.STRING()))


class EventsAndMarks(KeyedCoProcessFunction):
    """Input 1: events; input 2: marks (events whose ``n`` is a multiple of 3), both keyed by key.
    Each event's row carries the key's count of events so far; a timer ``TIMER_DELAY_MS`` after
    each event reports the key's events and marks at or before it."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    def open(self, runtime_context: RuntimeContext) -> None:
        self.events = runtime_context.get_list_state(ListStateDescriptor("events", Types.LONG()))
        self.marks = runtime_context.get_list_state(ListStateDescriptor("marks", Types.LONG()))

    def process_element1(self, value: Any, ctx: Any) -> Iterator[Any]:
        self.gate.check(value.n)
        self.events.add(ctx.timestamp())
        if value.key != END:
            ctx.timer_service().register_event_time_timer(ctx.timestamp() + TIMER_DELAY_MS)
        yield (value.key, value.n, len(list(self.events.get())), 0, 0, "element")

    def process_element2(self, value: Any, ctx: Any) -> Iterator[Any]:
        self.marks.add(ctx.timestamp())
        return iter(())

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[Any]:
        events = sum(1 for t in self.events.get() if t <= timestamp)
        marks = sum(1 for t in self.marks.get() if t <= timestamp)
        yield (ctx.get_current_key(), timestamp, events, marks, 0, "timer")


class WithLimits(KeyedBroadcastProcessFunction):
    """Input 1: the first step's rows, keyed by key; input 2: limits, broadcast. Element rows go
    on; each timer row sets a timer at its own time, which reports the row with the number of the
    key's limits at or before it."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.pending = runtime_context.get_map_state(
            MapStateDescriptor("pending", Types.LONG(), Types.LIST(Types.LONG()))
        )

    def process_element(self, value: Any, ctx: Any) -> Iterator[Any]:
        if value.kind == "element":
            yield value
            return
        self.pending.put(value.at, [value.events, value.marks])
        ctx.timer_service().register_event_time_timer(value.at)

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterator[Any]:
        ctx.get_broadcast_state(LIMITS).put(value[1], [value[0], str(value[2])])
        return iter(())

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[Any]:
        key = ctx.get_current_key()
        events, marks = self.pending.get(timestamp)
        self.pending.remove(timestamp)
        limits = ctx.get_broadcast_state(LIMITS)
        n = sum(1 for k, ts in limits.values() if k == key and int(ts) <= timestamp)
        yield (key, timestamp, events, marks, n, "timer")


class EventTime(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value.ts.timestamp() * 1000)


def whole_end(files: Sequence[Sequence[tuple[str, int, int]]]) -> list[tuple[str, int, int]]:
    """The file after ``files`` for the whole job: one event far ahead in event time (as a
    bounded input's end moves Flink's watermark to the end of time, so every timer fires)."""
    n = sum(len(f) for f in files)
    return [(END, n, BASE_MS + 10**9)]


def whole_job(env: StreamExecutionEnvironment, events_df: Any, gate: Gate) -> Any:
    """The whole job over ``events_df`` (streaming or not); its output stream."""
    env.set_max_parallelism(KEY_GROUPS)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1)).with_timestamp_assigner(
        EventTime()
    )
    events = env.from_dataframe(events_df).assign_timestamps_and_watermarks(strategy)
    marks = events.filter(lambda r: r.n % 3 == 0)
    limits = events.filter(lambda r: r.n % 5 == 0).map(
        lambda r: (r.key, r.n, int(r.ts.timestamp() * 1000)),
        output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()]),
    )
    first = (
        events.key_by(lambda r: r.key)
        .connect(marks.key_by(lambda r: r.key))
        .process(EventsAndMarks(gate), output_type=WHOLE_OUT)
    )
    return (
        first.key_by(lambda r: r.key)
        .connect(limits.broadcast(LIMITS))
        .process(WithLimits(), output_type=WHOLE_OUT)
    )


def whole_output(spark: Any, source: Path, gate: Gate) -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    return whole_job(env, read_events(spark, source), gate).to_dataframe()


def whole_batch_output(spark: Any, source: Path) -> Any:
    """The whole job on the batch target, over every file at once, in the files' order (one
    read per file, unioned: a read of the folder orders its files by size)."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    reads = [spark.read.schema(SCHEMA).json(str(path)) for path in sorted(source.iterdir())]
    batch = reads[0]
    for read in reads[1:]:
        batch = batch.union(read)
    return whole_job(env, batch, Gate(None, None)).to_dataframe()


def output(mode: str, spark: Any, source: Path, gate: Gate, count_type: str = "long") -> Any:
    """The streaming DataFrame of job ``mode`` (``datastream``, ``bytewax`` or ``whole``)."""
    if mode == "datastream":
        return datastream_output(spark, source, gate, count_type)
    if mode == "bytewax":
        return bytewax_output(spark, source, gate)
    if mode == "whole":
        return whole_output(spark, source, gate)
    raise ValueError(f"unknown mode {mode!r}")


def start(out: Any, checkpoint: Path, sink: Path) -> Any:
    """Start the query: parquet sink, checkpoint, every available file then stop."""
    return (
        out.writeStream.format("parquet")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start(str(sink))
    )


# The child process. ----------------------------------------------------------------------------


def job_paths(workdir: Path, mode: str) -> tuple[Path, Path, Path]:
    """Job ``mode``'s checkpoint, sink and gate folder under ``workdir``."""
    return workdir / mode / "checkpoint", workdir / mode / "sink", workdir / mode / "gate"


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("source", type=Path)
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--jobs", default="datastream,bytewax")
    parser.add_argument("--block", action="append", default=[], help="MODE:N, gate job MODE at n=N")
    args = parser.parse_args(argv)
    blocks = {mode: int(n) for mode, n in (b.split(":") for b in args.block)}
    from fs_compat.spark import spark_session

    server = None
    if os.environ.get("FS_COMPAT_TEST_CONNECT", "") not in ("", "0"):
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: connect_server
        from connect_server import ConnectServer

        conf = {k: v for k, v in CHILD_SETTINGS.items() if k != "spark.master"}
        server = ConnectServer(CHILD_SETTINGS["spark.master"], args.workdir / "connect", conf)
        server.start()
        os.environ["SPARK_REMOTE"] = server.url
    spark = spark_session(CHILD_SETTINGS)
    print(f"STARTED {os.getpid()}", flush=True)
    queries = {}
    for mode in args.jobs.split(","):
        checkpoint, sink, gate = job_paths(args.workdir, mode)
        gate.mkdir(parents=True, exist_ok=True)
        out = output(mode, spark, args.source, Gate(blocks.get(mode), str(gate)))
        queries[mode] = start(out, checkpoint, sink)
    failed = False
    for mode, query in queries.items():
        query.awaitTermination()
        if query.exception() is not None:
            print(f"FAILED {mode}: {query.exception()}", flush=True)
            failed = True
            continue
        for progress in query.recentProgress:
            print(f"BATCH {mode} {progress['batchId']} {json.dumps(progress['durationMs'])}", flush=True)
    spark.stop()
    if server is not None:
        server.stop()
    if failed:
        return 1
    print("DONE", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
