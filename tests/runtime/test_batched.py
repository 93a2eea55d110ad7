"""``BatchedRunner``: the batch-at-a-time schedule over the in-process target's tasks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from fs_api_advanced import PickleCodec
from fs_compat.runtime import (
    BatchedRunner,
    Edge,
    LocalConfig,
    Operator,
    OperatorNode,
    OperatorRuntime,
    SideOutput,
    SinkNode,
    SourceNode,
    StateKind,
    StateSpec,
    StepError,
)

COUNT = StateSpec("count", StateKind.VALUE, PickleCodec())


class Split(Operator):
    """Per record: even values to the main output, odd ones to side output ``odd``."""

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        if value < 0:
            raise ValueError(f"negative {value}")
        return (value,) if value % 2 == 0 else (SideOutput("odd", value),)


class Sum(Operator):
    """A batch hook: one output per batch, the batch's sum; ``end_input`` says how many batches."""

    def __init__(self) -> None:
        self.batches = 0

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        raise AssertionError("the schedule calls process_batch")

    def process_batch(self, values: list[Any], runtime: OperatorRuntime) -> Iterable[Any]:
        self.batches += 1
        return [sum(values)]

    def end_input(self, runtime: OperatorRuntime) -> Iterable[Any]:
        return [("batches", self.batches)]


class CountPerKey(Operator):
    """Keyed, per record (no batch hook): the key's running count."""

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        state = runtime.get_state(COUNT)
        count = (state.value() or 0) + 1
        state.update(count)
        return [(runtime.current_key, count)]


class Groups(Operator):
    """Keyed, a batch hook: the groups it is given; activations are counted."""

    def __init__(self) -> None:
        self.activations = 0

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        raise AssertionError("the schedule calls process_keyed")

    def process_keyed(
        self, groups: Sequence[tuple[Any, list[Any]]], runtime: OperatorRuntime
    ) -> Iterable[Any]:
        return [(key, [v[1] for v in values]) for key, values in groups]

    def on_activation(self, runtime: OperatorRuntime) -> Iterable[Any]:
        self.activations += 1
        return [("activation", self.activations)]


def _run(op: type[Operator], keyed: bool, batches: list[list[Any]]) -> list[tuple[str, list[Any]]]:
    """``batches`` from one source through step ``op``; the batches its sinks ``main`` and
    ``odd`` (its ``odd`` side output) are given, in order."""
    src = SourceNode("src")
    selector = (lambda v: v[0]) if keyed else None
    node = OperatorNode("step", [Edge(src, key_selector=selector)], operator_factory=op, keyed=keyed)
    sinks = [SinkNode("main", [Edge(node)]), SinkNode("odd", [Edge(node, side_tag="odd")])]
    written: list[tuple[str, list[Any]]] = []
    runner = BatchedRunner(sinks, LocalConfig(), write=lambda sink, batch: written.append((sink.name, batch)))
    runner.start()
    for batch in batches:
        runner.feed(src, batch)
        runner.activate()
    runner.end_source(src)
    runner.close()
    return written


def test_per_record_outputs_go_on_as_one_batch_per_output() -> None:
    assert _run(Split, False, [[1, 2, 3, 4], [6]]) == [("main", [2, 4]), ("odd", [1, 3]), ("main", [6])]


def test_a_batch_hook_gets_the_batch_and_end_input_runs_once() -> None:
    assert _run(Sum, False, [[1, 2], [], [3]]) == [("main", [3]), ("main", [3]), ("main", [("batches", 2)])]


def test_keyed_per_record_path_sets_the_key() -> None:
    written = _run(CountPerKey, True, [[("b", 1), ("a", 2), ("b", 3)]])
    assert written == [("main", [("b", 1), ("a", 1), ("b", 2)])]


def test_keyed_batch_hook_gets_groups_in_key_order_and_activations() -> None:
    written = _run(Groups, True, [[("b", 1), ("a", 2), ("b", 3)], [("c", 4)]])
    assert written == [
        ("main", [("a", [2]), ("b", [1, 3])]),
        ("main", [("activation", 1)]),
        ("main", [("c", [4])]),
        ("main", [("activation", 2)]),
    ]


def test_failures_are_step_errors_with_the_operators_error_as_cause() -> None:
    with pytest.raises(StepError, match=r"step 'step': function raised ValueError: negative -1") as info:
        _run(Split, False, [[2, -1]])
    assert isinstance(info.value.__cause__, ValueError)


def test_a_failing_key_selector_is_the_runtimes_error() -> None:
    with pytest.raises(StepError, match=r"step 'step': key selector raised TypeError"):
        _run(Groups, True, [[("a", 1), 5]])
