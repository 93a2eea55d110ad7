# Ported from bytewax/bytewax pytests/operators/windowing/test_join_window.py (imports changed).
# The stored upstream version passes the older `mode=` (`JoinMode`) of `join_window`; 0.21 has
# `insert_mode` / `emit_mode` instead, so each `mode` is spelled as its 0.21 pair:
# "complete" / "final" / "running" -> `emit_mode=` that, "product" -> `insert_mode="product"`
# (with the 0.21 default `emit_mode="final"`).
# Checked against bytewax==0.21.1 itself; ruff then respelled `timezone.utc` and `typing` generics.
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import fs_compat.bytewax.operators as op
import fs_compat.bytewax.operators.windowing as win
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.operators.windowing import EventClock, SessionWindower
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main

_MODES = {
    "complete": {"emit_mode": "complete"},
    "final": {"emit_mode": "final"},
    "running": {"emit_mode": "running"},
    "product": {"insert_mode": "product"},
}


@dataclass(frozen=True)
class _Event:
    timestamp: datetime
    value: int

    def ts_getter(self) -> datetime:
        return self.timestamp


def _build_join_window_dataflow(
    inp_l: list[_Event],
    inp_r: list[_Event],
    out: list[tuple[int | None, int | None]],
    mode: str,
) -> Dataflow:
    flow = Dataflow("test_df")
    lefts = op.input("inp_l", flow, TestingSource(inp_l))
    keyed_lefts = op.key_on("key_l", lefts, lambda _: "ALL")
    rights = op.input("inp_r", flow, TestingSource(inp_r))
    keyed_rights = op.key_on("key_r", rights, lambda _: "ALL")

    clock = EventClock(_Event.ts_getter, wait_for_system_duration=timedelta.max)
    windower = SessionWindower(timedelta(seconds=10))

    joined = win.join_window(
        "join",
        clock,
        windower,
        keyed_lefts,
        keyed_rights,
        **_MODES[mode],
    )
    unkeyed = op.key_rm("unkey", joined.down)

    def clean(
        id_row: tuple[int, tuple[_Event | None, _Event | None]],
    ) -> tuple[int | None, int | None]:
        _win_id, row = id_row
        v0 = row[0].value if row[0] is not None else None
        v1 = row[1].value if row[1] is not None else None
        return (v0, v1)

    cleaned = op.map("clean", unkeyed, clean)
    op.output("out", cleaned, TestingSink(out))
    return flow


def test_join_window_complete() -> None:
    align_to = datetime(2024, 1, 1, tzinfo=UTC)
    inp_l = [
        _Event(align_to, 1),
    ]
    inp_r = [
        _Event(align_to + timedelta(seconds=1), 2),
    ]
    out: list[tuple[int | None, int | None]] = []

    flow = _build_join_window_dataflow(inp_l, inp_r, out, "complete")

    run_main(flow)
    assert out == [
        (1, 2),
    ]


def test_join_window_final() -> None:
    align_to = datetime(2024, 1, 1, tzinfo=UTC)
    inp_l = [
        _Event(align_to, 1),
    ]
    inp_r = [
        _Event(align_to + timedelta(seconds=1), 2),
        _Event(align_to + timedelta(seconds=2), 3),
    ]
    out: list[tuple[int | None, int | None]] = []

    flow = _build_join_window_dataflow(inp_l, inp_r, out, "final")

    run_main(flow)
    assert out == [
        (1, 3),
    ]


def test_join_window_running() -> None:
    align_to = datetime(2024, 1, 1, tzinfo=UTC)
    inp_l = [
        _Event(align_to, 1),
    ]
    inp_r = [
        _Event(align_to + timedelta(seconds=1), 2),
        _Event(align_to + timedelta(seconds=2), 3),
    ]
    out: list[tuple[int | None, int | None]] = []

    flow = _build_join_window_dataflow(inp_l, inp_r, out, "running")

    run_main(flow)
    assert out == [
        (1, None),
        (1, 2),
        (1, 3),
    ]


def test_join_window_product() -> None:
    align_to = datetime(2024, 1, 1, tzinfo=UTC)
    inp_l = [
        _Event(align_to, 1),
        _Event(align_to + timedelta(seconds=1), 2),
    ]
    inp_r = [
        _Event(align_to + timedelta(seconds=1), 3),
        _Event(align_to + timedelta(seconds=2), 4),
    ]
    out: list[tuple[int | None, int | None]] = []

    flow = _build_join_window_dataflow(inp_l, inp_r, out, "product")

    run_main(flow)
    assert out == [
        (1, 3),
        (1, 4),
        (2, 3),
        (2, 4),
    ]
