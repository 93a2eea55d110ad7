"""The Spark adapter: runs the runtime's logical plan as Spark jobs.

Bounded plans (collections, batch DataFrames) run as one ``repartition -> sortWithinPartitions
-> mapInArrow`` per step, with the engine-neutral runtime inside the tasks. Nothing here knows
PyFlink or Bytewax names.
"""

from ._batch import run_batch
from ._session import EMBEDDED_DEFAULTS, ship_python_files, spark_session

__all__ = ["EMBEDDED_DEFAULTS", "run_batch", "ship_python_files", "spark_session"]
