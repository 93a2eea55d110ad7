"""PyFlink's ``pyflink.datastream.connectors.file_system``: ``FileSource`` and ``FileSink``.

Reading (``FileSource.for_record_stream_format(StreamFormat.text_line_format(), *paths)``):

- bounded (the default, ``process_static_file_set``): on ``local`` the files are read in this
  process; on ``spark`` with Spark's reader (``spark.read.text``; CSV formats with
  ``spark.read.csv``). A directory is read recursively; files whose names start with ``.`` or
  ``_`` are skipped, as Flink's enumerator does; ``.gz``/``.bz2``/``.xz``/``.deflate`` files are
  decompressed. Lines end at ``\\n``, ``\\r\\n`` or ``\\r``, without the terminator.
- ``monitor_continuously(discovery_interval)``: a streaming read of the directory
  (``spark.readStream.text``), on the ``spark`` target: new files are picked up at every
  micro-batch, and ``env.execute()`` runs the job as a Structured Streaming query.

Writing (``FileSink.for_row_format(base_path, Encoder.simple_string_encoder())``):

- bounded jobs, on every target: the values reach the driver and are written there with
  Flink's layout: ``<base_path>/<bucket>/<prefix>-<uuid>-<n><suffix>`` (``prefix`` ``part`` and
  no suffix by default, ``OutputFileConfig``; ``<bucket>`` from the bucket assigner: the hour
  ``yyyy-MM-dd--HH`` by default, none with ``BucketAssigner.base_path_bucket_assigner()``; one
  ``uuid`` per sink, ``n`` counting the part files). Files are written hidden
  (``.<name>.inprogress.<uuid>``) and renamed when the job succeeds, as Flink commits pending
  files at the end of a bounded job. A part file rolls when it exceeds the rolling policy's
  ``part_size``. The legacy ``StreamingFileSink`` names files ``<prefix>-0-<n><suffix>``.
- unbounded jobs (a ``monitor_continuously`` or Kafka source), on ``spark``: Spark's text
  writer (``writeStream.format("text")``) with Spark's layout under ``base_path``:
  ``part-<n>-<uuid>.c000.txt`` files and a ``_spark_metadata`` log (the file names of
  ``OutputFileConfig`` do not apply); a date-time bucket becomes a ``bucket=<id>`` directory
  (Spark's ``partitionBy``). Files are committed with each micro-batch: exactly once per
  micro-batch, as Spark's file sink guarantees, for readers that read through its metadata log.

>>> from fs_compat.common import Encoder
>>> names = OutputFileConfig.builder().with_part_prefix("pre").with_part_suffix(".txt").build()
>>> sink = (
...     FileSink.for_row_format("/tmp/out", Encoder.simple_string_encoder())
...     .with_output_file_config(names)
...     .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size=1024))
...     .build()
... )
>>> sink.get_output_file_config().get_part_prefix()
'pre'
"""

from fs_compat.common.serialization import BulkWriterFactory, RowDataBulkWriterFactory

from ._file_system import (
    BucketAssigner,
    BulkFormat,
    DefaultRollingPolicy,
    FileCompactor,
    FileCompactStrategy,
    FileEnumeratorProvider,
    FileSink,
    FileSource,
    FileSourceBuilder,
    FileSplitAssignerProvider,
    InputFormat,
    OnCheckpointRollingPolicy,
    OutputFileConfig,
    RollingPolicy,
    StreamFormat,
    StreamingFileSink,
)

__all__ = [
    "BucketAssigner",
    "BulkFormat",
    "BulkWriterFactory",
    "DefaultRollingPolicy",
    "FileCompactStrategy",
    "FileCompactor",
    "FileEnumeratorProvider",
    "FileSink",
    "FileSource",
    "FileSourceBuilder",
    "FileSplitAssignerProvider",
    "InputFormat",
    "OnCheckpointRollingPolicy",
    "OutputFileConfig",
    "RollingPolicy",
    "RowDataBulkWriterFactory",
    "StreamFormat",
    "StreamingFileSink",
]
