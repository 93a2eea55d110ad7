# Ported from bytewax/bytewax pytests/operators/windowing/test_collect_window.py (0.21; imports
# changed). `test_collect_window_out_of_order` is the later upstream version of the same test
# (items out of order, `wait_for_system_duration=timedelta.max`), which 0.21 passes too.
# Checked against bytewax==0.21.1 itself; ruff then respelled `timezone.utc` and `typing` generics.
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import fs_compat.bytewax.operators as op
import fs_compat.bytewax.operators.windowing as win
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.operators.windowing import (
    ZERO_TD,
    EventClock,
    TumblingWindower,
)
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main


def test_collect_window():
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

    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(inp))
    s = op.key_on("key_on_user", s, lambda e: e["user"])
    wo = win.collect_window("add", s, clock, windower)
    op.output("out", wo.down, TestingSink(out))

    run_main(flow)
    assert out == [
        (
            "a",
            (
                0,
                [
                    {"time": align_to, "user": "a", "val": 1},
                    {"time": align_to + timedelta(seconds=4), "user": "a", "val": 1},
                    {"time": align_to + timedelta(seconds=8), "user": "a", "val": 1},
                ],
            ),
        ),
        (
            "a",
            (
                1,
                [
                    {"time": align_to + timedelta(seconds=12), "user": "a", "val": 1},
                    {"time": align_to + timedelta(seconds=13), "user": "a", "val": 1},
                ],
            ),
        ),
    ]


@dataclass(frozen=True)
class _Event:
    timestamp: datetime
    value: int


def test_collect_window_out_of_order() -> None:
    align_to = datetime(2022, 1, 1, tzinfo=UTC)
    inp = [
        _Event(align_to, 1),
        _Event(align_to + timedelta(seconds=8), 3),
        _Event(align_to + timedelta(seconds=4), 2),
        # First 10 sec window closes during processing this input.
        _Event(align_to + timedelta(seconds=13), 5),
        _Event(align_to + timedelta(seconds=12), 4),
    ]
    out: list[tuple[int, list[int]]] = []

    def ts_getter(event: _Event) -> datetime:
        return event.timestamp

    clock = EventClock(ts_getter, wait_for_system_duration=timedelta.max)
    windower = TumblingWindower(length=timedelta(seconds=10), align_to=align_to)

    flow = Dataflow("test_df")
    inps = op.input("inp", flow, TestingSource(inp))
    keyed_inps = op.key_on("key", inps, lambda _: "ALL")
    collect_out = win.collect_window("collect_window", keyed_inps, clock, windower)
    unkeyed = op.key_rm("unkey", collect_out.down)

    def clean(
        id_collected: tuple[int, list[_Event]],
    ) -> tuple[int, list[int]]:
        window_id, collected = id_collected
        cleaned = [event.value for event in collected]
        return (window_id, cleaned)

    cleans = op.map("clean", unkeyed, clean)
    op.output("out", cleans, TestingSink(out))

    run_main(flow)
    assert out == [
        (0, [1, 2, 3]),
        (1, [4, 5]),
    ]
