# Ported from bytewax/bytewax pytests/operators/windowing/test_reduce_window.py (imports changed;
# the stored upstream version imports the later `bytewax.windowing` path, which is
# `bytewax.operators.windowing` in 0.21).
# Checked against bytewax==0.21.1 itself; ruff then respelled `timezone.utc` and `typing` generics.
from datetime import UTC, datetime, timedelta

import fs_compat.bytewax.operators as op
import fs_compat.bytewax.operators.windowing as win
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.operators.windowing import ZERO_TD, EventClock, TumblingWindower
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main


def test_reduce_window():
    align_to = datetime(2022, 1, 1, tzinfo=UTC)
    inp = [
        {"time": align_to, "user": "a", "val": 1},
        {"time": align_to + timedelta(seconds=4), "user": "a", "val": 1},
        {"time": align_to + timedelta(seconds=8), "user": "a", "val": 1},
        # First 10 sec window closes during processing this input.
        {"time": align_to + timedelta(seconds=12), "user": "a", "val": 1},
        {"time": align_to + timedelta(seconds=13), "user": "a", "val": 1},
    ]
    out = []

    clock = EventClock(lambda e: e["time"], wait_for_system_duration=ZERO_TD)
    windower = TumblingWindower(length=timedelta(seconds=10), align_to=align_to)

    def add(acc, x):
        acc["val"] += x["val"]
        return acc

    def extract_val(key__metadata_event):
        key, (metadata, event) = key__metadata_event
        return (key, (metadata, event["val"]))

    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(inp))
    s = op.key_on("key_on_user", s, lambda e: e["user"])
    wo = win.reduce_window("add", s, clock, windower, add)
    s = op.map("extract_val", wo.down, extract_val)
    op.output("out", s, TestingSink(out))

    run_main(flow)
    assert out == [
        ("a", (0, 3)),
        ("a", (1, 2)),
    ]
