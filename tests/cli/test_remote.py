"""``--remote URL``: ``fs-compat run`` and ``fs-compat demo`` run over Spark Connect, as
``SPARK_REMOTE`` does. Over a server elsewhere (``sc://``) the client needs no Java: the job runs
from a process that has none."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from connect_server import ConnectServer, classic_env

from fs_compat.cli import main

JOB = """\
from fs_compat.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
words = ["a", "b", "a", "c", "a", "b"]
env.from_collection(words).key_by(lambda w: w).map(lambda w: (w, 1)).name("pairs").print()
env.execute("remote job")
"""


@pytest.mark.parametrize("command", ["run", "demo"])
def test_master_and_remote_exclude_each_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("job.py").write_text(JOB)
    job = ["job.py"] if command == "run" else []
    args = [command, "--master", "local[2]", "--remote", "sc://127.0.0.1:1", *job]
    assert main(args) == 2
    assert capsys.readouterr() == (
        "",
        f"fs-compat {command}: --master local[2] and --remote sc://127.0.0.1:1 exclude each other: a Spark "
        "Connect server runs jobs on the master it was started with; drop --master, or --remote to start "
        "a session here\n",
    )


@pytest.fixture(scope="module")
def connect_url(spark_connect: str | None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The suite's Connect server when the suite runs over Connect, else one started here (this
    process holds the classic session; the job runs in a child process)."""
    if spark_connect is not None:
        yield spark_connect
        return
    server = ConnectServer("local[2]", tmp_path_factory.mktemp("connect-cli"))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.classic_only  # Connect slice: README
def test_run_remote_runs_the_job_over_spark_connect_without_java(connect_url: str, tmp_path: Path) -> None:
    (tmp_path / "job.py").write_text(JOB)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {k: v for k, v in classic_env(os.environ).items() if k not in ("JAVA_HOME", "FS_COMPAT_TARGET")}
    env["PATH"] = str(empty)  # no java: a thin client
    done = subprocess.run(
        [sys.executable, "-m", "fs_compat.cli", "run", "--remote", connect_url, "job.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.splitlines()
    printed = [re.sub(r"^\d+> ", "", line) for line in lines]  # ``N> ``: the cores' parallelism
    assert sorted(line for line in printed if line.startswith("(")) == sorted(
        f"({w!r}, 1)" for w in ["a", "b", "a", "c", "a", "b"]
    )
    header = next(line for line in lines if line.startswith("Job 'remote job' on "))
    assert header.startswith("Job 'remote job' on spark (local[2]): ")
    pairs = next(line for line in lines if line.strip().startswith("pairs"))
    assert pairs.split()[1:3] == ["6", "6"]
