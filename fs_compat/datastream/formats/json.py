"""PyFlink's ``pyflink.datastream.formats.json``: JSON row schemas for the Kafka connectors (and
any source or sink that takes a (de)serialization schema).

Values of a ``Types.ROW_NAMED`` type are JSON objects with their field names; nested rows are
objects, lists and arrays are arrays, bytes are base64 text, dates and times ISO text.

>>> from fs_compat.common import Row, Types
>>> info = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()])
>>> out = JsonRowSerializationSchema.builder().with_type_info(info).build()
>>> out.serialize(Row(id=1, name="a"))
b'{"id":1,"name":"a"}'
>>> JsonRowDeserializationSchema.builder().type_info(info).build().deserialize(b'{"id": 2}')
Row(id=2, name=None)
"""

from ._json import (
    JsonRowDeserializationSchema,
    JsonRowSerializationSchema,
)

__all__ = [
    "JsonRowDeserializationSchema",
    "JsonRowSerializationSchema",
]
