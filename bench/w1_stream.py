"""W1 as a streaming query: keyed running count+sum, key = i % 10,000, 200,000 events per
micro-batch (one parquet file each), RocksDB state store, checkpointed, parquet sink, local[2].

Two queries over the same files, in the same run:

- ``fs-compat``: a PyFlink-style ``MapFunction`` with a ``ValueStateDescriptor`` (the job a user
  ports), ``env.from_dataframe(stream) ... .to_dataframe().writeStream``;
- ``native``: Spark's own ``groupBy(key).transformWithState`` with a ``ValueState`` per key
  (Row API), emitting the same running rows.

Prints ms per micro-batch (median over the batches after the first, which warms up workers) and
the ratio. Target: fs-compat <= 1,000 ms per micro-batch on local[2].

    .venv/bin/python bench/w1_stream.py                 # 6 micro-batches, ~2-4 min
    .venv/bin/python bench/w1_stream.py --batches 3     # a quick look
"""

from __future__ import annotations

import argparse
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


def fs_compat_query(spark: Any, folder: str, work: str) -> Any:
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

    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    out = Types.ROW_NAMED(["key", "count", "sum"], [Types.STRING(), Types.LONG(), Types.LONG()])
    ds = (
        env.from_dataframe(stream(spark, folder))
        .key_by(lambda r: r.key)
        .map(RunningCountSum(), output_type=out)
    )
    return (
        ds.to_dataframe()
        .writeStream.format("parquet")
        .option("checkpointLocation", os.path.join(work, "ck-fs"))
        .trigger(availableNow=True)
        .start(os.path.join(work, "out-fs"))
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


def per_batch_ms(query: Any) -> list[int]:
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))
    return [int(p["durationMs"]["triggerExecution"]) for p in query.recentProgress if p["numInputRows"]]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batches", type=int, default=6, help="micro-batches of 200k events")
    args = parser.parse_args()
    spark = session()
    work = tempfile.mkdtemp(prefix="w1-stream-")
    try:
        folder = os.path.join(work, "in")
        write_inputs(spark, folder, args.batches)
        results = {}
        for name, build in (("fs-compat", fs_compat_query), ("native transformWithState", native_query)):
            started = time.perf_counter()
            times = per_batch_ms(build(spark, folder, work))
            wall = time.perf_counter() - started
            out = spark.read.parquet(os.path.join(work, "out-fs" if name == "fs-compat" else "out-native"))
            rows = out.count()
            expected = args.batches * PER_BATCH
            if rows != expected:
                raise AssertionError(f"{name}: {rows} output rows, expected {expected}")
            last = out.where("key = '0'").agg({"count": "max"}).collect()[0][0]
            if last != args.batches * PER_BATCH // KEYS:
                raise AssertionError(f"{name}: key '0' counted {last}")
            steady = times[1:] or times
            results[name] = statistics.median(steady)
            print(
                f"{name:28s} ms/batch median {statistics.median(steady):8.0f}  "
                f"(first {times[0]} ms; all {times}; wall {wall:.1f} s)"
            )
        ours, native = results["fs-compat"], results["native transformWithState"]
        print(f"ratio native/fs-compat: {native / ours:.2f}x  (target: fs-compat <= 1000 ms per batch)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
