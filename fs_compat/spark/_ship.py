"""What Spark ships to its workers: the job's own code by value (``ship_user_code``), and checks
on the driver, before a job runs, that it can be pickled (``check_shippable``)."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, cast

import cloudpickle

from fs_compat.runtime import Node, OperatorNode, TimestampNode, unpicklable_message


def check_shippable(nodes: Iterable[Node]) -> None:
    """Every step's key selectors, operator factory and timestamp assigner pickle as Spark will
    pickle them; else a TypeError naming the step and the part of the function that cannot be
    pickled (in-process runs pickle only the functions, so a lock in a key selector shows here
    first)."""
    from pyspark import cloudpickle  # what PySpark ships functions with

    dumps = cast(Callable[[Any], bytes], cloudpickle.dumps)

    def check(what: str, fn: Any) -> None:
        try:
            dumps(fn)
        except Exception as exc:
            raise TypeError(unpicklable_message(what, fn, dumps)) from exc

    for node in nodes:
        if not isinstance(node, (OperatorNode, TimestampNode)):
            continue
        for edge in node.inputs:
            if edge.key_selector is not None:
                check(f"step '{node.name}': the key selector", edge.key_selector)
        if isinstance(node, OperatorNode) and node.operator_factory is not None:
            check(f"step '{node.name}': the function", node.operator_factory)
        if isinstance(node, TimestampNode) and node.extract is not None:
            check(f"step '{node.name}': the timestamp assigner", node.extract)


@functools.cache
def _installed_roots() -> tuple[str, ...]:
    import fs_api
    import fs_api_advanced
    import fs_compat

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    for pkg in (fs_api, fs_api_advanced, fs_compat):
        assert pkg.__file__ is not None
        roots.add(os.path.dirname(os.path.realpath(pkg.__file__)))
    return tuple(os.path.realpath(r) + os.sep for r in roots)


def ship_user_code() -> None:
    """Functions and classes of the job's own modules (those not installed in this environment,
    e.g. the job file's neighbours or a test module) travel to Spark's workers by value, as
    ``__main__``'s do, so workers need not be able to import them; prometheus_client metrics
    travel as references to each worker's copy (``_prom``)."""
    from pyspark import cloudpickle as spark_cloudpickle  # what PySpark ships functions with

    from fs_compat._pickling import pin_class_ids, share_class_trackers

    from ._prom import install_reducers

    share_class_trackers()  # a class shipped by value has one id, in functions and in records
    install_reducers()  # prometheus_client metrics travel by reference
    roots = _installed_roots()
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if name == "__main__" or not path or name in _by_value:
            continue
        if not os.path.realpath(path).startswith(roots):
            for pickler in (cloudpickle, spark_cloudpickle):
                pickler.register_pickle_by_value(module)
            _by_value.add(name)
    # the classes that travel by value keep their ids over a restart of the driver (_pickling)
    for name in ("__main__", *sorted(_by_value)):
        if (shipped := sys.modules.get(name)) is not None:
            pin_class_ids(shipped)


_by_value: set[str] = set()
