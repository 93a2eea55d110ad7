"""What the Spark tests read of a DataFrame's plan, through public API (``explain``), so that
they read it alike on a classic session and over Spark Connect (which has no ``_jdf``)."""

from __future__ import annotations

import contextlib
import io
from typing import Any


def optimized_plan(df: Any) -> str:
    """``df``'s optimized logical plan, as ``explain(mode="extended")`` prints it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        df.explain(mode="extended")
    text = out.getvalue()
    start = text.index("== Optimized Logical Plan ==") + len("== Optimized Logical Plan ==")
    return text[start : text.index("== Physical Plan ==")].strip("\n")
