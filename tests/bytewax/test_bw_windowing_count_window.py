# Ported from bytewax/bytewax pytests/operators/windowing/test_count_window.py (0.21; imports
# changed).
# Checked against bytewax==0.21.1 itself; ruff then respelled `timezone.utc` and `typing` generics.
from datetime import UTC, datetime, timedelta

import fs_compat.bytewax.operators as op
import fs_compat.bytewax.operators.windowing as win
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.operators.windowing import ZERO_TD, EventClock, TumblingWindower
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main


def test_count_window():
    align_to = datetime(2022, 1, 1, tzinfo=UTC)
    inp = [
        {"time": align_to + timedelta(seconds=0), "user": "a", "val": 1},
        {"time": align_to + timedelta(seconds=4), "user": "a", "val": 1},
        {"time": align_to + timedelta(seconds=8), "user": "b", "val": 1},
        # First 10 sec window closes during processing this input.
        {"time": align_to + timedelta(seconds=12), "user": "a", "val": 1},
        {"time": align_to + timedelta(seconds=13), "user": "a", "val": 1},
    ]
    out = []

    clock = EventClock(lambda e: e["time"], wait_for_system_duration=ZERO_TD)
    windower = TumblingWindower(length=timedelta(seconds=10), align_to=align_to)

    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(inp))
    wo = win.count_window("add", s, clock, windower, lambda e: e["user"])
    op.output("out", wo.down, TestingSink(out))

    run_main(flow)
    assert out == [
        ("a", (0, 2)),
        ("a", (1, 2)),
        ("b", (0, 1)),
    ]
