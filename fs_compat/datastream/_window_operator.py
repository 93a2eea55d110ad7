"""The window operator: one keyed runtime Operator that assigns elements to windows, keeps each
window's contents in keyed state scoped to the window (a state namespace), fires windows through
triggers and timers, merges session windows, and clears the state of expired windows.

Everything it keeps lives in the keyed state backend (window contents, trigger state, the
merging-window set, which window registered which timer) and in the runtime's timer queues, so
the same operator runs in-process and inside Spark tasks, whose state snapshots per key group
carry it.

Runtime timers are per (timestamp, key); Flink's window timers are per (timestamp, key, window).
The operator keeps, per key and time domain, a map ``timestamp -> windows`` in keyed state, and
holds one runtime timer per timestamp while any window needs it.
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Callable, Iterable
from typing import Any, cast

from fs_api_advanced import BytesCodec, IntCodec, PickleCodec
from fs_compat.metrics import MetricGroup
from fs_compat.runtime import (
    MAX_TIMESTAMP,
    MIN_TIMESTAMP,
    KeyedStateBackend,
    Operator,
    OperatorRuntime,
    SideOutput,
    StateAccessError,
    StateKind,
    StateSpec,
    TimeDomain,
)

from ._adapters import outputs
from ._descriptors import StateDescriptor
from ._functions import Function, RuntimeContext
from ._window import (
    CountWindow,
    Evictor,
    GlobalWindow,
    MergingWindowAssigner,
    TimestampedValue,
    TimeWindow,
    Trigger,
    TriggerResult,
    Window,
    WindowAssigner,
)
from ._window_functions import KeyedStateStore, ProcessAllWindowFunction, ProcessWindowFunction

_EVENT = TimeDomain.EVENT_TIME
_PROCESSING = TimeDomain.PROCESSING_TIME

#: Which windows wait for a timer at each timestamp, per key (one map per time domain).
_EVENT_TIMERS = StateSpec("window-event-timers", StateKind.MAP, PickleCodec(), key_codec=IntCodec())
_PROCESSING_TIMERS = StateSpec("window-processing-timers", StateKind.MAP, PickleCodec(), key_codec=IntCodec())
#: Merging (session) windows: window -> the window whose namespace holds its state (Flink's name).
_MERGING_SET = StateSpec("merging-window-set", StateKind.MAP, BytesCodec(), key_codec=BytesCodec())

# Windows as state namespaces. -------------------------------------------------------------------

_TIME = struct.Struct(">qq")
_COUNT = struct.Struct(">q")


def encode_window(window: Any) -> bytes:
    """A window's namespace bytes: equal windows, equal bytes."""
    kind = type(window)
    try:
        if kind is TimeWindow:
            return b"T" + _TIME.pack(window.start, window.end)
        if kind is CountWindow:
            return b"C" + _COUNT.pack(window.id)
    except struct.error:
        pass
    if kind is GlobalWindow:
        return b"G"
    return b"P" + pickle.dumps(window, protocol=5)


def decode_window(data: bytes) -> Any:
    tag, body = data[:1], data[1:]
    if tag == b"T":
        return TimeWindow(*_TIME.unpack(body))
    if tag == b"C":
        return CountWindow(_COUNT.unpack(body)[0])
    if tag == b"G":
        return GlobalWindow()
    return pickle.loads(body)


# The window function, whatever its kind. ----------------------------------------------------------


class WindowFn:
    """Calls a user window function the way its kind wants: ``pass`` (emit the contents),
    ``apply`` (WindowFunction), ``apply_all`` (AllWindowFunction), ``process``
    (ProcessWindowFunction), ``process_all`` (ProcessAllWindowFunction)."""

    def __init__(self, fn: Any, mode: str) -> None:
        self.fn = fn
        self.mode = mode

    def open(self, runtime_context: RuntimeContext) -> None:
        if isinstance(self.fn, Function):
            self.fn.open(runtime_context)

    def close(self) -> None:
        if isinstance(self.fn, Function):
            self.fn.close()

    def process(self, key: Any, window: Window, ctx: WindowContext, values: list[Any]) -> Any:
        mode, fn = self.mode, self.fn
        if mode == "pass":
            return values
        if mode == "apply":
            return fn.apply(key, window, values)
        if mode == "apply_all":
            return fn.apply(window, values)
        if mode == "process":
            return fn.process(key, ctx, values)
        return fn.process(ctx, values)

    def clear(self, ctx: WindowContext) -> None:
        if self.mode in ("process", "process_all"):
            self.fn.clear(ctx)


# Contexts handed to user code. --------------------------------------------------------------------


class _WindowStateStore(KeyedStateStore):
    """State scoped to the current key and one window (``window_state()``)."""

    def __init__(self, op: WindowOperator) -> None:
        self._op = op
        self.namespace = b""

    def _get(self, descriptor: Any) -> Any:
        op = self._op
        if op.merging:
            raise StateAccessError("Per-window state is not allowed when using merging windows.")
        return op.scoped_state(descriptor, self.namespace)

    def get_state(self, state_descriptor: Any) -> Any:
        return self._get(state_descriptor)

    def get_list_state(self, state_descriptor: Any) -> Any:
        return self._get(state_descriptor)

    def get_map_state(self, state_descriptor: Any) -> Any:
        return self._get(state_descriptor)

    def get_reducing_state(self, state_descriptor: Any) -> Any:
        return self._get(state_descriptor)

    def get_aggregating_state(self, state_descriptor: Any) -> Any:
        return self._get(state_descriptor)


class WindowContext(ProcessWindowFunction.Context[Any], ProcessAllWindowFunction.Context[Any]):
    """The context of (Process)(All)WindowFunctions: the window being evaluated, clocks, and
    state per window (``window_state``) and per key (``global_state``)."""

    def __init__(self, op: WindowOperator) -> None:
        self._op = op
        self._window: Any = None
        self._store = _WindowStateStore(op)

    def set_window(self, window: Any) -> None:
        self._window = window
        self._store.namespace = encode_window(window)

    def window(self) -> Any:
        return self._window

    def current_processing_time(self) -> int:
        return self._op.rt.clock()

    def current_watermark(self) -> int:
        return self._op.rt.watermark

    def window_state(self) -> KeyedStateStore:
        return self._store

    def global_state(self) -> KeyedStateStore:
        return cast(KeyedStateStore, self._op.runtime_context)


class _TriggerContext(Trigger.OnMergeContext, Evictor.EvictorContext):
    """What a trigger (or an evictor) sees: clocks, timers and state of ``window``."""

    def __init__(self, op: WindowOperator) -> None:
        self._op = op
        self.window: Any = None
        self.merged_windows: list[Any] | None = None

    def get_current_processing_time(self) -> int:
        return self._op.rt.clock()

    def get_metric_group(self) -> MetricGroup:
        return self._op.runtime_context.get_metrics_group()

    def get_current_watermark(self) -> int:
        return self._op.rt.watermark

    def register_processing_time_timer(self, time: int) -> None:
        self._op.register_timer(_PROCESSING, time, encode_window(self.window))

    def register_event_time_timer(self, time: int) -> None:
        self._op.register_timer(_EVENT, time, encode_window(self.window))

    def delete_processing_time_timer(self, time: int) -> None:
        self._op.delete_timer(_PROCESSING, time, encode_window(self.window))

    def delete_event_time_timer(self, time: int) -> None:
        self._op.delete_timer(_EVENT, time, encode_window(self.window))

    def get_partitioned_state(self, state_descriptor: StateDescriptor) -> Any:
        return self._op.scoped_state(state_descriptor, encode_window(self.window))

    def merge_partitioned_state(self, state_descriptor: StateDescriptor) -> None:
        if not self.merged_windows:
            return
        op = self._op
        target = encode_window(self.window)
        view = op.scoped_state(state_descriptor, target)
        spec = op.spec_of(state_descriptor)
        sources = [encode_window(w) for w in self.merged_windows]
        merge_namespaces(op.backend, view, spec, target, sources)


class _AssignerContext(WindowAssigner.WindowAssignerContext):
    def __init__(self, op: WindowOperator) -> None:
        self._op = op

    def get_current_processing_time(self) -> int:
        return self._op.rt.clock()

    def get_runtime_context(self) -> RuntimeContext:
        return self._op.runtime_context


def merge_namespaces(
    backend: KeyedStateBackend, view: Any, spec: StateSpec, target: bytes, sources: Iterable[bytes]
) -> None:
    """Fold the state of ``view`` in the ``sources`` namespaces into ``target`` (Flink's
    ``mergeNamespaces``): lists are appended, reducing and aggregating states combined; the
    sources are cleared."""
    sources = [s for s in sources if s != target]
    kind = spec.kind
    if kind is StateKind.LIST:
        items: list[Any] = []
        for ns in sources:
            backend.current_namespace = ns
            items.extend(view.get())
            view.clear()
        backend.current_namespace = target
        if items:
            view.add_all(items)
        return
    if kind not in (StateKind.REDUCING, StateKind.AGGREGATING):
        raise StateAccessError(
            f"The state '{spec.name}' ({spec.describe()}) does not refer to a mergeable state "
            "(list, reducing or aggregating state)"
        )
    values = []
    for ns in sources:
        backend.current_namespace = ns
        value = view.get_internal()
        if value is not None:
            values.append(value)
            view.clear()
    backend.current_namespace = target
    if not values:
        return
    merged = view.get_internal()
    combine: Callable[[Any, Any], Any]
    if kind is StateKind.REDUCING:
        assert spec.reduce_function is not None
        combine = spec.reduce_function
    else:
        assert spec.aggregate_function is not None
        combine = spec.aggregate_function.merge
    for value in values:
        merged = value if merged is None else combine(merged, value)
    view.update_internal(merged)


# The merging window set (sessions). -------------------------------------------------------------


class _Collect(MergingWindowAssigner.MergeCallback[Any]):
    def __init__(self) -> None:
        self.merges: list[tuple[Any, list[Any]]] = []

    def merge(self, to_be_merged: Iterable[Any], merge_result: Any) -> None:
        self.merges.append((merge_result, list(to_be_merged)))


class MergingWindowSet:
    """The in-flight windows of the current key and, for each, the window whose namespace holds
    its state (merging moves state as little as possible: the merged window keeps the state
    namespace of one of the windows it merged). Loaded from keyed state; ``persist`` saves it."""

    def __init__(self, op: WindowOperator) -> None:
        self._op = op
        state = op.merging_state
        self.mapping: dict[Any, Any] = {decode_window(k): decode_window(v) for k, v in state.items()}
        self._initial = dict(self.mapping)

    def persist(self) -> None:
        if self.mapping == self._initial:
            return
        state = self._op.merging_state
        state.clear()
        for window, state_window in self.mapping.items():
            state.put(encode_window(window), encode_window(state_window))
        self._initial = dict(self.mapping)

    def state_window(self, window: Any) -> Any:
        return self.mapping.get(window)

    def retire_window(self, window: Any) -> None:
        if self.mapping.pop(window, None) is None:
            raise StateAccessError(f"Window {window} is not in in-flight window set.")

    def add_window(self, new_window: Any) -> Any:
        """Add ``new_window``, merging it (and others) as the assigner says; returns the window
        that now holds it. Merges run ``WindowOperator.merge`` (triggers, timers, state)."""
        op = self._op
        collect = _Collect()
        assigner = op.assigner
        assert isinstance(assigner, MergingWindowAssigner)
        assigner.merge_windows([*self.mapping, new_window], collect)
        result = new_window
        merged_new = False
        for merge_result, merged in collect.merges:
            if new_window in merged:
                merged_new = True
                merged.remove(new_window)
                result = merge_result
            # The merge result keeps the state namespace of one of the windows it merges.
            state_window = self.mapping[merged[0]]
            merged_state_windows = [self.mapping.pop(w) for w in merged if w in self.mapping]
            merged_state_windows.remove(state_window)
            self.mapping[merge_result] = state_window
            if not (len(merged) == 1 and merged[0] == merge_result):
                op.merge(merge_result, merged, state_window, merged_state_windows)
        if not collect.merges or (result == new_window and not merged_new):
            self.mapping[result] = result
        return result


# The operator. --------------------------------------------------------------------------------


class WindowOperator(Operator):
    """Flink's WindowOperator (and EvictingWindowOperator, when ``evictor`` is set) over the
    runtime's keyed state and timers.

    ``contents_spec`` is the window contents' state: a list (``process``/``apply``, and every
    function when there is an evictor: then of ``(value, timestamp)`` pairs), a reducing state
    (``reduce``) or an aggregating state (``aggregate``). ``pre`` turns an evicted list into the
    window function's input (reduce or aggregate it). ``purge_on_fire``: fired windows are
    dropped at once (count windows with their default trigger: nothing more can reach them).
    """

    keyed_state_by_current_key = True

    def __init__(
        self,
        *,
        assigner: WindowAssigner[Any, Any],
        trigger: Trigger[Any, Any],
        window_fn: WindowFn,
        contents_spec: StateSpec,
        allowed_lateness: int = 0,
        late: Callable[[Any], SideOutput] | None = None,
        evictor: Evictor[Any, Any] | None = None,
        pre: Callable[[list[Any]], list[Any]] | None = None,
        conform: Callable[[Any], Any] | None = None,
        purge_on_fire: bool = False,
    ) -> None:
        self.assigner = assigner
        self.trigger = trigger
        self.window_fn = window_fn
        self.contents_spec = contents_spec
        self.allowed_lateness = allowed_lateness
        self.late = late
        self.evictor = evictor
        self.pre = pre
        self.conform = conform
        self.purge_on_fire = purge_on_fire
        self.merging = isinstance(assigner, MergingWindowAssigner)
        self.event_time = assigner.is_event_time()
        self._specs: dict[int, tuple[Any, StateSpec]] = {}
        #: Timers of the current key known to be registered, during one process/on_timer call.
        self._known: set[tuple[TimeDomain, int, bytes]] = set()

    # Set-up.
    def open(self, runtime: OperatorRuntime) -> None:
        if runtime.backend is None:
            raise StateAccessError("windows are only supported on a KeyedStream")
        self.rt = runtime
        self.backend: KeyedStateBackend = runtime.backend
        self.runtime_context = RuntimeContext(runtime)
        self.contents = self.backend.get_state(self.contents_spec, namespaced=True)
        self.event_timers = self.backend.get_state(_EVENT_TIMERS)
        self.processing_timers = self.backend.get_state(_PROCESSING_TIMERS)
        self.merging_state: Any = self.backend.get_state(_MERGING_SET) if self.merging else None
        self.trigger_ctx = _TriggerContext(self)
        self.window_ctx = WindowContext(self)
        self.assigner_ctx = _AssignerContext(self)
        self.late_records_dropped = self.runtime_context.get_metrics_group().counter("numLateRecordsDropped")
        self.window_fn.open(self.runtime_context)

    def close(self) -> None:
        self.window_fn.close()

    def decode_namespace(self, namespace: bytes) -> Any:
        """The window whose state ``namespace`` holds (``encode_window``'s bytes)."""
        return decode_window(namespace)

    # State and timers scoped to a window.
    def spec_of(self, descriptor: Any) -> StateSpec:
        found = self._specs.get(id(descriptor))
        if found is None:
            if not isinstance(descriptor, StateDescriptor):
                raise TypeError(f"expected a state descriptor, got {descriptor!r}")
            found = self._specs[id(descriptor)] = (descriptor, descriptor._spec())
        return found[1]

    def scoped_state(self, descriptor: Any, namespace: bytes) -> Any:
        """The state of ``descriptor`` for the current key and the window ``namespace``."""
        view = self.backend.get_state(self.spec_of(descriptor), namespaced=True)
        self.backend.current_namespace = namespace
        return view

    def _timers(self, domain: TimeDomain) -> Any:
        return self.event_timers if domain is _EVENT else self.processing_timers

    def register_timer(self, domain: TimeDomain, time: int, namespace: bytes) -> None:
        time = int(time)
        known = (domain, time, namespace)
        if known in self._known:  # registered already during this call (trigger + cleanup timer)
            return
        self._known.add(known)
        index = self._timers(domain)
        waiting = index.get(time)
        if waiting is None:
            index.put(time, [namespace])
            service = self.rt.timer_service
            if domain is _EVENT:
                service.register_event_time_timer(time)
            else:
                service.register_processing_time_timer(time)
        elif namespace not in waiting:
            waiting.append(namespace)
            index.put(time, waiting)

    def delete_timer(self, domain: TimeDomain, time: int, namespace: bytes) -> None:
        index = self._timers(domain)
        time = int(time)
        self._known.discard((domain, time, namespace))
        waiting = index.get(time)
        if waiting is None or namespace not in waiting:
            return
        waiting.remove(namespace)
        if waiting:
            index.put(time, waiting)
            return
        index.remove(time)
        service = self.rt.timer_service
        if domain is _EVENT:
            service.delete_event_time_timer(time)
        else:
            service.delete_processing_time_timer(time)

    def cleanup_time(self, window: Window) -> int:
        if not self.event_time:
            return window.max_timestamp()
        return min(window.max_timestamp() + self.allowed_lateness, MAX_TIMESTAMP)

    def _register_cleanup_timer(self, window: Window) -> None:
        time = self.cleanup_time(window)
        if time != MAX_TIMESTAMP:
            self.register_timer(_EVENT if self.event_time else _PROCESSING, time, encode_window(window))

    def _delete_cleanup_timer(self, window: Window) -> None:
        time = self.cleanup_time(window)
        if time != MAX_TIMESTAMP:
            self.delete_timer(_EVENT if self.event_time else _PROCESSING, time, encode_window(window))

    def _is_window_late(self, window: Window) -> bool:
        return self.event_time and self.cleanup_time(window) <= self.rt.watermark

    # Window contents.
    def _add(self, namespace: bytes, value: Any, timestamp: int | None) -> None:
        self.backend.current_namespace = namespace
        self.contents.add((value, timestamp) if self.evictor is not None else value)

    def _clear_contents(self, namespace: bytes) -> None:
        self.backend.current_namespace = namespace
        self.contents.clear()

    def _read(self, namespace: bytes) -> list[Any] | None:
        """The window's contents as the function's input; None when it holds nothing."""
        self.backend.current_namespace = namespace
        if self.contents_spec.kind is StateKind.LIST:
            return self.contents.get() or None
        value = self.contents.get()
        return None if value is None else [value]

    # Firing.
    def _trigger_result(self, result: Any, what: str) -> TriggerResult:
        if not isinstance(result, TriggerResult):
            raise TypeError(
                f"{type(self.trigger).__name__}.{what} must return a TriggerResult, got {result!r}"
            )
        return result

    def _fired(
        self, result: TriggerResult, window: Window, namespace: bytes, key: Any, out: list[Any]
    ) -> None:
        """Act on a trigger result for ``window`` whose contents are in ``namespace``."""
        if result.is_fire():
            contents = self._read(namespace)
            if contents is not None:
                self._emit(key, window, namespace, contents, out)
        if result.is_purge() or (self.purge_on_fire and result.is_fire()):
            self._clear_contents(namespace)

    def _emit(self, key: Any, window: Window, namespace: bytes, contents: list[Any], out: list[Any]) -> None:
        evictor = self.evictor
        records: list[TimestampedValue[Any]] = []
        if evictor is None:
            values = contents
        else:
            records = [TimestampedValue(v, ts) for v, ts in contents]
            self.trigger_ctx.window = window
            evictor.evict_before(records, len(records), window, self.trigger_ctx)
            values = [r.get_value() for r in records]
        if self.pre is not None:
            values = self.pre(values)
        if values or self.pre is None:
            self.window_ctx.set_window(window)
            self.backend.current_namespace = encode_window(window)
            result = self.window_fn.process(key, window, self.window_ctx, values)
            out.extend(outputs(result, True, self.conform))
        if evictor is not None:
            evictor.evict_after(records, len(records), window, self.trigger_ctx)
            # What the evictors left is the window's contents from now on.
            self._clear_contents(namespace)
            if records:
                self.contents.add_all([(r.get_value(), r._timestamp) for r in records])

    def _clear_all_state(self, window: Window, namespace: bytes, windows: MergingWindowSet | None) -> None:
        """The window expired: drop its contents, trigger state and per-window state."""
        self._clear_contents(namespace)
        self.trigger_ctx.window = window
        self.trigger.clear(window, self.trigger_ctx)
        self.window_ctx.set_window(window)
        self.backend.current_namespace = encode_window(window)
        self.window_fn.clear(self.window_ctx)
        if windows is not None:
            windows.retire_window(window)

    def merge(
        self, merge_result: Any, merged_windows: list[Any], state_window: Any, merged_state_windows: list[Any]
    ) -> None:
        """Windows merged (MergingWindowSet): merge their trigger state and contents."""
        rt = self.rt
        if self.event_time:
            if merge_result.max_timestamp() + self.allowed_lateness <= rt.watermark:
                raise StateAccessError(
                    "The end timestamp of an event-time window cannot become earlier than the current "
                    f"watermark by merging. Current watermark: {rt.watermark} window: {merge_result}"
                )
        elif merge_result.max_timestamp() <= rt.clock():
            raise StateAccessError(
                "The end timestamp of a processing-time window cannot become earlier than the current "
                f"processing time by merging. Current processing time: {rt.clock()} window: {merge_result}"
            )
        ctx = self.trigger_ctx
        ctx.window, ctx.merged_windows = merge_result, merged_windows
        try:
            self.trigger.on_merge(merge_result, ctx)
        finally:
            ctx.merged_windows = None
        for window in merged_windows:
            ctx.window = window
            self.trigger.clear(window, ctx)
            self._delete_cleanup_timer(window)
        merge_namespaces(
            self.backend,
            self.contents,
            self.contents_spec,
            encode_window(state_window),
            [encode_window(w) for w in merged_state_windows],
        )

    # The Operator interface.
    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        out: list[Any] = []
        key = runtime.current_key
        self._known.clear()
        if not self.event_time and not self.processing_timers.is_empty():
            self._fire_due_processing_timers(key, out)
        timestamp = runtime.timestamp
        ts = MIN_TIMESTAMP if timestamp is None else timestamp
        windows = self.assigner.assign_windows(value, ts, self.assigner_ctx)
        trigger, ctx = self.trigger, self.trigger_ctx
        skipped = True
        merging = MergingWindowSet(self) if self.merging else None
        for window in windows:
            if merging is not None:
                window = merging.add_window(window)
                if self._is_window_late(window):
                    merging.retire_window(window)
                    continue
                namespace = encode_window(merging.state_window(window))
            else:
                if self._is_window_late(window):
                    continue
                namespace = encode_window(window)
            skipped = False
            self._add(namespace, value, timestamp)
            ctx.window = window
            result = self._trigger_result(trigger.on_element(value, ts, window, ctx), "on_element")
            self._fired(result, window, namespace, key, out)
            self._register_cleanup_timer(window)
        if merging is not None:
            merging.persist()
        if skipped and self.event_time and ts + self.allowed_lateness <= runtime.watermark:
            if self.late is not None:
                out.append(self.late(value))
            else:
                self.late_records_dropped.inc()
        self.backend.current_namespace = b""
        return out

    def _fire_due_processing_timers(self, key: Any, out: list[Any]) -> None:
        """Processing time has passed timers of this key that the runtime fires only after this
        element: fire them first, as Flink does (a session must not absorb an element that
        arrives after it closed)."""
        now = self.rt.clock()
        for time in list(self.processing_timers.keys()):
            if time > now:
                break
            self.rt.timer_service.delete_processing_time_timer(time)
            self._on_timer(time, _PROCESSING, key, out)

    def on_timer(self, timestamp: int, runtime: OperatorRuntime) -> Iterable[Any]:
        out: list[Any] = []
        domain = runtime.time_domain
        assert domain is not None
        self._on_timer(timestamp, domain, runtime.current_key, out)
        self.backend.current_namespace = b""
        return out

    def _on_timer(self, time: int, domain: TimeDomain, key: Any, out: list[Any]) -> None:
        self._known.clear()
        index = self._timers(domain)
        waiting = index.get(time)
        if waiting is None:
            return
        index.remove(time)
        trigger, ctx = self.trigger, self.trigger_ctx
        merging = MergingWindowSet(self) if self.merging else None
        cleanup_domain = _EVENT if self.event_time else _PROCESSING
        for window_ns in waiting:
            window = decode_window(window_ns)
            namespace = window_ns
            if merging is not None:
                state_window = merging.state_window(window)
                if state_window is None:
                    continue  # the window was merged away or dropped; its timer is stale
                namespace = encode_window(state_window)
            ctx.window = window
            if domain is _EVENT:
                result = trigger.on_event_time(time, window, ctx)
            else:
                result = trigger.on_processing_time(time, window, ctx)
            self._fired(self._trigger_result(result, "on_timer"), window, namespace, key, out)
            if domain is cleanup_domain and time == self.cleanup_time(window):
                self._clear_all_state(window, namespace, merging)
        if merging is not None:
            merging.persist()


__all__ = [
    "MergingWindowSet",
    "WindowContext",
    "WindowFn",
    "WindowOperator",
    "decode_window",
    "encode_window",
]
