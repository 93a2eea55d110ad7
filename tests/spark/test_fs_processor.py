"""FSProcessorDrivers on Spark (``fs_compat.functionstream.run_processor``): the seed processors give
the same emits as in-process over a batch DataFrame and over a streaming one, across a stop and a
restart from the checkpoint; ``take_checkpoint`` and ``process_watermark`` are called per
micro-batch; bad input columns are clear errors."""

from __future__ import annotations

import datetime
import importlib.util
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from stream_query import run_to_parquet

from fs_api import Context, FSProcessorDriver
from fs_api.testing import LocalContext
from fs_api_advanced import ValueState
from fs_compat.functionstream import run_processor, run_processor_local
from fs_compat.spark import spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _seed() -> Any:
    """The seed's processors (tests/seed), as a module."""
    name = "fs_seed_processors"
    if name not in sys.modules:
        path = Path(__file__).parents[1] / "seed" / "test_seed_processors.py"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


SEED = _seed()
SCHEMA = "key BINARY, data BINARY, ts TIMESTAMP"
EVENTS = [b"key-0001x", b"key-0002y", b"key-0001z", b"key-0001", b"key-0002", b"key-0003", b"key-0002"]


def _rows(events: list[bytes], ms: int = 0) -> list[tuple[bytes, bytes, datetime.datetime]]:
    stamp = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return [(e[:8], e, stamp) for e in events]


def _emits(df: Any) -> Counter[tuple[bytes, int]]:
    return Counter((bytes(r.data), r.channel) for r in df.collect())


def _on_local_context(processor: FSProcessorDriver, events: list[bytes]) -> list[tuple[bytes, int]]:
    ctx = LocalContext()
    processor.init(ctx, {})
    for data in events:
        processor.process(ctx, 0, data)
    processor.close(ctx)
    return ctx.emitted


def test_seed_processors_on_a_batch_dataframe_give_the_in_process_emits() -> None:
    spark = spark_session()
    df = spark.createDataFrame(_rows(EVENTS), SCHEMA)
    runs = [
        (SEED.CounterProcessor, None),  # no key: one global count, as on FunctionStream
        (SEED.KeyedCounterProcessor, "key"),  # keyed by its own key: spread over tasks
        (SEED.CounterProcessor, "key"),  # per-key stores: a count per key
    ]
    for cls, key_column in runs:
        out = run_processor(df, cls, key_column=key_column, parallelism=2)
        assert out.columns == ["data", "channel"]
        # In-process over the same DataFrame (read on the driver), then over plain records.
        local = run_processor_local(
            df if key_column is None else _rows_of(EVENTS), cls, key_column=key_column
        )
        assert _emits(out) == Counter(local), (cls, key_column)
        if cls is SEED.KeyedCounterProcessor or key_column is None:
            assert Counter(local) == Counter(_on_local_context(cls(), EVENTS))


class Forward(FSProcessorDriver):
    def process(self, ctx: Context, source_id: int, data: bytes) -> None:
        ctx.emit(data[-1:], source_id)

    def process_watermark(self, ctx: Context, source_id: int, watermark: int) -> None:
        ctx.emit_watermark(watermark, 5)


def test_emitted_watermarks_and_source_ids_as_rows() -> None:
    spark = spark_session()
    df = spark.createDataFrame([(b"ab", 1), (b"cd", None)], "data BINARY, source_id INT")
    out = run_processor(df, Forward, watermarks=True)
    assert out.columns == ["data", "channel", "watermark"]
    rows = Counter((None if r.data is None else bytes(r.data), r.channel, r.watermark) for r in out.collect())
    assert rows == Counter(run_processor_local(df, Forward, watermarks=True))
    assert rows == Counter({(b"b", 1, None): 1, (b"d", 0, None): 1, (None, 5, 2**63 - 1): 1})


def test_bad_input_columns_are_errors_naming_the_column_and_schema() -> None:
    spark = spark_session()
    counter = SEED.CounterProcessor
    df = spark.createDataFrame([("k", b"x")], "key STRING, value BINARY")
    with pytest.raises(
        ValueError, match=r"binary column 'data'.*missing.*schema struct<key:string,value:binary>"
    ):
        run_processor(df, counter)
    with pytest.raises(ValueError, match=r"column 'data' must be binary, not string.*struct<data:string>"):
        run_processor(spark.createDataFrame([("x",)], "data STRING"), counter)
    df = spark.createDataFrame([(b"x", "a")], "data BINARY, source_id STRING")
    with pytest.raises(ValueError, match=r"column 'source_id' must be an integer, not string"):
        run_processor(df, counter)
    with pytest.raises(ValueError, match=r"key_column 'user' is not a column of the DataFrame"):
        run_processor(spark.createDataFrame([(b"x",)], "data BINARY"), counter, key_column="user")


def _write(spark: Any, folder: Path, name: str, events: list[bytes], ms: int) -> None:
    spark.createDataFrame(_rows(events, ms), SCHEMA).coalesce(1).write.parquet(str(folder / name))


def _start(
    spark: Any, source: Path, checkpoint: Path, sink: Path, processor: Any, watermark: bool = False, **kw: Any
) -> list[dict[str, Any]]:
    """One run of a streaming query until its input is used up; returns its progress reports."""
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(source / "*"))
    if watermark:
        df = df.withWatermark("ts", "1 second")
    return run_to_parquet(run_processor(df, processor, **kw), checkpoint, sink)


def _sink(spark: Any, sink: Path) -> Counter[tuple[bytes, int]]:
    return _emits(spark.read.parquet(str(sink)))


def test_seed_processors_on_a_streaming_dataframe_across_a_restart(tmp_path: Path) -> None:
    spark = spark_session()
    source = tmp_path / "in"
    files = [EVENTS[:3], EVENTS[3:5], EVENTS[5:]]
    _write(spark, source, "1", files[0], 1000)
    _write(spark, source, "2", files[1], 2000)
    queries = {
        "keyed": (SEED.KeyedCounterProcessor, "key"),
        "global": (SEED.CounterProcessor, None),
    }
    first: dict[str, Counter[tuple[bytes, int]]] = {}
    for name, (cls, key_column) in queries.items():
        _start(spark, source, tmp_path / f"ck-{name}", tmp_path / name, cls, key_column=key_column)
        first[name] = _sink(spark, tmp_path / name)
        seen = files[0] + files[1]
        assert first[name] == Counter(run_processor_local(_rows_of(seen), cls, key_column=key_column))

    # Stop, more input, restart from the checkpoint: the stores continue where they were.
    _write(spark, source, "3", files[2], 3000)
    for name, (cls, key_column) in queries.items():
        _start(spark, source, tmp_path / f"ck-{name}", tmp_path / name, cls, key_column=key_column)
        both = _sink(spark, tmp_path / name)
        assert both == Counter(run_processor_local(_rows_of(EVENTS), cls, key_column=key_column))
        assert both == Counter(_on_local_context(cls(), EVENTS))
    new_global = _sink(spark, tmp_path / "global") - first["global"]
    assert new_global == Counter({(b"6", 0): 1, (b"7", 0): 1})  # not 1, 2: the count survived


def _rows_of(events: list[bytes]) -> list[dict[str, bytes]]:
    return [{"data": e, "key": e[:8]} for e in events]


class Hooks(FSProcessorDriver):
    """Counts records (plain keyspace) and reports the hooks Spark calls."""

    def process(self, ctx: Context, source_id: int, data: bytes) -> None:
        count = ValueState.from_context_auto_codec(ctx, "count")
        count.update((count.value() or 0) + 1)

    def process_watermark(self, ctx: Context, source_id: int, watermark: int) -> None:
        ctx.emit(b"wm:%d" % watermark, 1)

    def take_checkpoint(self, ctx: Context, checkpoint_id: int) -> None:
        count = ValueState.from_context_auto_codec(ctx, "count").value()
        ctx.emit(b"ck:%d:%d" % (checkpoint_id, count or 0), 2)


@pytest.mark.classic_only  # Connect slice: README
def test_checkpoints_and_watermarks_reach_the_processor_per_micro_batch(tmp_path: Path) -> None:
    spark = spark_session()
    source, checkpoint, sink = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    _write(spark, source, "1", [b"a", b"b"], 5000)
    _write(spark, source, "2", [b"c"], 7000)
    first = _start(spark, source, checkpoint, sink, Hooks, watermark=True, key_column=None)
    _write(spark, source, "3", [b"d", b"e"], 9000)
    second = _start(spark, source, checkpoint, sink, Hooks, watermark=True, key_column=None)
    # The micro-batches with input (summed over sources); Spark may run one without input after
    # them, for its watermark: transformWithState's stateful operator asks for it (it reaches no
    # processor).
    batch_ids = [p["batchId"] for p in first + second if p.numInputRows]
    assert batch_ids[:2] == [0, 1] and len(batch_ids) == 3 and batch_ids[2] in (2, 3)
    out = _sink(spark, sink)
    # One checkpoint per micro-batch with input, with its id and the count so far (continued
    # after the restart); the watermark is the largest timestamp so far - 1 s.
    assert out == Counter(
        {
            (b"ck:0:2", 2): 1,
            (b"ck:1:3", 2): 1,
            (b"ck:%d:5" % batch_ids[2], 2): 1,
            (b"wm:4000", 1): 1,
            (b"wm:6000", 1): 1,
            (b"wm:8000", 1): 1,
        }
    )
