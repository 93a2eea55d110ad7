"""Kafka (``bytewax.connectors.kafka``), on Spark's Kafka source and sink.

:class:`KafkaSource` and :class:`KafkaSink` take Bytewax 0.21.1's arguments and map them onto the
options of Spark's ``kafka`` data source (:meth:`KafkaSource.spark_options`,
:meth:`KafkaSink.spark_options`); items are :class:`KafkaSourceMessage` /
:class:`KafkaSinkMessage` as in Bytewax, and :mod:`.operators` has Bytewax's Kafka operators.

Where they run:

- On Spark. ``run_main(flow)`` with ``FS_COMPAT_TARGET=spark`` reads a ``KafkaSource(...,
  tail=False)`` as a batch (from ``starting_offset`` to the end of each partition) and writes a
  ``KafkaSink`` with Spark's batch writer. A tailing source (``tail=True``, Bytewax's default)
  never ends: run the flow with :func:`fs_compat.bytewax.spark.to_dataframe` and start the result
  with ``writeStream`` and a ``checkpointLocation``, where Spark keeps each Kafka partition's
  offset (the source's resume state) and every key's state; write it to Kafka with
  ``.writeStream.format("kafka").options(**sink.spark_options())`` after mapping the messages to
  ``key`` / ``value`` / ``topic`` columns.
- In-process (``run_main``'s default target) there is no Kafka client: building the source or the
  sink raises ``NotImplementedError`` naming the Spark target.

pyspark does not bundle Spark's Kafka connector. Without it, reading or writing raises
``RuntimeError`` naming the package to add: ``spark.jars.packages`` =
``org.apache.spark:spark-sql-kafka-0-10_2.13:<pyspark version>`` (e.g.
``SparkSession.builder.config("spark.jars.packages", ...)`` before the first session starts, or
``spark-submit --packages ...``).

Differences from Bytewax: Spark's Kafka source fails the query on a consumer error, so
``raise_on_errors=False`` puts no :class:`KafkaError` into the stream; ``batch_size`` is not used
(Spark sizes its reads); ``latency`` is ``None``; ``add_config`` keys are librdkafka's, passed to
Spark's Java Kafka client as ``kafka.<key>`` (``sasl.username`` / ``sasl.password`` become
``sasl.jaas.config``; ``group.id`` and ``enable.auto.commit`` are dropped, as Spark keeps the
offsets in its checkpoint; ``auto.offset.reset`` and (de)serializer settings raise ``ValueError``).
A :class:`KafkaSinkMessage` with a ``timestamp`` other than 0 raises ``NotImplementedError``: Spark's
Kafka writer has no timestamp column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from fs_compat.spark import kafka_package
from fs_compat.spark import with_kafka_connector as _with_connector

from ..._on_spark import SparkReadSource as _SparkReadSource
from ..._on_spark import SparkWriteSink as _SparkWriteSink

__all__ = [
    "KafkaError",
    "KafkaSink",
    "KafkaSinkMessage",
    "KafkaSource",
    "KafkaSourceMessage",
    "OFFSET_BEGINNING",
    "OFFSET_END",
    "kafka_package",
    "message_of_row",
]

OFFSET_BEGINNING = -2
"""``starting_offset``: each partition's first offset (``confluent_kafka.OFFSET_BEGINNING``)."""

OFFSET_END = -1
"""``starting_offset``: each partition's end: only new messages (``confluent_kafka.OFFSET_END``)."""

_K = TypeVar("_K")
_V = TypeVar("_V")
_K2 = TypeVar("_K2")
_V2 = TypeVar("_V2")
_K_co = TypeVar("_K_co", covariant=True)
_V_co = TypeVar("_V_co", covariant=True)


@dataclass(frozen=True)
class KafkaSourceMessage(Generic[_K, _V]):
    """A message read from Kafka. ``timestamp`` is ``(type, epoch ms)`` with confluent-kafka's
    types (1: create time, 2: log append time)."""

    key: _K
    value: _V
    topic: str | None = field(default=None)
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    latency: float | None = field(default=None)
    offset: int | None = field(default=None)
    partition: int | None = field(default=None)
    timestamp: tuple[int, int] | None = field(default=None)

    def to_sink(self) -> KafkaSinkMessage[_K, _V]:
        """The message to write back: key, value and headers."""
        return KafkaSinkMessage(key=self.key, value=self.value, headers=self.headers)

    def _with_key(self, key: _K2) -> KafkaSourceMessage[_K2, _V]:
        return self._with_key_and_value(key, self.value)

    def _with_value(self, value: _V2) -> KafkaSourceMessage[_K, _V2]:
        return self._with_key_and_value(self.key, value)

    def _with_key_and_value(self, key: _K2, value: _V2) -> KafkaSourceMessage[_K2, _V2]:
        return KafkaSourceMessage(
            key, value, self.topic, self.headers, self.latency, self.offset, self.partition, self.timestamp
        )


@dataclass(frozen=True)
class KafkaError(Generic[_K, _V]):
    """An error about a message: ``err`` (a ``confluent_kafka.KafkaError`` when confluent-kafka is
    installed) and the message ``msg``."""

    err: Any
    msg: KafkaSourceMessage[_K, _V]


@dataclass(frozen=True)
class KafkaSinkMessage(Generic[_K_co, _V_co]):
    """A message to write to Kafka (``topic`` None: the sink's topic; ``partition`` None: Kafka's
    default partitioner)."""

    key: _K_co
    value: _V_co
    topic: str | None = None
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    partition: int | None = None
    timestamp: int = 0

    def _with_key(self, key: _K2) -> KafkaSinkMessage[_K2, _V_co]:
        return self._with_key_and_value(key, self.value)

    def _with_value(self, value: _V2) -> KafkaSinkMessage[_K_co, _V2]:
        return self._with_key_and_value(self.key, value)

    def _with_key_and_value(self, key: _K2, value: _V2) -> KafkaSinkMessage[_K2, _V2]:
        return KafkaSinkMessage(key, value, self.topic, self.headers, self.partition, self.timestamp)


# Options. --------------------------------------------------------------------------------------

#: librdkafka settings that have no meaning for Spark's Kafka client (Spark keeps offsets in its
#: checkpoint and assigns partitions itself): dropped.
_DROPPED = frozenset({"group.id", "enable.auto.commit", "enable.partition.eof", "statistics.interval.ms"})

#: librdkafka settings Spark refuses, with what to use instead.
_DESERIALIZE = "messages arrive as bytes: deserialize with fs_compat.bytewax.connectors.kafka.operators"
_SERIALIZE = "serialize with fs_compat.bytewax.connectors.kafka.operators before the sink"
_REFUSED: Mapping[str, str] = {
    "auto.offset.reset": "use KafkaSource(starting_offset=OFFSET_BEGINNING or OFFSET_END)",
    "key.deserializer": _DESERIALIZE,
    "value.deserializer": _DESERIALIZE,
    "key.serializer": _SERIALIZE,
    "value.serializer": _SERIALIZE,
}

_LOGIN_MODULES: Mapping[str, str] = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


def _jaas_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _client_options(brokers: Iterable[str], add_config: Mapping[str, str] | None) -> dict[str, str]:
    """Spark's ``kafka.*`` options for Bytewax's ``brokers`` and librdkafka ``add_config``."""
    config = dict(add_config or {})
    options = {"kafka.bootstrap.servers": ",".join(brokers)}
    if "sasl.mechanisms" in config:  # librdkafka's alias
        config.setdefault("sasl.mechanism", config.pop("sasl.mechanisms"))
    username, password = config.pop("sasl.username", None), config.pop("sasl.password", None)
    if username is not None or password is not None:
        mechanism = str(config.get("sasl.mechanism", "PLAIN")).upper()
        if mechanism not in _LOGIN_MODULES:
            raise ValueError(
                f"add_config: sasl.username/sasl.password with sasl.mechanism {mechanism!r}: give Spark's "
                "Java client a 'sasl.jaas.config' instead"
            )
        options["kafka.sasl.jaas.config"] = (
            f"{_LOGIN_MODULES[mechanism]} required username={_jaas_quote(str(username or ''))} "
            f"password={_jaas_quote(str(password or ''))};"
        )
    for key, value in config.items():
        if key in _REFUSED:
            raise ValueError(f"add_config: {key!r} cannot be set on Spark's Kafka client: {_REFUSED[key]}")
        if key not in _DROPPED and key != "bootstrap.servers":
            options[f"kafka.{key}"] = str(value)
    return options


def _check_iterable(name: str, value: Any) -> None:
    if isinstance(value, str):
        raise TypeError(f"{name} must be an iterable and not a string")


_ON_SPARK = (
    "run the flow on Spark (FS_COMPAT_TARGET=spark or run_main(flow, _target='spark')) for a bounded read "
    "(KafkaSource(..., tail=False)), or with fs_compat.bytewax.spark.to_dataframe(stream) and writeStream "
    "for a tailing one"
)


# Source. ---------------------------------------------------------------------------------------


def _ms(value: Any) -> int:
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    return int(value)


def _fields(row: Any) -> dict[str, Any]:
    """A row's (or struct's) fields by name: a ``Row``, a mapping, or a pyspark ``Row``."""
    if hasattr(row, "as_dict"):
        return dict(row.as_dict())
    if hasattr(row, "asDict"):
        return dict(row.asDict())
    return dict(row)


def _header(header: Any) -> tuple[str, bytes]:
    if isinstance(header, tuple) and not hasattr(header, "asDict"):
        key, value = header
    else:
        fields = _fields(header)
        key, value = fields["key"], fields["value"]
    return str(key), b"" if value is None else bytes(value)


def _bytes_or_none(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


def message_of_row(row: Any) -> KafkaSourceMessage[bytes | None, bytes | None]:
    """The message of a row of Spark's Kafka source (columns ``key``, ``value``, ``topic``,
    ``partition``, ``offset``, ``timestamp``, ``timestampType`` and, with ``includeHeaders``,
    ``headers``)."""
    fields = _fields(row)
    stamp = fields.get("timestamp")
    return KafkaSourceMessage(
        key=_bytes_or_none(fields["key"]),
        value=_bytes_or_none(fields["value"]),
        topic=fields.get("topic"),
        headers=[_header(h) for h in fields.get("headers") or ()],
        offset=fields.get("offset"),
        partition=fields.get("partition"),
        # Spark's timestampType 0/1 (create / log append time) is confluent-kafka's 1/2.
        timestamp=None if stamp is None else (int(fields.get("timestampType") or 0) + 1, _ms(stamp)),
    )


class KafkaSource(_SparkReadSource):
    """Reads ``topics`` from the Kafka cluster at ``brokers`` (``host:port`` strings) as
    :class:`KafkaSourceMessage` items with ``bytes`` keys and values, through Spark's Kafka source.

    ``tail`` (default True) keeps reading new messages (a streaming DataFrame); ``tail=False``
    reads up to the end of each partition as it is at the start (a batch DataFrame).
    ``starting_offset`` is :data:`OFFSET_BEGINNING` (default) or :data:`OFFSET_END`. A partition's
    resume state is its offset in the streaming query's checkpoint. See the module docstring for
    ``add_config``, ``batch_size`` and ``raise_on_errors``.
    """

    def __init__(
        self,
        brokers: Iterable[str],
        topics: Iterable[str],
        tail: bool = True,
        starting_offset: int = OFFSET_BEGINNING,
        add_config: dict[str, str] | None = None,
        batch_size: int = 1000,
        raise_on_errors: bool = True,
    ) -> None:
        _check_iterable("brokers", brokers)
        _check_iterable("topics", topics)
        self._brokers = list(brokers)
        self._topics = list(topics)
        self._tail = tail
        self._starting_offset = starting_offset
        self._add_config = {} if add_config is None else dict(add_config)
        self._batch_size = batch_size
        self._raise_on_errors = raise_on_errors

    def spark_options(self) -> dict[str, str]:
        """The options of Spark's ``kafka`` source (``spark.read`` / ``spark.readStream``) that read
        what this source reads."""
        starts = {OFFSET_BEGINNING: "earliest", OFFSET_END: "latest"}
        if self._starting_offset not in starts:
            raise ValueError(
                f"starting_offset must be OFFSET_BEGINNING ({OFFSET_BEGINNING}) or OFFSET_END ({OFFSET_END}) "
                f"on Spark; got {self._starting_offset!r}"
            )
        options = _client_options(self._brokers, self._add_config)
        options.update(
            subscribe=",".join(self._topics),
            startingOffsets=starts[self._starting_offset],
            includeHeaders="true",
        )
        if not self._tail:
            options["endingOffsets"] = "latest"
        return options

    def dataframe(self, spark: Any) -> Any:
        options = self.spark_options()
        reader = spark.readStream if self._tail else spark.read
        return _with_connector("KafkaSource", lambda: reader.format("kafka").options(**options).load())

    def item(self) -> Callable[[Any], KafkaSourceMessage[bytes | None, bytes | None]]:
        return message_of_row

    def in_process_alternative(self) -> str:
        return _ON_SPARK


# Sink. -----------------------------------------------------------------------------------------

_SINK_SCHEMA = (
    "key binary, value binary, topic string, partition int, headers array<struct<key:string,value:binary>>"
)


def _as_bytes(what: str, value: Any) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    raise TypeError(f"KafkaSinkMessage {what} must be bytes, str or None; got a `{type(value).__name__}`")


class KafkaSink(_SparkWriteSink):
    """Writes :class:`KafkaSinkMessage` items (a :class:`KafkaSourceMessage` is written as its
    ``to_sink()``) to ``topic`` (None: each message's own topic) on the Kafka cluster at
    ``brokers``, through Spark's Kafka writer. At-least-once, as in Bytewax."""

    def __init__(
        self,
        brokers: Iterable[str],
        topic: str | None,
        add_config: dict[str, str] | None = None,
    ) -> None:
        self._brokers = list(brokers)
        self._topic = topic
        self._add_config = {} if add_config is None else dict(add_config)

    def spark_options(self) -> dict[str, str]:
        """The options of Spark's ``kafka`` sink (``df.write`` / ``df.writeStream``) that write
        where this sink writes."""
        options = _client_options(self._brokers, self._add_config)
        if self._topic is not None:
            options["topic"] = self._topic
        return options

    def rows(self, items: Iterable[Any]) -> list[tuple[Any, ...]]:
        """The rows (``key, value, topic, partition, headers``) Spark writes for ``items``."""
        rows = []
        for item in items:
            msg = item.to_sink() if isinstance(item, KafkaSourceMessage) else item
            if not isinstance(msg, KafkaSinkMessage):
                raise TypeError(f"KafkaSink writes KafkaSinkMessage items; got a `{type(msg).__name__}`")
            topic = msg.topic if msg.topic is not None else self._topic
            if topic is None:
                raise RuntimeError(f"No topic to produce to for {msg}")
            if msg.timestamp:
                raise NotImplementedError(
                    f"KafkaSinkMessage timestamp {msg.timestamp}: Spark's Kafka writer sets the timestamp "
                    "itself; leave it 0"
                )
            headers = [(k, _as_bytes("header", v)) for k, v in msg.headers]
            rows.append(
                (_as_bytes("key", msg.key), _as_bytes("value", msg.value), topic, msg.partition, headers)
            )
        return rows

    def write_items(self, spark: Any, step_id: str, items: list[Any]) -> None:
        options = self.spark_options()
        options.pop("topic", None)  # every row names its topic
        df = spark.createDataFrame(self.rows(items), _SINK_SCHEMA)
        _with_connector(
            f"step {step_id}: KafkaSink", lambda: df.write.format("kafka").options(**options).save()
        )

    def in_process_alternative(self) -> str:
        return _ON_SPARK
