"""PyFlink's Kafka connectors and row formats, without a broker: the builders' settings become
the options of Spark's Kafka source and sink, values become records with the (de)serialization
schemas, and what Spark's connector cannot do raises NotImplementedError when used. (Reading and
writing for real needs a broker; the missing-connector error is checked on Spark in
``test_connectors_on_spark.py``.)"""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from fs_compat.common import Configuration, Row, SimpleStringSchema, Types, WatermarkStrategy
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.datastream.connectors import DeliveryGuarantee
from fs_compat.datastream.connectors.kafka import (
    FlinkKafkaConsumer,
    FlinkKafkaProducer,
    KafkaOffsetResetStrategy,
    KafkaOffsetsInitializer,
    KafkaRecordSerializationSchema,
    KafkaSink,
    KafkaSource,
    KafkaTopicPartition,
    KafkaTopicSelector,
    Semantic,
    kafka_package,
)
from fs_compat.datastream.formats.csv import (
    CsvReaderFormat,
    CsvRowDeserializationSchema,
    CsvRowSerializationSchema,
    CsvSchema,
)
from fs_compat.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema

ROW = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()])


def _source_builder() -> Any:
    return (
        KafkaSource.builder()
        .set_bootstrap_servers("b1:9092,b2:9092")
        .set_value_only_deserializer(SimpleStringSchema())
    )


def test_source_settings_map_to_spark_options() -> None:
    source = (
        _source_builder()
        .set_topics("t1", "t2")
        .set_group_id("group")
        .set_client_id_prefix("client")
        .set_property("security.protocol", "SSL")
        .set_starting_offsets(KafkaOffsetsInitializer.latest())
        .build()
    )
    assert source.spark_options() == {
        "kafka.bootstrap.servers": "b1:9092,b2:9092",
        "subscribe": "t1,t2",
        "kafka.group.id": "group",
        "kafka.client.id": "client",
        "kafka.security.protocol": "SSL",
        "startingOffsets": "latest",
    }
    assert source.get_boundedness() == "CONTINUOUS_UNBOUNDED"


def test_the_default_start_is_earliest_and_bounded_reads_end_at_the_stopping_offsets() -> None:
    source = (
        _source_builder().set_topic_pattern("orders-.*").set_bounded(KafkaOffsetsInitializer.latest()).build()
    )
    assert source.spark_options() == {
        "kafka.bootstrap.servers": "b1:9092,b2:9092",
        "subscribePattern": "orders-.*",
        "startingOffsets": "earliest",
        "endingOffsets": "latest",
    }
    assert source.get_boundedness() == "BOUNDED"


def test_partitions_offsets_and_timestamps_as_spark_json() -> None:
    partitions = {KafkaTopicPartition("t", 1), KafkaTopicPartition("t", 0), KafkaTopicPartition("u", 2)}
    offsets = {KafkaTopicPartition("t", 0): 5, KafkaTopicPartition("t", 1): 7}
    source = (
        _source_builder()
        .set_partitions(partitions)
        .set_starting_offsets(KafkaOffsetsInitializer.offsets(offsets, KafkaOffsetResetStrategy.EARLIEST))
        .set_bounded(KafkaOffsetsInitializer.timestamp(1700000000000))
        .build()
    )
    options = source.spark_options()
    assert json.loads(options["assign"]) == {"t": [0, 1], "u": [2]}
    assert json.loads(options["startingOffsets"]) == {"t": {"0": 5, "1": 7}}
    assert options["endingTimestamp"] == "1700000000000"
    start = (
        _source_builder().set_topics("t").set_starting_offsets(KafkaOffsetsInitializer.timestamp(42)).build()
    )
    assert start.spark_options()["startingTimestamp"] == "42"


def test_spark_owned_consumer_properties_are_not_passed() -> None:
    source = (
        _source_builder()
        .set_topics("t")
        .set_properties({"auto.offset.reset": "latest", "fetch.min.bytes": "1"})
    )
    options = source.build().spark_options()
    assert "kafka.auto.offset.reset" not in options
    assert options["kafka.fetch.min.bytes"] == "1"


@pytest.mark.parametrize(
    ("builder", "message"),
    [
        (
            lambda: KafkaSource.builder().set_topics("t").set_value_only_deserializer(SimpleStringSchema()),
            "bootstrap",
        ),
        (
            lambda: (
                KafkaSource.builder()
                .set_bootstrap_servers("b")
                .set_value_only_deserializer(SimpleStringSchema())
            ),
            "subscribe",
        ),
        (lambda: KafkaSource.builder().set_bootstrap_servers("b").set_topics("t"), "Deserialization schema"),
    ],
)
def test_source_builder_requires_servers_topics_and_deserializer(builder: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        builder().build()


def test_unsupported_offsets_raise_when_used_naming_the_alternatives() -> None:
    committed = (
        _source_builder().set_topics("t").set_starting_offsets(KafkaOffsetsInitializer.committed_offsets())
    )
    source = committed.build()  # building is fine: PyFlink code builds its sources before running
    with pytest.raises(NotImplementedError, match=r"committed_offsets\(\).*use earliest\(\), latest\(\)"):
        source.spark_options()
    env = StreamExecutionEnvironment.get_execution_environment()
    with pytest.raises(NotImplementedError, match="committed_offsets"):
        env.from_source(source, WatermarkStrategy.no_watermarks(), "kafka")
    with pytest.raises(NotImplementedError, match=r"set_bounded\(\.\.\.\)"):
        _source_builder().set_unbounded(KafkaOffsetsInitializer.latest())
    with pytest.raises(NotImplementedError, match="earliest"):
        _source_builder().set_topics("t").set_bounded(
            KafkaOffsetsInitializer.earliest()
        ).build().spark_options()


def test_an_unbounded_kafka_source_needs_the_spark_target() -> None:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", "local")
    )
    ds = env.from_source(
        _source_builder().set_topics("t").build(), WatermarkStrategy.no_watermarks(), "kafka"
    )
    assert ds.get_type() == Types.STRING()
    with pytest.raises(ValueError, match="never ends"):
        ds.execute_and_collect(limit=1)


def test_legacy_consumer_maps_its_properties_and_start() -> None:
    consumer = FlinkKafkaConsumer(
        "t",
        SimpleStringSchema(),
        {"bootstrap.servers": "b:9092", "group.id": "g", "auto.offset.reset": "earliest"},
    )
    assert consumer.spark_options() == {
        "kafka.bootstrap.servers": "b:9092",
        "kafka.group.id": "g",
        "subscribe": "t",
        "startingOffsets": "earliest",
    }
    consumer.set_start_from_timestamp(99)
    assert consumer.spark_options()["startingTimestamp"] == "99"
    assert consumer.set_start_from_latest().spark_options()["startingOffsets"] == "latest"
    assert FlinkKafkaConsumer(["a", "b"], SimpleStringSchema(), {}).spark_options()["subscribe"] == "a,b"
    assert consumer.get_produced_type() == Types.STRING()
    env = StreamExecutionEnvironment.get_execution_environment()
    assert env.add_source(consumer).get_type() == Types.STRING()


def _record_schema() -> KafkaRecordSerializationSchema:
    return (
        KafkaRecordSerializationSchema.builder()
        .set_topic("out")
        .set_key_serialization_schema(SimpleStringSchema())
        .set_value_serialization_schema(SimpleStringSchema())
        .build()
    )


def test_sink_settings_map_to_spark_options_and_values_to_records() -> None:
    sink = (
        KafkaSink.builder()
        .set_bootstrap_servers("b:9092")
        .set_record_serializer(_record_schema())
        .set_delivery_guarantee(DeliveryGuarantee.AT_LEAST_ONCE)
        .set_property("acks", "all")
        .build()
    )
    assert sink.spark_options() == {"kafka.bootstrap.servers": "b:9092", "kafka.acks": "all", "topic": "out"}
    assert _record_schema().record("v") == ("out", b"v", b"v")


class _ByCategory(KafkaTopicSelector):
    def apply(self, data: Any) -> str:
        return f"topic-{data['category']}"


def test_topic_selectors_pick_each_records_topic() -> None:
    value_schema = (
        JsonRowSerializationSchema.builder()
        .with_type_info(Types.ROW_NAMED(["category"], [Types.STRING()]))
        .build()
    )
    for selector in (_ByCategory(), lambda row: "topic-" + row["category"]):
        schema = (
            KafkaRecordSerializationSchema.builder()
            .set_topic_selector(selector)
            .set_value_serialization_schema(value_schema)
            .build()
        )
        assert schema.record(Row(category="a")) == ("topic-a", None, b'{"category":"a"}')
    sink = KafkaSink.builder().set_bootstrap_servers("b").set_record_serializer(schema).build()
    assert "topic" not in sink.spark_options()  # each record carries its own


def test_sink_builders_require_their_settings() -> None:
    with pytest.raises(ValueError, match="No topic present"):
        KafkaRecordSerializationSchema.builder().set_value_serialization_schema(SimpleStringSchema()).build()
    with pytest.raises(ValueError, match="No value serializer"):
        KafkaRecordSerializationSchema.builder().set_topic("t").build()
    with pytest.raises(ValueError, match="bootstrapServers"):
        KafkaSink.builder().set_record_serializer(_record_schema()).build()
    with pytest.raises(ValueError, match="recordSerializer"):
        KafkaSink.builder().set_bootstrap_servers("b").build()


def test_row_field_extractor_gives_a_bytes_field() -> None:
    from fs_compat.common.serialization import RowFieldExtractorSchema

    schema = (
        KafkaRecordSerializationSchema.builder()
        .set_topic("t")
        .set_key_serialization_schema(RowFieldExtractorSchema(0))
        .set_value_serialization_schema(RowFieldExtractorSchema(1))
        .build()
    )
    assert schema.record(Row(b"k", b"v")) == ("t", b"k", b"v")
    with pytest.raises(TypeError, match="field 0 must be bytes, got str"):
        schema.record(Row("k", b"v"))
    with pytest.raises(ValueError, match="Field index must be non-negative, got: -1"):
        RowFieldExtractorSchema(-1)


def test_exactly_once_raises_when_the_sink_is_used() -> None:
    sink = (
        KafkaSink.builder()
        .set_bootstrap_servers("b")
        .set_record_serializer(_record_schema())
        .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
        .set_transactional_id_prefix("tx")
        .build()
    )
    env = StreamExecutionEnvironment.get_execution_environment()
    ds = env.from_collection(["a"], Types.STRING())
    with pytest.raises(NotImplementedError, match=r"at least once.*AT_LEAST_ONCE"):
        ds.sink_to(sink)
    producer = FlinkKafkaProducer(
        "t", SimpleStringSchema(), {"bootstrap.servers": "b"}, semantic=Semantic.EXACTLY_ONCE
    )
    with pytest.raises(NotImplementedError, match="at least once"):
        ds.add_sink(producer)
    legacy = FlinkKafkaProducer("t", SimpleStringSchema(), {"bootstrap.servers": "b"})
    assert legacy.spark_options() == {"kafka.bootstrap.servers": "b", "topic": "t"}


def test_kafka_package_names_the_running_spark() -> None:
    import pyspark

    assert kafka_package() == f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}"


# ---- formats ---------------------------------------------------------------------------------


def test_json_rows_round_trip_with_nested_types() -> None:
    info = Types.ROW_NAMED(
        ["id", "tags", "when", "inner", "raw"],
        [
            Types.LONG(),
            Types.LIST(Types.STRING()),
            Types.SQL_DATE(),
            Types.ROW_NAMED(["x"], [Types.DOUBLE()]),
            Types.PRIMITIVE_ARRAY(Types.BYTE()),
        ],
    )
    value = Row(id=7, tags=["a", "b"], when=datetime.date(2024, 2, 29), inner=Row(x=1.5), raw=b"\x00\xff")
    data = JsonRowSerializationSchema.builder().with_type_info(info).build().serialize(value)
    assert json.loads(data) == {
        "id": 7,
        "tags": ["a", "b"],
        "when": "2024-02-29",
        "inner": {"x": 1.5},
        "raw": "AP8=",
    }
    back = JsonRowDeserializationSchema.builder().type_info(info).build().deserialize(data)
    assert back == value
    assert back.as_dict() == value.as_dict()


def test_json_missing_fields_and_parse_errors() -> None:
    lenient = JsonRowDeserializationSchema.builder().type_info(ROW).build()
    assert lenient.deserialize(b'{"id": 1}') == Row(id=1, name=None)
    strict = JsonRowDeserializationSchema.builder().type_info(ROW).fail_on_missing_field().build()
    with pytest.raises(ValueError, match="Could not find field with name 'name'"):
        strict.deserialize(b'{"id": 1}')
    with pytest.raises(ValueError, match="Failed to deserialize JSON"):
        lenient.deserialize(b"{not json")
    skipping = JsonRowDeserializationSchema.builder().type_info(ROW).ignore_parse_errors().build()
    assert skipping.deserialize(b"{not json") is None
    with pytest.raises(TypeError, match="Typeinfo should be set"):
        JsonRowSerializationSchema.builder().build()
    with pytest.raises(NotImplementedError, match="type_info"):
        JsonRowDeserializationSchema.builder().json_schema("{}")


def test_csv_rows_round_trip_with_delimiters_quotes_and_nulls() -> None:
    info = Types.ROW_NAMED(
        ["id", "tags", "note", "ok"], [Types.INT(), Types.LIST(Types.INT()), Types.STRING(), Types.BOOLEAN()]
    )
    out = (
        CsvRowSerializationSchema.Builder(info)
        .set_field_delimiter("|")
        .set_array_element_delimiter(",")
        .set_null_literal("NULL")
        .build()
    )
    data = out.serialize(Row(id=1, tags=[1, 2], note="a|b", ok=True))
    assert data == b'1|1,2|"a|b"|true\n'
    assert out.serialize(Row(id=2, tags=None, note=None, ok=False)) == b"2|NULL|NULL|false\n"
    back = (
        CsvRowDeserializationSchema.Builder(info)
        .set_field_delimiter("|")
        .set_array_element_delimiter(",")
        .set_null_literal("NULL")
        .build()
    )
    assert back.deserialize(data) == Row(id=1, tags=[1, 2], note="a|b", ok=True)
    assert back.deserialize(b"2|NULL|NULL|false") == Row(id=2, tags=None, note=None, ok=False)
    with pytest.raises(ValueError, match="expected 4 fields, got 2"):
        back.deserialize(b"1|2")
    lenient = (
        CsvRowDeserializationSchema.Builder(info)
        .set_ignore_parse_errors(True)
        .set_allow_comments(True)
        .build()
    )
    assert lenient.deserialize(b"x,y") is None
    assert lenient.deserialize(b"# comment") is None


def test_csv_schema_names_spark_csv_as_the_alternative() -> None:
    with pytest.raises(NotImplementedError, match=r"spark\.read\.csv"):
        CsvSchema.builder()
    with pytest.raises(NotImplementedError, match="Table API"):
        CsvReaderFormat.for_schema(None)  # type: ignore[arg-type]


def test_a_deserializer_none_skips_the_record() -> None:
    from fs_compat.datastream.connectors._kafka import _value_decoder

    skipping = JsonRowDeserializationSchema.builder().type_info(ROW).ignore_parse_errors().build()
    decode = _value_decoder(skipping)
    assert decode(Row(value=b'{"id": 3, "name": "c"}')) == (Row(id=3, name="c"),)
    assert decode(Row(value=b"oops")) == ()
    assert decode(Row(value=None)) == ()
