"""PyFlink's user-function classes, RuntimeContext and the contexts handed to functions.

One concrete context class serves every function kind (``_Ctx``); the nested ``Context`` names
PyFlink users annotate with (``KeyedProcessFunction.Context`` ...) are abstract views of it.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, overload

from fs_compat.metrics import MetricGroup
from fs_compat.runtime import AggregatingState as _AggregatingState
from fs_compat.runtime import ListState as _ListState
from fs_compat.runtime import (
    MapState,
    OperatorRuntime,
    StateAccessError,
    TimeDomain,
    TimerService,
)
from fs_compat.runtime import ReducingState as _ReducingState
from fs_compat.runtime import ValueState as _ValueState

from ._descriptors import ACC, IN, OUT, K, T, V

if TYPE_CHECKING:
    from ._descriptors import (
        AggregatingStateDescriptor,
        ListStateDescriptor,
        MapStateDescriptor,
        ReducingStateDescriptor,
        ValueStateDescriptor,
    )


# RuntimeContext. ------------------------------------------------------------------------------


class RuntimeContext:
    """What a function sees of its task: keyed state (on a KeyedStream), task facts, job
    parameters and metrics."""

    def __init__(self, runtime: OperatorRuntime) -> None:
        self._rt = runtime
        self._metrics = MetricGroup(runtime.metrics)

    def get_task_name(self) -> str:
        """The name of the step this function runs in."""
        return self._rt.task.task_name

    def get_number_of_parallel_subtasks(self) -> int:
        """How many parallel instances run the step."""
        return self._rt.task.parallelism

    def get_max_number_of_parallel_subtasks(self) -> int:
        """The number of key groups (the maximum parallelism)."""
        return self._rt.task.max_parallelism

    def get_index_of_this_subtask(self) -> int:
        """This instance's index, from 0."""
        return self._rt.task.subtask_index

    def get_attempt_number(self) -> int:
        """How many times this instance was restarted (0 on the first run)."""
        return self._rt.task.attempt_number

    def get_task_name_with_subtasks(self) -> str:
        """The task name with this instance's number, as Flink shows it: ``name (2/4)#0``."""
        task = self._rt.task
        return f"{task.task_name} ({task.subtask_index + 1}/{task.parallelism})#{task.attempt_number}"

    def get_job_parameter(self, key: str, default_value: str) -> str:
        """The job parameter ``key`` (``ExecutionConfig.set_global_job_parameters``), else
        ``default_value``."""
        return self._rt.task.job_parameters.get(key, default_value)

    def get_metrics_group(self) -> MetricGroup:
        """This instance's metrics (counters, meters, gauges, distributions): summed over the
        step's subtasks into the job's summary and exported (``fs_compat.monitoring``)."""
        return self._metrics

    def get_state(self, state_descriptor: ValueStateDescriptor[T]) -> _ValueState[T]:
        """The ValueState of ``state_descriptor`` for the current key."""
        state: _ValueState[T] = self._rt.get_state(state_descriptor._spec())
        return state

    def get_list_state(self, state_descriptor: ListStateDescriptor[T]) -> _ListState[T]:
        """The ListState of ``state_descriptor`` for the current key."""
        state: _ListState[T] = self._rt.get_state(state_descriptor._spec())
        return state

    def get_map_state(self, state_descriptor: MapStateDescriptor[K, V]) -> MapState[K, V]:
        """The MapState of ``state_descriptor`` for the current key."""
        state: MapState[K, V] = self._rt.get_state(state_descriptor._spec())
        return state

    def get_reducing_state(self, state_descriptor: ReducingStateDescriptor[T]) -> _ReducingState[T]:
        """The ReducingState of ``state_descriptor`` for the current key."""
        state: _ReducingState[T] = self._rt.get_state(state_descriptor._spec())
        return state

    def get_aggregating_state(
        self, state_descriptor: AggregatingStateDescriptor[IN, ACC, OUT]
    ) -> _AggregatingState[IN, OUT]:
        """The AggregatingState of ``state_descriptor`` for the current key."""
        state: _AggregatingState[IN, OUT] = self._rt.get_state(state_descriptor._spec())
        return state


# Functions. ----------------------------------------------------------------------------------


class Function(abc.ABC):  # noqa: B024 - every hook is optional, as in PyFlink
    """Base of every user function: ``open(runtime_context)`` before the first element and
    ``close()`` after the last. Every function can use state (PyFlink has no RichFunction)."""

    def open(self, runtime_context: RuntimeContext) -> None:  # noqa: B027
        """Called once per parallel instance before the first element: get state handles here."""
        pass

    def close(self) -> None:  # noqa: B027
        """Called once per parallel instance after the last element."""
        pass


class MapFunction(Function, Generic[IN, OUT]):
    @abc.abstractmethod
    def map(self, value: IN) -> OUT:
        """The one output for ``value``."""


class FlatMapFunction(Function, Generic[IN, OUT]):
    @abc.abstractmethod
    def flat_map(self, value: IN) -> Iterable[OUT] | None:
        """The outputs for ``value``: return or yield any number of them (None: none)."""


class FilterFunction(Function, Generic[IN]):
    @abc.abstractmethod
    def filter(self, value: IN) -> bool:
        """Whether ``value`` stays in the stream."""


class ReduceFunction(Function, Generic[T]):
    @abc.abstractmethod
    def reduce(self, value1: T, value2: T) -> T:
        """``value1`` (the result so far) combined with ``value2`` (the new value)."""


class AggregateFunction(Function, Generic[IN, ACC, OUT]):
    @abc.abstractmethod
    def create_accumulator(self) -> ACC:
        """A new, empty accumulator."""

    @abc.abstractmethod
    def add(self, value: IN, accumulator: ACC) -> ACC:
        """``accumulator`` with ``value`` added; may update and return the same object."""

    @abc.abstractmethod
    def get_result(self, accumulator: ACC) -> OUT:
        """The aggregate's result for ``accumulator``."""

    def merge(self, acc_a: ACC, acc_b: ACC) -> ACC:
        """Two accumulators merged into one (needed only for merging windows)."""
        raise NotImplementedError("AggregateFunction.merge is needed only for merging windows")


class KeySelector(Function, Generic[IN, K]):
    @abc.abstractmethod
    def get_key(self, value: IN) -> K:
        """The key of ``value``."""


class CoMapFunction(Function, Generic[IN, T, OUT]):
    @abc.abstractmethod
    def map1(self, value: IN) -> OUT:
        """The one output for a value of the first stream."""

    @abc.abstractmethod
    def map2(self, value: T) -> OUT:
        """The one output for a value of the second stream."""


class CoFlatMapFunction(Function, Generic[IN, T, OUT]):
    @abc.abstractmethod
    def flat_map1(self, value: IN) -> Iterable[OUT] | None:
        """The outputs for a value of the first stream (return or yield them)."""

    @abc.abstractmethod
    def flat_map2(self, value: T) -> Iterable[OUT] | None:
        """The outputs for a value of the second stream (return or yield them)."""


class SinkFunction(Function, Generic[IN]):
    """Receives every element of a stream (``DataStream.add_sink``)."""

    @abc.abstractmethod
    def invoke(self, value: IN) -> None:
        """Receive one value of the stream."""


class SourceFunction(Function):
    """A Java source function (PyFlink wraps one; Python sources are not PyFlink's): not
    supported (raises NotImplementedError when made). Read with ``env.from_source``
    (``FileSource``, ``KafkaSource``, ``NumberSequenceSource``), ``env.from_collection`` or
    ``env.from_dataframe``; ``FlinkKafkaConsumer`` works with ``env.add_source``."""

    def __init__(self, source_func: Any = None) -> None:
        raise NotImplementedError(
            "SourceFunction wraps a Java source function, and there is no JVM here; use "
            "env.from_source(FileSource/KafkaSource/NumberSequenceSource ...), env.from_collection(...) "
            "or env.from_dataframe(df)"
        )


class Partitioner(Function, Generic[K]):
    """Picks the partition of a key: ``DataStream.partition_custom(partitioner, key_selector)``
    sends each value to the parallel instance of the next step that ``partition`` returns."""

    @abc.abstractmethod
    def partition(self, key: K, num_partitions: int) -> int:
        """The partition (0 <= p < num_partitions) of ``key``."""


# Contexts. -----------------------------------------------------------------------------------


class BaseContext(abc.ABC):
    """What every process-function context offers."""

    @abc.abstractmethod
    def timer_service(self) -> TimerService:
        """The timer service: current time and watermark; timers on keyed streams."""

    @abc.abstractmethod
    def timestamp(self) -> int | None:
        """The current element's event timestamp (ms), or None when it has none."""


class KeyedContext(BaseContext):
    @abc.abstractmethod
    def get_current_key(self) -> Any:
        """The key of the current element (or of the firing timer)."""


class TimerContext(KeyedContext):
    @abc.abstractmethod
    def time_domain(self) -> TimeDomain:
        """Whether the firing timer is an event-time or a processing-time timer."""


class ReadOnlyBroadcastContext(BaseContext):
    @abc.abstractmethod
    def get_broadcast_state(self, state_descriptor: MapStateDescriptor[K, V]) -> Any:
        """The broadcast state of ``state_descriptor`` (writable only in ``process_broadcast_element``)."""

    @abc.abstractmethod
    def current_processing_time(self) -> int:
        """The processing time (epoch ms)."""

    @abc.abstractmethod
    def current_watermark(self) -> int:
        """The current event-time watermark (ms)."""


class _Ctx(TimerContext, ReadOnlyBroadcastContext):
    """The one context implementation, over the operator's runtime."""

    __slots__ = ("_broadcast", "_rt")

    def __init__(self, runtime: OperatorRuntime, broadcast: BroadcastStates | None = None) -> None:
        self._rt = runtime
        self._broadcast = broadcast

    def timer_service(self) -> TimerService:
        return self._rt.timer_service

    def timestamp(self) -> int | None:
        return self._rt.timestamp

    def get_current_key(self) -> Any:
        return self._rt.current_key

    def time_domain(self) -> TimeDomain:
        domain = self._rt.time_domain
        if domain is None:
            raise StateAccessError("time_domain() is only available in on_timer")
        return domain

    def current_processing_time(self) -> int:
        return self._rt.clock()

    def current_watermark(self) -> int:
        return self._rt.watermark

    def get_broadcast_state(self, state_descriptor: MapStateDescriptor[K, V]) -> Any:
        if self._broadcast is None:
            raise StateAccessError("broadcast state is only available in broadcast process functions")
        return self._broadcast.get(state_descriptor, writable=self._rt.input_index == 1)


class ProcessFunction(Function, Generic[IN, OUT]):
    """Handles each element of a (non-keyed) stream; may emit any number of outputs."""

    Context: TypeAlias = BaseContext

    @abc.abstractmethod
    def process_element(self, value: IN, ctx: BaseContext) -> Iterable[OUT] | None:
        """The outputs for ``value`` (return or yield them; ``yield tag, v`` for a side output)."""


class KeyedProcessFunction(Function, Generic[K, IN, OUT]):
    """Handles each element of a keyed stream, with keyed state and timers."""

    Context: TypeAlias = KeyedContext
    OnTimerContext: TypeAlias = TimerContext

    @abc.abstractmethod
    def process_element(self, value: IN, ctx: KeyedContext) -> Iterable[OUT] | None:
        """The outputs for ``value`` of the current key (``ctx.get_current_key()``), with its
        keyed state and timers."""

    def on_timer(self, timestamp: int, ctx: TimerContext) -> Iterable[OUT] | None:
        """The outputs when a timer registered for the current key fires at ``timestamp``."""
        return None


class CoProcessFunction(Function, Generic[IN, T, OUT]):
    Context: TypeAlias = BaseContext

    @abc.abstractmethod
    def process_element1(self, value: IN, ctx: BaseContext) -> Iterable[OUT] | None:
        """The outputs for a value of the first stream."""

    @abc.abstractmethod
    def process_element2(self, value: T, ctx: BaseContext) -> Iterable[OUT] | None:
        """The outputs for a value of the second stream."""


class KeyedCoProcessFunction(Function, Generic[K, IN, T, OUT]):
    Context: TypeAlias = KeyedContext
    OnTimerContext: TypeAlias = TimerContext

    @abc.abstractmethod
    def process_element1(self, value: IN, ctx: KeyedContext) -> Iterable[OUT] | None:
        """The outputs for a value of the first stream, with the current key's state and timers."""

    @abc.abstractmethod
    def process_element2(self, value: T, ctx: KeyedContext) -> Iterable[OUT] | None:
        """The outputs for a value of the second stream, with the current key's state and timers."""

    def on_timer(self, timestamp: int, ctx: TimerContext) -> Iterable[OUT] | None:
        """The outputs when a timer registered for the current key fires at ``timestamp``."""
        return None


class BroadcastProcessFunction(Function, Generic[IN, T, OUT]):
    """Connects a non-broadcast stream with a broadcast one; broadcast state is writable only in
    ``process_broadcast_element``."""

    Context: TypeAlias = ReadOnlyBroadcastContext
    ReadOnlyContext: TypeAlias = ReadOnlyBroadcastContext

    @abc.abstractmethod
    def process_element(self, value: IN, ctx: ReadOnlyBroadcastContext) -> Iterable[OUT] | None:
        """The outputs for a value of the non-broadcast stream (broadcast state read-only)."""

    @abc.abstractmethod
    def process_broadcast_element(self, value: T, ctx: ReadOnlyBroadcastContext) -> Iterable[OUT] | None:
        """The outputs for a broadcast value (broadcast state writable)."""


class KeyedBroadcastProcessFunction(Function, Generic[K, IN, T, OUT]):
    """As BroadcastProcessFunction, on a keyed stream: keyed state, timers and the current key."""

    Context: TypeAlias = ReadOnlyBroadcastContext
    ReadOnlyContext: TypeAlias = ReadOnlyBroadcastContext
    OnTimerContext: TypeAlias = TimerContext

    @abc.abstractmethod
    def process_element(self, value: IN, ctx: ReadOnlyBroadcastContext) -> Iterable[OUT] | None:
        """The outputs for a value of the keyed stream, with its keyed state and timers
        (broadcast state read-only)."""

    @abc.abstractmethod
    def process_broadcast_element(self, value: T, ctx: ReadOnlyBroadcastContext) -> Iterable[OUT] | None:
        """The outputs for a broadcast value (broadcast state writable)."""

    def on_timer(self, timestamp: int, ctx: TimerContext) -> Iterable[OUT] | None:
        """The outputs when a timer registered for the current key fires at ``timestamp``."""
        return None


# Broadcast state. ----------------------------------------------------------------------------


class ReadOnlyBroadcastState(Generic[K, V]):
    """A broadcast map, read-only (in ``process_element``)."""

    def __init__(self, name: str, data: dict[Any, Any]) -> None:
        self._name = name
        self._data = data

    def get(self, key: K) -> V | None:
        """The value for ``key``, or None."""
        value: V | None = self._data.get(key)
        return value

    def contains(self, key: K) -> bool:
        """Whether ``key`` has a value."""
        return key in self._data

    def items(self) -> Iterator[tuple[K, V]]:
        """The (key, value) pairs."""
        return iter(list(self._data.items()))

    def keys(self) -> Iterator[K]:
        """The keys."""
        return iter(list(self._data))

    def values(self) -> Iterator[V]:
        """The values."""
        return iter(list(self._data.values()))

    def is_empty(self) -> bool:
        """Whether the map has no entries."""
        return not self._data

    def __getitem__(self, key: K) -> V | None:
        return self.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[K]:
        return self.keys()


class BroadcastState(ReadOnlyBroadcastState[K, V]):
    """A broadcast map, writable (in ``process_broadcast_element``)."""

    def put(self, key: K, value: V) -> None:
        """Set the value for ``key``."""
        self._data[key] = value

    def put_all(self, entries: Any) -> None:
        """Set every (key, value) of ``entries`` (a mapping or pairs)."""
        pairs = entries.items() if hasattr(entries, "items") else entries
        for k, v in pairs:
            self._data[k] = v

    def remove(self, key: K) -> None:
        """Remove ``key`` (nothing happens when it has no value)."""
        self._data.pop(key, None)

    def clear(self) -> None:
        """Remove every entry."""
        self._data.clear()

    def __setitem__(self, key: K, value: V) -> None:
        self.put(key, value)

    def __delitem__(self, key: K) -> None:
        self.remove(key)


class BroadcastStates:
    """The broadcast maps of one operator instance, by descriptor name."""

    def __init__(self, allowed: Iterable[str]) -> None:
        self._allowed = set(allowed)
        self._data: dict[str, dict[Any, Any]] = {}

    @overload
    def get(self, desc: MapStateDescriptor[K, V], writable: bool) -> ReadOnlyBroadcastState[K, V]: ...
    @overload
    def get(self, desc: Any, writable: bool) -> Any: ...
    def get(self, desc: Any, writable: bool) -> Any:
        name = desc.get_name()
        if name not in self._allowed:
            raise StateAccessError(
                f"The broadcast state '{name}' was not declared in DataStream.broadcast(...); "
                f"declared: {sorted(self._allowed)}"
            )
        data = self._data.setdefault(name, {})
        return BroadcastState(name, data) if writable else ReadOnlyBroadcastState(name, data)

    def snapshot(self) -> dict[str, dict[Any, Any]] | None:
        """The maps' contents (copies), or None when every map is empty."""
        held = {name: dict(data) for name, data in self._data.items() if data}
        return held or None

    def restore(self, snapshot: dict[str, dict[Any, Any]]) -> None:
        """Replace the maps' contents with ``snapshot``'s (``snapshot``'s result), in place: views
        handed out before see the restored contents."""
        for name, data in self._data.items():
            data.clear()
            data.update(snapshot.get(name, {}))
        for name in snapshot.keys() - self._data.keys():
            self._data[name] = dict(snapshot[name])
