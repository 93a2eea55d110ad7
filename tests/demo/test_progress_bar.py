"""A batch job on Spark shows a progress bar on stderr while it runs when stderr is a terminal
(Spark's tasks, records per step), after a few seconds, and clears it; nothing when stderr is
not a terminal."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from fs_compat.cli import main
from fs_compat.spark._bar import ProgressBar, Snapshot, records_so_far


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_bar_waits_draws_in_place_and_clears() -> None:
    out, clock = _Terminal(), _Clock()
    bar = ProgressBar(out, clock=clock, after=3.0, width=80)
    bar.update(Snapshot(1, 4, (("count", 10),)))
    assert out.getvalue() == ""  # not yet: the job has run for less than 3 s
    clock.now += 3.5
    bar.update(Snapshot(1, 4, (("count", 10),)))
    clock.now += 1.0
    bar.update(Snapshot(4, 4, (("count", 2500),)))
    first = "[#####...............] 1/4 tasks | count 10 | 3.5 s"
    second = "[####################] 4/4 tasks | count 2,500 | 4.5 s"
    assert out.getvalue() == "\r" + first + "\r" + second.ljust(len(first))
    bar.close()
    assert out.getvalue().endswith("\r" + " " * len(second) + "\r")


def test_no_bar_when_not_a_terminal() -> None:
    out, clock = io.StringIO(), _Clock()
    bar = ProgressBar(out, clock=clock, after=0.0)
    clock.now += 10
    bar.update(Snapshot(1, 2))
    bar.close()
    assert out.getvalue() == ""


def test_records_so_far_add_up_the_finished_tasks() -> None:
    updates = {("in", 2, 0): (3, 1), ("in", 2, 1): (5, 0), ("state", 2, 0): (1, 10), ("in", 3, 0): (7,)}
    assert records_so_far(updates, {2: "join", 3: "count", 4: "later"}) == (("join", 9), ("count", 7))


JOB = """\
from fs_compat.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.from_collection(list(range(50))).key_by(lambda n: n % 5).map(lambda n: n + 1).name("plus one").print()
env.execute("bar job")
"""


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    Path("job.py").write_text(JOB)
    return "job.py"


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.classic_only  # Connect slice: README
def test_a_terminal_shows_the_bar(job: str) -> None:
    """``fs-compat run`` with stderr on a pseudo-terminal, the bar's delay set to 0 s."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    cmd = [
        sys.executable,
        "-m",
        "fs_compat.cli",
        "run",
        "--target",
        "spark",
        "--conf",
        "spark.fs_compat.progress.afterSeconds=0",
        job,
    ]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=follower, env=env) as proc:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: the job ended
                break
            if not chunk:
                break
            chunks.append(chunk)
        out = proc.stdout.read().decode() if proc.stdout is not None else ""
    os.close(leader)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")
    err = b"".join(chunks).decode(errors="replace")
    assert "Job 'bar job' on spark" in out, out[-600:]
    drawn = [part for part in err.split("\r") if " tasks | " in part]
    assert drawn, err
    assert drawn[0].startswith("[") and drawn[-1].rstrip().endswith(" s")


@pytest.mark.spark
@pytest.mark.slow
def test_no_bar_when_stderr_is_not_a_terminal(job: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--target", "spark", "--conf", "spark.fs_compat.progress.afterSeconds=0", job]) == 0
    captured = capsys.readouterr()
    assert "Job 'bar job' on spark" in captured.out
    assert " tasks | " not in captured.err
    assert "\r" not in captured.err
