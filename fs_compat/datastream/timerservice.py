"""PyFlink's ``pyflink.datastream.timerservice``."""

from fs_compat.runtime import TimerService

__all__ = ["TimerService"]
