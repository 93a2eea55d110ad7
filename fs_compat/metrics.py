"""PyFlink's ``pyflink.metrics``: the metric types a function's metric group hands out.

Metrics are kept in the operator instance (no reporter): they exist so that code using them ports
and runs unchanged.
"""

from fs_compat.datastream._functions import Counter, Distribution, Meter, MetricGroup

__all__ = ["Counter", "Distribution", "Meter", "MetricGroup"]
