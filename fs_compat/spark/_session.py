"""The SparkSession the adapter runs on: the active one, else an embedded local session."""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Mapping
from typing import Any

#: Settings the embedded session starts with unless the user's configuration sets them.
EMBEDDED_DEFAULTS: Mapping[str, str] = {
    "spark.master": "local[*]",
    "spark.app.name": "fs-compat",
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.python.unix.domain.socket.enabled": "true",
}


def spark_session(settings: Mapping[str, str] | None = None) -> Any:
    """The active SparkSession if there is one, else a new embedded one.

    ``settings`` are ``spark.*`` keys (e.g. from ``env.configure(Configuration)``); they apply
    only when a session is started here, e.g. ``spark.master=spark://host:7077`` runs the job on
    a standalone cluster. A ``spark.master`` that differs from the active session's master is an
    error (a process has one SparkContext, so the job could not run where it was asked to).
    """
    # Spark's Python workers must run this interpreter, with this environment's packages.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        _check_master(active.sparkContext.master, settings)
        return active
    conf = session_conf(settings, launched_by_spark="PYSPARK_GATEWAY_PORT" in os.environ)
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    # getOrCreate returns a SparkContext that is already running, whatever master it was given.
    _check_master(session.sparkContext.master, settings)
    session.sparkContext.setLogLevel(conf.get("spark.log.level", "ERROR"))
    return session


def session_conf(settings: Mapping[str, str] | None, launched_by_spark: bool) -> dict[str, str]:
    """The settings a session started here gets: the embedded defaults, then the ``spark.*``
    keys of ``settings``. Under ``spark-submit`` or the ``pyspark`` shell (``launched_by_spark``)
    their ``--master`` and ``--conf`` settings stand, so the embedded defaults do not apply.

    >>> session_conf({"spark.master": "local[2]", "parallelism.default": "2"}, False)["spark.master"]
    'local[2]'
    >>> "spark.master" in session_conf({}, launched_by_spark=True)
    False
    """
    conf = {} if launched_by_spark else dict(EMBEDDED_DEFAULTS)
    conf.update({k: v for k, v in (settings or {}).items() if k.startswith("spark.")})
    return conf


def _check_master(active_master: str | None, settings: Mapping[str, str] | None) -> None:
    """Raise ``ValueError`` when ``settings`` ask for a ``spark.master`` other than
    ``active_master``, the master of the SparkSession already running in this process."""
    wanted = (settings or {}).get("spark.master")
    if wanted and wanted != active_master:
        raise ValueError(
            f"spark.master is set to {wanted!r}, but this process already has an active SparkSession "
            f"with master {active_master!r}, and a process can run only one SparkContext; stop the "
            f"active session (spark.stop()) first, or drop spark.master from the configuration to "
            f"run on {active_master!r}"
        )


_shipped: set[tuple[int, str]] = set()


def ship_python_files(spark: Any, paths: Iterable[str]) -> None:
    """Make modules importable in Spark's Python workers (``add_python_file``): a file as it
    is, a folder as a zip of its contents. Each path is shipped once per SparkContext."""
    sc = spark.sparkContext
    for path in paths:
        if (id(sc), path) in _shipped:
            continue
        if os.path.isdir(path):
            handle, archive = tempfile.mkstemp(suffix=".zip", prefix="fs-compat-pyfiles-")
            os.close(handle)
            with zipfile.ZipFile(archive, "w") as zf:
                for root, _dirs, files in os.walk(path):
                    for name in files:
                        full = os.path.join(root, name)
                        zf.write(full, os.path.relpath(full, path))
            sc.addPyFile(archive)
        else:
            sc.addPyFile(path)
        _shipped.add((id(sc), path))
