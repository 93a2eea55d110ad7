"""A Spark Connect server for the tests: the ``SparkConnectServer`` class of the Spark
distribution that pyspark ships, started with its ``spark-submit`` script on a free port of
127.0.0.1 and stopped by its PID.

The server is a process of its own (not ``SparkSession.builder.remote("local[2]")``, which starts
one inside this process on the fixed port 15002): the tests' process then holds no SparkContext
at all, so a job that reaches for one fails, and several test runs on one machine do not collide
on a port. Its Python workers run this interpreter with this process's environment
(``PYTHONPATH`` included), as a local session's do.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pyspark

SPARK_HOME = os.path.dirname(pyspark.__file__)
SPARK_SUBMIT = os.path.join(SPARK_HOME, "bin", "spark-submit")
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
HOST = "127.0.0.1"
START_DEADLINE_S = 90.0
#: The suite's shuffle partitions (``spark.sql.shuffle.partitions``), in the server's session and
#: in the classic one (``conftest.pytest_runtest_setup``): two, one per core of the ``local[2]``
#: machines CI runs on. fs-compat's embedded default (8; ``EMBEDDED_DEFAULTS``) is for users'
#: machines; every streaming query's state operators run one task per shuffle partition in every
#: micro-batch, so 8 on 2 cores cost the suite ~30 % of its streaming time.
SHUFFLE_PARTITIONS = "2"
#: What the suite's embedded sessions run with (``EMBEDDED_DEFAULTS``, and ``SHUFFLE_PARTITIONS``),
#: for the server's session.
SERVER_CONF: Mapping[str, str] = {
    "spark.ui.enabled": "true",
    "spark.sql.shuffle.partitions": SHUFFLE_PARTITIONS,
    "spark.python.unix.domain.socket.enabled": "true",
}


#: What PySpark's Connect client puts in (or reads from) the environment: a child process that
#: must start a classic session of its own (a cluster job, the demo, a server) goes without them.
CONNECT_VARIABLES = ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE")


def classic_env(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without ``CONNECT_VARIABLES``."""
    return {k: v for k, v in environ.items() if k not in CONNECT_VARIABLES}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


class ConnectServer:
    """One Spark Connect server process on ``master``, logging to ``log_dir/connect-server.log``;
    ``url`` is what ``SparkSession.builder.remote`` (or ``SPARK_REMOTE``) takes."""

    def __init__(self, master: str, log_dir: Path, conf: Mapping[str, str] | None = None) -> None:
        self.master = master
        self.port = free_port()
        self.url = f"sc://{HOST}:{self.port}"
        #: The server's web UI (and Spark's REST API under ``/api/v1``).
        self.ui_port = free_port()
        self.ui_url = f"http://{HOST}:{self.ui_port}"
        self.log = log_dir / "connect-server.log"
        self.conf = {
            **SERVER_CONF,
            "spark.connect.grpc.binding.address": HOST,
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.ui.port": str(self.ui_port),
            **(conf or {}),
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the server and wait until it accepts connections (failing with its log when it
        exits or does not within ``START_DEADLINE_S``)."""
        env = {
            **classic_env(os.environ),  # the server is the classic side
            "SPARK_HOME": SPARK_HOME,
            "SPARK_LOCAL_IP": HOST,
            "PYSPARK_PYTHON": sys.executable,
        }
        args = [SPARK_SUBMIT, "--class", SERVER_CLASS, "--master", self.master]
        for key, value in self.conf.items():
            args += ["--conf", f"{key}={value}"]
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                args, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=self.log.parent
            )
        deadline = time.monotonic() + START_DEADLINE_S
        while not self._listening():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                why = "exited" if self.proc.poll() is not None else f"not up within {START_DEADLINE_S:.0f} s"
                self.stop()
                raise RuntimeError(f"Spark Connect server on {self.master}: {why}\n{self.tail()}")
            time.sleep(0.2)  # polling interval, not a wait for time to pass

    def _listening(self) -> bool:
        try:
            with socket.create_connection((HOST, self.port), timeout=1):
                return True
        except OSError:
            return False

    def tail(self, chars: int = 4000) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else "<no log>"
        return f"--- {self.log} ---\n{text[-chars:]}"

    def stop(self) -> None:
        """Stop the server by its PID (``spark-submit`` execs the JVM: the PID is the server's)."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
