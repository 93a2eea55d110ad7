"""The per-item paths of the Bytewax operators (what engines call per record): ``stateful_map`` /
``stateful_flat_map`` values mapped without the logic layers (``StatefulBatchOperator`` with an
``ItemMapper`` builder; ``one_to_one`` for ``stateful_map``), ``map`` as ``one_to_one`` and
``flat_map`` item by item. Each is checked against the general path it stands for: the same
outputs, snapshots and errors (messages and causes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax._ops import FlatMapBatchOperator, StatefulBatchOperator
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.errors import BytewaxRuntimeError
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main
from fs_compat.runtime import KeyedStateBackend, KeyEncoder, LocalConfig, OperatorRuntime, StepError, TaskInfo
from fs_compat.runtime._subtask import SubtaskRunner


def _node(build: Callable[[Any], Any]) -> Any:
    """The plan node of the step ``build(upstream)`` adds last."""
    flow = Dataflow("df")
    build(op.input("inp", flow, TestingSource([])))
    return flow._plan.nodes[-1]


def _stateful(kind: Callable[..., Any], mapper: Callable[[Any, Any], Any]) -> StatefulBatchOperator:
    node = _node(lambda s: kind("sm", s, mapper))
    operator = node.operator_factory()
    assert isinstance(operator, StatefulBatchOperator) and operator.item is not None
    return operator


def _general(fast: StatefulBatchOperator) -> StatefulBatchOperator:
    """The same step without its ItemMapper: every value goes through the logics."""
    return StatefulBatchOperator(fast.step_id, lambda resume: fast.builder(resume), fast.logic_type)


def _runtime() -> OperatorRuntime:
    return OperatorRuntime(TaskInfo("sm", 1, 0), KeyedStateBackend(KeyEncoder(), clock=lambda: 0), lambda: 0)


def _chain(exc: BaseException | None) -> list[tuple[str, str]]:
    out = []
    while exc is not None:
        out.append((type(exc).__name__, str(exc)))
        exc = exc.__cause__
    return out


def _drive(
    operator: StatefulBatchOperator, items: list[tuple[str, Any]], how: str, rt: Any = None
) -> list[Any]:
    """Feed ``items`` one by one (``how``: ``one_to_one``, ``process`` or ``batch`` for the
    in-process runner's ``process_keyed``); each step's outputs or error chain, the snapshots
    and the end of input."""
    rt = rt if rt is not None else _runtime()
    operator.open(rt)
    seen: list[Any] = []
    for key, value in items:
        rt.backend.set_current_key(key)
        try:
            if how == "one_to_one":
                assert operator.one_to_one is not None
                seen.append([operator.one_to_one((key, value))])
            elif how == "process":
                seen.append(list(operator.process((key, value), rt)))
            else:
                seen.append(operator.process_keyed([(key, [(key, value)])], rt))
        except Exception as exc:
            seen.append(_chain(exc))
    seen.append(operator.snapshot_touched(rt))
    seen.append(list(operator.end_input(rt)))
    seen.append(operator.snapshot_touched(rt))
    return seen


def _counting(state: int | None, value: Any) -> tuple[Any, Any]:
    if value == "drop":
        return None, "dropped"
    if value == "none":
        return (state or 0), None
    if value == "fail":
        return 1 // 0, None
    if value == "bad":
        return state  # type: ignore[return-value]
    if value == "triple":
        return (state, 1, 2)  # type: ignore[return-value]
    total = (state or 0) + value
    return total, total


_ITEMS = [("a", 1), ("b", 10), ("a", 2), ("a", "none"), ("a", "drop"), ("a", 5), ("b", "fail"), ("b", 1)]
_ITEMS += [("c", "bad"), ("b", "triple"), ("b", 2), ("c", 3)]


def test_stateful_map_per_item_matches_the_logic_path() -> None:
    general = _drive(_general(_stateful(op.stateful_map, _counting)), _ITEMS, "process")
    assert general[:6] == [[("a", 1)], [("b", 10)], [("a", 3)], [("a", None)], [("a", "dropped")], [("a", 5)]]
    step = "df.sm.stateful_flat_map.stateful.stateful_batch"
    assert general[6] == [
        (
            "BytewaxRuntimeError",
            f"error calling `StatefulBatchLogic.on_batch` in step {step} for key 'b': "
            "ZeroDivisionError: integer division or modulo by zero",
        ),
        ("ZeroDivisionError", "integer division or modulo by zero"),
    ]
    assert (
        general[8][1][0] == "TypeError"
        and "must be a 2-tuple of `(updated_state, emit_value)`" in general[8][1][1]
    )
    assert general[8][2][0] == "TypeError"  # unpacking an int
    assert general[9][2][0] == "ValueError"  # too many values
    assert general[-3] == [("a", 5, True), ("b", 13, True), ("c", 3, True)]
    for how in ("one_to_one", "process", "batch"):
        assert _drive(_stateful(op.stateful_map, _counting), _ITEMS, how) == general, how


def _flat(state: int | None, value: Any) -> tuple[Any, Any]:
    if value == "not iterable":
        return (state or 0) + 1, 7
    if value == "drop":
        return None, ["x", "y"]
    if value == "bad":
        return 3  # type: ignore[return-value]
    total = (state or 0) + value
    return total, [total] * value


def test_stateful_flat_map_per_item_matches_the_logic_path() -> None:
    items = [
        ("a", 2),
        ("a", 0),
        ("a", "not iterable"),
        ("b", 1),
        ("a", "drop"),
        ("a", 1),
        ("b", "bad"),
        ("b", 2),
    ]
    general = _drive(_general(_stateful(op.stateful_flat_map, _flat)), items, "process")
    assert general[0] == [("a", 2), ("a", 2)] and general[4] == [("a", "x"), ("a", "y")]
    assert "`(updated_state, emit_values)`" in general[6][1][1]
    assert general[2][-1] == ("TypeError", "'int' object is not iterable")
    fast = _stateful(op.stateful_flat_map, _flat)
    assert fast.one_to_one is None  # not one-to-one
    assert _drive(fast, items, "process") == general
    assert _drive(_stateful(op.stateful_flat_map, _flat), items, "batch") == general


def test_a_resumed_key_continues_from_its_snapshot_on_the_per_item_path() -> None:
    rt = _runtime()
    first = _stateful(op.stateful_map, _counting)
    _drive(first, [("a", 1), ("b", 2), ("a", 3)], "one_to_one", rt)  # snapshots a=4, b=2
    # The engine restored the keyed state: a new operator rebuilds the logics from it.
    again = _stateful(op.stateful_map, _counting)
    seen = _drive(again, [("a", 10), ("c", 1), ("b", "drop"), ("b", 5)], "one_to_one", rt)
    assert seen[:4] == [[("a", 14)], [("c", 1)], [("b", "dropped")], [("b", 5)]]
    # The Bytewax runner's resume: ``restore`` with the snapshots of an epoch.
    restored = _stateful(op.stateful_map, _counting)
    rt2 = _runtime()
    restored.open(rt2)
    restored.restore(rt2, {"a": 100})
    rt2.backend.set_current_key("a")
    assert restored.one_to_one is not None and restored.one_to_one(("a", 1)) == ("a", 101)
    assert restored.snapshot_touched(rt2) == [("a", 101, True)]


def test_a_snapshot_is_a_copy_of_the_state() -> None:
    def keep(state: list[int] | None, value: int) -> tuple[list[int], int]:
        state = state if state is not None else []
        state.append(value)
        return state, len(state)

    operator = _stateful(op.stateful_map, keep)
    rt = _runtime()
    operator.open(rt)
    rt.backend.set_current_key("a")
    assert operator.one_to_one is not None
    operator.one_to_one(("a", 1))
    snap = operator.snapshot_touched(rt)
    operator.one_to_one(("a", 2))
    assert snap == [("a", [1], True)]
    assert operator.snapshot_touched(rt) == [("a", [1, 2], True)]


def _stateless(kind: Callable[..., Any], fn: Callable[[Any], Any]) -> FlatMapBatchOperator:
    operator = _node(lambda s: kind("m", s, fn)).operator_factory()
    assert isinstance(operator, FlatMapBatchOperator)
    return operator


def _reported(operator: FlatMapBatchOperator, value: Any) -> Any:
    """``one_to_one(value)`` as the runtime calls it: a failure is reported as
    ``one_to_one_error`` makes it."""
    assert operator.one_to_one is not None and operator.one_to_one_error is not None
    try:
        return operator.one_to_one(value)
    except Exception as exc:
        raise operator.one_to_one_error(exc)  # noqa: B904 - it sets the cause


def _outcome(fn: Callable[[], Any]) -> Any:
    try:
        return list(fn())
    except Exception as exc:
        return _chain(exc)


@pytest.mark.parametrize(
    ("kind", "fn", "one"),
    [
        (op.map, lambda x: 10 // x, True),
        (op.flat_map, lambda x: [x] * (3 - x) if x else 5, False),
        (op.filter, lambda x: x > 1 if x else "yes", False),
        (op.filter_map, lambda x: None if x == 1 else 10 // x, False),
    ],
)
def test_stateless_steps_per_item_match_their_batch(kind: Any, fn: Any, one: bool) -> None:
    operator = _stateless(kind, fn)
    assert (operator.one_to_one is not None) is one
    rt = _runtime()
    for x in (0, 1, 2, 3):
        expected = _outcome(lambda x=x: operator.process_batch([x], rt))
        assert _outcome(lambda x=x: operator.process(x, rt)) == expected, x
        if one:
            assert _outcome(lambda x=x: [_reported(operator, x)]) == expected, x
    assert operator.process_batch([1, 2, 3], rt) == [o for x in (1, 2, 3) for o in operator.process(x, rt)]


def test_w1_shape_in_one_pass_with_a_chained_map() -> None:
    """stateful_map -> map in one SubtaskRunner (the Spark run pass): ``push_many`` calls the
    ``one_to_one`` of both; a failing chained map names its step."""
    flow = Dataflow("df")
    s = op.input("inp", flow, TestingSource([]))
    counted = op.stateful_map("count", s, _counting)
    op.map("row", counted, lambda kv: (kv[0], 100 // kv[1] if isinstance(kv[1], int) else kv[1]))
    stateful_node, row_node = flow._plan.nodes[1:3]
    items = [("a", 1), ("b", 2), ("a", 3), ("b", "drop"), ("b", 4)]
    values: list[Any] = []
    runner = SubtaskRunner(stateful_node, 0, LocalConfig(), [1], (), [row_node], values)
    runner.records(0, items, [None] * len(items), [k for k, _ in items])
    runner.finish()
    assert values == [("a", 100), ("b", 50), ("a", 25), ("b", "dropped"), ("b", 25)]
    runner = SubtaskRunner(stateful_node, 0, LocalConfig(), [1], (), [row_node])
    with pytest.raises(
        StepError, match=r"step 'df\.row\.flat_map_batch': function raised BytewaxRuntimeError"
    ) as info:
        runner.records(0, [("a", 1), ("a", -1)], [None, None])
    assert isinstance(info.value.__cause__, BytewaxRuntimeError)
    assert "error calling `mapper` in step df.row.flat_map_batch: ZeroDivisionError" in str(info.value)


def _run_counting(items: list[Any], target: str, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    monkeypatch.setenv("FS_COMPAT_TARGET", target)
    out: list[Any] = []
    flow = Dataflow("df")
    s = op.stateful_map("sm", op.input("inp", flow, TestingSource(items)), _counting)
    op.output("out", s, TestingSink(out))
    run_main(flow)
    return out


@pytest.mark.spark
@pytest.mark.slow
def test_stateful_map_discards_emits_none_and_fails_alike_on_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [("a", 1), ("b", 10), ("a", 2), ("a", "none"), ("a", "drop"), ("a", 5), ("b", 1)]
    local = _run_counting(items, "local", monkeypatch)
    assert local == [("a", 1), ("b", 10), ("a", 3), ("a", None), ("a", "dropped"), ("a", 5), ("b", 11)]
    on_spark = _run_counting(items, "spark", monkeypatch)
    assert sorted(on_spark, key=lambda kv: kv[0]) == sorted(local, key=lambda kv: kv[0])
    errors = []
    for target in ("local", "spark"):
        with pytest.raises(BytewaxRuntimeError) as info:
            _run_counting([("a", 1), ("a", "fail")], target, monkeypatch)
        errors.append(str(info.value))
    step = "df.sm.stateful_flat_map.stateful.stateful_batch"
    assert errors[0] == (
        f"error calling `StatefulBatchLogic.on_batch` in step {step} for key 'a': "
        "ZeroDivisionError: integer division or modulo by zero"
    )
    assert errors[1].startswith(errors[0])
