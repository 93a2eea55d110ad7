"""How ``fs_compat.datastream.formats.csv`` (de)serializes (its docstring says what it does)."""

from __future__ import annotations

import csv
import io
from typing import Any, Self

from fs_compat.common import RowTypeInfo, TypeInformation
from fs_compat.common.serialization import DeserializationSchema, SerializationSchema

from .._format import collected
from ._rows import _element_type, from_plain, to_plain


def _fields(type_info: TypeInformation[Any]) -> tuple[list[str], list[TypeInformation[Any]]]:
    if not isinstance(type_info, RowTypeInfo):
        raise TypeError(f"CSV row schemas need a Types.ROW/ROW_NAMED type, got {type_info!r}")
    return type_info.get_field_names(), type_info.get_field_types()


class _Dialect:
    def __init__(self) -> None:
        self.field_delimiter = ","
        self.line_delimiter = "\n"
        self.array_delimiter = ";"
        self.quote: str | None = '"'
        self.escape: str | None = None
        self.null_literal = ""
        self.allow_comments = False
        self.ignore_parse_errors = False

    def csv_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"delimiter": self.field_delimiter, "escapechar": self.escape}
        if self.quote is None:
            kwargs["quoting"] = csv.QUOTE_NONE
        else:
            kwargs["quotechar"] = self.quote
        return kwargs


class _Builder:
    """What both CSV schema builders set; every setter returns the builder."""

    def __init__(self, type_info: TypeInformation[Any]) -> None:
        if type_info is None:
            raise TypeError("Type information must not be None")
        self._type_info = type_info
        self._dialect = _Dialect()

    def set_field_delimiter(self, delimiter: str) -> Self:
        """The field delimiter (``,``)."""
        self._dialect.field_delimiter = delimiter
        return self

    def set_array_element_delimiter(self, delimiter: str) -> Self:
        """The delimiter of array elements (``;``)."""
        self._dialect.array_delimiter = delimiter
        return self

    def set_quote_character(self, c: str) -> Self:
        """The quote character (``"``)."""
        self._dialect.quote = c
        return self

    def set_escape_character(self, c: str) -> Self:
        """The escape character (none by default)."""
        self._dialect.escape = c
        return self

    def set_null_literal(self, null_literal: str) -> Self:
        """The text of None fields (empty by default)."""
        self._dialect.null_literal = null_literal
        return self


class CsvRowSerializationSchema(SerializationSchema):
    """Rows of a declared type to CSV lines (``CsvRowSerializationSchema.Builder(type_info)``)."""

    def __init__(self, type_info: TypeInformation[Any], dialect: _Dialect) -> None:
        self._names, types = _fields(type_info)
        self._arrays = [_element_type(t) is not None for t in types]
        self._dialect = dialect
        self._floats = collected(type_info)  # FLOAT fields in Java's Float.toString digits

    def _text(self, value: Any, array: bool) -> str:
        d = self._dialect
        if value is None:
            return d.null_literal
        if array:
            return d.array_delimiter.join(self._text(v, False) for v in value)
        plain = to_plain(value)
        if isinstance(plain, bool):
            return "true" if plain else "false"
        return str(plain)

    def serialize(self, value: Any) -> bytes:
        """``value``'s CSV line, with the line delimiter."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator=self._dialect.line_delimiter, **self._dialect.csv_kwargs())
        if self._floats is not None:
            value = self._floats(value)
        writer.writerow([self._text(v, a) for v, a in zip(value, self._arrays, strict=True)])
        return buffer.getvalue().encode("utf-8")

    class Builder(_Builder):
        """Builds a CsvRowSerializationSchema; every setter returns the builder."""

        def set_line_delimiter(self, delimiter: str) -> CsvRowSerializationSchema.Builder:
            """The line delimiter (``\\n``)."""
            self._dialect.line_delimiter = delimiter
            return self

        def disable_quote_character(self) -> CsvRowSerializationSchema.Builder:
            """Never quote fields."""
            self._dialect.quote = None
            return self

        def build(self) -> CsvRowSerializationSchema:
            """The schema."""
            return CsvRowSerializationSchema(self._type_info, self._dialect)


class CsvRowDeserializationSchema(DeserializationSchema):
    """CSV lines to Rows of a declared type (``CsvRowDeserializationSchema.Builder(type_info)``)."""

    def __init__(self, type_info: TypeInformation[Any], dialect: _Dialect) -> None:
        self._type_info = type_info
        names, types = _fields(type_info)
        self._names = names
        self._types = types
        self._convs = [from_plain(t, f"csv.{n}") for n, t in zip(names, types, strict=True)]
        self._arrays = [_element_type(t) is not None for t in types]
        self._dialect = dialect

    def deserialize(self, message: bytes) -> Any:
        """The Row of one CSV line; None for a comment line (when allowed) or, when parse errors
        are ignored, a line that does not parse."""
        from fs_compat.common.internal import create_row

        d = self._dialect
        text = bytes(message).decode("utf-8").rstrip("\r\n")
        if d.allow_comments and text.startswith("#"):
            return None
        try:
            (fields,) = list(csv.reader([text], **d.csv_kwargs()))
            if len(fields) != len(self._names):
                raise ValueError(f"expected {len(self._names)} fields, got {len(fields)}")
            values: list[Any] = []
            for raw, conv, array in zip(fields, self._convs, self._arrays, strict=True):
                if raw == d.null_literal or (raw == "" and not array):
                    values.append(None)
                elif array:
                    values.append(conv(raw.split(d.array_delimiter)))
                else:
                    values.append(conv(raw))
            return create_row(self._names, values)
        except Exception as exc:
            if d.ignore_parse_errors:
                return None
            raise ValueError(f"Failed to deserialize CSV row '{text[:200]}': {exc}") from exc

    def get_produced_type(self) -> Any:
        """The declared type."""
        return self._type_info

    class Builder(_Builder):
        """Builds a CsvRowDeserializationSchema; every setter returns the builder."""

        def set_allow_comments(self, allow_comments: bool) -> CsvRowDeserializationSchema.Builder:
            """Skip lines starting with ``#``."""
            self._dialect.allow_comments = allow_comments
            return self

        def set_ignore_parse_errors(self, ignore_parse_errors: bool) -> CsvRowDeserializationSchema.Builder:
            """Skip lines that do not parse (by default they fail the job)."""
            self._dialect.ignore_parse_errors = ignore_parse_errors
            return self

        def build(self) -> CsvRowDeserializationSchema:
            """The schema."""
            return CsvRowDeserializationSchema(self._type_info, self._dialect)


_TABLE_TYPES = (
    "takes Table API data types (pyflink.table.DataTypes), which are not ported: read CSV with Spark "
    "(env.from_dataframe(spark.read.csv(path, schema=...))), or FileSource text lines and "
    "CsvRowDeserializationSchema; write with CsvRowSerializationSchema or ds.to_dataframe().write.csv(path)"
)


class CsvSchema:
    """Not supported (its builder raises NotImplementedError): see the module docstring."""

    @staticmethod
    def builder() -> CsvSchemaBuilder:
        """Raises NotImplementedError: see the module docstring."""
        return CsvSchemaBuilder()


class CsvSchemaBuilder:
    """Not supported (raises NotImplementedError when made): see the module docstring."""

    def __init__(self) -> None:
        raise NotImplementedError(f"CsvSchema.builder() {_TABLE_TYPES}")


class CsvReaderFormat:
    """Not supported (``for_schema`` raises NotImplementedError): see the module docstring."""

    @staticmethod
    def for_schema(schema: CsvSchema) -> CsvReaderFormat:
        """Raises NotImplementedError: see the module docstring."""
        raise NotImplementedError(f"CsvReaderFormat.for_schema {_TABLE_TYPES}")


class CsvBulkWriters:
    """Not supported (``for_schema`` raises NotImplementedError): see the module docstring."""

    @staticmethod
    def for_schema(schema: CsvSchema) -> Any:
        """Raises NotImplementedError: see the module docstring."""
        raise NotImplementedError(f"CsvBulkWriters.for_schema {_TABLE_TYPES}")
