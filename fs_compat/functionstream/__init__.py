"""FunctionStream processors (``fs_api.FSProcessorDriver``) on the runtime: in-process and on Spark.

``run_processor(df, Processor)`` runs a processor over a Spark DataFrame (batch or streaming) with
the same adapter the PyFlink and Bytewax front ends use: the processor becomes one keyed
``ProcessorOperator`` step, its stores are views over the step's keyed state (``KeyedStoreView``),
and what it emits becomes output rows ``(data, channel)``. ``run_processor_local`` runs the same
plan in this process.
"""

from ._operator import NO_KEY, ProcessorContext, ProcessorOperator, processor_factory
from ._run import DEFAULT_KEY_COLUMN, output_type, run_processor, run_processor_local
from ._store import PLAIN_NAMESPACE, KeyedStoreView, encode_namespace

__all__ = [
    "DEFAULT_KEY_COLUMN",
    "KeyedStoreView",
    "NO_KEY",
    "PLAIN_NAMESPACE",
    "ProcessorContext",
    "ProcessorOperator",
    "encode_namespace",
    "output_type",
    "processor_factory",
    "run_processor",
    "run_processor_local",
]
