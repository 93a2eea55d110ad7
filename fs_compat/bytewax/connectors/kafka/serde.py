"""Avro serializers for Kafka messages (``bytewax.connectors.kafka.serde``).

:class:`PlainAvroSerializer` and :class:`PlainAvroDeserializer` encode and decode raw Avro (no
Schema Registry framing: no magic byte, no schema id), for
:func:`fs_compat.bytewax.connectors.kafka.operators.serialize_value` and the other Kafka operators,
called as ``serializer(obj, ctx)``. As in Bytewax they use ``fastavro``, which Bytewax's ``kafka``
extra installs and fs-compat does not: the module imports without it, and making a serializer
without it raises ``ImportError`` naming it (``pip install fastavro``). For Schema Registry
framing use confluent-kafka's ``confluent_kafka.schema_registry.avro.AvroSerializer``, as with
Bytewax; ``schema`` may be a JSON string or a schema object with a ``schema_str`` (confluent-kafka's
``Schema``).
"""

from __future__ import annotations

import importlib
import io
import json
from typing import Any

__all__ = ["PlainAvroDeserializer", "PlainAvroSerializer"]


def _fastavro() -> Any:
    try:
        return importlib.import_module("fastavro")
    except ImportError as exc:
        raise ImportError(
            "fs_compat.bytewax.connectors.kafka.serde needs fastavro, as Bytewax's does "
            "(bytewax[kafka] installs it): pip install fastavro"
        ) from exc


def _parsed(schema: Any, named_schemas: dict[str, Any] | None) -> Any:
    text = schema if isinstance(schema, str) else getattr(schema, "schema_str", None)
    if not isinstance(text, str):
        raise TypeError(f"schema must be a JSON string or have a `schema_str`; got a {type(schema)!r}")
    return _fastavro().parse_schema(json.loads(text), named_schemas=named_schemas)


class PlainAvroSerializer:
    """Encode an object as raw Avro with ``schema`` (a JSON string or an object with
    ``schema_str``); ``named_schemas`` holds the schemas it refers to, as ``fastavro.parse_schema``
    takes them."""

    def __init__(self, schema: Any, named_schemas: dict[str, Any] | None = None) -> None:
        self.schema = _parsed(schema, named_schemas)

    def __call__(self, obj: object | None, ctx: object | None = None) -> bytes | None:
        buf = io.BytesIO()
        _fastavro().schemaless_writer(buf, self.schema, obj)
        return buf.getvalue()


class PlainAvroDeserializer:
    """Decode raw Avro (``bytes``, or a ``str`` taken as its UTF-8 bytes) with ``schema``; ``None``
    raises ``ValueError``. Data framed by a Schema Registry serializer does not decode."""

    def __init__(self, schema: Any, named_schemas: dict[str, Any] | None = None) -> None:
        self.schema = _parsed(schema, named_schemas)

    def __call__(self, value: bytes | str | None, ctx: object | None = None) -> object | None:
        if value is None:
            raise ValueError("Can't deserialize None data")
        data = value.encode() if isinstance(value, str) else value
        decoded: object = _fastavro().schemaless_reader(io.BytesIO(data), self.schema, None)
        return decoded
