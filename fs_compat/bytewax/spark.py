"""Dataflows on Spark (an fs-compat extension; Bytewax has no such module).

Two ways in, one plan: a :class:`~fs_compat.bytewax.dataflow.Dataflow` builds the same runtime
plan whatever runs it, and the Spark adapter (:mod:`fs_compat.spark`) runs that plan.

- DataFrames in and out. :class:`DataFrameSource` feeds a Spark DataFrame (batch or streaming)
  into a flow as ``Row`` values (``row.name``, ``row["name"]``, ``row.as_dict()``);
  :func:`to_dataframe` returns a stream's items as a DataFrame, computed on Spark. A batch
  DataFrame gives a batch DataFrame; a streaming one gives a streaming DataFrame to start with
  ``writeStream``, whose ``checkpointLocation`` holds every key's logic ``snapshot()`` in Spark's
  state store, so a stopped query restarted from it continues where it was::

      import fs_compat.bytewax.operators as op
      from fs_compat.bytewax.dataflow import Dataflow
      from fs_compat.bytewax.spark import DataFrameSource, to_dataframe
      from fs_compat.common import Types

      flow = Dataflow("counts")
      s = op.input("inp", flow, DataFrameSource(spark.readStream.schema("user STRING").json("in/")))
      s = op.key_on("key", s, lambda row: row.user)
      s = op.stateful_map("count", s, lambda n, _row: ((n or 0) + 1, (n or 0) + 1))
      out = to_dataframe(s, Types.TUPLE([Types.STRING(), Types.LONG()]))  # columns f0, f1
      out.writeStream.format("parquet").option("checkpointLocation", "ck/").start("out/")

- Your own sources and sinks. A flow's ``FixedPartitionedSource`` / ``DynamicSource`` is read
  by Spark through a Python data source (batch: a Spark task per partition; with
  ``to_dataframe(stream, streaming=True)``: a stream whose offset is every partition's resume
  state); :func:`to_sink` writes a ``to_dataframe`` result through a ``FixedPartitionedSink`` /
  ``DynamicSink`` in Spark's tasks, batch or streaming.

- ``run_main`` on Spark. ``fs_compat.bytewax.testing.run_main(flow)`` runs in this process
  unless ``FS_COMPAT_TARGET=spark`` (or ``run_main(flow, _target="spark")``): then the flow's
  sources are read by Spark (a ``TestingSource`` here), its steps run as one Spark job, and
  its sinks get the output values here, in the order the in-process run gives them.

On Spark, every step sees items one at a time (a ``flat_map_batch`` mapper gets 1-item lists,
``StatefulBatchLogic.on_batch`` one value), epochs do not exist, ``notify_at`` times are
checked against processing time after every item and at the end of input (streaming: at the
start of each micro-batch), and EOF / ABORT / PAUSE markers and ``recovery_config`` are
in-process only, except that ``run_main(recovery_config=...)`` on the ``spark-streaming`` target
maps recovery (with ``EOF`` and ``ABORT``) onto a streaming query's checkpoint for
``TestingSource`` inputs. See ``migration_guide/bytewax.md``, "On Spark".
"""

from ._datasource import to_sink
from ._on_spark import DataFrameSource, to_dataframe

__all__ = ["DataFrameSource", "to_dataframe", "to_sink"]
