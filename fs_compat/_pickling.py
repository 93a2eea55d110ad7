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

import functools
import hashlib
import os
import sys
import types
from pathlib import Path
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


def pin_class_ids(module: types.ModuleType) -> None:
    """Give the classes of ``module`` (one shipped by value: ``__main__`` or a module of the job's
    own; top-level classes and the classes in their bodies) ids that depend only on the module's
    name, the class's qualified name and the content of the module's file, where cloudpickle
    would draw a random id per driver process.

    So a job restarted in a new driver process from its checkpoint reads state values of its own
    classes back as the classes its functions see (with random ids, a restored value was of a
    look-alike class: ``isinstance`` and a dataclass's ``==`` were False). A changed file gives new
    ids (the restored values are then of the old definition, as before); a class that has an id
    already keeps it; a module without a file (an interactive ``__main__``) keeps random ids."""
    path = getattr(module, "__file__", None)
    digest = _file_digest(path) if isinstance(path, str) else None
    if digest is None:
        return
    share_class_trackers()
    import cloudpickle.cloudpickle as registry

    reg: Any = registry
    by_class, by_id = reg._DYNAMIC_CLASS_TRACKER_BY_CLASS, reg._DYNAMIC_CLASS_TRACKER_BY_ID
    with reg._DYNAMIC_CLASS_TRACKER_LOCK:
        for value in _classes_of(module):
            if value in by_class:
                continue
            name = f"{module.__name__}\0{value.__qualname__}\0{digest}"
            tracker_id = "fs-compat-" + hashlib.sha256(name.encode()).hexdigest()[:32]
            if by_id.get(tracker_id, value) is not value:
                continue  # another live class of that name and file (a module imported twice)
            by_class[value] = tracker_id
            by_id[tracker_id] = value


def _classes_of(module: types.ModuleType) -> list[type]:
    """The classes defined at the top of ``module`` and, within them, the classes defined in
    their bodies (``Outer.Inner``), at any depth: those a qualified name reaches."""
    found: list[type] = []
    todo = [(value, value.__qualname__) for value in list(vars(module).values()) if isinstance(value, type)]
    while todo:
        cls, qualname = todo.pop()
        if cls.__module__ != module.__name__ or cls.__qualname__ != qualname or cls in found:
            continue  # imported from elsewhere, or an alias
        found.append(cls)
        todo += [(v, f"{qualname}.{k}") for k, v in list(vars(cls).items()) if isinstance(v, type)]
    return found


def _file_digest(path: str) -> str | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _digest(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=256)
def _digest(path: str, mtime_ns: int, size: int) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None
