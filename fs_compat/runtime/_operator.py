"""The one interface every step implements, and what the runtime gives it."""

from __future__ import annotations

import abc
import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from ._state import NOT_KEYED_MESSAGE, KeyedStateBackend, StateAccessError, StateSpec
from ._timers import MIN_TIMESTAMP, TimerQueue

NOT_KEYED_TIMERS = "Setting timers is only supported on a keyed streams."


class TimeDomain(enum.IntEnum):
    """Which clock fired a timer (PyFlink's values)."""

    EVENT_TIME = 0
    PROCESSING_TIME = 1


@attrs.frozen
class SideOutput:
    """An output routed to the side-output stream ``tag_id`` instead of the main one."""

    tag_id: str
    value: Any


@attrs.frozen
class TaskInfo:
    """Where an operator instance runs."""

    task_name: str
    parallelism: int
    subtask_index: int
    max_parallelism: int = 128
    attempt_number: int = 0
    job_parameters: Mapping[str, str] = attrs.field(factory=dict)


class TimerService:
    """Timers and clocks of the current key (PyFlink's TimerService methods). Outside a keyed
    stream the clocks work and setting a timer raises."""

    def __init__(self, runtime: OperatorRuntime) -> None:
        self._rt = runtime

    def current_processing_time(self) -> int:
        """The processing-time clock, in epoch milliseconds (the job's clock: injectable)."""
        return self._rt.clock()

    def current_watermark(self) -> int:
        """The operator's current event-time watermark, in milliseconds."""
        return self._rt.watermark

    def register_processing_time_timer(self, timestamp: int) -> None:
        """Call ``on_timer`` for the current key once the clock reaches ``timestamp``."""
        raise StateAccessError(NOT_KEYED_TIMERS)

    def register_event_time_timer(self, timestamp: int) -> None:
        """Call ``on_timer`` for the current key once the watermark reaches ``timestamp``."""
        raise StateAccessError(NOT_KEYED_TIMERS)

    def delete_processing_time_timer(self, timestamp: int) -> None:
        """Remove the current key's processing-time timer at ``timestamp``, if any."""
        raise StateAccessError(NOT_KEYED_TIMERS)

    def delete_event_time_timer(self, timestamp: int) -> None:
        """Remove the current key's event-time timer at ``timestamp``, if any."""
        raise StateAccessError(NOT_KEYED_TIMERS)


class _KeyedTimerService(TimerService):
    def _key(self) -> tuple[bytes, Any]:
        backend = self._rt.backend
        assert backend is not None
        if backend.current_key_bytes is None:
            raise StateAccessError("timers need a current key")
        return backend.current_key_bytes, backend.current_key

    def register_processing_time_timer(self, timestamp: int) -> None:
        kb, key = self._key()
        self._rt.processing_timers.register(int(timestamp), kb, key)

    def register_event_time_timer(self, timestamp: int) -> None:
        kb, key = self._key()
        self._rt.event_timers.register(int(timestamp), kb, key)

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self._rt.processing_timers.delete(int(timestamp), self._key()[0])

    def delete_event_time_timer(self, timestamp: int) -> None:
        self._rt.event_timers.delete(int(timestamp), self._key()[0])


class OperatorRuntime:
    """What the runtime gives one operator instance: task info, keyed state (when keyed), timers,
    clocks, and the context of the element or timer being handled."""

    def __init__(
        self,
        task: TaskInfo,
        backend: KeyedStateBackend | None,
        clock: Callable[[], int],
    ) -> None:
        self.task = task
        self.backend = backend
        # A task clock (``RecordTimeClock``: it has ``for_task``) gives each instance its own.
        for_task = getattr(clock, "for_task", None)
        self.clock: Callable[[], int] = clock if for_task is None else for_task(self)
        if for_task is not None and backend is not None:
            backend.clock = self.clock  # state TTL reads the same processing time
        self.watermark = MIN_TIMESTAMP
        self.event_timers = TimerQueue()
        self.processing_timers = TimerQueue()
        self.timer_service: TimerService = (
            _KeyedTimerService(self) if backend is not None else TimerService(self)
        )
        # The element (or timer) being handled.
        self.timestamp: int | None = None
        self.time_domain: TimeDomain | None = None
        self.input_index = 0
        self.metrics: dict[str, Any] = {}

    @property
    def keyed(self) -> bool:
        return self.backend is not None

    @property
    def current_key(self) -> Any:
        if self.backend is None:
            raise StateAccessError("there is no current key outside a KeyedStream")
        return self.backend.current_key

    def get_state(self, spec: StateSpec) -> Any:
        if self.backend is None:
            raise StateAccessError(NOT_KEYED_MESSAGE)
        return self.backend.get_state(spec)


class Operator(abc.ABC):
    """A step the runtime drives: ``open`` once, ``process`` per element (for the current key on
    keyed steps), ``on_timer`` per fired timer, ``on_watermark`` when the watermark advances,
    ``on_checkpoint`` before state is saved, ``end_input`` when all input is done, ``close``.

    ``process``/``on_timer``/``on_watermark``/``on_checkpoint``/``end_input`` return the outputs
    (an iterable; ``SideOutput`` values go to side-output streams). A step may also implement
    the batch hooks (``process_batch``, ``process_keyed``, ``on_activation``), which a batched
    schedule (``BatchedRunner``) calls.
    """

    #: When not None, ``process(value, runtime)`` is ``(one_to_one(value),)`` for every value
    #: (one main output per element; the function reads neither the element's context nor
    #: timers), and the runtime may call it instead of ``process`` (a MapFunction's ``map``).
    one_to_one: Callable[[Any], Any] | None = None

    #: With ``one_to_one``: ``(shape, conform)`` when its output must fit a declared type: an
    #: output whose class is not ``shape`` (None: any output) is handed to ``conform``, which
    #: returns it in the type's shape or raises (a check the runtime makes inline, without a
    #: call for outputs already of class ``shape``).
    one_to_one_check: tuple[type | None, Callable[[Any], Any]] | None = None

    #: With ``one_to_one_check``: the check to make instead when the one consumer of the output
    #: reads it only field by field (``SinkNode.fields_only``: a DataFrame's columns): it may
    #: hand back a fitting tuple as it is where ``conform`` makes a Row of it, which that consumer
    #: would only take apart again (``conformer``'s ``fields``). None: ``conform`` serves.
    one_to_one_fields: Callable[[Any], Any] | None = None

    #: With ``one_to_one``: what a failure of it is reported as, when not the exception itself
    #: (a front end's own error, e.g. Bytewax's ``BytewaxRuntimeError`` naming the step): the
    #: runtime calls it with the exception and makes what it returns the StepError's cause. So
    #: the function needs no wrapper of its own, which would cost a call per record.
    one_to_one_error: Callable[[Exception], Exception] | None = None

    #: True when ``on_checkpoint`` does nothing unless this instance handled an element or a timer
    #: since the previous checkpoint (it saves only what was touched since then), so an engine may
    #: skip a checkpoint-only call that brings no records and no due timers. An operator that
    #: does not override ``on_checkpoint`` need not set it.
    idle_checkpoint_is_noop: bool = False

    #: Whether the operator reads and writes keyed state only for the backend's current key, which
    #: the runtime sets before it hands the operator a key's record or timer (and the operator
    #: sets through ``set_current_key``), never by scanning the stores, except in ``end_input``
    #: (an engine holds all state before it calls that). An engine may then hold just the part
    #: of a key group's state whose keys became current (``KeyedStateBackend.key_loader``): the
    #: streaming target loads a key's bucket of state on demand, so a micro-batch costs what it
    #: touches. False (the safe default) keeps whole key groups.
    keyed_state_by_current_key: bool = False

    def open(self, runtime: OperatorRuntime) -> None:  # noqa: B027 - optional hook
        """Called once before the first element."""

    @abc.abstractmethod
    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        """Handle one element from input ``runtime.input_index``."""

    def on_timer(self, timestamp: int, runtime: OperatorRuntime) -> Iterable[Any]:
        """Handle a fired timer of ``runtime.current_key`` (domain in ``runtime.time_domain``)."""
        return ()

    def on_watermark(self, watermark: int, runtime: OperatorRuntime) -> Iterable[Any]:
        """Called when this instance's input watermark advances to ``watermark`` (after the
        event-time timers it makes due have fired); ``MAX_TIMESTAMP`` at the end of bounded input.
        Not called in BATCH mode on keyed steps, which see no watermarks."""
        return ()

    def on_checkpoint(self, checkpoint_id: int, runtime: OperatorRuntime) -> Iterable[Any]:
        """Called when the engine is about to save this instance's state (on Spark streaming:
        once per key-group call at the end of each micro-batch, ``checkpoint_id`` the micro-batch
        id). Bounded runs and the in-process target save nothing and never call it."""
        return ()

    def end_input(self, runtime: OperatorRuntime) -> Iterable[Any]:
        """Called once after the last element (and after end-of-input timers)."""
        return ()

    # Batch hooks: optional. A batched schedule (``BatchedRunner``) calls the ones a step with
    # one instance overrides with each batch of input, and the runtime's per-element path
    # otherwise. The defaults handle each element with ``process``; an override may handle the
    # batch as a whole (a front end whose user functions take batches).
    def process_batch(self, values: list[Any], runtime: OperatorRuntime) -> Iterable[Any]:
        """Handle a batch of elements of input ``runtime.input_index`` (a non-keyed step):
        the outputs of ``process`` of each, in order."""
        outs: list[Any] = []
        for value in values:
            outs.extend(self.process(value, runtime))
        return outs

    def process_keyed(
        self, groups: Sequence[tuple[Any, list[Any]]], runtime: OperatorRuntime
    ) -> Iterable[Any]:
        """Handle a batch of elements of input ``runtime.input_index`` (a keyed step) as
        ``(key, its elements in arrival order)`` groups in key order; the hook sets each key on
        the backend itself. Default: ``process`` of each element with its key current."""
        backend = runtime.backend
        assert backend is not None
        outs: list[Any] = []
        for key, values in groups:
            backend.set_current_key(key)
            for value in values:
                outs.extend(self.process(value, runtime))
        return outs

    def on_activation(self, runtime: OperatorRuntime) -> Iterable[Any]:
        """Called by a batched schedule at each batch boundary (after a batch of input was
        handled anywhere in the job), e.g. to fire notifications that are due by now."""
        return ()

    # Operator state (Flink's non-keyed state: broadcast state): optional. An engine that keeps
    # state between runs of an instance (Spark streaming, in each key group's state row) saves
    # what ``snapshot_operator_state`` returns and gives it back after ``open``.
    def snapshot_operator_state(self) -> Any:
        """This instance's state that is not keyed, as a picklable value (None: none)."""
        return None

    def restore_operator_state(self, state: Any) -> None:  # noqa: B027 - optional hook
        """Take back what ``snapshot_operator_state`` returned (called after ``open``)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Called once at the end."""

    def decode_namespace(self, namespace: bytes) -> Any:
        """The value a state namespace of this operator stands for (the window, for a window
        operator), for state readers (``fs_compat.spark.read_state``); by default the bytes."""
        return namespace


def overrides(op: Operator, hook: str) -> bool:
    """Whether ``op``'s class defines its own ``hook`` (an optional Operator method): an engine
    skips calling the base class's no-op."""
    return getattr(type(op), hook) is not getattr(Operator, hook)
