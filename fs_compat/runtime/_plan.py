"""The logical plan both front ends build: sources, steps, timestamps, sinks, joined by edges."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from fs_api_advanced import Codec

from ._operator import Operator

_ids = itertools.count(1)


@attrs.define(eq=False)
class Edge:
    """How records of ``source`` reach a step: its main output or one side output, keyed by
    ``key_selector`` (hash-partitioned to the step's subtasks), broadcast to all of them, or
    sent where ``partitioner`` says (``partitioner(record, p)``: the subtask among the step's
    ``p``: a front end's custom partitioning; see ``route_custom``)."""

    source: Node
    side_tag: str | None = None
    key_selector: Callable[[Any], Any] | None = None
    key_codec: Codec[Any] | None = None
    broadcast: bool = False
    partitioner: Callable[[Any, int], int] | None = None

    @property
    def plain(self) -> bool:
        """Neither keyed, broadcast nor custom-partitioned: a forward or rebalance edge."""
        return self.key_selector is None and not self.broadcast and self.partitioner is None


@attrs.define(eq=False)
class Node:
    name: str
    inputs: list[Edge] = attrs.field(factory=list)
    id: int = attrs.field(factory=lambda: next(_ids))
    parallelism: int | None = None
    #: The user's id for the step (PyFlink's ``uid``), shown in job summaries.
    uid: str | None = None


@attrs.define(eq=False)
class SourceNode(Node):
    """A bounded source of values (with optional record timestamps)."""

    items: Sequence[Any] = ()
    timestamps: Sequence[int | None] | None = None


@attrs.define(eq=False)
class ExternalSourceNode(SourceNode):
    """A source an engine adapter reads itself, e.g. a Spark DataFrame: ``handle`` is opaque to
    the runtime. ``unbounded`` sources (a streaming DataFrame) never end. A bounded one can be
    run in-process once its ``items`` are filled in."""

    handle: Any = attrs.field(default=None)
    unbounded: bool = False

    def __getstate__(self) -> dict[str, Any]:
        # Steps ship to an engine's workers with their inputs; the handle (a DataFrame) stays.
        state = {name: getattr(self, name) for name in attrs.fields_dict(type(self))}
        state["handle"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)


@attrs.define(eq=False)
class OperatorNode(Node):
    """A step: ``operator_factory()`` makes one Operator per subtask. ``keyed`` steps get keyed
    state and timers; their non-broadcast inputs must be keyed edges."""

    operator_factory: Callable[[], Operator] | None = None
    keyed: bool = False
    #: The user function the step runs, as error messages name it (``describe_callable``).
    function: str | None = None
    #: The step keeps nothing per instance and does not care which instance sees which record,
    #: so an engine may run it wherever the records are. Its outputs come from its records only
    #: (nothing at watermarks or at the end of input; watermarks pass through unchanged).
    stateless: bool = False


@attrs.define(eq=False)
class TimestampNode(Node):
    """Assigns timestamps and emits watermarks: ``watermark = max_timestamp - delay - 1``;
    ``out_of_orderness_ms is None`` means no watermarks until the end of input.

    As in Flink, the watermark is emitted periodically, every ``LocalConfig.watermark_interval_ms``
    of processing time (the job's clock; 0: none before the end of input), so a small bounded
    input sees no watermark before its end. ``per_element`` emits it after every record instead
    (Flink's ``PerElementWatermarkGenerator``)."""

    extract: Callable[[Any, int | None], int | None] | None = None
    out_of_orderness_ms: int | None = 0
    per_element: bool = False


@attrs.define(eq=False)
class SinkNode(Node):
    """Hands every value of its input to ``consume``.

    A sink whose output shows which of its parallel instances wrote a value (PyFlink's
    ``print()`` names it) also has a ``writer``: ``writer(index, parallelism)`` is instance
    ``index``'s ``consume``. Its parallelism is its own ``parallelism`` or the job's. Engines hand
    a value to the instance Flink would (``SinkInstances``)."""

    consume: Callable[[Any], None] | None = None
    writer: Callable[[int, int], Callable[[Any], None]] | None = None
    #: ``consume`` reads a ``ROW`` value only field by field (a DataFrame's columns), so a step
    #: may hand it a fitting tuple where its output type would make a Row of it
    #: (``Operator.one_to_one_fields``).
    fields_only: bool = False


def upstream_of(sinks: Sequence[Node]) -> list[Node]:
    """Every node the sinks depend on, in topological order (inputs first)."""
    order: list[Node] = []
    seen: set[int] = set()

    def visit(node: Node) -> None:
        if node.id in seen:
            return
        seen.add(node.id)
        for edge in node.inputs:
            visit(edge.source)
        order.append(node)

    for sink in sinks:
        visit(sink)
    return order
