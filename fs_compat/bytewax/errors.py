"""Errors raised by the Bytewax-compatible runtime (``bytewax.errors``)."""

from __future__ import annotations

__all__ = ["BytewaxRuntimeError"]


class BytewaxRuntimeError(RuntimeError):
    """A failure in user code (or in the operator shims around it) while a dataflow ran.

    The original exception is chained as ``__cause__``; the message names the step (and the key
    for stateful steps).
    """
