"""Windows on a streaming DataFrame, across a restart from the checkpoint: the open windows
survive it. (``test_windows.py`` runs every window behaviour on the Spark batch target too.)"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from fs_compat.common import Configuration, Time, Types
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.datastream.functions import ProcessWindowFunction
from fs_compat.datastream.window import TumblingEventTimeWindows
from fs_compat.spark import spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_SPARK = Configuration().set_string("execution.target", "spark")


# Windows on a streaming DataFrame, across a restart from the checkpoint. -------------------------


class _SumPerWindow(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        yield (key, context.window().start, sum(e.n for e in elements))


_SCHEMA = "key STRING, n LONG, ts TIMESTAMP"
_OUT = Types.ROW_NAMED(["key", "start", "total"], [Types.STRING(), Types.LONG(), Types.LONG()])


def _write(spark: Any, folder: Path, name: str, rows: list[tuple[str, int, int]]) -> None:
    data = [(k, n, datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)) for k, n, ms in rows]
    spark.createDataFrame(data, _SCHEMA).coalesce(1).write.parquet(str(folder / name))


def _run(spark: Any, source: Path, checkpoint: Path, sink: Path) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(_SPARK)
    df = (
        spark.readStream.schema(_SCHEMA)
        .option("maxFilesPerTrigger", 1)
        .parquet(str(source / "*"))
        .withWatermark("ts", "0 seconds")
    )
    out = (
        env.from_dataframe(df)
        .key_by(lambda r: r.key)
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .process(_SumPerWindow(), output_type=_OUT)
    )
    query = (
        out.to_dataframe()
        .writeStream.format("parquet")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start(str(sink))
    )
    query.awaitTermination()
    assert query.exception() is None


@pytest.mark.classic_only  # Connect slice: README
def test_open_windows_survive_a_restart_from_the_checkpoint(tmp_path: Path) -> None:
    spark = spark_session()
    source, checkpoint, sink = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    _write(spark, source, "1", [("a", 1, 1_000), ("b", 5, 3_000)])
    _write(spark, source, "2", [("a", 2, 2_000)])
    _run(spark, source, checkpoint, sink)
    assert not spark.read.schema("key STRING, start LONG, total LONG").parquet(str(sink)).collect()

    # More input after the restart: the open windows hold what came before it.
    _write(spark, source, "3", [("a", 3, 4_000), ("a", 10, 12_000)])
    _run(spark, source, checkpoint, sink)
    rows = sorted(tuple(r) for r in spark.read.parquet(str(sink)).collect())
    assert rows == [("a", 0, 6), ("b", 0, 5)]  # [10 s, 20 s) of "a" is still open
