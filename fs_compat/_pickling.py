"""One registry of by-value classes for the two cloudpickles a Spark job uses.

PySpark ships a job's functions with its own copy of cloudpickle (``pyspark.cloudpickle``);
fs-compat pickles records and state values with ``cloudpickle``. A class pickled by value (one of
``__main__`` or of a module of the job's own) travels with an id from its pickler's registry, and
unpickling looks that id up, so that every copy of the class unpickled in a process is one class.
Two registries give one class two ids: a worker then holds two classes of one name, and a record
fails ``isinstance`` against the class the job's functions see. ``share_class_trackers`` makes
both picklers use one registry.

Kept out of ``fs_compat.spark`` (like ``_spark_daemon``) so that importing it costs nothing.
"""

from __future__ import annotations

import sys
from typing import Any


def share_class_trackers() -> None:
    """Make ``cloudpickle`` use ``pyspark.cloudpickle``'s registry of by-value classes (what
    each held before is kept: a class keeps the id it was given first). Does nothing when PySpark
    is not installed or the two are one module; calling it again is a no-op."""
    import cloudpickle.cloudpickle as ours

    try:
        from pyspark.cloudpickle import cloudpickle as spark
    except ImportError:
        return
    if ours is spark or ours._DYNAMIC_CLASS_TRACKER_BY_ID is spark._DYNAMIC_CLASS_TRACKER_BY_ID:
        return
    theirs: Any = spark
    with theirs._DYNAMIC_CLASS_TRACKER_LOCK, ours._DYNAMIC_CLASS_TRACKER_LOCK:
        for cls, tracker_id in list(ours._DYNAMIC_CLASS_TRACKER_BY_CLASS.items()):
            theirs._DYNAMIC_CLASS_TRACKER_BY_CLASS.setdefault(cls, tracker_id)
        for tracker_id, cls in list(ours._DYNAMIC_CLASS_TRACKER_BY_ID.items()):
            theirs._DYNAMIC_CLASS_TRACKER_BY_ID.setdefault(tracker_id, cls)
        ours._DYNAMIC_CLASS_TRACKER_BY_CLASS = theirs._DYNAMIC_CLASS_TRACKER_BY_CLASS
        ours._DYNAMIC_CLASS_TRACKER_BY_ID = theirs._DYNAMIC_CLASS_TRACKER_BY_ID
        ours._DYNAMIC_CLASS_TRACKER_LOCK = theirs._DYNAMIC_CLASS_TRACKER_LOCK


def share_if_spark_loaded() -> None:
    """``share_class_trackers`` in a process that has PySpark's cloudpickle loaded already (a
    Spark worker unpickling a job's function), and nothing otherwise: an in-process job does not
    import PySpark for it."""
    if "pyspark.cloudpickle" in sys.modules:
        share_class_trackers()
