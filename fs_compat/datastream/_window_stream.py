"""``WindowedStream`` (``KeyedStream.window`` / ``count_window``) and ``AllWindowedStream``
(``DataStream.window_all`` / ``count_window_all``): PyFlink's names over one keyed window
operator step."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Self, TypeAlias, overload

from typing_extensions import TypeVar

from fs_api_advanced import PickleCodec
from fs_compat.common.internal import conformer
from fs_compat.runtime import OperatorNode, StateKind, StateSpec

from ._adapters import FunctionTemplate, side_output
from ._data_stream import DataStream, KeyedStream
from ._descriptors import AggregatingStateDescriptor, ListStateDescriptor, ReducingStateDescriptor
from ._functions import AggregateFunction, ReduceFunction
from ._window import (
    CountSlidingWindowAssigner,
    CountTrigger,
    CountTumblingWindowAssigner,
    Evictor,
    MergingWindowAssigner,
    Trigger,
    WindowAssigner,
)
from ._window_functions import (
    AllWindowFunction,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    WindowFunction,
)
from ._window_operator import WindowFn, WindowOperator
from .output_tag import OutputTag

if TYPE_CHECKING:
    from fs_compat.common import Duration, Time, TypeInformation

    from ._data_stream import StreamExecutionEnvironment

T = TypeVar("T", default=Any)
K = TypeVar("K", default=Any)
IN = TypeVar("IN")
M = TypeVar("M")
R = TypeVar("R")

#: A window function of either kind (keyed or over all elements) from ``IN`` to ``R``, keyed by ``K``.
AnyWindowFunction: TypeAlias = (
    "WindowFunction[IN, R, K, Any] | ProcessWindowFunction[IN, R, K, Any]"
    " | AllWindowFunction[IN, R, Any] | ProcessAllWindowFunction[IN, R, Any]"
)

#: The state holding window contents (PyFlink's name).
WINDOW_STATE_NAME = "window-contents"


def _null_byte_key(value: Any) -> int:
    """Every element has the same key (Flink's NullByteKeySelector): windows over all of them."""
    return 0


def _reduce_all(reduce: Callable[[Any, Any], Any], values: list[Any]) -> list[Any]:
    return [functools.reduce(reduce, values)] if values else []


def _aggregate_all(agg: AggregateFunction[Any, Any, Any], values: list[Any]) -> list[Any]:
    acc = agg.create_accumulator()
    for value in values:
        acc = agg.add(value, acc)
    return [agg.get_result(acc)]


class WindowedStream(Generic[T, K]):
    """A keyed stream cut into windows by a WindowAssigner; a trigger decides when each window
    (per key) is evaluated by ``reduce``/``aggregate``/``apply``/``process``. ``T`` is the type of
    the stream's values, ``K`` of its keys."""

    _keyed_names = ("WindowFunction", "ProcessWindowFunction")

    def __init__(self, keyed_stream: KeyedStream[T, K], window_assigner: WindowAssigner[T, Any]) -> None:
        if not isinstance(window_assigner, WindowAssigner):
            raise TypeError(f"window_assigner must be a WindowAssigner, got {window_assigner!r}")
        self._keyed_stream = keyed_stream
        self._window_assigner = window_assigner
        self._allowed_lateness = 0
        self._late_data_output_tag: OutputTag[Any] | None = None
        self._window_trigger: Trigger[Any, Any] | None = None
        self._evictor: Evictor[Any, Any] | None = None

    def get_execution_environment(self) -> StreamExecutionEnvironment:
        """The environment the stream belongs to."""
        return self._keyed_stream._env

    def get_input_type(self) -> TypeInformation[T] | None:
        """The type of the windowed stream's values (None: pickled)."""
        return self._keyed_stream.get_type()

    def _contents_type(self) -> Any:
        """The type the window keeps its elements as (pickled when the stream has none)."""
        from fs_compat.common import Types

        return self.get_input_type() or Types.PICKLED_BYTE_ARRAY()

    def trigger(self, trigger: Trigger[T, Any]) -> Self:
        """The trigger that decides when windows are evaluated (default: the assigner's)."""
        if not isinstance(trigger, Trigger):
            raise TypeError(f"trigger must be a Trigger, got {trigger!r}")
        if isinstance(self._window_assigner, MergingWindowAssigner) and trigger.can_merge() is not True:
            raise TypeError(
                "A merging window assigner cannot be used with a trigger that does not support merging."
            )
        self._window_trigger = trigger
        return self

    def allowed_lateness(self, time_ms: int | Time | Duration) -> Self:
        """How late (ms behind the watermark) elements may be and still update their window;
        later ones are dropped, or sent to ``side_output_late_data``. Event-time windows only."""
        to_ms = getattr(time_ms, "to_milliseconds", None)
        lateness = int(to_ms()) if to_ms is not None else time_ms
        if not isinstance(lateness, int) or isinstance(lateness, bool) or lateness < 0:
            raise ValueError(f"The allowed lateness must be an int >= 0 (ms), got {time_ms!r}")
        self._allowed_lateness = lateness
        return self

    def side_output_late_data(self, output_tag: OutputTag[T]) -> Self:
        """Send elements too late for their window to this side output."""
        if not isinstance(output_tag, OutputTag):
            raise TypeError(f"output_tag must be an OutputTag, got {output_tag!r}")
        self._late_data_output_tag = output_tag
        return self

    def evictor(self, evictor: Evictor[T, Any]) -> Self:
        """fs-compat extension (Java Flink's ``evictor``; PyFlink has none): remove elements from
        a window before/after the window function sees them. Windows then keep every element,
        also for ``reduce``/``aggregate``."""
        if not isinstance(evictor, Evictor):
            raise TypeError(f"evictor must be an Evictor, got {evictor!r}")
        self._evictor = evictor
        return self

    # The window function's kind.
    def _mode(self, window_function: Any) -> str:
        if window_function is None:
            return "pass"
        if isinstance(window_function, WindowFunction):
            return "apply"
        if isinstance(window_function, ProcessWindowFunction):
            return "process"
        raise TypeError("window_function should be a WindowFunction or ProcessWindowFunction")

    @overload
    def reduce(
        self,
        reduce_function: ReduceFunction[T] | Callable[[T, T], T],
        window_function: None = None,
        output_type: TypeInformation[Any] | None = None,
    ) -> DataStream[T]: ...
    @overload
    def reduce(
        self,
        reduce_function: ReduceFunction[T] | Callable[[T, T], T],
        window_function: AnyWindowFunction[T, R, K],
        output_type: TypeInformation[Any] | None = None,
    ) -> DataStream[R]: ...
    def reduce(
        self,
        reduce_function: ReduceFunction[T] | Callable[[T, T], T],
        window_function: AnyWindowFunction[T, Any, K] | None = None,
        output_type: TypeInformation[Any] | None = None,
    ) -> DataStream[Any]:
        """Reduce each window's elements incrementally; ``window_function`` (optional) gets the
        one reduced value."""
        mode = self._mode(window_function)
        if mode == "pass" and output_type is None:
            output_type = self.get_input_type()
        descriptor = ReducingStateDescriptor(WINDOW_STATE_NAME, reduce_function, self._contents_type())
        reduce = descriptor._reduce
        pre = None if self._evictor is None else functools.partial(_reduce_all, reduce)
        return self._build(window_function, mode, descriptor._spec(), pre, output_type)

    @overload
    def aggregate(
        self,
        aggregate_function: AggregateFunction[T, Any, R],
        window_function: None = None,
        accumulator_type: TypeInformation[Any] | list[TypeInformation[Any]] | None = None,
        output_type: TypeInformation[Any] | None = None,
    ) -> DataStream[R]: ...
    @overload
    def aggregate(
        self,
        aggregate_function: AggregateFunction[T, Any, M],
        window_function: AnyWindowFunction[M, R, K],
        accumulator_type: TypeInformation[Any] | list[TypeInformation[Any]] | None = None,
        output_type: TypeInformation[Any] | None = None,
    ) -> DataStream[R]: ...
    def aggregate(
        self,
        aggregate_function: AggregateFunction[T, Any, Any],
        window_function: AnyWindowFunction[Any, Any, K] | None = None,
        accumulator_type: TypeInformation[Any] | list[TypeInformation[Any]] | None = None,
        output_type: TypeInformation[Any] | None = None,
    ) -> DataStream[Any]:
        """Aggregate each window's elements incrementally with an AggregateFunction;
        ``window_function`` (optional) gets the one result."""
        from fs_compat.common import RowTypeInfo, Types

        mode = self._mode(window_function)
        if accumulator_type is None:
            accumulator_type = Types.PICKLED_BYTE_ARRAY()
        elif isinstance(accumulator_type, list):
            accumulator_type = RowTypeInfo(accumulator_type)
        descriptor = AggregatingStateDescriptor(WINDOW_STATE_NAME, aggregate_function, accumulator_type)
        pre = None if self._evictor is None else functools.partial(_aggregate_all, aggregate_function)
        return self._build(window_function, mode, descriptor._spec(), pre, output_type)

    def apply(
        self, window_function: WindowFunction[T, R, K, Any], output_type: TypeInformation[Any] | None = None
    ) -> DataStream[R]:
        """Evaluate each window with a WindowFunction over all its elements."""
        if not isinstance(window_function, WindowFunction):
            raise TypeError("window_function should be a WindowFunction")
        spec = ListStateDescriptor(WINDOW_STATE_NAME, self._contents_type())._spec()
        return self._build(window_function, "apply", spec, None, output_type)

    def process(
        self,
        process_window_function: ProcessWindowFunction[T, R, K, Any],
        output_type: TypeInformation[Any] | None = None,
    ) -> DataStream[R]:
        """Evaluate each window with a ProcessWindowFunction over all its elements."""
        if not isinstance(process_window_function, ProcessWindowFunction):
            raise TypeError("process_window_function should be a ProcessWindowFunction")
        spec = ListStateDescriptor(WINDOW_STATE_NAME, self._contents_type())._spec()
        return self._build(process_window_function, "process", spec, None, output_type)

    # The step.
    def _build(
        self,
        window_function: Any,
        mode: str,
        contents_spec: StateSpec,
        pre: Callable[[list[Any]], list[Any]] | None,
        output_type: Any,
    ) -> DataStream[Any]:
        assigner = self._window_assigner
        env = self.get_execution_environment()
        trigger = self._window_trigger
        # Count windows never receive elements after their trigger fired: drop them then.
        purge_on_fire = (
            trigger is None
            and isinstance(assigner, (CountTumblingWindowAssigner, CountSlidingWindowAssigner))
            and isinstance(assigner.get_default_trigger(env), CountTrigger)
        )
        if trigger is None:
            trigger = assigner.get_default_trigger(env)
        evictor = self._evictor
        if evictor is not None:  # the contents are every element, with its timestamp
            contents_spec = StateSpec(WINDOW_STATE_NAME, StateKind.LIST, PickleCodec())
        name = type(assigner).__name__
        late_tag = self._late_data_output_tag
        late = None if late_tag is None else functools.partial(side_output, late_tag)
        what = f"step '{name}'"
        template = FunctionTemplate((assigner, trigger, evictor, window_function, pre, contents_spec), what)
        conform = conformer(output_type)
        lateness = self._allowed_lateness
        mode_ = self._mode_for(mode)

        def factory() -> WindowOperator:
            a, t, e, f, p, spec = template.copy()
            return WindowOperator(
                assigner=a,
                trigger=t,
                window_fn=WindowFn(f, mode_),
                contents_spec=spec,
                allowed_lateness=lateness,
                late=late,
                evictor=e,
                pre=p,
                conform=conform,
                purge_on_fire=purge_on_fire,
            )

        node = OperatorNode(name, [self._keyed_stream._edge()], operator_factory=factory, keyed=True)
        self._configure(node)
        return DataStream(env, node, output_type)

    def _mode_for(self, mode: str) -> str:
        return mode

    def _configure(self, node: OperatorNode) -> None:
        pass


class AllWindowedStream(WindowedStream[T, int]):
    """A (non-keyed) stream cut into windows over all its elements; evaluated by one task, as
    in Flink. The window functions are AllWindowFunction / ProcessAllWindowFunction."""

    def __init__(self, data_stream: DataStream[T], window_assigner: WindowAssigner[T, Any]) -> None:
        super().__init__(data_stream.key_by(_null_byte_key), window_assigner)

    def _mode(self, window_function: Any) -> str:
        if window_function is None:
            return "pass"
        if isinstance(window_function, AllWindowFunction):
            return "apply"
        if isinstance(window_function, ProcessAllWindowFunction):
            return "process"
        raise TypeError("window_function should be a AllWindowFunction or ProcessAllWindowFunction")

    def _mode_for(self, mode: str) -> str:
        return mode if mode == "pass" else f"{mode}_all"

    def apply(  # type: ignore[override]
        self, window_function: AllWindowFunction[T, R, Any], output_type: TypeInformation[Any] | None = None
    ) -> DataStream[R]:
        """Evaluate each window with an AllWindowFunction over all its elements."""
        if not isinstance(window_function, AllWindowFunction):
            raise TypeError("window_function should be a AllWindowFunction")
        spec = ListStateDescriptor(WINDOW_STATE_NAME, self._contents_type())._spec()
        return self._build(window_function, "apply", spec, None, output_type)

    def process(  # type: ignore[override]
        self,
        process_window_function: ProcessAllWindowFunction[T, R, Any],
        output_type: TypeInformation[Any] | None = None,
    ) -> DataStream[R]:
        """Evaluate each window with a ProcessAllWindowFunction over all its elements."""
        if not isinstance(process_window_function, ProcessAllWindowFunction):
            raise TypeError("process_window_function should be a ProcessAllWindowFunction")
        spec = ListStateDescriptor(WINDOW_STATE_NAME, self._contents_type())._spec()
        return self._build(process_window_function, "process", spec, None, output_type)

    def _configure(self, node: OperatorNode) -> None:
        node.parallelism = 1  # Flink runs window_all in one task


__all__ = ["WINDOW_STATE_NAME", "AllWindowedStream", "WindowedStream"]
