"""``fs_compat.bytewax.connectors.kafka.serde``: Bytewax's raw Avro serializers over fastavro."""

from __future__ import annotations

import importlib
import json
import sys

import pytest

SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "Reading",
        "fields": [{"name": "sensor", "type": "string"}, {"name": "celsius", "type": ["null", "double"]}],
    }
)


def test_imports_without_fastavro_and_names_it_when_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fastavro", None)  # as if it were not installed
    monkeypatch.delitem(sys.modules, "fs_compat.bytewax.connectors.kafka.serde", raising=False)
    serde = importlib.import_module("fs_compat.bytewax.connectors.kafka.serde")
    with pytest.raises(ImportError, match="pip install fastavro"):
        serde.PlainAvroSerializer(SCHEMA)
    with pytest.raises(ImportError, match="needs fastavro"):
        serde.PlainAvroDeserializer(SCHEMA)


def test_a_schema_that_is_neither_text_nor_has_schema_str_is_refused() -> None:
    from fs_compat.bytewax.connectors.kafka.serde import PlainAvroSerializer

    with pytest.raises(TypeError, match="schema_str"):
        PlainAvroSerializer({"type": "string"})


def test_round_trip_raw_avro_with_a_schema_string_or_schema_object() -> None:
    from fs_compat.bytewax.connectors.kafka.serde import PlainAvroDeserializer, PlainAvroSerializer

    class RegistrySchema:  # what confluent-kafka's Schema offers
        schema_str = SCHEMA

    reading = {"sensor": "north", "celsius": 21.5}
    data = PlainAvroSerializer(SCHEMA)(reading)
    assert isinstance(data, bytes)
    assert data[:1] != b"\x00"  # raw Avro: no Schema Registry magic byte, the string's length first
    assert PlainAvroDeserializer(RegistrySchema())(data) == reading
    assert PlainAvroDeserializer(SCHEMA)(data, None) == reading
    with pytest.raises(ValueError, match="None"):
        PlainAvroDeserializer(SCHEMA)(None)
