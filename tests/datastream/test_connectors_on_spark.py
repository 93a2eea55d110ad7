"""PyFlink's connectors on the Spark target: files are read with Spark's readers and give the
in-process target's results, a ``monitor_continuously`` source runs ``env.execute()`` as a
Structured Streaming query writing with Spark's text writer, and the Kafka connectors, which
pyspark does not bundle, fail naming the package to add."""

from __future__ import annotations

from pathlib import Path

import pytest
from streaming_words import running_word_counts

from fs_compat.common import (
    Configuration,
    Duration,
    Encoder,
    Row,
    SimpleStringSchema,
    Types,
    WatermarkStrategy,
)
from fs_compat.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from fs_compat.datastream.connectors import NumberSequenceSource
from fs_compat.datastream.connectors.file_system import BucketAssigner, FileSink, FileSource, StreamFormat
from fs_compat.datastream.connectors.kafka import (
    KafkaOffsetsInitializer,
    KafkaRecordSerializationSchema,
    KafkaSink,
    KafkaSource,
    kafka_package,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.classic_only]  # Connect slice: README


def _env(target: str, **settings: str) -> StreamExecutionEnvironment:
    config = Configuration().set_string("execution.target", target)
    for key, value in settings.items():
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    return env


def _word_count(env: StreamExecutionEnvironment, inputs: Path, out: Path) -> None:
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(inputs)).build()
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "words")
        .flat_map(str.split)
        .map(lambda w: Row(w, 1), output_type=Types.ROW([Types.STRING(), Types.INT()]))
        .key_by(lambda r: r[0])
        .reduce(lambda a, b: Row(a[0], a[1] + b[1]))
        .sink_to(
            FileSink.for_row_format(str(out), Encoder.simple_string_encoder())
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .build()
        )
    )
    env.execute()


def _lines(folder: Path, pattern: str = "*") -> list[str]:
    return sorted(
        line
        for path in folder.rglob(pattern)
        if path.is_file() and not any(part.startswith(("_", ".")) for part in path.relative_to(folder).parts)
        for line in path.read_text(encoding="utf-8").splitlines()
    )


def test_bounded_files_on_spark_give_the_in_process_results(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    (inputs / "sub").mkdir(parents=True)
    (inputs / "a.txt").write_text("to be or\nnot to be\n", encoding="utf-8")
    (inputs / "sub" / "b.txt").write_text("be\r\n", encoding="utf-8")
    (inputs / "_ignored").write_text("never\n", encoding="utf-8")
    _word_count(_env("local"), inputs, tmp_path / "local")
    _word_count(_env("spark"), inputs, tmp_path / "spark")
    expected = ["+I[be, 3]", "+I[not, 1]", "+I[or, 1]", "+I[to, 2]"]
    assert _lines(tmp_path / "local") == expected
    assert _lines(tmp_path / "spark") == expected
    numbers = _env("spark").from_source(NumberSequenceSource(1, 4), WatermarkStrategy.no_watermarks(), "n")
    assert sorted(numbers.map(lambda n: n * n).execute_and_collect(limit=10)) == [1, 4, 9, 16]


def test_monitor_continuously_runs_as_a_streaming_query(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "1.txt").write_text("a\nb\n", encoding="utf-8")
    (inputs / "2.txt").write_text("c\n", encoding="utf-8")
    env = _env(
        "spark",
        **{
            "fs_compat.streaming.trigger": "available-now",
            "execution.checkpointing.dir": str(tmp_path / "ck"),
        },
    )
    source = (
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(inputs))
        .monitor_continuously(Duration.of_seconds(1))
        .build()
    )
    lines = env.from_source(source, WatermarkStrategy.no_watermarks(), "lines").map(str.upper, Types.STRING())
    lines.sink_to(
        FileSink.for_row_format(str(tmp_path / "flat"), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .build()
    ).uid("flat")
    lines.sink_to(
        FileSink.for_row_format(str(tmp_path / "hourly"), Encoder.simple_string_encoder()).build()
    ).uid("hourly")
    env.execute("stream")
    assert _lines(tmp_path / "flat", "part-*") == ["A", "B", "C"]
    (bucket,) = (p.name for p in (tmp_path / "hourly").iterdir() if not p.name.startswith("_"))
    assert bucket.startswith("bucket=")
    assert _lines(tmp_path / "hourly" / bucket, "part-*") == ["A", "B", "C"]
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == ["flat", "hourly"]


def test_kafka_without_spark_connector_names_the_package(tmp_path: Path) -> None:
    source = (
        KafkaSource.builder()
        .set_bootstrap_servers("127.0.0.1:9")
        .set_topics("t")
        .set_value_only_deserializer(SimpleStringSchema())
        .set_bounded(KafkaOffsetsInitializer.latest())
        .build()
    )
    env = _env("spark")
    ds = env.from_source(source, WatermarkStrategy.no_watermarks(), "kafka")
    with pytest.raises(RuntimeError, match=f"spark.jars.packages={kafka_package()}"):
        ds.execute_and_collect(limit=1)
    record = (
        KafkaRecordSerializationSchema.builder()
        .set_topic("out")
        .set_value_serialization_schema(SimpleStringSchema())
    )
    sink = (
        KafkaSink.builder().set_bootstrap_servers("127.0.0.1:9").set_record_serializer(record.build()).build()
    )
    env.from_collection(["x"], Types.STRING()).sink_to(sink)
    with pytest.raises(RuntimeError, match="KafkaSink: Spark's Kafka connector is not in this Spark session"):
        env.execute()


def _streaming_word_count(inputs: Path, out: Path, checkpoints: Path) -> None:
    env = _env(
        "spark",
        **{"fs_compat.streaming.trigger": "available-now", "execution.checkpointing.dir": str(checkpoints)},
    )
    (
        running_word_counts(env, inputs).sink_to(
            FileSink.for_row_format(str(out), Encoder.simple_string_encoder())
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .build()
        )
    )
    env.execute()


def test_a_restarted_streaming_job_resumes_its_files_and_state(tmp_path: Path) -> None:
    inputs, out, checkpoints = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    inputs.mkdir()
    (inputs / "1.txt").write_text("a b a\nc a\n", encoding="utf-8")
    _streaming_word_count(inputs, out, checkpoints)
    assert _lines(out, "part-*") == ["(a,1)", "(a,2)", "(a,3)", "(b,1)", "(c,1)"]  # rolling counts
    (inputs / "2.txt").write_text("a z\n", encoding="utf-8")
    _streaming_word_count(inputs, out, checkpoints)  # the same job again, from its checkpoint
    assert _lines(out, "part-*") == ["(a,1)", "(a,2)", "(a,3)", "(a,4)", "(b,1)", "(c,1)", "(z,1)"]
