"""``fs-compat run``'s ``run_job``: runs a job file as ``__main__`` on Spark, prints each
executed job's summary (records in / out per step, state, wall time); a failing job exits 1 with
one line naming the step; ``--conf`` settings reach the job's environment."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fs_compat.cli._run import run_job

WORDS = "the quick brown fox jumps over the lazy dog and the quick cat jumps over the fox again".split()

JOB = f"""
from fs_compat.datastream import StreamExecutionEnvironment

WORDS = {WORDS!r}

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)  # one subtask: the rolling counts in input order, no ``N> ``
counts = (
    env.from_collection(WORDS).name("words")
    .filter(lambda w: len(w) > 3).name("long words")
    .map(lambda w: (w, 1)).name("pairs")
    .key_by(lambda p: p[0])
    .reduce(lambda a, b: (a[0], a[1] + b[1])).name("counts")
)
counts.print()
env.execute("word count")
"""

FAILING = """
from fs_compat.datastream import StreamExecutionEnvironment


def check(n):
    if n == 3:
        raise ValueError(f"no threes, got {n}")
    return n


env = StreamExecutionEnvironment.get_execution_environment()
env.from_collection([1, 2, 3, 4]).map(check).name("check").print()
env.execute()
"""


def _table(out: str) -> dict[str, list[str]]:
    """The summary's rows: step name -> its four cells."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Job "))
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("  "):
            break
        cells = line.split()
        rows[" ".join(cells[:-4])] = cells[-4:]
    return rows


def _n(value: int) -> str:
    return f"{value:,}"


@pytest.mark.spark
@pytest.mark.slow
def test_run_job_prints_the_summary_with_records_per_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "word_count.py"
    job.write_text(JOB)
    assert run_job(job, master=None, conf={}) == 0
    out = capsys.readouterr().out
    long_words = [w for w in WORDS if len(w) > 3]
    # The job's own output (the print sink): the rolling counts.
    assert out.splitlines()[: len(long_words)] == [
        f"({w!r}, {long_words[: i + 1].count(w)})" for i, w in enumerate(long_words)
    ]
    assert "Job 'word count' on spark (" in out
    table = _table(out)
    state_bytes = table["counts"][3]
    assert int(state_bytes.replace(",", "")) > 0
    n_in, n_long = _n(len(WORDS)), _n(len(long_words))
    assert table == {
        "words": ["-", n_in, "-", "-"],
        "long words": [n_in, n_long, "-", "-"],
        "pairs": [n_long, n_long, "-", "-"],
        "counts": [n_long, n_long, _n(len(set(long_words))), state_bytes],
        "Print": [n_long, "-", "-", "-"],
    }


@pytest.mark.spark
@pytest.mark.slow
def test_run_job_failing_step_exits_1_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "failing.py"
    job.write_text(FAILING)
    assert run_job(job, master=None, conf={}) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    # The StepError's message: the step, the function (where it is defined, when known), the
    # exception and the record.
    assert re.fullmatch(
        r"error: step 'check': function( check \(failing\.py:\d+\))? raised "
        r"ValueError: no threes, got 3 \(record 3\)",
        errors[0],
    ), errors[0]


def test_run_job_conf_reaches_the_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = tmp_path / "settings.py"
    job.write_text(
        "import sys\n"
        "from fs_compat.datastream import StreamExecutionEnvironment\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "print('parallelism', env.get_parallelism(), 'argv', sys.argv[1:])\n"
        "env.from_collection([1, 2, 3]).filter(lambda n: n > 1).print()\n"
        "env.execute('tiny')\n"
        "sys.exit(3)\n"
    )
    conf = {"execution.target": "local", "parallelism.default": "3"}
    assert run_job(job, master=None, conf=conf) == 3
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "parallelism 3 argv []"
    assert "Job 'tiny' on local: 3 steps in " in out
    assert _table(out) == {
        "Collection Source": ["-", "3", "-", "-"],
        "Filter": ["3", "2", "-", "-"],
        "Print": ["2", "-", "-", "-"],
    }


def test_run_job_without_execute_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = tmp_path / "nothing.py"
    job.write_text("x = 1\n")
    assert run_job(job, master=None, conf={"execution.target": "local"}) == 0
    assert "no job was executed" in capsys.readouterr().err
