"""Kafka operators (``bytewax.connectors.kafka.operators``), imported as ``kop``.

``input`` splits what :class:`~fs_compat.bytewax.connectors.kafka.KafkaSource` reads into ``oks``
and ``errs`` streams; ``output`` writes to a
:class:`~fs_compat.bytewax.connectors.kafka.KafkaSink`; ``serialize*`` / ``deserialize*`` apply
(confluent-kafka style) serializers, called as ``serializer(obj, ctx)`` with a serialization
context that has ``topic`` and ``field`` (confluent-kafka's own ``SerializationContext`` when it
is installed). A failed deserialization becomes a :class:`~fs_compat.bytewax.connectors.kafka.KafkaError`
in ``errs``, whose ``err`` is a ``confluent_kafka.KafkaError`` when confluent-kafka is installed,
else a :class:`SerdeError`. Where the source and sink run: see :mod:`fs_compat.bytewax.connectors.kafka`.
"""

from __future__ import annotations

import builtins
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ... import operators as _op
from ...dataflow import Dataflow as _Dataflow
from ...dataflow import Stream as _Stream
from ...dataflow import operator as _operator
from . import OFFSET_BEGINNING as _OFFSET_BEGINNING
from . import KafkaError as _KafkaError
from . import KafkaSink as _KafkaSink
from . import KafkaSinkMessage as _KafkaSinkMessage
from . import KafkaSource as _KafkaSource
from . import KafkaSourceMessage as _KafkaSourceMessage

__all__ = [
    "KafkaOpOut",
    "SerdeError",
    "deserialize",
    "deserialize_key",
    "deserialize_value",
    "input",
    "output",
    "serialize",
    "serialize_key",
    "serialize_value",
]

_X = TypeVar("_X")
_E = TypeVar("_E")

#: A (de)serializer: ``serializer(obj, ctx)``.
_Serde = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class KafkaOpOut(Generic[_X, _E]):
    """The streams of a Kafka operator: processed items and errors."""

    oks: _Stream[_X]
    errs: _Stream[_E]


@dataclass(frozen=True)
class SerdeError:
    """A (de)serialization error, when confluent-kafka is not installed: ``code()`` and ``str()``
    as ``confluent_kafka.KafkaError`` has them."""

    name: str
    reason: str

    def code(self) -> str:
        """The error's name, such as ``"_VALUE_DESERIALIZATION"`` (a string, where
        ``confluent_kafka.KafkaError.code()`` gives a numeric code)."""
        return self.name

    def str(self) -> builtins.str:
        """Why it failed: for a failed deserialization, the message of the deserializer's exception."""
        return self.reason


@dataclass(frozen=True)
class _Context:
    """A serialization context, when confluent-kafka is not installed."""

    topic: str | None
    field: str
    headers: Any = None


def _confluent(module: str) -> Any:
    """A confluent-kafka module, or None when confluent-kafka is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _context(topic: str | None, key: bool) -> Any:
    serialization = _confluent("confluent_kafka.serialization")
    if serialization is None:
        return _Context(topic, "key" if key else "value")
    field = serialization.MessageField
    return serialization.SerializationContext(topic, field.KEY if key else field.VALUE)


def _error(key: bool, exc: Exception) -> Any:
    name = "_KEY_DESERIALIZATION" if key else "_VALUE_DESERIALIZATION"
    confluent = _confluent("confluent_kafka")
    if confluent is None:
        return SerdeError(name, str(exc))
    return confluent.KafkaError(getattr(confluent.KafkaError, name), str(exc))


@_operator
def _kafka_error_split(step_id: str, up: _Stream[Any]) -> KafkaOpOut[Any, Any]:
    """Messages to ``oks``, :class:`KafkaError` s to ``errs``."""
    branch = _op.branch("branch", up, lambda msg: isinstance(msg, _KafkaSourceMessage))
    return KafkaOpOut(branch.trues, branch.falses)


def _sink_message(msg: Any) -> Any:
    return msg.to_sink() if isinstance(msg, _KafkaSourceMessage) else msg


@_operator
def _to_sink(step_id: str, up: _Stream[Any]) -> _Stream[Any]:
    """Source messages as sink messages (``to_sink()``); sink messages unchanged."""
    return _op.map("map", up, _sink_message)


@_operator
def input(
    step_id: str,
    flow: _Dataflow,
    *,
    brokers: list[str],
    topics: list[str],
    tail: bool = True,
    starting_offset: int = _OFFSET_BEGINNING,
    add_config: dict[str, str] | None = None,
    batch_size: int = 1000,
) -> KafkaOpOut[Any, Any]:
    """Read ``topics``: a stream of messages (``oks``) and one of consumer errors (``errs``; on
    Spark a consumer error fails the query instead)."""
    source = _KafkaSource(
        brokers, topics, tail, starting_offset, add_config, batch_size, raise_on_errors=False
    )
    return _op.input("kafka_input", flow, source).then(_kafka_error_split, "split_err")


@_operator
def output(
    step_id: str,
    up: _Stream[Any],
    *,
    brokers: list[str],
    topic: str,
    add_config: dict[str, str] | None = None,
) -> None:
    """Write messages (source messages via ``to_sink()``) to ``topic`` (a message's own topic
    wins)."""
    _to_sink("to_sink", up).then(_op.output, "kafka_output", _KafkaSink(brokers, topic, add_config))


def _deserializing(
    key_de: _Serde | None, value_de: _Serde | None
) -> Callable[[_KafkaSourceMessage[Any, Any]], Any]:
    def shim(msg: _KafkaSourceMessage[Any, Any]) -> Any:
        key, value = msg.key, msg.value
        for is_key, de in ((True, key_de), (False, value_de)):
            if de is None:
                continue
            try:
                got = de(msg.key if is_key else msg.value, _context(msg.topic, is_key))
            except Exception as exc:
                return _KafkaError(_error(is_key, exc), msg)
            key, value = (got, value) if is_key else (key, got)
        return msg._with_key_and_value(key, value)

    return shim


@_operator
def deserialize_key(step_id: str, up: _Stream[Any], deserializer: _Serde) -> KafkaOpOut[Any, Any]:
    """Deserialize message keys; failures go to ``errs``."""
    return _op.map("map", up, _deserializing(deserializer, None)).then(_kafka_error_split, "split")


@_operator
def deserialize_value(step_id: str, up: _Stream[Any], deserializer: _Serde) -> KafkaOpOut[Any, Any]:
    """Deserialize message values; failures go to ``errs``."""
    return _op.map("map", up, _deserializing(None, deserializer)).then(_kafka_error_split, "split_err")


@_operator
def deserialize(
    step_id: str, up: _Stream[Any], *, key_deserializer: _Serde, val_deserializer: _Serde
) -> KafkaOpOut[Any, Any]:
    """Deserialize keys and values; a failure of either sends the original message to ``errs``."""
    shim = _deserializing(key_deserializer, val_deserializer)
    return _op.map("map", up, shim).then(_kafka_error_split, "split_err")


def _serializing(key_ser: _Serde | None, value_ser: _Serde | None) -> Callable[[Any], Any]:
    def shim(msg: _KafkaSinkMessage[Any, Any]) -> _KafkaSinkMessage[Any, Any]:
        key = msg.key if key_ser is None else key_ser(msg.key, _context(msg.topic, True))
        value = msg.value if value_ser is None else value_ser(msg.value, _context(msg.topic, False))
        if (key_ser is not None and key is None) or (value_ser is not None and value is None):
            raise ValueError("serializer returned None")
        return msg._with_key_and_value(key, value)

    return shim


@_operator
def serialize_key(step_id: str, up: _Stream[Any], serializer: _Serde) -> _Stream[Any]:
    """Serialize message keys (source messages become sink messages); a failure raises."""
    return _to_sink("to_sink", up).then(_op.map, "map", _serializing(serializer, None))


@_operator
def serialize_value(step_id: str, up: _Stream[Any], serializer: _Serde) -> _Stream[Any]:
    """Serialize message values (source messages become sink messages); a failure raises."""
    return _to_sink("to_sink", up).then(_op.map, "map", _serializing(None, serializer))


@_operator
def serialize(
    step_id: str, up: _Stream[Any], *, key_serializer: _Serde, val_serializer: _Serde
) -> _Stream[Any]:
    """Serialize keys and values (source messages become sink messages); a failure raises."""
    return _to_sink("to_sink", up).then(_op.map, "map", _serializing(key_serializer, val_serializer))
