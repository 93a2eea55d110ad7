"""A streaming job with two outputs (its main output and a side output) runs as two queries, one
per output, each with its own checkpoint: each query runs the job's steps up to its output with
its own copy of their state, so the shared steps run twice (the cost of two outputs). Each,
stopped and restarted from its checkpoint between micro-batches, gives the batch target's output."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from stream_query import run_to_parquet

from fs_compat.common import Configuration, Types
from fs_compat.datastream import KeyedProcessFunction, OutputTag, ProcessFunction, StreamExecutionEnvironment
from fs_compat.datastream.state import ValueStateDescriptor
from fs_compat.spark import spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "key STRING, n LONG"
COUNTS = Types.ROW_NAMED(["key", "count"], [Types.STRING(), Types.LONG()])
BIG = OutputTag("big", Types.ROW_NAMED(["key", "n"], [Types.STRING(), Types.LONG()]))


class CountAndFlag(KeyedProcessFunction):  # type: ignore[type-arg]
    """Counts records per key (main output: key, count); records with n >= 10 also go to the side
    output ``big``."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        if value.n >= 10:
            yield BIG, (value.key, value.n)
        yield (value.key, count)


def _job(df: Any) -> tuple[Any, Any]:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    counted = env.from_dataframe(df).key_by(lambda r: r.key).process(CountAndFlag(), output_type=COUNTS)
    return counted, counted.get_side_output(BIG)


FILES = [[("a", 1), ("b", 12), ("a", 30)], [("b", 2), ("a", 3)], [("c", 40), ("a", 5)]]


@pytest.mark.classic_only  # Connect slice: README
def test_the_main_and_a_side_output_run_as_two_queries_and_match_the_batch_target(tmp_path: Path) -> None:
    spark = spark_session()
    source = tmp_path / "in"

    def write(i: int) -> None:
        spark.createDataFrame(FILES[i], SCHEMA).coalesce(1).write.parquet(str(source / str(i)))

    def run_both() -> tuple[Counter[tuple[Any, ...]], Counter[tuple[Any, ...]]]:
        stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(source / "*"))
        main, side = _job(stream)
        found = []
        for name, out in (("main", main), ("side", side)):
            run_to_parquet(out.to_dataframe(), tmp_path / f"ck-{name}", tmp_path / f"out-{name}")
            rows = spark.read.parquet(str(tmp_path / f"out-{name}")).collect()
            found.append(Counter(tuple(r) for r in rows))
        return found[0], found[1]

    write(0)
    write(1)
    main, side = run_both()
    assert side == Counter({("b", 12): 1, ("a", 30): 1})
    assert main == Counter({("a", 1): 1, ("b", 1): 1, ("a", 2): 1, ("b", 2): 1, ("a", 3): 1})
    write(2)
    main, side = run_both()  # each query restarts from its own checkpoint

    batch = spark.createDataFrame([r for f in FILES for r in f], SCHEMA)
    batch_main, batch_side = _job(batch)
    assert main == Counter(tuple(r) for r in batch_main.to_dataframe().collect())
    assert side == Counter(tuple(r) for r in batch_side.to_dataframe().collect())
    assert main[("a", 4)] == 1 and side[("c", 40)] == 1  # the counts went on after the restart


class Split(ProcessFunction):  # type: ignore[type-arg]
    """Not keyed: records with n >= 10 go to the side output ``big`` only, the others on."""

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        yield (BIG, (value.key, value.n)) if value.n >= 10 else value


def _side_jobs(env: StreamExecutionEnvironment, df: Any) -> tuple[Any, Any]:
    """Two jobs that read a side output in later steps: a keyed step's side output mapped and
    summed per key by a second keyed step; a non-keyed split's side output counted per key."""
    counted = env.from_dataframe(df).key_by(lambda r: r.key).process(CountAndFlag(), output_type=COUNTS)
    sums = (
        counted.get_side_output(BIG)
        .map(lambda r: (r.key, r.n // 10), output_type=COUNTS)
        .key_by(lambda r: r[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    split = env.from_dataframe(df).process(
        Split(), output_type=Types.ROW_NAMED(["key", "n"], [Types.STRING(), Types.LONG()])
    )
    bigs = split.get_side_output(BIG).key_by(lambda r: r.key).process(CountAndFlag(), output_type=COUNTS)
    return sums, bigs


@pytest.mark.classic_only  # CI time: the streaming plan is the same over Connect
def test_side_outputs_read_by_later_steps_restart_and_match_the_batch_target(tmp_path: Path) -> None:
    spark = spark_session()
    source = tmp_path / "in"
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    found: list[Counter[tuple[Any, ...]]] = [Counter(), Counter()]
    for files in (range(2), range(2, 3)):  # the second run restarts from the checkpoints
        for i in files:
            spark.createDataFrame(FILES[i], SCHEMA).coalesce(1).write.parquet(str(source / str(i)))
        stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(source / "*"))
        for k, out in enumerate(_side_jobs(env, stream)):
            run_to_parquet(out.to_dataframe(), tmp_path / f"ck-{k}", tmp_path / f"out-{k}")
            found[k] = Counter(tuple(r) for r in spark.read.parquet(str(tmp_path / f"out-{k}")).collect())
    batch = [
        Counter(tuple(r) for r in job.to_dataframe().collect())
        for job in _side_jobs(env, spark.createDataFrame([r for f in FILES for r in f], SCHEMA))
    ]
    assert found == batch
    assert found[0] == Counter({("b", 1): 1, ("a", 3): 1, ("c", 4): 1})
    assert found[1] == Counter({("b", 1): 1, ("a", 1): 1, ("c", 1): 1})
