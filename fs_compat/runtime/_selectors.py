"""Key selectors an engine may read without calling them.

``key_by(lambda e: e[0])`` on a DataFrame's Rows returns one field of each Row as it is. When an
engine holds the Rows' values as columns, it can take the key from the column instead of making
a Row and calling the selector per record. ``row_field`` says which field a selector returns,
when that is certain from the selector itself, ``row_fields`` which fields a selector returns as
a tuple (a key of several columns); anything else gets None (call the selector).
"""

from __future__ import annotations

import dis
import operator
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

from fs_compat.common import Row

#: Instructions that do nothing to the value (the interpreter's bookkeeping).
_SKIP = frozenset({"RESUME", "NOP", "CACHE", "COPY_FREE_VARS"})
_CONSTS = frozenset({"LOAD_CONST", "LOAD_SMALL_INT"})


def row_field(selector: Callable[[Any], Any], names: Sequence[str]) -> int | None:
    """The position of the field that ``selector`` returns from a Row with field ``names``, or
    None when that is not certain.

    Recognised: a one-argument function (a ``lambda`` or a ``def``) whose whole body is
    ``return arg[i]`` (an ``int`` index within the fields), ``return arg["name"]`` or ``return
    arg.name`` (a field name that is not an attribute of ``Row`` itself), and
    ``operator.itemgetter(i)`` / ``operator.itemgetter("name")`` / ``operator.attrgetter("name")``.

    >>> row_field(lambda e: e[1], ["key", "amount"])
    1
    >>> row_field(lambda r: r.key, ["key", "amount"])
    0
    >>> row_field(lambda r: r.key + 1, ["key", "amount"]) is None
    True
    """
    targets = _targets(selector)
    if targets is None or len(targets) != 1 or targets[0][0] == "tuple":
        return None
    return _position(targets[0], names)


def row_fields(selector: Callable[[Any], Any], names: Sequence[str]) -> tuple[int, ...] | None:
    """The positions of the fields that ``selector`` returns from a Row with field ``names``: one
    (``row_field``'s), or several when it returns a tuple of fields as they are: ``return
    (arg[i], arg.name, ...)``, ``operator.itemgetter(i, j, ...)``,
    ``operator.attrgetter("a", "b", ...)``. None when that is not certain.

    >>> row_fields(lambda e: (e[0], e[2]), ["key", "amount", "region"])
    (0, 2)
    >>> row_fields(lambda r: (r.region, r["key"]), ["key", "amount", "region"])
    (2, 0)
    >>> row_fields(lambda e: e[1], ["key", "amount"])
    (1,)
    >>> row_fields(lambda e: [e[0], e[1]], ["key", "amount"]) is None
    True
    >>> row_fields(lambda e: (e[0],), ["key", "amount"]) is None
    True
    """
    targets = _targets(selector)
    if targets is None:
        return None
    if targets[0][0] == "tuple":
        targets = targets[1:]
        if len(targets) < 2:
            return None  # ``(arg[i],)``: a one-tuple would read as the field itself
    positions = [_position(target, names) for target in targets]
    if any(p is None for p in positions):
        return None
    return tuple(p for p in positions if p is not None)


def _position(target: tuple[str, Any], names: Sequence[str]) -> int | None:
    kind, item = target
    if kind == "item" and type(item) is int:
        n = len(names)
        return item % n if -n <= item < n else None
    if type(item) is not str or item not in names:
        return None
    if kind == "attr" and (item.startswith("_") or hasattr(Row, item)):
        return None  # ``Row.__getattr__`` is not reached, or refuses the name
    return list(names).index(item)


def _targets(selector: Callable[[Any], Any]) -> list[tuple[str, Any]] | None:
    """What ``selector`` returns of its argument: ``[("item", i)]`` for ``arg[i]``,
    ``[("attr", name)]`` for ``arg.name``, and ``[("tuple", n), <n of those>]`` for a tuple of
    them (``(arg[i], arg.name)``, ``itemgetter(i, j)``, ``attrgetter("a", "b")``); else None."""
    if type(selector) is operator.itemgetter or type(selector) is operator.attrgetter:
        args = selector.__reduce__()[1]
        kind = "item" if type(selector) is operator.itemgetter else "attr"
        if kind == "attr" and any(type(a) is not str or "." in a for a in args):
            return None
        got = [(kind, a) for a in args]
        return got if len(args) == 1 else [("tuple", len(args)), *got]
    if type(selector) is not types.FunctionType:
        return None
    code = selector.__code__
    if (
        code.co_argcount != 1
        or code.co_posonlyargcount > 1
        or code.co_kwonlyargcount
        or code.co_flags & (0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200)  # *args, **kw, generators
        or code.co_freevars
    ):
        return None
    ops = [i for i in dis.get_instructions(code) if i.opname not in _SKIP]
    if len(ops) < 2 or ops[-1].opname != "RETURN_VALUE":
        return None
    body, arg = ops[:-1], code.co_varnames[0]
    tupled = body[-1].opname == "BUILD_TUPLE"
    if tupled:
        body = body[:-1]
    found: list[tuple[str, Any]] = []
    at = 0
    while at < len(body):
        if body[at].opname != "LOAD_FAST" or body[at].argval != arg:
            return None
        rest = body[at + 1 : at + 3]
        if len(rest) == 2 and rest[0].opname in _CONSTS and _is_subscript(rest[1]):
            found.append(("item", rest[0].argval))
            at += 3
        elif rest and rest[0].opname == "LOAD_ATTR":
            if sys.version_info >= (3, 12) and (rest[0].arg or 0) & 1:
                return None  # a method load, not an attribute
            found.append(("attr", rest[0].argval))
            at += 2
        else:
            return None
    if tupled:
        return [("tuple", len(found)), *found] if found and ops[-2].arg == len(found) else None
    return found if len(found) == 1 else None


def _is_subscript(ins: dis.Instruction) -> bool:
    return ins.opname == "BINARY_SUBSCR" or (ins.opname == "BINARY_OP" and ins.argrepr == "[]")
