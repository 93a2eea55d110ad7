"""PyFlink's state descriptors: thin, validated shims that yield an immutable runtime StateSpec."""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic

from typing_extensions import TypeVar

from fs_api_advanced import Codec, PickleCodec
from fs_compat.runtime import StateKind, StateSpec

if TYPE_CHECKING:
    from fs_compat.common import TypeInformation

    from ._functions import AggregateFunction, ReduceFunction
    from ._ttl import StateTtlConfig

T = TypeVar("T", default=Any)
K = TypeVar("K", default=Any)
V = TypeVar("V", default=Any)
IN = TypeVar("IN", default=Any)
ACC = TypeVar("ACC", default=Any)
OUT = TypeVar("OUT", default=Any)


class _ByteOrder(Codec[Any]):
    """A map-key codec for key types without an order-preserving encoding (rows, pickled
    objects). PyFlink's MapState promises no iteration order, so keys are kept in the byte order
    of their encodings: stable and deterministic, though not value order."""

    supports_ordered_keys = True

    def __init__(self, inner: Codec[Any]) -> None:
        self.inner = inner

    def encode(self, value: Any) -> bytes:
        return self.inner.encode(value)

    def decode(self, data: bytes) -> Any:
        return self.inner.decode(data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ByteOrder) and other.inner == self.inner

    def __hash__(self) -> int:
        return hash((type(self), self.inner))

    def __repr__(self) -> str:
        return f"ByteOrder({self.inner!r})"


def _codec_of(type_info: TypeInformation[Any] | None) -> Codec[Any]:
    if type_info is None:
        return PickleCodec()
    codec: Codec[Any] = type_info.codec()
    return codec


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"state name must be a non-empty str, got {name!r}")
    return name


class StateDescriptor(abc.ABC):
    """Base of the state descriptors: a name, a TypeInformation and an optional TTL config.

    As in PyFlink, ``enable_time_to_live`` records the config on the descriptor; it is read when
    the state is obtained from the RuntimeContext.
    """

    def __init__(self, name: str, type_info: TypeInformation[Any] | None) -> None:
        self.name = _check_name(name)
        self.type_info = type_info
        self._ttl_config: StateTtlConfig | None = None

    def get_name(self) -> str:
        """The state's name."""
        return self.name

    def enable_time_to_live(self, ttl_config: StateTtlConfig) -> None:
        """Give the state a time-to-live (see ``StateTtlConfig``)."""
        from ._ttl import StateTtlConfig

        if not isinstance(ttl_config, StateTtlConfig):
            raise TypeError(f"ttl_config must be a StateTtlConfig, got {type(ttl_config).__name__}")
        self._ttl_config = ttl_config

    def _ttl(self) -> Any:
        return None if self._ttl_config is None else self._ttl_config.to_ttl_config()

    @abc.abstractmethod
    def _spec(self) -> StateSpec:
        """The engine-neutral spec the runtime binds."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.type_info!r})"


class ValueStateDescriptor(StateDescriptor, Generic[T]):
    """Describes a ValueState.

    >>> from fs_compat.common import Types
    >>> ValueStateDescriptor("count", Types.LONG()).get_name()
    'count'
    """

    def __init__(self, name: str, value_type_info: TypeInformation[T]) -> None:
        super().__init__(name, value_type_info)

    def _spec(self) -> StateSpec:
        return StateSpec(
            self.name,
            StateKind.VALUE,
            _codec_of(self.type_info),
            ttl=self._ttl(),
            type_description="value state",
        )


class ListStateDescriptor(StateDescriptor, Generic[T]):
    """Describes a ListState; its type info is ``Types.LIST(elem_type_info)``."""

    def __init__(self, name: str, elem_type_info: TypeInformation[T]) -> None:
        from fs_compat.common import Types

        super().__init__(name, Types.LIST(elem_type_info))
        self.elem_type_info = elem_type_info

    def _spec(self) -> StateSpec:
        return StateSpec(self.name, StateKind.LIST, _codec_of(self.elem_type_info), ttl=self._ttl())


class MapStateDescriptor(StateDescriptor, Generic[K, V]):
    """Describes a MapState; its type info is ``Types.MAP(key_type_info, value_type_info)``."""

    def __init__(
        self, name: str, key_type_info: TypeInformation[K], value_type_info: TypeInformation[V]
    ) -> None:
        from fs_compat.common import Types

        super().__init__(name, Types.MAP(key_type_info, value_type_info))
        self.key_type_info = key_type_info
        self.value_type_info = value_type_info

    def _spec(self) -> StateSpec:
        key_codec = _codec_of(self.key_type_info)
        if not key_codec.supports_ordered_keys:
            key_codec = _ByteOrder(key_codec)
        return StateSpec(
            self.name,
            StateKind.MAP,
            _codec_of(self.value_type_info),
            key_codec=key_codec,
            ttl=self._ttl(),
        )


def _reduce_callable(reduce_function: Any) -> Callable[[Any, Any], Any]:
    from ._functions import ReduceFunction

    if isinstance(reduce_function, ReduceFunction):
        return reduce_function.reduce
    if callable(reduce_function):
        return reduce_function  # type: ignore[no-any-return]
    raise TypeError("The input must be a ReduceFunction or a callable function!")


class ReducingStateDescriptor(StateDescriptor, Generic[T]):
    """Describes a ReducingState: values folded with a ReduceFunction or a callable."""

    def __init__(
        self,
        name: str,
        reduce_function: ReduceFunction[T] | Callable[[T, T], T],
        type_info: TypeInformation[T],
    ) -> None:
        super().__init__(name, type_info)
        self._reduce = _reduce_callable(reduce_function)
        self.reduce_function = reduce_function

    def get_reduce_function(self) -> ReduceFunction[T] | Callable[[T, T], T]:
        """The function that combines the values added to the state."""
        return self.reduce_function

    def _spec(self) -> StateSpec:
        return StateSpec(
            self.name,
            StateKind.REDUCING,
            _codec_of(self.type_info),
            reduce_function=self._reduce,
            ttl=self._ttl(),
        )


class AggregatingStateDescriptor(StateDescriptor, Generic[IN, ACC, OUT]):
    """Describes an AggregatingState; ``state_type_info`` is the accumulator's type."""

    def __init__(
        self,
        name: str,
        agg_function: AggregateFunction[IN, ACC, OUT],
        state_type_info: TypeInformation[ACC],
    ) -> None:
        from ._functions import AggregateFunction

        if not isinstance(agg_function, AggregateFunction):
            raise TypeError("The input must be a pyflink.datastream.functions.AggregateFunction!")
        super().__init__(name, state_type_info)
        self.agg_function = agg_function

    def get_agg_function(self) -> AggregateFunction[IN, ACC, OUT]:
        """The AggregateFunction that folds the values added to the state."""
        return self.agg_function

    def _spec(self) -> StateSpec:
        return StateSpec(
            self.name,
            StateKind.AGGREGATING,
            _codec_of(self.type_info),
            aggregate_function=self.agg_function,
            ttl=self._ttl(),
        )
