"""PyFlink's ``pyflink.datastream.connectors.base``: ``Source``, ``Sink``, ``DeliveryGuarantee``,
and how fs-compat's connectors meet the plan.

A connector source gives a ``SourceReader`` (``fs_compat.execution``): the execution target reads
it in this process (``local``) or as a Spark DataFrame (``spark``; a streaming one when the source
is unbounded), then ``decode`` turns each record (a Row like the DataFrame's) into the stream's
value. A connector sink gives a ``SinkWriter`` for bounded jobs (it sees every value on the
driver, on every target, and ``finish`` commits its output when the job succeeded) and a
``StreamWrite`` for unbounded ones (``env.execute()`` starts one Structured Streaming query per
sink with Spark's writer).
"""

from __future__ import annotations

import abc
import enum
import typing
from collections.abc import Callable
from typing import Any

import attrs

if typing.TYPE_CHECKING:
    from fs_compat.execution import SourceReader


class DeliveryGuarantee(enum.Enum):
    """What a sink guarantees after a failure: ``EXACTLY_ONCE``, ``AT_LEAST_ONCE`` or ``NONE``."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1
    NONE = 2


@attrs.define
class SourcePlan:
    """How a connector source enters the plan: ``reader`` reads its records (Rows), ``decode``
    turns one into the stream's values (none when a deserializer skips it; ``decode`` None: the
    Row is the value), of type ``output_type``."""

    reader: SourceReader
    decode: Callable[[Any], Any] | None
    output_type: Any


class SinkWriter(abc.ABC):
    """Writes a bounded job's values (on the driver): ``write`` each, then ``finish`` when the job
    succeeded or ``abort`` when it failed."""

    @abc.abstractmethod
    def write(self, value: Any) -> None:
        """Write one value."""

    @abc.abstractmethod
    def finish(self) -> None:
        """The job succeeded: make the output final."""

    def abort(self) -> None:  # noqa: B027 - optional
        """The job failed: drop what is not final (default: nothing to do)."""


@attrs.define
class StreamWrite:
    """How an unbounded job writes through Spark: ``encode`` turns each value into a record of
    ``record_type`` (a stateless step before the sink), and ``start(df, checkpoint_location,
    trigger)`` starts the streaming query that writes the DataFrame of those records
    (``trigger``: the arguments of ``DataStreamWriter.trigger``, none for Spark's default)."""

    encode: Callable[[Any], Any]
    record_type: Any
    start: Callable[[Any, str, dict[str, Any]], Any]


class Source:
    """A source for ``env.from_source`` (file and Kafka sources subclass it)."""

    def __init__(self, source: Any = None) -> None:
        if source is not None:
            raise NotImplementedError(
                "Source(j_source) wraps a Java source, and there is no JVM here; use FileSource, "
                "KafkaSource or NumberSequenceSource, or read with Spark and env.from_dataframe(df)"
            )

    def _source_plan(self, type_info: Any) -> SourcePlan:
        """fs-compat: how this source enters the plan (``type_info``: ``from_source``'s)."""
        raise NotImplementedError(
            f"{type(self).__name__} cannot be read by fs-compat; use FileSource or KafkaSource, or "
            "read with Spark and env.from_dataframe(df)"
        )


class Sink:
    """A sink for ``ds.sink_to`` (file and Kafka sinks subclass it)."""

    def __init__(self, sink: Any = None) -> None:
        if sink is not None:
            raise NotImplementedError(
                "Sink(j_sink) wraps a Java sink, and there is no JVM here; use FileSink or KafkaSink, "
                "or write with ds.to_dataframe() and Spark's writers"
            )

    def _writer(self, output_type: Any) -> SinkWriter:
        """fs-compat: the writer of a bounded job's values of ``output_type``."""
        raise NotImplementedError(
            f"{type(self).__name__} cannot be written by fs-compat; use FileSink or KafkaSink, or "
            "write with ds.to_dataframe() and Spark's writers"
        )

    def _stream_write(self, output_type: Any) -> StreamWrite:
        """fs-compat: how an unbounded job writes values of ``output_type`` through Spark."""
        raise NotImplementedError(
            f"{type(self).__name__} cannot be written by a streaming job; use ds.to_dataframe() and "
            "Spark's writeStream"
        )


class StreamTransformer(abc.ABC):
    """A transformation a sink applies to its input stream first (``SupportsPreprocessing``)."""

    @abc.abstractmethod
    def apply(self, ds: Any) -> Any:
        """The transformed stream."""


class SupportsPreprocessing(abc.ABC):  # noqa: B024 - a marker, as in PyFlink
    """A sink that may transform its input stream first (``get_transformer``)."""

    def get_transformer(self) -> StreamTransformer | None:
        """The transformation, if any (None here)."""
        return None
