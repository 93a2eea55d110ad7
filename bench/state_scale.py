"""State at scale on Spark local[2]: 1,000,000 keys of ValueState, and one key with a 100,000-entry
MapState, measured in one SparkSession.

1. **1M keys** (``--keys``): a PyFlink ``MapFunction`` keeping a count per key in a
   ``ValueStateDescriptor("count", Types.LONG())``, keyed by ``user``. As a Structured Streaming
   query (parquet file source, one file per micro-batch, RocksDB state store with changelog
   checkpointing, a ``checkpointLocation``, parquet sink, ``trigger(availableNow=True)``) over
   three micro-batches: every key once (state grows to N keys), every key again, then 1,000
   events (a small micro-batch over the full state). Then (part ``batch``) the same job on a batch
   DataFrame of N events.
2. **One key, a 100k-entry MapState** (``--map-entries``): a ``KeyedProcessFunction`` with a
   ``MapStateDescriptor("fields", LONG, LONG)``; micro-batch 1 puts 100k distinct map keys under
   the one user key, micro-batch 2 iterates them all (count and sum), micro-batch 3 reads one.
   PASS when no Python worker exceeds 2 GiB (the process exits with 1 on FAIL).
3. **The floor** (part ``floor``): part 1's three micro-batches through a bare
   ``transformWithStateInPandas`` with fs-compat's state layout (a header row per key group,
   buckets of ~30 keys in a ``MapState``; one round trip to the state server per row read or
   written) and no user code: what the 1,000-event micro-batch costs at best on this machine;
   once with the key group as a Spark expression, once computed in a Python ``mapInArrow``
   pre-pass (fs-compat's key selectors are Python, so its design has that pass).

Figures printed, per part:

- wall time and events/s (all events / query wall time), and the duration of every micro-batch;
- peak RSS of Spark's Python processes: the driver polls ``/proc/<pid>/status`` (every 0.1 s)
  of every Python process below the Spark JVM (``pyspark.daemon`` and the workers it forks) and
  keeps the largest ``VmHWM`` (the kernel's own peak-RSS counter, so nothing between polls is
  missed while a worker lives); before each part every counter is reset
  (``/proc/<pid>/clear_refs`` = 5). Also the largest sum of ``VmRSS`` over all of them at one poll,
  and the JVM's own peak (RocksDB's native memory is there);
- state size: the logical size (our blobs: ``length(blob)`` of every state row, read back with
  Spark's ``statestore`` data source), RocksDB's ``memoryUsedBytes`` and ``numRowsTotal`` from
  ``lastProgress["stateOperators"][0]`` (one row per *key group*, not per key), and the bytes of
  the checkpoint's ``state/`` folder on disk (every retained version: changelogs, SST files,
  snapshots), each divided by the number of keys.

    .venv/bin/python bench/state_scale.py                   # 1,000,000 keys, ~5-8 min
    .venv/bin/python bench/state_scale.py --keys 50000      # a quick look, ~2 min
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

from fs_compat.common import Configuration, Types
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.datastream.functions import (
    KeyedProcessFunction,
    MapFunction,
    RuntimeContext,
    SinkFunction,
)
from fs_compat.datastream.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor

GIB = 1 << 30
SMALL_BATCH = 1_000  # events of the last micro-batch of part 1
LOOKUP = 12_345  # the map key micro-batch 3 of part 2 reads
PARTS = ("stream", "floor", "batch", "map", "growth")


# The user's jobs. -----------------------------------------------------------------------------


class CountPerKey(MapFunction[Any, tuple[int, int]]):
    """A count per key in a ``ValueState[int]``; emits ``(user, count)``."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def map(self, value: Any) -> tuple[int, int]:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        return value.user, n


class Fields(KeyedProcessFunction[str, Any, tuple[str, str, int, int | None]]):
    """A map per user: ``put`` stores ``field -> value``, ``scan`` emits the number of entries
    and the sum of the values, ``get`` emits one entry's value."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.fields = runtime_context.get_map_state(MapStateDescriptor("fields", Types.LONG(), Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterator[tuple[str, str, int, int | None]]:
        if value.op == "put":
            self.fields.put(value.field, value.value)
        elif value.op == "scan":
            n = total = 0
            for _field, v in self.fields.items():
                n += 1
                total += v
            yield value.user, "scan", n, total
        else:
            yield value.user, "get", 1, self.fields.get(value.field)


class Grow(KeyedProcessFunction[str, Any, Any]):
    """Adds every event's number to a ListState (``kind="list"``) or puts it into a MapState."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def open(self, runtime_context: RuntimeContext) -> None:
        if self.kind == "list":
            self.items = runtime_context.get_list_state(ListStateDescriptor("items", Types.LONG()))
        else:
            self.entries = runtime_context.get_map_state(
                MapStateDescriptor("entries", Types.LONG(), Types.LONG())
            )

    def process_element(self, value: Any, ctx: Any) -> Iterator[Any]:
        if self.kind == "list":
            self.items.add(value[1])
        else:
            self.entries.put(value[1], value[1])
        return iter(())


class Discard(SinkFunction[Any]):
    def invoke(self, value: Any) -> None:
        pass


# Memory of Spark's Python processes. ----------------------------------------------------------


def _status(pid: int) -> dict[str, int]:
    """``VmHWM`` / ``VmRSS`` of ``pid`` in bytes (empty when the process is gone)."""
    found = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmHWM:", "VmRSS:")):
                    name, value = line.split(":", 1)
                    found[name] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return found


def _processes() -> dict[int, tuple[int, str]]:
    """``pid -> (parent pid, command name)`` of every process."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        out[int(entry)] = (ppid, name)
    return out


class WorkerMemory:
    """Polls the peak RSS of the Spark JVM (a child of this process) and the Python processes
    below it: ``pyspark.daemon`` (the JVM's child) and the workers it forks."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.jvm = self._find_jvm()
        self.reset()

    @staticmethod
    def _find_jvm() -> int:
        me = os.getpid()
        for pid, (ppid, name) in _processes().items():
            if ppid == me and name == "java":
                return pid
        raise RuntimeError("no Spark JVM found among this process's children")

    def _python(self) -> dict[int, str]:
        """The Python processes below the JVM: ``pid -> "daemon" | "worker"``."""
        procs = _processes()
        below: dict[int, str] = {}
        for pid, (ppid, name) in procs.items():
            if not name.startswith("python"):
                continue
            if ppid == self.jvm:
                below[pid] = "daemon"
            elif procs.get(ppid, (0, ""))[0] == self.jvm:
                below[pid] = "worker"
        return below

    def reset(self) -> None:
        """Start a new measurement: every peak counter back to the process's current RSS."""
        with self._lock:
            for pid in [self.jvm, *self._python()]:
                try:
                    with open(f"/proc/{pid}/clear_refs", "w") as f:
                        f.write("5")
                except OSError:
                    pass
            self.peak: dict[int, tuple[str, int]] = {}
            self.peak_total = 0
            self.jvm_peak = 0
        self.poll()

    def poll(self) -> None:
        with self._lock:
            total = 0
            for pid, role in self._python().items():
                status = _status(pid)
                if not status:
                    continue
                total += status["VmRSS"]
                if status["VmHWM"] > self.peak.get(pid, ("", 0))[1]:
                    self.peak[pid] = (role, status["VmHWM"])
            self.peak_total = max(self.peak_total, total)
            self.jvm_peak = max(self.jvm_peak, _status(self.jvm).get("VmHWM", 0))

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.poll()

    def __enter__(self) -> WorkerMemory:
        self.reset()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join()
        self.poll()

    def worker_peak(self) -> int:
        return max((rss for role, rss in self.peak.values() if role == "worker"), default=0)

    def report(self) -> str:
        workers = sorted((rss for role, rss in self.peak.values() if role == "worker"), reverse=True)
        daemon = max((rss for role, rss in self.peak.values() if role == "daemon"), default=0)
        return (
            f"peak RSS, largest Python worker: {mib(self.worker_peak())} "
            f"({len(workers)} workers: {', '.join(mib(w) for w in workers[:6])}); "
            f"all Python processes together: {mib(self.peak_total)}; "
            f"pyspark.daemon: {mib(daemon)}; JVM: {mib(self.jvm_peak)}"
        )


def mib(n: float) -> str:
    return f"{n / (1 << 20):,.0f} MiB"


# Spark. ---------------------------------------------------------------------------------------


def session() -> Any:
    from fs_compat.spark import spark_session

    return spark_session(
        {
            "spark.master": "local[2]",
            "spark.app.name": "state-scale",
            "spark.sql.shuffle.partitions": "2",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.streaming.stateStore.providerClass": (
                "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
            ),
            "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
            "spark.sql.streaming.noDataMicroBatches.enabled": "false",
        }
    )


def environment() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    env.set_parallelism(2)
    return env


def run_query(df: Any, work: str, name: str) -> tuple[Any, float]:
    """Run ``df`` as a parquet-sink query until its input is consumed; the query and its wall time."""
    started = time.perf_counter()
    query = (
        df.writeStream.format("parquet")
        .option("checkpointLocation", os.path.join(work, f"ck-{name}"))
        .trigger(availableNow=True)
        .start(os.path.join(work, f"out-{name}"))
    )
    query.awaitTermination()
    wall = time.perf_counter() - started
    if query.exception() is not None:
        raise RuntimeError(f"query {name}: {query.exception()}")
    return query, wall


def batches(query: Any) -> list[dict[str, Any]]:
    return [p for p in query.recentProgress if p["numInputRows"]]


def print_batches(progress: list[dict[str, Any]]) -> None:
    for p in progress:
        ms = p["durationMs"]["triggerExecution"]
        op = (p.get("stateOperators") or [{}])[0]
        print(
            f"  micro-batch {p['batchId']}: {p['numInputRows']:>9,} events  "
            f"{ms:>7,} ms ({p['numInputRows'] * 1000 / ms:,.0f} ev/s)  "
            f"state rows updated {op.get('numRowsUpdated', '-')}, "
            f"commit {op.get('commitTimeMs', '-')} ms",
            flush=True,
        )
        parts = sorted(((v, k) for k, v in p["durationMs"].items() if k != "triggerExecution"), reverse=True)
        print("    durationMs: " + ", ".join(f"{k} {v:,}" for v, k in parts if v), flush=True)


def folder_bytes(path: str) -> tuple[dict[str, int], dict[int, int]]:
    """Bytes under ``path`` by kind of file (changelog, sst, zip, other), and the bytes of the
    changelog files of each state store version (version ``v`` is written by micro-batch
    ``v - 1``)."""
    sizes = {"changelog": 0, "sst": 0, "zip": 0, "other": 0}
    versions: dict[int, int] = {}
    for root, _dirs, files in os.walk(path):
        for name in files:
            ext = name.rsplit(".", 1)[-1]
            kind = ext if ext in sizes else "other"
            size = os.path.getsize(os.path.join(root, name))
            sizes[kind] += size
            if kind == "changelog" and name.split(".")[0].isdigit():
                version = int(name.split(".")[0])
                versions[version] = versions.get(version, 0) + size
    return sizes, versions


def blob_sizes(spark: Any, checkpoint: str) -> tuple[int, int, int]:
    """``(state rows, sum, max)`` of ``length(blob)`` over the state rows of the query's last
    committed version, read with Spark's ``statestore`` data source."""
    from pyspark.sql import functions as F  # noqa: N812

    # The key-group rows: the ValueState "kg" of the keyed step's transformWithState operator
    # (header: timers, watermarks), and the MapState "kb" of their keys' buckets.
    rows = spark.read.format("statestore").option("stateVarName", "kg").load(checkpoint)
    blob = F.length(F.col("value.blob"))
    n, total, largest = rows.agg(F.count("*"), F.sum(blob), F.max(blob)).collect()[0]
    buckets = spark.read.format("statestore").option("stateVarName", "kb").load(checkpoint)
    column = "user_map_value.blob" if "user_map_value" in buckets.columns else "value.blob"
    b_n, b_total, b_largest = buckets.agg(
        F.count("*"), F.sum(F.length(F.col(column))), F.max(F.length(F.col(column)))
    ).collect()[0]
    return int(n) + int(b_n), int(total or 0) + int(b_total or 0), max(int(largest or 0), int(b_largest or 0))


def group_cost(kind: str, size: int) -> str:
    """In-process, what every micro-batch does per key group holding state: restore it from its
    blob, then snapshot it (the blob the state store compares and keeps). ``kind="value"``: one
    key group of ``size`` keys with a ``ValueState[int]``; ``"map"``: one key with a MapState
    of ``size`` entries."""
    from fs_compat.runtime import KeyedStateBackend, StateKind, StateSpec

    long_codec = Types.LONG().codec()
    if kind == "value":
        spec = StateSpec("count", StateKind.VALUE, long_codec)
    else:
        spec = StateSpec("fields", StateKind.MAP, long_codec, key_codec=long_codec)
    backend = KeyedStateBackend()
    state = backend.get_state(spec)
    if kind == "value":
        found, k = 0, 0
        while found < size:  # keys of key group 0
            pk, kg = backend.key_encoder.locate(k)
            if kg == 0:
                backend.set_located_key(k, pk, kg)
                state.update(1)
                found += 1
            k += 1
    else:
        backend.set_current_key("u0")
        for i in range(size):
            state.put(i, i)
    group = backend.current_key_group
    blob = backend.snapshot_key_group(group)
    restored = KeyedStateBackend()
    restored.get_state(spec)
    started = time.perf_counter()
    restored.restore_key_group(group, blob)
    restore = time.perf_counter() - started
    started = time.perf_counter()
    restored.snapshot_key_group(group)
    snapshot = time.perf_counter() - started
    return (
        f"in-process, one key group of {size:,} {'keys' if kind == 'value' else 'map entries'} "
        f"({len(blob):,} B): restore {restore * 1000:,.0f} ms + snapshot {snapshot * 1000:,.0f} ms"
    )


def state_figures(spark: Any, query: Any, checkpoint: str, keys: int) -> None:
    op = query.lastProgress["stateOperators"][0]
    rows, logical, largest = blob_sizes(spark, checkpoint)
    disk, versions = folder_bytes(os.path.join(checkpoint, "state"))
    on_disk = sum(disk.values())
    print(
        f"  state rows (key-group headers and buckets): {rows} (numRowsTotal {op['numRowsTotal']}); "
        f"largest blob {largest:,} B",
        flush=True,
    )
    print(f"  bytes per key, logical (sum of our blobs / keys):      {logical / keys:8.1f}  ({logical:,} B)")
    print(
        f"  bytes per key, RocksDB memoryUsedBytes / keys:        "
        f"{op['memoryUsedBytes'] / keys:8.1f}  ({op['memoryUsedBytes']:,} B)"
    )
    print(
        f"  bytes per key, checkpoint state/ on disk / keys:      {on_disk / keys:8.1f}  "
        f"({on_disk:,} B: " + ", ".join(f"{k} {v:,}" for k, v in disk.items()) + ")",
        flush=True,
    )
    print(f"  {group_cost('value', max(1, keys // 128))}; x128 key groups per micro-batch", flush=True)
    print(
        "  changelog bytes written per micro-batch: "
        + ", ".join(f"batch {v - 1}: {n:,}" for v, n in sorted(versions.items())),
        flush=True,
    )


def key_batches(spark: Any, work: str, name: str, keys: int) -> tuple[Any, list[int]]:
    """Part 1's input for query ``name``: parquet files of N keys, every key again, then a small
    micro-batch; the streaming DataFrame over them (one file per micro-batch) and their sizes."""
    folder = os.path.join(work, f"in-{name}")
    sizes = [keys, keys, min(SMALL_BATCH, keys)]
    for b, n in enumerate(sizes):
        spark.range(0, n, numPartitions=1).selectExpr("id AS user").write.parquet(
            os.path.join(folder, f"batch={b:04d}")
        )
    source = (
        spark.readStream.schema("user LONG")
        .option("maxFilesPerTrigger", 1)
        .parquet(os.path.join(folder, "batch=*"))
    )
    return source, sizes


def check_counts(spark: Any, work: str, name: str, keys: int, sizes: list[int]) -> None:
    """Query ``name``'s output: each key's running count, one row per key and micro-batch."""
    got = spark.read.parquet(os.path.join(work, f"out-{name}")).groupBy("count").count().collect()
    counts = {int(r["count"]): int(r[1]) for r in got}
    want = {1: keys, 2: keys, 3: sizes[2]} if sizes[2] else {1: keys, 2: keys}
    if counts != want:
        raise AssertionError(f"query {name}'s output: rows per count {counts}, expected {want}")


def scale_stream(spark: Any, work: str, keys: int) -> None:
    """Part 1 as a streaming query: N keys, then every key again, then a small micro-batch."""
    source, sizes = key_batches(spark, work, "keys", keys)
    out_type = Types.ROW_NAMED(["user", "count"], [Types.LONG(), Types.LONG()])
    df = (
        environment()
        .from_dataframe(source)
        .key_by(lambda r: r.user)
        .map(CountPerKey(), output_type=out_type)
        .to_dataframe()
    )
    with WorkerMemory() as memory:
        query, wall = run_query(df, work, "keys")
    events = sum(sizes)
    print(f"streaming, {keys:,} keys, {events:,} events in {len(sizes)} micro-batches:")
    print_batches(batches(query))
    print(f"  wall {wall:.1f} s, {events / wall:,.0f} events/s", flush=True)
    print(f"  {memory.report()}", flush=True)
    state_figures(spark, query, os.path.join(work, "ck-keys"), keys)
    check_counts(spark, work, "keys", keys, sizes)


#: The floor's layout: key groups per query, and buckets per key group (fs-compat's depth 8 at
#: 1M keys: ``_depth_for``, 16-32 keys a bucket).
FLOOR_GROUPS = 128
FLOOR_BUCKETS = 256


def _floor_processor() -> Any:
    """Part ``floor``'s ``transformWithStateInPandas`` processor: per key group, a header
    (``ValueState``: the group's number of records so far) and its keys' counts in buckets
    (``MapState``: bucket -> pickled dict user -> count); each call reads the header and every
    bucket its records touch, one ``getValue`` each, and writes them back. No user function, no
    timers, no watermarks: the state server's round trips of fs-compat's layout and nothing else."""
    import pickle

    import pandas as pd
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StructField, StructType

    class Floor(StatefulProcessor):  # type: ignore[misc]
        def init(self, handle: Any) -> None:
            self.header = handle.getValueState("h", StructType([StructField("n", LongType())]))
            self.buckets = handle.getMapState(
                "b",
                StructType([StructField("b", IntegerType())]),
                StructType([StructField("blob", BinaryType())]),
            )

        def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:  # noqa: N802,N803
            users = [u for pdf in rows for u in pdf["user"].tolist()]
            old = self.header.get()
            self.header.update(((old[0] if old else 0) + len(users),))
            by_bucket: dict[int, list[int]] = {}
            for u in users:
                by_bucket.setdefault((u // FLOOR_GROUPS) % FLOOR_BUCKETS, []).append(u)
            out_users, out_counts = [], []
            for b, members in by_bucket.items():
                found = self.buckets.getValue((b,))
                counts = pickle.loads(found[0]) if found else {}
                for u in members:
                    counts[u] = counts.get(u, 0) + 1
                    out_users.append(u)
                    out_counts.append(counts[u])
                self.buckets.updateValue((b,), (pickle.dumps(counts),))
            yield pd.DataFrame({"user": out_users, "count": out_counts})

        def close(self) -> None:
            pass

    return Floor()


def _floor_key_groups(batches: Iterator[Any]) -> Iterator[Any]:
    """The ``pre`` floor's pre-pass: each record's key group in a Python ``mapInArrow``, as
    fs-compat's design needs (its key selector is Python), with no other work."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for batch in batches:
        users = batch.column("user")
        groups = pc.cast(pc.remainder(users, FLOOR_GROUPS), pa.int32())
        yield pa.RecordBatch.from_arrays([groups, users], names=["kg", "user"])


def scale_floor(spark: Any, work: str, keys: int, pre: bool) -> None:
    """Part ``floor``: part 1's micro-batches through a bare ``transformWithStateInPandas`` with
    fs-compat's state layout (``_floor_processor``): the bound of what the 1,000-event
    micro-batch can cost on this machine with one state-server round trip per row touched. The
    key group is a Spark expression, or with ``pre`` computed in a Python pre-pass
    (``_floor_key_groups``), as fs-compat's design must."""
    name = "floor-pre" if pre else "floor"
    source, sizes = key_batches(spark, work, name, keys)
    grouped = (
        source.mapInArrow(_floor_key_groups, "kg INT, user LONG")
        if pre
        else source.selectExpr(f"CAST(user % {FLOOR_GROUPS} AS INT) AS kg", "user")
    )
    df = grouped.groupBy("kg").transformWithStateInPandas(
        _floor_processor(), "user LONG, count LONG", "Append", "None"
    )
    query, wall = run_query(df, work, name)
    how = "a Python pre-pass" if pre else "an expression"
    print(f"floor (bare transformWithStateInPandas, fs-compat's layout; key group by {how}), {keys:,} keys:")
    print_batches(batches(query))
    print(f"  wall {wall:.1f} s", flush=True)
    check_counts(spark, work, name, keys, sizes)


def scale_batch(spark: Any, work: str, keys: int) -> None:
    """Part 1 as a batch job: N events, one per key."""
    out_type = Types.ROW_NAMED(["user", "count"], [Types.LONG(), Types.LONG()])
    df = (
        environment()
        .from_dataframe(spark.range(0, keys, 1, 2).selectExpr("id AS user"))
        .key_by(lambda r: r.user)
        .map(CountPerKey(), output_type=out_type)
        .to_dataframe()
    )
    path = os.path.join(work, "out-batch")
    with WorkerMemory() as memory:
        started = time.perf_counter()
        df.write.parquet(path)
        wall = time.perf_counter() - started
    print(f"batch, {keys:,} keys, {keys:,} events:")
    print(f"  wall {wall:.1f} s, {keys / wall:,.0f} events/s", flush=True)
    print(f"  {memory.report()}", flush=True)
    out = spark.read.parquet(path).agg({"count": "max", "*": "count"}).collect()[0]
    if (out["count(1)"], out["max(count)"]) != (keys, 1):
        raise AssertionError(f"batch output: {out}")


def big_map(spark: Any, work: str, entries: int) -> bool:
    """Part 2: one key, a MapState of ``entries`` entries. True when the workers stayed <= 2 GiB."""
    folder = os.path.join(work, "in-map")
    ops = [
        spark.range(0, entries, numPartitions=1).selectExpr(
            "'u0' AS user", "'put' AS op", "id AS field", "id AS value"
        ),
        spark.range(0, 1, numPartitions=1).selectExpr("'u0' AS user", "'scan' AS op", "0L", "0L"),
        spark.range(0, 1, numPartitions=1).selectExpr(
            "'u0' AS user", "'get' AS op", f"{LOOKUP % entries}L", "0L"
        ),
    ]
    for b, df in enumerate(ops):
        df.toDF("user", "op", "field", "value").write.parquet(os.path.join(folder, f"batch={b:04d}"))
    source = (
        spark.readStream.schema("user STRING, op STRING, field LONG, value LONG")
        .option("maxFilesPerTrigger", 1)
        .parquet(os.path.join(folder, "batch=*"))
    )
    out_type = Types.ROW_NAMED(
        ["user", "op", "n", "total"], [Types.STRING(), Types.STRING(), Types.LONG(), Types.LONG()]
    )
    df = (
        environment()
        .from_dataframe(source)
        .key_by(lambda r: r.user)
        .process(Fields(), output_type=out_type)
        .to_dataframe()
    )
    with WorkerMemory() as memory:
        query, wall = run_query(df, work, "map")
    print(f"streaming, one key with a MapState of {entries:,} entries (put all; scan all; get one):")
    print_batches(batches(query))
    print(f"  wall {wall:.1f} s", flush=True)
    print(f"  {memory.report()}", flush=True)
    rows, _logical, largest = blob_sizes(spark, os.path.join(work, "ck-map"))
    print(
        f"  state: {rows} state row(s); the key group's blob {largest:,} B "
        f"({largest / entries:.1f} B per map entry)",
        flush=True,
    )
    print(f"  {group_cost('map', entries)}; in every micro-batch", flush=True)
    got = {r["op"]: (r["n"], r["total"]) for r in spark.read.parquet(os.path.join(work, "out-map")).collect()}
    want = {"scan": (entries, entries * (entries - 1) // 2), "get": (1, LOOKUP % entries)}
    if got != want:
        raise AssertionError(f"map output {got}, expected {want}")
    ok = memory.worker_peak() <= 2 * GIB
    print(
        f"  {'PASS' if ok else 'FAIL'}: largest Python worker peak {mib(memory.worker_peak())} "
        f"{'<=' if ok else '>'} 2 GiB",
        flush=True,
    )
    return ok


def growth(entries: int) -> None:
    """Part 3, in-process (``execution.target=local``): ``entries`` ListState adds and MapState
    puts under one key, and half as many: a linear cost doubles, a quadratic one quadruples."""
    print(f"in-process, one key, {entries // 2:,} then {entries:,} adds / puts:")
    for kind in ("list", "map"):
        took = []
        for n in (entries // 2, entries):
            env = StreamExecutionEnvironment.get_execution_environment()
            env.configure(Configuration().set_string("execution.target", "local"))
            env.set_parallelism(1)
            env.from_collection([("u0", i) for i in range(n)]).key_by(lambda e: e[0]).process(
                Grow(kind)
            ).add_sink(Discard())
            started = time.perf_counter()
            env.execute(f"grow-{kind}")
            took.append(time.perf_counter() - started)
        print(
            f"  {kind + 'State':9s} {took[0]:6.2f} s, {took[1]:6.2f} s: x{took[1] / took[0]:.1f} "
            f"for twice the entries ({took[1] / entries * 1e6:.1f} us per entry at {entries:,})",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keys", type=int, default=1_000_000, help="distinct keys (default 1,000,000)")
    parser.add_argument(
        "--map-entries", type=int, default=100_000, help="MapState entries under one key (default 100,000)"
    )
    parser.add_argument(
        "--only",
        default=",".join(PARTS),
        help=f"comma-separated parts to run, of {','.join(PARTS)} (default: all)",
    )
    args = parser.parse_args()
    parts = set(args.only.split(","))
    if not parts <= set(PARTS):
        parser.error(f"--only: unknown part(s) {sorted(parts - set(PARTS))}; choose from {PARTS}")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import pyspark

    spark = session()
    print(
        f"state scale: {datetime.date.today()}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, Python "
        f"{platform.python_version()}, Spark {pyspark.__version__} {spark.sparkContext.master}",
        flush=True,
    )
    work = tempfile.mkdtemp(prefix="state-scale-")
    started = time.perf_counter()
    try:
        ok = True
        if "stream" in parts:
            scale_stream(spark, work, args.keys)
        if "floor" in parts:
            scale_floor(spark, work, args.keys, pre=False)
            scale_floor(spark, work, args.keys, pre=True)
        if "batch" in parts:
            scale_batch(spark, work, args.keys)
        if "map" in parts:
            ok = big_map(spark, work, args.map_entries)
        if "growth" in parts:
            growth(args.map_entries)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()
    print(
        f"total {time.perf_counter() - started:.0f} s; load average now {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
