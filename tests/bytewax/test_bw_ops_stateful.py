"""The keyed, stateful operators with Bytewax 0.21.1's semantics: the ``*_final`` reductions,
``collect``, ``join``, ``stateful_map``, ``stateful_flat_map`` and ``stateful`` with its
``StatefulLogic`` contract (what ``RETAIN`` / ``DISCARD`` after an item, a notification or the
end of input do to a key's logic, also across a resume from a recovery store)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from test_bw_ops_stateless import chain_text

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow, Stream
from fs_compat.bytewax.operators import (
    StatefulLogic,
    _CollectLogic,
    _CollectState,
    _JoinState,
    _StatefulFlatMapLogic,
)
from fs_compat.bytewax.recovery import RecoveryConfig
from fs_compat.bytewax.testing import TestingSink, TestingSource, TimeTestingGetter, run_main

NO_WAIT = timedelta(0)
SALES = [("north", 12), ("south", 5), ("north", 3), ("east", 9), ("south", 20), ("north", 7)]


def through(items: Iterable[Any], step: Callable[[Stream[Any]], Stream[Any]], **source: Any) -> list[Any]:
    out: list[Any] = []
    flow = Dataflow("sales")
    op.output("sink", step(op.input("src", flow, TestingSource(items, **source))), TestingSink(out))
    run_main(flow)
    return out


# Reductions at the end of input: one item per key, keys in sorted order. ----------------------


def test_count_final() -> None:
    words = ["to", "be", "or", "not", "to", "be", "to"]
    assert through(words, lambda s: op.count_final("n", s, lambda w: w)) == [
        ("be", 2),
        ("not", 1),
        ("or", 1),
        ("to", 3),
    ]


def test_fold_final() -> None:
    got = through(SALES, lambda s: op.fold_final("hist", s, tuple, lambda acc, v: (*acc, v)))
    assert got == [("east", (9,)), ("north", (12, 3, 7)), ("south", (5, 20))]


def test_reduce_final_over_batches() -> None:
    got = through(SALES, lambda s: op.reduce_final("total", s, lambda a, b: a + b), batch_size=4)
    assert got == [("east", 9), ("north", 22), ("south", 25)]


READINGS = [{"room": "lab", "t": 19.5}, {"room": "lab", "t": 23.0}, {"room": "lab", "t": 17.25}]


def test_max_final() -> None:
    got = through(
        READINGS, lambda s: op.max_final("hot", op.key_on("k", s, lambda r: r["room"]), by=lambda r: r["t"])
    )
    assert got == [("lab", {"room": "lab", "t": 23.0})]


def test_min_final() -> None:
    got = through(
        READINGS, lambda s: op.min_final("cold", op.key_on("k", s, lambda r: r["room"]), by=lambda r: r["t"])
    )
    assert got == [("lab", {"room": "lab", "t": 17.25})]


# collect ----------------------------------------------------------------------------------------


def test_collect_logic_snapshot_holds_the_items_and_the_timeout() -> None:
    t0 = datetime(2024, 6, 1, 12, tzinfo=UTC)
    logic = _CollectLogic("sales.c", lambda: t0, timedelta(minutes=1), 5, _CollectState())
    logic.on_item("first")
    assert logic.snapshot() == _CollectState(["first"], t0 + timedelta(minutes=1))


def test_collect_emits_full_lists_and_the_rest_at_the_end() -> None:
    # A timeout far away: only the size and the end of input close a list.
    got = through(
        range(7), lambda s: op.collect("c", op.key_on("one", s, lambda _: "k"), timedelta(hours=1), 2)
    )
    assert got == [("k", [0, 1]), ("k", [2, 3]), ("k", [4, 5]), ("k", [6])]


@pytest.mark.in_process("shared clock (a map step advances the injected clock)")
def test_collect_timeout_with_injected_clock() -> None:
    clock = TimeTestingGetter(datetime(2024, 6, 1, tzinfo=UTC))

    def late_c(x: str) -> str:
        if x == "c1":  # "c1" arrives a minute later: "d" times out, "c" restarts its timeout
            clock.advance(timedelta(minutes=1))
        return x

    flow = Dataflow("sales")
    s = op.map("tick", op.input("src", flow, TestingSource(["c0", "d0", "c1", "d1"])), late_c)
    s = op.collect("c", op.key_on("k", s, lambda x: x[0]), timedelta(seconds=30), 9, _now_getter=clock.get)
    out: list[Any] = []
    op.output("sink", s, TestingSink(out))
    run_main(flow, _now_getter=clock.get)
    assert out == [("d", ["d0"]), ("c", ["c0", "c1"]), ("d", ["d1"])]


# join -------------------------------------------------------------------------------------------


def test_join_state_lists_every_combination_with_none_for_an_empty_side() -> None:
    state = _JoinState.for_side_count(3)
    for side, value in [(1, "b1"), (0, "a1"), (1, "b2")]:
        state.add_val(side, value)
    assert list(state.astuples()) == [("a1", "b1", None), ("a1", "b2", None)]


def joined(lefts: list[Any], rights: list[Any], **modes: Any) -> list[Any]:
    out: list[Any] = []
    flow = Dataflow("sales")
    a = op.key_on("ka", op.input("a", flow, TestingSource(lefts)), lambda _: "k")
    b = op.key_on("kb", op.input("b", flow, TestingSource(rights)), lambda _: "k")
    op.output("sink", op.key_rm("rm", op.join("j", a, b, **modes)), TestingSink(out))
    run_main(flow)
    return out


@pytest.mark.parametrize(
    ("modes", "lefts", "rights", "expected"),
    [
        ({"emit_mode": "complete"}, ["x"], ["y"], [("x", "y")]),
        ({"emit_mode": "final"}, ["x"], ["y", "z"], [("x", "z")]),
        ({"emit_mode": "running"}, ["x"], ["y", "z"], [("x", None), ("x", "y"), ("x", "z")]),
        (
            {"insert_mode": "product", "emit_mode": "final"},
            ["x", "w"],
            ["y", "z"],
            [("x", "y"), ("x", "z"), ("w", "y"), ("w", "z")],
        ),
        ({"insert_mode": "first", "emit_mode": "final"}, ["x", "w"], ["y", "z"], [("x", "y")]),
        ({}, ["x", "w"], ["y", "z"], [("x", "y"), ("w", "z")]),  # last / complete by default
    ],
    ids=["complete", "final", "running", "product-final", "first-final", "defaults"],
)
def test_join_modes(modes: dict[str, str], lefts: list[str], rights: list[str], expected: list[Any]) -> None:
    assert joined(lefts, rights, **modes) == expected


def test_join_running() -> None:
    assert joined([1], [2, 3], emit_mode="running") == [(1, None), (1, 2), (1, 3)]


def test_join_product_final() -> None:
    assert joined([1, 2], [3, 4], insert_mode="product", emit_mode="final") == [
        (1, 3),
        (1, 4),
        (2, 3),
        (2, 4),
    ]


def test_join_rejects_unknown_modes_when_built() -> None:
    flow = Dataflow("sales")
    k = op.key_on("k", op.input("src", flow, TestingSource(["a"])), str)
    with pytest.raises(ValueError, match=re.escape("unknown join insert mode 'newest'")):
        op.join("j1", k, k, insert_mode="newest")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=re.escape("unknown join emit mode 'eager'")):
        op.join("j2", k, k, emit_mode="eager")  # type: ignore[arg-type]


# stateful_map / stateful_flat_map ----------------------------------------------------------------


def running_total(total: int | None, value: int) -> tuple[int, tuple[int, int]]:
    total = (total or 0) + value
    return total, (value, total)


def test_stateful_map_threads_each_keys_state() -> None:
    assert through(SALES, lambda s: op.stateful_map("run", s, running_total)) == [
        ("north", (12, 12)),
        ("south", (5, 5)),
        ("north", (3, 15)),
        ("east", (9, 9)),
        ("south", (20, 25)),
        ("north", (7, 22)),
    ]


def test_stateful_map_mapper_must_return_a_2_tuple() -> None:
    with pytest.raises(RuntimeError) as info:
        through(SALES, lambda s: op.stateful_map("bad", s, lambda st, v: v))
    assert "must be a 2-tuple" in chain_text(info.value)


def test_stateful_flat_map_emits_what_the_mapper_returns() -> None:
    def rises(last: int | None, value: int) -> tuple[int, list[int]]:
        return value, [value] if last is None or value > last else []

    got = through(
        [4, 1, 6, 9, 2, 3], lambda s: op.stateful_flat_map("up", op.key_on("k", s, lambda _: "all"), rises)
    )
    assert got == [("all", 4), ("all", 6), ("all", 9), ("all", 3)]


def test_stateful_flat_map_logic_discards_on_none_state_and_snapshots_the_state() -> None:
    logic = _StatefulFlatMapLogic("sales.s", lambda st, v: (None, [v]), None)
    assert logic.on_item("v") == (["v"], StatefulLogic.DISCARD)

    logic = _StatefulFlatMapLogic("sales.s", lambda st, v: ({"seen": v}, []), None)
    assert logic.on_item(5) == ([], StatefulLogic.RETAIN)
    assert logic.snapshot() == {"seen": 5}


# stateful and the StatefulLogic contract ---------------------------------------------------------


def phases(
    *, item: bool = False, notify: bool = False, eof: bool = False, wake: bool = False
) -> type[StatefulLogic]:
    """A logic whose state is the last hook that ran; each hook emits ``(before, after)`` and
    returns DISCARD where asked. ``wake``: every item asks for a notification now."""

    class Phases(StatefulLogic):
        def __init__(self, resume: str | None) -> None:
            self.state = resume or "born"
            self.wake_at: datetime | None = None

        def _step(self, to: str, discard: bool) -> tuple[list[Any], bool]:
            before, self.state = self.state, to
            return [(before, to)], StatefulLogic.DISCARD if discard else StatefulLogic.RETAIN

        def on_item(self, value: Any) -> tuple[list[Any], bool]:
            if wake:
                self.wake_at = datetime.now(UTC)
            return self._step("fed", item)

        def on_notify(self) -> tuple[list[Any], bool]:
            self.wake_at = None
            return self._step("woke", notify)

        def on_eof(self) -> tuple[list[Any], bool]:
            return self._step("ended", eof)

        def notify_at(self) -> datetime | None:
            return self.wake_at

        def snapshot(self) -> Any:
            return self.state

    return Phases


def stateful_flow(items: list[Any], logic: type[StatefulLogic], out: list[Any]) -> Dataflow:
    flow = Dataflow("sales")
    s = op.input("src", flow, TestingSource(items))
    op.output("sink", op.stateful("st", op.key_on("k", s, lambda _: "only"), logic), TestingSink(out))
    return flow


@pytest.mark.in_process("recovery (TestingSource.ABORT)", streaming=True)
@pytest.mark.parametrize(
    ("logic", "expected"),
    [
        (phases(item=True), [("born", "fed"), ("born", "fed")]),
        (phases(), [("born", "fed"), ("fed", "fed")]),
        (
            phases(wake=True, notify=True),
            [("born", "fed"), ("fed", "woke"), ("born", "fed"), ("fed", "woke")],
        ),
        (phases(wake=True), [("born", "fed"), ("fed", "woke"), ("woke", "fed"), ("fed", "woke")]),
    ],
    ids=["item-discard", "item-retain", "notify-discard", "notify-retain"],
)
def test_logic_after_item_and_notify(logic: type[StatefulLogic], expected: list[Any]) -> None:
    out: list[Any] = []
    # An abort ends the run without an end of input, so no on_eof.
    run_main(stateful_flow(["p", "q", TestingSource.ABORT()], logic, out), epoch_interval=NO_WAIT)
    assert [v for _k, v in out] == expected


@pytest.mark.in_process("recovery (run_main recovery_config)", streaming=True)
@pytest.mark.parametrize(("discard", "resumed"), [(True, ("born", "fed")), (False, ("ended", "fed"))])
def test_logic_after_eof_is_kept_or_dropped_for_the_next_run(
    discard: bool, resumed: tuple[str, str], recovery_config: RecoveryConfig
) -> None:
    out: list[Any] = []
    flow = stateful_flow(["p", TestingSource.EOF(), "q", TestingSource.ABORT()], phases(eof=discard), out)
    run_main(flow, epoch_interval=NO_WAIT, recovery_config=recovery_config)
    assert out == [("only", ("born", "fed")), ("only", ("fed", "ended"))]
    out.clear()
    run_main(flow, epoch_interval=NO_WAIT, recovery_config=recovery_config)
    assert out == [("only", resumed)]


class Latest(StatefulLogic):
    """Keeps a key's latest value; a negative value is emitted and then discards the logic."""

    def __init__(self, resume: int | None) -> None:
        self.latest = resume

    def on_item(self, value: int) -> tuple[list[Any], bool]:
        before, self.latest = self.latest, value
        return [(before, value)], value < 0

    def snapshot(self) -> Any:
        return self.latest


def latest_flow(items: list[Any], out: list[Any]) -> Dataflow:
    flow = Dataflow("sales")
    op.output(
        "sink", op.stateful("st", op.input("src", flow, TestingSource(items)), Latest), TestingSink(out)
    )
    return flow


def test_stateful_keeps_one_logic_per_key() -> None:
    out: list[Any] = []
    run_main(latest_flow([("x", 1), ("y", 10), ("y", 11), ("x", 2)], out), epoch_interval=NO_WAIT)
    assert out == [("x", (None, 1)), ("y", (None, 10)), ("y", (10, 11)), ("x", (1, 2))]


ABORT = TestingSource.ABORT


@pytest.mark.in_process("recovery (run_main recovery_config)", streaming=True)
@pytest.mark.parametrize(
    ("items", "runs"),
    [
        # Each key's snapshot is resumed.
        (
            [("x", 1), ("y", 10), ABORT(), ("x", 2), ("y", 11)],
            [[("x", (None, 1)), ("y", (None, 10))], [("x", (1, 2)), ("y", (10, 11))]],
        ),
        # A discarded key starts afresh; the others resume.
        (
            [("x", 1), ("y", 10), ("x", -1), ("y", 11), ABORT(), ("x", 3), ("y", 12)],
            [
                [("x", (None, 1)), ("y", (None, 10)), ("x", (1, -1)), ("y", (10, 11))],
                [("x", (None, 3)), ("y", (11, 12))],
            ],
        ),
        # Snapshots from older runs are found, and a discard in a later run wins.
        (
            [
                ("x", 1),
                ABORT(),
                ("y", 10),
                ABORT(),
                ("z", 100),
                ("y", -10),
                ABORT(),
                ("x", 2),
                ("y", 11),
                ("z", 101),
            ],
            [
                [("x", (None, 1))],
                [("y", (None, 10))],
                [("y", (10, 10)), ("z", (None, 100)), ("y", (10, -10))],
                [("y", (None, -10)), ("x", (1, 2)), ("y", (None, 11)), ("z", (100, 101))],
            ],
        ),
    ],
    ids=["per-key", "discard-per-key", "older-snapshots"],
)
def test_stateful_resumes_each_keys_snapshot(
    items: list[Any], runs: list[list[Any]], recovery_config: RecoveryConfig
) -> None:
    out: list[Any] = []
    flow = latest_flow(items, out)
    for expected in runs:
        out.clear()
        run_main(flow, epoch_interval=NO_WAIT, recovery_config=recovery_config)
        assert out == expected
