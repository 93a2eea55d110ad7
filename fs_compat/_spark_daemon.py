"""PySpark's worker daemon (``pyspark.daemon``), run as Spark's ``spark.python.daemon.module`` in
the sessions fs-compat starts: the same daemon, except that a worker whose task Spark cancelled
(a sibling task of the job failed, so Spark closed the worker's socket) ends without printing
its ``BrokenPipeError`` / ``ConnectionResetError`` traceback to the terminal, where it would
stand before the job's own error. Every other failure of a worker is printed as before.

Kept out of ``fs_compat.spark`` so that the daemon imports nothing of fs-compat but this and
``fs_compat._pickling``.
"""

from __future__ import annotations

import sys
import traceback
import types
from typing import Any

#: What a worker of a cancelled task raises on its closed socket.
CANCELLED = (BrokenPipeError, ConnectionResetError)


def print_exc(*args: Any, **kwargs: Any) -> None:
    """``traceback.print_exc``, silent for a worker of a cancelled task (``CANCELLED``)."""
    if isinstance(sys.exc_info()[1], CANCELLED):
        return
    traceback.print_exc(*args, **kwargs)


def main() -> None:
    """Run ``pyspark.daemon``'s manager with ``print_exc`` as its ``traceback.print_exc``."""
    from pyspark import daemon

    from fs_compat._pickling import share_class_trackers

    share_class_trackers()  # before the workers fork: each starts with one registry (_pickling)
    quiet = types.SimpleNamespace(**{name: getattr(traceback, name) for name in dir(traceback)})
    quiet.print_exc = print_exc
    daemon.traceback = quiet  # type: ignore[assignment,attr-defined]
    daemon.manager()


if __name__ == "__main__":
    main()
