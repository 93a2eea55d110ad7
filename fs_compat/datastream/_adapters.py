"""Adapters from PyFlink functions to the runtime's one Operator interface."""

from __future__ import annotations

import functools
import pickle
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

import cloudpickle

from fs_api_advanced import PickleCodec
from fs_compat.common.internal import DeclaredTypeError, conformer
from fs_compat.runtime import (
    MAX_TIMESTAMP,
    Operator,
    OperatorRuntime,
    SideOutput,
    StateKind,
    StateSpec,
    unpicklable_message,
)

from ._functions import BroadcastStates, Function, RuntimeContext, _Ctx
from .output_tag import OutputTag

Handler = Callable[[Any, Any, _Ctx, int], Any]
F = TypeVar("F")


def copy_function(fn: Any, what: str) -> Any:
    """A fresh copy of a user function for one subtask (Flink deserializes one per task);
    fails early and clearly when the function cannot be pickled.

    Plain pickle first: it copies the function's state but refers to module-level classes and
    functions by name, so in this process they keep sharing their module's globals even after a
    Spark run registered the module to travel by value (``ship_user_code``). cloudpickle for
    the rest (lambdas, local classes)."""
    return _pickled(fn, what)[2]


class FunctionTemplate(Generic[F]):
    """A step's user function (or tuple of them) as the step keeps it: a private copy taken
    when the step is built (``copy_function``), from which ``copy()`` gives each subtask its own
    (Flink deserializes one per task). The template is pickled once per process, on the first
    ``copy()``, and each copy unpickles those bytes: a key-group pass on Spark makes one
    operator instance per key group it restores (``bench/state_scale.py``'s small micro-batch:
    ~64 per task), and pickling again for each is what a copy costs most.

    >>> template = FunctionTemplate({"seen": 0}, "step 'counts'")
    >>> first, second = template.copy(), template.copy()
    >>> first["seen"] = 1
    >>> second, template.copy()
    ({'seen': 0}, {'seen': 0})
    """

    __slots__ = ("_blob", "_loads", "fn", "what")

    def __init__(self, fn: F, what: str) -> None:
        self.fn: F = copy_function(fn, what)
        self.what = what
        self._blob: bytes | None = None
        self._loads: Callable[[bytes], Any] = pickle.loads

    def copy(self) -> F:
        """A fresh copy of the template."""
        copied: F
        if self._blob is None:  # the first copy is the one that showed the bytes unpickle
            self._blob, self._loads, copied = _pickled(self.fn, self.what)
        else:
            copied = self._loads(self._blob)
        return copied

    def __getstate__(self) -> tuple[F, str]:
        return (self.fn, self.what)  # not the bytes: they are pickled where they are used

    def __setstate__(self, state: tuple[F, str]) -> None:
        self.fn, self.what = state
        self._blob, self._loads = None, pickle.loads


def _pickled(fn: Any, what: str) -> tuple[bytes, Callable[[bytes], Any], Any]:
    """``fn`` pickled as ``copy_function`` copies it, the function that unpickles it, and a
    copy (which shows that it unpickles)."""
    try:
        blob = pickle.dumps(fn, protocol=5)
        return blob, pickle.loads, pickle.loads(blob)
    except Exception:
        pass
    try:
        blob = cloudpickle.dumps(fn)
        return blob, cloudpickle.loads, cloudpickle.loads(blob)
    except Exception as exc:
        raise TypeError(unpicklable_message(f"{what}: the function", fn, cloudpickle.dumps)) from exc


def h_map(fn: Any, v: Any, ctx: _Ctx, i: int) -> Any:
    """A MapFunction's handler: one output per element."""
    return (fn.map(v),)


def outputs(
    result: Any, side_outputs: bool, conform: Callable[[Any], Any] | None, shape: type | None = None
) -> Iterable[Any]:
    """The outputs of a user function's call (``result``: an iterable, or None for none): with
    ``side_outputs``, each ``(OutputTag, value)`` pair as a SideOutput of the tag's type; every
    other output checked by ``conform``, but one of class ``shape``, which ``conform`` hands back
    as it is. One loop (a process function's outputs: ``bench/w1.py``'s ``*-process`` shapes)."""
    if result is None:
        return ()
    if not side_outputs:
        if conform is None:
            return result  # type: ignore[no-any-return]
        return [o if o.__class__ is shape else conform(o) for o in result]
    outs = []
    for o in result:
        cls = o.__class__
        if cls is tuple and len(o) == 2 and isinstance(o[0], OutputTag):
            outs.append(side_output(o[0], o[1]))
        elif cls is shape or conform is None:
            outs.append(o)
        else:
            outs.append(conform(o))
    return outs


def side_output(tag: OutputTag[Any], value: Any) -> SideOutput:
    """``value`` sent to side output ``tag``, checked against the tag's type (FLOATs rounded to
    32 bits) as PyFlink serializes it with that type: a value that does not fit fails the step,
    naming the side output."""
    conform = _tag_conformer(tag.type_info)
    if conform is not None:
        try:
            value = conform(value)
        except DeclaredTypeError as exc:
            exc.of = f"type of side output '{tag.tag_id}'"
            raise
    return SideOutput(tag.tag_id, value)


@functools.lru_cache(maxsize=64)
def _tag_conformer(type_info: Any) -> Callable[[Any], Any] | None:
    """``conformer(type_info, full=True)``, made once per type."""
    return conformer(type_info, full=True)


class FunctionOperator(Operator):
    """Runs one user function: ``handler(fn, value, ctx, input_index)`` per element, and the
    function's ``on_timer`` per timer. Outputs go through ``conform`` (the check against the
    declared output type, ``fs_compat.common.internal.conformer``) unless of class ``shape``
    (its hot path: they are kept as they are); ``fields`` is that check for a consumer that
    reads the outputs only field by field (``Operator.one_to_one_fields``)."""

    keyed_state_by_current_key = True

    def __init__(
        self,
        fn: Any,
        handler: Handler,
        *,
        side_outputs: bool = False,
        broadcast_states: Iterable[str] = (),
        conform: Callable[[Any], Any] | None = None,
        shape: type | None = None,
        fields: Callable[[Any], Any] | None = None,
    ) -> None:
        self.fn = fn
        self.handler = handler
        self.side_outputs = side_outputs
        self.broadcast_states = tuple(broadcast_states)
        self.conform = conform
        self.shape = shape
        self.ctx: _Ctx | None = None
        self.broadcast: BroadcastStates | None = None
        # The handler's result is the outputs as they are (the per-record path skips ``outputs``).
        self._plain = not side_outputs and conform is None
        if handler is h_map and not side_outputs:
            self.one_to_one = fn.map
            self.one_to_one_check = None if conform is None else (shape, conform)
            self.one_to_one_fields = fields

    def open(self, runtime: OperatorRuntime) -> None:
        self.broadcast = BroadcastStates(self.broadcast_states) if self.broadcast_states else None
        self.ctx = _Ctx(runtime, self.broadcast)
        if isinstance(self.fn, Function):
            self.fn.open(RuntimeContext(runtime))

    def snapshot_operator_state(self) -> Any:
        return None if self.broadcast is None else self.broadcast.snapshot()

    def restore_operator_state(self, state: Any) -> None:
        if self.broadcast is not None and state is not None:
            self.broadcast.restore(state)

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        result = self.handler(self.fn, value, self.ctx, runtime.input_index)  # type: ignore[arg-type]
        if self._plain:
            return () if result is None else result
        return outputs(result, self.side_outputs, self.conform, self.shape)

    def on_timer(self, timestamp: int, runtime: OperatorRuntime) -> Iterable[Any]:
        on_timer = getattr(self.fn, "on_timer", None)
        if on_timer is None:
            return ()
        return outputs(on_timer(timestamp, self.ctx), self.side_outputs, self.conform, self.shape)

    def close(self) -> None:
        if isinstance(self.fn, Function):
            self.fn.close()


_REDUCE_SPEC = StateSpec("_reduce_state", StateKind.VALUE, PickleCodec())


class ReduceOperator(Operator):
    """KeyedStream.reduce: a rolling value per key. STREAMING emits every rolling value; BATCH
    emits once per key, from a timer at the end of time (Flink's implementation)."""

    keyed_state_by_current_key = True

    def __init__(self, reduce: Callable[[Any, Any], Any], fn: Any, batch: bool, conform: Any = None) -> None:
        self.reduce = reduce
        self.fn = fn
        self.batch = batch
        self.conform = conform
        self.state: Any = None

    def open(self, runtime: OperatorRuntime) -> None:
        self.state = runtime.get_state(_REDUCE_SPEC)
        if isinstance(self.fn, Function):
            self.fn.open(RuntimeContext(runtime))

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        cur = self.state.value()
        new = value if cur is None else self.reduce(cur, value)
        if self.conform is not None:
            new = self.conform(new)
        self.state.update(new)
        if self.batch:
            runtime.timer_service.register_event_time_timer(MAX_TIMESTAMP)
            return ()
        return (new,)

    def on_timer(self, timestamp: int, runtime: OperatorRuntime) -> Iterable[Any]:
        value = self.state.value()
        return () if value is None else (value,)

    def close(self) -> None:
        if isinstance(self.fn, Function):
            self.fn.close()
