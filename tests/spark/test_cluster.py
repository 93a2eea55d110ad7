"""A keyed PyFlink-style job on a real Spark standalone cluster: one master and two workers on
127.0.0.1, started with the ``spark-class`` script that pyspark ships.

This process already holds the suite's local SparkSession (a process has one SparkContext), so
the job runs in a child Python process with ``spark.master=spark://127.0.0.1:<port>``; its results
must equal the same job's on the in-process target. The job also runs over a Spark Connect server
whose master is the cluster (``connect_server``, started on a free port, stopped by PID).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cluster_job
import pyspark
import pytest
from connect_server import ConnectServer, classic_env

from fs_compat.common import Configuration

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SPARK_HOME = os.path.dirname(pyspark.__file__)
SPARK_CLASS = os.path.join(SPARK_HOME, "bin", "spark-class")
HOST = "127.0.0.1"
START_DEADLINE_S = 60.0
JOB_TIMEOUT_S = 120.0
JVM_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


class Cluster:
    """A standalone master and its workers, each a ``spark-class`` process logging to a file."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.port = _free_port()
        self.webui_port = _free_port()
        self.url = f"spark://{HOST}:{self.port}"
        self.master_json = f"http://{HOST}:{self.webui_port}/json"
        self.worker_json: list[str] = []
        self.procs: list[tuple[subprocess.Popen[bytes], Path]] = []
        self.env = {
            **classic_env(os.environ),  # (the suite may run over Spark Connect)
            "SPARK_HOME": SPARK_HOME,
            "SPARK_LOCAL_IP": HOST,
            "SPARK_LOG_DIR": str(tmp / "logs"),
            "SPARK_WORKER_DIR": str(tmp / "work"),
            "PYSPARK_PYTHON": sys.executable,
            # Short-lived JVMs on a small machine: C1 only, less JIT work competing for the cores.
            "SPARK_DAEMON_JAVA_OPTS": JVM_OPTS,
            # No REST submission server (it would take the fixed port 6066).
            "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
        }

    def _start(self, name: str, *args: str) -> None:
        log = self.tmp / f"{name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [SPARK_CLASS, *args], stdout=out, stderr=subprocess.STDOUT, env=self.env, cwd=self.tmp
            )
        self.procs.append((proc, log))

    def start(self, workers: int) -> None:
        """Start the master, and the workers once it is ALIVE (a worker that registers earlier
        is ignored and retries only ~10 s later)."""
        (self.tmp / "logs").mkdir()
        (self.tmp / "work").mkdir()
        self._start(
            "master",
            "org.apache.spark.deploy.master.Master",
            *("--host", HOST, "--port", str(self.port), "--webui-port", str(self.webui_port)),
        )
        self.wait_until("master ALIVE", lambda: _get_json(self.master_json).get("status") == "ALIVE")
        for i in range(workers):
            webui = _free_port()
            self.worker_json.append(f"http://{HOST}:{webui}/json")
            self._start(
                f"worker-{i}",
                "org.apache.spark.deploy.worker.Worker",
                self.url,
                *("--cores", "1", "--memory", "1g", "--webui-port", str(webui), "--host", HOST),
                *("--work-dir", str(self.tmp / "work" / f"worker-{i}")),
            )

    def logs(self) -> str:
        parts = []
        for proc, log in self.procs:
            text = log.read_text(errors="replace") if log.exists() else "<no log>"
            parts.append(f"--- {log.name} (pid {proc.pid}, exit code {proc.poll()}) ---\n{text[-4000:]}")
        return "\n".join(parts)

    def wait_until(self, what: str, ready: Callable[[], bool], deadline_s: float = START_DEADLINE_S) -> None:
        """Poll ``ready`` until it holds; fail with every process's log when ``deadline_s`` passes
        or a cluster process has exited."""
        deadline = time.monotonic() + deadline_s
        while True:
            try:
                if ready():
                    return
            except (OSError, urllib.error.URLError, ValueError):
                pass  # not listening yet
            dead = [log.name for proc, log in self.procs if proc.poll() is not None]
            if dead or time.monotonic() > deadline:
                why = f"{', '.join(dead)} exited" if dead else f"not within {deadline_s:.0f} s"
                pytest.fail(f"Spark standalone cluster: {what}: {why}\n{self.logs()}")
            time.sleep(0.2)  # polling interval, not a wait for time to pass

    def alive_workers(self) -> int:
        state = _get_json(self.master_json)
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def stop(self) -> None:
        for proc, _log in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for proc, _log in reversed(self.procs):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    assert os.access(SPARK_CLASS, os.X_OK), f"{SPARK_CLASS} is missing or not executable"
    c = Cluster(tmp_path)
    try:
        c.start(workers=2)
        c.wait_until("2 ALIVE workers on the master", lambda: c.alive_workers() == 2)
        yield c
    finally:
        c.stop()


def _as_tuples(rows: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in rows)


def _expected() -> list[tuple[Any, ...]]:
    """The job's results on the in-process target (checked: every key counted 1..n)."""
    expected = _as_tuples(
        cluster_job.build_and_collect(Configuration().set_string("execution.target", "local"))
    )
    assert len(expected) == cluster_job.N_RECORDS
    # every key counted 1..n over its records, as the keyed state must
    per_key: dict[str, list[int]] = {}
    for key, _value, count in sorted(expected, key=lambda r: r[1]):
        per_key.setdefault(key, []).append(count)
    assert len(per_key) == cluster_job.N_KEYS
    assert all(counts == list(range(1, len(counts) + 1)) for counts in per_key.values())
    return expected


def _run_job(cluster: Cluster, tmp_path: Path, *args: str, logs: Callable[[], str] | None = None) -> Any:
    """Run ``cluster_job.py ARGS`` in a child process; its report (results, master, app id)."""
    env = {**classic_env(os.environ), "PYSPARK_PYTHON": sys.executable}  # (the suite may run over Connect)
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env["SPARK_LOCAL_IP"] = HOST
    env.pop("FS_COMPAT_TARGET", None)  # the job's Configuration picks the target
    more = (lambda: cluster.logs() + "\n" + logs()) if logs is not None else cluster.logs
    try:
        child = subprocess.run(
            [sys.executable, cluster_job.__file__, *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=JOB_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"cluster job did not finish within {JOB_TIMEOUT_S:.0f} s\n{exc.stderr!r}\n{more()}")
    lines = [ln for ln in child.stdout.splitlines() if ln.startswith(cluster_job.RESULT_PREFIX)]
    assert child.returncode == 0 and len(lines) == 1, (
        f"cluster job failed (exit code {child.returncode})\n--- stdout ---\n{child.stdout[-4000:]}\n"
        f"--- stderr ---\n{child.stderr[-8000:]}\n{more()}"
    )
    return json.loads(lines[0][len(cluster_job.RESULT_PREFIX) :])


def _answer(cluster: Cluster, url: str) -> Any:
    """``url``'s JSON, asked again while a cluster process's web UI drops the connection (a worker's
    did once in CI, as its application ended: ``RemoteDisconnected``)."""
    answers: list[Any] = []

    def answered() -> bool:
        answers.append(_get_json(url))
        return True

    cluster.wait_until(f"{url} answered", answered)
    return answers[-1]


def _check_application_ran_on_every_worker(cluster: Cluster, app_id: str) -> None:
    """The master saw the application finish, and each worker ran one of its executors (both
    workers were ALIVE before the application came, and it asked for 2 cores)."""

    def completed() -> bool:
        return app_id in {a["id"] for a in _get_json(cluster.master_json).get("completedapps", [])}

    cluster.wait_until(f"application {app_id} completed on the master", completed)
    workers_used = []
    for url in cluster.worker_json:
        state = _answer(cluster, url)
        if any(e.get("appid") == app_id for e in state["finishedexecutors"] + state["executors"]):
            workers_used.append(url)
    assert workers_used == cluster.worker_json, (
        f"executors of {app_id} ran on {workers_used}, not on every worker\n{cluster.logs()}"
    )


@pytest.mark.classic_only  # Connect slice: README
def test_keyed_job_on_standalone_cluster_matches_local(cluster: Cluster, tmp_path: Path) -> None:
    expected = _expected()
    report = _run_job(cluster, tmp_path, cluster.url, JVM_OPTS)
    assert report["master"] == cluster.url
    assert _as_tuples(report["results"]) == expected
    _check_application_ran_on_every_worker(cluster, report["app_id"])


def test_keyed_job_over_a_connect_server_on_the_cluster_matches_local(
    cluster: Cluster, tmp_path: Path
) -> None:
    """The same job from a Spark Connect client: the Connect server is the cluster's application
    (its driver), started on the cluster's master with the application's settings; the job runs
    in a child process that only knows the server's ``sc://`` URL."""
    expected = _expected()
    java = {"spark.driver.extraJavaOptions": JVM_OPTS, "spark.executor.extraJavaOptions": JVM_OPTS}
    server = ConnectServer(cluster.url, tmp_path / "connect", conf={**cluster_job.APP_SETTINGS, **java})
    try:
        server.start()
        report = _run_job(cluster, tmp_path, "--remote", server.url, logs=server.tail)
    finally:
        server.stop()  # the application ends with its driver
    assert report["master"] == cluster.url
    assert _as_tuples(report["results"]) == expected
    _check_application_ran_on_every_worker(cluster, report["app_id"])
