"""A failing job reads the same on every target: in the terminal (a job run in a subprocess,
its stderr captured), the first error text is the user's error (the StepError naming the step,
the function with its file:line, the key and the record), Spark's executor traces stay out of
it, and the full detail stays reachable (chained to the exception raised, or with
``FS_COMPAT_SPARK_LOGGING=verbose``). Also a failed streaming query, waited on with
``fs_compat.spark.await_query``, and the lines pyspark's ``transformWithStateInPandas`` driver
worker prints at a query's start."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fs_compat.common import Configuration
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.runtime import StepError

#: A line of Spark's executor or scheduler reporting a failed task, or of a JVM stack trace.
SPARK_TRACES = ("Exception in task", "at org.apache.spark", "TaskSetManager", "Lost task")

FAILING = """
import sys

from fs_compat.common import Configuration
from fs_compat.datastream import StreamExecutionEnvironment


def check(n):
    if n == 3:
        raise ValueError(f"no threes, got {n}")
    return n


env = StreamExecutionEnvironment.get_execution_environment()
env.from_collection([1, 2, 3, 4]).key_by(lambda n: n % 2).map(check).name("check").print()
env.execute("failing job")
"""

#: ``FAILING``'s error; the key selector's key is ``n % 2``.
EXPECTED = (
    r"step 'check': function check \(job\.py:\d+\) raised ValueError: no threes, got 3 \(key 1, record 3\)"
)

FAILING_STREAM = """
import sys
import tempfile

from fs_compat.common import Configuration, Types
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.spark import await_query, spark_session


def check(row):
    if row.n == 3:
        raise ValueError(f"no threes, got {row.n}")
    return (row.key, row.n)


spark = spark_session()
base = sys.argv[1]
spark.createDataFrame([("a", 1), ("b", 3)], "key STRING, n LONG").write.parquet(base + "/in/1")
env = StreamExecutionEnvironment.get_execution_environment(
    Configuration().set_string("execution.target", "spark")
)
rows = spark.readStream.schema("key STRING, n LONG").parquet(base + "/in/*")
out = (
    env.from_dataframe(rows)
    .key_by(lambda r: r.key)
    .map(check, output_type=Types.TUPLE([Types.STRING(), Types.LONG()]))
    .name("check")
)
query = (
    out.to_dataframe().writeStream.format("parquet")
    .option("checkpointLocation", base + "/checkpoint")
    .trigger(availableNow=True)
    .start(base + "/out")
)
await_query(query)
"""

STREAM_EXPECTED = (
    r"step 'check': function check \(job\.py:\d+\) raised ValueError: no threes, got 3 "
    r"\(key 'b', record Row\(key='b', n=3\)\)"
)


def check(n: int) -> int:
    """``FAILING``'s step, for the in-process job."""
    if n == 3:
        raise ValueError(f"no threes, got {n}")
    return n


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "FS_COMPAT_SPARK_LOGGING"}
    environ.update(env)
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=600
    )


def _first_error(stderr: str) -> str:
    """The first line of ``stderr`` that reports an error: ``error: ...`` (fs-compat run), an
    exception line (``pkg.SomeError: ...``), or a log line at ERROR or WARN."""
    for line in stderr.replace("\r", "\n").splitlines():
        if re.match(r"(error: |[\w.]*(Error|Exception)\b)", line) or re.search(r" (ERROR|WARN) ", line):
            return line
    raise AssertionError(f"no error in:\n{stderr}")


def _no_spark_traces(stderr: str) -> None:
    for trace in SPARK_TRACES:
        assert trace not in stderr, f"{trace!r} reached the terminal:\n{stderr[-3000:]}"


def test_a_failing_job_on_the_local_target_shows_the_users_error(tmp_path: Path) -> None:
    (tmp_path / "job.py").write_text(FAILING)
    done = _run(["-m", "fs_compat.cli", "run", "--target", "local", "job.py"], tmp_path)
    assert done.returncode == 1
    assert re.fullmatch("error: " + EXPECTED, _first_error(done.stderr)), done.stderr


@pytest.mark.spark
@pytest.mark.slow
def test_a_failing_job_on_spark_shows_the_users_error_first_and_no_executor_traces(tmp_path: Path) -> None:
    (tmp_path / "job.py").write_text(FAILING)
    done = _run(["-m", "fs_compat.cli", "run", "--target", "spark", "job.py"], tmp_path)
    assert done.returncode == 1
    assert re.fullmatch("error: " + EXPECTED, _first_error(done.stderr)), done.stderr
    _no_spark_traces(done.stderr)
    if not os.environ.get("SPARK_REMOTE"):  # the embedded session's UI, announced once
        assert len(re.findall(r"^Spark UI: http://\S+:\d+$", done.stderr, re.MULTILINE)) == 1, done.stderr


@pytest.mark.spark
@pytest.mark.slow
def test_a_failing_job_on_spark_raises_the_users_error_with_sparks_chained() -> None:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", "spark")
    )
    env.from_collection([1, 2, 3, 4]).key_by(lambda n: n % 2).map(check).name("check").print()
    with pytest.raises(StepError) as info:
        env.execute("failing job")
    expected = EXPECTED.replace(r"check \(job\.py:\d+\)", r"check \(test_error_view\.py:\d+\)")
    assert re.fullmatch(expected, str(info.value))
    # Spark's exception, with the task's traceback, stays chained (not printed: quiet logging).
    spark_error = info.value.__context__
    assert spark_error is not None and type(spark_error).__module__.startswith("pyspark.")
    assert "Traceback (most recent call last)" in str(spark_error)
    assert info.value.__suppress_context__
    assert any("FS_COMPAT_SPARK_LOGGING=verbose" in note for note in info.value.__notes__)


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.classic_only  # Connect slice: README
def test_a_failed_streaming_query_raises_the_users_error_first(tmp_path: Path) -> None:
    (tmp_path / "job.py").write_text(FAILING_STREAM)
    done = _run(["job.py", str(tmp_path / "data")], tmp_path)
    assert done.returncode == 1
    first = _first_error(done.stderr)
    assert re.fullmatch(r"fs_compat\.runtime\._local\.StepError: " + STREAM_EXPECTED, first), done.stderr
    _no_spark_traces(done.stderr)
    assert "StreamingQueryException" in done.stderr  # the note names what is chained
    assert "[STREAM_FAILED]" not in done.stderr  # Spark's wrapper text stays out of the terminal
    # pyspark's transformWithStateInPandas driver worker: its prints after the first are silenced
    assert "Starting execution of UDF" not in done.stdout + done.stderr
    assert "finish init stage" not in done.stdout + done.stderr


def test_user_error_remakes_the_class_the_task_raised() -> None:
    from fs_compat.common._conform import DeclaredTypeError
    from fs_compat.runtime import StateAccessError
    from fs_compat.spark import user_error

    def wrapped(line: str) -> RuntimeError:
        return RuntimeError(f"[PYTHON_EXCEPTION] Traceback (most recent call last):\n  File ...\n{line}\n")

    state = user_error(wrapped("fs_compat.runtime._state.StateAccessError: state 's' is a list state"))
    assert type(state) is StateAccessError and str(state) == "state 's' is a list state"
    declared = user_error(wrapped("fs_compat.common._conform.DeclaredTypeError: 'a' (str) does not fit"))
    assert type(declared) is DeclaredTypeError and str(declared) == "'a' (str) does not fit"
    unknown = user_error(wrapped("fs_compat.nowhere.GoneError: it moved"))
    assert type(unknown) is StepError and str(unknown) == "it moved"
    # The error a task ended with is the last one its traceback names.
    first = "fs_compat.runtime._state.StateAccessError: first"
    both = user_error(wrapped(f"{first}\n\nfs_compat.runtime._local.StepError: last"))
    assert type(both) is StepError and str(both) == "last"
    assert all(isinstance(e.__context__, RuntimeError) for e in (state, declared, unknown, both))


def test_user_error_remakes_a_builtin_error_raised_by_fs_compat_itself_not_by_user_code() -> None:
    from fs_compat.spark import user_error

    def raised_in(path: str, line: str) -> RuntimeError:
        return RuntimeError(
            "[PYTHON_EXCEPTION] An exception was thrown from the Python worker:\n"
            "Traceback (most recent call last):\n"
            '  File "/site/fs_compat/bytewax/_datasource.py", line 195, in read\n'
            '    call(part.close, "`close`", step_id)\n'
            f'  File "{path}", line 131, in _next_batch\n'
            "    raise NotImplementedError(\n"
            "    ^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
            f"{line}\n SQLSTATE: 38000"
        )

    refusal = user_error(
        raised_in(
            "/site/fs_compat/bytewax/_datasource.py", "NotImplementedError: step 'inp': in-process only"
        )
    )
    assert type(refusal) is NotImplementedError and str(refusal) == "step 'inp': in-process only"
    assert isinstance(refusal.__context__, RuntimeError)
    # Raised by the user's own file (a frame after fs-compat's): Spark's exception stays as it is.
    users = raised_in("/home/me/job.py", "NotImplementedError: my own")
    assert user_error(users) is users
    # A name that is not a built-in exception is not remade.
    odd = raised_in("/site/fs_compat/x.py", "Warning2: no such class")
    assert user_error(odd) is odd
