"""PyFlink's ``pyflink.datastream.connectors.kafka`` on Spark's Kafka source and sink.

``KafkaSource`` / ``FlinkKafkaConsumer`` read with ``spark.readStream.format("kafka")`` (an
unbounded source: ``env.execute()`` runs the job as a streaming query), or, after
``set_bounded(...)``, with ``spark.read.format("kafka")`` up to the stopping offsets. Each record's
``value`` goes through the value deserializer (``SimpleStringSchema``, the JSON/CSV row schemas of
``fs_compat.datastream.formats``). ``KafkaSink`` / ``FlinkKafkaProducer`` write each value as a
record (topic, key, value) with ``df.write.format("kafka")`` (bounded jobs, once they succeeded)
or ``writeStream.format("kafka")`` (streaming jobs): at least once, as Spark's Kafka sink
guarantees; ``DeliveryGuarantee.EXACTLY_ONCE`` raises NotImplementedError.

The builders' settings become Spark's options (``spark_options()`` shows them):

=======================================  ============================================
PyFlink                                  Spark option
=======================================  ============================================
``set_bootstrap_servers(s)``             ``kafka.bootstrap.servers``
``set_topics(*t)``                       ``subscribe`` (comma separated)
``set_topic_pattern(p)``                 ``subscribePattern``
``set_partitions({...})``                ``assign`` (JSON)
``set_group_id(g)``                      ``kafka.group.id``
``set_client_id_prefix(p)``              ``kafka.client.id``
``set_starting_offsets(earliest()...)``  ``startingOffsets`` / ``startingTimestamp``
``set_bounded(latest()...)``             ``endingOffsets`` / ``endingTimestamp``
``set_property(k, v)``                   ``kafka.<k>``
``KafkaRecordSerializationSchema``       ``topic`` option, or a ``topic`` column
=======================================  ============================================

Spark's Kafka connector is not part of pyspark: start Spark with the package
``org.apache.spark:spark-sql-kafka-0-10_2.13:<pyspark version>`` (``spark.jars.packages``, e.g.
through ``Configuration().set_string("spark.jars.packages", ...)`` and ``env.configure``);
without it, reading or writing raises a RuntimeError naming that coordinate. Offsets are kept in
the streaming query's checkpoint, not committed to the consumer group.

>>> from fs_compat.common import SimpleStringSchema
>>> source = (
...     KafkaSource.builder()
...     .set_bootstrap_servers("broker:9092")
...     .set_topics("in1", "in2")
...     .set_group_id("g")
...     .set_starting_offsets(KafkaOffsetsInitializer.earliest())
...     .set_value_only_deserializer(SimpleStringSchema())
...     .build()
... )
>>> for option in sorted(source.spark_options().items()):
...     print(*option)
kafka.bootstrap.servers broker:9092
kafka.group.id g
startingOffsets earliest
subscribe in1,in2
"""

from fs_compat.spark import kafka_package

from ._kafka import (
    FlinkKafkaConsumer,
    FlinkKafkaProducer,
    KafkaOffsetResetStrategy,
    KafkaOffsetsInitializer,
    KafkaRecordSerializationSchema,
    KafkaRecordSerializationSchemaBuilder,
    KafkaSink,
    KafkaSinkBuilder,
    KafkaSource,
    KafkaSourceBuilder,
    KafkaTopicPartition,
    KafkaTopicSelector,
    Semantic,
)

__all__ = [
    "FlinkKafkaConsumer",
    "FlinkKafkaProducer",
    "KafkaOffsetResetStrategy",
    "KafkaOffsetsInitializer",
    "KafkaRecordSerializationSchema",
    "KafkaRecordSerializationSchemaBuilder",
    "KafkaSink",
    "KafkaSinkBuilder",
    "KafkaSource",
    "KafkaSourceBuilder",
    "KafkaTopicPartition",
    "KafkaTopicSelector",
    "Semantic",
    "kafka_package",
]
