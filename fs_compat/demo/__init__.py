"""The flagship demo (``fs-compat demo``, ``make demo``, ``python -m fs_compat.demo``): Flink's
fraud-detection walkthrough (``fraud_detection``, ported from PyFlink by changing its imports)
on the embedded Spark session, over the bundled sample of transactions (``transactions.csv``,
made by ``sample``). It prints the alerts, one per line, then the job's summary.

Processing time is driven by the data, so the output is the same on every run. The job's timer
clears an account's flag one minute of *processing time* after a small transaction; on the
machine's clock the sample would be processed within that minute and no timer would ever fire.
So the demo, outside the ported job, gives the transactions timestamps (a
``WatermarkStrategy.no_watermarks()`` whose timestamp assigner reads their ``timestamp`` field)
and sets ``env.set_processing_time_clock(RecordTimeClock())``: in each operator instance,
processing time is then the largest timestamp among the records it has handled, as if every
transaction arrived at its timestamp. On Spark the clock travels to the workers with the job.
Timers fire as processing time passes them, checked after each record: a flag set at ``t``
is cleared after the first transaction (of any account of that subtask) at ``t + 60 s`` or
later. The job runs with parallelism 1, so that subtask sees every transaction, which arrive a
few seconds apart; a transaction more than a minute after the small one finds the flag cleared.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import attrs

from fs_compat.common import Configuration, Row, WatermarkStrategy
from fs_compat.common.watermark_strategy import TimestampAssigner
from fs_compat.datastream import SinkFunction, StreamExecutionEnvironment
from fs_compat.execution import SPARK, TARGET_KEY, check_target
from fs_compat.runtime import JobSummary, RecordTimeClock

from .fraud_detection import TRANSACTION, Alert, build, read_transactions

#: The bundled sample, in this package (``python -m fs_compat.demo.sample`` writes it).
SAMPLE_FILE = "transactions.csv"


def load_sample() -> list[Row]:
    """The bundled transactions (``transactions.csv``), as ``Row(account_id, timestamp, amount)``."""
    text = resources.files(__name__).joinpath(SAMPLE_FILE).read_text(encoding="utf-8")
    return read_transactions(text.splitlines(keepends=True))


class _TransactionTime(TimestampAssigner):
    """A transaction's timestamp is its ``timestamp`` field."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value.timestamp)


class _Collect(SinkFunction[Alert]):
    """Appends every alert to a list (sinks run on the driver, on both targets)."""

    def __init__(self, into: list[Alert]) -> None:
        self.into = into

    def invoke(self, value: Alert) -> None:
        self.into.append(value)


@attrs.frozen
class DemoResult:
    """The alerts, in the order the job emitted them, and the job's summary."""

    alerts: list[Alert]
    summary: JobSummary


def run_demo(
    *,
    target: str = SPARK,
    master: str | None = None,
    remote: str | None = None,
    sample: list[Row] | None = None,
) -> DemoResult:
    """Run the fraud-detection job over ``sample`` (default: the bundled one) on ``target``
    (``spark`` or ``local``: ``fs_compat.execution.TARGETS``), with processing time driven by
    the transactions' timestamps; ``remote``: over that Spark Connect server."""
    config = Configuration()
    config.set_string(TARGET_KEY, check_target(target))
    if master is not None:
        config.set_string("spark.master", master)
    if remote is not None:
        config.set_string("spark.remote", remote)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    env.set_processing_time_clock(RecordTimeClock())
    rows = load_sample() if sample is None else sample
    transactions = env.from_collection(rows, type_info=TRANSACTION).name("transactions")
    timed = transactions.assign_timestamps_and_watermarks(
        WatermarkStrategy.no_watermarks().with_timestamp_assigner(_TransactionTime())
    ).name("timestamps")
    alerts: list[Alert] = []
    build(timed).add_sink(_Collect(alerts)).name("alerts")
    summary = env.execute("Fraud Detection").get_job_summary()
    assert summary is not None
    return DemoResult(alerts, summary)


def main(*, master: str | None = None, remote: str | None = None) -> int:
    """Run the demo on Spark (the embedded session, or ``master``, or over the Spark Connect
    server ``remote``); print the alerts and the summary. Returns the exit status."""
    sample = load_sample()
    accounts = len({t.account_id for t in sample})
    print(f"Fraud detection over {len(sample):,} transactions of {accounts} accounts, on Spark", flush=True)
    result = run_demo(master=master, remote=remote, sample=sample)
    for alert in result.alerts:
        print(alert)
    print(f"{len(result.alerts)} alerts")
    print()
    print(result.summary.render())
    return 0
