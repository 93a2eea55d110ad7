"""How ``fs_compat.datastream.connectors.kafka`` reads and writes (its docstring says what it does)."""

from __future__ import annotations

import abc
import copy
import enum
import json
from collections.abc import Callable, Iterable
from typing import Any

from fs_compat.common import DeserializationSchema, SerializationSchema, Types
from fs_compat.common.internal import create_row
from fs_compat.execution import SourceReader
from fs_compat.spark import with_kafka_connector

from .._functions import SinkFunction
from ._base import DeliveryGuarantee, Sink, SinkWriter, Source, SourcePlan, StreamWrite

# ---- offsets -----------------------------------------------------------------------------------


class KafkaTopicPartition:
    """A topic's partition."""

    def __init__(self, topic: str, partition: int) -> None:
        self._topic = topic
        self._partition = partition

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, KafkaTopicPartition)
            and self._topic == other._topic
            and self._partition == other._partition
        )

    def __hash__(self) -> int:
        return 31 * (31 + self._partition) + hash(self._topic)

    def __repr__(self) -> str:
        return f"KafkaTopicPartition({self._topic!r}, {self._partition})"


class KafkaOffsetResetStrategy(enum.Enum):
    """Where to start when no offset applies: ``LATEST``, ``EARLIEST`` or ``NONE``."""

    LATEST = 0
    EARLIEST = 1
    NONE = 2


def _partitions_json(offsets: dict[KafkaTopicPartition, int]) -> str:
    by_topic: dict[str, dict[str, int]] = {}
    for tp, offset in offsets.items():
        by_topic.setdefault(tp._topic, {})[str(tp._partition)] = offset
    return json.dumps(by_topic, sort_keys=True)


class KafkaOffsetsInitializer:
    """Where a source starts (``set_starting_offsets``) or stops (``set_bounded``)."""

    def __init__(self, kind: str, value: Any = None) -> None:
        self._kind = kind
        self._value = value

    @staticmethod
    def committed_offsets(
        offset_reset_strategy: KafkaOffsetResetStrategy = KafkaOffsetResetStrategy.NONE,
    ) -> KafkaOffsetsInitializer:
        """The consumer group's committed offsets: not supported when read (Spark keeps offsets
        in the query's checkpoint; a restarted query resumes from there)."""
        return KafkaOffsetsInitializer("committed", offset_reset_strategy)

    @staticmethod
    def timestamp(timestamp: int) -> KafkaOffsetsInitializer:
        """The first record at or after ``timestamp`` (epoch ms) in each partition."""
        return KafkaOffsetsInitializer("timestamp", timestamp)

    @staticmethod
    def earliest() -> KafkaOffsetsInitializer:
        """The earliest offsets (the default start)."""
        return KafkaOffsetsInitializer("earliest")

    @staticmethod
    def latest() -> KafkaOffsetsInitializer:
        """The latest offsets."""
        return KafkaOffsetsInitializer("latest")

    @staticmethod
    def offsets(
        offsets: dict[KafkaTopicPartition, int],
        offset_reset_strategy: KafkaOffsetResetStrategy = KafkaOffsetResetStrategy.EARLIEST,
    ) -> KafkaOffsetsInitializer:
        """Given offsets per partition."""
        return KafkaOffsetsInitializer("offsets", dict(offsets))

    def _options(self, which: str) -> dict[str, str]:
        """Spark's options for this initializer as the start (``which="starting"``) or the end
        (``"ending"``)."""
        if self._kind in ("earliest", "latest"):
            if which == "ending" and self._kind == "earliest":
                raise NotImplementedError(
                    "KafkaOffsetsInitializer.earliest() as stopping offsets: Spark's Kafka source cannot "
                    "stop at the earliest offsets; use latest(), offsets({...}) or timestamp(...)"
                )
            return {f"{which}Offsets": self._kind}
        if self._kind == "offsets":
            return {f"{which}Offsets": _partitions_json(self._value)}
        if self._kind == "timestamp":
            return {f"{which}Timestamp": str(self._value)}
        raise NotImplementedError(
            "KafkaOffsetsInitializer.committed_offsets(): Spark's Kafka source keeps offsets in the "
            "streaming query's checkpoint (a restarted query resumes from it) and does not read the "
            "group's committed offsets; use earliest(), latest(), offsets({...}) or timestamp(...)"
        )


# ---- reading -----------------------------------------------------------------------------------


class _KafkaReader(SourceReader):
    def __init__(self, options: dict[str, str], unbounded: bool) -> None:
        self.options = options
        self.unbounded = unbounded

    def dataframe(self, spark: Any) -> Any:
        reader = spark.readStream if self.unbounded else spark.read
        return with_kafka_connector(
            "KafkaSource", lambda: reader.format("kafka").options(**self.options).load()
        )

    def read_local(self) -> list[Any]:
        if self.unbounded:
            raise NotImplementedError(
                "an unbounded Kafka source runs as a Spark streaming query: run on the spark target "
                "(execution.target=spark), or bound it with set_bounded(KafkaOffsetsInitializer.latest())"
            )
        from fs_compat.runtime import ExternalSourceNode
        from fs_compat.spark import collect_items, spark_session

        return collect_items(ExternalSourceNode("Kafka Source", handle=self.dataframe(spark_session())))


def _value_decoder(schema: DeserializationSchema) -> Callable[[Any], Any]:
    def decode(row: Any) -> tuple[Any, ...]:
        # As Flink's sources do, a message the schema deserializes to None is skipped.
        value = row["value"]
        decoded = None if value is None else schema.deserialize(bytes(value))
        return () if decoded is None else (decoded,)

    return decode


def _plan(
    options: dict[str, str], unbounded: bool, schema: DeserializationSchema, type_info: Any
) -> SourcePlan:
    output_type = type_info if type_info is not None else schema.get_produced_type()
    return SourcePlan(_KafkaReader(options, unbounded), _value_decoder(schema), output_type)


class KafkaSource(Source):
    """Reads Kafka topics (build it with ``KafkaSource.builder()``); unbounded unless
    ``set_bounded`` was called."""

    def __init__(self, builder: KafkaSourceBuilder) -> None:
        self._builder = builder
        self._bounded = builder._stopping is not None
        assert builder._deserializer is not None
        self._deserializer = builder._deserializer

    @staticmethod
    def builder() -> KafkaSourceBuilder:
        """A KafkaSourceBuilder."""
        return KafkaSourceBuilder()

    def get_boundedness(self) -> str:
        """``BOUNDED`` after ``set_bounded``, else ``CONTINUOUS_UNBOUNDED``."""
        return "BOUNDED" if self._bounded else "CONTINUOUS_UNBOUNDED"

    def spark_options(self) -> dict[str, str]:
        """fs-compat: the options of Spark's Kafka reader this source uses (NotImplementedError
        for settings Spark's reader has no option for, e.g. committed offsets)."""
        return self._builder._spark_options()

    def _source_plan(self, type_info: Any) -> SourcePlan:
        return _plan(self.spark_options(), not self._bounded, self._deserializer, type_info)


class KafkaSourceBuilder:
    """Configures a KafkaSource; every setter returns the builder. Bootstrap servers, what to
    subscribe to (topics, a pattern or partitions) and a value deserializer are required."""

    def __init__(self) -> None:
        self._bootstrap_servers: str | None = None
        self._group_id: str | None = None
        self._subscribe: tuple[str, str] | None = None
        self._starting = KafkaOffsetsInitializer.earliest()
        self._stopping: KafkaOffsetsInitializer | None = None
        self._deserializer: DeserializationSchema | None = None
        self._client_id_prefix: str | None = None
        self._properties: dict[str, str] = {}

    def build(self) -> KafkaSource:
        """The KafkaSource (ValueError when a required setting is missing)."""
        if not self._bootstrap_servers and "bootstrap.servers" not in self._properties:
            raise ValueError("Property bootstrap.servers is required but not provided")
        if self._subscribe is None:
            raise ValueError(
                "No subscribe mode is specified, should be one of topics, topic pattern and partition set."
            )
        if self._deserializer is None:
            raise ValueError("Deserialization schema is required but not provided.")
        snapshot = copy.copy(self)  # later settings on this builder do not change the source
        snapshot._properties = dict(self._properties)
        return KafkaSource(snapshot)

    def set_bootstrap_servers(self, bootstrap_servers: str) -> KafkaSourceBuilder:
        """The brokers to connect to (``host:port,...``)."""
        self._bootstrap_servers = bootstrap_servers
        return self

    def set_group_id(self, group_id: str) -> KafkaSourceBuilder:
        """The consumer group id."""
        self._group_id = group_id
        return self

    def _set_subscribe(self, mode: str, value: str) -> KafkaSourceBuilder:
        if self._subscribe is not None and self._subscribe[0] != mode:
            raise ValueError(f"Cannot use {mode} for consumption because {self._subscribe[0]} is already set")
        self._subscribe = (mode, value)
        return self

    def set_topics(self, *topics: str) -> KafkaSourceBuilder:
        """The topics to read."""
        return self._set_subscribe("subscribe", ",".join(topics))

    def set_topic_pattern(self, topic_pattern: str) -> KafkaSourceBuilder:
        """A regular expression of the topics to read."""
        return self._set_subscribe("subscribePattern", topic_pattern)

    def set_partitions(self, partitions: Iterable[KafkaTopicPartition]) -> KafkaSourceBuilder:
        """The partitions to read."""
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp._topic, []).append(tp._partition)
        return self._set_subscribe("assign", json.dumps({t: sorted(p) for t, p in sorted(by_topic.items())}))

    def set_starting_offsets(
        self, starting_offsets_initializer: KafkaOffsetsInitializer
    ) -> KafkaSourceBuilder:
        """Where to start (``KafkaOffsetsInitializer.earliest()`` by default)."""
        self._starting = starting_offsets_initializer
        return self

    def set_unbounded(self, stopping_offsets_initializer: KafkaOffsetsInitializer) -> KafkaSourceBuilder:
        """Not supported (raises NotImplementedError): a Spark streaming read does not stop at
        given offsets; use ``set_bounded`` (a batch read up to them)."""
        raise NotImplementedError(
            "KafkaSourceBuilder.set_unbounded: a Spark streaming read of Kafka does not stop at given "
            "offsets; use set_bounded(...) to read up to them (a bounded job)"
        )

    def set_bounded(self, stopping_offsets_initializer: KafkaOffsetsInitializer) -> KafkaSourceBuilder:
        """Read up to ``stopping_offsets_initializer`` and end (a batch read)."""
        self._stopping = stopping_offsets_initializer
        return self

    def set_value_only_deserializer(
        self, deserialization_schema: DeserializationSchema
    ) -> KafkaSourceBuilder:
        """How each record's value becomes the stream's value (its key is ignored)."""
        self._deserializer = deserialization_schema
        return self

    def set_client_id_prefix(self, prefix: str) -> KafkaSourceBuilder:
        """The consumers' client id."""
        self._client_id_prefix = prefix
        return self

    def set_property(self, key: str, value: str) -> KafkaSourceBuilder:
        """A Kafka consumer property (passed to Spark as ``kafka.<key>``)."""
        self._properties[key] = value
        return self

    def set_properties(self, props: dict[str, str]) -> KafkaSourceBuilder:
        """Kafka consumer properties (each as ``set_property``)."""
        self._properties.update(props)
        return self

    def _spark_options(self) -> dict[str, str]:
        options = _consumer_options(self._properties)
        if self._bootstrap_servers:
            options["kafka.bootstrap.servers"] = self._bootstrap_servers
        assert self._subscribe is not None
        options[self._subscribe[0]] = self._subscribe[1]
        if self._group_id:
            options["kafka.group.id"] = self._group_id
        if self._client_id_prefix:
            options["kafka.client.id"] = self._client_id_prefix
        options.update(self._starting._options("starting"))
        if self._stopping is not None:
            options.update(self._stopping._options("ending"))
        return options


#: Consumer properties Spark's Kafka source sets itself and refuses from users.
_SPARK_OWNED = ("auto.offset.reset", "key.deserializer", "value.deserializer", "enable.auto.commit")


def _consumer_options(properties: dict[str, str]) -> dict[str, str]:
    """Kafka properties as Spark options (``kafka.<key>``), without those Spark owns."""
    return {f"kafka.{k}": str(v) for k, v in properties.items() if k not in _SPARK_OWNED}


class FlinkKafkaConsumer(Source):
    """Flink's legacy Kafka source (``env.add_source``): reads ``topics`` with
    ``deserialization_schema`` and the consumer ``properties`` (``bootstrap.servers``,
    ``group.id`` ...); unbounded. By default it starts, as Flink does without committed offsets,
    where ``auto.offset.reset`` says (``latest`` unless set); a restarted query resumes from its
    checkpoint."""

    def __init__(
        self,
        topics: str | list[str],
        deserialization_schema: DeserializationSchema,
        properties: dict[str, str],
    ) -> None:
        self._topics = [topics] if isinstance(topics, str) else list(topics)
        self._deserializer = deserialization_schema
        self._properties = dict(properties)
        reset = self._properties.get("auto.offset.reset", "latest")
        self._start = (
            KafkaOffsetsInitializer.earliest() if reset == "earliest" else KafkaOffsetsInitializer.latest()
        )

    def set_commit_offsets_on_checkpoints(self, commit_on_checkpoints: bool) -> FlinkKafkaConsumer:
        """Accepted: Spark keeps offsets in the query's checkpoint and commits none."""
        return self

    def set_start_from_earliest(self) -> FlinkKafkaConsumer:
        """Start at the earliest offsets."""
        self._start = KafkaOffsetsInitializer.earliest()
        return self

    def set_start_from_latest(self) -> FlinkKafkaConsumer:
        """Start at the latest offsets."""
        self._start = KafkaOffsetsInitializer.latest()
        return self

    def set_start_from_timestamp(self, startup_offsets_timestamp: int) -> FlinkKafkaConsumer:
        """Start at the first record at or after the timestamp (epoch ms)."""
        self._start = KafkaOffsetsInitializer.timestamp(startup_offsets_timestamp)
        return self

    def set_start_from_group_offsets(self) -> FlinkKafkaConsumer:
        """Start where ``auto.offset.reset`` says (Spark reads no group offsets; a restarted
        query resumes from its checkpoint)."""
        reset = self._properties.get("auto.offset.reset", "latest")
        self._start = (
            KafkaOffsetsInitializer.earliest() if reset == "earliest" else KafkaOffsetsInitializer.latest()
        )
        return self

    def disable_filter_restored_partitions_with_subscribed_topics(self) -> FlinkKafkaConsumer:
        """Accepted and ignored."""
        return self

    def get_produced_type(self) -> Any:
        """The type the deserialization schema produces."""
        return self._deserializer.get_produced_type()

    def spark_options(self) -> dict[str, str]:
        """fs-compat: the options of Spark's Kafka reader this source uses."""
        options = _consumer_options(self._properties)
        options["subscribe"] = ",".join(self._topics)
        options.update(self._start._options("starting"))
        return options

    def _source_plan(self, type_info: Any) -> SourcePlan:
        return _plan(self.spark_options(), True, self._deserializer, type_info)


# ---- writing -----------------------------------------------------------------------------------


class KafkaTopicSelector(abc.ABC):
    """Picks the topic of each record (``set_topic_selector``)."""

    @abc.abstractmethod
    def apply(self, data: Any) -> str:
        """The topic of ``data``."""


class KafkaRecordSerializationSchema(SerializationSchema):
    """How a value becomes a Kafka record: its topic, key and value (build it with
    ``KafkaRecordSerializationSchema.builder()``)."""

    def __init__(self, builder: KafkaRecordSerializationSchemaBuilder) -> None:
        self._topic = builder._topic
        self._selector = builder._selector
        self._key_schema = builder._key_schema
        assert builder._value_schema is not None
        self._value_schema = builder._value_schema

    @staticmethod
    def builder() -> KafkaRecordSerializationSchemaBuilder:
        """A KafkaRecordSerializationSchemaBuilder."""
        return KafkaRecordSerializationSchemaBuilder()

    def serialize(self, value: Any) -> bytes:
        """The record value's bytes."""
        return self._value_schema.serialize(value)

    def record(self, value: Any) -> tuple[str | None, bytes | None, bytes]:
        """fs-compat: the (topic, key, value) of ``value``'s record."""
        topic = self._selector(value) if self._selector is not None else self._topic
        key = None if self._key_schema is None else self._key_schema.serialize(value)
        return topic, key, self._value_schema.serialize(value)


class KafkaRecordSerializationSchemaBuilder:
    """Configures a KafkaRecordSerializationSchema: a topic (fixed or selected per value) and a
    value serialization schema are required, a key one is optional."""

    def __init__(self) -> None:
        self._topic: str | None = None
        self._selector: Callable[[Any], str] | None = None
        self._key_schema: SerializationSchema | None = None
        self._value_schema: SerializationSchema | None = None

    def build(self) -> KafkaRecordSerializationSchema:
        """The schema (ValueError when the topic or the value schema is missing)."""
        if self._topic is None and self._selector is None:
            raise ValueError("No topic present.")
        if self._value_schema is None:
            raise ValueError("No value serializer is configured.")
        return KafkaRecordSerializationSchema(self)

    def set_topic(self, topic: str) -> KafkaRecordSerializationSchemaBuilder:
        """Every record's topic."""
        self._topic, self._selector = topic, None
        return self

    def set_topic_selector(
        self, topic_selector: Callable[[Any], str] | KafkaTopicSelector
    ) -> KafkaRecordSerializationSchemaBuilder:
        """A function (or KafkaTopicSelector) giving each value's topic."""
        if isinstance(topic_selector, KafkaTopicSelector):
            self._selector = topic_selector.apply
        elif callable(topic_selector):
            self._selector = topic_selector
        else:
            raise TypeError("topic_selector must be KafkaTopicSelector or a callable")
        self._topic = None
        return self

    def set_key_serialization_schema(
        self, key_serialization_schema: SerializationSchema
    ) -> KafkaRecordSerializationSchemaBuilder:
        """How each value becomes its record's key (no key when unset)."""
        self._key_schema = key_serialization_schema
        return self

    def set_value_serialization_schema(
        self, value_serialization_schema: SerializationSchema
    ) -> KafkaRecordSerializationSchemaBuilder:
        """How each value becomes its record's value."""
        self._value_schema = value_serialization_schema
        return self


_RECORD_TYPE = Types.ROW_NAMED(
    ["topic", "key", "value"],
    [Types.STRING(), Types.PRIMITIVE_ARRAY(Types.BYTE()), Types.PRIMITIVE_ARRAY(Types.BYTE())],
)


class _KafkaWriter(SinkWriter):
    """A bounded job's records, written with Spark's Kafka writer when the job succeeded."""

    def __init__(self, options: dict[str, str], record: Callable[[Any], tuple[Any, ...]]) -> None:
        self._options = options
        self._record = record
        self._records: list[tuple[Any, ...]] = []

    def write(self, value: Any) -> None:
        self._records.append(self._record(value))

    def finish(self) -> None:
        from fs_compat.spark import spark_session

        spark = spark_session()
        df = spark.createDataFrame(self._records, schema=_RECORD_TYPE.spark_type())
        self._records = []
        with_kafka_connector("KafkaSink", lambda: df.write.format("kafka").options(**self._options).save())

    def abort(self) -> None:
        self._records = []


def _guarantee_check(api: str, exactly_once: bool) -> None:
    if exactly_once:
        raise NotImplementedError(
            f"{api} with exactly-once delivery: Spark's Kafka sink writes at least once (a replayed "
            "micro-batch may write its records again); use DeliveryGuarantee.AT_LEAST_ONCE and "
            "deduplicate downstream (e.g. by key)"
        )


def _stream_write(options: dict[str, str], record: Callable[[Any], tuple[Any, ...]]) -> StreamWrite:
    def start(df: Any, checkpoint_location: str, trigger: dict[str, Any]) -> Any:
        stream = (
            df.writeStream.format("kafka")
            .options(**options)
            .option("checkpointLocation", checkpoint_location)
        )
        if trigger:
            stream = stream.trigger(**trigger)
        return with_kafka_connector("KafkaSink", stream.start)

    return StreamWrite(lambda v: create_row(["topic", "key", "value"], list(record(v))), _RECORD_TYPE, start)


class KafkaSink(Sink):
    """Writes each value as a Kafka record (build it with ``KafkaSink.builder()``); at least
    once."""

    def __init__(self, builder: KafkaSinkBuilder) -> None:
        assert builder._serializer is not None
        self._serializer = builder._serializer
        self._guarantee = builder._guarantee
        self._options = {f"kafka.{k}": v for k, v in builder._properties.items()}
        if builder._bootstrap_servers:
            self._options["kafka.bootstrap.servers"] = builder._bootstrap_servers
        if self._serializer._topic is not None:
            self._options["topic"] = self._serializer._topic

    @staticmethod
    def builder() -> KafkaSinkBuilder:
        """A KafkaSinkBuilder."""
        return KafkaSinkBuilder()

    def spark_options(self) -> dict[str, str]:
        """fs-compat: the options of Spark's Kafka writer this sink uses."""
        return dict(self._options)

    def _check(self) -> None:
        _guarantee_check("KafkaSink", self._guarantee is DeliveryGuarantee.EXACTLY_ONCE)

    def _writer(self, output_type: Any) -> SinkWriter:
        self._check()
        return _KafkaWriter(self._options, self._serializer.record)

    def _stream_write(self, output_type: Any) -> StreamWrite:
        self._check()
        return _stream_write(self._options, self._serializer.record)


class KafkaSinkBuilder:
    """Configures a KafkaSink; every setter returns the builder. Bootstrap servers and a record
    serializer are required."""

    def __init__(self) -> None:
        self._bootstrap_servers: str | None = None
        self._guarantee = DeliveryGuarantee.NONE
        self._transactional_id_prefix = "kafka-sink"
        self._serializer: KafkaRecordSerializationSchema | None = None
        self._properties: dict[str, str] = {}

    def build(self) -> KafkaSink:
        """The KafkaSink (ValueError when a required setting is missing)."""
        if not self._bootstrap_servers and "bootstrap.servers" not in self._properties:
            raise ValueError("bootstrapServers")
        if self._serializer is None:
            raise ValueError("recordSerializer")
        return KafkaSink(self)

    def set_bootstrap_servers(self, bootstrap_servers: str) -> KafkaSinkBuilder:
        """The brokers to connect to (``host:port,...``)."""
        self._bootstrap_servers = bootstrap_servers
        return self

    def set_delivery_guarantee(self, delivery_guarantee: DeliveryGuarantee) -> KafkaSinkBuilder:
        """``AT_LEAST_ONCE`` or ``NONE`` (both: Spark's at-least-once writes);
        ``EXACTLY_ONCE`` raises NotImplementedError when the sink is used."""
        self._guarantee = delivery_guarantee
        return self

    def set_transactional_id_prefix(self, transactional_id_prefix: str) -> KafkaSinkBuilder:
        """Accepted and kept: Spark's Kafka sink writes without transactions."""
        self._transactional_id_prefix = transactional_id_prefix
        return self

    def set_record_serializer(self, record_serializer: KafkaRecordSerializationSchema) -> KafkaSinkBuilder:
        """How each value becomes a record (topic, key, value)."""
        self._serializer = record_serializer
        return self

    def set_property(self, key: str, value: str) -> KafkaSinkBuilder:
        """A Kafka producer property (passed to Spark as ``kafka.<key>``)."""
        self._properties[key] = value
        return self


class Semantic(enum.Enum):
    """The legacy producer's delivery semantics."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1
    NONE = 2


class FlinkKafkaProducer(SinkFunction[Any]):
    """Flink's legacy Kafka sink (``ds.add_sink``): writes each value to ``topic`` with
    ``serialization_schema`` and the producer ``producer_config`` (``bootstrap.servers`` ...);
    at least once (``Semantic.EXACTLY_ONCE`` raises NotImplementedError when used)."""

    def __init__(
        self,
        topic: str,
        serialization_schema: SerializationSchema,
        producer_config: dict[str, str],
        kafka_producer_pool_size: int = 5,
        semantic: Semantic = Semantic.AT_LEAST_ONCE,
    ) -> None:
        self._topic = topic
        self._schema = serialization_schema
        self._options = {f"kafka.{k}": str(v) for k, v in producer_config.items()}
        self._options["topic"] = topic
        self._semantic = semantic

    def set_log_failures_only(self, log_failures_only: bool) -> FlinkKafkaProducer:
        """Accepted and ignored: Spark fails the query on a write error."""
        return self

    def set_flush_on_checkpoint(self, flush_on_checkpoint: bool) -> FlinkKafkaProducer:
        """Accepted: Spark flushes every micro-batch."""
        return self

    def set_write_timestamp_to_kafka(self, write_timestamp_to_kafka: bool) -> FlinkKafkaProducer:
        """Accepted and ignored: records get Kafka's timestamps."""
        return self

    def ignore_failures_after_transaction_timeout(self) -> FlinkKafkaProducer:
        """Accepted and ignored: Spark writes without transactions."""
        return self

    def spark_options(self) -> dict[str, str]:
        """fs-compat: the options of Spark's Kafka writer this sink uses."""
        return dict(self._options)

    def invoke(self, value: Any) -> None:
        """Not called: ``add_sink`` writes through Spark's Kafka writer."""
        raise NotImplementedError("FlinkKafkaProducer is written by ds.add_sink(producer), not invoked")

    def _record(self, value: Any) -> tuple[str, None, bytes]:
        return self._topic, None, self._schema.serialize(value)

    def _check(self) -> None:
        _guarantee_check("FlinkKafkaProducer", self._semantic is Semantic.EXACTLY_ONCE)

    def _writer(self, output_type: Any) -> SinkWriter:
        self._check()
        return _KafkaWriter(self._options, self._record)

    def _stream_write(self, output_type: Any) -> StreamWrite:
        self._check()
        return _stream_write(self._options, self._record)
