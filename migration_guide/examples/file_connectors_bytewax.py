"""Per-account totals of a CSV file: ``CSVSource`` in, ``StdOutSink`` out.

Run it as a script, or with the framework's entry point, which finds the module's ``flow``:
``python -m bytewax.run FILE`` (the port: ``python -m fs_compat.bytewax.run FILE``).
"""

from __future__ import annotations

from pathlib import Path

import bytewax.operators as op
from bytewax.connectors.files import CSVSource
from bytewax.connectors.stdio import StdOutSink
from bytewax.dataflow import Dataflow
from bytewax.testing import run_main

TRANSACTIONS = Path(__file__).parent / "transactions.csv"


def add(acc: tuple[int, int], cents: int) -> tuple[int, int]:
    """Counts the account's transactions and sums their amounts in cents."""
    count, total = acc
    return count + 1, total + cents


def show(account_totals: tuple[str, tuple[int, int]]) -> str:
    account, (count, cents) = account_totals
    return f"account {account:>2}: {count:3} transactions, {cents / 100:9.2f}"


flow = Dataflow("account_totals")
rows = op.input("transactions", flow, CSVSource(TRANSACTIONS))
by_account = op.key_on("by_account", rows, lambda row: row["account_id"])
cents = op.map_value("cents", by_account, lambda row: round(float(row["amount"]) * 100))
totals = op.fold_final("totals", cents, lambda: (0, 0), add)
# Accounts 1 to 9 only, in account order (fold_final emits the keys sorted as text).
small = op.filter("small_ids", totals, lambda kv: int(kv[0]) < 10)
op.output("print", op.map("show", small, show), StdOutSink())

if __name__ == "__main__":
    run_main(flow)
