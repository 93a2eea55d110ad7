"""Connectors to external systems (``bytewax.connectors``).

:mod:`.stdio` (``StdOutSink``), :mod:`.files` (``FileSource``, ``DirSource``, ``CSVSource``,
``FileSink``, ``DirSink``), :mod:`.demo` (``RandomMetricSource``) and :mod:`.kafka` (on Spark's
Kafka source and sink). They are built on the partitioned sources and sinks of
:mod:`fs_compat.bytewax.inputs` and :mod:`fs_compat.bytewax.outputs`, so they run in-process and
on Spark (``FS_COMPAT_TARGET=spark``) alike; write your own connectors the same way.
"""

__all__: list[str] = []
