"""Where jobs run: the execution targets, and the one place that picks a target and runs a plan on it.

Every front end (``fs_compat.datastream``, ``fs_compat.bytewax``, ``fs_compat.functionstream``,
``fs-compat run``) builds a runtime plan and hands it here:

- ``local``: the plan runs in this process (``fs_compat.runtime``): unit tests, debugging;
- ``spark``: the plan runs as Spark jobs (``fs_compat.spark``, imported only when used);
- ``spark-streaming``: a bounded plan runs as a Structured Streaming query, its input cut into
  micro-batches and the query restarted from its checkpoint on the way
  (``fs_compat.spark.run_bounded_stream``): a test target, so that every bounded job also
  exercises the streaming path.

The target comes from an explicit value, else the ``execution.target`` setting, else the
``FS_COMPAT_TARGET`` environment variable, else the front end's default (``spark`` for PyFlink
jobs, ``local`` for Bytewax's ``run_main``):

>>> resolve_target("local", default=SPARK)
'local'
>>> resolve_target(settings={"execution.target": "spark"}, default=LOCAL, environ={})
'spark'
>>> resolve_target(default=LOCAL, environ={})
'local'
>>> resolve_target("flink", default=SPARK)
Traceback (most recent call last):
...
ValueError: execution.target must be 'local', 'spark' or 'spark-streaming', got 'flink'
"""

from __future__ import annotations

import abc
import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from fs_compat import runtime as _runtime

__all__ = [
    "LOCAL",
    "ReaderSourceNode",
    "SPARK",
    "SPARK_STREAMING",
    "SourceReader",
    "TARGETS",
    "TARGET_ENV",
    "TARGET_KEY",
    "bind_sources",
    "check_target",
    "default_settings",
    "job_defaults",
    "resolve_target",
    "run_plan",
    "sink_query",
    "spark_dataframe",
]

#: The configuration key that picks the target (``Configuration``, ``fs-compat run --conf``).
TARGET_KEY = "execution.target"
#: The environment variable that picks the target when the configuration does not.
TARGET_ENV = "FS_COMPAT_TARGET"
#: In this process.
LOCAL = "local"
#: As Spark jobs.
SPARK = "spark"
#: A bounded job as a Structured Streaming query, restarted from its checkpoint on the way.
SPARK_STREAMING = "spark-streaming"
#: The targets a plan can run on.
TARGETS: tuple[str, ...] = (LOCAL, SPARK, SPARK_STREAMING)

#: Settings every new job starts with (``default_settings``).
_defaults: dict[str, str] = {}


@contextlib.contextmanager
def default_settings(settings: Mapping[str, str]) -> Iterator[None]:
    """Every job created inside the block (a ``StreamExecutionEnvironment``) starts as if
    configured with ``settings`` (Configuration keys: ``execution.target``,
    ``parallelism.default``, ``spark.*`` ...); its own ``configure`` calls override them. This is
    how ``fs-compat run --conf key=value`` reaches a job, as ``flink run -D`` does in Flink.

    >>> with default_settings({"parallelism.default": "3"}):
    ...     job_defaults()
    {'parallelism.default': '3'}
    >>> job_defaults()
    {}
    """
    saved = dict(_defaults)
    _defaults.update(settings)
    try:
        yield
    finally:
        _defaults.clear()
        _defaults.update(saved)


def job_defaults() -> dict[str, str]:
    """A copy of the settings a job created now starts with (``default_settings``)."""
    return dict(_defaults)


def check_target(target: str, source: str | None = None) -> str:
    """``target`` if a plan can run there; else a ValueError naming the value and, when given,
    where it came from.

    >>> check_target("spark-streaming")
    'spark-streaming'
    """
    where = "" if source is None else f" (from {source})"
    if target in TARGETS:
        return target
    raise ValueError(f"execution.target must be 'local', 'spark' or 'spark-streaming', got {target!r}{where}")


def resolve_target(
    explicit: str | None = None,
    settings: Mapping[str, str] | None = None,
    *,
    default: str,
    environ: Mapping[str, str] | None = None,
) -> str:
    """The checked target: ``explicit``, else ``settings[execution.target]``, else
    ``FS_COMPAT_TARGET`` (from ``environ``, default ``os.environ``), else ``default`` (the
    front end's); an empty value counts as unset."""
    env = os.environ if environ is None else environ
    if explicit:
        return check_target(explicit)
    configured = (settings or {}).get(TARGET_KEY)
    if configured:
        return check_target(configured, TARGET_KEY)
    variable = env.get(TARGET_ENV)
    if variable:
        return check_target(variable, TARGET_ENV)
    return check_target(default)


class SourceReader(abc.ABC):
    """A source read through the target (a front end's file or Kafka connector): in this process
    on ``local``, as a Spark DataFrame on ``spark``. Both give the same records: ``read_local``
    returns the Rows the DataFrame's rows become (its field names, in order)."""

    #: The source never ends: on Spark it is a streaming DataFrame.
    unbounded: bool = False

    @abc.abstractmethod
    def read_local(self) -> list[Any]:
        """The source's records, read in this process, as Rows like the DataFrame's."""

    @abc.abstractmethod
    def dataframe(self, spark: Any) -> Any:
        """The source as a DataFrame of ``spark`` (a streaming one when ``unbounded``)."""


@attrs.define(eq=False, getstate_setstate=False)  # ExternalSourceNode's: the handle stays
class ReaderSourceNode(_runtime.ExternalSourceNode):
    """An ExternalSourceNode whose records come from ``reader`` on the target the plan runs on
    (``bind_sources``)."""

    reader: SourceReader | None = attrs.field(default=None)


def bind_sources(nodes: Sequence[_runtime.Node], target: str, spark: Callable[[], Any]) -> None:
    """Read the plan's ``ReaderSourceNode`` sources for ``target``: on ``spark`` (and
    ``spark-streaming``) their ``handle`` becomes the reader's DataFrame (of the session
    ``spark()``), on ``local`` their ``items`` the records read in this process."""
    for node in nodes:
        if isinstance(node, ReaderSourceNode) and node.reader is not None:
            if target in (SPARK, SPARK_STREAMING):
                node.handle = node.reader.dataframe(spark())
            else:
                node.handle = None
                node.items = node.reader.read_local()


def run_plan(
    sinks: Sequence[_runtime.Node],
    config: _runtime.LocalConfig,
    *,
    target: str,
    spark: Callable[[], Any] | None = None,
    job_name: str = "",
) -> _runtime.JobSummary:
    """Run the bounded plan that feeds ``sinks`` on ``target`` and return its summary
    (``job_name`` empty: the front end names the job). On ``spark`` the session is
    ``spark()`` (default: ``fs_compat.spark.spark_session()``), and its jobs carry
    ``job_name`` and the steps' names (Spark's UI); ``local`` reads the plan's DataFrame
    sources on the driver first. ``ReaderSourceNode`` sources are read for the target
    (``bind_sources``). On ``spark-streaming`` the plan runs as a streaming query over its
    input written as files (``fs_compat.spark.run_bounded_stream``)."""
    check_target(target)
    session = spark if spark is not None else _default_session
    bind_sources(_runtime.upstream_of(sinks), target, session)
    if target == SPARK:
        from fs_compat.spark import run_batch

        return run_batch(session(), sinks, config, job_name)
    if target == SPARK_STREAMING:
        from fs_compat.spark import run_bounded_stream

        return run_bounded_stream(session(), sinks, config, job_name)
    external = [
        n
        for n in _runtime.upstream_of(sinks)
        if isinstance(n, _runtime.ExternalSourceNode) and n.handle is not None
    ]
    if external:
        from fs_compat.spark import collect_items

        for node in external:
            node.items = collect_items(node)
    return _runtime.run_local_summarized(sinks, config)


def _default_session() -> Any:
    from fs_compat.spark import spark_session

    return spark_session()


def sink_query(
    spark: Any,
    sink: _runtime.SinkNode,
    config: _runtime.LocalConfig,
    checkpoint_location: str,
    trigger: dict[str, Any],
    *,
    clock: Callable[[], int] | None = None,
) -> Any:
    """Start the Structured Streaming query that feeds a plan's own ``sink`` (``print()``) on
    the driver, for a plan that reads a streaming DataFrame (``fs_compat.spark.start_sink_query``);
    returns the StreamingQuery."""
    from fs_compat.spark import start_sink_query

    bind_sources(_runtime.upstream_of([sink]), SPARK, lambda: spark)
    return start_sink_query(sink, config, checkpoint_location, trigger, clock=clock)


def spark_dataframe(
    spark: Any,
    node: _runtime.Node,
    tag: str | None,
    config: _runtime.LocalConfig,
    output_type: Any,
    *,
    clock: Callable[[], int] | None = None,
) -> Any:
    """The values of ``node``'s output ``tag`` (None: the main output) as a Spark DataFrame
    computed on Spark: a streaming DataFrame when the plan reads a streaming DataFrame, else a
    lazy batch one. ``clock`` (epoch ms) is the steps' processing-time clock; on a streaming
    DataFrame, by default, the micro-batch's start time."""
    from fs_compat.spark import batch_dataframe, stream_dataframe

    bind_sources(_runtime.upstream_of([node]), SPARK, lambda: spark)
    nodes = _runtime.upstream_of([node])
    if any(isinstance(n, _runtime.ExternalSourceNode) and n.unbounded for n in nodes):
        return stream_dataframe(spark, node, tag, config, output_type, clock=clock)
    if clock is not None:
        config = attrs.evolve(config, clock=clock)
    return batch_dataframe(spark, node, tag, config, output_type)
