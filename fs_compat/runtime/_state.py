"""State specs, the PyFlink-shaped state interfaces, and the keyed backend that binds specs to
``fs_api_advanced`` keyed states for the current key."""

from __future__ import annotations

import abc
import enum
import io
import pickle
from collections.abc import Callable, Iterable, Iterator, Mapping, Set
from typing import Any, Generic, cast

import attrs
from typing_extensions import TypeVar

from fs_api import ComplexKey, KvStore, MemoryKvStore
from fs_api_advanced import (
    AggregateFunc,
    CellFactory,
    Codec,
    KeyedAggregatingStateFactory,
    KeyedFactoryBase,
    KeyedListStateFactory,
    KeyedMapStateFactory,
    KeyedReducingStateFactory,
    KeyedValueStateFactory,
    TtlConfig,
    ensure_ordered_key_codec,
    system_clock,
)

from ._keys import KeyEncoder, key_group_bytes

#: One stored entry of keyed state: (key bytes, namespace, user key, value).
StateEntry = tuple[bytes, bytes, bytes, bytes]

T = TypeVar("T", default=Any)
K = TypeVar("K", default=Any)
V = TypeVar("V", default=Any)
IN = TypeVar("IN", default=Any)
OUT = TypeVar("OUT", default=Any)

NOT_KEYED_MESSAGE = "This state is only accessible by functions executed on a KeyedStream."


class StateAccessError(RuntimeError):
    """State used where it cannot be: outside a keyed stream, or a name reused for another type."""


class StateKind(enum.Enum):
    VALUE = "value state"
    LIST = "list state"
    MAP = "map state"
    REDUCING = "reducing state"
    AGGREGATING = "aggregating state"


def _non_empty_name(_inst: object, _attr: object, value: str) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"state name must be a non-empty str, got {value!r}")


@attrs.frozen
class StateSpec:
    """What the runtime needs to know of one keyed state: engine-neutral, immutable, picklable.

    Front ends build specs (a PyFlink descriptor yields one); the backend binds them.
    """

    name: str = attrs.field(validator=_non_empty_name)
    kind: StateKind
    value_codec: Codec[Any]
    key_codec: Codec[Any] | None = None
    reduce_function: Callable[[Any, Any], Any] | None = attrs.field(default=None, eq=False)
    aggregate_function: AggregateFunc[Any, Any, Any] | None = attrs.field(default=None, eq=False)
    ttl: TtlConfig | None = None
    type_description: str = ""

    def __attrs_post_init__(self) -> None:
        if self.kind is StateKind.MAP:
            if self.key_codec is None:
                raise ValueError(f"map state '{self.name}' needs a key codec")
            ensure_ordered_key_codec(self.key_codec, f"map state '{self.name}'")
        if self.kind is StateKind.REDUCING and not callable(self.reduce_function):
            raise TypeError(f"reducing state '{self.name}' needs a reduce function")
        if self.kind is StateKind.AGGREGATING and self.aggregate_function is None:
            raise TypeError(f"aggregating state '{self.name}' needs an aggregate function")

    def describe(self) -> str:
        return self.type_description or self.kind.value


# The state interfaces user code sees (PyFlink's names and methods). ---------------------------


class State(abc.ABC):
    """Any keyed state: ``clear()`` removes the current key's value."""

    @abc.abstractmethod
    def clear(self) -> None:
        """Remove the current key's state (PyFlink's ``State.clear``)."""


class ValueState(State, Generic[T]):
    """One value per key: ``value()`` (None when unset), ``update(v)``, ``clear()``."""

    @abc.abstractmethod
    def value(self) -> T | None:
        """The current key's value; None when it has none (or it expired)."""

    @abc.abstractmethod
    def update(self, value: T | None) -> None:
        """Set the current key's value; ``update(None)`` clears it, as in PyFlink."""


class ListState(State, Generic[T]):
    """A list per key: ``get()`` (empty when unset), ``add``, ``add_all``, ``update``, ``clear``."""

    @abc.abstractmethod
    def get(self) -> list[T]:
        """The current key's elements in the order they were added; empty when unset."""

    @abc.abstractmethod
    def add(self, value: T) -> None:
        """Append ``value`` to the current key's list."""

    @abc.abstractmethod
    def add_all(self, values: Iterable[T]) -> None:
        """Append each of ``values``, in order."""

    @abc.abstractmethod
    def update(self, values: Iterable[T]) -> None:
        """Replace the current key's list with ``values``."""

    def __iter__(self) -> Iterator[T]:
        return iter(self.get())


class MapState(State, Generic[K, V]):
    """A map per key, with PyFlink's methods and Python's mapping operators."""

    @abc.abstractmethod
    def get(self, key: K) -> V | None:
        """The value under ``key`` in the current key's map; None when absent."""

    @abc.abstractmethod
    def put(self, key: K, value: V) -> None:
        """Set ``key`` to ``value`` in the current key's map."""

    @abc.abstractmethod
    def put_all(self, entries: Mapping[K, V] | Iterable[tuple[K, V]]) -> None:
        """``put`` of every entry of a mapping or of ``(key, value)`` pairs."""

    @abc.abstractmethod
    def remove(self, key: K) -> None:
        """Remove ``key`` from the current key's map (no error when absent)."""

    @abc.abstractmethod
    def contains(self, key: K) -> bool:
        """Whether the current key's map has ``key``."""

    @abc.abstractmethod
    def items(self) -> Iterator[tuple[K, V]]:
        """The current key's ``(key, value)`` entries."""

    def keys(self) -> Iterator[K]:
        """The current key's map keys."""
        return (k for k, _ in self.items())

    def values(self) -> Iterator[V]:
        """The current key's map values."""
        return (v for _, v in self.items())

    def is_empty(self) -> bool:
        """Whether the current key's map has no entry."""
        return next(self.items(), None) is None

    def __getitem__(self, key: K) -> V | None:
        return self.get(key)

    def __setitem__(self, key: K, value: V) -> None:
        self.put(key, value)

    def __delitem__(self, key: K) -> None:
        self.remove(key)

    def __contains__(self, key: object) -> bool:
        return self.contains(cast(K, key))

    def __iter__(self) -> Iterator[K]:
        return self.keys()


class AppendingState(State, Generic[IN, OUT]):
    """``add(value)`` folds a value in; ``get()`` reads the result (None when empty)."""

    @abc.abstractmethod
    def get(self) -> OUT | None:
        """The folded result for the current key; None when nothing was added."""

    @abc.abstractmethod
    def add(self, value: IN) -> None:
        """Fold ``value`` into the current key's result."""


class ReducingState(AppendingState[T, T]):
    """Values folded with a reduce function."""


class AggregatingState(AppendingState[IN, OUT]):
    """Values folded into an accumulator by an AggregateFunction."""


# Binding to fs_api_advanced for the current key. -------------------------------------------


#: How many keys' bound fs_api_advanced states a view keeps before it starts over.
BOUND_CACHE_SIZE = 1 << 16


class _Bound:
    """A view that re-binds its fs_api_advanced keyed state when the current key changes; the
    states it bound are kept per key (up to ``BOUND_CACHE_SIZE`` keys), so a key seen again
    costs a dict lookup, not a new state object."""

    __slots__ = ("_backend", "_bound", "_bound_pk", "_factories", "_spec", "_state")

    def __init__(self, backend: KeyedStateBackend, spec: StateSpec) -> None:
        self._backend = backend
        self._spec = spec
        self._factories: dict[int, Any] = {}
        self._bound: dict[bytes, Any] = {}
        self._bound_pk: bytes | None = None
        self._state: Any = None

    def _cur(self) -> Any:
        backend = self._backend
        pk = backend.current_key_bytes
        if pk is not self._bound_pk:
            if pk is None:
                raise StateAccessError(f"state '{self._spec.name}' was used with no current key")
            state = self._bound.get(pk)
            if state is None:
                kg = backend.current_key_group
                factory = self._factories.get(kg)
                if factory is None:
                    factory = self.factory(kg)
                state = backend.bind(self._spec, factory, pk)
                if len(self._bound) >= BOUND_CACHE_SIZE:
                    self._bound.clear()
                self._bound[pk] = state
            self._state = state
            self._bound_pk = pk
        return self._state

    def factory(self, kg: int) -> KeyedFactoryBase:
        """The state's factory for key group ``kg`` (made once)."""
        factory = self._factories.get(kg)
        if factory is None:
            backend = self._backend
            factory = backend.factory_for(self._spec, kg)
            for other in self._factories.values():  # one TTL cleanup queue per state
                factory.share_ttl_cleanup(other)
                break
            self._factories[kg] = factory
            backend.track_restored(self._spec, factory)
        return factory

    def clear(self) -> None:
        self._cur().clear()


class _ValueView(_Bound, ValueState[Any]):
    __slots__ = ()

    def value(self) -> Any:
        return self._cur().value()[0]

    def update(self, value: Any) -> None:
        if value is None:  # Flink: updating with null clears the state
            self._cur().clear()
        else:
            try:
                self._cur().update(value)
            except (TypeError, ValueError) as exc:
                raise _unstorable(self._spec, repr(value), exc) from exc


def _unstorable(spec: StateSpec, what: str, exc: Exception) -> Exception:
    """A value the state's codec cannot encode: the error names the state, the value and (in the
    codec's words) the type expected."""
    message = f"state '{spec.name}' cannot hold {what}: {exc}"
    return TypeError(message) if isinstance(exc, TypeError) else ValueError(message)


_MISS: Any = object()  # not cached
_ABSENT: Any = object()  # cached: no value (a folding state's value may be None)


class _Raw:
    """A cached value kept encoded: mutable values are decoded afresh on every read, as before."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class _HeapCell(_Bound):
    """A single-value state without TTL kept in a dict per key (Flink's heap state backend).

    An immutable value its codec accepts (``Codec.kept_as_is``: numbers, strings, tuples of
    them ...) is kept as the object itself, so reading it is a dict lookup and writing it a dict
    store plus that cheap check; any other value is kept encoded and decoded on every read, as
    the fs_api_advanced state does. Values reach the store (through the fs_api_advanced keyed
    state, so in its format) only when state leaves the process: ``flush``, which snapshots call,
    writes the keys written since the last flush, so unchanged keys keep their bytes. A key read
    for the first time is read from the store once (state restored from a snapshot: its bytes
    are cached when it is restored, ``prime``, and decoded at that first read)."""

    __slots__ = ("_cache", "_codec", "_dirty", "_kept", "_stored")
    #: What the cache holds for a key without a value.
    _empty: Any = _ABSENT

    def __init__(self, backend: KeyedStateBackend, spec: StateSpec) -> None:
        super().__init__(backend, spec)
        self._cache: dict[bytes | None, Any] = {}
        self._dirty: set[bytes] = set()
        self._codec = spec.value_codec
        self._kept = spec.value_codec.kept_as_is
        #: Whether this state ever wrote its store (``flush``): until then, and while the backend
        #: restored nothing into stores that start empty, a key missing from the cache has no value.
        self._stored = False

    def _no_key(self) -> StateAccessError:
        return StateAccessError(f"state '{self._spec.name}' was used with no current key")

    def _get(self) -> Any:
        """The current key's value (``_empty`` when none)."""
        value = self._cache.get(self._backend.current_key_bytes, _MISS)
        if value.__class__ is _Raw:
            return self._decoded(value)
        if value is _MISS:
            backend = self._backend
            pk = backend.current_key_bytes
            if pk is None:
                raise self._no_key()
            if not self._stored and not backend.restored_groups and backend.stores_start_empty:
                value = self._cache[pk] = self._empty
                return value
            raw = self._cur().read_raw()
            if raw is None:
                value = self._cache[pk] = self._empty
                return value
            return self._decoded(_Raw(raw))
        return value

    def _decoded(self, raw: _Raw) -> Any:
        """The current key's value from its bytes ``raw`` (cached, or read from the store); an
        immutable one (``_kept``) is cached as the object from now on, any other stays encoded
        and is decoded afresh on every read."""
        try:
            value = self._codec.decode(raw.data)
        except Exception as exc:  # bytes restored from a snapshot, written by another codec
            raise StateAccessError(
                f"state '{self._spec.name}' of key {self._backend.current_key!r}: its stored bytes "
                f"cannot be decoded with {self._codec!r} ({type(exc).__name__}: {exc}); the state "
                "is corrupt or was written with another type"
            ) from exc
        self._cache[self._backend.current_key_bytes] = value if self._kept(value) else raw
        return value

    def prime(self, entries: Iterable[StateEntry]) -> None:
        """Cache the bytes of restored ``entries`` (this state's, in ``key_group_entries``'
        form) of keys not cached yet, so that a key's first read decodes them (``_decoded``)
        without reading them from the store through a state bound to the key (``_cur``): what
        an instance restored from a snapshot reads for every key it touches."""
        cache = self._cache
        for key, namespace, user_key, value in entries:
            if not namespace and not user_key and key not in cache:
                cache[key] = _Raw(value)

    def _put(self, value: Any) -> None:
        pk = self._backend.current_key_bytes
        if pk is None:
            raise self._no_key()
        if value is not self._empty and not self._kept(value):
            try:
                value = _Raw(self._codec.encode(value))
            except (TypeError, ValueError) as exc:
                raise _unstorable(self._spec, repr(value), exc) from exc
        self._cache[pk] = value
        self._dirty.add(pk)

    def clear(self) -> None:
        self._put(self._empty)

    def flush(self) -> None:
        """Encode the values written since the last flush into the store."""
        if not self._dirty:
            return
        cache, empty = self._cache, self._empty
        group_of, encode = self._backend.key_encoder.key_group, self._spec.value_codec.encode
        self._stored = True
        groups: dict[int, list[tuple[bytes, bytes | None]]] = {}  # (key, payload; None: cleared)
        for pk in sorted(self._dirty):
            value = cache[pk]
            payload = None if value is empty else value.data if value.__class__ is _Raw else encode(value)
            cells = groups.get(kg := group_of(pk))
            if cells is None:
                cells = groups[kg] = []
            cells.append((pk, payload))
        for kg, cells in groups.items():
            cast(CellFactory, self.factory(kg)).write_cells(cells)
        self._dirty.clear()
        self._bound_pk = None

    def forget(self) -> None:
        """Drop the cached values (after a flush: the store holds them)."""
        self._cache.clear()
        self._bound_pk = None


class _HeapValueView(_HeapCell, ValueState[Any]):
    __slots__ = ()
    _empty = None

    def value(self) -> Any:
        value = self._cache.get(self._backend.current_key_bytes, _MISS)
        if value.__class__ is _Raw or value is _MISS:
            return self._get()
        return value

    def update(self, value: Any) -> None:
        pk = self._backend.current_key_bytes
        if pk is None:
            raise self._no_key()
        # Flink: updating with null clears the state.
        if value is not None and not self._kept(value):
            try:
                value = _Raw(self._codec.encode(value))
            except (TypeError, ValueError) as exc:
                raise _unstorable(self._spec, repr(value), exc) from exc
        self._cache[pk] = value
        self._dirty.add(pk)


class _ListView(_Bound, ListState[Any]):
    __slots__ = ()

    def _check(self, value: Any) -> Any:
        if value is None:
            raise ValueError(f"You cannot add null to a ListState (state '{self._spec.name}').")
        return value

    def get(self) -> list[Any]:
        items: list[Any] = self._cur().get()
        return items

    def add(self, value: Any) -> None:
        value = self._check(value)
        try:
            self._cur().add(value)
        except (TypeError, ValueError) as exc:
            raise _unstorable(self._spec, repr(value), exc) from exc

    def add_all(self, values: Iterable[Any]) -> None:
        values = [self._check(v) for v in values]
        try:
            self._cur().add_all(values)
        except (TypeError, ValueError) as exc:
            raise _unstorable(self._spec, repr(values), exc) from exc

    def update(self, values: Iterable[Any]) -> None:
        values = [self._check(v) for v in values]
        try:
            self._cur().update(values)
        except (TypeError, ValueError) as exc:
            raise _unstorable(self._spec, repr(values), exc) from exc


class _MapView(_Bound, MapState[Any, Any]):
    __slots__ = ()

    def get(self, key: Any) -> Any:
        return self._cur().get(key)[0]

    def put(self, key: Any, value: Any) -> None:
        try:
            self._cur().put(key, value)
        except (TypeError, ValueError) as exc:
            raise _unstorable(self._spec, f"the entry {key!r}: {value!r}", exc) from exc

    def put_all(self, entries: Mapping[Any, Any] | Iterable[tuple[Any, Any]]) -> None:
        state = self._cur()
        pairs = entries.items() if isinstance(entries, Mapping) else entries
        for k, v in pairs:
            try:
                state.put(k, v)
            except (TypeError, ValueError) as exc:
                raise _unstorable(self._spec, f"the entry {k!r}: {v!r}", exc) from exc

    def remove(self, key: Any) -> None:
        self._cur().delete(key)

    def contains(self, key: Any) -> bool:
        # PyFlink (process mode) answers ``get(key) is not None``: a key mapped to None is absent.
        return self._cur().get(key)[0] is not None

    def items(self) -> Iterator[tuple[Any, Any]]:
        # A snapshot: the map may be modified while iterating (PyFlink raises instead).
        return iter(list(self._cur().all()))

    def is_empty(self) -> bool:
        return bool(self._cur().is_empty())


class _ReducingView(_Bound, ReducingState[Any]):
    __slots__ = ()

    def get(self) -> Any:
        return self._cur().get()[0]

    def add(self, value: Any) -> None:
        self._cur().add(value)


class _AggregatingView(_Bound, AggregatingState[Any, Any]):
    __slots__ = ()

    def get(self) -> Any:
        return self._cur().get()[0]

    def add(self, value: Any) -> None:
        self._cur().add(value)


class _HeapReducingView(_HeapCell, ReducingState[Any]):
    __slots__ = ()

    def get(self) -> Any:
        acc = self._get()
        return None if acc is _ABSENT else acc

    def add(self, value: Any) -> None:
        acc = self._get()
        reduce = self._spec.reduce_function
        assert reduce is not None
        self._put(value if acc is _ABSENT else reduce(acc, value))


class _HeapAggregatingView(_HeapCell, AggregatingState[Any, Any]):
    __slots__ = ()

    def get(self) -> Any:
        acc = self._get()
        if acc is _ABSENT:
            return None
        agg = self._spec.aggregate_function
        assert agg is not None
        return agg.get_result(acc)

    def add(self, value: Any) -> None:
        acc = self._get()
        agg = self._spec.aggregate_function
        assert agg is not None
        self._put(agg.add(value, agg.create_accumulator() if acc is _ABSENT else acc))


_VIEWS: dict[StateKind, type[_Bound]] = {
    StateKind.VALUE: _ValueView,
    StateKind.LIST: _ListView,
    StateKind.MAP: _MapView,
    StateKind.REDUCING: _ReducingView,
    StateKind.AGGREGATING: _AggregatingView,
}

#: States without TTL of these kinds are kept as objects (``_HeapCell``).
_HEAP_VIEWS: dict[StateKind, type[_HeapCell]] = {
    StateKind.VALUE: _HeapValueView,
    StateKind.REDUCING: _HeapReducingView,
    StateKind.AGGREGATING: _HeapAggregatingView,
}


def _view_class(spec: StateSpec) -> type[_Bound]:
    if spec.ttl is None:
        heap = _HEAP_VIEWS.get(spec.kind)
        if heap is not None:
            return heap
    return _VIEWS[spec.kind]


# Namespaced views (window state): bound to the current key and ``current_namespace``. ----------


class _Namespaced(_Bound):
    """A view of state scoped to the current key and the backend's ``current_namespace`` (a
    window): re-binds when either changes. Always written through to the store (no heap cache)."""

    __slots__ = ("_bound_ns",)

    def __init__(self, backend: KeyedStateBackend, spec: StateSpec) -> None:
        super().__init__(backend, spec)
        self._bound_ns: bytes | None = None

    def _cur(self) -> Any:
        backend = self._backend
        pk, ns = backend.current_key_bytes, backend.current_namespace
        if pk is not self._bound_pk or ns != self._bound_ns:
            if pk is None:
                raise StateAccessError(f"state '{self._spec.name}' was used with no current key")
            self._state = backend.bind(self._spec, self.factory(backend.current_key_group), pk, ns)
            self._bound_pk, self._bound_ns = pk, ns
        return self._state


class _NsValueView(_Namespaced, _ValueView):
    __slots__ = ()


class _NsListView(_Namespaced, _ListView):
    __slots__ = ()


class _NsMapView(_Namespaced, _MapView):
    __slots__ = ()


class _NsReducingView(_Namespaced, _ReducingView):
    __slots__ = ()

    def get_internal(self) -> Any:
        """The stored value (for merging namespaces); None when empty."""
        return self.get()

    def update_internal(self, value: Any) -> None:
        if value is None:
            self._cur().clear()
        else:
            self._cur().write_raw(self._spec.value_codec.encode(value))


class _NsAggregatingView(_Namespaced, _AggregatingView):
    __slots__ = ()

    def get_internal(self) -> Any:
        """The accumulator (for merging namespaces); None when empty."""
        raw = self._cur().read_raw()
        return None if raw is None else self._spec.value_codec.decode(raw)

    def update_internal(self, accumulator: Any) -> None:
        if accumulator is None:
            self._cur().clear()
        else:
            self._cur().write_raw(self._spec.value_codec.encode(accumulator))


_NAMESPACED_VIEWS: dict[StateKind, type[_Namespaced]] = {
    StateKind.VALUE: _NsValueView,
    StateKind.LIST: _NsListView,
    StateKind.MAP: _NsMapView,
    StateKind.REDUCING: _NsReducingView,
    StateKind.AGGREGATING: _NsAggregatingView,
}


class KeyedStateBackend:
    """The keyed state of one operator instance.

    One KvStore per state name (``store_factory``, in-memory by default); inside it the key group
    of the current key is the ComplexKey's ``key_group``, the encoded key its ``key`` and the
    ``namespace`` is empty, except for states got with ``get_state(spec, namespaced=True)``, which
    use ``current_namespace`` (windows: the encoded window). ``get_state(spec)`` returns a view bound
    to the current key, set with ``set_current_key``. ``clock`` is the processing-time clock for TTL.

    Per-key value, reducing and aggregating states without TTL keep their values as objects (see
    ``_HeapCell``) and write them into their store on ``flush()``, which snapshots call first: read
    ``stores`` directly only after a ``flush()``.
    """

    def __init__(
        self,
        key_encoder: KeyEncoder | None = None,
        clock: Callable[[], int] | None = None,
        store_factory: Callable[[str], KvStore] | None = None,
    ) -> None:
        self.key_encoder = key_encoder or KeyEncoder()
        self.clock: Callable[[], int] = clock or system_clock
        self._store_factory = store_factory or (lambda _name: MemoryKvStore())
        #: The stores hold nothing until states write them (not so with a ``store_factory``).
        self.stores_start_empty = store_factory is None
        self.stores: dict[str, KvStore] = {}
        self._specs: dict[str, StateSpec] = {}
        self._views: dict[str, _Bound] = {}
        self._restored: dict[str, str] = {}  # state name -> signature, from restored snapshots
        self._restored_groups: set[int] = set()
        #: Called with (key bytes, key group) when a key becomes current (``set_current_key``,
        #: ``set_located_key``), before any state of it is read: an engine that holds only part of
        #: a key group's state loads that key's part (``add_entries``). None: every key is held.
        self.key_loader: Callable[[bytes, int], None] | None = None
        self.current_key: Any = None
        self.current_key_bytes: bytes | None = None
        self.current_key_group = 0
        #: The namespace of namespaced states (``get_state(spec, namespaced=True)``).
        self.current_namespace = b""

    @property
    def restored_groups(self) -> Set[int]:
        """The key groups that ``restore_key_group`` filled from a snapshot (read only): until
        there is one, stores that start empty hold nothing a state has not written."""
        return self._restored_groups

    def set_current_key(self, key: Any) -> None:
        pk, kg = self.key_encoder.locate(key)
        if self.key_loader is not None:
            self.key_loader(pk, kg)
        self.current_key = key
        self.current_key_bytes = pk
        self.current_key_group = kg

    def set_located_key(self, key: Any, key_bytes: bytes, key_group: int) -> None:
        """``set_current_key`` for a key already located (``KeyEncoder.locate``) with this
        backend's key encoder."""
        if self.key_loader is not None:
            self.key_loader(key_bytes, key_group)
        self.current_key = key
        self.current_key_bytes = key_bytes
        self.current_key_group = key_group

    def get_state(self, spec: StateSpec, namespaced: bool = False) -> Any:
        """The view of ``spec`` for the current key (the same object on every call); with
        ``namespaced``, for the current key and ``current_namespace``."""
        known = self._specs.get(spec.name)
        if known is not None:
            if known.kind is not spec.kind:
                raise StateAccessError(
                    f"The state name '{spec.name}' is already in use and not a {spec.kind.value}."
                )
            if known != spec:
                raise StateAccessError(
                    f"The state name '{spec.name}' is already in use with another definition: "
                    f"{_spec_diff(known, spec)}"
                )
            known_view = self._views[spec.name]
            if isinstance(known_view, _Namespaced) is not namespaced:
                raise StateAccessError(
                    f"The state name '{spec.name}' is already in use for "
                    f"{'per-key' if namespaced else 'per-window'} state; use another name."
                )
            return known_view
        restored = self._restored.get(spec.name)
        if restored is not None:
            _check_signature(spec.name, restored, state_signature(spec))
        self._specs[spec.name] = spec
        view_class = _NAMESPACED_VIEWS[spec.kind] if namespaced else _view_class(spec)
        view = self._views[spec.name] = view_class(self, spec)
        if spec.ttl is not None:
            for kg in self._restored_groups:  # TTL cleanup must see state restored before
                view.factory(kg)
        return view

    def store(self, name: str) -> KvStore:
        store = self.stores.get(name)
        if store is None:
            store = self.stores[name] = self._store_factory(name)
        return store

    def factory_for(self, spec: StateSpec, key_group: int) -> KeyedFactoryBase:
        store, kg, ttl, clock = self.store(spec.name), key_group_bytes(key_group), spec.ttl, self.clock
        if spec.kind is StateKind.VALUE:
            return KeyedValueStateFactory(store, kg, spec.value_codec, ttl=ttl, clock=clock)
        if spec.kind is StateKind.LIST:
            return KeyedListStateFactory(store, kg, spec.value_codec, ttl=ttl, clock=clock)
        if spec.kind is StateKind.MAP:
            assert spec.key_codec is not None
            return KeyedMapStateFactory(store, kg, spec.key_codec, spec.value_codec, ttl=ttl, clock=clock)
        if spec.kind is StateKind.REDUCING:
            assert spec.reduce_function is not None
            return KeyedReducingStateFactory(
                store, kg, spec.value_codec, spec.reduce_function, ttl=ttl, clock=clock
            )
        assert spec.aggregate_function is not None
        return KeyedAggregatingStateFactory(
            store, kg, spec.value_codec, spec.aggregate_function, ttl=ttl, clock=clock
        )

    @staticmethod
    def bind(spec: StateSpec, factory: Any, primary_key: bytes, ns: bytes = b"") -> Any:
        if spec.kind is StateKind.VALUE:
            return factory.new_keyed_value(primary_key, ns)
        if spec.kind is StateKind.LIST:
            return factory.new_keyed_list(primary_key, ns)
        if spec.kind is StateKind.MAP:
            from fs_api_advanced import KeyedMapState

            return KeyedMapState(factory, primary_key, ns)
        if spec.kind is StateKind.REDUCING:
            return factory.new_reducing_state(primary_key, ns)
        return factory.new_aggregating_state(primary_key, ns)

    def flush(self) -> None:
        """Write the values that states keep as objects (those without TTL) into the stores, so
        that ``stores`` holds all the state. Snapshots do this first."""
        for view in self._views.values():
            if isinstance(view, _HeapCell):
                view.flush()

    def purge_expired(self) -> None:
        """Drop every expired TTL entry now (cleanup when state is snapshotted)."""
        purged: set[int] = set()
        for view in self._views.values():
            for factory in view._factories.values():
                queue = id(factory.ttl_cleanup_queue)  # shared by the factories of one state
                if queue not in purged:
                    purged.add(queue)
                    factory.purge_expired()

    @property
    def specs(self) -> Mapping[str, StateSpec]:
        return self._specs

    # Snapshots: where state leaves the process (a Spark state store, a checkpoint). ----------

    def key_group_entries(self, key_group: int) -> dict[str, list[StateEntry]]:
        """Every entry of ``key_group`` held here, by state name: ``(key bytes, namespace, user
        key, value)``. Expired TTL entries are dropped first when the state asks for cleanup on
        full snapshots."""
        self.flush()
        if any(spec.ttl is not None and spec.ttl.cleanup_full_snapshot for spec in self._specs.values()):
            self.purge_expired()
        kgb = key_group_bytes(key_group)
        stores: dict[str, list[StateEntry]] = {}
        for name, store in self.stores.items():
            entries = _memory(store, name).complex_entries(kgb)
            if entries:
                stores[name] = entries
        return stores

    def keys_holding(self, name: str) -> list[Any]:
        """The keys (decoded with ``key_encoder``) holding an entry of the state ``name``, in every
        key group held here, each once, in the store's order; none when no key holds it. Values
        that states keep as objects count (``flush`` first), keys whose state was cleared do not.

        >>> from fs_api_advanced import PickleCodec
        >>> from fs_compat.runtime import StateKind, StateSpec
        >>> backend = KeyedStateBackend()
        >>> spec = StateSpec("seen", StateKind.VALUE, PickleCodec())
        >>> for key in ("b", "a", "c"):
        ...     backend.set_current_key(key)
        ...     backend.get_state(spec).update(1)
        >>> backend.get_state(spec).clear()  # c's
        >>> sorted(backend.keys_holding("seen")), backend.keys_holding("other")
        (['a', 'b'], [])
        """
        self.flush()
        store = self.stores.get(name)
        if store is None:
            return []
        held = dict.fromkeys(ck.key for ck, _value in _memory(store, name).complex_items())
        return [self.key_encoder.decode(key) for key in held]

    def signatures(self, names: Iterable[str]) -> dict[str, str]:
        """The definition (``state_signature``) of each state of ``names``: declared here, else
        as restored."""
        found = {}
        for name in names:
            spec = self._specs.get(name)
            signature = state_signature(spec) if spec is not None else self._restored.get(name)
            if signature is not None:
                found[name] = signature
        return found

    def snapshot_key_group(self, key_group: int) -> bytes:
        """The state of every key of ``key_group``, of every state, as bytes for
        ``restore_key_group`` (``key_group_entries`` and their states' signatures)."""
        return self.pack_entries(self.key_group_entries(key_group))

    def pack_entries(self, stores: Mapping[str, list[StateEntry]]) -> bytes:
        """A key group's entries (``key_group_entries``) as ``snapshot_key_group`` gives them."""
        return stable_pickle((_SNAPSHOT_VERSION, self.signatures(stores), dict(stores)))

    def restore_key_group(self, key_group: int, data: bytes | None) -> None:
        """Replace the state of ``key_group`` with a snapshot (``None``: no state). A state whose
        definition changed since the snapshot (another kind or codec under the same name) is a
        StateAccessError naming the state and both types, raised before anything is replaced."""
        stores: dict[str, list[StateEntry]] = {}
        signatures: dict[str, str] = {}
        if data is not None:
            try:
                version, signatures, stores = pickle.loads(data)
            except Exception as exc:
                raise StateAccessError(
                    f"cannot restore key group {key_group}: the snapshot is corrupt "
                    f"({type(exc).__name__}: {exc})"
                ) from exc
            if version != _SNAPSHOT_VERSION:
                raise StateAccessError(snapshot_format_error(key_group, version))
        self._check_signatures(signatures)
        self.flush()  # the store holds every key's value; the caches are dropped below
        kgb = key_group_bytes(key_group)
        for name, store in self.stores.items():
            memory = _memory(store, name)
            for ck, _ in memory.complex_items(kgb):
                memory.delete(ck)
        self._put_entries(kgb, stores)
        self._restored.update(signatures)
        self._restored_groups.add(key_group)
        for name, view in self._views.items():
            factory = view._factories.get(key_group)
            if factory is not None:
                self.track_restored(self._specs[name], factory)
            elif self._specs[name].ttl is not None:
                view.factory(key_group)  # so that TTL cleanup sees the restored entries
            view._bound_pk = None
            if isinstance(view, _HeapCell):
                view.forget()
                view.prime(stores.get(name, ()))

    def add_entries(
        self, key_group: int, signatures: Mapping[str, str], stores: Mapping[str, list[StateEntry]]
    ) -> None:
        """Add entries (``key_group_entries``' form) of keys this backend does not hold yet to
        ``key_group``, keeping the others: how an engine that holds part of a key group loads
        more of it (``key_loader``). ``signatures`` are the stored states' definitions, checked
        as ``restore_key_group`` does. The keys must not have been current since the group was
        last restored (nothing about them is cached)."""
        self._check_signatures(signatures)
        kgb = key_group_bytes(key_group)
        self._put_entries(kgb, stores)
        self._restored.update(signatures)
        self._restored_groups.add(key_group)
        for name, entries in stores.items():
            spec, view = self._specs.get(name), self._views.get(name)
            if isinstance(view, _HeapCell):
                view.prime(entries)
            if spec is None or view is None or spec.ttl is None:
                continue
            factory = view.factory(key_group)
            for key, ns in {(e[0], e[1]) for e in entries}:
                factory.track_ttl(key, ns)

    def _check_signatures(self, signatures: Mapping[str, str]) -> None:
        for name, old in signatures.items():
            spec = self._specs.get(name)
            if spec is not None:
                _check_signature(name, old, state_signature(spec))

    def _put_entries(self, kgb: bytes, stores: Mapping[str, list[StateEntry]]) -> None:
        for name, entries in stores.items():
            store = self.store(name)
            if isinstance(store, MemoryKvStore):
                store.put_entries(kgb, entries)  # in bulk: no ComplexKey each
                continue
            for key, ns, uk, value in entries:
                store.put(ComplexKey(kgb, key, ns, uk), value)

    def holds_ttl_state(self) -> bool:
        """Whether a state with TTL holds entries (restored ones included, even of a state not
        declared again yet): time passing alone may expire some of them."""
        for name, store in self.stores.items():
            spec = self._specs.get(name)
            ttl = spec.ttl is not None if spec is not None else " with TTL" in self._restored.get(name, "")
            if ttl and len(_memory(store, name)):
                return True
        return False

    def track_restored(self, spec: StateSpec, factory: KeyedFactoryBase) -> None:
        """Let TTL cleanup find the entries of ``factory``'s key group that came from a snapshot."""
        if spec.ttl is None or spec.name not in self.stores:
            return
        seen: set[tuple[bytes, bytes]] = set()
        for ck, _ in _memory(self.stores[spec.name], spec.name).complex_items(factory.key_group):
            if (ck.key, ck.namespace) not in seen:
                seen.add((ck.key, ck.namespace))
                factory.track_ttl(ck.key, ck.namespace)


#: The format of ``snapshot_key_group``'s bytes. 2: keys are in Flink's key groups
#: (``runtime.flink_key_group``); 1 placed them by the crc32 of their bytes.
_SNAPSHOT_VERSION = 2


def snapshot_format_error(key_group: int, version: object) -> str:
    """Why key group ``key_group``'s snapshot of format ``version`` cannot be restored."""
    why = (
        ": it was written by an fs-compat that put keys in other key groups (by crc32; now as "
        "Flink does), so its keys would not be found. Start the job from a new checkpoint "
        "location (fs_compat.spark.read_state still reads the old one)"
        if version == 1
        else ""
    )
    expected = f"expected {_SNAPSHOT_VERSION}"
    return f"cannot restore key group {key_group}: snapshot format {version!r}, {expected}{why}"


def stable_pickle(value: Any) -> bytes:
    """``pickle.dumps`` without pickle's memo, so that equal values give equal bytes: a snapshot
    of state restored from a snapshot equals that snapshot (with the memo, objects shared or not
    by identity change the bytes). For values without cycles: tuples, lists, dicts, bytes, str."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.fast = True  # no memo
    pickler.dump(value)
    return buffer.getvalue()


def state_signature(spec: StateSpec) -> str:
    """What must not change between a snapshot and the state that restores it: the kind, the
    codecs (their bytes) and whether entries carry TTL timestamps."""
    sig = f"{spec.kind.value} of {spec.value_codec!r}"
    if spec.key_codec is not None:
        sig += f" keyed by {spec.key_codec!r}"
    if spec.ttl is not None:
        sig += " with TTL"
    return sig


def _check_signature(name: str, old: str, new: str) -> None:
    if old != new:
        raise StateAccessError(
            f"state '{name}' was saved as {old} and is now declared as {new}; "
            "restore it with the original descriptor (or under a new state name)"
        )


def _memory(store: KvStore, name: str) -> MemoryKvStore:
    if not isinstance(store, MemoryKvStore):
        raise NotImplementedError(
            f"state '{name}': snapshots need the in-memory store, got {type(store).__name__}"
        )
    return store


def _spec_diff(old: StateSpec, new: StateSpec) -> str:
    diffs = []
    for field in ("value_codec", "key_codec", "ttl"):
        a, b = getattr(old, field), getattr(new, field)
        if a != b:
            diffs.append(f"{field} {a!r} != {b!r}")
    return "; ".join(diffs) or "the functions differ"
