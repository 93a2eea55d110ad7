"""Time-based windowing operators (``bytewax.operators.windowing``), Bytewax 0.21 names and semantics.

Every windowing operator is a thin wrapper over :func:`window`, the general primitive, which is a
:func:`~fs_compat.bytewax.operators.stateful_batch` step: per key, one logic holds the key's
:class:`ClockLogic` (timestamps and watermark), :class:`WindowerLogic` (which windows are open) and a
:class:`WindowLogic` per open window. Its ``snapshot()`` is what recovery stores.

Unlike Bytewax 0.21, a key's window state is dropped as soon as none of its windows can receive
data any more (no window open, nothing queued), for session windows too (Bytewax keeps every
session key forever, its issue #577). See ``migration_guide/bytewax.md`` for what that changes.

>>> from datetime import datetime, timedelta, timezone
>>> import fs_compat.bytewax.operators as op
>>> from fs_compat.bytewax.dataflow import Dataflow
>>> from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main
>>> t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
>>> events = [("a", t0), ("a", t0 + timedelta(seconds=3)), ("a", t0 + timedelta(seconds=12))]
>>> out = []
>>> flow = Dataflow("eg")
>>> s = op.input("inp", flow, TestingSource(events))
>>> s = op.key_on("key", s, lambda e: e[0])
>>> clock = EventClock(lambda e: e[1], wait_for_system_duration=timedelta(0))
>>> wo = count_window("count", op.key_rm("unkey", s), clock,
...                   TumblingWindower(timedelta(seconds=10), t0), lambda e: e[0])
>>> op.output("out", wo.down, TestingSink(out))
>>> run_main(flow)
>>> out
[('a', (0, 2)), ('a', (1, 1))]
"""

from __future__ import annotations

import copy
import functools
import heapq
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, Self, TypeAlias, TypeVar

from .._clocks import UTC_MAX as UTC_MAX
from .._clocks import UTC_MIN as UTC_MIN
from .._clocks import ZERO_TD as ZERO_TD
from .._clocks import Clock as Clock
from .._clocks import ClockLogic as ClockLogic
from .._clocks import EventClock as EventClock
from .._clocks import SystemClock as SystemClock
from .._clocks import _EventClockLogic as _EventClockLogic
from .._clocks import _EventClockState as _EventClockState
from .._clocks import _SystemClockLogic as _SystemClockLogic
from .._windowers import LATE_SESSION_ID as LATE_SESSION_ID
from .._windowers import SessionWindower as SessionWindower
from .._windowers import SlidingWindower as SlidingWindower
from .._windowers import TumblingWindower as TumblingWindower
from .._windowers import Windower as Windower
from .._windowers import WindowerLogic as WindowerLogic
from .._windowers import WindowMetadata as WindowMetadata
from .._windowers import _session_find_merges as _session_find_merges
from .._windowers import _SessionWindowerLogic as _SessionWindowerLogic
from .._windowers import _SessionWindowerState as _SessionWindowerState
from .._windowers import _SlidingWindowerLogic as _SlidingWindowerLogic
from .._windowers import _SlidingWindowerState as _SlidingWindowerState
from ..dataflow import Stream as _Stream
from ..dataflow import operator as _operator
from . import (
    _EMPTY,
    JoinEmitMode,
    JoinInsertMode,
    KeyedStream,
    _identity,
    _join_label_merge,
    _JoinState,
    _untyped_none,
)
from . import StatefulBatchLogic as _StatefulBatchLogic
from . import filter_map_value as _filter_map_value
from . import key_on as _key_on
from . import stateful_batch as _stateful_batch

__all__ = [
    "Clock",
    "ClockLogic",
    "EventClock",
    "LATE_SESSION_ID",
    "SessionWindower",
    "SlidingWindower",
    "SystemClock",
    "TumblingWindower",
    "UTC_MAX",
    "UTC_MIN",
    "WindowLogic",
    "WindowMetadata",
    "WindowOut",
    "Windower",
    "WindowerLogic",
    "ZERO_TD",
    "collect_window",
    "count_window",
    "fold_window",
    "join_window",
    "max_window",
    "min_window",
    "reduce_window",
    "window",
]

_V = TypeVar("_V")
_W = TypeVar("_W")
_W_co = TypeVar("_W_co", covariant=True)
_S = TypeVar("_S")
_X = TypeVar("_X")


class WindowLogic(ABC, Generic[_V, _W, _S]):
    """The logic of one window of one key in :func:`window`: built by the ``builder`` when the
    window opens (or from its snapshot on resume)."""

    @abstractmethod
    def on_value(self, value: _V) -> Iterable[_W]:
        """A value in this window (in timestamp order when ``ordered``); returns values to emit."""

    @abstractmethod
    def on_merge(self, original: Self) -> Iterable[_W]:
        """Absorb ``original``, a window merged into this one (which opened earlier); the original
        is dropped afterwards. Returns values to emit."""

    @abstractmethod
    def on_close(self) -> Iterable[_W]:
        """The window closed; returns values to emit."""

    @abstractmethod
    def snapshot(self) -> _S:
        """An immutable, picklable copy of the state, given back to the ``builder`` on resume."""


@dataclass(frozen=True)
class _WindowSnapshot:
    """A key's window state: what recovery stores for a :func:`window` step."""

    clock_state: Any
    windower_state: Any
    logic_states: dict[int, Any]
    """Each open window's ``WindowLogic.snapshot()`` by window id."""
    queue: list[tuple[Any, datetime]]
    """On-time values not yet applied (``ordered``), as ``(value, timestamp)`` in timestamp order."""


_EMIT: Literal["E"] = "E"
_LATE: Literal["L"] = "L"
_META: Literal["M"] = "M"

_WindowEvent: TypeAlias = tuple[int, str, Any]
"""``(window id, "E" | "L" | "M", emitted value | late value | WindowMetadata)``."""


@dataclass
class _WindowLogic(_StatefulBatchLogic[Any, _WindowEvent, _WindowSnapshot]):
    """One key's logic of :func:`window`.

    Late values (older than the watermark) become late events at once. On-time values are played
    into the windower and the window logics: at once in arrival order (``ordered=False``), or
    once the watermark has reached them, in timestamp order (``ordered=True``). Then merges are
    applied and closed windows emit, followed by their metadata. The logic asks to be discarded
    when no window is open and nothing is queued.
    """

    clock: ClockLogic[Any, Any]
    windower: WindowerLogic[Any]
    builder: Callable[[Any], WindowLogic[Any, Any, Any]]
    ordered: bool
    logics: dict[int, WindowLogic[Any, Any, Any]] = field(default_factory=dict)
    queue: list[tuple[datetime, int, Any]] = field(default_factory=list)
    """``(timestamp, arrival number, value)``: a heap when ``ordered``, else in arrival order."""
    _arrivals: int = 0
    _last_watermark: datetime = UTC_MIN

    def _advance(self, watermark: datetime) -> None:
        if watermark < self._last_watermark:
            raise ValueError(
                f"the clock's watermark went backwards from {self._last_watermark} to {watermark}"
            )
        self._last_watermark = watermark

    def _enqueue(self, value: Any, timestamp: datetime) -> None:
        entry = (timestamp, self._arrivals, value)
        self._arrivals += 1
        if self.ordered:
            heapq.heappush(self.queue, entry)
        else:
            self.queue.append(entry)

    def _due(self, watermark: datetime) -> list[tuple[datetime, int, Any]]:
        if not self.ordered:
            due, self.queue = self.queue, []
            return due
        due = []
        while self.queue and self.queue[0][0] <= watermark:
            due.append(heapq.heappop(self.queue))
        return due

    def _flush(self, watermark: datetime, events: list[_WindowEvent]) -> None:
        for timestamp, _arrival, value in self._due(watermark):
            for window_id in self.windower.open_for(timestamp):
                logic = self.logics.get(window_id)
                if logic is None:
                    logic = self.logics[window_id] = self.builder(None)
                events.extend((window_id, _EMIT, w) for w in logic.on_value(value))
        for original_id, target_id in self.windower.merged():
            if original_id == target_id:
                continue
            original = self.logics.pop(original_id, None)
            if original is None:
                continue
            target = self.logics.get(target_id)
            if target is None:  # a custom windower merging into a window without values yet
                self.logics[target_id] = original
                continue
            events.extend((target_id, _EMIT, w) for w in target.on_merge(original))
        for window_id, meta in self.windower.close_for(watermark):
            logic = self.logics.pop(window_id, None)
            if logic is not None:
                events.extend((window_id, _EMIT, w) for w in logic.on_close())
            events.append((window_id, _META, meta))

    def _is_empty(self) -> bool:
        return not self.logics and not self.queue and self.windower.is_empty()

    def on_batch(self, values: list[Any]) -> tuple[list[_WindowEvent], bool]:
        self.clock.before_batch()
        events: list[_WindowEvent] = []
        watermark = self._last_watermark
        for value in values:
            timestamp, watermark = self.clock.on_item(value)
            self._advance(watermark)
            if timestamp < watermark:
                events.extend((window_id, _LATE, value) for window_id in self.windower.late_for(timestamp))
            else:
                self._enqueue(value, timestamp)
        self._flush(watermark, events)
        return (events, self._is_empty())

    def on_notify(self) -> tuple[list[_WindowEvent], bool]:
        watermark = self.clock.on_notify()
        self._advance(watermark)
        events: list[_WindowEvent] = []
        self._flush(watermark, events)
        return (events, self._is_empty())

    def on_eof(self) -> tuple[list[_WindowEvent], bool]:
        watermark = self.clock.on_eof()
        self._advance(watermark)
        events: list[_WindowEvent] = []
        self._flush(watermark, events)
        return (events, self._is_empty())

    def notify_at(self) -> datetime | None:
        at = self.windower.notify_at()
        if self.ordered and self.queue:
            # Wake up when the earliest queued value becomes due, or it waits for the next item.
            queued = self.queue[0][0]
            at = queued if at is None else min(at, queued)
        return None if at is None else self.clock.to_system_utc(at)

    def snapshot(self) -> _WindowSnapshot:
        ordered_queue = sorted(self.queue) if self.ordered else self.queue
        return _WindowSnapshot(
            self.clock.snapshot(),
            self.windower.snapshot(),
            {window_id: logic.snapshot() for window_id, logic in self.logics.items()},
            # Values are the user's objects, which window logics may mutate later: copy them.
            copy.deepcopy([(value, timestamp) for timestamp, _arrival, value in ordered_queue]),
        )


@dataclass(frozen=True)
class WindowOut(Generic[_V, _W_co]):
    """The streams of a windowing operator, each sub-keyed by window id."""

    down: KeyedStream[tuple[int, _W_co]]
    """What the window logics emitted: ``(key, (window_id, value))``."""

    late: KeyedStream[tuple[int, _V]]
    """Upstream values late for their windows: ``(key, (window_id, value))``. The ids may be of
    windows never seen on ``down`` or ``meta`` (session windows use :data:`LATE_SESSION_ID`)."""

    meta: KeyedStream[tuple[int, WindowMetadata]]
    """Each closed window's metadata, once, when it closes: ``(key, (window_id, metadata))``; not
    for windows merged into another (the target lists them in ``merged_ids``)."""


def _unwrap_emit(event: _WindowEvent) -> tuple[int, Any] | None:
    window_id, kind, obj = event
    return (window_id, obj) if kind == _EMIT else None


def _unwrap_late(event: _WindowEvent) -> tuple[int, Any] | None:
    window_id, kind, obj = event
    return (window_id, obj) if kind == _LATE else None


def _unwrap_meta(event: _WindowEvent) -> tuple[int, WindowMetadata] | None:
    window_id, kind, obj = event
    return (window_id, obj) if kind == _META else None


@_operator
def window(
    step_id: str,
    up: KeyedStream[_V],
    clock: Clock[_V, Any],
    windower: Windower[Any],
    builder: Callable[[_S | None], WindowLogic[_V, _W, _S]],
    ordered: bool = True,
) -> WindowOut[_V, _W]:
    """The general windowing operator: ``builder(resume_state or None)`` makes the
    :class:`WindowLogic` of each window of each key; ``clock`` and ``windower`` decide the times
    and the windows. ``ordered``: apply values in timestamp order (after the watermark reached
    them) rather than in arrival order."""

    def shim_builder(resume_state: _WindowSnapshot | None) -> _WindowLogic:
        if resume_state is None:
            return _WindowLogic(clock.build(None), windower.build(None), builder, ordered)
        logics: dict[int, WindowLogic[Any, Any, Any]] = {
            window_id: builder(state) for window_id, state in resume_state.logic_states.items()
        }
        queue = [(timestamp, i, value) for i, (value, timestamp) in enumerate(resume_state.queue)]
        return _WindowLogic(
            clock.build(resume_state.clock_state),
            windower.build(resume_state.windower_state),
            builder,
            ordered,
            logics,
            queue,
            len(queue),
        )

    events: KeyedStream[_WindowEvent] = _stateful_batch("stateful_batch", up, shim_builder)
    down: KeyedStream[tuple[int, _W]] = _filter_map_value("unwrap_down", events, _unwrap_emit)
    late: KeyedStream[tuple[int, _V]] = _filter_map_value("unwrap_late", events, _unwrap_late)
    meta = _filter_map_value("unwrap_meta", events, _unwrap_meta)
    return WindowOut(down, late, meta)


# fold_window and its wrappers. -----------------------------------------------------------------


@dataclass
class _FoldWindowLogic(WindowLogic[_V, _S, _S]):
    folder: Callable[[_S, _V], _S]
    merger: Callable[[_S, _S], _S]
    state: _S

    def on_value(self, value: _V) -> Iterable[_S]:
        self.state = self.folder(self.state, value)
        return _EMPTY

    def on_merge(self, original: Self) -> Iterable[_S]:
        self.state = self.merger(self.state, original.state)
        return _EMPTY

    def on_close(self) -> Iterable[_S]:
        return (self.state,)

    def snapshot(self) -> _S:
        return copy.deepcopy(self.state)


@_operator
def fold_window(
    step_id: str,
    up: KeyedStream[_V],
    clock: Clock[_V, Any],
    windower: Windower[Any],
    builder: Callable[[], _S],
    folder: Callable[[_S, _V], _S],
    merger: Callable[[_S, _S], _S],
    ordered: bool = True,
) -> WindowOut[_V, _S]:
    """Fold each window's values into ``builder()`` with ``folder``; ``merger`` combines the
    accumulators of merging (session) windows. Emits the accumulator when the window closes."""

    def shim_builder(resume_state: _S | None) -> _FoldWindowLogic[_V, _S]:
        state = resume_state if resume_state is not None else builder()
        return _FoldWindowLogic(folder, merger, state)

    return window("window", up, clock, windower, shim_builder, ordered)


def _append(acc: list[_V], v: _V) -> list[_V]:
    acc.append(v)
    return acc


def _add(acc: set[_V], v: _V) -> set[_V]:
    acc.add(v)
    return acc


def _update(a: dict[Any, Any], b: dict[Any, Any]) -> dict[Any, Any]:
    a.update(b)
    return a


def _collect_callbacks(
    step_id: str, into: type
) -> tuple[Callable[[], Any], Callable[[Any, Any], Any], Callable[[Any, Any], Any]]:
    if issubclass(into, list):
        return (list, _append, list.__add__)
    if issubclass(into, set):
        return (set, _add, set.union)
    if issubclass(into, dict):

        def put(acc: dict[Any, Any], k_v: Any) -> dict[Any, Any]:
            try:
                k, v = k_v
            except (TypeError, ValueError) as ex:
                raise TypeError(
                    f"step {step_id!r} collecting into a `dict` requires `(key, value)` 2-tuple "
                    f"as the values in the stream; got a {type(k_v)!r} instead"
                ) from ex
            acc[k] = v
            return acc

        return (dict, put, _update)
    raise TypeError(
        f"`collect_window` doesn't support `{into!r}`; only `list`, `set`, and `dict`; "
        "use `fold_window` directly"
    )


@_operator
def collect_window(
    step_id: str,
    up: KeyedStream[_V],
    clock: Clock[_V, Any],
    windower: Windower[Any],
    into: type = list,
    ordered: bool = True,
) -> WindowOut[_V, Any]:
    """Collect each window's values into a ``list`` (default), ``set`` or ``dict`` (values must
    be ``(k, v)`` pairs), emitted when the window closes; in timestamp order when ``ordered``."""
    shim_builder, shim_folder, shim_merger = _collect_callbacks(step_id, into)
    return fold_window("fold_window", up, clock, windower, shim_builder, shim_folder, shim_merger, ordered)


def _zero() -> int:
    return 0


def _count_one(count: int, _value: Any) -> int:
    return count + 1


def _sum(a: int, b: int) -> int:
    return a + b


@_operator
def count_window(
    step_id: str,
    up: _Stream[_X],
    clock: Clock[_X, Any],
    windower: Windower[Any],
    key: Callable[[_X], str],
) -> WindowOut[_X, int]:
    """Count the items per ``key(item)`` and window: ``(key, (window_id, count))`` at close."""
    keyed = _key_on("keyed", up, key)
    return fold_window("sum", keyed, clock, windower, _zero, _count_one, _sum, ordered=False)


@_operator
def reduce_window(
    step_id: str,
    up: KeyedStream[_V],
    clock: Clock[_V, Any],
    windower: Windower[Any],
    reducer: Callable[[_V, _V], _V],
) -> WindowOut[_V, _V]:
    """Reduce each window's values with ``reducer`` (the first value is the start); emitted at
    close. Values are reduced in arrival order."""

    def shim_folder(s: _V | None, v: _V) -> _V:
        return v if s is None else reducer(s, v)

    return fold_window("fold_window", up, clock, windower, _untyped_none, shim_folder, reducer, ordered=False)


@_operator
def max_window(
    step_id: str,
    up: KeyedStream[_V],
    clock: Clock[_V, Any],
    windower: Windower[Any],
    by: Callable[[_V], Any] = _identity,
) -> WindowOut[_V, _V]:
    """The maximum value (by ``by``) per key and window, at close; ties keep the earlier value."""
    return reduce_window("reduce_window", up, clock, windower, functools.partial(max, key=by))


@_operator
def min_window(
    step_id: str,
    up: KeyedStream[_V],
    clock: Clock[_V, Any],
    windower: Windower[Any],
    by: Callable[[_V], Any] = _identity,
) -> WindowOut[_V, _V]:
    """The minimum value (by ``by``) per key and window, at close; ties keep the earlier value."""
    return reduce_window("reduce_window", up, clock, windower, functools.partial(min, key=by))


# join_window. ----------------------------------------------------------------------------------


@dataclass
class _JoinWindowLogic(WindowLogic[tuple[int, Any], tuple[Any, ...], _JoinState]):
    insert_mode: JoinInsertMode
    emit_mode: JoinEmitMode
    state: _JoinState

    def _rows(self) -> Iterable[tuple[Any, ...]]:
        if self.emit_mode == "complete" and self.state.all_set():
            rows = self.state.astuples()
            for values in self.state.seen:
                values.clear()
            return rows
        if self.emit_mode == "running":
            return self.state.astuples()
        return _EMPTY

    def on_value(self, value: tuple[int, Any]) -> Iterable[tuple[Any, ...]]:
        side, v = value
        if self.insert_mode == "first":
            if not self.state.is_set(side):
                self.state.set_val(side, v)
        elif self.insert_mode == "last":
            self.state.set_val(side, v)
        else:
            self.state.add_val(side, v)
        return self._rows()

    def on_merge(self, original: Self) -> Iterable[tuple[Any, ...]]:
        # ``self`` opened first, so its values come before the original's.
        mine, theirs = self.state.seen, original.state.seen
        if len(mine) != len(theirs):
            raise ValueError("join states are not same cardinality")
        if self.insert_mode == "first":
            self.state.seen = [m if m else t for m, t in zip(mine, theirs, strict=True)]
        elif self.insert_mode == "last":
            self.state.seen = [t if t else m for m, t in zip(mine, theirs, strict=True)]
        else:
            self.state.seen = [m + t for m, t in zip(mine, theirs, strict=True)]
        return self._rows()

    def on_close(self) -> Iterable[tuple[Any, ...]]:
        return self.state.astuples() if self.emit_mode == "final" else _EMPTY

    def snapshot(self) -> _JoinState:
        return copy.deepcopy(self.state)


def _side_value(ts_getter: Callable[[Any], datetime], side_value: tuple[int, Any]) -> datetime:
    return ts_getter(side_value[1])


@_operator
def join_window(
    step_id: str,
    clock: Clock[Any, Any],
    windower: Windower[Any],
    *sides: KeyedStream[Any],
    insert_mode: JoinInsertMode = "last",
    emit_mode: JoinEmitMode = "final",
    ordered: bool = True,
) -> WindowOut[Any, tuple[Any, ...]]:
    """Join the values of a key across several keyed streams, per window, into tuples (side
    order; a side without a value is None). ``insert_mode`` and ``emit_mode`` are those of
    :func:`~fs_compat.bytewax.operators.join`; ``"final"`` emits when the window closes. An
    :class:`EventClock` is applied to each side's values; any other clock sees ``(side, value)``."""
    if insert_mode not in typing.get_args(JoinInsertMode):
        raise ValueError(f"unknown join insert mode {insert_mode!r}")
    if emit_mode not in typing.get_args(JoinEmitMode):
        raise ValueError(f"unknown join emit mode {emit_mode!r}")
    side_count = len(sides)
    merged = _join_label_merge("add_names", *sides)
    if isinstance(clock, EventClock):
        clock = EventClock(
            ts_getter=functools.partial(_side_value, clock.ts_getter),
            wait_for_system_duration=clock.wait_for_system_duration,
            now_getter=clock.now_getter,
            to_system_utc=clock.to_system_utc,
        )

    def shim_builder(resume_state: _JoinState | None) -> _JoinWindowLogic:
        state = resume_state if resume_state is not None else _JoinState.for_side_count(side_count)
        return _JoinWindowLogic(insert_mode, emit_mode, state)

    return window("window", merged, clock, windower, shim_builder, ordered=ordered)
