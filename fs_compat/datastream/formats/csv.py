"""PyFlink's ``pyflink.datastream.formats.csv``: CSV row schemas for the Kafka connectors (and any
source or sink that takes a (de)serialization schema).

A row is one CSV line: its fields in order, quoted where needed, arrays joined with the array
element delimiter (``;``), None as the null literal (empty by default).

>>> from fs_compat.common import Row, Types
>>> info = Types.ROW_NAMED(["id", "tags", "note"], [Types.INT(), Types.LIST(Types.STRING()), Types.STRING()])
>>> out = CsvRowSerializationSchema.Builder(info).build()
>>> out.serialize(Row(id=1, tags=["a", "b"], note="x, y"))
b'1,a;b,"x, y"\\n'
>>> CsvRowDeserializationSchema.Builder(info).build().deserialize(b'2,c,')
Row(id=2, tags=['c'], note=None)

``CsvSchema``, ``CsvReaderFormat`` and ``CsvBulkWriters`` take Table API data types in PyFlink,
which are not ported: read CSV files with Spark (``env.from_dataframe(spark.read.csv(path,
schema=...))``), or with ``FileSource`` text lines and ``CsvRowDeserializationSchema``.
"""

from ._csv import (
    CsvBulkWriters,
    CsvReaderFormat,
    CsvRowDeserializationSchema,
    CsvRowSerializationSchema,
    CsvSchema,
    CsvSchemaBuilder,
)

__all__ = [
    "CsvBulkWriters",
    "CsvReaderFormat",
    "CsvRowDeserializationSchema",
    "CsvRowSerializationSchema",
    "CsvSchema",
    "CsvSchemaBuilder",
]
