"""PyFlink's file connectors in-process: ``FileSource`` reads text files as Flink's enumerator and
line format do, ``FileSink`` writes Flink's file layout and commits only when the job succeeds,
``env.from_source`` / ``ds.sink_to`` / the legacy ``add_sink`` wire them into jobs."""

from __future__ import annotations

import datetime
import gzip
import os
import re
from pathlib import Path

import pytest

from fs_compat.common import Configuration, Encoder, Row, Types, WatermarkStrategy
from fs_compat.common.serialization import ByteArraySchema, SimpleStringSchema
from fs_compat.datastream import MapFunction, RuntimeExecutionMode, StreamExecutionEnvironment
from fs_compat.datastream.connectors import NumberSequenceSource
from fs_compat.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    FileSource,
    OutputFileConfig,
    RollingPolicy,
    StreamFormat,
    StreamingFileSink,
)


def _env() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", "local")
    )
    env.set_parallelism(2)
    return env


def _text_source(*paths: str) -> FileSource:
    return FileSource.for_record_stream_format(StreamFormat.text_line_format(), *paths).build()


def _files(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> text)."""
    return {
        str(p.relative_to(root)): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_bytes(b"one two\r\nthree\rfour\n")
    (folder / "sub" / "b.txt").write_text("five\n\nsix", encoding="utf-8")
    (folder / "c.txt.gz").write_bytes(gzip.compress(b"seven\n"))
    (folder / ".hidden").write_text("never\n", encoding="utf-8")
    (folder / "_SUCCESS").write_text("never\n", encoding="utf-8")
    return folder


def test_text_lines_of_every_visible_file_under_the_paths(inputs: Path) -> None:
    env = _env()
    lines = env.from_source(_text_source(str(inputs)), WatermarkStrategy.no_watermarks(), "files")
    assert sorted(lines.execute_and_collect(limit=100)) == sorted(
        ["one two", "three", "four", "five", "", "six", "seven"]
    )
    assert lines.get_type() == Types.STRING()


def test_a_file_path_and_a_file_uri_read_that_file(inputs: Path) -> None:
    env = _env()
    source = _text_source(str(inputs / "a.txt"), "file://" + str(inputs / "sub" / "b.txt"))
    ds = env.from_source(source, WatermarkStrategy.no_watermarks(), "files")
    assert ds.execute_and_collect(limit=10) == ["one two", "three", "four", "five", "", "six"]


def test_a_missing_path_is_an_error_naming_it(tmp_path: Path) -> None:
    env = _env()
    ds = env.from_source(_text_source(str(tmp_path / "nope")), WatermarkStrategy.no_watermarks(), "files")
    with pytest.raises(FileNotFoundError, match="nope"):
        ds.execute_and_collect(limit=1)


def test_a_charset_decodes_the_files(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("café\n".encode("latin-1"))
    source = FileSource.for_record_stream_format(
        StreamFormat.text_line_format("ISO-8859-1"), str(tmp_path / "latin.txt")
    ).build()
    env = _env()
    assert env.from_source(source, WatermarkStrategy.no_watermarks(), "f").execute_and_collect(limit=5) == [
        "café"
    ]


def test_monitor_continuously_is_a_streaming_read_that_needs_spark(inputs: Path) -> None:
    from fs_compat.common import Duration

    source = (
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(inputs))
        .monitor_continuously(Duration.of_seconds(1))
        .build()
    )
    assert source.get_boundedness() == "CONTINUOUS_UNBOUNDED"
    env = _env()
    lines = env.from_source(source, WatermarkStrategy.no_watermarks(), "files")
    lines.print()  # a streaming query on Spark (test_print_parallel), not in-process
    with pytest.raises(NotImplementedError, match=r"run it on the spark target \(execution.target=spark\)"):
        env.execute()
    lines.sink_to(FileSink.for_row_format(str(inputs / "out"), Encoder.simple_string_encoder()).build())
    with pytest.raises(NotImplementedError, match=r"run it on the spark target \(execution.target=spark\)"):
        env.execute()
    with pytest.raises(ValueError, match="never ends"):
        lines.execute_and_collect(limit=1)


def test_word_count_writes_flink_file_layout(inputs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = _env()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    words = env.from_source(_text_source(str(inputs)), WatermarkStrategy.for_monotonous_timestamps(), "src")
    counts = (
        words.flat_map(str.split)
        .map(lambda w: Row(w, 1), output_type=Types.ROW([Types.STRING(), Types.INT()]))
        .key_by(lambda r: r[0])
        .reduce(lambda a, b: Row(a[0], a[1] + b[1]))
    )
    sink = (
        FileSink.for_row_format(str(out), Encoder.simple_string_encoder())
        .with_output_file_config(
            OutputFileConfig.builder().with_part_prefix("prefix").with_part_suffix(".ext").build()
        )
        .with_rolling_policy(RollingPolicy.default_rolling_policy())
        .build()
    )
    counts.sink_to(sink)
    before = datetime.datetime.now()
    env.execute("word count")
    after = datetime.datetime.now()
    written = _files(out)
    assert len(written) == 1
    ((path, text),) = written.items()
    bucket, name = path.split(os.sep)
    # The default bucket assigner: the hour, as Java's yyyy-MM-dd--HH, in the system's time zone.
    assert bucket in {before.strftime("%Y-%m-%d--%H"), after.strftime("%Y-%m-%d--%H")}
    assert re.fullmatch(r"prefix-[0-9a-f-]{36}-0\.ext", name)
    expected = [
        "+I[one, 1]",
        "+I[two, 1]",
        "+I[three, 1]",
        "+I[four, 1]",
        "+I[five, 1]",
        "+I[six, 1]",
        "+I[seven, 1]",
    ]
    assert sorted(text.splitlines()) == sorted(expected)


def test_pickled_values_are_written_with_str_and_bytes_as_they_are(tmp_path: Path) -> None:
    env = _env()
    base = BucketAssigner.base_path_bucket_assigner()
    env.from_collection([("a", 1), ("b", 2)]).sink_to(
        FileSink.for_row_format(str(tmp_path / "text"), Encoder.simple_string_encoder())
        .with_bucket_assigner(base)
        .build()
    )
    env.from_collection([b"\x00\x01", b"\x02"]).sink_to(
        FileSink.for_row_format(str(tmp_path / "bytes"), Encoder.bytes_encoder())
        .with_bucket_assigner(base)
        .build()
    )
    env.execute()
    (text_file,) = (tmp_path / "text").iterdir()
    assert text_file.read_text(encoding="utf-8") == "('a', 1)\n('b', 2)\n"
    (bytes_file,) = (tmp_path / "bytes").iterdir()
    assert bytes_file.read_bytes() == b"\x00\x01\x02"


def test_part_files_roll_past_the_part_size(tmp_path: Path) -> None:
    env = _env()
    env.from_collection([f"line{i}" for i in range(6)], Types.STRING()).sink_to(
        FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size=10))
        .build()
    )
    env.execute()
    written = _files(tmp_path)
    counters = sorted(int(name.rsplit("-", 1)[1]) for name in written)
    assert counters == [0, 1, 2]  # 6 bytes a line: a part rolls once it holds more than 10
    assert "".join(written[n] for n in sorted(written, key=lambda n: int(n.rsplit("-", 1)[1]))) == "".join(
        f"line{i}\n" for i in range(6)
    )


def test_date_time_buckets_follow_the_pattern_and_time_zone(tmp_path: Path) -> None:
    env = _env()
    assigner = BucketAssigner.date_time_bucket_assigner("yyyy/MM/dd 'h'HH", "UTC")
    env.from_collection(["x"], Types.STRING()).sink_to(
        FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
        .with_bucket_assigner(assigner)
        .build()
    )
    before = datetime.datetime.now(datetime.UTC)
    env.execute()
    after = datetime.datetime.now(datetime.UTC)
    (path,) = _files(tmp_path)
    assert os.path.dirname(path) in {before.strftime("%Y/%m/%d h%H"), after.strftime("%Y/%m/%d h%H")}


class _FailOn(MapFunction[str, str]):
    def map(self, value: str) -> str:
        if value == "boom":
            raise RuntimeError("boom")
        return value


def test_a_failed_job_leaves_no_files(tmp_path: Path) -> None:
    env = _env()
    env.from_collection(["a", "b", "boom"], Types.STRING()).map(_FailOn(), Types.STRING()).sink_to(
        FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder()).build()
    )
    with pytest.raises(Exception, match="boom"):
        env.execute()
    out = tmp_path / "out"
    assert not out.exists() or _files(out) == {}  # in-progress files are removed, none committed


def test_legacy_streaming_file_sink_names_parts_by_subtask(tmp_path: Path) -> None:
    env = _env()
    sink = (
        StreamingFileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .build()
    )
    env.from_collection([1, 2], Types.INT()).add_sink(sink)
    env.execute()
    assert _files(tmp_path) == {"part-0-0": "1\n2\n"}


def test_compaction_is_accepted_and_changes_nothing(tmp_path: Path) -> None:
    from fs_compat.datastream.connectors.file_system import FileCompactor, FileCompactStrategy

    strategy = FileCompactStrategy.builder().enable_compaction_on_checkpoint(2).set_size_threshold(10).build()
    env = _env()
    env.from_collection(["a", "b"], Types.STRING()).sink_to(
        FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .enable_compact(strategy, FileCompactor.concat_file_compactor(b"\n"))
        .build()
    )
    env.execute()
    assert list(_files(tmp_path).values()) == ["a\nb\n"]


def test_bulk_formats_name_spark_as_the_alternative(tmp_path: Path) -> None:
    from fs_compat.common.serialization import BulkWriterFactory

    with pytest.raises(NotImplementedError, match=r"write\.parquet"):
        FileSink.for_bulk_format(str(tmp_path), BulkWriterFactory()).build()


def test_number_sequence_source() -> None:
    env = _env()
    ds = env.from_source(NumberSequenceSource(1, 5), WatermarkStrategy.no_watermarks(), "seq")
    assert ds.get_type() == Types.LONG()
    assert sorted(ds.execute_and_collect(limit=10)) == [1, 2, 3, 4, 5]


def test_from_source_refuses_what_is_no_connector_source() -> None:
    with pytest.raises(
        NotImplementedError, match=r"from_source is not supported.*object is no connector source"
    ):
        _env().from_source(object(), WatermarkStrategy.no_watermarks(), "x")  # type: ignore[arg-type]


def test_simple_string_schema_and_encoders() -> None:
    schema = SimpleStringSchema("ISO-8859-1")
    assert schema.serialize("é") == b"\xe9"
    assert schema.deserialize(b"\xe9") == "é"
    assert ByteArraySchema().deserialize(b"\x01") == b"\x01"
    assert Encoder.simple_string_encoder("UTF-16-LE").encode_line("a") == "a\n".encode("utf-16-le")
    with pytest.raises(ValueError, match="unsupported charset 'nope'"):
        SimpleStringSchema("nope")


def test_java_schema_objects_raise_naming_the_alternative() -> None:
    from fs_compat.common.serialization import SerializationSchema

    with pytest.raises(NotImplementedError, match="no JVM here; use SimpleStringSchema"):
        SerializationSchema(object())
