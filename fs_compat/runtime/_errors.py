"""Naming things in error messages: user functions, and what inside an object cannot be pickled.

Only error paths call these; nothing here runs per record.
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable
from typing import Any


def describe_callable(fn: Any) -> str:
    """A short, stable name of a user function for error messages: ``MyMapper`` for a function
    object, ``MyKeySelector.get_key`` for a bound method, ``name (file.py:line)`` for a plain
    function or lambda (whose name alone says little)."""
    inner = getattr(fn, "_fn", None)  # a plain callable wrapped as a Function
    if inner is not None and callable(inner):
        fn = inner
    if isinstance(fn, types.MethodType):
        owner = fn.__self__
        return f"{type(owner).__qualname__}.{fn.__func__.__name__}"
    if isinstance(fn, types.FunctionType):
        code = fn.__code__
        return f"{fn.__qualname__} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"
    return type(fn).__qualname__


def _pickles(obj: Any, dumps: Callable[[Any], Any]) -> BaseException | None:
    try:
        dumps(obj)
    except Exception as exc:
        return exc
    return None


def _parts(obj: Any) -> list[tuple[str, Any]]:
    """What pickling ``obj`` pickles in turn, each with its place relative to ``obj``."""
    if isinstance(obj, types.FunctionType):
        parts = [
            (f".{name}", cell.cell_contents)
            for name, cell in zip(obj.__code__.co_freevars, obj.__closure__ or (), strict=False)
            if _has_contents(cell)
        ]
        return parts + [(f".{n}", obj.__globals__[n]) for n in obj.__code__.co_names if n in obj.__globals__]
    if isinstance(obj, types.MethodType):
        return [("", obj.__self__), ("", obj.__func__)]
    if isinstance(obj, dict):
        return [(f"[{k!r}]", v) for k, v in obj.items()]
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [(f"[{i}]", v) for i, v in enumerate(obj)]
    state = getattr(obj, "__dict__", None)
    parts = [(f".{k}", v) for k, v in state.items()] if isinstance(state, dict) else []
    for name in getattr(type(obj), "__slots__", ()):
        if hasattr(obj, name):
            parts.append((f".{name}", getattr(obj, name)))
    return parts


def _has_contents(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def unpicklable_part(obj: Any, dumps: Callable[[Any], Any], depth: int = 8) -> tuple[str, Any, BaseException]:
    """``(path, part, error)``: the innermost part of ``obj`` that ``dumps`` cannot pickle, its
    place as an attribute path (``.lock``, ``.desc.fn.sock``, ``[0]``; ``""`` for ``obj``
    itself) and the error pickling it gave. Call it only when ``dumps(obj)`` failed."""
    path, error = "", _pickles(obj, dumps)
    assert error is not None, "unpicklable_part needs an object that cannot be pickled"
    seen = {id(obj)}
    for _ in range(depth):
        # Public attributes first: they are the names users know.
        for place, part in sorted(_parts(obj), key=lambda p: p[0].startswith("._")):
            if id(part) in seen:
                continue
            seen.add(id(part))
            failed = _pickles(part, dumps)
            if failed is not None:
                obj, path, error = part, path + place, failed
                break
        else:
            break
    return path, obj, error


def unpicklable_message(what: str, fn: Any, dumps: Callable[[Any], Any]) -> str:
    """``what`` (e.g. ``"step 'Map': the function"``) names ``fn``, which ``dumps`` cannot
    pickle; the message says which part of it cannot be pickled and what to do."""
    name = describe_callable(fn)
    inner = getattr(fn, "_fn", None)  # a plain callable wrapped as a Function
    path, part, error = unpicklable_part(inner if callable(inner) else fn, dumps)
    where = f"{name.split(' (')[0]}{path}" if path else name
    kind = type(part)
    kind_name = (
        kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    )
    return (
        f"{what} {name} cannot be pickled: {where} is a {kind_name} "
        f"({type(error).__name__}: {error}). Every task gets its own pickled copy of a function, "
        "as in Flink and Spark: create such resources in open(), not in __init__ or a closure"
    )
