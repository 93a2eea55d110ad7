"""The partitions of a dataflow's sources and sinks: built, called and written in one place for
both targets (``_execution`` in-process; on Spark, ``_on_spark``'s sinks on the driver and
``_datasource``'s sources and sinks in Spark's tasks call them through :func:`call`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from fs_compat.runtime import Node, OperatorNode, SinkNode, SourceNode

from ._ops import InspectDebugOperator, key_route, user_error
from .errors import BytewaxRuntimeError
from .inputs import AbortExecution, DynamicSource, FixedPartitionedSource
from .outputs import DynamicSink, FixedPartitionedSink

#: What a partition may raise that is not its failure: the end of its input, an abort, a failure
#: already named.
_THROUGH: tuple[type[BaseException], ...] = (StopIteration, AbortExecution, BytewaxRuntimeError)


def inspector_of(node: Node) -> InspectDebugOperator | None:
    """The operator of an ``inspect`` / ``inspect_debug`` step, else None."""
    if not isinstance(node, OperatorNode):
        return None
    factory = node.operator_factory
    if isinstance(factory, functools.partial) and factory.func is InspectDebugOperator:
        return factory.func(*factory.args, **factory.keywords)
    return None


def check_flow(nodes: list[Node]) -> None:
    """Bytewax's checks before a run: a dataflow needs an input step, and an output or inspect
    step (else ``BytewaxRuntimeError`` caused by a ``ValueError`` saying which)."""
    missing = None
    if not any(isinstance(n, SourceNode) for n in nodes):
        missing = "input step; add with `fs_compat.bytewax.operators.input`"
    elif not any(isinstance(n, SinkNode) or inspector_of(n) is not None for n in nodes):
        missing = (
            "output or inspect step; add with `fs_compat.bytewax.operators.output` or "
            "`fs_compat.bytewax.operators.inspect`"
        )
    if missing is not None:
        cause = ValueError(f"Dataflow needs to contain at least one {missing}")
        raise BytewaxRuntimeError("error building production dataflow") from cause


def call(
    fn: Callable[..., Any],
    what: str,
    step_id: str,
    *args: Any,
    through: tuple[type[BaseException], ...] = _THROUGH,
) -> Any:
    """``fn(*args)`` of a source or sink; a failure (other than ``through``) is a
    BytewaxRuntimeError naming ``what`` and the step."""
    try:
        return fn(*args)
    except through:
        raise
    except Exception as exc:
        raise user_error(f"error calling {what} in step {step_id}", exc) from exc


def source_parts(
    step_id: str,
    source: Any,
    resume: Mapping[str, Any] | None = None,
    through: tuple[type[BaseException], ...] = _THROUGH,
) -> tuple[list[tuple[str, Any]], bool]:
    """The ``(name, partition)`` pairs of ``source`` (each resumed from its state in ``resume``)
    and whether they are stateful (their snapshots are the source's resume state)."""
    if isinstance(source, FixedPartitionedSource):
        names = call(source.list_parts, "`FixedPartitionedSource.list_parts`", step_id, through=through)
        states = resume or {}
        return [(name, source.build_part(step_id, name, states.get(name))) for name in names], True
    if isinstance(source, DynamicSource):
        return [("0", source.build(step_id, 0, 1))], False
    raise TypeError("source must subclass `fs_compat.bytewax.inputs.Source`")


def sink_parts(step_id: str, sink: Any, resume: Mapping[str, Any] | None = None) -> list[tuple[str, Any]]:
    """The ``(name, partition)`` pairs of ``sink`` (each resumed from its state in ``resume``); a
    partitioned sink's in name order, the order ``part_fn`` indexes into, as in Bytewax."""
    if isinstance(sink, DynamicSink):
        return [("0", sink.build(step_id, 0, 1))]
    if isinstance(sink, FixedPartitionedSink):
        states = resume or {}
        names = sorted(sink.list_parts())
        return [(name, sink.build_part(step_id, name, states.get(name))) for name in names]
    raise TypeError("sink must subclass `fs_compat.bytewax.outputs.Sink`")


def write(
    step_id: str,
    sink: Any,
    parts: list[tuple[str, Any]],
    batch: list[Any],
    through: tuple[type[BaseException], ...] = _THROUGH,
) -> None:
    """``batch`` through ``sink``'s partitions (``sink_parts``): a partitioned sink's
    ``(key, value)`` items (else ``TypeError``, as Bytewax's routing) routed by ``part_fn(key)``,
    a partition's values in one ``write_batch``."""
    if isinstance(sink, FixedPartitionedSink):
        routed: dict[int, list[Any]] = {}
        route = key_route(step_id)
        for item in batch:
            routed.setdefault(sink.part_fn(route(item)) % len(parts), []).append(item[1])
        for index, values in sorted(routed.items()):
            call(
                parts[index][1].write_batch,
                "`StatefulSinkPartition.write_batch`",
                step_id,
                values,
                through=through,
            )
    else:
        call(
            parts[0][1].write_batch,
            "`StatelessSinkPartition.write_batch`",
            step_id,
            list(batch),
            through=through,
        )
