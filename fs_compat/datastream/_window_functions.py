"""PyFlink's window functions (``WindowFunction``, ``ProcessWindowFunction`` and their non-keyed
``All`` forms) and ``KeyedStateStore``, as in ``pyflink.datastream.functions``."""

from __future__ import annotations

import abc
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Generic

from typing_extensions import TypeVar

from ._functions import Function, RuntimeContext

if TYPE_CHECKING:
    from fs_compat.runtime import AggregatingState, ListState, MapState, ReducingState, ValueState

    from ._descriptors import (
        AggregatingStateDescriptor,
        ListStateDescriptor,
        MapStateDescriptor,
        ReducingStateDescriptor,
        ValueStateDescriptor,
    )

IN = TypeVar("IN", default=Any)
OUT = TypeVar("OUT", default=Any)
KEY = TypeVar("KEY", default=Any)
W = TypeVar("W", default=Any)
W2 = TypeVar("W2", default=Any)


class KeyedStateStore(abc.ABC):
    """Where keyed state comes from: a ``RuntimeContext`` (state per key), or a window
    function context's ``window_state()`` (state per key and window) and ``global_state()``."""

    @abc.abstractmethod
    def get_state(self, state_descriptor: ValueStateDescriptor[Any]) -> ValueState[Any]:
        """The ValueState of ``state_descriptor`` in this store."""

    @abc.abstractmethod
    def get_list_state(self, state_descriptor: ListStateDescriptor[Any]) -> ListState[Any]:
        """The ListState of ``state_descriptor`` in this store."""

    @abc.abstractmethod
    def get_map_state(self, state_descriptor: MapStateDescriptor[Any, Any]) -> MapState[Any, Any]:
        """The MapState of ``state_descriptor`` in this store."""

    @abc.abstractmethod
    def get_reducing_state(self, state_descriptor: ReducingStateDescriptor[Any]) -> ReducingState[Any]:
        """The ReducingState of ``state_descriptor`` in this store."""

    @abc.abstractmethod
    def get_aggregating_state(
        self, state_descriptor: AggregatingStateDescriptor[Any, Any, Any]
    ) -> AggregatingState[Any, Any]:
        """The AggregatingState of ``state_descriptor`` in this store."""


# As in PyFlink, a RuntimeContext is a KeyedStateStore.
KeyedStateStore.register(RuntimeContext)


class WindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """Evaluates a keyed window: ``apply(key, window, inputs)`` returns or yields the outputs."""

    @abc.abstractmethod
    def apply(self, key: KEY, window: W, inputs: Iterable[IN]) -> Iterable[OUT]:
        """The outputs for the window ``window`` of ``key``, given all its elements ``inputs``."""


class AllWindowFunction(Function, Generic[IN, OUT, W]):
    """Evaluates a non-keyed window (``window_all``): ``apply(window, inputs)``."""

    @abc.abstractmethod
    def apply(self, window: W, inputs: Iterable[IN]) -> Iterable[OUT]:
        """The outputs for the window ``window``, given all its elements ``inputs``."""


class ProcessWindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """Evaluates a keyed window with a context: ``process(key, context, elements)``; ``clear``
    is called when the window is dropped (drop per-window state there)."""

    class Context(abc.ABC, Generic[W2]):
        """The window being evaluated, the clocks, and state per window and per key."""

        @abc.abstractmethod
        def window(self) -> W2:
            """The window being evaluated."""

        @abc.abstractmethod
        def current_processing_time(self) -> int:
            """The processing time (epoch ms)."""

        @abc.abstractmethod
        def current_watermark(self) -> int:
            """The current event-time watermark (ms)."""

        @abc.abstractmethod
        def window_state(self) -> KeyedStateStore:
            """State scoped to this key and window (cleared with ``clear``)."""

        @abc.abstractmethod
        def global_state(self) -> KeyedStateStore:
            """State scoped to this key, across its windows."""

    @abc.abstractmethod
    def process(
        self, key: KEY, context: ProcessWindowFunction.Context[W], elements: Iterable[IN]
    ) -> Iterable[OUT]:
        """The outputs for the window of ``key``, given its elements; ``context`` gives the
        window, time and per-window state."""

    def clear(self, context: ProcessWindowFunction.Context[W]) -> None:
        """Called when the window expires."""


class ProcessAllWindowFunction(Function, Generic[IN, OUT, W]):
    """Evaluates a non-keyed window with a context: ``process(context, elements)``."""

    class Context(abc.ABC, Generic[W2]):
        @abc.abstractmethod
        def window(self) -> W2:
            """The window being evaluated."""

        @abc.abstractmethod
        def window_state(self) -> KeyedStateStore:
            """State scoped to this key and window (cleared with ``clear``)."""

        @abc.abstractmethod
        def global_state(self) -> KeyedStateStore:
            """State scoped to this key, across its windows."""

    @abc.abstractmethod
    def process(self, context: ProcessAllWindowFunction.Context[W], elements: Iterable[IN]) -> Iterable[OUT]:
        """The outputs for a window, given its elements; ``context`` gives the window, time and
        per-window state."""

    def clear(self, context: ProcessAllWindowFunction.Context[W]) -> None:
        """Called when the window expires."""


class PassThroughWindowFunction(WindowFunction[IN, IN, KEY, W]):
    """Emits the window's contents as they are."""

    def apply(self, key: KEY, window: W, inputs: Iterable[IN]) -> Iterable[IN]:
        """The window's elements, as they are."""
        yield from inputs


class PassThroughAllWindowFunction(AllWindowFunction[IN, IN, W]):
    """Emits the window's contents as they are."""

    def apply(self, window: W, inputs: Iterable[IN]) -> Iterable[IN]:
        """The window's elements, as they are."""
        yield from inputs


__all__ = [
    "AllWindowFunction",
    "KeyedStateStore",
    "PassThroughAllWindowFunction",
    "PassThroughWindowFunction",
    "ProcessAllWindowFunction",
    "ProcessWindowFunction",
    "WindowFunction",
]
