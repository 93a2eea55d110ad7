"""``python -m fs_compat.bytewax.run``: Bytewax's entry point, its import strings and options."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fs_compat.bytewax.recovery import init_db_dir
from fs_compat.bytewax.run import main

REPO = Path(__file__).resolve().parents[2]

FLOWS = """
import fs_compat.bytewax.operators as op
from fs_compat.bytewax.connectors.files import FileSource
from fs_compat.bytewax.connectors.stdio import StdOutSink
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.testing import TestingSource


def get_flow(prefix, times=1):
    flow = Dataflow("factory")
    s = op.input("inp", flow, TestingSource(["a", "b"]))
    op.output("out", op.map("m", s, lambda x: prefix + x * times), StdOutSink())
    return flow


def lines(path):
    flow = Dataflow("lines")
    op.output("out", op.input("inp", flow, FileSource(path, batch_size=1)), StdOutSink())
    return flow


flow = get_flow(">")
other = get_flow("+", times=2)
not_a_flow = 42
"""


@pytest.fixture
def flows(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A flows file with a name of its own (modules stay imported between tests)."""
    path = tmp_path / f"flows_{request.node.name}.py"
    path.write_text(FLOWS)
    return path


def test_runs_the_flow_of_a_file(flows: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main([str(flows)])
    assert capsys.readouterr().out == ">a\n>b\n"
    main([f"{flows}:other"])
    assert capsys.readouterr().out == "+aa\n+bb\n"


def test_calls_a_factory_with_literal_arguments(flows: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main([f"{flows}:get_flow('#', times=3)"])
    assert capsys.readouterr().out == "#aaa\n#bbb\n"


def test_reports_what_it_cannot_find(flows: Path) -> None:
    with pytest.raises(AttributeError, match="Failed to find attribute 'nope'"):
        main([f"{flows}:nope"])
    with pytest.raises(RuntimeError, match="A valid Bytewax dataflow was not obtained from"):
        main([f"{flows}:not_a_flow"])
    with pytest.raises(TypeError, match="could not be called with the specified arguments"):
        main([f"{flows}:get_flow()"])
    with pytest.raises(ValueError, match="Failed to parse arguments as literal values"):
        main([f"{flows}:get_flow(prefix)"])
    with pytest.raises(ImportError, match="Could not import 'no_such_module_here'"):
        main(["no_such_module_here:flow"])


@pytest.mark.in_process("recovery (run_main recovery_config)")
def test_recovery_options_resume_where_the_last_run_stopped(
    flows: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, recovery = tmp_path / "in.txt", tmp_path / "rec"
    data.write_text("one\ntwo\n")
    recovery.mkdir()
    init_db_dir(recovery, 1)
    args = [f"{flows}:lines({str(data)!r})", "-r", str(recovery), "-s", "0", "-b", "0"]
    main(args)
    assert capsys.readouterr().out == "one\ntwo\n"
    with data.open("a") as f:
        f.write("three\n")
    main(args)
    assert capsys.readouterr().out == "three\n"
    with pytest.raises(SystemExit):  # recovery needs -s and -b, as in Bytewax
        main([str(flows), "-r", str(recovery)])
    assert "must be set" in capsys.readouterr().err


def test_one_process_only(flows: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main([str(flows), "-w", "2", "-i", "0", "-a", "localhost:2101"])
    assert capsys.readouterr().out == ">a\n>b\n"
    with pytest.raises(NotImplementedError, match="one process"):
        main([str(flows), "-i", "0", "-a", "localhost:2101;localhost:2102"])
    with pytest.raises(SystemExit):
        main([str(flows), "-i", "0"])


def _python_m(module: str, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m module args`` in a child process with this repository on its path and ``env``
    added to the environment (``FS_COMPAT_TARGET`` only when ``env`` sets it)."""
    environ = {**os.environ, "PYTHONPATH": str(REPO)}
    environ.pop("FS_COMPAT_TARGET", None)
    environ.update(env)
    command = [sys.executable, "-m", module, *args]
    return subprocess.run(command, env=environ, capture_output=True, text=True, timeout=timeout, check=False)


def test_python_dash_m(flows: Path) -> None:
    done = _python_m("fs_compat.bytewax.run", f"{flows}:get_flow('-')", BYTEWAX_WORKERS_PER_PROCESS="2")
    assert (done.returncode, done.stdout) == (0, "-a\n-b\n"), done.stderr


def test_python_dash_m_testing_runs_its_processes_as_workers_of_one(flows: Path) -> None:
    def testing(*args: str) -> subprocess.CompletedProcess[str]:
        return _python_m("fs_compat.bytewax.testing", str(flows), *args)

    done = testing("-w", "2", "-p", "1")
    assert (done.returncode, done.stdout) == (0, ">a\n>b\n"), done.stderr
    # Bytewax starts 2 processes of 2 workers, one cluster that reads the input once.
    done = testing("-p", "2", "-w", "2")
    assert (done.returncode, done.stdout) == (0, ">a\n>b\n"), done.stderr
    done = testing("-p", "0")
    assert done.returncode == 2 and "the processes option must be at least 1; got 0" in done.stderr


def test_the_processes_of_python_dash_m_testing_are_workers(
    flows: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fs_compat.bytewax import run

    seen: list[int] = []
    monkeypatch.setattr(run, "cli_main", lambda flow, **options: seen.append(options["workers_per_process"]))
    run.main([str(flows), "-p", "3", "-w", "2"], testing=True)
    run.main([str(flows), "-w", "2"], testing=True)
    assert seen == [6, 2]


PRINTING_FLOW = """
import fs_compat.bytewax.operators as op
from fs_compat.bytewax.connectors.stdio import StdOutSink
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.inputs import DynamicSource, StatelessSourcePartition


class Letters(StatelessSourcePartition):
    def __init__(self):
        self.left = [["a", "b"], ["c"]]

    def next_batch(self):
        if not self.left:
            raise StopIteration()
        return self.left.pop(0)


class Source(DynamicSource):
    def build(self, step_id, worker_index, worker_count):
        print(f"worker {worker_index}/{worker_count} reading")
        return Letters()


def shout(x):
    print("calc", x)
    return x.upper()


flow = Dataflow("printing")
s = op.input("inp", flow, Source())
op.output("out", op.map("shout", s, shout), StdOutSink())
"""


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.classic_only  # the subprocess starts a classic session (Connect: the same code path, below)
@pytest.mark.parametrize("target", ["local", "spark"])
def test_what_a_source_and_a_step_function_print_reaches_stdout(tmp_path: Path, target: str) -> None:
    """``print()`` in a source's ``build`` and in a step's function prints to standard output on
    every target. In-process the lines interleave with the sink's as the items move; on Spark the
    functions run in Spark's workers, and ``run_main`` prints their lines after the job, before
    what the sinks and inspectors print (bytewax.md, "Differences on Spark")."""
    path = tmp_path / "printing_flow.py"
    path.write_text(PRINTING_FLOW)
    done = _python_m("fs_compat.bytewax.run", f"{path}:flow", timeout=300, FS_COMPAT_TARGET=target)
    assert done.returncode == 0, done.stderr
    expected = {
        "local": "worker 0/1 reading\ncalc a\ncalc b\nA\nB\ncalc c\nC\n",
        "spark": "worker 0/1 reading\ncalc a\ncalc b\ncalc c\nA\nB\nC\n",
    }
    assert done.stdout == expected[target], done.stderr
    assert "calc " not in done.stderr
