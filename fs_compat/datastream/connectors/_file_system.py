"""How ``fs_compat.datastream.connectors.file_system`` reads and writes (its docstring says what it does)."""

from __future__ import annotations

import bz2
import datetime
import gzip
import lzma
import os
import re
import time
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any
from zoneinfo import ZoneInfo

from fs_compat.common import Duration, Encoder, Types
from fs_compat.common.internal import create_row
from fs_compat.common.serialization import BulkWriterFactory
from fs_compat.execution import SourceReader

from .._format import value_text
from .._functions import SinkFunction
from ._base import Sink, SinkWriter, Source, SourcePlan, StreamWrite

# ---- reading -----------------------------------------------------------------------------------


class FileEnumeratorProvider:
    """Which files a FileSource reads: every enumerator here lists directories recursively and
    skips hidden files (names starting with ``.`` or ``_``); splitting is Spark's."""

    def __init__(self, kind: str = "splittable") -> None:
        self._kind = kind

    @staticmethod
    def default_splittable_file_enumerator() -> FileEnumeratorProvider:
        """The default enumerator (files may be split by the reader)."""
        return FileEnumeratorProvider("splittable")

    @staticmethod
    def default_non_splittable_file_enumerator() -> FileEnumeratorProvider:
        """An enumerator that reads each file as one split (accepted; Spark splits as it can)."""
        return FileEnumeratorProvider("non-splittable")


class FileSplitAssignerProvider:
    """Which reader gets which split: accepted; Spark schedules its reads itself."""

    def __init__(self, kind: str = "locality-aware") -> None:
        self._kind = kind

    @staticmethod
    def locality_aware_split_assigner() -> FileSplitAssignerProvider:
        """The default assigner (accepted and ignored)."""
        return FileSplitAssignerProvider()


class StreamFormat:
    """A format read record by record: ``text_line_format`` (one string per line), or
    ``CsvReaderFormat.for_schema`` (``fs_compat.datastream.formats.csv``)."""

    def __init__(self, j_stream_format: Any = None, *, charset: str = "UTF-8") -> None:
        if j_stream_format is not None:
            raise NotImplementedError(
                "StreamFormat(j_stream_format) wraps a Java format, and there is no JVM here; use "
                "StreamFormat.text_line_format() or CsvReaderFormat.for_schema(schema)"
            )
        self._charset = charset

    @staticmethod
    def text_line_format(charset_name: str = "UTF-8") -> StreamFormat:
        """Each line of the files as a string (decoded with ``charset_name``)."""
        return StreamFormat(charset=charset_name)

    # fs-compat: how the format reads.
    def _rows(self, data: str) -> list[Any]:
        """The records of one file's text, as Rows like the Spark DataFrame's."""
        return [create_row(["value"], [line]) for line in _lines(data)]

    def _spark_read(self, reader: Any, paths: Sequence[str], streaming: bool) -> Any:
        """The DataFrame of ``paths`` read by Spark's ``reader`` (``spark.read``/``readStream``)."""
        if _codec_name(self._charset) != "utf-8":
            raise NotImplementedError(
                f"StreamFormat.text_line_format({self._charset!r}): Spark's text reader reads UTF-8; read "
                "this charset on the local target (execution.target=local)"
            )
        reader = reader.option("recursiveFileLookup", "true")
        return reader.text(paths[0] if streaming else list(paths))

    def _decode(self) -> Callable[[Any], Any] | None:
        return _first_field

    def _output_type(self) -> Any:
        return Types.STRING()


def _first_field(row: Any) -> tuple[Any]:
    return (row[0],)


class BulkFormat:
    """A format read in batches (Parquet, ORC, Avro in PyFlink): not supported here; read such
    files with Spark (``spark.read.parquet(path)``) and ``env.from_dataframe(df)``."""

    def __init__(self, j_bulk_format: Any = None) -> None:
        self._j_bulk_format = j_bulk_format


class InputFormat:
    """A Java InputFormat (``env.create_input``): not supported; read with Spark and
    ``env.from_dataframe(df)``."""

    def __init__(self, j_input_format: Any = None) -> None:
        self._j_input_format = j_input_format


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _lines(data: str) -> list[str]:
    """The lines of ``data`` as Java's ``BufferedReader.readLine`` gives them."""
    lines = _LINE_BREAK.split(data)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _codec_name(charset: str) -> str:
    import codecs

    return codecs.lookup(charset).name


_OPENERS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": gzip.decompress,
    ".gzip": gzip.decompress,
    ".bz2": bz2.decompress,
    ".xz": lzma.decompress,
    ".deflate": zlib.decompress,
}


def _local_path(path: str) -> str:
    """``path`` as a local file system path (``file:`` URIs accepted)."""
    if path.startswith("file://"):
        return path[len("file://") :]
    if path.startswith("file:"):
        return path[len("file:") :]
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]+://", path):
        raise NotImplementedError(
            f"path {path!r}: the local target reads local files only; run on the spark target "
            "(execution.target=spark), whose readers reach this file system"
        )
    return path


def _hidden(name: str) -> bool:
    return name.startswith((".", "_"))


def list_files(paths: Sequence[str]) -> list[str]:
    """The files under ``paths`` as Flink's enumerator finds them: directories recursively, in
    name order, hidden files (``.``/``_`` prefixes) skipped."""
    found: list[str] = []
    for given in paths:
        path = _local_path(given)
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not _hidden(d))
                found.extend(os.path.join(root, f) for f in sorted(files) if not _hidden(f))
        elif os.path.exists(path):
            found.append(path)
        else:
            raise FileNotFoundError(f"FileSource: no such file or directory: {given!r}")
    return found


def read_text(path: str, charset: str) -> str:
    """The text of file ``path``, decompressed by its extension and decoded with ``charset``."""
    with open(path, "rb") as f:
        data = f.read()
    decompress = _OPENERS.get(os.path.splitext(path)[1].lower())
    if decompress is not None:
        data = decompress(data)
    return data.decode(charset)


class _FileReader(SourceReader):
    def __init__(self, stream_format: StreamFormat, paths: Sequence[str], unbounded: bool) -> None:
        self.format = stream_format
        self.paths = list(paths)
        self.unbounded = unbounded

    def read_local(self) -> list[Any]:
        if self.unbounded:
            raise NotImplementedError(
                "FileSource.monitor_continuously(...) reads as a Spark streaming query: run on the spark "
                "target (execution.target=spark), or use process_static_file_set() to read the files "
                "there are now"
            )
        rows: list[Any] = []
        for path in list_files(self.paths):
            rows.extend(self.format._rows(read_text(path, self.format._charset)))
        return rows

    def dataframe(self, spark: Any) -> Any:
        if self.unbounded:
            if len(self.paths) != 1:
                raise NotImplementedError(
                    f"FileSource.monitor_continuously over {len(self.paths)} paths: a Spark streaming "
                    "read watches one directory; give one path (a directory)"
                )
            return self.format._spark_read(spark.readStream, self.paths, streaming=True)
        return self.format._spark_read(spark.read, self.paths, streaming=False)


class FileSourceBuilder:
    """Configures a FileSource; every method returns the builder."""

    def __init__(self, stream_format: StreamFormat | BulkFormat, paths: Sequence[str]) -> None:
        self._format = stream_format
        self._paths = list(paths)
        self._discovery_interval: Duration | None = None
        self._enumerator = FileEnumeratorProvider.default_splittable_file_enumerator()
        self._assigner = FileSplitAssignerProvider.locality_aware_split_assigner()

    def monitor_continuously(self, discovery_interval: Duration) -> FileSourceBuilder:
        """Read continuously: new files in the directory are read as they appear (a Spark
        streaming read, which lists the directory at every micro-batch; ``discovery_interval``
        is accepted and kept)."""
        self._discovery_interval = discovery_interval
        return self

    def process_static_file_set(self) -> FileSourceBuilder:
        """Read the files there are when the job starts, then end (the default)."""
        self._discovery_interval = None
        return self

    def set_file_enumerator(self, file_enumerator: FileEnumeratorProvider) -> FileSourceBuilder:
        """Accepted: directories are always listed recursively, hidden files skipped."""
        self._enumerator = file_enumerator
        return self

    def set_split_assigner(self, split_assigner: FileSplitAssignerProvider) -> FileSourceBuilder:
        """Accepted and ignored: Spark schedules its reads."""
        self._assigner = split_assigner
        return self

    def build(self) -> FileSource:
        """The FileSource."""
        return FileSource(self._format, self._paths, self._discovery_interval)


class FileSource(Source):
    """Reads files, bounded or continuously (see the module docstring); build it with
    ``FileSource.for_record_stream_format(format, *paths)``."""

    def __init__(
        self,
        stream_format: StreamFormat | BulkFormat | None = None,
        paths: Sequence[str] = (),
        discovery_interval: Duration | None = None,
    ) -> None:
        if not isinstance(stream_format, (StreamFormat, BulkFormat)):
            raise NotImplementedError(
                "FileSource(j_file_source) wraps a Java source, and there is no JVM here; use "
                "FileSource.for_record_stream_format(format, *paths).build()"
            )
        self._format = stream_format
        self._paths = list(paths)
        self._discovery_interval = discovery_interval

    @staticmethod
    def for_record_stream_format(stream_format: StreamFormat, *paths: str) -> FileSourceBuilder:
        """A builder of a source reading ``paths`` (files or directories) record by record."""
        return FileSourceBuilder(stream_format, paths)

    @staticmethod
    def for_bulk_file_format(bulk_format: BulkFormat, *paths: str) -> FileSourceBuilder:
        """A builder of a source reading ``paths`` in a bulk format (not supported when read:
        read Parquet/ORC/Avro with Spark and ``env.from_dataframe(df)``)."""
        return FileSourceBuilder(bulk_format, paths)

    def get_boundedness(self) -> str:
        """``BOUNDED``, or ``CONTINUOUS_UNBOUNDED`` after ``monitor_continuously``."""
        return "BOUNDED" if self._discovery_interval is None else "CONTINUOUS_UNBOUNDED"

    def discovery_interval_ms(self) -> int | None:
        """fs-compat: the ``monitor_continuously`` interval in ms (None when bounded)."""
        return None if self._discovery_interval is None else self._discovery_interval.to_milliseconds()

    def _source_plan(self, type_info: Any) -> SourcePlan:
        fmt = self._format
        if not isinstance(fmt, StreamFormat):
            raise NotImplementedError(
                "FileSource.for_bulk_file_format: bulk formats (Parquet, ORC, Avro) are read with Spark: "
                "env.from_dataframe(spark.read.parquet(path))"
            )
        reader = _FileReader(fmt, self._paths, unbounded=self._discovery_interval is not None)
        return SourcePlan(reader, fmt._decode(), type_info if type_info is not None else fmt._output_type())


# ---- writing -----------------------------------------------------------------------------------

_JAVA_PATTERN = re.compile(r"'([^']*)'|([A-Za-z])\2*|[^A-Za-z']+")
_STRFTIME = {
    "yyyy": "%Y",
    "uuuu": "%Y",
    "yy": "%y",
    "MM": "%m",
    "dd": "%d",
    "HH": "%H",
    "hh": "%I",
    "mm": "%M",
    "ss": "%S",
    "a": "%p",
    "DDD": "%j",
    "EEE": "%a",
    "EEEE": "%A",
    "MMM": "%b",
    "MMMM": "%B",
}


def strftime_pattern(java_pattern: str) -> str:
    """Python's ``strftime`` format for a Java ``DateTimeFormatter`` pattern.

    >>> strftime_pattern("yyyy-MM-dd--HH")
    '%Y-%m-%d--%H'
    >>> strftime_pattern("yyyy/MM/dd 'at' HH")
    '%Y/%m/%d at %H'
    """
    out: list[str] = []
    for match in _JAVA_PATTERN.finditer(java_pattern):
        quoted, letter = match.group(1), match.group(2)
        token = match.group(0)
        if quoted is not None:
            out.append(quoted.replace("%", "%%") if quoted else "'")
        elif letter is not None:
            if token not in _STRFTIME:
                raise ValueError(f"date-time pattern {java_pattern!r}: unsupported field {token!r}")
            out.append(_STRFTIME[token])
        else:
            out.append(token.replace("%", "%%"))
    return "".join(out)


class BucketAssigner:
    """Which directory under the base path a value is written to: ``base_path_bucket_assigner``
    (the base path itself) or ``date_time_bucket_assigner`` (the current time, formatted)."""

    def __init__(self, format_str: str | None = None, timezone_id: str | None = None) -> None:
        self._format_str = format_str
        self._timezone_id = timezone_id
        self._strftime = None if format_str is None else strftime_pattern(format_str)
        self._zone = ZoneInfo(timezone_id) if timezone_id else None

    @staticmethod
    def base_path_bucket_assigner() -> BucketAssigner:
        """Every file in the base path."""
        return BucketAssigner()

    @staticmethod
    def date_time_bucket_assigner(
        format_str: str = "yyyy-MM-dd--HH", timezone_id: str | None = None
    ) -> BucketAssigner:
        """A directory per value of the current time formatted with ``format_str`` (a Java
        ``DateTimeFormatter`` pattern) in ``timezone_id`` (default: the system's)."""
        return BucketAssigner(format_str, timezone_id)

    def _bucket_id(self, now: float) -> str:
        if self._strftime is None:
            return ""
        return datetime.datetime.fromtimestamp(now, self._zone).strftime(self._strftime)


class RollingPolicy:
    """When a part file is closed and a new one started: ``default_rolling_policy`` (by size;
    the time intervals apply to streaming queries, whose micro-batches end files) or
    ``on_checkpoint_rolling_policy`` (one file per bucket and commit)."""

    def __init__(
        self,
        part_size: int | None = None,
        rollover_interval: int | None = None,
        inactivity_interval: int | None = None,
    ) -> None:
        self._part_size = part_size
        self._rollover_interval = rollover_interval
        self._inactivity_interval = inactivity_interval

    @staticmethod
    def default_rolling_policy(
        part_size: int = 1024 * 1024 * 128,
        rollover_interval: int = 60 * 1000,
        inactivity_interval: int = 60 * 1000,
    ) -> DefaultRollingPolicy:
        """Roll when a part file exceeds ``part_size`` bytes (or, in Flink, is older than
        ``rollover_interval`` ms or idle for ``inactivity_interval`` ms)."""
        return DefaultRollingPolicy(part_size, rollover_interval, inactivity_interval)

    @staticmethod
    def on_checkpoint_rolling_policy() -> OnCheckpointRollingPolicy:
        """Roll only when output is committed."""
        return OnCheckpointRollingPolicy()


class DefaultRollingPolicy(RollingPolicy):
    """Rolls by part size (``RollingPolicy.default_rolling_policy``)."""


class OnCheckpointRollingPolicy(RollingPolicy):
    """Rolls only on commit (``RollingPolicy.on_checkpoint_rolling_policy``)."""


class OutputFileConfig:
    """The part files' name prefix (``part`` by default) and suffix (none by default)."""

    def __init__(self, part_prefix: str, part_suffix: str) -> None:
        self._prefix = part_prefix
        self._suffix = part_suffix

    @staticmethod
    def builder() -> OutputFileConfig.OutputFileConfigBuilder:
        """A builder (prefix ``part``, no suffix)."""
        return OutputFileConfig.OutputFileConfigBuilder()

    def get_part_prefix(self) -> str:
        """The prefix of part file names."""
        return self._prefix

    def get_part_suffix(self) -> str:
        """The suffix of part file names."""
        return self._suffix

    class OutputFileConfigBuilder:
        """Builds an OutputFileConfig."""

        def __init__(self) -> None:
            self.part_prefix = "part"
            self.part_suffix = ""

        def with_part_prefix(self, prefix: str) -> OutputFileConfig.OutputFileConfigBuilder:
            """The prefix of part file names."""
            self.part_prefix = prefix
            return self

        def with_part_suffix(self, suffix: str) -> OutputFileConfig.OutputFileConfigBuilder:
            """The suffix of part file names."""
            self.part_suffix = suffix
            return self

        def build(self) -> OutputFileConfig:
            """The OutputFileConfig."""
            return OutputFileConfig(self.part_prefix, self.part_suffix)


class FileCompactStrategy:
    """When files would be compacted (``FileCompactStrategy.builder()...build()``): accepted
    and ignored (``enable_compact``)."""

    def __init__(self, settings: dict[str, int] | None = None) -> None:
        self._settings = dict(settings or {})

    @staticmethod
    def builder() -> FileCompactStrategy.Builder:
        """A builder."""
        return FileCompactStrategy.Builder()

    class Builder:
        """Builds a FileCompactStrategy; every setter returns the builder."""

        def __init__(self) -> None:
            self._settings: dict[str, int] = {}

        def enable_compaction_on_checkpoint(
            self, num_checkpoints_before_compaction: int
        ) -> FileCompactStrategy.Builder:
            """Compact every n checkpoints (accepted)."""
            self._settings["checkpoints"] = num_checkpoints_before_compaction
            return self

        def set_size_threshold(self, size_threshold: int) -> FileCompactStrategy.Builder:
            """Compact past this many bytes (accepted)."""
            self._settings["size"] = size_threshold
            return self

        def set_num_compact_threads(self, num_compact_threads: int) -> FileCompactStrategy.Builder:
            """Threads that compact (accepted)."""
            self._settings["threads"] = num_compact_threads
            return self

        def build(self) -> FileCompactStrategy:
            """The strategy."""
            return FileCompactStrategy(self._settings)


class FileCompactor:
    """How files would be compacted: accepted and ignored (``enable_compact``)."""

    def __init__(self, kind: str = "concat", file_delimiter: bytes | None = None) -> None:
        self._kind = kind
        self._file_delimiter = file_delimiter

    @staticmethod
    def concat_file_compactor(file_delimiter: bytes | None = None) -> FileCompactor:
        """Concatenate files (with ``file_delimiter`` between them)."""
        return FileCompactor("concat", file_delimiter)

    @staticmethod
    def identical_file_compactor() -> FileCompactor:
        """Copy a single file as it is."""
        return FileCompactor("identical")


class _Part:
    def __init__(self, final: str, hidden: str) -> None:
        self.final = final
        self.hidden = hidden
        self.file: IO[bytes] = open(hidden, "wb")
        self.size = 0


class _RowFormatWriter(SinkWriter):
    """Writes a bounded job's values in Flink's file layout (see the module docstring)."""

    def __init__(self, sink: _RowFormat, output_type: Any, subtask_name: str) -> None:
        self._base = _local_path(sink._base_path)
        self._encode = _line_encoder(sink._encoder, output_type)
        self._assigner = sink._bucket_assigner
        self._part_size = sink._rolling_policy._part_size
        self._prefix = sink._output_file_config.get_part_prefix()
        self._suffix = sink._output_file_config.get_part_suffix()
        self._subtask = subtask_name
        self._counter = 0
        self._open: dict[str, _Part] = {}
        self._done: list[_Part] = []
        self._second = -1.0
        self._bucket = ""

    def _bucket_of_now(self) -> str:
        now = time.time()
        if int(now) != self._second:
            self._second = int(now)
            self._bucket = self._assigner._bucket_id(now)
        return self._bucket

    def _new_part(self, bucket: str) -> _Part:
        folder = os.path.join(self._base, bucket) if bucket else self._base
        os.makedirs(folder, exist_ok=True)
        name = f"{self._prefix}-{self._subtask}-{self._counter}{self._suffix}"
        self._counter += 1
        part = _Part(os.path.join(folder, name), os.path.join(folder, f".{name}.inprogress.{uuid.uuid4()}"))
        self._open[bucket] = part
        return part

    def write(self, value: Any) -> None:
        data = self._encode(value)
        bucket = self._bucket_of_now()
        part = self._open.get(bucket)
        if part is not None and self._part_size is not None and part.size > self._part_size:
            part.file.close()
            self._done.append(part)
            part = None
        if part is None:
            part = self._new_part(bucket)
        part.file.write(data)
        part.size += len(data)

    def _parts(self) -> Iterator[_Part]:
        yield from self._done
        yield from self._open.values()

    def finish(self) -> None:
        for part in self._parts():
            part.file.close()
            os.replace(part.hidden, part.final)
        self._done, self._open = [], {}

    def abort(self) -> None:
        for part in self._parts():
            part.file.close()
            if os.path.exists(part.hidden):
                os.remove(part.hidden)
        self._done, self._open = [], {}


def _line_encoder(encoder: Encoder, output_type: Any) -> Callable[[Any], bytes]:
    if encoder.is_bytes:
        return encoder.encode_bytes
    show = value_text(output_type)
    encode_line = encoder.encode_line

    def encode(value: Any) -> bytes:
        return encode_line(show(value))

    return encode


class _RowFormat:
    """What the row-format sinks (FileSink, StreamingFileSink) share: base path, encoder,
    bucket assigner, rolling policy and file names."""

    def __init__(self, base_path: str, encoder: Encoder) -> None:
        if not isinstance(encoder, Encoder):
            raise TypeError(f"encoder must be an Encoder, got {type(encoder).__name__}")
        self._base_path = base_path
        self._encoder = encoder
        self._bucket_assigner = BucketAssigner.date_time_bucket_assigner()
        self._rolling_policy: RollingPolicy = RollingPolicy.default_rolling_policy()
        self._output_file_config = OutputFileConfig.builder().build()
        self._bucket_check_interval = 60 * 1000

    def get_output_file_config(self) -> OutputFileConfig:
        """fs-compat: the part files' name prefix and suffix."""
        return self._output_file_config

    def _stream_write(self, output_type: Any) -> StreamWrite:
        if self._encoder.is_bytes:
            raise NotImplementedError(
                "FileSink with Encoder.bytes_encoder() in a streaming job: Spark's text writer writes "
                "lines; use Encoder.simple_string_encoder(), or ds.to_dataframe() and Spark's writers"
            )
        show = value_text(output_type)
        base = self._base_path
        pattern = self._bucket_assigner._format_str

        def start(df: Any, checkpoint_location: str, trigger: dict[str, Any]) -> Any:
            from pyspark.sql import functions as F  # noqa: N812

            writer = df
            if pattern is not None:
                writer = writer.withColumn("bucket", F.date_format(F.current_timestamp(), pattern))
            stream = writer.writeStream.format("text").option("checkpointLocation", checkpoint_location)
            if pattern is not None:
                stream = stream.partitionBy("bucket")
            if trigger:
                stream = stream.trigger(**trigger)
            return stream.start(base)

        return StreamWrite(show, Types.STRING(), start)


class _RowFormatBuilderBase:
    def __init__(self, sink: _RowFormat) -> None:
        self._sink = sink

    def with_bucket_check_interval(self, interval: int) -> Any:
        """How often (ms) time-based rolling is checked (accepted)."""
        self._sink._bucket_check_interval = interval
        return self

    def with_bucket_assigner(self, bucket_assigner: BucketAssigner) -> Any:
        """The bucket (directory) of each value (default: the hour, ``yyyy-MM-dd--HH``)."""
        self._sink._bucket_assigner = bucket_assigner
        return self

    def with_rolling_policy(self, rolling_policy: RollingPolicy) -> Any:
        """When part files roll (default: ``RollingPolicy.default_rolling_policy()``)."""
        self._sink._rolling_policy = rolling_policy
        return self

    def with_output_file_config(self, output_file_config: OutputFileConfig) -> Any:
        """The part files' name prefix and suffix."""
        self._sink._output_file_config = output_file_config
        return self

    def enable_compact(self, strategy: FileCompactStrategy, compactor: FileCompactor) -> Any:
        """Accepted and ignored: a bounded job writes one part file per bucket until it rolls, and
        Spark's streaming file sink writes files per micro-batch (compact them with Spark)."""
        return self

    def disable_compact(self) -> Any:
        """Accepted (compaction is never on)."""
        return self


class FileSink(Sink, _RowFormat):
    """Writes values to files under a base path (see the module docstring for the layout);
    build it with ``FileSink.for_row_format(base_path, encoder)`` and use it with
    ``ds.sink_to(sink)``."""

    def __init__(self, base_path: str, encoder: Encoder) -> None:
        _RowFormat.__init__(self, base_path, encoder)

    class RowFormatBuilder(_RowFormatBuilderBase):
        """Configures a row-format FileSink; every method returns the builder."""

        def build(self) -> FileSink:
            """The FileSink."""
            sink = self._sink
            assert isinstance(sink, FileSink)
            return sink

    @staticmethod
    def for_row_format(base_path: str, encoder: Encoder) -> FileSink.RowFormatBuilder:
        """A builder of a sink writing each value with ``encoder`` under ``base_path``."""
        return FileSink.RowFormatBuilder(FileSink(base_path, encoder))

    class BulkFormatBuilder:
        """A bulk-format FileSink builder (Parquet, ORC, Avro in PyFlink): not supported."""

        def __init__(self, base_path: str, writer_factory: BulkWriterFactory) -> None:
            self._base_path = base_path
            self._writer_factory = writer_factory

        def build(self) -> Any:
            """Not supported (raises NotImplementedError): write with ``ds.to_dataframe()`` and
            Spark's writers (``df.write.parquet(path)``)."""
            raise NotImplementedError(
                "FileSink.for_bulk_format: bulk formats (Parquet, ORC, Avro) are written with Spark: "
                "ds.to_dataframe().write.parquet(path) (writeStream for a streaming job)"
            )

    @staticmethod
    def for_bulk_format(base_path: str, writer_factory: BulkWriterFactory) -> FileSink.BulkFormatBuilder:
        """A bulk-format builder; its ``build`` raises NotImplementedError (use Spark's writers)."""
        return FileSink.BulkFormatBuilder(base_path, writer_factory)

    def _writer(self, output_type: Any) -> SinkWriter:
        return _RowFormatWriter(self, output_type, str(uuid.uuid4()))

    def _stream_write(self, output_type: Any) -> StreamWrite:
        return _RowFormat._stream_write(self, output_type)


class StreamingFileSink(SinkFunction[Any], _RowFormat):
    """Flink's legacy file sink (``ds.add_sink``): as FileSink, with part files named
    ``<prefix>-0-<n><suffix>`` (subtask index instead of a uuid)."""

    def __init__(self, base_path: str, encoder: Encoder) -> None:
        _RowFormat.__init__(self, base_path, encoder)

    class DefaultRowFormatBuilder(_RowFormatBuilderBase):
        """Configures a StreamingFileSink; every method returns the builder."""

        def build(self) -> StreamingFileSink:
            """The StreamingFileSink."""
            sink = self._sink
            assert isinstance(sink, StreamingFileSink)
            return sink

    @staticmethod
    def for_row_format(base_path: str, encoder: Encoder) -> StreamingFileSink.DefaultRowFormatBuilder:
        """A builder of a sink writing each value with ``encoder`` under ``base_path``."""
        return StreamingFileSink.DefaultRowFormatBuilder(StreamingFileSink(base_path, encoder))

    def invoke(self, value: Any, context: Any = None) -> None:
        """Not called: ``add_sink`` writes through the sink's own writer."""
        raise NotImplementedError("StreamingFileSink is written by ds.add_sink(sink), not invoked")

    def _writer(self, output_type: Any) -> SinkWriter:
        return _RowFormatWriter(self, output_type, "0")
