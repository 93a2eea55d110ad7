"""An in-process Context with the state conveniences, for running and testing processors."""

from __future__ import annotations

from fs_api import testing as _low

from ._context import StateContextMixin


class LocalContext(_low.LocalContext, StateContextMixin):
    """``fs_api.testing.LocalContext`` plus ``getOrCreateValueState`` and the other
    ``getOrCreate*`` conveniences of FunctionStream's runtime Context.

    >>> ctx = LocalContext()
    >>> counter = ctx.getOrCreateValueStateAutoCodec("counter")
    >>> counter.update(41); counter.value() + 1
    42
    """
