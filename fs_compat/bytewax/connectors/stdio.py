"""Console output (``bytewax.connectors.stdio``).

>>> import fs_compat.bytewax.operators as op
>>> from fs_compat.bytewax.dataflow import Dataflow
>>> from fs_compat.bytewax.testing import TestingSource, run_main
>>> flow = Dataflow("eg")
>>> op.output("out", op.input("inp", flow, TestingSource(range(3))), StdOutSink())
>>> run_main(flow)
0
1
2
"""

from __future__ import annotations

import sys
from typing import Any

from ..outputs import DynamicSink as _DynamicSink
from ..outputs import StatelessSinkPartition as _StatelessSinkPartition

__all__ = ["StdOutSink"]


class _PrintPartition(_StatelessSinkPartition[Any]):
    def write_batch(self, items: list[Any]) -> None:
        out = sys.stdout  # looked up per batch: a redirected stdout (tests, contextlib) is honoured
        for item in items:
            out.write(f"{item}\n")
        out.flush()


class StdOutSink(_DynamicSink[Any]):
    """Writes each item to standard output, one ``str(item)`` per line.

    Each worker prints its own items. At-least-once: after a resume, the items of the resumed
    epoch are printed again. With ``run_main`` on Spark the items are printed by this process,
    once the Spark job is done, in the order the in-process run gives them.
    """

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _PrintPartition:
        return _PrintPartition()
