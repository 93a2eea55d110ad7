"""``pyflink.common.time``: ``Duration``, ``Instant`` and ``Time``."""

from ._time import Duration, Instant, Time

__all__ = ["Duration", "Instant", "Time"]
