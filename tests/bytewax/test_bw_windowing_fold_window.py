# Ported from bytewax/bytewax pytests/operators/windowing/test_fold_window.py (0.21; imports
# changed). `test_fold_window_benchmark` needs pytest-benchmark and `cluster_main`; it is run
# once, timed by hand, in test_bw_windowing_extra.py.
# Checked against bytewax==0.21.1 itself; ruff then respelled `timezone.utc` and `typing` generics.
from collections import defaultdict
from datetime import UTC, datetime, timedelta

import fs_compat.bytewax.operators as op
import fs_compat.bytewax.operators.windowing as win
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.operators.windowing import (
    ZERO_TD,
    EventClock,
    SessionWindower,
    SlidingWindower,
    TumblingWindower,
)
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main

# TODO: Test snapshotting logic so we're sure a recovery roundtrip
# would work.


def _merge_defaultdict(
    a: dict[str, int],
    b: dict[str, int],
) -> dict[str, int]:
    a.update(b)
    return a


def test_fold_window_tumbling():
    align_to = datetime(2022, 1, 1, tzinfo=UTC)
    inp = [
        {"time": align_to, "user": "a", "type": "login"},
        {"time": align_to + timedelta(seconds=4), "user": "a", "type": "post"},
        {"time": align_to + timedelta(seconds=8), "user": "a", "type": "post"},
        # First 10 sec window closes during processing this input.
        {"time": align_to + timedelta(seconds=12), "user": "b", "type": "login"},
        {"time": align_to + timedelta(seconds=16), "user": "a", "type": "post"},
        # Second 10 sec window closes during processing this input.
        {"time": align_to + timedelta(seconds=20), "user": "b", "type": "post"},
        {"time": align_to + timedelta(seconds=24), "user": "b", "type": "post"},
    ]
    out = []

    clock = EventClock(lambda e: e["time"], wait_for_system_duration=ZERO_TD)
    windower = TumblingWindower(length=timedelta(seconds=10), align_to=align_to)

    def count(counts, event):
        typ = event["type"]
        counts[typ] += 1
        return counts

    def map_dict(metadata_value):
        metadata, value = metadata_value
        return (metadata, dict(value))

    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(inp))
    s = op.key_on("key_on_user", s, lambda e: e["user"])
    wo = win.fold_window(
        "count",
        s,
        clock,
        windower,
        lambda: defaultdict(int),
        count,
        _merge_defaultdict,
    )
    s = op.map_value("normal_dict", wo.down, map_dict)
    op.output("out", s, TestingSink(out))

    run_main(flow)
    assert out == [
        ("a", (0, {"login": 1, "post": 2})),
        ("b", (1, {"login": 1})),
        ("a", (1, {"post": 1})),
        ("b", (2, {"post": 2})),
    ]


def test_fold_window_session():
    align_to = datetime(2022, 1, 1, tzinfo=UTC)
    inp = [
        # Session 1
        {"time": align_to + timedelta(seconds=1), "user": "a", "val": "a"},
        {"time": align_to + timedelta(seconds=5), "user": "a", "val": "b"},
        # Session 2
        {"time": align_to + timedelta(seconds=11), "user": "a", "val": "c"},
        {"time": align_to + timedelta(seconds=12), "user": "a", "val": "d"},
        {"time": align_to + timedelta(seconds=13), "user": "a", "val": "e"},
        {"time": align_to + timedelta(seconds=14), "user": "a", "val": "f"},
        # Session 3
        {"time": align_to + timedelta(seconds=20), "user": "a", "val": "g"},
        # This is late, and should be ignored
        {"time": align_to + timedelta(seconds=1), "user": "a", "val": "h"},
    ]
    out = []

    clock = EventClock(lambda e: e["time"], wait_for_system_duration=ZERO_TD)
    windower = SessionWindower(gap=timedelta(seconds=5))

    def add(acc, x):
        acc.append(x["val"])
        return acc

    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(inp))
    s = op.key_on("key_on_user", s, lambda e: e["user"])
    wo = win.fold_window("sum", s, clock, windower, list, add, list.__add__)
    op.output("out", wo.down, TestingSink(out))

    run_main(flow)
    assert out == [
        ("a", (0, ["a", "b"])),
        ("a", (1, ["c", "d", "e", "f"])),
        ("a", (2, ["g"])),
    ]


def test_fold_window_sliding():
    align_to = datetime(2022, 1, 1, tzinfo=UTC)
    # Valign_to
    #  a  b   c   def g
    #  h
    # -----)
    # [---------)
    #      [---------)
    #           [---------)
    #                [---------)
    inp = [
        {"time": align_to + timedelta(seconds=1), "user": "a", "val": "a"},
        {"time": align_to + timedelta(seconds=4), "user": "a", "val": "b"},
        {"time": align_to + timedelta(seconds=8), "user": "a", "val": "c"},
        {"time": align_to + timedelta(seconds=12), "user": "a", "val": "d"},
        {"time": align_to + timedelta(seconds=13), "user": "a", "val": "e"},
        {"time": align_to + timedelta(seconds=14), "user": "a", "val": "f"},
        {"time": align_to + timedelta(seconds=16), "user": "a", "val": "g"},
        # This is late, and should be ignored.
        {"time": align_to + timedelta(seconds=1), "user": "a", "val": "h"},
    ]
    out = []

    clock = EventClock(lambda e: e["time"], wait_for_system_duration=ZERO_TD)
    windower = SlidingWindower(
        length=timedelta(seconds=10),
        offset=timedelta(seconds=5),
        align_to=align_to,
    )

    def add(acc, x):
        acc.append(x["val"])
        return acc

    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(inp))
    s = op.key_on("key_on_user", s, lambda e: e["user"])
    wo = win.fold_window("sum", s, clock, windower, list, add, list.__add__)
    op.output("out", wo.down, TestingSink(out))

    run_main(flow)
    assert out == [
        ("a", (-1, ["a", "b"])),
        ("a", (0, ["a", "b", "c"])),
        ("a", (1, ["c", "d", "e", "f"])),
        ("a", (2, ["d", "e", "f", "g"])),
        ("a", (3, ["g"])),
    ]
