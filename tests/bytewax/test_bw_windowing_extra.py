"""Windowing behaviour beyond Bytewax's own tests: late items, dropping a key's state once its
windows closed (unlike Bytewax 0.21, issue #577), recovery of open windows, clocks driven by an
injected time (no sleeps), merges, errors."""

import pickle
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import fs_compat.bytewax.operators as op
import fs_compat.bytewax.operators.windowing as win
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.errors import BytewaxRuntimeError
from fs_compat.bytewax.operators.windowing import (
    LATE_SESSION_ID,
    ZERO_TD,
    EventClock,
    SessionWindower,
    SlidingWindower,
    SystemClock,
    TumblingWindower,
    Windower,
    WindowMetadata,
    _EventClockLogic,
    _FoldWindowLogic,
    _WindowLogic,
)
from fs_compat.bytewax.recovery import RecoveryConfig, _Store
from fs_compat.bytewax.testing import TestingSink, TestingSource, TimeTestingGetter, run_main

T0 = datetime(2024, 1, 1, tzinfo=UTC)
GAP = timedelta(seconds=5)

Event = tuple[str, float, str]
"""``(key, seconds after T0, value)``."""


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _ts(event: Event) -> datetime:
    return _at(event[1])


def _name(event: Event) -> str:
    return event[2]


def _names(id_values: tuple[int, list[Event]]) -> tuple[int, list[str]]:
    window_id, values = id_values
    return (window_id, [v[2] for v in values])


def _append(acc: list[str], event: Event) -> list[str]:
    acc.append(event[2])
    return acc


def test_session_windows_and_late_items() -> None:
    # gap 5 s; "h" at 1 s arrives after the watermark reached 20 s, so it is late.
    events = [(1, "a"), (5, "b"), (11, "c"), (12, "d"), (13, "e"), (14, "f"), (20, "g"), (1, "h")]
    down: list[tuple[int, list[str]]] = []
    late: list[tuple[int, str]] = []
    metas: list[tuple[int, WindowMetadata]] = []

    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource([("u", t, v) for t, v in events]))
    s = op.key_on("key", s, lambda e: e[0])
    clock = EventClock(_ts, wait_for_system_duration=ZERO_TD)
    wo = win.collect_window("collect", s, clock, SessionWindower(gap=GAP))
    op.output("down", op.map("names", op.key_rm("unkey", wo.down), _names), TestingSink(down))
    late_names = op.map_value("late_names", wo.late, lambda id_v: (id_v[0], _name(id_v[1])))
    op.output("late", op.key_rm("unkey_late", late_names), TestingSink(late))
    op.output("meta", op.key_rm("unkey_meta", wo.meta), TestingSink(metas))

    run_main(flow)
    assert down == [(0, ["a", "b"]), (1, ["c", "d", "e", "f"]), (2, ["g"])]
    assert late == [(LATE_SESSION_ID, "h")]
    assert metas == [
        (0, WindowMetadata(_at(1), _at(5))),
        (1, WindowMetadata(_at(11), _at(14))),
        (2, WindowMetadata(_at(20), _at(20))),
    ]


def test_late_items_of_tumbling_windows_name_their_window() -> None:
    events = [("k", 1, "a"), ("k", 12, "b"), ("k", 3, "late"), ("k", 14, "c")]
    down: list[Any] = []
    late: list[Any] = []

    flow = Dataflow("test_df")
    s = op.key_on("key", op.input("inp", flow, TestingSource(events)), lambda e: e[0])
    clock = EventClock(_ts, wait_for_system_duration=ZERO_TD)
    wo = win.collect_window("collect", s, clock, TumblingWindower(timedelta(seconds=10), T0))
    op.output("down", op.map_value("names", wo.down, _names), TestingSink(down))
    op.output("late", op.map_value("late_names", wo.late, lambda x: (x[0], _name(x[1]))), TestingSink(late))

    run_main(flow)
    assert down == [("k", (0, ["a"])), ("k", (1, ["b", "c"]))]
    assert late == [("k", (0, "late"))]


@pytest.mark.parametrize("ordered", [True, False])
def test_ordered_applies_values_in_timestamp_order(ordered: bool) -> None:
    events = [("k", 0, "a"), ("k", 8, "c"), ("k", 4, "b"), ("k", 13, "e"), ("k", 12, "d")]
    out: list[Any] = []

    flow = Dataflow("test_df")
    s = op.key_on("key", op.input("inp", flow, TestingSource(events)), lambda e: e[0])
    clock = EventClock(_ts, wait_for_system_duration=timedelta.max)
    windower = TumblingWindower(timedelta(seconds=10), T0)
    wo = win.collect_window("collect", s, clock, windower, ordered=ordered)
    op.output("out", op.map_value("names", wo.down, _names), TestingSink(out))

    run_main(flow)
    if ordered:
        assert out == [("k", (0, ["a", "b", "c"])), ("k", (1, ["d", "e"]))]
    else:
        assert out == [("k", (0, ["a", "c", "b"])), ("k", (1, ["e", "d"]))]


# A key's state is dropped once its windows closed. ----------------------------------------------


def _window_state_keys(recovery_config: RecoveryConfig) -> list[str]:
    """The keys for which the windowing step has a snapshot in the recovery store."""
    _epoch, states = _Store(recovery_config).resume()
    return sorted(key for step, keys in states.items() if step.endswith(".stateful_batch") for key in keys)


@pytest.mark.in_process("recovery (run_main recovery_config)")
@pytest.mark.parametrize(
    "windower",
    [
        SessionWindower(gap=GAP),
        TumblingWindower(timedelta(seconds=10), T0),
        SlidingWindower(timedelta(seconds=10), timedelta(seconds=5), T0),
    ],
    ids=["session", "tumbling", "sliding"],
)
def test_key_state_is_dropped_once_its_windows_closed(
    windower: Windower[Any], recovery_config: RecoveryConfig
) -> None:
    clock = TimeTestingGetter(T0)

    def advance_on_tick(event: Event) -> bool:
        if event[0] == "tick":
            clock.advance(timedelta(minutes=1))
            return False
        return True

    inp = [
        ("a", 0, "a0"),
        ("b", 1, "b1"),
        ("c", 2, "c2"),
        TestingSource.ABORT(),
        # System time passes without new items: every window closes by notification.
        ("tick", 0, ""),
        ("never", 0, ""),
        TestingSource.ABORT(),
    ]
    out: list[Any] = []

    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(inp))
    s = op.filter("tick", s, advance_on_tick)
    s = op.filter("stop", s, lambda e: e[0] != "never")
    s = op.key_on("key", s, lambda e: e[0])
    event_clock = EventClock(_ts, wait_for_system_duration=ZERO_TD, now_getter=clock.get)
    wo = win.fold_window("fold", s, event_clock, windower, list, _append, list.__add__)
    op.output("out", wo.down, TestingSink(out))

    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config, _now_getter=clock.get)
    assert out == []
    assert _window_state_keys(recovery_config) == ["a", "b", "c"]

    # Resume: the keys' open windows come back from their snapshots, then close as time passes;
    # no key keeps any state (Bytewax 0.21 would keep all three session keys forever).
    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config, _now_getter=clock.get)
    copies = 2 if isinstance(windower, SlidingWindower) else 1  # each value is in two sliding windows
    assert sorted(v for _key, (_wid, values) in out for v in values) == sorted(["a0", "b1", "c2"] * copies)
    assert _window_state_keys(recovery_config) == []


def test_logic_snapshot_empties_and_asks_to_be_discarded() -> None:
    clock = TimeTestingGetter(T0)
    logic = _WindowLogic(
        EventClock(_ts, ZERO_TD, now_getter=clock.get).build(None),
        SessionWindower(GAP).build(None),
        lambda resume: _FoldWindowLogic(_append, list.__add__, resume if resume is not None else []),
        ordered=True,
    )
    events, discard = logic.on_batch([("k", 0, "x"), ("k", 3, "y"), ("k", 20, "z")])
    assert discard is False
    assert events == [(0, "E", ["x", "y"]), (0, "M", WindowMetadata(_at(0), _at(3)))]
    snap = logic.snapshot()
    assert list(snap.logic_states) == [1]
    assert snap.logic_states[1] == ["z"]
    assert list(snap.windower_state.sessions) == [1]
    assert pickle.loads(pickle.dumps(snap)) == snap  # what recovery stores
    # The session closes once the watermark is past 20 s + gap; it is at 20 s now and advances
    # with the (injected) system time: that is in 5 s (and a tick, rounded up to 1 ms).
    assert logic.notify_at() == _at(5.001)

    clock.advance(timedelta(seconds=5.001))
    events, discard = logic.on_notify()
    assert events == [(1, "E", ["z"]), (1, "M", WindowMetadata(_at(20), _at(20)))]
    assert discard is True
    snap = logic.snapshot()
    assert snap.logic_states == {}
    assert snap.windower_state.sessions == {}
    assert snap.queue == []
    assert logic.notify_at() is None


@pytest.mark.in_process("shared clock (a map step advances the injected clock)")
def test_session_ids_restart_after_the_state_was_dropped() -> None:
    # The documented consequence of dropping state: a key's next session is numbered 0 again
    # (Bytewax 0.21 would number it 1).
    clock = TimeTestingGetter(_at(100))

    def advance_on_tick(event: Event) -> Event:
        if event[2] == "tick":
            clock.advance(timedelta(minutes=1))
        return event

    out: list[Any] = []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource([("a", 100, "x"), ("b", 100, "tick"), ("a", 170, "y")]))
    s = op.key_on("key", op.map("tick", s, advance_on_tick), lambda e: e[0])
    event_clock = EventClock(_ts, wait_for_system_duration=ZERO_TD, now_getter=clock.get)
    wo = win.collect_window("collect", s, event_clock, SessionWindower(GAP))
    op.output("out", op.map_value("names", wo.down, _names), TestingSink(out))

    run_main(flow, _now_getter=clock.get)
    assert out == [("a", (0, ["x"])), ("a", (0, ["y"])), ("b", (0, ["tick"]))]


# Recovery. --------------------------------------------------------------------------------------


def _recovery_flow(inp: list[Any], out: list[Any], clock: TimeTestingGetter) -> Dataflow:
    flow = Dataflow("test_df")
    s = op.key_on("key", op.input("inp", flow, TestingSource(inp)), lambda e: e[0])
    # Waiting 5 s keeps values queued (ordered mode) across the abort.
    event_clock = EventClock(_ts, wait_for_system_duration=GAP, now_getter=clock.get)
    wo = win.collect_window("collect", s, event_clock, TumblingWindower(timedelta(seconds=10), T0))
    op.output("out", op.map_value("names", wo.down, _names), TestingSink(out))
    op.output("meta", wo.meta, TestingSink(out))
    return flow


@pytest.mark.in_process("recovery (run_main recovery_config)")
def test_open_windows_and_queued_values_survive_a_resume(recovery_config: RecoveryConfig) -> None:
    events: list[Any] = [("a", 0, "a0"), ("b", 2, "b2"), ("a", 4, "a4"), ("a", 3, "a3")]
    rest: list[Any] = [("a", 8, "a8"), ("a", 16, "a16"), ("b", 12, "b12"), ("a", 21, "a21")]
    expected: list[Any] = []
    run_main(_recovery_flow(events + rest, expected, TimeTestingGetter(T0)))

    out: list[Any] = []
    clock = TimeTestingGetter(T0)
    flow = _recovery_flow([*events, TestingSource.ABORT(), *rest], out, clock)
    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config, _now_getter=clock.get)
    assert out == []
    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config, _now_getter=clock.get)
    assert out == expected
    assert ("a", (0, ["a0", "a3", "a4", "a8"])) in out


# Clocks driven by an injected time. ------------------------------------------------------------


@pytest.mark.in_process("shared clock (a map step advances the injected clock)")
def test_system_clock_closes_windows_as_time_passes() -> None:
    clock = TimeTestingGetter(T0)

    def advance_on_tick(x: str) -> str:
        if x == "tick":
            clock.advance(timedelta(seconds=15))
        return x

    out: list[Any] = []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(["b1", "b2", "tick", "a1"]))
    s = op.map("tick", s, advance_on_tick)
    s = op.key_on("key", s, lambda x: "a" if x in ("tick", "a1") else "b")
    windower = TumblingWindower(timedelta(seconds=10), T0)
    wo = win.collect_window("collect", s, SystemClock(_now_getter=clock.get), windower)
    op.output("out", wo.down, TestingSink(out))
    op.output("meta", wo.meta, TestingSink(out))

    run_main(flow, _now_getter=clock.get)
    # "b"'s window closes by notification once 15 s passed, before the end of input closes "a"'s
    # (at the end of input, keys come in key order: "a" would come first).
    assert out == [
        ("b", (0, ["b1", "b2"])),
        ("b", (0, WindowMetadata(T0, _at(10)))),
        ("a", (1, ["tick", "a1"])),
        ("a", (1, WindowMetadata(_at(10), _at(20)))),
    ]


def test_event_clock_watermark_follows_the_injected_now() -> None:
    clock = TimeTestingGetter(T0)
    logic = _EventClockLogic(clock.get, _ts, lambda t: t, timedelta(seconds=5))
    logic.before_batch()
    assert logic.on_item(("k", 10, "x")) == (_at(10), _at(5))
    clock.advance(timedelta(seconds=3))
    assert logic.on_notify() == _at(8)
    assert logic.snapshot().watermark_base == _at(5)
    # A `to_system_utc` of the user's is used as given.
    assert logic.to_system_utc(_at(30)) == _at(30)


def test_event_clock_wakes_up_when_the_watermark_gets_there() -> None:
    # By default the wake-up for an event time is the system time at which the watermark reaches
    # it (Bytewax passes the event time through as a system time).
    clock = TimeTestingGetter(datetime(2030, 1, 1, tzinfo=UTC))
    logic = EventClock(_ts, timedelta(seconds=5), now_getter=clock.get).build(None)
    assert logic.to_system_utc(_at(7)) is None  # no item yet: the watermark is at UTC_MIN
    logic.before_batch()
    logic.on_item(("k", 10, "x"))  # watermark 5 s, at system time 2030-01-01
    assert logic.to_system_utc(_at(7)) == clock.get() + timedelta(seconds=2)
    assert logic.to_system_utc(_at(7) + timedelta(microseconds=1)) == clock.get() + timedelta(seconds=2.001)


# Merges. ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("insert_mode", "expected"),
    [
        ("first", [("L1", "R1")]),
        ("last", [("L2", "R1")]),
        ("product", [("L1", "R1"), ("L2", "R1")]),
    ],
)
def test_join_window_merge_keeps_the_insert_mode(insert_mode: str, expected: list[Any]) -> None:
    # L1 (0 s) and L2 (20 s) open two sessions; R1 (10 s) merges them. Bytewax 0.21 swaps the
    # "first" and "last" results of such a merge (it keeps L2 for "first" and L1 for "last").
    out: list[Any] = []
    flow = Dataflow("test_df")
    lefts = op.input("l", flow, TestingSource([("k", 0, "L1"), ("k", 20, "L2")], 2))
    rights = op.input("r", flow, TestingSource([("k", 10, "R1")]))
    keyed_l = op.key_on("kl", lefts, lambda e: e[0])
    keyed_r = op.key_on("kr", rights, lambda e: e[0])
    clock = EventClock(_ts, wait_for_system_duration=timedelta.max)
    joined = win.join_window(
        "join",
        clock,
        SessionWindower(timedelta(seconds=10)),
        keyed_l,
        keyed_r,
        insert_mode=insert_mode,  # type: ignore[arg-type]
        ordered=False,
    )
    op.output("out", op.map("names", joined.down, lambda x: tuple(e[2] for e in x[1][1])), TestingSink(out))
    metas: list[Any] = []
    op.output("meta", joined.meta, TestingSink(metas))

    run_main(flow)
    assert out == expected
    assert metas == [("k", (0, WindowMetadata(T0, _at(20), {1})))]


def test_merged_ids_include_windows_merged_earlier() -> None:
    # Sessions 0..2 at 0, 30, 50 s; 40 s merges 2 into 1; 15 s opens 3; 20 s merges 1 into 3.
    # Bytewax 0.21 lists only {1} for window 3; the ids merged into 1 before are listed too here.
    events = [("k", t, str(t)) for t in (0, 30, 50, 40, 15, 20)]
    out: list[Any] = []
    flow = Dataflow("test_df")
    s = op.key_on("key", op.input("inp", flow, TestingSource(events)), lambda e: e[0])
    clock = EventClock(_ts, wait_for_system_duration=timedelta.max)
    wo = win.collect_window("collect", s, clock, SessionWindower(timedelta(seconds=10)), ordered=False)
    op.output("down", op.map_value("names", wo.down, _names), TestingSink(out))
    op.output("meta", wo.meta, TestingSink(out))

    run_main(flow)
    assert out == [
        ("k", (0, ["0"])),
        ("k", (3, ["15", "30", "40", "50", "20"])),
        ("k", (0, WindowMetadata(T0, T0))),
        ("k", (3, WindowMetadata(_at(15), _at(50), {1, 2}))),
    ]


def test_collect_window_into_set_and_dict() -> None:
    out: list[Any] = []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource([("k", 0, "x"), ("k", 1, "x"), ("k", 2, "y")]))
    s = op.key_on("key", s, lambda e: e[0])
    windower = TumblingWindower(timedelta(seconds=10), T0)
    names = op.map_value("names", s, _name)
    keyed_names = op.map_value("pairs", s, lambda e: (e[2], e[1]))
    # Every value at T0, and a clock whose system time stands still: nothing is late.
    clock = EventClock(lambda _v: T0, ZERO_TD, now_getter=lambda: T0)
    as_set = win.collect_window("as_set", names, clock, windower, into=set)
    as_dict = win.collect_window("as_dict", keyed_names, clock, windower, into=dict)
    op.output("set", as_set.down, TestingSink(out))
    op.output("dict", as_dict.down, TestingSink(out))

    run_main(flow)
    assert out == [("k", (0, {"x", "y"})), ("k", (0, {"x": 1, "y": 2}))]


# Errors. ----------------------------------------------------------------------------------------


def _one_step_flow() -> tuple[Dataflow, Any]:
    flow = Dataflow("test_df")
    return flow, op.key_on("key", op.input("inp", flow, TestingSource([("k", 0, "x")])), lambda e: e[0])


def test_bad_arguments_are_rejected_at_build_time() -> None:
    with pytest.raises(ValueError, match="sliding window `offset` can't be longer than `length`"):
        SlidingWindower(timedelta(seconds=5), timedelta(seconds=10), T0)
    with pytest.raises(ValueError, match="must be positive"):
        TumblingWindower(ZERO_TD, T0)
    with pytest.raises(ValueError, match="session window `gap` must not be negative"):
        SessionWindower(timedelta(seconds=-1))
    _flow, s = _one_step_flow()
    clock = EventClock(_ts, ZERO_TD)
    windower = TumblingWindower(timedelta(seconds=10), T0)
    with pytest.raises(TypeError, match=re.escape("`collect_window` doesn't support `<class 'tuple'>`")):
        win.collect_window("c", s, clock, windower, into=tuple)
    with pytest.raises(ValueError, match="unknown join emit mode 'sometimes'"):
        win.join_window("j", clock, windower, s, emit_mode="sometimes")  # type: ignore[call-overload]


def test_naive_timestamps_name_the_step_and_key() -> None:
    flow, s = _one_step_flow()
    clock = EventClock(lambda e: datetime(2024, 1, 1), ZERO_TD)
    wo = win.collect_window("c", s, clock, TumblingWindower(timedelta(seconds=10), T0))
    op.output("out", wo.down, TestingSink([]))
    with pytest.raises(BytewaxRuntimeError, match=r"test_df\.c\..*'k'.*aware UTC datetimes"):
        run_main(flow)


def test_collect_into_dict_needs_pairs() -> None:
    flow, s = _one_step_flow()
    clock = EventClock(_ts, ZERO_TD)
    wo = win.collect_window("c", s, clock, TumblingWindower(timedelta(seconds=10), T0), into=dict)
    op.output("out", wo.down, TestingSink([]))
    with pytest.raises(BytewaxRuntimeError, match="requires `\\(key, value\\)` 2-tuple"):
        run_main(flow)


# Many windows, unordered. ------------------------------------------------------------------------


@pytest.mark.slow
def test_fold_window_unordered_over_many_windows() -> None:
    # Two items a second for 20,000 s, one-minute windows, items folded as they come (ordered=False).
    inp = [T0 + timedelta(milliseconds=500 * i) for i in range(40_000)]
    out: list[Any] = []

    flow = Dataflow("many")
    s = op.key_on("k", op.input("in", flow, TestingSource(inp, 25)), lambda _: "all")
    clock = EventClock(lambda t: t, wait_for_system_duration=ZERO_TD)
    wo = win.fold_window(
        "count",
        s,
        clock,
        TumblingWindower(timedelta(minutes=1), T0),
        int,
        lambda n, _t: n + 1,
        int.__add__,
        ordered=False,
    )
    op.output("out", wo.down, TestingSink(out))

    run_main(flow)
    assert out == [("all", (i, 120)) for i in range(333)] + [("all", (333, 40))]
