"""PyFlink's ``pyflink.common.restart_strategy``: accepted and kept (Spark retries failed tasks,
``spark.task.maxFailures``; a streaming query restarts from its checkpoint)."""

from ._job import RestartStrategies, RestartStrategyConfiguration

__all__ = ["RestartStrategies", "RestartStrategyConfiguration"]
