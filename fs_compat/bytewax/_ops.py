"""The runtime operators behind the Bytewax core operators.

Every Bytewax step becomes a :class:`fs_compat.runtime.Operator`; the keyed stateful primitive
(``stateful_batch``) is :class:`StatefulBatchOperator`, one keyed operator that keeps each key's
logic, drives ``on_batch`` / ``on_notify`` / ``on_eof``, arms the runtime's processing-time timers
for ``notify_at`` and persists each touched key's ``snapshot()`` into a keyed ValueState.

Besides the per-record ``Operator`` methods (what any runtime target calls: the Spark adapter
calls ``process`` per item, ``on_timer`` per due notification, ``on_checkpoint`` before it saves
state, ``end_input`` at the end of bounded input), the operators implement the runtime's batch
hooks (``process_batch``, ``process_keyed``, ``on_activation``), which the runtime's batched
schedule calls under the in-process Bytewax runner, and offer what that runner needs for epochs
(``snapshot_touched``, ``restore``).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, NoReturn

import attrs

from fs_api_advanced import PickleCodec
from fs_compat.runtime import (
    KeyedStateBackend,
    Operator,
    OperatorRuntime,
    SideOutput,
    StateKind,
    StateSpec,
    ValueState,
)

from .errors import BytewaxRuntimeError

#: The epoch being processed (set by the runner; ``inspect_debug`` shows it).
EPOCH: contextvars.ContextVar[int] = contextvars.ContextVar("bytewax_epoch", default=1)

#: Each key's logic snapshot, wrapped in a 1-tuple so a ``None`` snapshot is kept too.
SNAPSHOT_SPEC = StateSpec("bytewax_logic_snapshot", StateKind.VALUE, PickleCodec())


def type_name(value: Any) -> str:
    return type(value).__name__


def user_error(what: str, exc: BaseException) -> BytewaxRuntimeError:
    """A BytewaxRuntimeError for a failure in user code, naming where it happened."""
    return BytewaxRuntimeError(f"{what}: {type(exc).__name__}: {exc}")


@attrs.frozen
class PerItem:
    """What a ``flat_map_batch`` mapper does to each item of a batch: ``mapper(xs)`` gives the
    items of ``fn(x)`` for each ``x`` in order, or, with ``one``, ``fn(x)`` itself (Bytewax's
    ``flat_map`` and ``map`` are such mappers). The operator then handles one item without
    building a batch around it (``one``: it is one-to-one)."""

    fn: Callable[[Any], Any]
    one: bool


@attrs.frozen
class ItemMapper:
    """What a ``stateful_batch`` builder's logics do to each value (Bytewax's ``stateful_flat_map``
    and ``stateful_map``): ``mapper(state or None, value)`` returns ``(state, emit)``; a None
    state discards the logic; ``emit`` is the one value to emit (``one``) or an iterable of them.
    A result that is not a pair fails with ``not_pair(result)`` (a TypeError), chained to the
    unpacking error. The builder makes :func:`stateful`'s adapters (``logic.logic``) around
    logics that keep the key's state in ``state``, so the operator maps values with no logic
    call at all and the logics' other methods (``snapshot``, ``on_eof``) see the same state."""

    mapper: Callable[[Any, Any], Any]
    one: bool
    not_pair: Callable[[Any], TypeError]


_PER_ITEM = "_fs_compat_per_item"


def mark(fn: Any, how: PerItem | ItemMapper) -> None:
    """Say what ``fn`` (a ``flat_map_batch`` mapper or a ``stateful_batch`` builder) does per item."""
    setattr(fn, _PER_ITEM, how)


def marked(fn: Any) -> Any:
    """What :func:`mark` said ``fn`` does per item, or None."""
    return getattr(fn, _PER_ITEM, None)


class FlatMapBatchOperator(Operator):
    """``flat_map_batch``: the mapper gets each batch and returns the items to emit. A mapper
    :func:`mark`-ed with a :class:`PerItem` handles single items (``process``) without a batch
    around them, and a one-to-one one is the operator's ``one_to_one``."""

    def __init__(self, step_id: str, mapper: Callable[[list[Any]], Iterable[Any]]) -> None:
        self.step_id = step_id
        self.mapper = mapper
        each = marked(mapper)
        #: A :class:`PerItem`'s ``fn``, or None: ``process`` makes a batch of the item.
        self._each: Callable[[Any], Any] | None = each.fn if isinstance(each, PerItem) else None
        if isinstance(each, PerItem) and each.one:
            self.one_to_one = each.fn
            self.one_to_one_error = self._map_error

    def process_batch(self, values: list[Any], runtime: OperatorRuntime) -> list[Any]:
        try:
            out = self.mapper(values)
            try:
                it = iter(out)
            except TypeError as exc:
                raise TypeError(f"mapper must return an iterable; got a `{type_name(out)}` instead") from exc
            return list(it)
        except Exception as exc:
            raise self._map_error(exc)  # noqa: B904 - it sets the cause

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        if self._each is None:
            return self.process_batch([value], runtime)
        if self.one_to_one is not None:
            return (self._one(value),)
        try:  # ``process_batch`` of one item, as ``list(chain.from_iterable(...))`` would fail
            return list(self._each(value))
        except Exception as exc:
            raise self._map_error(exc)  # noqa: B904 - it sets the cause

    def _one(self, value: Any) -> Any:
        """``process_batch([value])[0]`` of a one-to-one mapper."""
        each = self._each
        assert each is not None
        try:
            return each(value)
        except Exception as exc:
            raise self._map_error(exc)  # noqa: B904 - it sets the cause

    def _failed(self, exc: Exception) -> BytewaxRuntimeError:
        return user_error(f"error calling `mapper` in step {self.step_id}", exc)

    def _map_error(self, exc: Exception) -> Exception:
        """What the step raises when the mapper raised ``exc`` (``raise``: it sets the cause):
        a BytewaxRuntimeError as it is, anything else ``_failed``; ``one_to_one_error`` too."""
        if isinstance(exc, BytewaxRuntimeError):
            return exc
        error = self._failed(exc)
        error.__cause__ = exc
        return error


class BranchOperator(Operator):
    """``branch``: items for which the predicate is True go to the main output, the others to the
    ``falses`` side output."""

    FALSES = "falses"

    def __init__(self, step_id: str, predicate: Callable[[Any], bool]) -> None:
        self.step_id = step_id
        self.predicate = predicate

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        try:
            keep = self.predicate(value)
        except Exception as exc:
            raise user_error(f"error calling predicate in step {self.step_id}", exc) from exc
        if not isinstance(keep, bool):
            # As Bytewax: the runtime's error, caused by the failed conversion.
            cause = TypeError(f"'{type_name(keep)}' object cannot be converted to 'bool'")
            raise BytewaxRuntimeError(
                f"return value of `predicate` in step {self.step_id} must be a `bool`; "
                f"got a `{type_name(keep)}` instead"
            ) from cause
        return (value,) if keep else (SideOutput(self.FALSES, value),)


class PassThroughOperator(Operator):
    """``merge`` and ``redistribute``: items pass unchanged."""

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        return (value,)


class InspectDebugOperator(Operator):
    """``inspect_debug``: calls the inspector with step id, item, epoch and worker index."""

    def __init__(self, step_id: str, inspector: Callable[[str, Any, int, int], None]) -> None:
        self.step_id = step_id
        self.inspector = inspector

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        try:
            self.inspector(self.step_id, value, EPOCH.get(), runtime.task.subtask_index)
        except Exception as exc:
            raise user_error(f"error calling inspector in step {self.step_id}", exc) from exc
        return (value,)


def key_route(step_id: str) -> Callable[[Any], str]:
    """The key selector of a stateful step's input edge: checks Bytewax's ``(str, value)`` shape.
    A function rather than a class's ``__call__``: it runs per item (measured ~80 ns less)."""

    def route(item: Any) -> str:
        if (item.__class__ is not tuple and not isinstance(item, tuple)) or len(item) != 2:
            raise TypeError(
                f"step {step_id} requires `(key, value)` 2-tuple from upstream for routing; "
                f"got a `{type_name(item)}` instead"
            )
        key = item[0]
        if key.__class__ is not str and not isinstance(key, str):
            raise TypeError(
                f"step {step_id} requires `str` keys in `(key, value)` from upstream; "
                f"got a `{type_name(key)}` instead"
            )
        return key

    return route


def _to_ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


@attrs.frozen
class MsClock:
    """A Bytewax ``now_getter`` as the runtime's clock (epoch ms); it pickles (to Spark's
    workers) when ``now_getter`` does."""

    now_getter: Callable[[], datetime]

    def __call__(self) -> int:
        return _to_ms(self.now_getter())


class StatefulBatchOperator(Operator):
    """The one keyed stateful primitive (``stateful_batch``).

    ``builder(resume_state)`` makes a key's logic (``resume_state`` is None for a new key, else
    the key's last snapshot); each activation calls ``on_batch`` per key in sorted key order,
    then ``on_notify`` for keys whose notification is due, and ``on_eof`` for every key at the
    end of input. A logic that returns DISCARD is dropped with its notification.

    Each key's ``snapshot()`` goes into a keyed ValueState: at epoch ends (the Bytewax runner,
    ``epoch_driven``) or when the engine checkpoints (``on_checkpoint``). An engine that restores
    that state (Spark streaming, after a restart) gets each key's logic rebuilt from it with
    ``builder(snapshot)`` when the key is next used, with its ``notify_at`` as the notification
    the restored timers hold.
    """

    keyed_state_by_current_key = True

    #: ``on_checkpoint`` snapshots only the keys touched since the last checkpoint.
    idle_checkpoint_is_noop = True

    def __init__(self, step_id: str, builder: Callable[[Any], Any], logic_type: type) -> None:
        self.step_id = step_id
        self.builder = builder
        self.logic_type = logic_type
        self.logics: dict[str, Any] = {}
        self.sched: dict[str, int] = {}
        self.touched: set[str] = set()
        #: Set by a runner that snapshots at epoch ends; otherwise snapshots are taken when the
        #: engine checkpoints (``on_checkpoint``).
        self.epoch_driven = False
        self.state: ValueState[Any] | None = None
        #: While ``on_notify`` runs outside the Bytewax runner: the earliest time (ms) a
        #: notification it re-arms may fire, so a logic re-arming a past time waits for the next
        #: activation instead of firing again at once, forever.
        self._floor: int | None = None
        #: The builder's :class:`ItemMapper` (``stateful_map`` / ``stateful_flat_map``): values
        #: are mapped by ``_apply`` without the logic layers; a one-to-one one is ``one_to_one``.
        self.item: ItemMapper | None = None
        item = marked(builder)
        if isinstance(item, ItemMapper):
            self.item, self._mapper = item, item.mapper
            if item.one:
                self.one_to_one = self._apply
        self._runtime: OperatorRuntime | None = None
        #: The runtime's keyed state backend (``_apply`` reads the current key from it).
        self._backend: KeyedStateBackend | None = None

    # Runtime hooks. ---------------------------------------------------------------------------
    def open(self, runtime: OperatorRuntime) -> None:
        self.state = runtime.get_state(SNAPSHOT_SPEC)
        self._runtime, self._backend = runtime, runtime.backend

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        assert runtime.backend is not None
        key = runtime.backend.current_key  # the runtime set the key
        if self.item is not None:
            outs = self._items(runtime, key, (value[1],))
        else:
            outs = self._batch(runtime, key, [value[1]])
        if len(runtime.processing_timers):
            outs += self.fire_due(runtime)
        return outs

    def on_timer(self, timestamp: int, runtime: OperatorRuntime) -> Iterable[Any]:
        key = runtime.current_key
        if key not in self.logics:
            self._resume(runtime, key)
        if self.sched.get(key) == timestamp:
            return self._notify(runtime, key)
        return []

    def on_checkpoint(self, checkpoint_id: int, runtime: OperatorRuntime) -> Iterable[Any]:
        if not self.epoch_driven:
            self.snapshot_touched(runtime)
        return ()

    def end_input(self, runtime: OperatorRuntime) -> Iterable[Any]:
        outs = self.fire_due(runtime)
        self._resume_restored(runtime)
        for key in sorted(self.logics):
            logic = self.logics.get(key)
            if logic is None:
                continue
            self._set_key(runtime, key)
            outs += self._after(runtime, key, logic, self._call(logic.on_eof, "on_eof", key), "on_eof")
        return outs

    def _resume_restored(self, runtime: OperatorRuntime) -> None:
        """Rebuild the logic of every key whose snapshot the engine restored and this instance
        has not used since (Spark streaming restores a key group's state into a new instance):
        at EOF each key gets ``on_eof``, as in Bytewax. Nothing to do where nothing was restored."""
        backend = runtime.backend
        if backend is None or not backend.restored_groups:
            return
        for key in backend.keys_holding(SNAPSHOT_SPEC.name):  # discarded keys hold none
            if key not in self.logics:
                self._set_key(runtime, key)
                self._resume(runtime, key)

    # Batch hooks (the runtime's batched schedule, which the Bytewax runner drives). ------------
    def process_keyed(self, groups: Sequence[tuple[Any, list[Any]]], runtime: OperatorRuntime) -> list[Any]:
        """One activation: ``groups`` are ``(key, values in arrival order)``, sorted by key."""
        outs: list[Any] = []
        for key, values in groups:
            outs += self._on_batch(runtime, key, [v[1] for v in values])
        outs += self.fire_due(runtime)
        return outs

    def on_activation(self, runtime: OperatorRuntime) -> list[Any]:
        """A batch boundary: the notifications due by now (``fire_due``)."""
        return self.fire_due(runtime)

    def fire_due(self, runtime: OperatorRuntime) -> list[Any]:
        """``on_notify`` for every key whose notification time has passed, in key order."""
        now = runtime.clock()
        fired = list(runtime.processing_timers.pop_due(now))
        for _ts, _kb, key in fired:
            if key not in self.logics:
                self._set_key(runtime, key)
                self._resume(runtime, key)
        due = sorted(key for ts, _kb, key in fired if self.sched.get(key) == ts)
        outs: list[Any] = []
        for key in due:
            outs += self._notify(runtime, key)
        return outs

    def snapshot_touched(self, runtime: OperatorRuntime) -> list[tuple[str, Any, bool]]:
        """Write each key touched since the last call into the keyed ValueState and return
        ``(key, snapshot, present)`` (``present`` False: the logic was discarded)."""
        assert self.state is not None
        result: list[tuple[str, Any, bool]] = []
        for key in sorted(self.touched):
            self._set_key(runtime, key)
            logic = self.logics.get(key)
            if logic is None:
                self.state.clear()
                result.append((key, None, False))
            else:
                snap = self._call(logic.snapshot, "snapshot", key)
                self.state.update((snap,))
                result.append((key, snap, True))
        self.touched.clear()
        return result

    def restore(self, runtime: OperatorRuntime, snapshots: dict[str, Any]) -> None:
        """Resume: rebuild each key's logic from its snapshot (``builder(resume_state)``)."""
        assert self.state is not None
        for key in sorted(snapshots):
            self._set_key(runtime, key)
            self.state.update((snapshots[key],))
            logic = self._build(key, snapshots[key])
            self.logics[key] = logic
            self._schedule(runtime, key, logic)

    # Internals. -------------------------------------------------------------------------------
    @staticmethod
    def _set_key(runtime: OperatorRuntime, key: str) -> None:
        assert runtime.backend is not None
        runtime.backend.set_current_key(key)

    def _call(self, fn: Callable[..., Any], what: str, key: str, *args: Any) -> Any:
        try:
            return fn(*args)
        except BytewaxRuntimeError:
            raise
        except Exception as exc:
            raise self._call_failed(what, key, exc) from exc

    def _call_failed(self, what: str, key: str, exc: Exception) -> BytewaxRuntimeError:
        return user_error(
            f"error calling `StatefulBatchLogic.{what}` in step {self.step_id} for key {key!r}", exc
        )

    def _build(self, key: str, resume_state: Any) -> Any:
        logic = self._call(self.builder, "builder", key, resume_state)
        if not isinstance(logic, self.logic_type):
            raise TypeError(
                f"`builder` in step {self.step_id} must return a `StatefulBatchLogic`; "
                f"got a `{type_name(logic)}` instead"
            )
        return logic

    def _logic(self, runtime: OperatorRuntime, key: str) -> Any:
        logic = self.logics.get(key)
        if logic is None:
            logic = self._resume(runtime, key)
        if logic is None:
            logic = self._build(key, None)
            self.logics[key] = logic
        return logic

    def _resume(self, runtime: OperatorRuntime, key: str) -> Any:
        """The current key's logic rebuilt from its stored snapshot (state the engine restored),
        or None when there is none; its ``notify_at`` is scheduled (the engine's restored timers
        usually hold it already; one they hold for another time is ignored when it fires)."""
        assert self.state is not None
        stored = self.state.value()
        if stored is None:
            return None
        logic = self._build(key, stored[0])
        self.logics[key] = logic
        self.sched.pop(key, None)
        self._schedule(runtime, key, logic)
        return logic

    def _on_batch(self, runtime: OperatorRuntime, key: str, values: list[Any]) -> list[Any]:
        self._set_key(runtime, key)
        if self.item is not None:
            return self._items(runtime, key, values)
        return self._batch(runtime, key, values)

    def _items(self, runtime: OperatorRuntime, key: str, values: Sequence[Any]) -> list[Any]:
        """``_batch`` of an :class:`ItemMapper`'s logic: each value in turn (``_apply``)."""
        assert self.item is not None
        if self.item.one:
            return [self._apply((key, value)) for value in values]
        outs: list[Any] = []
        for value in values:
            emit = self._apply((key, value))[1]
            try:  # as the logic's ``on_batch`` collects the emitted values
                outs += [(key, w) for w in emit]
            except BytewaxRuntimeError:
                raise
            except Exception as exc:
                raise self._call_failed("on_batch", key, exc) from exc
        return outs

    def _apply(self, value: Any) -> tuple[str, Any]:
        """One ``(key, value)`` of the current key through its :class:`ItemMapper` logic, as its
        ``on_batch`` handles it, with the same errors: the state is kept, or the logic
        discarded. Returns ``(key, emit)``: for a one-to-one mapper, ``process``'s one output
        (it is ``one_to_one``)."""
        backend = self._backend
        assert backend is not None
        key = backend.current_key  # the runtime set the key
        logic = self.logics.get(key)
        if logic is None:
            assert self._runtime is not None
            logic = self._logic(self._runtime, key)
        held = logic.logic
        try:
            res = self._mapper(held.state, value[1])
        except BytewaxRuntimeError:
            raise
        except Exception as exc:
            raise self._call_failed("on_batch", key, exc) from exc
        try:
            state, emit = res
        except Exception as exc:
            self._not_pair(key, res, exc)
        self.touched.add(key)
        if state is None:
            assert self._runtime is not None
            self._discard(self._runtime, key)
        else:
            held.state = state
        return (key, emit)

    def _not_pair(self, key: str, res: Any, exc: Exception) -> NoReturn:
        """Unpacking the mapper's result ``res`` raised ``exc``: fail as the logic does."""
        assert self.item is not None
        try:
            if isinstance(exc, (TypeError, ValueError)):
                raise self.item.not_pair(res) from exc
            raise exc
        except BytewaxRuntimeError:
            raise
        except Exception as failed:
            raise self._call_failed("on_batch", key, failed) from failed

    def _batch(self, runtime: OperatorRuntime, key: str, values: list[Any]) -> list[Any]:
        """``on_batch`` of the current key's logic (``key``) with ``values``."""
        logic = self.logics.get(key)
        if logic is None:
            logic = self._logic(runtime, key)
        try:  # ``_call``, inlined: this runs per key and activation
            result = logic.on_batch(values)
        except BytewaxRuntimeError:
            raise
        except Exception as exc:
            raise self._call_failed("on_batch", key, exc) from exc
        return self._after(runtime, key, logic, result, "on_batch")

    def _notify(self, runtime: OperatorRuntime, key: str) -> list[Any]:
        self.sched.pop(key, None)
        logic = self.logics.get(key)
        if logic is None:
            return []
        self._set_key(runtime, key)
        if not self.epoch_driven:
            self._floor = runtime.clock() + 1
        try:
            result = self._call(logic.on_notify, "on_notify", key)
            return self._after(runtime, key, logic, result, "on_notify")
        finally:
            self._floor = None

    def _after(self, runtime: OperatorRuntime, key: str, logic: Any, result: Any, what: str) -> list[Any]:
        if not isinstance(result, tuple) or len(result) != 2:
            self._bad_result(key, what, result)
        emit, discard = result
        if not isinstance(emit, (list, tuple)) or not isinstance(discard, bool):
            self._bad_result(key, what, result)
        self.touched.add(key)
        if discard:
            self._discard(runtime, key)
        else:
            self._schedule(runtime, key, logic)
        return [(key, w) for w in emit]

    def _discard(self, runtime: OperatorRuntime, key: str) -> None:
        self.logics.pop(key, None)
        self._unschedule(runtime, key)
        assert self.state is not None
        self.state.clear()  # a later value of this key starts from ``builder(None)``

    def _bad_result(self, key: str, what: str, result: Any) -> NoReturn:
        where = f"`StatefulBatchLogic.{what}` in step {self.step_id} for key {key!r}"
        if not isinstance(result, tuple) or len(result) != 2:
            exc = TypeError(
                f"{where} did not return a 2-tuple of `(emit, is_complete)`; "
                f"got a `{type_name(result)}` instead"
            )
        elif not isinstance(result[0], (list, tuple)):
            exc = TypeError(f"`emit` was not a `list`; got a `{type_name(result[0])}` instead")
        else:
            exc = TypeError(f"`is_complete` was not a `bool`; got a `{type_name(result[1])}` instead")
        raise user_error(f"error extracting `(emit, is_complete)` from {where}", exc) from exc

    def _unschedule(self, runtime: OperatorRuntime, key: str) -> None:
        old = self.sched.pop(key, None)
        if old is not None:
            runtime.timer_service.delete_processing_time_timer(old)

    def _schedule(self, runtime: OperatorRuntime, key: str, logic: Any) -> None:
        try:  # ``_call``, inlined: this runs per key and activation
            at = logic.notify_at()
        except BytewaxRuntimeError:
            raise
        except Exception as exc:
            raise self._call_failed("notify_at", key, exc) from exc
        if at is not None and not isinstance(at, datetime):
            wrong = TypeError(
                f"`StatefulBatchLogic.notify_at` in step {self.step_id} for key {key!r} "
                f"did not return a `datetime`; got a `{type_name(at)}` instead"
            )
            raise user_error(
                f"error calling `StatefulBatchLogic.notify_at` in step {self.step_id}", wrong
            ) from wrong
        new = None if at is None else _to_ms(at)
        if new is not None and self._floor is not None and new < self._floor:
            new = self._floor
        old = self.sched.get(key)
        if old == new:
            return
        self._unschedule(runtime, key)
        if new is not None:
            self.sched[key] = new
            runtime.timer_service.register_processing_time_timer(new)
