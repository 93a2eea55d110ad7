"""The rows that travel between the passes of a bounded plan on Spark (see ``_batch``): their
schemas, where a partition's rows start in ``seq``, and a DataFrame source read in place.

An event (``FIELDS``) is a record (``v`` = the pickled value, ``ts`` its timestamp, ``wm`` null)
or a watermark (``wm`` set), with the output ``tag`` (null for the main output), the upstream
subtask (``ch``, the channel) and its position in that subtask's output (``seq``). A routed event
(``ROUTED``) also has ``ROUTING``: which input of the step, which subtask, and the record's key
when it is an ``int`` or a ``str``; or it is a chunk of records of one subtask (``n`` set).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from fs_compat.runtime import LocalConfig, Node, OperatorNode

from ._convert import RowReader, dumps

FIELDS = (("tag", "string"), ("v", "binary"), ("ts", "long"), ("wm", "long"), ("ch", "int"), ("seq", "long"))
#: A routed event: ``inp`` (which input of the step) and ``part`` (which subtask) added.
#: ``ki``/``ks``: the record's key, when it is an ``int`` (of 64 bits) or a ``str``, so the run
#: pass need not call the key selector again. ``n`` set: the row is a *chunk* of ``n`` records
#: of one subtask, in order (``RoutePass.packed``, ``_routing.chunks``): ``v`` holds them,
#: ``seq`` is the first one's, ``ts``, ``wm``, ``ki`` and ``ks`` are null.
ROUTING = (("inp", "int"), ("part", "int"), ("ki", "long"), ("ks", "string"), ("n", "int"))
ROUTED = (*FIELDS, *ROUTING)
#: The ``ROUTING`` a columnar record (``COLUMNAR``) carries: no ``inp`` (it is input 0) and no
#: ``n`` (it is never a chunk).
COLUMNAR_ROUTING = ROUTING[1:-1]
#: A routed record of a DataFrame source that is its step's only input, before the source's
#: columns (instead of ``v``) and ``COLUMNAR_ROUTING``: it has no ``tag``, ``wm``, ``ch`` or
#: ``inp`` (the main output, a record, channel 0, input 0), so they do not cross the shuffle.
COLUMNAR = (("ts", "long"), ("seq", "long"))
#: Arrow record batches leave a task at this many rows.
BATCH_ROWS = 8192

# Origins (``LocalConfig.origins``). A record's origin is the source batch it comes from, as the
# in-process batched schedule numbers them: round ``r`` of reads (a ``next_batch`` of every
# partition of every source, in turn), then source, then partition: ``r * width + the
# partition's offset``, where ``width`` is the number of partitions of all sources. With
# origins, ``seq`` is ``origin << ORIGIN_SHIFT | position``: ordering by ``seq`` orders by origin
# first, and a step's output inherits the origin of the event that produced it (``EventWriter``).
ORIGIN_SHIFT = 32
#: The bits of a ``seq`` below its origin: the event's position.
POSITIONS = (1 << ORIGIN_SHIFT) - 1
#: The origin of what steps emit at the end of input: after every source batch. A step's is this
#: plus its place in the order the in-process schedule ends the steps (``runtime.end_order``).
END_ORIGIN = 1 << 30


def origin_of(seq: int) -> int:
    """The origin an event's ``seq`` carries (``LocalConfig.origins``).

    >>> origin_of(3 << ORIGIN_SHIFT | 7)
    3
    """
    return seq >> ORIGIN_SHIFT


class SourceBatches:
    """A source ``ExternalSourceNode`` handle: the items a source read in batches, as a
    DataFrame of ``value`` (the item, pickled), ``r`` (the round of the read), ``p`` (the
    partition's index, ``0 <= p < partitions``) and ``i`` (the item's index in its batch). The
    adapter reads it as events in the order the in-process runner reads the batches, with each
    item's origin in ``seq`` (``LocalConfig.origins``)."""

    def __init__(self, df: Any, partitions: int) -> None:
        self.df = df
        self.partitions = max(1, partitions)

    @classmethod
    def of_rows(cls, df: Any, batch_size: int) -> SourceBatches:
        """A bounded DataFrame's rows (``Row`` values) as one partition read ``batch_size`` rows
        a batch, in the DataFrame's order (partition by partition, as ``toArrow()`` gives them).
        Counting the rows of each DataFrame partition first is a small job of its own."""
        from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

        from ._worker import worker_pass

        counts = dict(df.groupBy(F.spark_partition_id()).count().collect())
        starts: dict[int, int] = {}
        total = 0
        for pid in sorted(counts):
            starts[pid], total = total, total + counts[pid]
        reader = RowReader(df.schema)

        def items(batches: Iterator[Any]) -> Iterator[Any]:
            import pyarrow as pa
            from pyspark import TaskContext

            context = TaskContext.get()
            at = starts.get(context.partitionId() if context is not None else 0, 0)
            for batch in batches:
                rows = reader.rows(batch)
                ks = range(at, at + len(rows))
                at += len(rows)
                yield pa.RecordBatch.from_arrays(
                    [
                        pa.array([dumps(row) for row in rows], pa.binary()),
                        pa.array([k // batch_size for k in ks], pa.int64()),
                        pa.array([0] * len(rows), pa.int32()),
                        pa.array([k % batch_size for k in ks], pa.int64()),
                    ],
                    names=["value", "r", "p", "i"],
                )

        return cls(df.mapInArrow(worker_pass(items), "value BINARY, r LONG, p INT, i LONG"), 1)

    @property
    def sparkSession(self) -> Any:  # noqa: N802 - a DataFrame's name, where handles are asked for it
        return self.df.sparkSession

    def events(self, width: int, offset: int) -> Any:
        """The items as events (``FIELDS``), numbered by origin: ``width`` partitions in all
        sources, this source's first at ``offset``."""
        from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

        origin = F.col("r") * width + offset + F.col("p")
        seq = F.shiftleft(origin.cast("long"), ORIGIN_SHIFT) + F.col("i")
        return self.df.select(
            F.lit(None).cast("string").alias("tag"),
            F.col("value").alias("v"),
            F.lit(None).cast("long").alias("ts"),
            F.lit(None).cast("long").alias("wm"),
            F.lit(0).cast("int").alias("ch"),
            seq.cast("long").alias("seq"),
        )


def spark_schema(fields: Sequence[tuple[str, str]], extra: Sequence[Any] = ()) -> Any:
    """The Spark schema of ``fields``, then the ``extra`` StructFields."""
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StringType, StructField, StructType

    kinds = {"string": StringType(), "binary": BinaryType(), "long": LongType(), "int": IntegerType()}
    return StructType([*(StructField(name, kinds[kind], True) for name, kind in fields), *extra])


def arrow_schema(fields: Sequence[tuple[str, str]]) -> Any:
    """The Arrow schema of ``fields``."""
    import pyarrow as pa

    kinds = {"string": pa.string(), "binary": pa.binary(), "long": pa.int64(), "int": pa.int32()}
    return pa.schema([(name, kinds[kind]) for name, kind in fields])


def schema_with_routing(schema: Any, columnar: bool = False) -> Any:
    """``schema`` with the ``ROUTING`` fields after it (``columnar``: ``COLUMNAR_ROUTING``)."""
    from pyspark.sql.types import StructType

    routing = COLUMNAR_ROUTING if columnar else ROUTING
    return StructType([*schema.fields, *spark_schema(routing).fields])


def first_row() -> int:
    """The position a DataFrame partition's first row gets in ``seq``: partition-major."""
    from pyspark import TaskContext

    context = TaskContext.get()
    return (context.partitionId() if context is not None else 0) << 32


def parallelism(node: Node, config: LocalConfig) -> int:
    """How many subtasks ``node`` runs as on Spark."""
    if isinstance(node, OperatorNode):
        return node.parallelism or config.parallelism
    return 1  # a timestamp assigner sees its whole input, as the in-process target does


def watermark_column(schema: Any) -> tuple[str, int] | None:
    """The event-time column ``withWatermark`` marked in ``schema``, and its delay in ms."""
    for field in schema.fields:
        delay = field.metadata.get("spark.watermarkDelayMs")
        if delay is not None:
            return field.name, int(delay)
    return None


class FrameSource:
    """A bounded DataFrame source, read in place by the route passes of the steps that consume
    it. ``seq`` keeps the DataFrame's order (partition by partition) and interleaves the sources
    round-robin, as the in-process target reads them; a record's timestamp is the
    ``withWatermark`` column's, when there is one."""

    def __init__(self, df: Any, index: int, n_sources: int) -> None:
        from pyspark.sql.types import StructField

        marked = watermark_column(df.schema)
        self.reader = RowReader(df.schema, marked[0] if marked else None)
        #: Whether records take their timestamps from a ``withWatermark`` column.
        self.timed = marked is not None
        self.schema = df.schema
        self.index = index
        self.n_sources = n_sources
        #: The value columns a routed record carries instead of ``v`` (``c0``, ``c1``, ...).
        self.fields = [StructField(f"c{i}", f.dataType, True) for i, f in enumerate(df.schema.fields)]

    def read(self, batch: Any) -> tuple[list[list[Any]], list[int | None]]:
        """The Python columns of ``batch`` and its records' timestamps."""
        cols = self.reader.columns(batch.columns)
        return cols, self.reader.stamps(cols, batch.num_rows)

    def seqs(self, first: int, n: int) -> list[int]:
        """The ``seq``s of ``n`` records from partition-wide position ``first`` on."""
        k, i = self.n_sources, self.index
        return list(range(first * k + i, (first + n) * k + i, k))
