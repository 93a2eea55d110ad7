"""PyFlink's ``pyflink.datastream.window``: windows, window assigners and triggers, with the same
names, arguments and semantics; plus evictors (``CountEvictor``, ``TimeEvictor``,
``DeltaEvictor``), which PyFlink lacks and Java Flink has (an fs-compat extension)."""

from __future__ import annotations

import abc
import enum
import functools
import struct
from collections.abc import Callable, Collection, Iterable
from io import BytesIO
from typing import TYPE_CHECKING, Any, Generic

from typing_extensions import TypeVar

from fs_compat.runtime import MAX_TIMESTAMP, MIN_TIMESTAMP

from ._descriptors import ReducingStateDescriptor, StateDescriptor, ValueStateDescriptor

if TYPE_CHECKING:
    from fs_compat.metrics import MetricGroup

    from ._functions import RuntimeContext

T = TypeVar("T", default=Any)
W = TypeVar("W", default=Any)
W2 = TypeVar("W2", default=Any)

MAX_LONG_VALUE = MAX_TIMESTAMP
MIN_LONG_VALUE = MIN_TIMESTAMP

_NO_TIMESTAMP = (
    "Record has Java Long.MIN_VALUE timestamp (= no timestamp marker). Is the time characteristic set "
    "to 'ProcessingTime', or did you forget to call 'data_stream.assign_timestamps_and_watermarks(...)'?"
)


def _millis(what: str, value: Any) -> int:
    """A ``Time`` or ``Duration`` (anything with ``to_milliseconds``) in milliseconds."""
    to_ms = getattr(value, "to_milliseconds", None)
    if to_ms is None or isinstance(value, type):
        raise TypeError(f"{what} must be a Time (or Duration), got {value!r}")
    return int(to_ms())


# Windows. ------------------------------------------------------------------------------------


class Window(abc.ABC):
    """A finite bucket of elements; everything in it has arrived once time passes
    ``max_timestamp()``."""

    @abc.abstractmethod
    def max_timestamp(self) -> int:
        """The largest timestamp (ms) that still belongs to the window."""


@functools.total_ordering
class TimeWindow(Window):
    """The time interval ``[start, end)``."""

    def __init__(self, start: int, end: int) -> None:
        self.start = start
        self.end = end

    def max_timestamp(self) -> int:
        return self.end - 1

    def intersects(self, other: TimeWindow) -> bool:
        """Whether the two windows overlap or touch."""
        return self.start <= other.end and self.end >= other.start

    def cover(self, other: TimeWindow) -> TimeWindow:
        """The smallest window that covers both."""
        return TimeWindow(min(self.start, other.start), max(self.end, other.end))

    @staticmethod
    def get_window_start_with_offset(timestamp: int, offset: int, window_size: int) -> int:
        """The start of the window of ``window_size`` (shifted by ``offset``) holding ``timestamp``."""
        return timestamp - (timestamp - offset) % window_size

    @staticmethod
    def merge_windows(
        windows: Iterable[TimeWindow], callback: MergingWindowAssigner.MergeCallback[TimeWindow]
    ) -> None:
        """Tell ``callback`` about every group of overlapping (or touching) windows."""
        group: list[TimeWindow] = []
        cover: TimeWindow | None = None
        for window in sorted(windows):
            if cover is not None and cover.intersects(window):
                cover = cover.cover(window)
                group.append(window)
                continue
            if cover is not None and len(group) > 1:
                callback.merge(group, cover)
            cover, group = window, [window]
        if cover is not None and len(group) > 1:
            callback.merge(group, cover)

    def __eq__(self, other: object) -> bool:
        return type(other) is TimeWindow and self.start == other.start and self.end == other.end

    def __lt__(self, other: TimeWindow) -> bool:
        if not isinstance(other, TimeWindow):
            raise TypeError(f"Does not support comparison with non-TimeWindow {other!r}")
        return (self.start, self.end) < (other.start, other.end)

    def __hash__(self) -> int:
        return hash((self.start, self.end))

    def __repr__(self) -> str:
        return f"TimeWindow(start={self.start}, end={self.end})"


class CountWindow(Window):
    """A window of a count window assigner, identified by ``id``."""

    def __init__(self, id: int) -> None:
        self.id = id

    def max_timestamp(self) -> int:
        return MAX_LONG_VALUE

    def __eq__(self, other: object) -> bool:
        return type(other) is CountWindow and self.id == other.id

    def __hash__(self) -> int:
        return hash(("CountWindow", self.id))

    def __repr__(self) -> str:
        return f"CountWindow(id={self.id})"


class GlobalWindow(Window):
    """The one window of ``GlobalWindows``."""

    @staticmethod
    def get() -> GlobalWindow:
        """The one global window."""
        return GlobalWindow()

    def max_timestamp(self) -> int:
        return MAX_LONG_VALUE

    def __eq__(self, other: object) -> bool:
        return type(other) is GlobalWindow

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "GlobalWindow"


# Serializers (PyFlink's names; the runtime encodes windows itself). --------------------------

_TIME_WINDOW = struct.Struct(">qq")
_LONG = struct.Struct(">q")


class TimeWindowSerializer:
    """Writes a TimeWindow as 16 bytes (start, end)."""

    def serialize(self, element: TimeWindow, stream: BytesIO) -> None:
        """Write ``element`` to ``stream``."""
        stream.write(_TIME_WINDOW.pack(element.start, element.end))

    def deserialize(self, stream: BytesIO) -> TimeWindow:
        """Read a window from ``stream``."""
        return TimeWindow(*_TIME_WINDOW.unpack(stream.read(_TIME_WINDOW.size)))


class CountWindowSerializer:
    """Writes a CountWindow as 8 bytes (its id)."""

    def serialize(self, element: CountWindow, stream: BytesIO) -> None:
        """Write ``element`` to ``stream``."""
        stream.write(_LONG.pack(element.id))

    def deserialize(self, stream: BytesIO) -> CountWindow:
        """Read a window from ``stream``."""
        return CountWindow(_LONG.unpack(stream.read(_LONG.size))[0])


class GlobalWindowSerializer:
    """Writes the GlobalWindow as one zero byte."""

    def serialize(self, element: GlobalWindow, stream: BytesIO) -> None:
        """Write ``element`` to ``stream``."""
        stream.write(b"\x00")

    def deserialize(self, stream: BytesIO) -> GlobalWindow:
        """Read a window from ``stream``."""
        stream.read(1)
        return GlobalWindow()


# Triggers. -----------------------------------------------------------------------------------


class TriggerResult(enum.Enum):
    """What a trigger decides: CONTINUE (nothing), FIRE (evaluate the window, keep its
    contents), PURGE (drop the contents) or FIRE_AND_PURGE."""

    CONTINUE = (False, False)
    FIRE_AND_PURGE = (True, True)
    FIRE = (True, False)
    PURGE = (False, True)

    def is_fire(self) -> bool:
        """Whether the window is evaluated (FIRE, FIRE_AND_PURGE)."""
        return bool(self.value[0])

    def is_purge(self) -> bool:
        """Whether the window's contents are dropped (PURGE, FIRE_AND_PURGE)."""
        return bool(self.value[1])


class Trigger(abc.ABC, Generic[T, W]):
    """Decides when a pane (the elements of one key and window) is evaluated. Keep no state in
    the trigger object: use ``ctx.get_partitioned_state`` (scoped to key and window)."""

    class TriggerContext(abc.ABC):
        """Timers and window-scoped state for a trigger call."""

        @abc.abstractmethod
        def get_current_processing_time(self) -> int: ...

        @abc.abstractmethod
        def get_metric_group(self) -> MetricGroup: ...

        @abc.abstractmethod
        def get_current_watermark(self) -> int: ...

        @abc.abstractmethod
        def register_processing_time_timer(self, time: int) -> None: ...

        @abc.abstractmethod
        def register_event_time_timer(self, time: int) -> None: ...

        @abc.abstractmethod
        def delete_processing_time_timer(self, time: int) -> None: ...

        @abc.abstractmethod
        def delete_event_time_timer(self, time: int) -> None: ...

        @abc.abstractmethod
        def get_partitioned_state(self, state_descriptor: StateDescriptor) -> Any: ...

    class OnMergeContext(TriggerContext):
        """The context of ``on_merge``: can also merge window-scoped state."""

        @abc.abstractmethod
        def merge_partitioned_state(self, state_descriptor: StateDescriptor) -> None: ...

    @abc.abstractmethod
    def on_element(self, element: T, timestamp: int, window: W, ctx: Trigger.TriggerContext) -> TriggerResult:
        """Called for every element added to a pane."""

    @abc.abstractmethod
    def on_processing_time(self, time: int, window: W, ctx: Trigger.TriggerContext) -> TriggerResult:
        """Called when a processing-time timer set through ``ctx`` fires."""

    @abc.abstractmethod
    def on_event_time(self, time: int, window: W, ctx: Trigger.TriggerContext) -> TriggerResult:
        """Called when an event-time timer set through ``ctx`` fires."""

    def can_merge(self) -> bool:
        """True when the trigger supports merging windows (then ``on_merge`` must work)."""
        return False

    @abc.abstractmethod
    def on_merge(self, window: W, ctx: Trigger.OnMergeContext) -> None:
        """Called when windows were merged into ``window``."""

    @abc.abstractmethod
    def clear(self, window: W, ctx: Trigger.TriggerContext) -> None:
        """Drop the trigger's timers and state for ``window`` (it is being purged)."""


class EventTimeTrigger(Trigger[Any, TimeWindow]):
    """Fires once the watermark passes the end of the window."""

    def on_element(
        self, element: Any, timestamp: int, window: TimeWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE  # late element of a window still kept (allowed lateness)
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: Trigger.OnMergeContext) -> None:
        if window.max_timestamp() > ctx.get_current_watermark():
            ctx.register_event_time_timer(window.max_timestamp())

    def clear(self, window: TimeWindow, ctx: Trigger.TriggerContext) -> None:
        ctx.delete_event_time_timer(window.max_timestamp())

    @staticmethod
    def create() -> EventTimeTrigger:
        """A trigger that fires when the watermark passes the window's end."""
        return EventTimeTrigger()

    def __repr__(self) -> str:
        return "EventTimeTrigger()"


class ProcessingTimeTrigger(Trigger[Any, TimeWindow]):
    """Fires once the processing time passes the end of the window."""

    def on_element(
        self, element: Any, timestamp: int, window: TimeWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        ctx.register_processing_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE

    def on_event_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: Trigger.OnMergeContext) -> None:
        if window.max_timestamp() > ctx.get_current_processing_time():
            ctx.register_processing_time_timer(window.max_timestamp())

    def clear(self, window: TimeWindow, ctx: Trigger.TriggerContext) -> None:
        ctx.delete_processing_time_timer(window.max_timestamp())

    @staticmethod
    def create() -> ProcessingTimeTrigger:
        """A trigger that fires when the processing time passes the window's end."""
        return ProcessingTimeTrigger()

    def __repr__(self) -> str:
        return "ProcessingTimeTrigger()"


def _fire_time_descriptor() -> ReducingStateDescriptor[int]:
    from fs_compat.common import Types

    return ReducingStateDescriptor("fire-time", min, Types.LONG())


class _ContinuousTrigger(Trigger[Any, TimeWindow]):
    """What the two continuous triggers share: the next fire time in a ``min``-reducing state,
    a timer of their time domain for it, rescheduled every ``interval`` ms when it fires."""

    _event_time: bool

    def __init__(self, interval: int) -> None:
        if interval <= 0:
            raise ValueError(f"{type(self).__name__} interval must be > 0, got {interval}")
        self.interval = interval
        self.state_desc = _fire_time_descriptor()

    def _register(self, ctx: Trigger.TriggerContext, time: int) -> None:
        if self._event_time:
            ctx.register_event_time_timer(time)
        else:
            ctx.register_processing_time_timer(time)

    def _schedule(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext, state: Any) -> None:
        next_fire = min(time + self.interval, window.max_timestamp())
        state.add(next_fire)
        self._register(ctx, next_fire)

    def _on_timer(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        state = ctx.get_partitioned_state(self.state_desc)
        if state.get() == time:
            state.clear()
            self._schedule(time, window, ctx, state)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: Trigger.OnMergeContext) -> None:
        ctx.merge_partitioned_state(self.state_desc)
        next_fire = ctx.get_partitioned_state(self.state_desc).get()
        if next_fire is not None:
            self._register(ctx, next_fire)

    def clear(self, window: TimeWindow, ctx: Trigger.TriggerContext) -> None:
        state = ctx.get_partitioned_state(self.state_desc)
        next_fire = state.get()
        if next_fire is not None:
            if self._event_time:
                ctx.delete_event_time_timer(next_fire)
            else:
                ctx.delete_processing_time_timer(next_fire)
            state.clear()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.interval})"


class ContinuousEventTimeTrigger(_ContinuousTrigger):
    """Fires every ``interval`` ms of event time (by watermark), and at the end of the window."""

    _event_time = True

    @staticmethod
    def of(interval: Any) -> ContinuousEventTimeTrigger:
        """A trigger that fires every ``interval`` of event time (a Time/Duration or ms) and at
        the window's end."""
        return ContinuousEventTimeTrigger(_millis("interval", interval))

    def on_element(
        self, element: Any, timestamp: int, window: TimeWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        state = ctx.get_partitioned_state(self.state_desc)
        if state.get() is None:
            self._schedule(timestamp - timestamp % self.interval, window, ctx, state)
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        if time == window.max_timestamp():
            return TriggerResult.FIRE
        return self._on_timer(time, window, ctx)


class ContinuousProcessingTimeTrigger(_ContinuousTrigger):
    """Fires every ``interval`` ms of processing time."""

    _event_time = False

    @staticmethod
    def of(interval: Any) -> ContinuousProcessingTimeTrigger:
        """A trigger that fires every ``interval`` of processing time (a Time/Duration or ms)."""
        return ContinuousProcessingTimeTrigger(_millis("interval", interval))

    def on_element(
        self, element: Any, timestamp: int, window: TimeWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        state = ctx.get_partitioned_state(self.state_desc)
        now = ctx.get_current_processing_time()
        if state.get() is None:
            self._schedule(now - now % self.interval, window, ctx, state)
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return self._on_timer(time, window, ctx)

    def on_event_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE


class PurgingTrigger(Trigger[T, Window]):
    """Turns a trigger's FIRE into FIRE_AND_PURGE."""

    def __init__(self, nested_trigger: Trigger[T, Any]) -> None:
        if not isinstance(nested_trigger, Trigger):
            raise TypeError(f"PurgingTrigger needs a Trigger, got {nested_trigger!r}")
        self.nested_trigger = nested_trigger

    @staticmethod
    def of(nested_trigger: Trigger[T, Any]) -> PurgingTrigger[T]:
        """``nested_trigger``, with every FIRE turned into FIRE_AND_PURGE."""
        return PurgingTrigger(nested_trigger)

    @staticmethod
    def _purging(result: TriggerResult) -> TriggerResult:
        return TriggerResult.FIRE_AND_PURGE if result.is_fire() else result

    def on_element(
        self, element: T, timestamp: int, window: Window, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        return self._purging(self.nested_trigger.on_element(element, timestamp, window, ctx))

    def on_event_time(self, time: int, window: Window, ctx: Trigger.TriggerContext) -> TriggerResult:
        return self._purging(self.nested_trigger.on_event_time(time, window, ctx))

    def on_processing_time(self, time: int, window: Window, ctx: Trigger.TriggerContext) -> TriggerResult:
        return self._purging(self.nested_trigger.on_processing_time(time, window, ctx))

    def clear(self, window: Window, ctx: Trigger.TriggerContext) -> None:
        self.nested_trigger.clear(window, ctx)

    def can_merge(self) -> bool:
        return self.nested_trigger.can_merge()

    def on_merge(self, window: Window, ctx: Trigger.OnMergeContext) -> None:
        self.nested_trigger.on_merge(window, ctx)

    def __repr__(self) -> str:
        return f"PurgingTrigger({self.nested_trigger!r})"


def _add(a: int, b: int) -> int:
    return a + b


class CountTrigger(Trigger[Any, Any]):
    """Fires once a pane holds ``window_size`` elements (and starts counting again)."""

    def __init__(self, window_size: int) -> None:
        from fs_compat.common import Types

        if not isinstance(window_size, int) or window_size <= 0:
            raise ValueError(f"CountTrigger window size must be a positive int, got {window_size!r}")
        self._window_size = window_size
        self._count_state_descriptor = ReducingStateDescriptor("count", _add, Types.LONG())

    @staticmethod
    def of(window_size: int) -> CountTrigger:
        """A trigger that fires when the window holds ``window_size`` elements."""
        return CountTrigger(window_size)

    def on_element(
        self, element: Any, timestamp: int, window: Window, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        count = ctx.get_partitioned_state(self._count_state_descriptor)
        count.add(1)
        if count.get() >= self._window_size:
            count.clear()
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Window, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Window, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Window, ctx: Trigger.OnMergeContext) -> None:
        ctx.merge_partitioned_state(self._count_state_descriptor)

    def clear(self, window: Window, ctx: Trigger.TriggerContext) -> None:
        ctx.get_partitioned_state(self._count_state_descriptor).clear()

    def __repr__(self) -> str:
        return f"CountTrigger({self._window_size})"


class NeverTrigger(Trigger[Any, GlobalWindow]):
    """Never fires: the default trigger of GlobalWindows."""

    def on_element(
        self, element: Any, timestamp: int, window: GlobalWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(
        self, time: int, window: GlobalWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: GlobalWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_merge(self, window: GlobalWindow, ctx: Trigger.OnMergeContext) -> None:
        pass

    def clear(self, window: GlobalWindow, ctx: Trigger.TriggerContext) -> None:
        pass


# Window assigners. ---------------------------------------------------------------------------


class WindowAssigner(abc.ABC, Generic[T, W]):
    """Assigns each element to zero or more windows."""

    class WindowAssignerContext(abc.ABC):
        """Lets an assigner read the processing time and the keyed state of the current key."""

        @abc.abstractmethod
        def get_current_processing_time(self) -> int: ...

        @abc.abstractmethod
        def get_runtime_context(self) -> RuntimeContext: ...

    @abc.abstractmethod
    def assign_windows(
        self, element: T, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> Collection[W]:
        """The windows ``element`` (with ``timestamp``) belongs to."""

    @abc.abstractmethod
    def get_default_trigger(self, env: Any) -> Trigger[T, W]:
        """The trigger used when ``WindowedStream.trigger`` sets none."""

    @abc.abstractmethod
    def get_window_serializer(self) -> Any:
        """How the assigner's windows are written."""

    @abc.abstractmethod
    def is_event_time(self) -> bool:
        """Whether windows are in event time (else processing time)."""


class MergingWindowAssigner(WindowAssigner[T, W]):
    """An assigner whose windows can merge (sessions)."""

    class MergeCallback(abc.ABC, Generic[W2]):
        @abc.abstractmethod
        def merge(self, to_be_merged: Iterable[W2], merge_result: W2) -> None:
            """``to_be_merged`` become ``merge_result``."""

    @abc.abstractmethod
    def merge_windows(self, windows: Iterable[W], callback: MergingWindowAssigner.MergeCallback[W]) -> None:
        """Merge windows that overlap: ``callback(merged, result)`` for each merge."""


class SessionWindowTimeGapExtractor(abc.ABC):
    """Gives the session gap (ms) for an element, for dynamic session windows."""

    @abc.abstractmethod
    def extract(self, element: Any) -> int:
        """The session gap (ms) after ``element``."""


class _TimeWindows(WindowAssigner[Any, TimeWindow]):
    """What the time-window assigners share: ``_time`` is the element's timestamp (event
    time; an element without one is an error) or the current processing time, and the default
    trigger, serializer and ``is_event_time`` follow the time domain."""

    _event_time: bool

    def _time(self, timestamp: int, context: WindowAssigner.WindowAssignerContext) -> int:
        if not self._event_time:
            return context.get_current_processing_time()
        if timestamp <= MIN_LONG_VALUE:
            raise ValueError(_NO_TIMESTAMP)
        return timestamp

    def get_default_trigger(self, env: Any) -> Trigger[Any, TimeWindow]:
        return EventTimeTrigger() if self._event_time else ProcessingTimeTrigger()

    def get_window_serializer(self) -> TimeWindowSerializer:
        return TimeWindowSerializer()

    def is_event_time(self) -> bool:
        return self._event_time


_Tumbling = TypeVar("_Tumbling", bound="_TumblingWindows")
_Sliding = TypeVar("_Sliding", bound="_SlidingWindows")


class _TumblingWindows(_TimeWindows):
    def __init__(self, size: int, offset: int) -> None:
        if size <= 0 or abs(offset) >= size:
            raise ValueError(f"{type(self).__name__} parameters must satisfy abs(offset) < size")
        self._size = size
        self._offset = offset

    @classmethod
    def of(cls: type[_Tumbling], size: Any, offset: Any = None) -> _Tumbling:
        """Tumbling windows of ``size`` (a Time/Duration or ms), shifted by ``offset``."""
        return cls(_millis("size", size), 0 if offset is None else _millis("offset", offset))

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> Collection[TimeWindow]:
        start = TimeWindow.get_window_start_with_offset(
            self._time(timestamp, context), self._offset, self._size
        )
        return [TimeWindow(start, start + self._size)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._size}, {self._offset})"


class TumblingEventTimeWindows(_TumblingWindows):
    """Non-overlapping windows of ``size`` ms by element timestamp, shifted by ``offset``."""

    _event_time = True


class TumblingProcessingTimeWindows(_TumblingWindows):
    """Non-overlapping windows of ``size`` ms by processing time, shifted by ``offset``."""

    _event_time = False


class _SlidingWindows(_TimeWindows):
    def __init__(self, size: int, slide: int, offset: int) -> None:
        if slide <= 0 or abs(offset) >= slide or size <= 0:
            raise ValueError(
                f"{type(self).__name__} parameters must satisfy abs(offset) < slide and size > 0"
            )
        self._size = size
        self._slide = slide
        self._offset = offset

    @classmethod
    def of(cls: type[_Sliding], size: Any, slide: Any, offset: Any = None) -> _Sliding:
        """Windows of ``size`` every ``slide`` (Time/Duration or ms), shifted by ``offset``."""
        return cls(
            _millis("size", size),
            _millis("slide", slide),
            0 if offset is None else _millis("offset", offset),
        )

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> Collection[TimeWindow]:
        time = self._time(timestamp, context)
        last_start = TimeWindow.get_window_start_with_offset(time, self._offset, self._slide)
        return [
            TimeWindow(start, start + self._size)
            for start in range(last_start, time - self._size, -self._slide)
        ]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._size}, {self._slide}, {self._offset})"


class SlidingEventTimeWindows(_SlidingWindows):
    """Windows of ``size`` ms every ``slide`` ms by element timestamp (they overlap when
    ``slide < size``)."""

    _event_time = True


class SlidingProcessingTimeWindows(_SlidingWindows):
    """Windows of ``size`` ms every ``slide`` ms by processing time."""

    _event_time = False


def _gap_of(extractor: SessionWindowTimeGapExtractor, element: Any) -> int:
    gap = extractor.extract(element)
    if gap <= 0:
        raise ValueError(f"Dynamic session time gap must satisfy 0 < gap, got {gap} for {element!r}")
    return gap


def _check_extractor(extractor: Any) -> SessionWindowTimeGapExtractor:
    if not isinstance(extractor, SessionWindowTimeGapExtractor):
        raise TypeError(f"the extractor must be a SessionWindowTimeGapExtractor, got {extractor!r}")
    return extractor


class _SessionWindows(_TimeWindows, MergingWindowAssigner[Any, TimeWindow]):
    """What the four session assigners share: a window ``[start, start + gap)`` per element,
    merged when windows overlap; ``start`` is the element's timestamp (event time) or the
    current processing time, ``gap`` fixed or extracted from the element."""

    def _gap(self, element: Any) -> int:
        raise NotImplementedError

    def merge_windows(
        self, windows: Iterable[TimeWindow], callback: MergingWindowAssigner.MergeCallback[TimeWindow]
    ) -> None:
        TimeWindow.merge_windows(windows, callback)

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> Collection[TimeWindow]:
        start = self._time(timestamp, context)
        return [TimeWindow(start, start + self._gap(element))]


class _FixedGapSessions(_SessionWindows):
    def __init__(self, session_gap: int) -> None:
        if session_gap <= 0:
            raise ValueError(f"{type(self).__name__} parameters must satisfy 0 < size")
        self._session_gap = session_gap

    def _gap(self, element: Any) -> int:
        return self._session_gap

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._session_gap})"


class _DynamicGapSessions(_SessionWindows):
    def __init__(self, session_window_time_gap_extractor: SessionWindowTimeGapExtractor) -> None:
        self._session_window_time_gap_extractor = _check_extractor(session_window_time_gap_extractor)

    def _gap(self, element: Any) -> int:
        return _gap_of(self._session_window_time_gap_extractor, element)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._session_window_time_gap_extractor!r})"


class EventTimeSessionWindows(_FixedGapSessions):
    """Sessions by element timestamp: windows closer than ``session_gap`` ms merge."""

    _event_time = True

    @staticmethod
    def with_gap(size: Any) -> EventTimeSessionWindows:
        """Event-time sessions that end after a gap of ``size`` (a Time/Duration or ms)."""
        return EventTimeSessionWindows(_millis("size", size))

    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor) -> DynamicEventTimeSessionWindows:
        """Event-time sessions whose gap after each element ``extractor`` gives."""
        return DynamicEventTimeSessionWindows(extractor)


class ProcessingTimeSessionWindows(_FixedGapSessions):
    """Sessions by processing time: windows closer than ``session_gap`` ms merge."""

    _event_time = False

    @staticmethod
    def with_gap(size: Any) -> ProcessingTimeSessionWindows:
        """Processing-time sessions that end after a gap of ``size`` (a Time/Duration or ms)."""
        return ProcessingTimeSessionWindows(_millis("size", size))

    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor) -> DynamicProcessingTimeSessionWindows:
        """Processing-time sessions whose gap after each element ``extractor`` gives."""
        return DynamicProcessingTimeSessionWindows(extractor)


class DynamicEventTimeSessionWindows(_DynamicGapSessions):
    """Event-time sessions whose gap comes from each element (a SessionWindowTimeGapExtractor)."""

    _event_time = True

    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor) -> DynamicEventTimeSessionWindows:
        """Event-time sessions whose gap after each element ``extractor`` gives."""
        return DynamicEventTimeSessionWindows(extractor)


class DynamicProcessingTimeSessionWindows(_DynamicGapSessions):
    """Processing-time sessions whose gap comes from each element."""

    _event_time = False

    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor) -> DynamicProcessingTimeSessionWindows:
        """Processing-time sessions whose gap after each element ``extractor`` gives."""
        return DynamicProcessingTimeSessionWindows(extractor)


class GlobalWindows(WindowAssigner[Any, GlobalWindow]):
    """Every element into the one GlobalWindow; its default trigger never fires (set one)."""

    @staticmethod
    def create() -> GlobalWindows:
        """One window for all elements (of a key); it fires only with a custom trigger."""
        return GlobalWindows()

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> Collection[GlobalWindow]:
        return [GlobalWindow.get()]

    def get_default_trigger(self, env: Any) -> Trigger[Any, GlobalWindow]:
        return NeverTrigger()

    def get_window_serializer(self) -> GlobalWindowSerializer:
        return GlobalWindowSerializer()

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "GlobalWindows()"


def _check_count(what: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{what} must be a positive int, got {value!r}")
    return value


def _next_count(context: WindowAssigner.WindowAssignerContext, descriptor: ValueStateDescriptor[int]) -> int:
    """The per-key count of elements seen before this one (and count this one)."""
    state = context.get_runtime_context().get_state(descriptor)
    count = state.value() or 0
    state.update(count + 1)
    return count


class CountTumblingWindowAssigner(WindowAssigner[Any, CountWindow]):
    """Non-overlapping windows of ``window_size`` elements per key."""

    def __init__(self, window_size: int) -> None:
        from fs_compat.common import Types

        self._window_size = _check_count("window size", window_size)
        self._count_descriptor = ValueStateDescriptor("tumble-count-assigner", Types.LONG())

    @staticmethod
    def of(window_size: int) -> CountTumblingWindowAssigner:
        """Tumbling windows of ``window_size`` elements."""
        return CountTumblingWindowAssigner(window_size)

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> Collection[CountWindow]:
        return [CountWindow(_next_count(context, self._count_descriptor) // self._window_size)]

    def get_default_trigger(self, env: Any) -> Trigger[Any, CountWindow]:
        return CountTrigger(self._window_size)

    def get_window_serializer(self) -> CountWindowSerializer:
        return CountWindowSerializer()

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"CountTumblingWindowAssigner({self._window_size})"


class CountSlidingWindowAssigner(WindowAssigner[Any, CountWindow]):
    """Windows of ``window_size`` elements every ``window_slide`` elements per key."""

    def __init__(self, window_size: int, window_slide: int) -> None:
        from fs_compat.common import Types

        self._window_size = _check_count("window size", window_size)
        self._window_slide = _check_count("window slide", window_slide)
        self._count_descriptor = ValueStateDescriptor("slide-count-assigner", Types.LONG())

    @staticmethod
    def of(window_size: int, window_slide: int) -> CountSlidingWindowAssigner:
        """Windows of ``window_size`` elements, every ``window_slide`` elements."""
        return CountSlidingWindowAssigner(window_size, window_slide)

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> Collection[CountWindow]:
        count = _next_count(context, self._count_descriptor)
        size, slide = self._window_size, self._window_slide
        # Window ``i`` holds elements number i*slide .. i*slide + size - 1.
        first = max(0, (count - size) // slide + 1)
        return [CountWindow(i) for i in range(count // slide, first - 1, -1)]

    def get_default_trigger(self, env: Any) -> Trigger[Any, CountWindow]:
        return CountTrigger(self._window_size)

    def get_window_serializer(self) -> CountWindowSerializer:
        return CountWindowSerializer()

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"CountSlidingWindowAssigner({self._window_size}, {self._window_slide})"


# Evictors (Java Flink's; not in PyFlink). ----------------------------------------------------


class TimestampedValue(Generic[T]):
    """An element of a window with its timestamp (None when it has none), as evictors see it."""

    __slots__ = ("_timestamp", "_value")

    def __init__(self, value: T, timestamp: int | None = None) -> None:
        self._value = value
        self._timestamp = timestamp

    def get_value(self) -> T:
        """The value."""
        return self._value

    def get_timestamp(self) -> int:
        """The value's timestamp (ms)."""
        if self._timestamp is None:
            raise ValueError(f"element {self._value!r} has no timestamp")
        return self._timestamp

    def has_timestamp(self) -> bool:
        """Whether the value has a timestamp."""
        return self._timestamp is not None

    def __repr__(self) -> str:
        return f"TimestampedValue({self._value!r}, {self._timestamp!r})"


class Evictor(abc.ABC, Generic[T, W]):
    """Removes elements from a window before and/or after the window function sees them (Java
    Flink's Evictor; an fs-compat extension to PyFlink). ``elements`` is a list to remove from in
    place; what remains stays in the window."""

    class EvictorContext(abc.ABC):
        @abc.abstractmethod
        def get_current_processing_time(self) -> int: ...

        @abc.abstractmethod
        def get_metric_group(self) -> MetricGroup: ...

        @abc.abstractmethod
        def get_current_watermark(self) -> int: ...

    @abc.abstractmethod
    def evict_before(
        self,
        elements: list[TimestampedValue[T]],
        size: int,
        window: W,
        evictor_context: Evictor.EvictorContext,
    ) -> None:
        """Remove elements from ``elements`` before the window function sees them."""

    @abc.abstractmethod
    def evict_after(
        self,
        elements: list[TimestampedValue[T]],
        size: int,
        window: W,
        evictor_context: Evictor.EvictorContext,
    ) -> None:
        """Remove elements from ``elements`` after the window function saw them."""


class _BeforeOrAfter(Evictor[Any, Window]):
    def __init__(self, do_evict_after: bool) -> None:
        self._do_evict_after = bool(do_evict_after)

    def evict_before(
        self, elements: list[TimestampedValue[Any]], size: int, window: Window, evictor_context: Any
    ) -> None:
        if not self._do_evict_after:
            self._evict(elements, size, window, evictor_context)

    def evict_after(
        self, elements: list[TimestampedValue[Any]], size: int, window: Window, evictor_context: Any
    ) -> None:
        if self._do_evict_after:
            self._evict(elements, size, window, evictor_context)

    @abc.abstractmethod
    def _evict(self, elements: list[TimestampedValue[Any]], size: int, window: Window, ctx: Any) -> None: ...


class CountEvictor(_BeforeOrAfter):
    """Keeps at most ``max_count`` elements: the last ones."""

    def __init__(self, max_count: int, do_evict_after: bool = False) -> None:
        super().__init__(do_evict_after)
        self._max_count = _check_count("max count", max_count)

    @staticmethod
    def of(max_count: int, do_evict_after: bool = False) -> CountEvictor:
        """Keep at most ``max_count`` elements (the latest), before or after evaluation."""
        return CountEvictor(max_count, do_evict_after)

    def _evict(self, elements: list[TimestampedValue[Any]], size: int, window: Window, ctx: Any) -> None:
        if size > self._max_count:
            del elements[: size - self._max_count]

    def __repr__(self) -> str:
        return f"CountEvictor({self._max_count})"


class TimeEvictor(_BeforeOrAfter):
    """Keeps the elements whose timestamp is within ``window_size`` ms of the newest one."""

    def __init__(self, window_size: int, do_evict_after: bool = False) -> None:
        super().__init__(do_evict_after)
        self._window_size = window_size

    @staticmethod
    def of(window_size: Any, do_evict_after: bool = False) -> TimeEvictor:
        """Keep elements within ``window_size`` of the latest element's timestamp."""
        return TimeEvictor(_millis("window_size", window_size), do_evict_after)

    def _evict(self, elements: list[TimestampedValue[Any]], size: int, window: Window, ctx: Any) -> None:
        if not elements or not elements[0].has_timestamp():
            return
        cutoff = max(e.get_timestamp() for e in elements if e.has_timestamp()) - self._window_size
        elements[:] = [e for e in elements if not e.has_timestamp() or e.get_timestamp() > cutoff]

    def __repr__(self) -> str:
        return f"TimeEvictor({self._window_size})"


class DeltaEvictor(_BeforeOrAfter):
    """Drops the elements whose ``delta_function(element, last)`` is at least ``threshold``
    (``last`` being the newest element)."""

    def __init__(self, threshold: float, delta_function: Any, do_evict_after: bool = False) -> None:
        super().__init__(do_evict_after)
        get_delta = getattr(delta_function, "get_delta", delta_function)
        if not callable(get_delta):
            raise TypeError(f"delta_function must be callable or have get_delta, got {delta_function!r}")
        self._threshold = threshold
        self._delta: Callable[[Any, Any], float] = get_delta

    @staticmethod
    def of(threshold: float, delta_function: Any, do_evict_after: bool = False) -> DeltaEvictor:
        """Keep elements whose ``delta_function(element, last)`` is below ``threshold``."""
        return DeltaEvictor(threshold, delta_function, do_evict_after)

    def _evict(self, elements: list[TimestampedValue[Any]], size: int, window: Window, ctx: Any) -> None:
        if not elements:
            return
        last = elements[-1].get_value()
        elements[:] = [e for e in elements if self._delta(e.get_value(), last) < self._threshold]

    def __repr__(self) -> str:
        return f"DeltaEvictor({self._threshold})"


__all__ = [
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountEvictor",
    "CountSlidingWindowAssigner",
    "CountTrigger",
    "CountTumblingWindowAssigner",
    "CountWindow",
    "CountWindowSerializer",
    "DeltaEvictor",
    "DynamicEventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "Evictor",
    "GlobalWindow",
    "GlobalWindowSerializer",
    "GlobalWindows",
    "MergingWindowAssigner",
    "NeverTrigger",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "SessionWindowTimeGapExtractor",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeEvictor",
    "TimeWindow",
    "TimeWindowSerializer",
    "TimestampedValue",
    "Trigger",
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "Window",
    "WindowAssigner",
]
