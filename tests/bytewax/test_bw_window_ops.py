"""The windowing operators of ``bytewax.operators.windowing`` with Bytewax 0.21.1's semantics:
each key has its own event clock, a window is emitted when the key's watermark passes its end (or
at the end of input), late items go nowhere, and window ids count from the alignment."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import pytest

import fs_compat.bytewax.operators as op
import fs_compat.bytewax.operators.windowing as win
from fs_compat.bytewax.dataflow import Dataflow, Stream
from fs_compat.bytewax.operators.windowing import (
    ZERO_TD,
    EventClock,
    SessionWindower,
    SlidingWindower,
    SystemClock,
    TumblingWindower,
    WindowOut,
)
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main

T0 = datetime(2023, 5, 5, 9, 0, tzinfo=UTC)


class Ev(NamedTuple):
    """A reading ``s`` seconds after ``T0``."""

    s: float
    key: str
    val: Any

    @property
    def at(self) -> datetime:
        return T0 + timedelta(seconds=self.s)


def ev_clock(wait: timedelta = ZERO_TD) -> EventClock[Ev]:
    return EventClock(lambda e: e.at, wait_for_system_duration=wait)


TUMBLE_10 = TumblingWindower(length=timedelta(seconds=10), align_to=T0)


def windowed(
    events: list[Ev], build: Callable[[Stream[tuple[str, Ev]]], WindowOut[Any, Any]], keyed: bool = True
) -> list[Any]:
    """What reaches ``down`` of the windowing step ``build`` makes over ``events`` keyed by ``key``."""
    out: list[Any] = []
    flow = Dataflow("win")
    s: Any = op.input("src", flow, TestingSource(events))
    if keyed:
        s = op.key_on("k", s, lambda e: e.key)
    op.output("sink", build(s).down, TestingSink(out))
    run_main(flow)
    return out


MIXED = [Ev(1, "x", 4), Ev(3, "y", 9), Ev(6, "x", 2), Ev(14, "x", 7), Ev(17, "y", 1), Ev(25, "x", 5)]


def test_count_window() -> None:
    got = windowed(
        MIXED, lambda s: win.count_window("n", s, ev_clock(), TUMBLE_10, lambda e: e.key), keyed=False
    )
    # x's first window closes at x's 14 s item, y's at y's 17 s item; the rest at the end of input.
    assert got == [("x", (0, 2)), ("y", (0, 1)), ("x", (1, 1)), ("x", (2, 1)), ("y", (1, 1))]


def test_reduce_window() -> None:
    def add(a: Ev, b: Ev) -> Ev:
        return a._replace(val=a.val + b.val)

    got = windowed(MIXED, lambda s: win.reduce_window("sum", s, ev_clock(), TUMBLE_10, add))
    assert [(k, (w, e.val)) for k, (w, e) in got] == [
        ("x", (0, 6)),
        ("y", (0, 9)),
        ("x", (1, 7)),
        ("x", (2, 5)),
        ("y", (1, 1)),
    ]


def test_max_window() -> None:
    got = windowed(MIXED, lambda s: win.max_window("hi", s, ev_clock(), TUMBLE_10, by=lambda e: e.val))
    assert got == [
        ("x", (0, MIXED[0])),
        ("y", (0, MIXED[1])),
        ("x", (1, MIXED[3])),
        ("x", (2, MIXED[5])),
        ("y", (1, MIXED[4])),
    ]


def test_min_window() -> None:
    got = windowed(MIXED, lambda s: win.min_window("lo", s, ev_clock(), TUMBLE_10, by=lambda e: e.val))
    assert got == [
        ("x", (0, MIXED[2])),
        ("y", (0, MIXED[1])),
        ("x", (1, MIXED[3])),
        ("x", (2, MIXED[5])),
        ("y", (1, MIXED[4])),
    ]


def test_collect_window() -> None:
    events = [Ev(2, "x", "a"), Ev(9, "x", "b"), Ev(11, "x", "c"), Ev(12, "x", "d")]
    got = windowed(events, lambda s: win.collect_window("all", s, ev_clock(), TUMBLE_10))
    assert got == [("x", (0, events[:2])), ("x", (1, events[2:]))]


def test_collect_window_waiting_forever_takes_items_out_of_order() -> None:
    events = [Ev(7, "x", "b"), Ev(1, "x", "a"), Ev(15, "x", "d"), Ev(9, "x", "c"), Ev(12, "x", "e")]
    got = windowed(events, lambda s: win.collect_window("all", s, ev_clock(timedelta.max), TUMBLE_10))
    # Items of a window are kept in timestamp order.
    assert [(w, [e.val for e in es]) for _k, (w, es) in got] == [(0, ["a", "b", "c"]), (1, ["e", "d"])]


def folded(events: list[Ev], windower: Any) -> list[Any]:
    return windowed(
        events,
        lambda s: win.fold_window(
            "f", s, ev_clock(), windower, list, lambda acc, e: [*acc, e.val], list.__add__
        ),
    )


def test_fold_window_tumbling_per_key() -> None:
    events = [
        Ev(0, "x", "a"),
        Ev(5, "y", "b"),
        Ev(8, "x", "c"),
        Ev(13, "y", "d"),
        Ev(21, "x", "e"),
        Ev(22, "y", "f"),
    ]
    assert folded(events, TUMBLE_10) == [
        ("y", (0, ["b"])),
        ("x", (0, ["a", "c"])),
        ("y", (1, ["d"])),
        ("x", (2, ["e"])),
        ("y", (2, ["f"])),
    ]


def test_fold_window_session_ignores_late_items() -> None:
    events = [
        Ev(0, "x", "a"),
        Ev(3, "x", "b"),
        Ev(20, "x", "c"),
        Ev(24, "x", "d"),
        Ev(40, "x", "e"),
        Ev(2, "x", "late"),
    ]
    assert folded(events, SessionWindower(gap=timedelta(seconds=6))) == [
        ("x", (0, ["a", "b"])),
        ("x", (1, ["c", "d"])),
        ("x", (2, ["e"])),
    ]


def test_fold_window_sliding_also_opens_windows_before_the_alignment() -> None:
    # Windows of 10 s every 5 s: an item at 2 s is in window -1 ([-5, 5)) and window 0 ([0, 10)).
    events = [Ev(2, "x", "a"), Ev(7, "x", "b"), Ev(11, "x", "c"), Ev(18, "x", "d"), Ev(3, "x", "late")]
    windower = SlidingWindower(length=timedelta(seconds=10), offset=timedelta(seconds=5), align_to=T0)
    assert folded(events, windower) == [
        ("x", (-1, ["a"])),
        ("x", (0, ["a", "b"])),
        ("x", (1, ["b", "c"])),
        ("x", (2, ["c", "d"])),
        ("x", (3, ["d"])),
    ]


def test_session_with_system_clock_puts_a_quick_run_in_one_session() -> None:
    out: list[Any] = []
    flow = Dataflow("win")
    s = op.key_on("k", op.input("src", flow, TestingSource(range(6))), lambda _: "all")
    wo = win.fold_window(
        "f",
        s,
        SystemClock(),
        SessionWindower(gap=timedelta(seconds=10)),
        list,
        lambda a, v: [*a, v],
        list.__add__,
    )
    op.output("sink", op.key_rm("rm", wo.down), TestingSink(out))
    run_main(flow)
    assert out == [(0, [0, 1, 2, 3, 4, 5])]


# join_window: the sides joined within a session; modes as op.join's. -----------------------------


def window_joined(lefts: list[Ev], rights: list[Ev], **modes: Any) -> list[tuple[Any, Any]]:
    out: list[Any] = []
    flow = Dataflow("win")
    a = op.key_on("ka", op.input("a", flow, TestingSource(lefts)), lambda _: "k")
    b = op.key_on("kb", op.input("b", flow, TestingSource(rights)), lambda _: "k")
    jo = win.join_window("j", ev_clock(timedelta.max), SessionWindower(timedelta(seconds=10)), a, b, **modes)
    op.output("sink", op.key_rm("rm", jo.down), TestingSink(out))
    run_main(flow)
    return [tuple(e.val if e is not None else None for e in row) for _w, row in out]


@pytest.mark.parametrize(
    ("modes", "lefts", "rights", "expected"),
    [
        ({"emit_mode": "complete"}, [Ev(0, "", "L")], [Ev(2, "", "R")], [("L", "R")]),
        ({"emit_mode": "final"}, [Ev(0, "", "L")], [Ev(2, "", "R1"), Ev(4, "", "R2")], [("L", "R2")]),
        (
            {"insert_mode": "product"},
            [Ev(0, "", "L1"), Ev(3, "", "L2")],
            [Ev(1, "", "R1"), Ev(2, "", "R2")],
            [("L1", "R1"), ("L1", "R2"), ("L2", "R1"), ("L2", "R2")],
        ),
    ],
    ids=["complete", "final", "product"],
)
def test_join_window_modes(
    modes: dict[str, str], lefts: list[Ev], rights: list[Ev], expected: list[Any]
) -> None:
    assert window_joined(lefts, rights, **modes) == expected


def test_join_window_running() -> None:
    got = window_joined([Ev(0, "", "L")], [Ev(2, "", "R1"), Ev(4, "", "R2")], emit_mode="running")
    assert got == [("L", None), ("L", "R1"), ("L", "R2")]
