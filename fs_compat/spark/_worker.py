"""How the Python passes run in Spark's Python workers."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from . import _stdout

#: The cyclic garbage collector's first threshold while a pass runs (CPython's default: 700).
#: A pass makes Rows and lists by the ten thousand per Arrow batch and keeps them until the batch
#: is done; with the default, the collector runs every 700 of them and walks everything alive,
#: which measured ~0.5 us per Row made (1.56 -> 1.06 us for 10,000-Row batches) and 20-25 % of
#: the W1 batch job. Reference counting still frees everything that is not in a cycle at once;
#: cycles wait for at most this many new objects.
PASS_GC_THRESHOLD = 100_000

F = TypeVar("F", bound=Callable[..., Iterator[Any]])


def worker_pass(fn: F) -> F:
    """``fn`` (a function over an iterator of batches that yields batches: mapInArrow's, or a
    key group's in a stateful pass), run with the collector's first threshold at
    ``PASS_GC_THRESHOLD``; the worker's thresholds are restored when it is done (also on error).
    A pass that fails, or is stopped early, gives what its user code printed to the worker's
    standard output (``_stdout.release``)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Iterator[Any]:
        old = gc.get_threshold()
        gc.set_threshold(max(old[0], PASS_GC_THRESHOLD), *old[1:])
        try:
            yield from fn(*args, **kwargs)
        finally:
            _stdout.release()  # a no-op after a task's ``TaskTally.publish``
            gc.set_threshold(*old)

    return run  # type: ignore[return-value]
