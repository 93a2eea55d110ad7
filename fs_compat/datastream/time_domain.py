"""PyFlink's ``pyflink.datastream.time_domain``."""

from fs_compat.runtime import TimeDomain

__all__ = ["TimeDomain"]
