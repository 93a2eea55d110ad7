"""The flagship demo gives the alerts of the fraud rule, computed here independently with a
plain-Python model over the same sample, on both targets; ``python -m fs_compat.demo`` prints
them and the summary."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from importlib import resources

import pytest
from connect_server import classic_env

from fs_compat import demo
from fs_compat.demo.fraud_detection import Alert

Txn = tuple[int, int, float]


def _sample() -> list[Txn]:
    text = resources.files("fs_compat.demo").joinpath(demo.SAMPLE_FILE).read_text(encoding="utf-8")
    rows = csv.DictReader(text.splitlines())
    return [(int(r["account_id"]), int(r["timestamp"]), float(r["amount"])) for r in rows]


def expected_alerts(rows: list[Txn]) -> list[int]:
    """The rule: an account's transaction over 500.00 whose previous transaction (of that
    account) was under 1.00 and less than a minute earlier; in transaction order."""
    previous: dict[int, tuple[int, float]] = {}
    alerts = []
    for account, ts, amount in rows:
        before = previous.get(account)
        if before is not None and before[1] < 1.00 and amount > 500.00 and ts - before[0] < 60_000:
            alerts.append(account)
        previous[account] = (ts, amount)
    return alerts


def expected_flagged(rows: list[Txn]) -> int:
    """Accounts still flagged when the input ends: their last transaction was small and less
    than a minute before the last transaction of the sample."""
    last: dict[int, tuple[int, float]] = {}
    for account, ts, amount in rows:
        last[account] = (ts, amount)
    end = rows[-1][1]
    return sum(1 for ts, amount in last.values() if amount < 1.00 and end - ts < 60_000)


def _check(result: demo.DemoResult) -> None:
    rows = _sample()
    alerts = expected_alerts(rows)
    assert len(alerts) >= 10
    assert result.alerts == [Alert(account_id=a) for a in alerts]
    summary = result.summary
    assert summary.job_name == "Fraud Detection"
    assert [s.name for s in summary.steps] == ["transactions", "timestamps", "fraud-detector", "alerts"]
    assert summary.step("transactions").records_out == len(rows)
    timestamps = summary.step("timestamps")
    assert (timestamps.records_in, timestamps.records_out) == (len(rows), len(rows))
    detector = summary.step("fraud-detector")
    assert (detector.records_in, detector.records_out) == (len(rows), len(alerts))
    assert detector.state_keys == expected_flagged(rows) == 2
    assert detector.state_bytes is not None and detector.state_bytes > 0
    assert summary.step("alerts").records_in == len(alerts)
    assert summary.wall_time_s > 0


def test_demo_in_process_gives_the_rules_alerts() -> None:
    result = demo.run_demo(target="local")
    assert result.summary.target == "local"
    _check(result)


@pytest.mark.spark
@pytest.mark.slow
def test_demo_on_spark_gives_the_rules_alerts() -> None:
    result = demo.run_demo(target="spark")
    assert result.summary.target.startswith("spark")
    _check(result)


@pytest.mark.spark
@pytest.mark.slow
def test_python_m_fs_compat_demo_prints_alerts_and_summary() -> None:
    # The demo's own default session, also when the suite runs over Spark Connect.
    env = {k: v for k, v in classic_env(os.environ).items() if k != "FS_COMPAT_TARGET"}
    done = subprocess.run(
        [sys.executable, "-m", "fs_compat.demo"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    alerts = expected_alerts(_sample())
    assert lines[0] == "Fraud detection over 3,000 transactions of 20 accounts, on Spark"
    assert lines[1 : 1 + len(alerts)] == [f"Alert(account_id={a})" for a in alerts]
    assert lines[1 + len(alerts)] == f"{len(alerts)} alerts"
    table = lines[3 + len(alerts) :]
    assert table[0].startswith("Job 'Fraud Detection' on spark (local[*]): 4 steps in ")
    assert table[1].split() == ["step", "records", "in", "records", "out", "state", "keys", "state", "bytes"]
    rows = {line.split()[0]: line.split()[1:] for line in table[2:]}
    assert rows["transactions"] == ["-", "3,000", "-", "-"]
    assert rows["fraud-detector"][:3] == ["3,000", str(len(alerts)), "2"]
    assert rows["alerts"] == [str(len(alerts)), "-", "-", "-"]
