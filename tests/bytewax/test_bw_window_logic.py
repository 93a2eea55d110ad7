"""The parts every windowing operator is built from, as Bytewax 0.21.1 has them: the clocks'
watermarks (event time with a system-time allowance, system time), which sliding windows a
timestamp falls in, and how sessions open, grow and merge."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fs_compat.bytewax.operators.windowing import (
    LATE_SESSION_ID,
    UTC_MAX,
    UTC_MIN,
    WindowMetadata,
    _EventClockLogic,
    _session_find_merges,
    _SessionWindowerLogic,
    _SessionWindowerState,
    _SlidingWindowerLogic,
    _SlidingWindowerState,
    _SystemClockLogic,
)
from fs_compat.bytewax.testing import TimeTestingGetter

T0 = datetime(2023, 5, 5, 9, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


# Event clock ----------------------------------------------------------------------------------
#
# A script of steps on one clock logic whose items are their own timestamps, waiting ``wait`` of
# system time for late items: ("batch",) starts a batch, ("item", s) is an item stamped T0 + s,
# ("sleep", s) moves the system clock, ("notify",) and ("eof",) ask for the watermark. The last
# step's watermark is checked.

WAIT = timedelta(seconds=4)
#: An item at 10 s, then 3 s of system time, then a new batch.
NEXT_BATCH: list[tuple[Any, ...]] = [("batch",), ("item", 10), ("sleep", 3), ("batch",)]

CLOCK_SCRIPTS: dict[str, tuple[timedelta, list[tuple[Any, ...]], datetime]] = {
    "nothing-seen": (WAIT, [("notify",)], UTC_MIN),
    "item-minus-wait": (WAIT, [("batch",), ("item", 10)], at(6)),
    "system-time-moves-it-on": (WAIT, [("batch",), ("item", 10), ("sleep", 3), ("notify",)], at(9)),
    "later-item-in-batch": (WAIT, [("batch",), ("item", 10), ("item", 15)], at(11)),
    "earlier-item-in-batch": (WAIT, [("batch",), ("item", 10), ("item", 2)], at(6)),
    "earlier-item-next-batch": (
        WAIT,
        [("batch",), ("item", 10), ("sleep", 3), ("batch",), ("item", 2)],
        at(9),
    ),
    "item-behind-system-time": (
        WAIT,
        [("batch",), ("item", 10), ("sleep", 3), ("batch",), ("item", 12)],
        at(9),
    ),
    "eof": (WAIT, [("eof",), ("eof",)], UTC_MAX),
    "eof-then-time-passes": (WAIT, [("eof",), ("sleep", 3), ("eof",)], UTC_MAX),
    "wait-forever": (timedelta.max, [("batch",), ("item", 10)], UTC_MIN),
    "wait-forever-time-passes": (timedelta.max, [*NEXT_BATCH, ("item", 20)], UTC_MIN + timedelta(seconds=3)),
}


@pytest.mark.parametrize("name", list(CLOCK_SCRIPTS))
def test_event_clock_watermark(name: str) -> None:
    wait, script, expected = CLOCK_SCRIPTS[name]
    system = TimeTestingGetter(datetime(2030, 1, 1, tzinfo=UTC))
    logic = _EventClockLogic(system.get, lambda ts: ts, lambda ts: ts, wait)
    watermark: datetime | None = None
    for step, *args in script:
        if step == "batch":
            logic.before_batch()
        elif step == "item":
            _ts, watermark = logic.on_item(at(args[0]))
        elif step == "sleep":
            system.advance(timedelta(seconds=args[0]))
        elif step == "notify":
            watermark = logic.on_notify()
        else:
            watermark = logic.on_eof()
    assert watermark == expected


def test_system_clock_watermark_is_the_end_of_time_after_eof() -> None:
    system = TimeTestingGetter(datetime(2030, 1, 1, tzinfo=UTC))
    logic = _SystemClockLogic(system.get)
    logic.on_eof()
    assert logic.on_eof() == UTC_MAX


# Sliding windows ------------------------------------------------------------------------------


def windows_containing(t: datetime, length: timedelta, offset: timedelta) -> list[int]:
    """Window ``i`` is ``[T0 + i * offset, T0 + i * offset + length)``; the ids that hold ``t``."""
    first = int((t - T0 - length) // offset) - 1
    last = int((t - T0) // offset) + 1
    return [i for i in range(first, last + 1) if T0 + i * offset <= t < T0 + i * offset + length]


@pytest.mark.parametrize(
    "offset_s",
    [5, 3, 7, 10],
    ids=["offset-divides-length", "offset-3", "offset-7", "tumbling"],
)
def test_sliding_windows_a_timestamp_falls_in(offset_s: int) -> None:
    length, offset = timedelta(seconds=10), timedelta(seconds=offset_s)
    logic = _SlidingWindowerLogic(length=length, offset=offset, align_to=T0, state=_SlidingWindowerState())
    # Every half second either side of the alignment: window starts, ends and the spans between.
    for half_seconds in range(-60, 61):
        t = at(half_seconds / 2)
        assert logic.intersects(t) == windows_containing(t, length, offset), t


@pytest.mark.parametrize(
    ("offset_s", "t_s", "expected"),
    [
        (5, 13, [1, 2]),
        (5, -3, [-2, -1]),
        (5, 0, [-1, 0]),
        (5, 10, [1, 2]),
        (3, 11.5, [1, 2, 3]),
        (7, 17, [2]),
    ],
)
def test_sliding_windows_by_example(offset_s: int, t_s: float, expected: list[int]) -> None:
    logic = _SlidingWindowerLogic(
        length=timedelta(seconds=10),
        offset=timedelta(seconds=offset_s),
        align_to=T0,
        state=_SlidingWindowerState(),
    )
    assert logic.intersects(at(t_s)) == expected


# Sessions -------------------------------------------------------------------------------------

GAP = timedelta(seconds=30)


def meta(open_s: float, close_s: float, merged: set[int] | None = None) -> WindowMetadata:
    return WindowMetadata(open_time=at(open_s), close_time=at(close_s), merged_ids=merged or set())


@pytest.mark.parametrize(
    ("seen", "new", "session"),
    [
        ([], 0, meta(0, 0)),
        ([0], 12, meta(0, 12)),  # later, within the gap
        ([0], 30, meta(0, 30)),  # exactly the gap later
        ([0], -12, meta(-12, 0)),  # earlier, within the gap
        ([0], -30, meta(-30, 0)),  # exactly the gap earlier
        ([0, 20], 9, meta(0, 20)),  # inside the session
    ],
    ids=["first", "extend-forward", "extend-forward-by-gap", "extend-back", "extend-back-by-gap", "inside"],
)
def test_a_timestamp_opens_or_extends_session_0(
    seen: list[float], new: float, session: WindowMetadata
) -> None:
    logic = _SessionWindowerLogic(gap=GAP, state=_SessionWindowerState())
    for s in seen:
        logic.open_for(at(s))
    assert list(logic.open_for(at(new))) == [0]
    assert logic.state.sessions == {0: session}


def test_a_timestamp_inside_a_resumed_session_changes_nothing() -> None:
    state = _SessionWindowerState(max_key=0, sessions={0: meta(0, 30)})
    logic = _SessionWindowerLogic(gap=GAP, state=state)
    assert list(logic.open_for(at(17))) == [0]
    assert logic.state.sessions == {0: meta(0, 30)}


def test_a_timestamp_between_two_sessions_merges_them_into_the_first() -> None:
    logic = _SessionWindowerLogic(gap=GAP, state=_SessionWindowerState())
    logic.open_for(at(0))
    logic.open_for(at(50))  # more than the gap away: a second session
    assert list(logic.open_for(at(25))) == [0]
    assert logic.merged() == [(1, 0)]
    assert logic.state.sessions == {0: meta(0, 50, {1})}


def test_a_late_timestamp_goes_to_the_late_session() -> None:
    logic = _SessionWindowerLogic(gap=GAP, state=_SessionWindowerState())
    assert list(logic.late_for(at(-3600))) == [LATE_SESSION_ID]


@pytest.mark.parametrize(
    ("sessions", "merges", "after"),
    [
        ({0: meta(0, 0), 1: meta(45, 45)}, [], {0: meta(0, 0), 1: meta(45, 45)}),
        ({0: meta(0, 0), 1: meta(10, 10)}, [(1, 0)], {0: meta(0, 10, {1})}),
        ({0: meta(0, 0), 1: meta(30, 30)}, [(1, 0)], {0: meta(0, 30, {1})}),
        ({0: meta(0, 0), 1: meta(20, 20), 2: meta(40, 40)}, [(1, 0), (2, 0)], {0: meta(0, 40, {1, 2})}),
        (
            {0: meta(0, 0), 1: meta(40, 40), 2: meta(60, 60), 3: meta(100, 100)},
            [(2, 1)],
            {0: meta(0, 0), 1: meta(40, 60, {2}), 3: meta(100, 100)},
        ),
    ],
    ids=["apart", "within-gap", "exactly-gap", "chain", "only-the-close-pair"],
)
def test_find_merges(
    sessions: dict[int, WindowMetadata], merges: list[tuple[int, int]], after: dict[int, WindowMetadata]
) -> None:
    assert _session_find_merges(sessions, GAP) == merges
    assert sessions == after
