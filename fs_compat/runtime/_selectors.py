"""Key selectors an engine may read without calling them.

``key_by(lambda e: e[0])`` on a DataFrame's Rows returns one field of each Row as it is. When an
engine holds the Rows' values as columns, it can take the key from the column instead of making
a Row and calling the selector per record. ``row_field`` says which field a selector returns,
when that is certain from the selector itself; anything else gets None (call the selector).
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
    target = _target(selector)
    if target is None:
        return None
    kind, item = target
    if kind == "item" and type(item) is int:
        n = len(names)
        return item % n if -n <= item < n else None
    if type(item) is not str or item not in names:
        return None
    if kind == "attr" and (item.startswith("_") or hasattr(Row, item)):
        return None  # ``Row.__getattr__`` is not reached, or refuses the name
    return list(names).index(item)


def _target(selector: Callable[[Any], Any]) -> tuple[str, Any] | None:
    """``("item", i)`` for a selector that returns ``arg[i]``, ``("attr", name)`` for one that
    returns ``arg.name``; else None."""
    if type(selector) is operator.itemgetter or type(selector) is operator.attrgetter:
        args = selector.__reduce__()[1]
        if len(args) != 1:
            return None
        kind = "item" if type(selector) is operator.itemgetter else "attr"
        if kind == "attr" and "." in args[0]:
            return None
        return kind, args[0]
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
    if not ops or ops[0].opname != "LOAD_FAST" or ops[0].argval != code.co_varnames[0]:
        return None
    body = ops[1:]
    if (
        len(body) == 3
        and body[0].opname in _CONSTS
        and _is_subscript(body[1])
        and body[2].opname == "RETURN_VALUE"
    ):
        return "item", body[0].argval
    if len(body) == 2 and body[0].opname == "LOAD_ATTR" and body[1].opname == "RETURN_VALUE":
        if sys.version_info >= (3, 12) and (body[0].arg or 0) & 1:
            return None  # a method load, not an attribute
        return "attr", body[0].argval
    return None


def _is_subscript(ins: dis.Instruction) -> bool:
    return ins.opname == "BINARY_SUBSCR" or (ins.opname == "BINARY_OP" and ins.argrepr == "[]")
