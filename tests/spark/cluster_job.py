"""The keyed job of ``test_cluster.py``: a PyFlink-style per-key counter (``KeyedProcessFunction``
with a ``ValueState``) over a small collection, parallelism 2.

``build_and_collect(configuration)`` runs it on whatever target the configuration picks. Run as a
script (``python cluster_job.py spark://host:port [java options]``) it runs the job on that Spark
master and prints one JSON line: the results and the master/application its SparkSession used.
``python cluster_job.py --remote sc://host:port`` runs it over that Spark Connect server instead
(whose master is the cluster's).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from fs_compat.common import Configuration, Types
from fs_compat.datastream import KeyedProcessFunction, RuntimeContext, StreamExecutionEnvironment
from fs_compat.datastream.state import ValueStateDescriptor

N_RECORDS = 200
N_KEYS = 10
RESULT_PREFIX = "CLUSTER-JOB-RESULT "


class CountPerKey(KeyedProcessFunction):
    """Emits ``(key, value, count of the key's records so far)`` for each record."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        yield value[0], value[1], count


def records() -> list[tuple[str, int]]:
    return [(f"key-{(i * 7) % N_KEYS}", i) for i in range(N_RECORDS)]


def build_and_collect(configuration: Configuration) -> list[tuple[str, int, int]]:
    env = StreamExecutionEnvironment.get_execution_environment(configuration)
    env.set_parallelism(2)
    ds = env.from_collection(records(), type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    out = ds.key_by(lambda r: r[0], key_type=Types.STRING()).process(
        CountPerKey(), output_type=Types.TUPLE([Types.STRING(), Types.INT(), Types.INT()])
    )
    with out.execute_and_collect() as results:
        return [tuple(r) for r in results]  # type: ignore[misc]


#: What the cluster application gets (a Connect server is started with them instead).
APP_SETTINGS = {
    "spark.app.name": "fs-compat-cluster-test",
    "spark.executor.memory": "512m",
    "spark.cores.max": "2",
}


def main(master: str, java_options: str = "") -> None:
    config = Configuration().set_string("execution.target", "spark")
    if master == "--remote":  # over Spark Connect: the server has the master and the settings
        config.set_string("spark.remote", java_options)
    else:
        config.set_string("spark.driver.extraJavaOptions", java_options)
        config.set_string("spark.executor.extraJavaOptions", java_options)
        config.set_string("spark.master", master)
        for key, value in APP_SETTINGS.items():
            config.set_string(key, value)
    results = build_and_collect(config)
    from pyspark.sql import SparkSession

    from fs_compat.spark import spark_master

    spark = SparkSession.getActiveSession()
    assert spark is not None
    report = {
        "results": results,
        "master": spark_master(spark),
        "app_id": spark.conf.get("spark.app.id"),
    }
    spark.stop()
    print(RESULT_PREFIX + json.dumps(report), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
