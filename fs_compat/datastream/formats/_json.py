"""How ``fs_compat.datastream.formats.json`` (de)serializes (its docstring says what it does)."""

from __future__ import annotations

import json
from typing import Any

from fs_compat.common import TypeInformation
from fs_compat.common.serialization import DeserializationSchema, SerializationSchema

from .._format import collected
from ._rows import from_plain, to_plain


class JsonRowDeserializationSchema(DeserializationSchema):
    """JSON objects (bytes) to Rows of a declared type (``builder().type_info(...)``)."""

    def __init__(
        self, type_info: TypeInformation[Any], fail_on_missing_field: bool, ignore_parse_errors: bool
    ) -> None:
        self._type_info = type_info
        self._fail_on_missing = fail_on_missing_field
        self._ignore_errors = ignore_parse_errors
        self._convert = from_plain(type_info, "json")
        self._names: list[str] = list(getattr(type_info, "get_field_names", list)())

    @staticmethod
    def builder() -> JsonRowDeserializationSchema.Builder:
        """A Builder."""
        return JsonRowDeserializationSchema.Builder()

    def deserialize(self, message: bytes) -> Any:
        """The Row of ``message``; None when it does not parse and parse errors are ignored."""
        try:
            obj = json.loads(bytes(message).decode("utf-8"))
            if self._fail_on_missing:
                missing = [n for n in self._names if n not in obj]
                if missing:
                    raise ValueError(f"Could not find field with name '{missing[0]}'.")
            return self._convert(obj)
        except Exception as exc:
            if self._ignore_errors:
                return None
            raise ValueError(f"Failed to deserialize JSON '{bytes(message)[:200]!r}': {exc}") from exc

    def get_produced_type(self) -> Any:
        """The declared type."""
        return self._type_info

    class Builder:
        """Builds a JsonRowDeserializationSchema: ``type_info`` is required."""

        def __init__(self) -> None:
            self._type_info: TypeInformation[Any] | None = None
            self._fail_on_missing_field = False
            self._ignore_parse_errors = False

        def type_info(self, type_info: TypeInformation[Any]) -> JsonRowDeserializationSchema.Builder:
            """The type of the rows (its field names are the JSON properties read)."""
            self._type_info = type_info
            return self

        def json_schema(self, json_schema: str) -> JsonRowDeserializationSchema.Builder:
            """Not supported (raises NotImplementedError): declare the rows' type with
            ``type_info(Types.ROW_NAMED(...))``."""
            raise NotImplementedError(
                "JsonRowDeserializationSchema.Builder.json_schema: converting a JSON schema needs Flink's "
                "JVM; declare the rows' type with type_info(Types.ROW_NAMED([...], [...]))"
            )

        def fail_on_missing_field(self) -> JsonRowDeserializationSchema.Builder:
            """Fail when a field is missing (by default it is None)."""
            self._fail_on_missing_field = True
            return self

        def ignore_parse_errors(self) -> JsonRowDeserializationSchema.Builder:
            """Skip messages that do not parse (by default they fail the job)."""
            self._ignore_parse_errors = True
            return self

        def build(self) -> JsonRowDeserializationSchema:
            """The schema."""
            if self._type_info is None:
                raise TypeError("Typeinfo should be set.")
            return JsonRowDeserializationSchema(
                self._type_info, self._fail_on_missing_field, self._ignore_parse_errors
            )


class JsonRowSerializationSchema(SerializationSchema):
    """Rows of a declared type to JSON objects (bytes, UTF-8, compact as Jackson writes them)."""

    def __init__(self, type_info: TypeInformation[Any]) -> None:
        self._type_info = type_info
        self._names: list[str] | None = getattr(type_info, "get_field_names", lambda: None)()
        self._floats = collected(type_info)  # FLOAT fields in Java's Float.toString digits

    @staticmethod
    def builder() -> JsonRowSerializationSchema.Builder:
        """A Builder."""
        return JsonRowSerializationSchema.Builder()

    def serialize(self, value: Any) -> bytes:
        """``value``'s JSON (a tuple or list is read by position with the type's field names)."""
        if self._floats is not None and not isinstance(value, dict):
            value = self._floats(value)
        if self._names is not None and isinstance(value, (tuple, list)) and not hasattr(value, "as_dict"):
            value = dict(zip(self._names, value, strict=True))
        return json.dumps(to_plain(value), separators=(",", ":"), ensure_ascii=False).encode("utf-8")

    class Builder:
        """Builds a JsonRowSerializationSchema: ``with_type_info`` is required."""

        def __init__(self) -> None:
            self._type_info: TypeInformation[Any] | None = None

        def with_type_info(self, type_info: TypeInformation[Any]) -> JsonRowSerializationSchema.Builder:
            """The type of the rows (its field names are the JSON properties written)."""
            self._type_info = type_info
            return self

        def build(self) -> JsonRowSerializationSchema:
            """The schema."""
            if self._type_info is None:
                raise TypeError("Typeinfo should be set.")
            return JsonRowSerializationSchema(self._type_info)
