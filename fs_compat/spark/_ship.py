"""Checks on the driver, before a job runs, that what Spark ships to its workers can be pickled."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, cast

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
