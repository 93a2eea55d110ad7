"""Spark's UI shows fs-compat jobs by their names: the Spark jobs of a batch job carry the job's
name (job group, tag) and its steps' names (description), read back through Spark's REST API
(``/api/v1/applications/<app>/jobs``), for a PyFlink job and a Bytewax flow.

Over Spark Connect the server sets each job's description itself; the job's tag is what
carries the name there, in the server's UI (``FS_COMPAT_TEST_CONNECT_UI``: its address,
set by the suite's Connect server)."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from typing import Any

import pytest

from fs_compat.bytewax import operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main
from fs_compat.common import Configuration
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.spark import is_connect, spark_session
from fs_compat.spark._session import job_tag

pytestmark = pytest.mark.spark

#: The suite's Spark Connect server's UI address (tests/conftest.py), when it has one.
CONNECT_UI_ENV = "FS_COMPAT_TEST_CONNECT_UI"


def _ui(spark: Any) -> str:
    if not is_connect(spark):
        url = spark.sparkContext.uiWebUrl
        assert url, "the embedded session starts with its UI on"
        return str(url)
    url = os.environ.get(CONNECT_UI_ENV)
    if not url:
        pytest.skip("the Spark Connect server's UI is not reachable from here")
    return url


def _jobs_tagged(tag: str, wanted: int = 1) -> list[dict[str, Any]]:
    """The jobs of the session's application whose tags name ``tag`` (over Connect, the server
    prefixes and suffixes a client's tag), waiting for Spark's listener to record them."""
    ui = _ui(spark_session())
    with urllib.request.urlopen(f"{ui}/api/v1/applications", timeout=60) as response:
        apps = json.load(response)
    app = apps[0]["id"]
    deadline = time.monotonic() + 20
    while True:
        with urllib.request.urlopen(f"{ui}/api/v1/applications/{app}/jobs", timeout=60) as response:
            jobs = [j for j in json.load(response) if any(tag in t for t in j.get("jobTags", []))]
        if len(jobs) >= wanted or time.monotonic() > deadline:
            return jobs
        time.sleep(0.2)  # polling Spark's listener bus, not a wait for time to pass


def test_a_pyflink_jobs_spark_jobs_carry_its_name_and_its_steps() -> None:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", "spark")
    )
    doubled = env.from_collection([1, 2, 3]).map(lambda v: v * 2).name("double").uid("double-uid")
    doubled.key_by(lambda v: v % 2).reduce(lambda a, b: a + b).name("sum per parity").print()
    env.execute("ui job")
    jobs = _jobs_tagged(job_tag("ui job"))
    assert jobs, "no Spark job carries the job's tag"
    if not is_connect(spark_session()):  # over Connect the server sets the description
        for job in jobs:
            assert job["jobGroup"] == "ui job"
            assert job["description"].startswith("ui job: ")
            assert "double" in job["description"] and "sum per parity" in job["description"]


def test_a_bytewax_flows_spark_jobs_carry_its_id_and_its_step_ids() -> None:
    flow = Dataflow("ui_flow")
    numbers = op.input("numbers", flow, TestingSource([1, 2, 3]))
    tripled = op.map("triple", numbers, lambda x: x * 3)
    out: list[int] = []
    op.output("collect", tripled, TestingSink(out))
    run_main(flow, _target="spark")
    assert sorted(out) == [3, 6, 9]
    jobs = _jobs_tagged(job_tag("ui_flow"))
    assert jobs, "no Spark job carries the flow's tag"
    if not is_connect(spark_session()):
        assert all(job["jobGroup"] == "ui_flow" for job in jobs)
        assert any("triple" in job["description"] for job in jobs)
