"""``pyflink.common.types``: ``Row`` and ``RowKind``."""

from ._row import Row, RowKind

__all__ = ["Row", "RowKind"]
