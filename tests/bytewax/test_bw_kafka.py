"""``fs_compat.bytewax.connectors.kafka``: Bytewax 0.21.1's Kafka names on Spark's Kafka source
and sink. No broker can run here: these tests check the option mapping, the messages, the
operators on messages fed by ``TestingSource``, the path through Spark with a DataFrame shaped
like Spark's Kafka source, and the errors (no Kafka connector in pyspark; nothing in-process)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.connectors.kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    KafkaError,
    KafkaSink,
    KafkaSinkMessage,
    KafkaSource,
    KafkaSourceMessage,
    kafka_package,
    message_of_row,
)
from fs_compat.bytewax.connectors.kafka import operators as kop
from fs_compat.bytewax.connectors.kafka.operators import SerdeError
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main

BROKERS = ["b1:9092", "b2:9092"]

# Options. --------------------------------------------------------------------------------------


def test_source_options_map_bytewax_arguments_onto_spark_kafka_options() -> None:
    assert KafkaSource(BROKERS, ["in", "other"]).spark_options() == {
        "kafka.bootstrap.servers": "b1:9092,b2:9092",
        "subscribe": "in,other",
        "startingOffsets": "earliest",
        "includeHeaders": "true",
    }
    bounded = KafkaSource(BROKERS, ["in"], tail=False, starting_offset=OFFSET_END).spark_options()
    assert (bounded["startingOffsets"], bounded["endingOffsets"]) == ("latest", "latest")
    earliest = KafkaSource(BROKERS, ["in"], starting_offset=OFFSET_BEGINNING).spark_options()
    assert earliest["startingOffsets"] == "earliest"
    with pytest.raises(ValueError, match="starting_offset must be OFFSET_BEGINNING"):
        KafkaSource(BROKERS, ["in"], starting_offset=42).spark_options()


def test_brokers_and_topics_must_not_be_strings() -> None:
    with pytest.raises(TypeError, match="brokers must be an iterable and not a string"):
        KafkaSource("b1:9092", ["in"])
    with pytest.raises(TypeError, match="topics must be an iterable and not a string"):
        KafkaSource(BROKERS, "in")


def test_add_config_becomes_spark_kafka_client_options() -> None:
    config = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanisms": "SCRAM-SHA-512",
        "sasl.username": "ada",
        "sasl.password": 'pa"ss',
        "group.id": "ignored",
        "enable.auto.commit": "false",
        "fetch.min.bytes": "10",
    }
    options = KafkaSource(BROKERS, ["in"], add_config=config).spark_options()
    assert {k: v for k, v in options.items() if k.startswith("kafka.")} == {
        "kafka.bootstrap.servers": "b1:9092,b2:9092",
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            'username="ada" password="pa\\"ss";'
        ),
        "kafka.fetch.min.bytes": "10",
    }
    with pytest.raises(ValueError, match=re.escape("'auto.offset.reset' cannot be set")):
        KafkaSource(BROKERS, ["in"], add_config={"auto.offset.reset": "earliest"}).spark_options()


def test_sink_options_and_rows() -> None:
    sink = KafkaSink(BROKERS, "out", add_config={"compression.type": "lz4"})
    assert sink.spark_options() == {
        "kafka.bootstrap.servers": "b1:9092,b2:9092",
        "kafka.compression.type": "lz4",
        "topic": "out",
    }
    source_msg = KafkaSourceMessage(b"k", b"v", topic="in", headers=[("h", b"1")], offset=3, partition=0)
    rows = sink.rows(
        [KafkaSinkMessage("k2", "v2", partition=1), source_msg, KafkaSinkMessage(None, b"x", topic="t")]
    )
    assert rows == [
        (b"k2", b"v2", "out", 1, []),
        (b"k", b"v", "out", None, [("h", b"1")]),  # a source message is written as its to_sink()
        (None, b"x", "t", None, []),
    ]
    with pytest.raises(RuntimeError, match="No topic to produce to for"):
        KafkaSink(BROKERS, None).rows([KafkaSinkMessage(b"k", b"v")])
    with pytest.raises(NotImplementedError, match="timestamp"):
        sink.rows([KafkaSinkMessage(b"k", b"v", timestamp=5)])
    with pytest.raises(TypeError, match="KafkaSinkMessage items"):
        sink.rows([("k", "v")])


def test_kafka_package_is_the_connector_of_the_running_spark() -> None:
    import pyspark

    assert kafka_package() == f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}"


# Messages. -------------------------------------------------------------------------------------


def test_messages_of_spark_kafka_rows() -> None:
    stamp = datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    row = {
        "key": bytearray(b"k"),
        "value": b"v",
        "topic": "in",
        "partition": 2,
        "offset": 41,
        "timestamp": stamp,
        "timestampType": 0,
        "headers": [{"key": "h", "value": b"1"}, ("g", None)],
    }
    assert message_of_row(row) == KafkaSourceMessage(
        key=b"k",
        value=b"v",
        topic="in",
        headers=[("h", b"1"), ("g", b"")],
        offset=41,
        partition=2,
        timestamp=(1, int(stamp.timestamp() * 1000)),  # Spark's type 0 is confluent-kafka's 1 (create time)
    )
    msg = message_of_row({**row, "key": None, "headers": None})
    assert msg.key is None and msg.headers == []
    assert msg.to_sink() == KafkaSinkMessage(None, b"v", headers=[])


# Where it runs. --------------------------------------------------------------------------------


def test_in_process_the_source_and_sink_raise_naming_the_spark_target() -> None:
    flow = Dataflow("k")
    op.output("out", op.input("inp", flow, KafkaSource(BROKERS, ["in"])), TestingSink([]))
    with pytest.raises(NotImplementedError, match=r"KafkaSource reads through Spark.*FS_COMPAT_TARGET=spark"):
        run_main(flow, _target="local")
    flow = Dataflow("k")
    op.output(
        "out", op.input("inp", flow, TestingSource([KafkaSinkMessage(b"k", b"v")])), KafkaSink(BROKERS, "t")
    )
    with pytest.raises(NotImplementedError, match=r"KafkaSink writes through Spark.*FS_COMPAT_TARGET=spark"):
        run_main(flow, _target="local")


# Operators. ------------------------------------------------------------------------------------


def _json(data: bytes | None, ctx: Any) -> Any:
    assert ctx.topic == "in"
    return None if data is None else json.loads(data)


def test_deserialize_splits_messages_and_errors() -> None:
    msgs = [
        KafkaSourceMessage(b'"a"', b'{"n": 1}', topic="in"),
        KafkaSourceMessage(b'"b"', b"not json", topic="in"),
    ]
    oks: list[Any] = []
    errs: list[Any] = []
    flow = Dataflow("de")
    out = kop.deserialize(
        "de", op.input("inp", flow, TestingSource(msgs)), key_deserializer=_json, val_deserializer=_json
    )
    op.output("oks", out.oks, TestingSink(oks))
    op.output("errs", out.errs, TestingSink(errs))
    run_main(flow)
    assert oks == [KafkaSourceMessage("a", {"n": 1}, topic="in")]
    [err] = errs
    assert isinstance(err, KafkaError) and err.msg == msgs[1]  # the original message
    assert isinstance(err.err, SerdeError) and err.err.code() == "_VALUE_DESERIALIZATION"


def test_serialize_makes_sink_messages() -> None:
    def encode(obj: Any, ctx: Any) -> bytes:
        return json.dumps([ctx.field, obj]).encode()

    out: list[Any] = []
    flow = Dataflow("ser")
    s = op.input("inp", flow, TestingSource([KafkaSourceMessage("k", 1, topic="in", offset=7)]))
    op.output("out", kop.serialize("ser", s, key_serializer=encode, val_serializer=encode), TestingSink(out))
    run_main(flow)
    assert out == [KafkaSinkMessage(b'["key", "k"]', b'["value", 1]')]


def test_kafka_operators_build_flows_like_bytewax() -> None:
    flow = Dataflow("kop")
    kin = kop.input("kafka-in", flow, brokers=BROKERS, topics=["in"], tail=False)
    kop.output("kafka-out", kin.oks, brokers=BROKERS, topic="out")
    assert [s.step_id for s in flow.substeps] == ["kop.kafka-in", "kop.kafka-out"]
    with pytest.raises(NotImplementedError, match="KafkaSource reads through Spark"):
        run_main(flow, _target="local")


# On Spark. -------------------------------------------------------------------------------------


KAFKA_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
    "timestampType int, headers array<struct<key:string,value:binary>>"
)


class _FakeKafka(KafkaSource):
    """A KafkaSource whose DataFrame is made here, shaped like Spark's Kafka source's."""

    def dataframe(self, spark: Any) -> Any:
        schema = KAFKA_SCHEMA
        stamp = datetime(2024, 1, 1, tzinfo=UTC)
        rows = [
            (b"a", b"1", "in", 0, 0, stamp, 0, [("h", b"x")]),
            (b"b", b"2", "in", 1, 0, stamp, 1, []),
            (b"a", b"3", "in", 0, 1, stamp, 0, None),
        ]
        return spark.createDataFrame(rows, schema)


@pytest.mark.spark
@pytest.mark.slow
def test_on_spark_messages_flow_through_and_a_missing_connector_names_the_package() -> None:
    # Rows shaped like Spark's Kafka source become KafkaSourceMessages and run through the flow.
    out: list[Any] = []
    flow = Dataflow("k")
    s = op.key_on(
        "key", op.input("inp", flow, _FakeKafka(BROKERS, ["in"], tail=False)), lambda m: m.key.decode()
    )
    s = op.stateful_map("sum", op.map_value("n", s, lambda m: int(m.value)), lambda t, n: ((t or 0) + n,) * 2)
    op.output("out", s, TestingSink(out))
    inspected: list[Any] = []
    flow2 = Dataflow("k2")
    op.output("out", op.input("inp", flow2, _FakeKafka(BROKERS, ["in"], tail=False)), TestingSink(inspected))
    run_main(flow, _target="spark")
    run_main(flow2, _target="spark")
    assert sorted(out) == [("a", 1), ("a", 4), ("b", 2)]
    assert [(m.key, m.headers, m.timestamp) for m in sorted(inspected, key=lambda m: m.value)] == [
        (b"a", [("h", b"x")], (1, 1704067200000)),
        (b"b", [], (2, 1704067200000)),
        (b"a", [], (1, 1704067200000)),
    ]
    # pyspark has no Kafka connector here: reading and writing name the package to add.
    package = re.escape(
        f"spark.jars.packages=org.apache.spark:spark-sql-kafka-0-10_2.13:{_pyspark_version()}"
    )
    flow = Dataflow("k3")
    op.output("out", op.input("inp", flow, KafkaSource(BROKERS, ["in"], tail=False)), TestingSink([]))
    with pytest.raises(RuntimeError, match=package):
        run_main(flow, _target="spark")
    flow = Dataflow("k4")
    op.output(
        "out", op.input("inp", flow, TestingSource([KafkaSinkMessage(b"k", b"v")])), KafkaSink(BROKERS, "t")
    )
    with pytest.raises(RuntimeError, match=package):
        run_main(flow, _target="spark")
    # A tailing source is a streaming DataFrame: run_main cannot run it (to_dataframe can).
    flow = Dataflow("k5")
    op.output("out", op.input("inp", flow, KafkaSource(BROKERS, ["in"])), TestingSink([]))
    with pytest.raises(RuntimeError, match=package):
        run_main(flow, _target="spark")


def _pyspark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


class _FakeKafkaStream(KafkaSource):
    """A tailing KafkaSource whose stream is parquet files with the Kafka source's schema."""

    def __init__(self, folder: Path) -> None:
        super().__init__(BROKERS, ["in"])
        self.folder = folder

    def dataframe(self, spark: Any) -> Any:
        return (
            spark.readStream.schema(KAFKA_SCHEMA)
            .option("maxFilesPerTrigger", 1)
            .parquet(str(self.folder / "*"))
        )


def _sum_values(total: int | None, msg: KafkaSourceMessage[bytes, bytes]) -> tuple[int, int]:
    total = (total or 0) + int(msg.value)
    return total, total


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.classic_only  # Connect slice: README
def test_a_tailing_source_is_a_streaming_query_that_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    from fs_compat.bytewax.spark import to_dataframe
    from fs_compat.common import Types
    from fs_compat.spark import spark_session

    spark = spark_session()
    source, checkpoint, sink = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    stamp = datetime(2024, 1, 1, tzinfo=UTC)

    def produce(name: str, messages: list[tuple[bytes, bytes, int]]) -> None:
        rows = [(k, v, "in", 0, offset, stamp, 0, []) for k, v, offset in messages]
        spark.createDataFrame(rows, KAFKA_SCHEMA).coalesce(1).write.parquet(str(source / name))

    def run() -> list[tuple[str, int]]:
        flow = Dataflow("sums")
        s = op.key_on("key", op.input("inp", flow, _FakeKafkaStream(source)), lambda m: m.key.decode())
        out = to_dataframe(
            op.stateful_map("sum", s, _sum_values), Types.TUPLE([Types.STRING(), Types.LONG()])
        )
        assert out.isStreaming
        query = (
            out.writeStream.format("parquet")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start(str(sink))
        )
        query.awaitTermination()
        assert query.exception() is None
        return sorted((r.f0, r.f1) for r in spark.read.parquet(str(sink)).collect())

    produce("1", [(b"a", b"1", 0), (b"b", b"10", 1)])
    assert run() == [("a", 1), ("b", 10)]
    produce("2", [(b"a", b"2", 2)])
    # A new query from the same checkpoint: it reads only the new messages, with each key's state.
    assert run() == [("a", 1), ("a", 3), ("b", 10)]
