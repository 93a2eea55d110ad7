"""``spark.*`` settings of the environment's Configuration reach the Spark adapter's session.

This process has one SparkContext (the suite's shared local session), so a ``spark.master``
other than its master must fail loudly, naming both, instead of running somewhere else. That a
new session starts with the configured ``spark.master`` is shown by ``test_cluster.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from fs_compat.common import Configuration
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.spark import spark_master, spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow]

OTHER_MASTER = "spark://127.0.0.1:1"


@pytest.fixture(scope="module")
def active_master() -> str:
    master = spark_master(spark_session())  # the shared session, started if need be
    assert master is not None and master != OTHER_MASTER
    return master


def _job(settings: dict[str, str]) -> Any:
    config = Configuration().set_string("execution.target", "spark")
    for key, value in settings.items():
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    return env.from_collection([1, 2, 3]).map(lambda v: v * 10)


def test_other_master_than_the_active_session_is_an_error(active_master: str) -> None:
    with pytest.raises(ValueError) as info:
        spark_session({"spark.master": OTHER_MASTER})
    assert OTHER_MASTER in str(info.value) and active_master in str(info.value)


def test_spark_master_from_configuration_reaches_the_session(active_master: str) -> None:
    ds = _job({"spark.master": OTHER_MASTER})
    with pytest.raises(ValueError) as info:
        ds.execute_and_collect()
    assert OTHER_MASTER in str(info.value) and active_master in str(info.value)


def test_same_master_as_the_active_session_runs(active_master: str) -> None:
    assert spark_master(spark_session({"spark.master": active_master})) == active_master
    with _job({"spark.master": active_master}).execute_and_collect() as results:
        assert sorted(results) == [10, 20, 30]
