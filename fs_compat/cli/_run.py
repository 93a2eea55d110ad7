"""``fs-compat run [--target T] [--master URL] [--conf key=value ...] JOB.py [ARGS...]``: run a
ported job file, as ``python JOB.py ARGS...`` would (``sys.argv == [JOB.py, *ARGS]``), and print
the summary of every job it executed.

How the options reach the job: ``--conf`` settings (``spark.*``, ``execution.target``,
``parallelism.default``, ``execution.runtime-mode`` ...) become the defaults of every
``StreamExecutionEnvironment`` the file creates (``default_settings``; the job's own
``configure`` calls override them), with ``execution.target=spark`` unless ``--conf`` says
otherwise. When the target is Spark, the SparkSession is started before the job, from
``--master`` (``spark.master``), the ``spark.*`` settings and
``spark.ui.showConsoleProgress=true`` (Spark's progress bar, on stderr): a job that asks for a
session itself (``SparkSession.builder.getOrCreate()``, ``fs_compat.spark.spark_session()``)
gets that one. A file that executes no job but defines a Bytewax dataflow named ``flow`` (what
``python -m bytewax.run FILE`` runs) has that flow run on the target.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from fs_compat.execution import SPARK, TARGET_KEY, default_settings, resolve_target
from fs_compat.runtime import StepError, collect_summaries


def job_settings(master: str | None, conf: Mapping[str, str]) -> dict[str, str]:
    """The settings a job run by ``fs-compat run`` starts with.

    >>> job_settings("local[2]", {"parallelism.default": "2"})["spark.master"]
    'local[2]'
    >>> job_settings(None, {})[TARGET_KEY]
    'spark'
    """
    settings = {TARGET_KEY: SPARK, "spark.ui.showConsoleProgress": "true", **conf}
    if master is not None:
        settings["spark.master"] = master
    return settings


def error_line(exc: BaseException) -> str:
    """One line saying what failed: a StepError's message (it names the step, the key and the
    record), also when it arrives wrapped in a Spark error (``fs_compat.spark.user_error``);
    else the exception's type and the first line of its message.

    >>> error_line(StepError("step 'Map': function raised ValueError: bad (record 3)"))
    "step 'Map': function raised ValueError: bad (record 3)"
    >>> error_line(KeyError("amount"))
    "KeyError: 'amount'"
    """
    if type(exc).__module__.startswith("pyspark."):
        from fs_compat.spark import user_error

        exc = user_error(exc)
    if isinstance(exc, StepError):
        text = str(exc)
    else:
        lines = str(exc).strip().splitlines()
        text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return " ".join(text.split())


def run_job(
    path: Path,
    *,
    master: str | None,
    conf: Mapping[str, str],
    args: Sequence[str] = (),
    argv0: str | None = None,
) -> int:
    """Run the job file ``path`` as ``__main__`` (the caller checked that it exists and
    compiles) with ``sys.argv == [argv0 or path, *args]``, on the target ``conf`` names (Spark
    unless it says otherwise); print each executed job's summary. Returns the exit status: 0,
    the job's own ``sys.exit`` status, or 1 when it raised (after one line on stderr naming
    what failed)."""
    settings = job_settings(master, conf)
    status, exited, ran_flow = 0, False, False
    failure: str | None = None
    saved_argv, saved_path = list(sys.argv), list(sys.path)
    sys.argv = [str(path) if argv0 is None else argv0, *args]
    sys.path.insert(0, str(path.resolve().parent))  # as `python JOB.py`: its folder first
    try:
        with default_settings(settings), collect_summaries() as summaries:
            try:
                if resolve_target(settings=settings, default=SPARK) == SPARK:
                    from fs_compat.spark import spark_session

                    spark_session(settings)
                namespace = runpy.run_path(str(path), run_name="__main__")
                if not summaries:
                    ran_flow = _run_module_flow(namespace, resolve_target(settings=settings, default=SPARK))
            except SystemExit as exc:
                status, exited = _exit_status(exc), True
            except Exception as exc:
                status = 1
                failure = error_line(exc)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    sys.stdout.flush()
    for summary in summaries:
        print()
        print(summary.render())
    if not summaries and status == 0 and not exited and not ran_flow:  # (not after its sys.exit)
        print(f"{path}: no job was executed (the file never called env.execute())", file=sys.stderr)
    if failure is not None:
        print(f"error: {failure}", file=sys.stderr)
    return status


def _run_module_flow(namespace: Mapping[str, object], target: str) -> bool:
    """Run the Bytewax dataflow the file defines as ``flow`` (as ``python -m bytewax.run FILE``
    does; such a file runs nothing itself) on ``target``; whether there was one."""
    from fs_compat.bytewax.dataflow import Dataflow
    from fs_compat.bytewax.testing import run_main

    flow = namespace.get("flow")
    if not isinstance(flow, Dataflow):
        return False
    run_main(flow, _target=target)
    return True


def _exit_status(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # as Python does with sys.exit("message")
    return 1
