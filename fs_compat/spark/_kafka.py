"""Spark's Kafka connector, which pyspark does not bundle: its ``spark.jars.packages`` coordinate
for the running pyspark, and the error that names it when a Kafka read or write finds it missing
(one for every front end's Kafka connector)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

R = TypeVar("R")


def kafka_package() -> str:
    """The ``spark.jars.packages`` coordinate of Spark's Kafka connector for the running pyspark.

    >>> kafka_package().startswith("org.apache.spark:spark-sql-kafka-0-10_2.13:")
    True
    """
    import pyspark

    return f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}"


def _missing_connector(exc: Exception) -> bool:
    """Whether ``exc`` is Spark saying it has no ``kafka`` data source."""
    condition = getattr(exc, "getCondition", None)
    if callable(condition) and condition() in ("KAFKA_DATA_SOURCE_NOT_ENABLED", "DATA_SOURCE_NOT_FOUND"):
        return condition() == "KAFKA_DATA_SOURCE_NOT_ENABLED" or "kafka" in str(exc).lower()
    text = str(exc)
    return "Failed to find data source: kafka" in text or "Failed to find the data source: kafka" in text


def with_kafka_connector(what: str, action: Callable[[], R]) -> R:
    """``action()``, which reads or writes with Spark's Kafka connector; when Spark has no such
    connector, a RuntimeError saying ``what`` needs it and naming the package to add."""
    try:
        result = action()
        # A DataFrame: Spark Connect analyses its plan (and finds the connector missing) only
        # when it is first used; its schema makes that happen here.
        getattr(result, "schema", None)
        return result
    except Exception as exc:
        if not _missing_connector(exc):
            raise
        raise RuntimeError(
            f"{what}: Spark's Kafka connector is not in this Spark session; pyspark does not bundle it. "
            f"Add spark.jars.packages={kafka_package()} when the session starts (the job's "
            "'spark.jars.packages' setting, SparkSession.builder.config('spark.jars.packages', ...), "
            "spark-submit --packages ..., or PYSPARK_SUBMIT_ARGS='--packages ... pyspark-shell')"
        ) from exc
