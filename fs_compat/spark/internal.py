"""fs-compat internals of ``fs_compat.spark`` shared with the front ends and the CLI (shipping a
job's own modules to Spark's workers, finding Java, a task's micro-batch, what a task prints and
what it changes in prometheus_client metrics); not part of the public API.

>>> from fs_compat.spark.internal import JavaNotFoundError
>>> issubclass(JavaNotFoundError, Exception)
True
"""

from __future__ import annotations

from ._java import JavaNotFoundError, ensure_java
from ._prom import carry as carry_metric_changes
from ._prom import changes as worker_metric_changes
from ._prom import worker_values as worker_metric_values
from ._ship import ship_user_code
from ._stdout import release as release_captured
from ._stdout import start as start_capture
from ._stdout import take as take_captured
from ._task import micro_batch_id

__all__ = [
    "JavaNotFoundError",
    "carry_metric_changes",
    "ensure_java",
    "micro_batch_id",
    "release_captured",
    "ship_user_code",
    "start_capture",
    "take_captured",
    "worker_metric_changes",
    "worker_metric_values",
]
