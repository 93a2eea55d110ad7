# Ported from bytewax/bytewax pytests/operators/test_stateful.py (imports changed; the later
# `recovery_config_immediate` fixture is 0.21's `recovery_config`).
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.operators import StatefulLogic
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main

ZERO_TD = timedelta(seconds=0)


class BaseTestLogic(StatefulLogic):
    item_triggers_notify = False
    after_item = StatefulLogic.RETAIN
    after_notify = StatefulLogic.RETAIN
    after_eof = StatefulLogic.RETAIN

    def __init__(self, state: Any):
        self._notify_at: datetime | None = None
        self._state = state if state is not None else "NEW"

    def on_item(self, value: Any) -> tuple[list[Any], bool]:
        if self.item_triggers_notify:
            self._notify_at = datetime.now(UTC)

        old_state = self._state
        self._state = "ITEM"
        return ([(old_state, self._state)], self.after_item)

    def on_notify(self) -> tuple[list[Any], bool]:
        self._notify_at = None

        old_state = self._state
        self._state = "NOTIFY"
        return ([(old_state, self._state)], self.after_notify)

    def on_eof(self) -> tuple[list[Any], bool]:
        old_state = self._state
        self._state = "EOF"
        return ([(old_state, self._state)], self.after_eof)

    def notify_at(self) -> datetime | None:
        return self._notify_at

    def snapshot(self) -> Any:
        return self._state


def _flow(inp, out, logic, key=True):
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(inp))
    if key:
        s = op.key_on("key", s, lambda _x: "ALL")
    s = op.stateful("stateful", s, logic)
    op.output("out", s, TestingSink(out))
    return flow


@pytest.mark.in_process("recovery (TestingSource.ABORT)")
def test_stateful_on_item_discard():
    out = []

    class TestLogic(BaseTestLogic):
        after_item = StatefulLogic.DISCARD

    run_main(_flow([1, 2, TestingSource.ABORT()], out, TestLogic), epoch_interval=ZERO_TD)
    assert out == [("ALL", ("NEW", "ITEM")), ("ALL", ("NEW", "ITEM"))]


@pytest.mark.in_process("recovery (TestingSource.ABORT)")
def test_stateful_on_item_retain():
    out = []

    class TestLogic(BaseTestLogic):
        after_item = StatefulLogic.RETAIN

    run_main(_flow([1, 2, TestingSource.ABORT()], out, TestLogic), epoch_interval=ZERO_TD)
    assert out == [("ALL", ("NEW", "ITEM")), ("ALL", ("ITEM", "ITEM"))]


@pytest.mark.in_process("recovery (TestingSource.ABORT)")
def test_stateful_on_notify_discard():
    out = []

    class TestLogic(BaseTestLogic):
        item_triggers_notify = True
        after_notify = StatefulLogic.DISCARD

    run_main(_flow([1, 2, TestingSource.ABORT()], out, TestLogic), epoch_interval=ZERO_TD)
    assert out == [
        ("ALL", ("NEW", "ITEM")),
        ("ALL", ("ITEM", "NOTIFY")),
        ("ALL", ("NEW", "ITEM")),
        ("ALL", ("ITEM", "NOTIFY")),
    ]


@pytest.mark.in_process("recovery (TestingSource.ABORT)")
def test_stateful_on_notify_retain():
    out = []

    class TestLogic(BaseTestLogic):
        item_triggers_notify = True
        after_notify = StatefulLogic.RETAIN

    run_main(_flow([1, 2, TestingSource.ABORT()], out, TestLogic), epoch_interval=ZERO_TD)
    assert out == [
        ("ALL", ("NEW", "ITEM")),
        ("ALL", ("ITEM", "NOTIFY")),
        ("ALL", ("NOTIFY", "ITEM")),
        ("ALL", ("ITEM", "NOTIFY")),
    ]


@pytest.mark.in_process("recovery (run_main recovery_config)")
def test_stateful_on_eof_discard(recovery_config):
    out = []

    class TestLogic(BaseTestLogic):
        after_eof = StatefulLogic.DISCARD

    flow = _flow([1, TestingSource.EOF(), 2, TestingSource.ABORT()], out, TestLogic)
    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config)
    assert out == [("ALL", ("NEW", "ITEM")), ("ALL", ("ITEM", "EOF"))]

    out.clear()
    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config)
    assert out == [("ALL", ("NEW", "ITEM"))]


@pytest.mark.in_process("recovery (run_main recovery_config)")
def test_stateful_on_eof_retain(recovery_config):
    out = []

    class TestLogic(BaseTestLogic):
        after_eof = StatefulLogic.RETAIN

    flow = _flow([1, TestingSource.EOF(), 2, TestingSource.ABORT()], out, TestLogic)
    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config)
    assert out == [("ALL", ("NEW", "ITEM")), ("ALL", ("ITEM", "EOF"))]

    out.clear()
    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config)
    assert out == [("ALL", ("EOF", "ITEM"))]


class KeepLastLogic(StatefulLogic):
    def __init__(self, resume_state: Any):
        self._state = resume_state

    def on_item(self, value: Any) -> tuple[list[Any], bool]:
        old_state = self._state
        self._state = value
        return ([(old_state, self._state)], self._state == "DISCARD")

    def snapshot(self) -> Any:
        return self._state


def test_stateful_keeps_logic_per_key():
    inp = [("a", "a1"), ("b", "b1"), ("a", "a2"), ("b", "b2")]
    out = []
    run_main(_flow(inp, out, KeepLastLogic, key=False), epoch_interval=ZERO_TD)
    assert out == [
        ("a", (None, "a1")),
        ("b", (None, "b1")),
        ("a", ("a1", "a2")),
        ("b", ("b1", "b2")),
    ]


@pytest.mark.in_process("recovery (run_main recovery_config)")
def test_stateful_snapshots_logic_per_key(recovery_config):
    inp = [("a", "a1"), ("b", "b1"), TestingSource.ABORT(), ("a", "a2"), ("b", "b2")]
    out = []
    flow = _flow(inp, out, KeepLastLogic, key=False)

    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config)
    assert out == [("a", (None, "a1")), ("b", (None, "b1"))]

    out.clear()
    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config)
    assert out == [("a", ("a1", "a2")), ("b", ("b1", "b2"))]


@pytest.mark.in_process("recovery (run_main recovery_config)")
def test_stateful_snapshots_discard_per_key(recovery_config):
    inp = [
        ("a", "a1"),
        ("b", "b1"),
        ("a", "DISCARD"),
        ("b", "b2"),
        TestingSource.ABORT(),
        ("a", "a3"),
        ("b", "b3"),
    ]
    out = []
    flow = _flow(inp, out, KeepLastLogic, key=False)

    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config)
    assert out == [
        ("a", (None, "a1")),
        ("b", (None, "b1")),
        ("a", ("a1", "DISCARD")),
        ("b", ("b1", "b2")),
    ]

    out.clear()
    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config)
    assert out == [("a", (None, "a3")), ("b", ("b2", "b3"))]


@pytest.mark.in_process("recovery (run_main recovery_config)")
def test_stateful_recovers_older_snapshots(recovery_config):
    inp = [
        ("a", "a1"),
        TestingSource.ABORT(),
        ("b", "b1"),
        TestingSource.ABORT(),
        ("c", "c1"),
        ("b", "DISCARD"),
        TestingSource.ABORT(),
        ("a", "a2"),
        ("b", "b2"),
        ("c", "c2"),
    ]
    out = []
    flow = _flow(inp, out, KeepLastLogic, key=False)

    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config)
    assert out == [("a", (None, "a1"))]

    out.clear()
    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config)
    assert out == [("b", (None, "b1"))]

    out.clear()
    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config)
    assert out == [("b", ("b1", "b1")), ("c", (None, "c1")), ("b", ("b1", "DISCARD"))]

    out.clear()
    run_main(flow, epoch_interval=ZERO_TD, recovery_config=recovery_config)
    assert out == [
        ("b", (None, "DISCARD")),
        ("a", ("a1", "a2")),
        ("b", (None, "b2")),
        ("c", ("c1", "c2")),
    ]
