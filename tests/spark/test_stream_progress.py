"""A streaming query of a ported job, run by ``fs-compat run`` from its checkpoint, prints one
line per micro-batch (records in and out per step, state, watermark, duration, what it added to
the metric group) from a StreamingQueryListener, over Spark Connect too, and the query's figures
so far are exported for Prometheus."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from fs_compat.cli import main
from fs_compat.monitoring import prometheus_text
from fs_compat.spark import spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "key STRING, n LONG, ts TIMESTAMP"

#: A ported streaming job: counts per key, from parquet files, into parquet files, with a
#: checkpoint; run with ``fs-compat run job.py IN CHECKPOINT OUT``.
JOB = """\
import sys

from fs_compat.common import Types
from fs_compat.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from fs_compat.datastream.state import ValueStateDescriptor
from fs_compat.spark import spark_session

source, checkpoint, sink = sys.argv[1:]


class Count(KeyedProcessFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))
        self.seen = runtime_context.get_metrics_group().counter("seen")

    def process_element(self, value, ctx):
        self.seen.inc()
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        if value.n > 1:
            yield (value.key, count)


spark = spark_session()
df = (
    spark.readStream.schema("key STRING, n LONG, ts TIMESTAMP")
    .option("maxFilesPerTrigger", 1)
    .parquet(source + "/*")
    .withWatermark("ts", "1 second")
)
env = StreamExecutionEnvironment.get_execution_environment()
out = Types.ROW_NAMED(["key", "count"], [Types.STRING(), Types.LONG()])
counted = (
    env.from_dataframe(df)
    .filter(lambda r: r.n > 0)
    .name("positive")
    .key_by(lambda r: r.key)
    .process(Count(), output_type=out)
    .name("count")
)
query = (
    counted.to_dataframe()
    .writeStream.queryName("counts")
    .format("parquet")
    .option("checkpointLocation", checkpoint)
    .trigger(availableNow=True)
    .start(sink)
)
query.awaitTermination()
"""


def _write(spark: Any, folder: Path, rows: list[tuple[str, int, int]]) -> None:
    data = [(k, n, datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)) for k, n, ms in rows]
    spark.createDataFrame(data, SCHEMA).coalesce(1).write.parquet(str(folder))


def test_fs_compat_run_prints_one_line_per_micro_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spark = spark_session()
    _write(spark, tmp_path / "in" / "1", [("a", 1, 1000), ("b", 2, 1500), ("c", 0, 1200)])
    _write(spark, tmp_path / "in" / "2", [("a", 2, 3000)])
    monkeypatch.chdir(tmp_path)
    Path("job.py").write_text(JOB)
    assert main(["run", "job.py", *(str(tmp_path / name) for name in ("in", "ck", "out"))]) == 0
    err = capsys.readouterr().err
    assert "no job was executed" not in err
    fields = [line.split(" | ") for line in err.splitlines() if line.startswith("[counts] batch ")]
    assert fields[0][:3] == ["[counts] batch 0: 3 in", "positive 3 in, 2 out", "count 2 in, 1 out"]
    assert fields[0][3].startswith("state 2 rows, ")  # a's and b's key groups (held in their rows)
    assert fields[0][4] == "watermark 500"  # the largest timestamp (1500) - 1 s
    assert fields[0][5].endswith(" s")
    assert fields[0][6] == "count: seen 2"  # the step's metric group: what the micro-batch added
    assert fields[1][:3] == ["[counts] batch 1: 1 in", "positive 1 in, 1 out", "count 1 in, 1 out"]
    assert fields[1][4] == "watermark 2000"
    assert fields[1][6] == "count: seen 1"
    assert sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / "out")).collect()) == [
        ("a", 2),
        ("b", 1),
    ]

    # The latest micro-batch, for scraping.
    samples = {
        (s.name, s.labels.get("operator_name")): s.value
        for family in text_string_to_metric_families(prometheus_text())
        for s in family.samples
        if s.labels.get("job_name") == "counts"
    }
    # Spark reports the state store's rows and bytes, not keys: a streaming step's key count is
    # not exported (its rows are in the line above), its bytes are.
    assert ("fs_compat_state_keys", "count") not in samples
    assert samples[("fs_compat_state_bytes", "count")] > 0
    assert samples[("fs_compat_records_in", "positive")] == 4  # over the micro-batches
    assert samples[("fs_compat_records_out", "count")] == 2
    assert samples[("flink_taskmanager_job_task_operator_seen", "count")] == 3
