"""Built-in operators (``bytewax.operators``), imported as ``op``.

The core operators (``input``, ``output``, ``flat_map_batch``, ``branch``, ``merge``,
``inspect_debug``, ``redistribute``, ``stateful_batch``) add plan nodes; every other operator is a
thin wrapper over them, as in Bytewax: ``stateful_map`` -> ``stateful_flat_map`` -> ``stateful`` ->
``stateful_batch``, and ``map`` / ``filter`` / ... -> ``flat_map`` -> ``flat_map_batch``.

>>> from fs_compat.bytewax.dataflow import Dataflow
>>> import fs_compat.bytewax.operators as op
>>> from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main
>>> out = []
>>> flow = Dataflow("eg")
>>> s = op.input("inp", flow, TestingSource(["a", "b", "a"]))
>>> s = op.key_on("key", s, lambda x: x)
>>> def count(n, _x):
...     n = (n or 0) + 1
...     return n, n
>>> s = op.stateful_map("count", s, count)
>>> op.output("out", s, TestingSink(out))
>>> run_main(flow)
>>> out
[('a', 1), ('b', 1), ('a', 2)]
"""

from __future__ import annotations

import builtins
import copy
import functools
import itertools
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Generic, Literal, TypeAlias, TypeVar

from fs_compat.runtime import OperatorNode as _OperatorNode
from fs_compat.runtime import SinkNode as _SinkNode
from fs_compat.runtime import SourceNode as _SourceNode

from .._clocks import system_utc as _system_utc
from .._ops import BranchOperator as _BranchOperator
from .._ops import FlatMapBatchOperator as _FlatMapBatchOperator
from .._ops import InspectDebugOperator as _InspectDebugOperator
from .._ops import ItemMapper as _ItemMapper
from .._ops import PassThroughOperator as _PassThroughOperator
from .._ops import PerItem as _PerItem
from .._ops import StatefulBatchOperator as _StatefulBatchOperator
from .._ops import key_route as _key_route
from .._ops import mark as _mark
from .._ops import marked as _marked
from ..dataflow import Dataflow as _Dataflow
from ..dataflow import KeyedStream
from ..dataflow import Stream as _Stream
from ..dataflow import f_repr as _f_repr
from ..dataflow import operator as _operator
from ..inputs import Source as _Source
from ..outputs import DynamicSink as _DynamicSink
from ..outputs import Sink as _Sink
from ..outputs import StatelessSinkPartition as _StatelessSinkPartition

__all__ = [
    "BranchOut",
    "JoinEmitMode",
    "JoinInsertMode",
    "KeyedStream",
    "StatefulBatchLogic",
    "StatefulLogic",
    "TTLCache",
    "branch",
    "collect",
    "count_final",
    "enrich_cached",
    "filter",
    "filter_map",
    "filter_map_value",
    "filter_value",
    "flat_map",
    "flat_map_batch",
    "flat_map_value",
    "flatten",
    "fold_final",
    "input",
    "inspect",
    "inspect_debug",
    "join",
    "key_on",
    "key_rm",
    "map",
    "map_value",
    "max_final",
    "merge",
    "min_final",
    "output",
    "raises",
    "redistribute",
    "reduce_final",
    "stateful",
    "stateful_batch",
    "stateful_flat_map",
    "stateful_map",
]

_X = TypeVar("_X")
_Y = TypeVar("_Y")
_V = TypeVar("_V")
_W = TypeVar("_W")
_S = TypeVar("_S")
_DK = TypeVar("_DK")
_DV = TypeVar("_DV")

_EMPTY: tuple[Any, ...] = ()


def _identity(x: _X) -> _X:
    return x


def _down(up: _Stream[Any], node: Any, name: str = "down", tag: str | None = None) -> _Stream[Any]:
    return _Stream(f"{up._scope.parent_id}.{name}", up._scope, up._flow, node, tag)


# Core operators. -------------------------------------------------------------------------------


@dataclass(frozen=True)
class BranchOut(Generic[_X, _Y]):
    """The two streams of :func:`branch`."""

    trues: _Stream[_X]
    falses: _Stream[_Y]


@_operator
def branch(step_id: str, up: _Stream[_X], predicate: Callable[[_X], bool]) -> BranchOut[_X, _X]:
    """Split a stream in two: items for which ``predicate`` is True, and the others."""
    node = up._flow._plan.add(
        _OperatorNode(
            step_id, [up._edge()], operator_factory=functools.partial(_BranchOperator, step_id, predicate)
        )
    )
    return BranchOut(_down(up, node, "trues"), _down(up, node, "falses", _BranchOperator.FALSES))


@_operator
def flat_map_batch(step_id: str, up: _Stream[_X], mapper: Callable[[list[_X]], Iterable[_Y]]) -> _Stream[_Y]:
    """Transform each batch of items into any number of items."""
    return _flat_map_batch(step_id, up, mapper, stateless=False)


def _flat_map_batch(
    step_id: str, up: _Stream[_X], mapper: Callable[[list[_X]], Iterable[_Y]], *, stateless: bool
) -> _Stream[_Y]:
    factory = functools.partial(_FlatMapBatchOperator, step_id, mapper)
    node = _OperatorNode(step_id, [up._edge()], operator_factory=factory, stateless=stateless)
    return _down(up, up._flow._plan.add(node))


def _stateless_batch_builder(
    step_id: str, up: _Stream[_X], mapper: Callable[[list[_X]], Iterable[_Y]]
) -> _Stream[_Y]:
    """``flat_map_batch`` for the stateless operators built on it (``map``, ``flat_map`` and
    those built on them): their mappers keep nothing between batches, so the step is marked
    ``stateless`` and an engine may run it wherever the items are, as Bytewax does. A user's own
    ``flat_map_batch`` is not marked (its mapper may keep something per worker)."""
    return _flat_map_batch(step_id, up, mapper, stateless=True)


# A ``flat_map_batch`` step to everything that looks at the flow (errors, ``visualize``).
_stateless_batch_builder.__name__ = "flat_map_batch"
_stateless_batch = _operator(_stateless_batch_builder)


@_operator
def input(step_id: str, flow: _Dataflow, source: _Source[_X]) -> _Stream[_X]:
    """Introduce the items of ``source`` into the dataflow."""
    if not isinstance(source, _Source):
        raise TypeError("source must subclass `fs_compat.bytewax.inputs.Source`")
    node = flow._plan.add(_SourceNode(step_id))
    flow._plan.sources[node.id] = source
    return _Stream(f"{step_id}.down", flow._scope, flow, node)


def _default_debug_inspector(step_id: str, item: Any, epoch: int, worker: int) -> None:
    print(f"{step_id} W{worker} @{epoch}: {item!r}", flush=True)


@_operator
def inspect_debug(
    step_id: str,
    up: _Stream[_X],
    inspector: Callable[[str, _X, int, int], None] = _default_debug_inspector,
) -> _Stream[_X]:
    """Observe items with their epoch and worker index (prints them by default)."""
    factory = functools.partial(_InspectDebugOperator, step_id, inspector)
    return _down(up, up._flow._plan.add(_OperatorNode(step_id, [up._edge()], operator_factory=factory)))


@_operator
def merge(step_id: str, *ups: _Stream[Any]) -> _Stream[Any]:
    """Combine several streams into one."""
    if not ups:
        raise TypeError("`merge` _operator requires at least one upstream")
    node = ups[0]._flow._plan.add(
        _OperatorNode(step_id, [up._edge() for up in ups], operator_factory=_PassThroughOperator)
    )
    return _down(ups[0], node)


@_operator
def output(step_id: str, up: _Stream[_X], sink: _Sink[_X]) -> None:
    """Write the items of a stream to ``sink``."""
    if not isinstance(sink, _Sink):
        raise TypeError("sink must subclass `fs_compat.bytewax.outputs.Sink`")
    node = up._flow._plan.add(_SinkNode(step_id, [up._edge()], consume=_unbound_sink(step_id)))
    up._flow._plan.sinks[node.id] = sink


def _unbound_sink(step_id: str) -> Callable[[Any], None]:
    def consume(_item: Any) -> None:
        raise RuntimeError(
            f"output step {step_id!r}: run the dataflow with fs_compat.bytewax.testing.run_main"
        )

    return consume


@_operator
def redistribute(step_id: str, up: _Stream[_X]) -> _Stream[_X]:
    """Spread items over the workers (a no-op with one worker)."""
    node = up._flow._plan.add(_OperatorNode(step_id, [up._edge()], operator_factory=_PassThroughOperator))
    return _down(up, node)


# Stateful logic. -------------------------------------------------------------------------------


class StatefulBatchLogic(ABC, Generic[_V, _W, _S]):
    """Per-key logic of :func:`stateful_batch`.

    Per activation the _operator calls ``on_batch`` with the key's new values, then ``on_notify``
    once the time from ``notify_at`` has passed, then ``on_eof`` at the end of input. Each
    returns ``(values to emit, discard?)``; ``snapshot`` is an immutable, picklable copy of the
    state, given back to the builder on resume.
    """

    RETAIN: bool = False
    """Keep this logic after the call."""

    DISCARD: bool = True
    """Drop this logic (and its notification) after the call."""

    @abstractmethod
    def on_batch(self, values: list[_V]) -> tuple[Iterable[_W], bool]:
        """Handle the new values of this key (in arrival order)."""

    def on_notify(self) -> tuple[Iterable[_W], bool]:
        """The notification time has passed. Default: emit nothing, retain."""
        return (_EMPTY, StatefulBatchLogic.RETAIN)

    def on_eof(self) -> tuple[Iterable[_W], bool]:
        """The input ended. Default: emit nothing, retain."""
        return (_EMPTY, StatefulBatchLogic.RETAIN)

    def notify_at(self) -> datetime | None:
        """The next notification time (an aware datetime), or None. Default: None."""
        return None

    @abstractmethod
    def snapshot(self) -> _S:
        """An immutable, picklable copy of the state for recovery."""


class StatefulLogic(ABC, Generic[_V, _W, _S]):
    """Per-key logic of :func:`stateful`: like :class:`StatefulBatchLogic`, one item at a time."""

    RETAIN: bool = False
    """Keep this logic after the call."""

    DISCARD: bool = True
    """Drop this logic (and its notification) after the call."""

    @abstractmethod
    def on_item(self, value: _V) -> tuple[Iterable[_W], bool]:
        """Handle one new value of this key."""

    def on_notify(self) -> tuple[Iterable[_W], bool]:
        """The notification time has passed. Default: emit nothing, retain."""
        return (_EMPTY, StatefulLogic.RETAIN)

    def on_eof(self) -> tuple[Iterable[_W], bool]:
        """The input ended. Default: emit nothing, retain."""
        return (_EMPTY, StatefulLogic.RETAIN)

    def notify_at(self) -> datetime | None:
        """The next notification time (an aware datetime), or None. Default: None."""
        return None

    @abstractmethod
    def snapshot(self) -> _S:
        """An immutable, picklable copy of the state for recovery."""


@_operator
def stateful_batch(
    step_id: str,
    up: KeyedStream[_V],
    builder: Callable[[_S | None], StatefulBatchLogic[_V, _W, _S]],
) -> KeyedStream[_W]:
    """The general keyed stateful _operator: one :class:`StatefulBatchLogic` per key, built by
    ``builder(None)`` for a new key or ``builder(resume_state)`` on resume."""
    factory = functools.partial(_StatefulBatchOperator, step_id, builder, StatefulBatchLogic)
    node = _OperatorNode(
        step_id, [up._edge(key_selector=_key_route(step_id))], operator_factory=factory, keyed=True
    )
    return _down(up, up._flow._plan.add(node))


@dataclass
class _StatefulLogic(StatefulBatchLogic[_V, _W, _S]):
    """Adapts a StatefulLogic: ``on_item`` per value; after a discard the next value gets a fresh
    ``builder(None)`` logic."""

    logic: StatefulLogic[_V, _W, _S] | None
    builder: Callable[[_S | None], StatefulLogic[_V, _W, _S]]

    def on_batch(self, values: list[_V]) -> tuple[Iterable[_W], bool]:
        emit: list[_W] = []
        for value in values:
            if self.logic is None:
                self.logic = self.builder(None)
            ws, discard = self.logic.on_item(value)
            emit.extend(ws)
            if discard:
                self.logic = None
        return (emit, self.logic is None)

    def on_notify(self) -> tuple[Iterable[_W], bool]:
        assert self.logic is not None
        ws, discard = self.logic.on_notify()
        return (list(ws), discard)

    def on_eof(self) -> tuple[Iterable[_W], bool]:
        assert self.logic is not None
        ws, discard = self.logic.on_eof()
        return (list(ws), discard)

    def notify_at(self) -> datetime | None:
        assert self.logic is not None
        return self.logic.notify_at()

    def snapshot(self) -> _S:
        assert self.logic is not None
        return self.logic.snapshot()


@_operator
def stateful(
    step_id: str,
    up: KeyedStream[_V],
    builder: Callable[[_S | None], StatefulLogic[_V, _W, _S]],
) -> KeyedStream[_W]:
    """Keyed stateful _operator with one :class:`StatefulLogic` per key (item at a time)."""

    def shim_builder(resume_state: _S | None) -> _StatefulLogic[_V, _W, _S]:
        return _StatefulLogic(builder(resume_state), builder)

    item = _marked(builder)  # a ``stateful_flat_map`` logic's mapper: the operator calls it
    if isinstance(item, _ItemMapper):
        _mark(shim_builder, item)
    return stateful_batch("stateful_batch", up, shim_builder)


def _not_pair(mapper: Callable[..., Any], step_id: str, emit: str, res: Any) -> TypeError:
    """The error for a ``stateful_map`` / ``stateful_flat_map`` mapper's result ``res`` that is
    not a 2-tuple (``emit`` names its second item)."""
    return TypeError(
        f"return value of `mapper` {_f_repr(mapper)} in step {step_id!r} "
        f"must be a 2-tuple of `(updated_state, {emit})`; got a {type(res)!r} instead"
    )


@dataclass
class _StatefulFlatMapLogic(StatefulLogic[_V, _W, _S]):
    step_id: str
    mapper: Callable[[_S | None, _V], tuple[_S | None, Iterable[_W]]]
    state: _S | None

    def on_item(self, value: _V) -> tuple[Iterable[_W], bool]:
        res = self.mapper(self.state, value)
        try:
            state, ws = res
        except (TypeError, ValueError) as ex:
            raise _not_pair(self.mapper, self.step_id, "emit_values", res) from ex
        if state is None:
            return (ws, StatefulLogic.DISCARD)
        self.state = state
        return (ws, StatefulLogic.RETAIN)

    def snapshot(self) -> _S:
        assert self.state is not None
        return copy.deepcopy(self.state)


@_operator
def stateful_flat_map(
    step_id: str,
    up: KeyedStream[_V],
    mapper: Callable[[_S | None, _V], tuple[_S | None, Iterable[_W]]],
) -> KeyedStream[_W]:
    """``mapper(state or None, value) -> (new state or None to discard, values to emit)``."""

    def shim_builder(resume_state: _S | None) -> _StatefulFlatMapLogic[_V, _W, _S]:
        return _StatefulFlatMapLogic(step_id, mapper, resume_state)

    item = _marked(mapper)  # ``stateful_map``'s mapper says what it maps with
    if not isinstance(item, _ItemMapper):
        item = _ItemMapper(mapper, False, functools.partial(_not_pair, mapper, step_id, "emit_values"))
    _mark(shim_builder, item)
    return stateful("stateful", up, shim_builder)


@_operator
def stateful_map(
    step_id: str,
    up: KeyedStream[_V],
    mapper: Callable[[_S | None, _V], tuple[_S | None, _W]],
) -> KeyedStream[_W]:
    """``mapper(state or None, value) -> (new state or None to discard, value to emit)``;
    exactly one emit per input, even when it is None.

    >>> import fs_compat.bytewax.operators as op
    >>> from fs_compat.bytewax.dataflow import Dataflow
    >>> from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main
    >>> flow = Dataflow("running_sum")
    >>> amounts = op.input("inp", flow, TestingSource([("a", 5), ("b", 1), ("a", 2)]))
    >>> def add(total, amount):
    ...     total = (total or 0) + amount
    ...     return total, total
    >>> sums = op.stateful_map("sum", amounts, add)
    >>> out = []
    >>> op.output("out", sums, TestingSink(out))
    >>> run_main(flow)
    >>> out
    [('a', 5), ('b', 1), ('a', 7)]
    """

    not_pair = functools.partial(_not_pair, mapper, step_id, "emit_value")

    def shim_mapper(state: _S | None, v: _V) -> tuple[_S | None, Iterable[_W]]:
        res = mapper(state, v)
        try:
            s, w = res
        except (TypeError, ValueError) as ex:
            raise not_pair(res) from ex
        return (s, (w,))

    _mark(shim_mapper, _ItemMapper(mapper, True, not_pair))
    return stateful_flat_map("stateful_flat_map", up, shim_mapper)


# Stateless operators. --------------------------------------------------------------------------


@_operator
def flat_map(step_id: str, up: _Stream[_X], mapper: Callable[[_X], Iterable[_Y]]) -> _Stream[_Y]:
    """Transform each item into any number of items."""

    def shim_mapper(xs: list[_X]) -> Iterable[_Y]:
        return itertools.chain.from_iterable(mapper(x) for x in xs)

    _mark(shim_mapper, _PerItem(mapper, False))
    return _stateless_batch("flat_map_batch", up, shim_mapper)


def _require_key_value(step_id: str, k_v: Any) -> tuple[str, Any]:
    try:
        k, v = k_v
    except (TypeError, ValueError) as ex:
        raise TypeError(
            f"step {step_id!r} requires `(key, value)` 2-tuple as upstream for routing; "
            f"got a {type(k_v)!r} instead"
        ) from ex
    return k, v


@_operator
def flat_map_value(
    step_id: str, up: KeyedStream[_V], mapper: Callable[[_V], Iterable[_W]]
) -> KeyedStream[_W]:
    """Transform each value into any number of values, keeping the key."""

    def shim_mapper(k_v: tuple[str, _V]) -> Iterable[tuple[str, _W]]:
        k, v = _require_key_value(step_id, k_v)
        return ((k, w) for w in mapper(v))

    return flat_map("flat_map", up, shim_mapper)


@_operator
def flatten(step_id: str, up: _Stream[Iterable[_X]]) -> _Stream[_X]:
    """Emit the items of each upstream iterable."""

    def shim_mapper(x: Iterable[_X]) -> Iterable[_X]:
        if not isinstance(x, Iterable):
            raise TypeError(f"step {step_id!r} requires upstream to be iterables; got a {type(x)!r} instead")
        return x

    return flat_map("flat_map", up, shim_mapper)


def _check_bool(step_id: str, predicate: Callable[..., Any], keep: Any) -> bool:
    if not isinstance(keep, bool):
        raise TypeError(
            f"return value of `predicate` {_f_repr(predicate)} in step {step_id!r} must be a `bool`; "
            f"got a {type(keep)!r} instead"
        )
    return keep


@_operator
def filter(step_id: str, up: _Stream[_X], predicate: Callable[[_X], bool]) -> _Stream[_X]:
    """Keep the items for which ``predicate`` returns True."""

    def shim_mapper(x: _X) -> Iterable[_X]:
        return (x,) if _check_bool(step_id, predicate, predicate(x)) else _EMPTY

    return flat_map("flat_map", up, shim_mapper)


@_operator
def filter_value(step_id: str, up: KeyedStream[_V], predicate: Callable[[_V], bool]) -> KeyedStream[_V]:
    """Keep the ``(key, value)`` pairs whose value satisfies ``predicate``."""

    def shim_mapper(v: _V) -> Iterable[_V]:
        return (v,) if _check_bool(step_id, predicate, predicate(v)) else _EMPTY

    return flat_map_value("filter", up, shim_mapper)


@_operator
def filter_map(step_id: str, up: _Stream[_X], mapper: Callable[[_X], _Y | None]) -> _Stream[_Y]:
    """Map each item and drop the None results."""

    def shim_mapper(x: _X) -> Iterable[_Y]:
        y = mapper(x)
        return _EMPTY if y is None else (y,)

    return flat_map("flat_map", up, shim_mapper)


@_operator
def filter_map_value(step_id: str, up: KeyedStream[_V], mapper: Callable[[_V], _W | None]) -> KeyedStream[_W]:
    """Map each value and drop the None results, keeping the key."""

    def shim_mapper(v: _V) -> Iterable[_W]:
        w = mapper(v)
        return _EMPTY if w is None else (w,)

    return flat_map_value("flat_map_value", up, shim_mapper)


def _default_inspector(step_id: str, item: Any) -> None:
    print(f"{step_id}: {item!r}", flush=True)


@_operator
def inspect(
    step_id: str, up: _Stream[_X], inspector: Callable[[str, _X], None] = _default_inspector
) -> _Stream[_X]:
    """Observe items (prints ``step_id: item`` by default); the stream passes unchanged."""

    def shim_inspector(_fq_step_id: str, item: _X, _epoch: int, _worker: int) -> None:
        inspector(step_id, item)

    return inspect_debug("inspect_debug", up, shim_inspector)


@_operator
def key_on(step_id: str, up: _Stream[_X], key: Callable[[_X], str]) -> KeyedStream[_X]:
    """Make a keyed stream: each item becomes ``(key(item), item)``; keys must be ``str``."""

    def shim_mapper(x: _X) -> tuple[str, _X]:
        k = key(x)
        if not isinstance(k, str):
            raise TypeError(
                f"return value of `key` {_f_repr(key)} in step {step_id!r} must be a `str`; "
                f"got a {type(k)!r} instead"
            )
        return (k, x)

    return map("map", up, shim_mapper)


@_operator
def key_rm(step_id: str, up: KeyedStream[_X]) -> _Stream[_X]:
    """Drop the keys of a keyed stream."""

    def shim_mapper(k_v: tuple[str, _X]) -> _X:
        return k_v[1]

    return map("map", up, shim_mapper)


@_operator
def map(step_id: str, up: _Stream[_X], mapper: Callable[[_X], _Y]) -> _Stream[_Y]:
    """Transform each item into one item."""

    def shim_mapper(xs: list[_X]) -> Iterable[_Y]:
        return (mapper(x) for x in xs)

    _mark(shim_mapper, _PerItem(mapper, True))
    return _stateless_batch("flat_map_batch", up, shim_mapper)


@_operator
def map_value(step_id: str, up: KeyedStream[_V], mapper: Callable[[_V], _W]) -> KeyedStream[_W]:
    """Transform each value, keeping the key."""

    def shim_mapper(k_v: tuple[str, _V]) -> tuple[str, _W]:
        k, v = k_v
        return (k, mapper(v))

    return map("map", up, shim_mapper)


@dataclass
class TTLCache(Generic[_DK, _DV]):
    """A cache whose entries are re-fetched with ``v_getter`` when older than ``ttl``."""

    v_getter: Callable[[_DK], _DV]
    now_getter: Callable[[], datetime]
    ttl: timedelta
    _cache: dict[_DK, tuple[datetime, _DV]] = field(default_factory=dict)

    def get(self, k: _DK) -> _DV:
        """The cached value of ``k``, fetched again when missing or expired."""
        now = self.now_getter()
        hit = self._cache.get(k)
        if hit is not None and now - hit[0] <= self.ttl:
            return hit[1]
        v = self.v_getter(k)
        self._cache[k] = (now, v)
        return v

    def remove(self, k: _DK) -> None:
        """Forget the cached value of ``k``."""
        del self._cache[k]


@_operator
def enrich_cached(
    step_id: str,
    up: _Stream[_X],
    getter: Callable[[_DK], _DV],
    mapper: Callable[[TTLCache[_DK, _DV], _X], _Y],
    ttl: timedelta = timedelta.max,
    _now_getter: Callable[[], datetime] = _system_utc,
) -> _Stream[_Y]:
    """Enrich items with values looked up through a per-worker :class:`TTLCache`."""
    now = _now_getter()

    def batch_now() -> datetime:
        return now

    cache = TTLCache(getter, batch_now, ttl)

    def shim_mapper(xs: list[_X]) -> Iterable[_Y]:
        nonlocal now
        now = _now_getter()
        return [mapper(cache, x) for x in xs]

    return flat_map_batch("flat_map_batch", up, shim_mapper)


class _RaisePartition(_StatelessSinkPartition[Any]):
    def __init__(self, step_id: str) -> None:
        self.step_id = step_id

    def write_batch(self, items: list[Any]) -> None:
        for item in items:
            raise RuntimeError(f"`raises` step {self.step_id!r} got an item: {item!r}")


class _RaiseSink(_DynamicSink[Any]):
    def __init__(self, step_id: str) -> None:
        self.step_id = step_id

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _RaisePartition:
        return _RaisePartition(self.step_id)


@_operator
def raises(step_id: str, up: _Stream[Any]) -> None:
    """Fail the dataflow on any item."""
    return output("output", up, _RaiseSink(step_id))


# Final aggregations. ---------------------------------------------------------------------------


@dataclass
class _FoldFinalLogic(StatefulLogic[_V, _S, _S]):
    step_id: str
    folder: Callable[[_S, _V], _S]
    state: _S

    def on_item(self, value: _V) -> tuple[Iterable[_S], bool]:
        self.state = self.folder(self.state, value)
        return (_EMPTY, StatefulLogic.RETAIN)

    def on_eof(self) -> tuple[Iterable[_S], bool]:
        return ((self.state,), StatefulLogic.DISCARD)

    def snapshot(self) -> _S:
        return copy.deepcopy(self.state)


@_operator
def fold_final(
    step_id: str,
    up: KeyedStream[_V],
    builder: Callable[[], _S],
    folder: Callable[[_S, _V], _S],
) -> KeyedStream[_S]:
    """Fold each key's values into ``builder()``; emit the accumulators at EOF (key order)."""

    def shim_builder(resume_state: _S | None) -> _FoldFinalLogic[_V, _S]:
        return _FoldFinalLogic(step_id, folder, resume_state if resume_state is not None else builder())

    return stateful("stateful", up, shim_builder)


def _untyped_none() -> Any:
    return None


@_operator
def reduce_final(step_id: str, up: KeyedStream[_V], reducer: Callable[[_V, _V], _V]) -> KeyedStream[_V]:
    """Reduce each key's values; emit at EOF (key order). Pre-reduces per batch, so the reducer
    should be associative."""

    def pre_reducer(batch: list[tuple[str, _V]]) -> Iterable[tuple[str, _V]]:
        acc: dict[str, _V] = {}
        for k, v in batch:
            acc[k] = reducer(acc[k], v) if k in acc else v
        return acc.items()

    pre = _stateless_batch("pre_reduce", up, pre_reducer)

    def shim_folder(s: _V | None, v: _V) -> _V:
        return v if s is None else reducer(s, v)

    return fold_final("fold_final", pre, _untyped_none, shim_folder)


@_operator
def count_final(step_id: str, up: _Stream[_X], key: Callable[[_X], str]) -> KeyedStream[int]:
    """Count the items per ``key(item)``; emit ``(key, count)`` at EOF (key order).

    >>> from fs_compat.bytewax.dataflow import Dataflow
    >>> from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main
    >>> out = []
    >>> flow = Dataflow("eg")
    >>> s = input("inp", flow, TestingSource(["a", "b", "a"]))
    >>> output("out", count_final("count", s, lambda x: x), TestingSink(out))
    >>> run_main(flow)
    >>> out
    [('a', 2), ('b', 1)]
    """
    down: KeyedStream[int] = map("init_count", up, lambda x: (key(x), 1))
    return reduce_final("sum", down, lambda s, x: s + x)


@_operator
def max_final(step_id: str, up: KeyedStream[_V], by: Callable[[_V], Any] = _identity) -> KeyedStream[_V]:
    """The maximum value per key (by ``by``) at EOF; ties keep the earlier value."""
    return reduce_final("reduce_final", up, functools.partial(builtins.max, key=by))


@_operator
def min_final(step_id: str, up: KeyedStream[_V], by: Callable[[_V], Any] = _identity) -> KeyedStream[_V]:
    """The minimum value per key (by ``by``) at EOF; ties keep the earlier value."""
    return reduce_final("reduce_final", up, functools.partial(builtins.min, key=by))


# collect. --------------------------------------------------------------------------------------


@dataclass
class _CollectState(Generic[_V]):
    acc: list[_V] = field(default_factory=list)
    timeout_at: datetime | None = None


@dataclass
class _CollectLogic(StatefulLogic[_V, list[_V], _CollectState[_V]]):
    step_id: str
    now_getter: Callable[[], datetime]
    timeout: timedelta
    max_size: int
    state: _CollectState[_V]

    def on_item(self, value: _V) -> tuple[Iterable[list[_V]], bool]:
        self.state.timeout_at = self.now_getter() + self.timeout
        self.state.acc.append(value)
        if len(self.state.acc) >= self.max_size:
            return ((self.state.acc,), StatefulLogic.DISCARD)
        return (_EMPTY, StatefulLogic.RETAIN)

    def on_notify(self) -> tuple[Iterable[list[_V]], bool]:
        return ((self.state.acc,), StatefulLogic.DISCARD)

    def on_eof(self) -> tuple[Iterable[list[_V]], bool]:
        return ((self.state.acc,), StatefulLogic.DISCARD)

    def notify_at(self) -> datetime | None:
        return self.state.timeout_at

    def snapshot(self) -> _CollectState[_V]:
        return copy.deepcopy(self.state)


@_operator
def collect(
    step_id: str,
    up: KeyedStream[_V],
    timeout: timedelta,
    max_size: int,
    _now_getter: Callable[[], datetime] = _system_utc,
) -> KeyedStream[list[_V]]:
    """Collect each key's values into lists: emitted at ``max_size`` values, after ``timeout``
    without a new value, or at EOF. ``_now_getter`` (not in Bytewax) replaces the system clock."""

    def shim_builder(resume_state: _CollectState[_V] | None) -> _CollectLogic[_V]:
        state = resume_state if resume_state is not None else _CollectState()
        return _CollectLogic(step_id, _now_getter, timeout, max_size, state)

    return stateful("stateful", up, shim_builder)


# join. -----------------------------------------------------------------------------------------


JoinInsertMode: TypeAlias = Literal["first", "last", "product"]
"""How a side's further values are kept: the first, the last, or all (cross product)."""

JoinEmitMode: TypeAlias = Literal["complete", "final", "running"]
"""When rows are emitted: once every side has a value (then discard), at EOF (then discard), or
on every value (keep the state)."""

_LONE_NONE: list[Any] = [None]


@dataclass
class _JoinState:
    seen: list[list[Any]]

    @classmethod
    def for_side_count(cls, side_count: int) -> _JoinState:
        return cls([[] for _ in range(side_count)])

    def set_val(self, side: int, value: Any) -> None:
        self.seen[side] = [value]

    def add_val(self, side: int, value: Any) -> None:
        self.seen[side].append(value)

    def is_set(self, side: int) -> bool:
        return len(self.seen[side]) > 0

    def all_set(self) -> bool:
        return all(self.seen)

    def astuples(self) -> list[tuple[Any, ...]]:
        return list(itertools.product(*(vals if vals else _LONE_NONE for vals in self.seen)))


@dataclass
class _JoinLogic(StatefulLogic[tuple[int, Any], tuple[Any, ...], _JoinState]):
    insert_mode: JoinInsertMode
    emit_mode: JoinEmitMode
    state: _JoinState

    def on_item(self, value: tuple[int, Any]) -> tuple[Iterable[tuple[Any, ...]], bool]:
        side, v = value
        if self.insert_mode == "first" and not self.state.is_set(side):
            self.state.set_val(side, v)
        elif self.insert_mode == "last":
            self.state.set_val(side, v)
        elif self.insert_mode == "product":
            self.state.add_val(side, v)
        if self.emit_mode == "complete" and self.state.all_set():
            return (self.state.astuples(), StatefulLogic.DISCARD)
        if self.emit_mode == "running":
            return (self.state.astuples(), StatefulLogic.RETAIN)
        return (_EMPTY, StatefulLogic.RETAIN)

    def on_eof(self) -> tuple[Iterable[tuple[Any, ...]], bool]:
        if self.emit_mode == "final":
            return (self.state.astuples(), StatefulLogic.DISCARD)
        return (_EMPTY, StatefulLogic.RETAIN)

    def snapshot(self) -> _JoinState:
        return copy.deepcopy(self.state)


def _label(side: int, v: Any) -> tuple[int, Any]:
    return (side, v)


@_operator
def _join_label_merge(step_id: str, *ups: KeyedStream[Any]) -> KeyedStream[tuple[int, Any]]:
    labelled = [map_value(f"label_{i}", up, functools.partial(_label, i)) for i, up in enumerate(ups)]
    return merge("merge", *labelled)


@_operator
def join(
    step_id: str,
    *sides: KeyedStream[Any],
    insert_mode: JoinInsertMode = "last",
    emit_mode: JoinEmitMode = "complete",
) -> KeyedStream[tuple[Any, ...]]:
    """Join the values of a key across several keyed streams into tuples (side order); a side
    without a value is None. See :data:`JoinInsertMode` and :data:`JoinEmitMode`."""
    if insert_mode not in typing.get_args(JoinInsertMode):
        raise ValueError(f"unknown join insert mode {insert_mode!r}")
    if emit_mode not in typing.get_args(JoinEmitMode):
        raise ValueError(f"unknown join emit mode {emit_mode!r}")
    side_count = len(sides)

    def shim_builder(resume_state: _JoinState | None) -> _JoinLogic:
        state = resume_state if resume_state is not None else _JoinState.for_side_count(side_count)
        return _JoinLogic(insert_mode, emit_mode, state)

    return stateful("join", _join_label_merge("add_names", *sides), shim_builder)
