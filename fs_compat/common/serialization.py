"""PyFlink's ``pyflink.common.serialization``: how connectors turn values into bytes and back.

In PyFlink these wrap Java objects; here they are plain Python, used by the file and Kafka
connectors of ``fs_compat.datastream.connectors`` on every target:

>>> SimpleStringSchema().serialize("héllo")
b'h\\xc3\\xa9llo'
>>> SimpleStringSchema().deserialize(b"h\\xc3\\xa9llo")
'héllo'
>>> Encoder.simple_string_encoder().encode_line("a b")
b'a b\\n'
"""

from __future__ import annotations

import codecs
from typing import Any

__all__ = [
    "BulkWriterFactory",
    "ByteArraySchema",
    "DeserializationSchema",
    "Encoder",
    "RowDataBulkWriterFactory",
    "RowFieldExtractorSchema",
    "SerializationSchema",
    "SimpleStringSchema",
]


def _charset(name: str) -> str:
    """Python's codec name for a Java charset name (``UTF-8``, ``ISO-8859-1``, ``US-ASCII``)."""
    try:
        return codecs.lookup(name).name
    except LookupError:
        raise ValueError(f"unsupported charset {name!r}") from None


def _no_java(j_schema: Any, api: str, method: str) -> None:
    """Refuse a Java schema object: there is no JVM here."""
    if j_schema is not None:
        kind = api.split("(", 1)[0]
        raise NotImplementedError(
            f"{api} wraps a Java schema, and there is no JVM here; use SimpleStringSchema, "
            f"ByteArraySchema, the fs_compat.datastream.formats schemas, or subclass {kind} and "
            f"override {method}"
        )


class SerializationSchema:
    """Turns a value into the bytes a sink writes (``serialize``). Subclass it and override
    ``serialize`` for a format of your own."""

    def __init__(self, j_serialization_schema: Any = None) -> None:
        _no_java(j_serialization_schema, "SerializationSchema(j_serialization_schema)", "serialize(value)")

    def serialize(self, value: Any) -> bytes:
        """The bytes of ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not define serialize(value)")


class DeserializationSchema:
    """Turns the bytes a source reads into a value (``deserialize``); ``get_produced_type`` is
    the values' type (None: pickled Python objects). Subclass it and override ``deserialize``
    for a format of your own."""

    def __init__(self, j_deserialization_schema: Any = None) -> None:
        _no_java(
            j_deserialization_schema,
            "DeserializationSchema(j_deserialization_schema)",
            "deserialize(message)",
        )

    def deserialize(self, message: bytes) -> Any:
        """The value of ``message``."""
        raise NotImplementedError(f"{type(self).__name__} does not define deserialize(message)")

    def get_produced_type(self) -> Any:
        """The type of the values ``deserialize`` makes (a TypeInformation), None if unknown."""
        return None


class SimpleStringSchema(SerializationSchema, DeserializationSchema):
    """Strings as bytes in ``charset`` (UTF-8 by default), both ways."""

    def __init__(self, charset: str = "UTF-8") -> None:
        self._charset = _charset(charset)

    def serialize(self, value: Any) -> bytes:
        """``value`` (a string) encoded in the charset."""
        return str(value).encode(self._charset)

    def deserialize(self, message: bytes) -> str:
        """``message`` decoded from the charset."""
        return bytes(message).decode(self._charset)

    def get_produced_type(self) -> Any:
        """``Types.STRING()``."""
        from ._typeinfo import Types

        return Types.STRING()


class ByteArraySchema(SerializationSchema, DeserializationSchema):
    """Bytes as they are, both ways."""

    def __init__(self) -> None:
        pass

    def serialize(self, value: Any) -> bytes:
        """``value`` as bytes."""
        return bytes(value)

    def deserialize(self, message: bytes) -> bytes:
        """``message`` as bytes."""
        return bytes(message)

    def get_produced_type(self) -> Any:
        """``Types.PRIMITIVE_ARRAY(Types.BYTE())``."""
        from ._typeinfo import Types

        return Types.PRIMITIVE_ARRAY(Types.BYTE())


class RowFieldExtractorSchema(SerializationSchema):
    """The bytes of field ``field_index`` of each Row (which must hold bytes), e.g. as a Kafka
    record's key or value.

    >>> RowFieldExtractorSchema(1).serialize((b"k", b"v"))
    b'v'
    """

    def __init__(self, field_index: int) -> None:
        if field_index < 0:
            raise ValueError(f"Field index must be non-negative, got: {field_index}")
        self._index = field_index

    def serialize(self, value: Any) -> bytes:
        """Field ``field_index`` of ``value``."""
        field = value[self._index]
        if not isinstance(field, (bytes, bytearray)):
            raise TypeError(
                f"RowFieldExtractorSchema: field {self._index} must be bytes, got {type(field).__name__}"
            )
        return bytes(field)


class Encoder:
    """How a row-format file sink writes each value (``FileSink.for_row_format``):
    ``simple_string_encoder`` writes the value's text (as Flink's Java side shows a value of the
    stream's declared type, e.g. ``+I[a, 3]`` for a Row) and a newline; ``bytes_encoder`` writes
    bytes values as they are."""

    def __init__(self, j_encoder: Any = None, *, kind: str = "string", charset: str = "UTF-8") -> None:
        if j_encoder is not None:
            raise NotImplementedError(
                "Encoder(j_encoder) wraps a Java encoder, and there is no JVM here; use "
                "Encoder.simple_string_encoder() or Encoder.bytes_encoder()"
            )
        self._kind = kind
        self._charset = _charset(charset)

    @staticmethod
    def simple_string_encoder(charset_name: str = "UTF-8") -> Encoder:
        """Each value's text in ``charset_name``, one per line."""
        return Encoder(kind="string", charset=charset_name)

    @staticmethod
    def bytes_encoder() -> Encoder:
        """fs-compat extension: each value's bytes as they are, with no separator."""
        return Encoder(kind="bytes")

    @property
    def is_bytes(self) -> bool:
        """fs-compat: True for ``bytes_encoder`` (values written as they are)."""
        return self._kind == "bytes"

    def encode_line(self, text: str) -> bytes:
        """fs-compat: the bytes the string encoder writes for a value shown as ``text``."""
        return (text + "\n").encode(self._charset)

    def encode_bytes(self, value: Any) -> bytes:
        """fs-compat: the bytes the bytes encoder writes for ``value``."""
        return bytes(value)


class BulkWriterFactory:
    """Writes files in a bulk format (``FileSink.for_bulk_format``): not supported here; write
    Parquet, ORC, Avro or CSV files with ``ds.to_dataframe()`` and Spark's writers."""

    def __init__(self, j_bulk_writer_factory: Any = None) -> None:
        if j_bulk_writer_factory is not None:
            raise NotImplementedError(
                "BulkWriterFactory(j_bulk_writer_factory) wraps a Java writer, and there is no JVM "
                "here; write Parquet/ORC/Avro with ds.to_dataframe() and Spark's writers"
            )


class RowDataBulkWriterFactory(BulkWriterFactory):
    """A BulkWriterFactory of Rows of ``row_type``."""

    def __init__(self, j_bulk_writer_factory: Any = None, row_type: Any = None) -> None:
        super().__init__(j_bulk_writer_factory)
        self._row_type = row_type

    def get_row_type(self) -> Any:
        """The type of the rows written."""
        return self._row_type
