"""PyFlink's ``pyflink.datastream.connectors``: file, Kafka and number-sequence connectors on
fs-compat's targets (in this process on ``local``, Spark's readers and writers on ``spark``).

See ``file_system`` (``FileSource``, ``FileSink``), ``kafka`` (``KafkaSource``, ``KafkaSink``,
the legacy ``FlinkKafkaConsumer``/``FlinkKafkaProducer``) and ``number_seq``. Connectors PyFlink
has for other systems (JDBC, Pulsar, RabbitMQ, Kinesis, Elasticsearch, Cassandra) are not ported:
read and write those with Spark (``env.from_dataframe(df)``, ``ds.to_dataframe()``).
"""

from ._base import DeliveryGuarantee, Sink, Source
from ._file_system import (
    BucketAssigner,
    FileEnumeratorProvider,
    FileSink,
    FileSource,
    FileSourceBuilder,
    FileSplitAssignerProvider,
    OutputFileConfig,
    RollingPolicy,
    StreamFormat,
    StreamingFileSink,
)
from ._kafka import FlinkKafkaConsumer, FlinkKafkaProducer, KafkaSink, KafkaSource, Semantic
from ._number_seq import NumberSequenceSource

__all__ = [
    "BucketAssigner",
    "DeliveryGuarantee",
    "FileEnumeratorProvider",
    "FileSink",
    "FileSource",
    "FileSourceBuilder",
    "FileSplitAssignerProvider",
    "FlinkKafkaConsumer",
    "FlinkKafkaProducer",
    "KafkaSink",
    "KafkaSource",
    "NumberSequenceSource",
    "OutputFileConfig",
    "RollingPolicy",
    "Semantic",
    "Sink",
    "Source",
    "StreamFormat",
    "StreamingFileSink",
]
