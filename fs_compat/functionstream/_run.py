"""Run an FSProcessorDriver over a DataFrame (on Spark) or over records (in-process), through the
runtime's one plan: a source, one keyed ProcessorOperator step."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from fs_api_advanced import BytesCodec, Codec, IntCodec, StringCodec
from fs_compat.common import RowTypeInfo, Types
from fs_compat.common.internal import create_row
from fs_compat.execution import LOCAL, run_plan, spark_dataframe
from fs_compat.runtime import (
    MAX_PARALLELISM,
    Edge,
    ExternalSourceNode,
    LocalConfig,
    OperatorNode,
    SinkNode,
    SourceNode,
)

from ._operator import NO_KEY, ProcessorOperator, processor_factory


class _DefaultColumn(str):
    """The default ``key_column``: used when the input has it, ignored when it does not."""

    __slots__ = ()


#: ``key_column``'s default: the column ``key`` when the input has one, else no key.
DEFAULT_KEY_COLUMN: str = _DefaultColumn("key")


def output_type(watermarks: bool = False) -> RowTypeInfo:
    """The type of the output rows: ``data`` (binary) and ``channel`` (int); with ``watermarks``
    also ``watermark`` (long).

    >>> output_type()
    RowTypeInfo(data: PrimitiveArrayTypeInfo<Byte>, channel: Integer)
    """
    names = ["data", "channel"]
    types: list[Any] = [Types.PRIMITIVE_ARRAY(Types.BYTE()), Types.INT()]
    if watermarks:
        names.append("watermark")
        types.append(Types.LONG())
    info = Types.ROW_NAMED(names, types)
    assert isinstance(info, RowTypeInfo)
    return info


@attrs.frozen
class _Layout:
    """Where the processor's inputs are in a row, and how keys become bytes."""

    names: tuple[str, ...]
    data_index: int
    source_index: int | None
    key_index: int | None
    key_codec: Codec[Any] | None


class _Field:
    """The key selector of a key column: the row's field at ``index``."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __call__(self, row: Any) -> Any:
        return row[self.index]

    def __getstate__(self) -> int:
        return self.index

    def __setstate__(self, state: int) -> None:
        self.index = state


class _NoKey:
    """The key selector without a key column: every record has the key ``NO_KEY``."""

    def __call__(self, row: Any) -> bytes:
        return NO_KEY


def _key_column(names: Sequence[str], key_column: str | None, where: str) -> int | None:
    if key_column is None:
        return None
    if key_column in names:
        return names.index(key_column)
    if isinstance(key_column, _DefaultColumn):
        return None
    raise ValueError(f"key_column {key_column!r} is not a column of {where}")


def _schema_layout(schema: Any, key_column: str | None) -> _Layout:
    """The layout of a DataFrame schema; a missing or non-binary ``data`` column, a non-integer
    ``source_id`` or a missing key column is a ValueError naming the column and the schema."""
    from pyspark.sql import types as st

    names = [f.name for f in schema.fields]
    where = f"the DataFrame (schema {schema.simpleString()})"
    if "data" not in names:
        raise ValueError(f"a processor's input needs a binary column 'data'; it is missing from {where}")
    data_index = names.index("data")
    data_type = schema.fields[data_index].dataType
    if not isinstance(data_type, st.BinaryType):
        raise ValueError(
            f"column 'data' must be binary, not {data_type.simpleString()}, in {where}; "
            "cast it, e.g. df.withColumn('data', F.col('data').cast('binary'))"
        )
    integral = (st.ByteType, st.ShortType, st.IntegerType, st.LongType)
    source_index = names.index("source_id") if "source_id" in names else None
    if source_index is not None and not isinstance(schema.fields[source_index].dataType, integral):
        raise ValueError(
            f"column 'source_id' must be an integer, not "
            f"{schema.fields[source_index].dataType.simpleString()}, in {where}"
        )
    key_index = _key_column(names, key_column, where)
    codec: Codec[Any] | None = None
    if key_index is not None:
        key_type = schema.fields[key_index].dataType
        if isinstance(key_type, st.BinaryType):
            codec = BytesCodec()
        elif isinstance(key_type, st.StringType):
            codec = StringCodec()
        elif isinstance(key_type, integral):
            codec = IntCodec()
    return _Layout(tuple(names), data_index, source_index, key_index, codec)


def _records_layout(records: Iterable[Any], key_column: str | None) -> tuple[_Layout, list[Any]]:
    """The layout and ``Row`` values of in-process records: ``bytes`` (the data) or mappings with
    ``data`` and optionally ``source_id`` and the key column."""
    rows: list[Mapping[str, Any]] = []
    for record in records:
        if isinstance(record, (bytes, bytearray, memoryview)):
            rows.append({"data": bytes(record)})
        elif isinstance(record, Mapping):
            if "data" not in record:
                raise ValueError(f"a record needs 'data' (bytes), got {record!r}")
            rows.append(record)
        else:
            raise TypeError(
                f"a record is bytes or a mapping with 'data', got {type(record).__name__}: {record!r}"
            )
    present = {name for row in rows for name in row}
    names = ["data"] + (["source_id"] if "source_id" in present else [])
    if key_column is not None and key_column in present and key_column not in names:
        names.append(key_column)
    key_index = _key_column(names, key_column, "the records")
    values = [create_row(names, [row.get(n) for n in names]) for row in rows]
    layout = _Layout(
        tuple(names), 0, names.index("source_id") if "source_id" in names else None, key_index, None
    )
    return layout, values


def _step(
    source: SourceNode, layout: _Layout, processor: Any, config: Mapping[str, str] | None, watermarks: bool
) -> OperatorNode:
    for k, v in (config or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"a processor's config maps str to str; got {k!r}: {v!r}")
    factory = processor_factory(processor)
    name = getattr(processor, "__qualname__", None) or type(processor).__qualname__
    keyed = layout.key_index is not None
    edge = Edge(
        source,
        key_selector=_Field(layout.key_index) if layout.key_index is not None else _NoKey(),
        key_codec=layout.key_codec if keyed else BytesCodec(),
    )
    make = functools.partial(
        ProcessorOperator,
        factory,
        dict(config or {}),
        data_index=layout.data_index,
        source_index=layout.source_index,
        keyed_by_column=keyed,
        watermarks=watermarks,
    )
    return OperatorNode(f"FSProcessorDriver {name}", [edge], operator_factory=make, keyed=True)


def _config(layout: _Layout, parallelism: int | None, default: int, max_parallelism: int) -> LocalConfig:
    if parallelism is not None and parallelism < 1:
        raise ValueError(f"parallelism must be >= 1, got {parallelism}")
    if max_parallelism < 1:
        raise ValueError(f"max_parallelism must be >= 1, got {max_parallelism}")
    if layout.key_index is None:
        p = 1  # one key: one subtask holds all the state
    else:
        p = parallelism or default
    return LocalConfig(parallelism=min(p, max_parallelism), max_parallelism=max_parallelism)


def run_processor(
    df: Any,
    processor: Any,
    *,
    config: Mapping[str, str] | None = None,
    key_column: str | None = DEFAULT_KEY_COLUMN,
    parallelism: int | None = None,
    max_parallelism: int = MAX_PARALLELISM,
    watermarks: bool = False,
) -> Any:
    """Run an FSProcessorDriver over a Spark DataFrame, batch or streaming; returns the emitted
    rows as a DataFrame with columns ``data`` (binary) and ``channel`` (int) (and ``watermark``,
    long, with ``watermarks=True``: then ``ctx.emit_watermark`` gives rows with null ``data``).

    - ``df`` has a binary column ``data``, optionally an integer ``source_id`` (0 when absent) and
      a key column (``key_column``; by default ``key`` when there is one; ``None``: no key).
      Other columns are ignored.
    - ``processor``: an ``FSProcessorDriver`` subclass, a function returning a driver, or a driver
      (copied per task). One driver runs per task: ``init(ctx, config)`` first, ``process`` per
      row, ``process_watermark`` when the watermark advances, ``take_checkpoint`` at the end of
      each streaming micro-batch, ``close`` at the end of a batch DataFrame.
    - With a key column the processor's stores (``ctx.getOrCreateKVStore``) are per key: rows of
      different keys never see each other's state, and keys are spread over ``parallelism`` tasks
      (Spark's default parallelism by default). Without one, all rows go to one task and share the
      stores, as in FunctionStream.
    - On a streaming DataFrame the result is a streaming DataFrame: start it with ``writeStream``
      and a ``checkpointLocation``, which holds the processor's stores, so that a restarted query
      continues with them. The watermark comes from ``df.withWatermark(column, delay)``.

    See the migration guide (``migration_guide/functionstream.md``) for what differs from
    FunctionStream's runtime.
    """
    layout = _schema_layout(df.schema, key_column)
    spark = df.sparkSession
    source = ExternalSourceNode("DataFrame Source", handle=df, unbounded=bool(df.isStreaming))
    node = _step(source, layout, processor, config, watermarks)
    from fs_compat.spark import default_parallelism

    default = default_parallelism(spark) if parallelism is None else parallelism
    cfg = _config(layout, parallelism, default, max_parallelism)
    return spark_dataframe(spark, node, None, cfg, output_type(watermarks))


def run_processor_local(
    records: Any,
    processor: Any,
    *,
    config: Mapping[str, str] | None = None,
    key_column: str | None = DEFAULT_KEY_COLUMN,
    parallelism: int = 1,
    max_parallelism: int = MAX_PARALLELISM,
    watermarks: bool = False,
) -> list[tuple[Any, ...]]:
    """``run_processor`` in this process, over a batch DataFrame (read on the driver) or over
    records: ``bytes`` (the data) or mappings with ``data`` and optionally ``source_id`` and the
    key column. Returns the emitted rows as ``(data, channel)`` tuples (``(data, channel,
    watermark)`` with ``watermarks``), in emit order.

    >>> from fs_api import Context, FSProcessorDriver
    >>> class Echo(FSProcessorDriver):
    ...     def process(self, ctx: Context, source_id: int, data: bytes) -> None:
    ...         ctx.emit(data.upper(), source_id)
    >>> run_processor_local([b"a", {"data": b"b", "source_id": 2}], Echo)
    [(b'A', 0), (b'B', 2)]
    """
    if hasattr(records, "isStreaming") and hasattr(records, "schema"):
        if records.isStreaming:
            raise ValueError(
                "run_processor_local needs bounded input; use run_processor on a streaming DataFrame"
            )
        from fs_compat.spark import collect_items

        layout = _schema_layout(records.schema, key_column)
        items = collect_items(ExternalSourceNode("DataFrame Source", handle=records))
    else:
        layout, items = _records_layout(records, key_column)
    source = SourceNode("Records", items=items)
    node = _step(source, layout, processor, config, watermarks)
    out: list[tuple[Any, ...]] = []
    run_plan(
        [SinkNode("Collect", [Edge(node)], consume=out.append)],
        _config(layout, parallelism, 1, max_parallelism),
        target=LOCAL,
    )
    return out
