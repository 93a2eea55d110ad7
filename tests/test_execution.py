"""``fs_compat.execution``: the one place that picks a job's target. Each front end passes its
own default (PyFlink jobs: ``spark``; Bytewax's ``run_main``: ``local``); an explicit value beats
``execution.target``, which beats ``FS_COMPAT_TARGET``. Only the resolution runs here."""

from __future__ import annotations

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main
from fs_compat.common import Configuration
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.datastream.tests.test_util import DataStreamTestSinkFunction
from fs_compat.execution import (
    LOCAL,
    SPARK,
    SPARK_STREAMING,
    TARGET_ENV,
    TARGET_KEY,
    default_settings,
    job_defaults,
    resolve_target,
)


@pytest.mark.parametrize("default", [LOCAL, SPARK])
def test_the_front_end_default_applies_when_nothing_says(default: str) -> None:
    assert resolve_target(default=default, environ={}) == default


def test_explicit_beats_configured_beats_environment() -> None:
    settings = {TARGET_KEY: "spark"}
    environ = {TARGET_ENV: "local"}
    assert resolve_target("local", settings, default=SPARK, environ=environ) == "local"
    assert resolve_target(None, settings, default=LOCAL, environ=environ) == "spark"
    assert resolve_target(None, {}, default=SPARK, environ=environ) == "local"


def test_empty_values_count_as_unset() -> None:
    assert resolve_target("", {TARGET_KEY: ""}, default=LOCAL, environ={TARGET_ENV: ""}) == "local"


def test_an_unknown_target_names_the_value_and_where_it_came_from() -> None:
    with pytest.raises(
        ValueError, match=r"execution.target must be 'local', 'spark' or 'spark-streaming', got 'flink'"
    ):
        resolve_target("flink", default=SPARK)
    with pytest.raises(ValueError, match=r"got 'flink' \(from FS_COMPAT_TARGET\)"):
        resolve_target(default=SPARK, environ={TARGET_ENV: "flink"})
    with pytest.raises(ValueError, match=r"got 'flink' \(from execution.target\)"):
        resolve_target(settings={TARGET_KEY: "flink"}, default=SPARK, environ={})


def test_spark_streaming_is_a_target() -> None:
    assert resolve_target("spark-streaming", default=SPARK) == SPARK_STREAMING
    assert resolve_target(default=LOCAL, environ={TARGET_ENV: "spark-streaming"}) == SPARK_STREAMING


def test_environment_defaults_reach_new_jobs_only_inside_the_block(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TARGET_ENV, raising=False)
    with default_settings({TARGET_KEY: "local", "parallelism.default": "3"}):
        assert job_defaults() == {TARGET_KEY: "local", "parallelism.default": "3"}
        env = StreamExecutionEnvironment.get_execution_environment()
        assert env._target() == "local"
        assert env.get_parallelism() == 3
    assert job_defaults() == {}
    assert StreamExecutionEnvironment.get_execution_environment()._target() == "spark"


def test_pyflink_and_bytewax_keep_their_own_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing set: a PyFlink job would run on Spark, while ``run_main`` runs in-process."""
    monkeypatch.delenv(TARGET_ENV, raising=False)
    assert StreamExecutionEnvironment.get_execution_environment()._target() == "spark"
    out: list[int] = []
    flow = Dataflow("default_target")
    op.output("out", op.input("inp", flow, TestingSource([1, 2])), TestingSink(out))
    run_main(flow)  # in-process: no Spark session is needed
    assert out == [1, 2]


def test_run_main_checks_its_target_as_pyflink_jobs_do() -> None:
    flow = Dataflow("bad_target")
    op.output("out", op.input("inp", flow, TestingSource([1])), TestingSink([]))
    with pytest.raises(ValueError, match=r"execution.target.*'flink'"):
        run_main(flow, _target="flink")


@pytest.mark.spark
@pytest.mark.slow
def test_a_job_configured_for_spark_streaming_runs_as_a_streaming_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(TARGET_ENV, raising=False)
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string(TARGET_KEY, "spark-streaming")
    )
    sink = DataStreamTestSinkFunction()
    env.from_collection([1, 2, 3]).map(lambda x: x * 10).add_sink(sink)
    summary = env.execute("tens").get_job_summary()
    assert sorted(sink.get_results()) == ["10", "20", "30"]
    assert summary.target.startswith("spark-streaming")
