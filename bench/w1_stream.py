"""W1 as a streaming query: keyed running count+sum, key = i % 10,000, 200,000 events per
micro-batch (one parquet file each), RocksDB state store, checkpointed, parquet sink, local[2].

Queries over the same files, in the same run, one after the other:

- ``fs-compat``: a PyFlink-style ``MapFunction`` with a ``ValueStateDescriptor`` (the job a user
  ports), ``env.from_dataframe(stream) ... .to_dataframe().writeStream`` (128 key groups, the
  default max parallelism; ``--fs-key-groups N`` adds a run with N);
- ``fs-compat, two keyed steps`` (``fs-chained``): the same job with a second keyed step (per key,
  the highest count; the rows pass on unchanged) in the same query;
- ``native``: Spark's own ``groupBy(key).transformWithState`` with a ``ValueState`` per key
  (Row API), emitting the same running rows;
- ``engine floor`` (a bound, like ``w1.py``'s API-shape floor): the least any implementation of
  fs-compat's streaming design can cost. ``groupBy(key group).applyInPandasWithState`` with one
  state row per key group holding a plain pickled dict ``{key: (count, sum)}``, a tight Python
  loop over the group's rows, emitting ``(key, count, sum)`` to the same kind of parquet sink
  with a checkpoint. Variants (``--floors``), G = 128 key groups unless said:
  ``expr`` (the key group is the Spark expression ``pmod(hash(key), G)``, no Python pre-pass);
  ``pre`` (a trivial ``mapInArrow`` pre-pass computes ``crc32(key utf-8) % G``, as fs-compat's
  design needs); ``chunk`` (that pre-pass sends each Arrow batch's records of a key group as one
  pickled row: ~128 shuffled rows per 10,000 records); ``expr8`` / ``expr2`` (``expr`` with 8 and
  2 key groups: how the per-group overhead scales); ``stateless`` (issue 17's *stateless floor*: no
  state store at all, ``repartition(2, "key").mapInArrow(f)`` over an in-memory dict per worker
  process, neither persisted nor restartable; ``fs-compat / stateless floor`` is printed, target
  <= 2.5x); ``tws`` (fs-compat's design without fs-compat: the ``chunk`` pre-pass, then
  ``transformWithStateInPandas`` over 128 key groups, one ``ValueState`` per group holding the
  pickled dict, no user functions: what a target on the stateless floor is bounded by; grouped,
  as fs-compat groups, by each key group's ``grouping_key``, which spreads the groups evenly
  over the state partitions; by the key group's number, 74 of 128 ran in one of the two);
  ``tws-shard`` (``tws`` with one group per subtask, 2, each key group's dict in a ``MapState``
  entry: read in one scan, written per key group touched; what fewer, larger groups would save).

Before any query is timed, every query runs ``--warmup`` micro-batches (3) over other files,
untimed: the JVM's JIT takes ~1M events to warm up (a query run first had micro-batches ~1.5x
longer for its first ~5 than later, and ran later it did not), and without this the first query in
the list (fs-compat) paid it for the floors after it. It does not end there: the JIT keeps
compiling the driver's planning code for tens of micro-batches more (``--cpu``), more for plans of
more operators, so a query's place in the list still moves its figures.

``--rounds N`` runs the list N times, every other round in reverse order, and reports each
query's median over the rounds (and the ratio of those medians): no query always runs first.

``--cpu`` adds, per query, the CPU each micro-batch used (the first one's included): the JVM's by
thread kind (HotSpot's JIT compiler threads, Spark's task threads, GC, the rest: the driver's
planning, the state store's and the shuffle's threads), the Python workers', and how many compilations
Spark's code generation ran (on Linux; it reads ``/proc``). On a machine of two cores this
is what the queries compete for.

Every query's output is checked (row count, the last count of key "0"). Prints, per query, ms per
micro-batch (median over the batches after the first, which warms up workers), the medians of
the parts of Spark's ``durationMs`` (``addBatch`` is the job itself), and native's ratio to each.
Target: fs-compat <= 1,000 ms per micro-batch on local[2] and >= 4x native.

    .venv/bin/python bench/w1_stream.py                 # 6 micro-batches, ~2-4 min
    .venv/bin/python bench/w1_stream.py --batches 3     # a quick look
    .venv/bin/python bench/w1_stream.py --only floor --floors pre,expr
    .venv/bin/python bench/w1_stream.py --only fs-compat,floor --floors stateless,tws --cpu
    .venv/bin/python bench/w1_stream.py --only fs-compat,floor --floors stateless,tws --rounds 3
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

KEYS = 10_000
PER_BATCH = 200_000


def session() -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("w1-stream")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config(
            "spark.sql.streaming.stateStore.providerClass",
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
        )
        .config("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
        .config("spark.sql.streaming.noDataMicroBatches.enabled", "false")
        .config("spark.python.unix.domain.socket.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def write_inputs(spark: Any, folder: str, batches: int) -> None:
    for b in range(batches):
        start = b * PER_BATCH
        df = spark.range(start, start + PER_BATCH, numPartitions=1).selectExpr(
            f"CAST(id % {KEYS} AS STRING) AS key", "id AS value"
        )
        df.write.parquet(os.path.join(folder, f"batch={b:04d}"))


def stream(spark: Any, folder: str) -> Any:
    return (
        spark.readStream.schema("key STRING, value LONG")
        .option("maxFilesPerTrigger", 1)
        .parquet(os.path.join(folder, "batch=*"))
    )


def fs_compat_frame(spark: Any, folder: str, key_groups: int | None = None, chained: bool = False) -> Any:
    """The fs-compat job's streaming DataFrame (``to_dataframe()``), not started."""
    from fs_compat.common import Configuration, Types
    from fs_compat.datastream import MapFunction, StreamExecutionEnvironment
    from fs_compat.datastream.state import ValueStateDescriptor

    class RunningCountSum(MapFunction):  # type: ignore[type-arg]
        def open(self, runtime_context: Any) -> None:
            self.state = runtime_context.get_state(
                ValueStateDescriptor("count_sum", Types.TUPLE([Types.LONG(), Types.LONG()]))
            )

        def map(self, value: Any) -> Any:
            count, total = self.state.value() or (0, 0)
            count, total = count + 1, total + value.value
            self.state.update((count, total))
            return (value.key, count, total)

    class Highest(MapFunction):  # type: ignore[type-arg]
        """The second keyed step of ``chained``: keeps each key's highest count, passes the row on."""

        def open(self, runtime_context: Any) -> None:
            self.state = runtime_context.get_state(ValueStateDescriptor("highest", Types.LONG()))

        def map(self, value: Any) -> Any:
            self.state.update(max(self.state.value() or 0, value[1]))
            return value

    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    env.set_parallelism(1)  # as every earlier run measured it (the default is now the cores)
    if key_groups is not None:  # the number of key groups (state rows) is the max parallelism
        env.set_max_parallelism(key_groups)
    out = Types.ROW_NAMED(["key", "count", "sum"], [Types.STRING(), Types.LONG(), Types.LONG()])
    ds = (
        env.from_dataframe(stream(spark, folder))
        .key_by(lambda r: r.key)
        .map(RunningCountSum(), output_type=out)
    )
    if chained:  # a second keyed step in the same query
        ds = ds.key_by(lambda r: r[0]).map(Highest(), output_type=out)
    return ds.to_dataframe()


def fs_compat_query(
    spark: Any, folder: str, work: str, key_groups: int | None = None, chained: bool = False
) -> Any:
    suffix = ("" if key_groups is None else "-kg") + ("-chained" if chained else "")
    return (
        fs_compat_frame(spark, folder, key_groups, chained)
        .writeStream.format("parquet")
        .option("checkpointLocation", os.path.join(work, "ck-fs" + suffix))
        .trigger(availableNow=True)
        .start(os.path.join(work, "out-fs" + suffix))
    )


def native_query(spark: Any, folder: str, work: str) -> Any:
    from pyspark.sql import Row
    from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    state_schema = StructType([StructField("count", LongType()), StructField("sum", LongType())])
    out_schema = StructType(
        [StructField("key", StringType()), StructField("count", LongType()), StructField("sum", LongType())]
    )

    class RunningCountSum(StatefulProcessor):
        def init(self, handle: StatefulProcessorHandle) -> None:
            self.state = handle.getValueState("count_sum", state_schema)

        def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:  # noqa: N802, N803
            count, total = self.state.get() if self.state.exists() else (0, 0)
            out = []
            for row in rows:
                count, total = count + 1, total + row.value
                out.append(Row(key=key[0], count=count, sum=total))
            self.state.update((count, total))
            return iter(out)

        def close(self) -> None:
            pass

    df = (
        stream(spark, folder)
        .groupBy("key")
        .transformWithState(RunningCountSum(), out_schema, "Append", "None")
    )
    return (
        df.writeStream.format("parquet")
        .option("checkpointLocation", os.path.join(work, "ck-native"))
        .trigger(availableNow=True)
        .start(os.path.join(work, "out-native"))
    )


#: The engine-floor variants: how the key group is computed, and how many key groups there are.
FLOORS = {
    "expr": ("expr", 128),
    "pre": ("pre", 128),
    "chunk": ("chunk", 128),
    "expr8": ("expr", 8),
    "expr2": ("expr", 2),
    "stateless": ("stateless", 2),
    "tws": ("tws", 128),
    "tws-shard": ("tws-shard", 128),
}


def _stateless_count_sum(batches: Iterator[Any]) -> Iterator[Any]:
    """The stateless floor: W1's running count and sum over an in-memory dict, per Arrow batch.

    The dict lives in the Python worker process (kept in ``sys.modules`` so that it outlives the
    task; Spark reuses workers), is neither persisted nor restartable, and is per *worker*: Spark
    may hand a shuffle partition to the other worker next micro-batch, so its counts are not W1's
    (only its row count is checked). What Structured Streaming itself costs per micro-batch."""
    import sys
    import types

    import pyarrow as pa

    holder = sys.modules.setdefault("_w1_stateless_floor", types.ModuleType("_w1_stateless_floor"))
    if not hasattr(holder, "table"):
        holder.table = {}
    table: dict[str, tuple[int, int]] = holder.table
    get = table.get
    for batch in batches:
        keys = batch.column(0).to_pylist()
        counts: list[int] = []
        sums: list[int] = []
        for k, v in zip(keys, batch.column(1).to_pylist(), strict=True):
            count, total = get(k, (0, 0))
            count, total = count + 1, total + v
            table[k] = (count, total)
            counts.append(count)
            sums.append(total)
        yield pa.RecordBatch.from_arrays(
            [batch.column(0), pa.array(counts, pa.int64()), pa.array(sums, pa.int64())],
            ["key", "count", "sum"],
        )


def _crc_key_groups(groups: int) -> Any:
    """The floor's Python pre-pass: ``kg = crc32(key utf-8) % groups`` appended to each batch."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import zlib

        import pyarrow as pa

        crc = zlib.crc32
        for batch in batches:
            keys = batch.column(0).to_pylist()
            kgs = pa.array([crc(k.encode()) % groups for k in keys], pa.int32())
            yield pa.RecordBatch.from_arrays([*batch.columns, kgs], ["key", "value", "kg"])

    return run


def _crc_chunks(groups: int) -> Any:
    """The ``chunk`` floor's pre-pass: per Arrow batch, one row per key group holding its records
    as one pickled ``(keys, values)`` pair of lists, so ~128 rows per 10,000 records cross the
    shuffle instead of 10,000."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pickle
        import zlib

        import pyarrow as pa

        crc = zlib.crc32
        for batch in batches:
            chunks: dict[int, tuple[list[str], list[int]]] = {}
            for k, v in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True):
                kg = crc(k.encode()) % groups
                chunk = chunks.get(kg)
                if chunk is None:
                    chunk = chunks[kg] = ([], [])
                chunk[0].append(k)
                chunk[1].append(v)
            blobs = [pickle.dumps(c, protocol=5) for c in chunks.values()]
            yield pa.RecordBatch.from_arrays(
                [pa.array(list(chunks), pa.int32()), pa.array(blobs, pa.binary())], ["kg", "chunk"]
            )

    return run


def _floor_count_sum(key: Any, pdfs: Iterator[Any], state: Any) -> Iterator[Any]:
    """One key group: a pickled dict ``{key: (count, sum)}`` in one state row, a tight loop."""
    import pickle

    table = pickle.loads(state.get[0]) if state.exists else {}
    columns: list[tuple[list[str], list[int]]] = []  # (keys, values)
    for pdf in pdfs:
        if "chunk" in pdf:
            columns += [pickle.loads(blob) for blob in pdf["chunk"].tolist()]
        else:
            columns.append((pdf["key"].tolist(), pdf["value"].tolist()))
    frame = _count_sum_frame(table, columns)
    state.update((pickle.dumps(table, protocol=5),))
    yield frame


def _count_sum_frame(table: dict[str, tuple[int, int]], columns: list[tuple[list[str], list[int]]]) -> Any:
    """The engine floors' tight loop: W1's running rows of ``columns`` (keys, values), as a
    pandas frame, the counts and sums kept in ``table``."""
    import pandas as pd

    get = table.get
    keys: list[str] = []
    counts: list[int] = []
    sums: list[int] = []
    for column_keys, values in columns:
        for k, v in zip(column_keys, values, strict=True):
            count, total = get(k, (0, 0))
            count, total = count + 1, total + v
            table[k] = (count, total)
            keys.append(k)
            counts.append(count)
            sums.append(total)
    return pd.DataFrame({"key": keys, "count": counts, "sum": sums})


def _tws_floor_processor() -> Any:
    """The ``tws`` floor's processor: fs-compat's streaming design without fs-compat, a
    ``transformWithStateInPandas`` over the chunk pre-pass's key groups with one ``ValueState`` per
    group holding a pickled dict ``{key: (count, sum)}`` (one read and one write, each a round trip
    to Spark's state server), a tight loop, no user functions, no timers."""
    from pyspark.sql.streaming import StatefulProcessor
    from pyspark.sql.types import BinaryType, StructField, StructType

    class CountSumByGroup(StatefulProcessor):  # type: ignore[misc]
        def init(self, handle: Any) -> None:
            self.blob = handle.getValueState("blob", StructType([StructField("blob", BinaryType())]))

        def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:  # noqa: N802,N803
            import pickle

            held = self.blob.get()
            table = pickle.loads(held[0]) if held is not None else {}
            frame = _count_sum_frame(table, [pickle.loads(b) for pdf in rows for b in pdf["chunk"].tolist()])
            self.blob.update((pickle.dumps(table, protocol=5),))
            yield frame

        def close(self) -> None:
            pass

    return CountSumByGroup()


def _shard_chunks(groups: int, shards: int) -> Any:
    """The ``tws-shard`` floor's pre-pass: ``_crc_chunks``' rows with a ``shard`` column, the
    key group's subtask of ``shards`` (Flink's ``kg * shards // groups``) as a value Spark's hash
    partitioning sends to that subtask's partition (``partition_keys``)."""
    chunked = _crc_chunks(groups)

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        from fs_compat.spark._routing import partition_keys

        values = partition_keys(shards)
        for batch in chunked(batches):
            kgs = batch.column(0).to_pylist()
            shard = pa.array([values[kg * shards // groups] for kg in kgs], pa.int32())
            yield pa.RecordBatch.from_arrays([shard, *batch.columns], ["shard", "kg", "chunk"])

    return run


def _tws_shard_floor_processor() -> Any:
    """The ``tws-shard`` floor's processor: the ``tws`` floor with one group per subtask (2)
    instead of per key group: each key group's pickled dict in a ``MapState`` keyed by key group,
    read in one scan per call (``iterator``) and written per key group touched. What fewer,
    larger ``transformWithStateInPandas`` groups would save fs-compat's design (the per-group
    round trips to the state server and PySpark's per-group frames)."""
    from pyspark.sql.streaming import StatefulProcessor
    from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType

    class CountSumByShard(StatefulProcessor):  # type: ignore[misc]
        def init(self, handle: Any) -> None:
            self.tables = handle.getMapState(
                "tables",
                StructType([StructField("kg", IntegerType())]),
                StructType([StructField("blob", BinaryType())]),
            )

        def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:  # noqa: N802,N803
            import pickle

            import pandas as pd

            tables = {int(kg[0]): pickle.loads(blob[0]) for kg, blob in self.tables.iterator()}
            frames = []
            touched = set()
            for pdf in rows:
                for kg, blob in zip(pdf["kg"].tolist(), pdf["chunk"].tolist(), strict=True):
                    table = tables.setdefault(kg, {})
                    touched.add(kg)
                    frames.append(_count_sum_frame(table, [pickle.loads(blob)]))
            for kg in touched:
                self.tables.updateValue((kg,), (pickle.dumps(tables[kg], protocol=5),))
            yield pd.concat(frames) if frames else _count_sum_frame({}, [])

        def close(self) -> None:
            pass

    return CountSumByShard()


def floor_frame(spark: Any, folder: str, variant: str) -> Any:
    """The engine floor ``variant``'s streaming DataFrame, not started."""
    from pyspark.sql import functions as sf
    from pyspark.sql.types import BinaryType, LongType, StringType, StructField, StructType

    how, groups = FLOORS[variant]
    source = stream(spark, folder)
    out_schema = StructType(
        [StructField("key", StringType()), StructField("count", LongType()), StructField("sum", LongType())]
    )
    if how == "stateless":
        df = source.repartition(groups, "key").mapInArrow(_stateless_count_sum, out_schema)
    elif how == "tws":
        from fs_compat.spark._stream import _grouping_keys  # fs-compat's grouping, as it plans it

        chunks = source.mapInArrow(_crc_chunks(groups), "kg INT, chunk BINARY")
        chunks = chunks.withColumn("kg", _grouping_keys(groups))
        df = chunks.groupBy("kg").transformWithStateInPandas(
            _tws_floor_processor(), outputStructType=out_schema, outputMode="Append", timeMode="None"
        )
    elif how == "tws-shard":
        chunks = source.mapInArrow(_shard_chunks(groups, 2), "shard INT, kg INT, chunk BINARY")
        df = chunks.groupBy("shard").transformWithStateInPandas(
            _tws_shard_floor_processor(), outputStructType=out_schema, outputMode="Append", timeMode="None"
        )
    else:
        if how == "expr":
            keyed = source.withColumn("kg", sf.expr(f"pmod(hash(key), {groups})"))
        elif how == "pre":
            keyed = source.mapInArrow(_crc_key_groups(groups), "key STRING, value LONG, kg INT")
        else:
            keyed = source.mapInArrow(_crc_chunks(groups), "kg INT, chunk BINARY")
        df = keyed.groupBy("kg").applyInPandasWithState(
            _floor_count_sum,
            outputStructType=out_schema,
            stateStructType=StructType([StructField("blob", BinaryType())]),
            outputMode="append",
            timeoutConf="NoTimeout",
        )
    return df


def floor_query(spark: Any, folder: str, work: str, variant: str) -> Any:
    return (
        floor_frame(spark, folder, variant)
        .writeStream.format("parquet")
        .option("checkpointLocation", os.path.join(work, f"ck-floor-{variant}"))
        .trigger(availableNow=True)
        .start(os.path.join(work, f"out-floor-{variant}"))
    )


def per_batch_ms(query: Any) -> tuple[list[int], dict[str, float]]:
    """The query's ms per micro-batch with input, and the median over the batches after the first
    of each part of Spark's ``durationMs`` other than ``triggerExecution`` (``addBatch`` is the
    job itself: source read, Python passes, shuffle, state store, sink)."""
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))
    progress = [p["durationMs"] for p in query.recentProgress if p["numInputRows"]]
    steady = progress[1:] or progress
    parts = {
        part: statistics.median(int(d.get(part, 0)) for d in steady)
        for part in steady[0]
        if part != "triggerExecution"
    }
    return [int(d["triggerExecution"]) for d in progress], parts


#: ``--cpu``: a JVM thread's part by its name's start (the rest is "other").
_THREAD_PARTS = (
    ("C1 CompilerThre", "jit"),
    ("C2 CompilerThre", "jit"),
    ("Executor task", "tasks"),
    ("GC ", "gc"),
)


def _proc_cpu_seconds(stat_path: str) -> tuple[str, float]:
    """``(name, user + system CPU seconds)`` of the process or thread whose ``/proc/.../stat``
    is ``stat_path`` (Linux)."""
    with open(stat_path) as f:
        data = f.read()
    fields = data[data.rindex(")") + 2 :].split()  # after the name, which may hold spaces
    return data[data.index("(") + 1 : data.rindex(")")], (int(fields[11]) + int(fields[12])) / os.sysconf(
        "SC_CLK_TCK"
    )


def cpu_seconds() -> dict[str, float]:
    """CPU seconds so far of this machine's JVMs, by thread kind (``jit``: HotSpot's compiler
    threads, ``tasks``: Spark's task threads, ``gc``, ``other``), and of its PySpark Python
    workers (``python``: every ``pyspark.daemon`` process and its forked workers), for ``--cpu``.
    Linux only (``/proc``); what ended in between is not counted."""
    import glob

    parts = dict.fromkeys(("jit", "tasks", "gc", "other", "python"), 0.0)
    for proc in glob.glob("/proc/[0-9]*"):
        try:
            with open(f"{proc}/cmdline", "rb") as f:
                command = f.read()
            if b"pyspark.daemon" in command or b"pyspark.worker" in command:
                parts["python"] += _proc_cpu_seconds(f"{proc}/stat")[1]
            elif command.split(b"\0", 1)[0].endswith(b"java"):
                for task in glob.glob(f"{proc}/task/*/stat"):
                    name, seconds = _proc_cpu_seconds(task)
                    kind = next((k for start, k in _THREAD_PARTS if name.startswith(start)), "other")
                    parts[kind] += seconds
        except (OSError, ValueError):  # gone meanwhile
            continue
    return parts


def codegen_compilations(spark: Any) -> int:
    """How many compilations Spark's code generation has run (Janino: one per generated source,
    which may hold several classes) in this JVM so far."""
    return int(spark._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME().getCount())


def run_query(spark: Any, args: Any, name: str, out_folder: str, build: Any, folder: str, work: str) -> float:
    """Run one query over the input ``folder`` (its checkpoint and output under ``work``), check
    its output, print its figures; its median ms per micro-batch after the first."""
    started = time.perf_counter()
    cpu_before = cpu_seconds() if args.cpu else {}
    compiled_before = codegen_compilations(spark) if args.cpu else 0
    times, parts = per_batch_ms(build(spark, folder, work))
    wall = time.perf_counter() - started
    out = spark.read.parquet(os.path.join(work, out_folder))
    rows = out.count()
    expected = args.batches * PER_BATCH
    if rows != expected:
        raise AssertionError(f"{name}: {rows} output rows, expected {expected}")
    last = out.where("key = '0'").agg({"count": "max"}).collect()[0][0]
    if "stateless" not in name and last != args.batches * PER_BATCH // KEYS:
        raise AssertionError(f"{name}: key '0' counted {last}")
    steady = times[1:] or times
    bound = "  (bound)" if name.startswith("engine floor") else ""
    print(
        f"{name:28s} ms/batch median {statistics.median(steady):8.0f}  "
        f"(first {times[0]} ms; all {times}; wall {wall:.1f} s){bound}",
        flush=True,
    )
    print(
        f"{'':28s} medians of durationMs: "
        + ", ".join(f"{part} {ms:.0f}" for part, ms in sorted(parts.items(), key=lambda i: -i[1])),
        flush=True,
    )
    if args.cpu:  # every micro-batch's, the first's too (its workers start)
        used = {k: v - cpu_before[k] for k, v in cpu_seconds().items()}
        compiled = codegen_compilations(spark) - compiled_before
        print(
            f"{'':28s} CPU ms per micro-batch: JVM "
            + ", ".join(f"{k} {1000 * used[k] / len(times):.0f}" for k in ("jit", "tasks", "gc", "other"))
            + f"; Python workers {1000 * used['python'] / len(times):.0f}; "
            f"codegen compilations {compiled / len(times):.1f}",
            flush=True,
        )
    return float(statistics.median(steady))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batches", type=int, default=6, help="micro-batches of 200k events")
    parser.add_argument(
        "--only",
        default="fs-compat,fs-chained,native,floor",
        help="queries to run (fs-compat,fs-chained,native,floor; fs-chained needs fs-compat)",
    )
    parser.add_argument(
        "--floors", default=",".join(FLOORS), help=f"engine-floor variants ({','.join(FLOORS)})"
    )
    parser.add_argument(
        "--fs-key-groups",
        type=int,
        default=0,
        help="also run fs-compat with this many key groups (env.set_max_parallelism; default 128)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run the queries this many times, every other round in reverse order; report the medians",
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="also print each query's CPU per micro-batch: the JVM's by thread kind, the Python workers'",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=3,
        help="micro-batches each query runs, untimed, before any query is timed (0: none)",
    )
    args = parser.parse_args()
    only = set(args.only.split(","))
    queries: list[tuple[str, str, Any]] = []  # (printed name, output folder, query builder)
    if "fs-compat" in only:
        queries.append(("fs-compat", "out-fs", fs_compat_query))
        if "fs-chained" in only:
            build = functools.partial(fs_compat_query, chained=True)
            queries.append(("fs-compat, two keyed steps", "out-fs-chained", build))
        if args.fs_key_groups:
            build = functools.partial(fs_compat_query, key_groups=args.fs_key_groups)
            queries.append((f"fs-compat, {args.fs_key_groups} kg", "out-fs-kg", build))
    if "native" in only:
        queries.append(("native transformWithState", "out-native", native_query))
    if "floor" in only:
        for variant in args.floors.split(","):
            how, groups = FLOORS[variant]
            name = f"engine floor {how}, {groups} kg"
            build = functools.partial(floor_query, variant=variant)
            queries.append((name, f"out-floor-{variant}", build))
    spark = session()
    work = tempfile.mkdtemp(prefix="w1-stream-")
    try:
        folder = os.path.join(work, "in")
        write_inputs(spark, folder, args.batches)
        if args.warmup:  # the JVM's JIT warms up over ~1M events: the first query would pay it
            warm = os.path.join(work, "warm")
            write_inputs(spark, os.path.join(warm, "in"), args.warmup)
            for _name, _out_folder, build in queries:
                per_batch_ms(build(spark, os.path.join(warm, "in"), warm))
        results: dict[str, list[float]] = {}  # per query, its median in each round
        for r in range(args.rounds):
            # Every other round the other way round: the JIT keeps warming up across queries.
            order = queries if r % 2 == 0 else queries[::-1]
            if args.rounds > 1:
                print(f"round {r + 1} of {args.rounds}: " + ", ".join(q[0] for q in order), flush=True)
            for name, out_folder, build in order:
                ms = run_query(spark, args, name, out_folder, build, folder, os.path.join(work, f"round-{r}"))
                results.setdefault(name, []).append(ms)
            stateless_ms = results.get("engine floor stateless, 2 kg")
            if args.rounds > 1 and stateless_ms is not None:
                for name, per_round in results.items():
                    if name.startswith("fs-compat"):
                        print(
                            f"round {r + 1}: {name} / stateless floor {per_round[-1] / stateless_ms[-1]:.2f}x"
                        )
        medians = {name: statistics.median(per_round) for name, per_round in results.items()}
        if args.rounds > 1:
            for name, per_round in results.items():
                shown = ", ".join(f"{ms:.0f}" for ms in per_round)
                print(f"{name:28s} median over rounds {medians[name]:8.0f}  (rounds: {shown})")
        stateless = medians.get("engine floor stateless, 2 kg")
        if stateless is not None:
            for name, ms in medians.items():
                if name.startswith("fs-compat"):
                    print(f"ratio {name} / stateless floor: {ms / stateless:.2f}x  (target <= 2.5x)")
        native = medians.get("native transformWithState")
        for name, ms in medians.items():
            if native is not None and name != "native transformWithState":
                print(f"ratio native/{name}: {native / ms:.2f}x")
        print("target: fs-compat <= 1000 ms per batch and >= 4x native")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
