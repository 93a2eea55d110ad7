# Ported from bytewax/bytewax pytests/operators/test_collect.py; the timeout test is ours (the
# original cannot test system time; `_now_getter` injects a clock).
from datetime import UTC, datetime, timedelta

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.operators import _CollectLogic, _CollectState
from fs_compat.bytewax.testing import TestingSink, TestingSource, TimeTestingGetter, run_main


def test_collect_logic_snapshot():
    now = datetime(2023, 1, 1, tzinfo=UTC)
    timeout = timedelta(seconds=10)
    logic = _CollectLogic("test_step", lambda: now, timeout, 3, _CollectState())

    logic.on_item(1)

    assert logic.snapshot() == _CollectState([1], now + timeout)


def test_collect():
    inp = list(range(10))
    out = []

    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(inp))
    s = op.key_on("key", s, lambda _x: "ALL")
    # Use a long timeout to avoid triggering that.
    # We can't easily test system time based behavior.
    s = op.collect("collect", s, timedelta(seconds=10), 3)
    op.output("out", s, TestingSink(out))

    run_main(flow)
    assert out == [
        ("ALL", [0, 1, 2]),
        ("ALL", [3, 4, 5]),
        ("ALL", [6, 7, 8]),
        ("ALL", [9]),
    ]


@pytest.mark.in_process("shared clock (a map step advances the injected clock)")
def test_collect_timeout_with_injected_clock():
    clock = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=UTC))
    out = []

    def tick(x):
        # Item 2 arrives 11 s later: "odd" times out; "even" got item 2 first (items are
        # handled before notifications in an activation), which reset its timeout.
        if x == 2:
            clock.advance(timedelta(seconds=11))
        return x

    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource([0, 1, 2, 3]))
    s = op.map("tick", s, tick)
    s = op.key_on("key", s, lambda x: "even" if x % 2 == 0 else "odd")
    s = op.collect("collect", s, timedelta(seconds=10), 5, _now_getter=clock.get)
    op.output("out", s, TestingSink(out))

    run_main(flow, _now_getter=clock.get)
    assert out == [("odd", [1]), ("even", [0, 2]), ("odd", [3])]
