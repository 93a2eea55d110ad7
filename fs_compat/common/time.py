"""``pyflink.common.time``: ``Duration``, ``Instant`` and ``Time``."""

from fs_compat.java_gateway import get_gateway  # in PyFlink's module too (tests patch it there)

from ._time import Duration, Instant, Time

__all__ = ["Duration", "Instant", "Time", "get_gateway"]
