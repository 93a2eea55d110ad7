"""Dataflows and streams (``bytewax.dataflow``).

A :class:`Dataflow` is built by calling the operators in :mod:`fs_compat.bytewax.operators`; each
call adds a step with a fully qualified id (``flow_id.step_id``, nested for operators built from
other operators) and the nodes of the engine-neutral plan (:mod:`fs_compat.runtime`) that run it.

>>> from fs_compat.bytewax.dataflow import Dataflow
>>> import fs_compat.bytewax.operators as op
>>> from fs_compat.bytewax.testing import TestingSource
>>> flow = Dataflow("eg")
>>> s = op.input("inp", flow, TestingSource([1, 2]))
>>> s.stream_id
'eg.inp.down'
>>> [step.step_id for step in flow.substeps]
['eg.inp']
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FunctionType
from typing import Any, Concatenate, Generic, ParamSpec, TypeAlias, TypeVar

from fs_compat.runtime import Edge as _Edge
from fs_compat.runtime import Node as _Node

__all__ = [
    "Dataflow",
    "KeyedStream",
    "Operator",
    "Port",
    "Stream",
    "f_repr",
    "operator",
]

_X_co = TypeVar("_X_co", covariant=True)
_V = TypeVar("_V")
_P = ParamSpec("_P")
_R = TypeVar("_R")
_F = TypeVar("_F", bound=Callable[..., Any])


def f_repr(f: Callable[..., Any]) -> str:
    """A function's repr with its module, qualified name and first line, for error messages.

    >>> def my_f(x):
    ...     pass
    >>> f_repr(my_f)
    "<function '....my_f' line 1>"
    """
    if isinstance(f, FunctionType):
        return f"<function {f.__module__ + '.' + f.__qualname__!r} line {f.__code__.co_firstlineno}>"
    return repr(f)


@dataclass(frozen=True)
class Port:
    """One input or output of a step: ``port_id`` is ``step_id.name``; ``stream_ids`` are the ids of
    the streams it takes or gives, one for a single stream, one per stream of ``*ups`` / ``**ups``."""

    port_id: str
    stream_ids: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Operator:
    """One step of a dataflow: its name as given, its fully qualified id and its sub-steps.

    ``op_type`` is the name of the operator that made it (``"map"``); ``ups`` and ``dwns`` are its
    input and output ports by parameter (or output field) name, in declaration order, as
    :mod:`fs_compat.bytewax.visualize` draws them.
    """

    step_name: str
    step_id: str
    substeps: list[Operator] = field(default_factory=list)
    op_type: str = ""
    ups: dict[str, Port] = field(default_factory=dict)
    dwns: dict[str, Port] = field(default_factory=dict)


class _Plan:
    """The plan nodes of one dataflow, in creation (hence topological) order, and the
    sources and sinks the runner binds to them."""

    def __init__(self) -> None:
        self.nodes: list[_Node] = []
        self.sources: dict[int, Any] = {}
        self.sinks: dict[int, Any] = {}

    def add(self, node: _Node) -> _Node:
        self.nodes.append(node)
        return node


@dataclass(frozen=True)
class _Scope:
    parent_id: str
    substeps: list[Operator] = field(compare=False, repr=False)
    step_ids: set[str] = field(compare=False, repr=False)

    def __hash__(self) -> int:
        return hash(self.parent_id)


@dataclass(frozen=True)
class Dataflow:
    """A dataflow definition; add steps with the operators in :mod:`fs_compat.bytewax.operators`.

    >>> Dataflow("a.b")
    Traceback (most recent call last):
    ...
    ValueError: flow ID can't contain a period `.`
    """

    flow_id: str
    substeps: list[Operator] = field(default_factory=list)
    _scope: _Scope = field(default=None, compare=False, repr=False)  # type: ignore[assignment]
    _plan: _Plan = field(default_factory=_Plan, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.flow_id, str):
            raise TypeError("flow ID must be a `str`")
        if "." in self.flow_id:
            raise ValueError("flow ID can't contain a period `.`")
        if self._scope is None:
            object.__setattr__(self, "_scope", _Scope(self.flow_id, self.substeps, set()))

    def _with_scope(self, scope: _Scope) -> Dataflow:
        return dataclasses.replace(self, _scope=scope)


@dataclass(frozen=True)
class Stream(Generic[_X_co]):
    """A stream of items that steps can be added to; reference it several times to duplicate it."""

    stream_id: str
    _scope: _Scope = field(compare=False, repr=False)
    _flow: Dataflow = field(compare=False, repr=False)
    _node: _Node = field(compare=False, repr=False)
    _side_tag: str | None = field(default=None, compare=False, repr=False)

    def flow(self) -> Dataflow:
        """The dataflow this stream belongs to."""
        return self._flow

    def _with_scope(self, scope: _Scope) -> Stream[_X_co]:
        return dataclasses.replace(self, _scope=scope, _flow=self._flow._with_scope(scope))

    def _edge(self, **kwargs: Any) -> _Edge:
        return _Edge(self._node, side_tag=self._side_tag, **kwargs)

    def then(
        self,
        op_fn: Callable[Concatenate[str, Stream[_X_co], _P], _R],
        step_id: str,
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _R:
        """Chain a step onto this stream: ``s.then(op.map, "id", f)`` is ``op.map("id", s, f)``."""
        return op_fn(step_id, self, *args, **kwargs)


KeyedStream: TypeAlias = Stream[tuple[str, _V]]
"""A stream of ``(key, value)`` 2-tuples with ``str`` keys."""


def _scoped_values(value: Any) -> list[Any]:
    if isinstance(value, (Stream, Dataflow)):
        return [value]
    if isinstance(value, tuple):
        return [v for v in value if isinstance(v, (Stream, Dataflow))]
    if isinstance(value, dict):
        return [v for v in value.values() if isinstance(v, (Stream, Dataflow))]
    return []


def _rescope(value: Any, scope: _Scope) -> Any:
    if isinstance(value, (Stream, Dataflow)):
        return value._with_scope(scope)
    if isinstance(value, tuple):
        return tuple(_rescope(v, scope) for v in value)
    if isinstance(value, dict):
        return {k: _rescope(v, scope) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _rescope(getattr(value, f.name), scope)
            for f in dataclasses.fields(value)
            if isinstance(getattr(value, f.name), Stream)
        }
        return dataclasses.replace(value, **changes)
    return value


def _is_stream_annotation(annotation: Any) -> bool:
    """Whether a parameter is declared as a stream (``Stream[X]``, ``KeyedStream[V]``, ...), from
    its annotation, a string under ``from __future__ import annotations``."""
    if annotation is inspect.Parameter.empty:
        return False
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", repr(annotation))
    return text.split("[", 1)[0].strip().rsplit(".", 1)[-1].endswith("Stream")


def _in_ports(sig: inspect.Signature, arguments: dict[str, Any], fq_id: str) -> dict[str, Port]:
    ports: dict[str, Port] = {}
    for pname, param in sig.parameters.items():
        val = arguments.get(pname)
        if param.kind is inspect.Parameter.VAR_POSITIONAL and _is_stream_annotation(param.annotation):
            ids = {str(i): s.stream_id for i, s in enumerate(val or ())}
        elif param.kind is inspect.Parameter.VAR_KEYWORD and _is_stream_annotation(param.annotation):
            ids = {str(k): s.stream_id for k, s in (val or {}).items()}
        elif isinstance(val, Stream):
            ids = {"stream": val.stream_id}
        else:
            continue
        ports[pname] = Port(f"{fq_id}.{pname}", ids)
    return ports


def _out_ports(out: Any, fq_id: str) -> dict[str, Port]:
    if isinstance(out, Stream):
        named: dict[str, Any] = {"down": out}
    elif dataclasses.is_dataclass(out) and not isinstance(out, type):
        named = {f.name: getattr(out, f.name) for f in dataclasses.fields(out)}
    else:
        return {}
    return {
        name: Port(f"{fq_id}.{name}", {"stream": val.stream_id})
        for name, val in named.items()
        if isinstance(val, Stream)
    }


def operator(builder: _F) -> _F:
    """Turn a builder function ``f(step_id, ...)`` into an operator: validates the step id,
    qualifies it with the enclosing scope (``flow.outer.inner``), rejects duplicates, and lets
    the builder call other operators as its sub-steps.

    >>> import fs_compat.bytewax.operators as op
    >>> from fs_compat.bytewax.testing import TestingSource
    >>> flow = Dataflow("eg")
    >>> s = op.input("inp", flow, TestingSource([1]))
    >>> _ = op.map("inp", s, str)
    Traceback (most recent call last):
    ...
    ValueError: step 'eg.inp' already exists; do you have two steps with the same ID?
    """
    sig = inspect.signature(builder)
    if "step_id" not in sig.parameters:
        raise TypeError("builder function requires a 'step_id' parameter")
    name = builder.__name__

    @functools.wraps(builder)
    def fn(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as ex:
            raise TypeError(f"operator {name!r} called incorrectly; see cause above") from ex
        bound.apply_defaults()
        step_id = bound.arguments["step_id"]
        if not isinstance(step_id, str):
            raise TypeError("'step_id' must be a `str`")
        if "." in step_id:
            raise ValueError("'step_id' can't contain any periods '.'")
        for pname, param in sig.parameters.items():
            if param.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                val = bound.arguments[pname]
                if _is_stream_annotation(param.annotation) and not isinstance(val, Stream):
                    raise TypeError(
                        f"{pname!r} argument must be a `Stream`; got a {type(val)!r} instead; did you "
                        "forget to unpack the result of an operator that returns multiple streams?"
                    )
            if param.kind is inspect.Parameter.VAR_POSITIONAL:
                for val in bound.arguments[pname]:
                    if not isinstance(val, Stream):
                        raise TypeError(
                            f"{pname!r} *args all must be a `Stream`; got a {type(val)!r} instead; "
                            "did you forget to unpack the result of an operator that returns "
                            "multiple streams?"
                        )
        scopes = {s._scope for v in bound.arguments.values() for s in _scoped_values(v)}
        if len(scopes) != 1:
            if not scopes:
                raise TypeError(f"operator {name!r} requires at least one upstream `Stream` or a `Dataflow`")
            raise AssertionError(
                f"inconsistent stream scoping; found multiple scopes {sorted(scopes, key=str)!r}"
            )
        outer = next(iter(scopes))
        fq_id = f"{outer.parent_id}.{step_id}"
        if fq_id in outer.step_ids:
            raise ValueError(f"step {fq_id!r} already exists; do you have two steps with the same ID?")
        inner = _Scope(fq_id, [], set())
        for pname in list(bound.arguments):
            bound.arguments[pname] = _rescope(bound.arguments[pname], inner)
        bound.arguments["step_id"] = fq_id
        ups = _in_ports(sig, bound.arguments, fq_id)
        out = builder(*bound.args, **bound.kwargs)
        outer.step_ids.add(fq_id)
        outer.substeps.append(Operator(step_id, fq_id, inner.substeps, name, ups, _out_ports(out, fq_id)))
        return _rescope(out, outer)

    return fn  # type: ignore[return-value]
