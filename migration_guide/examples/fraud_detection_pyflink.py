"""Fraud detection: Flink's DataStream API walkthrough ("Fraud Detection with the DataStream
API") in Python. The PyFlink and the fs-compat versions of this file differ in their imports
only.

A ``KeyedProcessFunction`` keyed by account raises an alert when a transaction of less than
1.00 is followed, for the same account, by one of more than 500.00 within a minute: a
``ValueState`` flag remembers the small transaction, a second ``ValueState`` holds the handle
of a processing-time timer that clears the flag one minute later.

Run it with ``python fraud_detection.py [transactions.csv]``; it prints one alert per line.
Processing time is the machine's clock here: the whole sample is processed well within a
minute, so no timer fires and every small transaction followed by a large one alerts. The
fs-compat demo (``fs-compat demo``) runs the same job with processing time driven by the
transactions' timestamps.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pyflink.common import Row, Types
from pyflink.datastream import (
    DataStream,
    KeyedProcessFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
)
from pyflink.datastream.state import ValueState, ValueStateDescriptor

SMALL_AMOUNT = 1.00
LARGE_AMOUNT = 500.00
ONE_MINUTE = 60 * 1000

#: A transaction: the account, when it happened (epoch milliseconds) and the amount.
TRANSACTION = Types.ROW_NAMED(
    ["account_id", "timestamp", "amount"], [Types.LONG(), Types.LONG(), Types.DOUBLE()]
)


@dataclass(frozen=True)
class Alert:
    """A suspicious account."""

    account_id: int


class FraudDetector(KeyedProcessFunction):
    """Alerts on a small transaction followed, within a minute, by a large one."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.flag_state: ValueState[bool] = runtime_context.get_state(
            ValueStateDescriptor("flag", Types.BOOLEAN())
        )
        self.timer_state: ValueState[int] = runtime_context.get_state(
            ValueStateDescriptor("timer-state", Types.LONG())
        )

    def process_element(self, transaction: Row, ctx: KeyedProcessFunction.Context) -> Iterator[Alert]:
        # Get the current state for the current key
        last_transaction_was_small = self.flag_state.value()

        # Check if the flag is set
        if last_transaction_was_small is not None:
            if transaction.amount > LARGE_AMOUNT:
                # Output an alert downstream
                yield Alert(account_id=ctx.get_current_key())

            # Clean up our state
            self.clean_up(ctx)

        if transaction.amount < SMALL_AMOUNT:
            # Set the flag to true
            self.flag_state.update(True)

            # Set the timer and timer state
            timer = ctx.timer_service().current_processing_time() + ONE_MINUTE
            ctx.timer_service().register_processing_time_timer(timer)
            self.timer_state.update(timer)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> None:
        # Remove flag after 1 minute
        self.timer_state.clear()
        self.flag_state.clear()

    def clean_up(self, ctx: KeyedProcessFunction.Context) -> None:
        # Delete timer
        timer = self.timer_state.value()
        if timer is not None:
            ctx.timer_service().delete_processing_time_timer(timer)

        # Clean up all state
        self.timer_state.clear()
        self.flag_state.clear()


def build(transactions: DataStream) -> DataStream:
    """The job: transactions in, alerts out."""
    return (
        transactions.key_by(lambda transaction: transaction.account_id, key_type=Types.LONG())
        .process(FraudDetector())
        .name("fraud-detector")
    )


def read_transactions(lines: Iterable[str]) -> list[Row]:
    """Transactions from CSV lines (a header, then ``account_id,timestamp,amount``)."""
    return [
        Row(account_id=int(r["account_id"]), timestamp=int(r["timestamp"]), amount=float(r["amount"]))
        for r in csv.DictReader(lines)
    ]


def main(path: Path) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    with open(path, newline="") as sample:
        transactions = env.from_collection(read_transactions(sample), type_info=TRANSACTION)
    alerts = build(transactions.name("transactions"))
    alerts.print().name("send-alerts")
    env.execute("Fraud Detection")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("transactions.csv"))
