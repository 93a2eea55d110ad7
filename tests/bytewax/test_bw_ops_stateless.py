"""The stateless operators and the checks every step makes, with Bytewax 0.21.1's semantics.

Each operator is run in a flow ``input -> operator -> output`` (``through``) on the target the
suite runs on (``FS_COMPAT_TARGET``), and what reaches the sink is compared with what Bytewax gives
for the same items. Errors are the types and texts Bytewax raises: a user's function that returns
the wrong type surfaces as ``BytewaxRuntimeError`` (a ``RuntimeError``) naming what was expected;
routing checks of a stateful step raise a bare ``TypeError``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow, Stream
from fs_compat.bytewax.errors import BytewaxRuntimeError
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main

PRICES = [("tea", 3), ("cake", 4), ("tea", 5), ("jam", 8)]


def through(
    items: Iterable[Any], step: Callable[[Stream[Any]], Stream[Any]], batch_size: int = 1
) -> list[Any]:
    """What reaches the sink when ``items`` flow through ``step``."""
    out: list[Any] = []
    flow = Dataflow("shop")
    s = op.input("src", flow, TestingSource(items, batch_size))
    op.output("sink", step(s), TestingSink(out))
    run_main(flow)
    return out


def chain_text(exc: BaseException | None) -> str:
    """The text of an exception and of its causes (Bytewax puts the user-facing reason in the
    cause; fs-compat also repeats it in the error itself)."""
    parts = []
    while exc is not None:
        parts.append(str(exc))
        exc = exc.__cause__
    return "\n".join(parts)


# One item in, zero or more out. --------------------------------------------------------------

CASES: dict[str, tuple[list[Any], Callable[[Stream[Any]], Stream[Any]], list[Any]]] = {
    "map": ([4, 5, 6], lambda s: op.map("triple", s, lambda x: 3 * x), [12, 15, 18]),
    "map_value": (PRICES, lambda s: op.map_value("vat", s, lambda p: p * 2), [(k, 2 * v) for k, v in PRICES]),
    "filter": ([7, 10, 13, 16], lambda s: op.filter("even", s, lambda x: x % 2 == 0), [10, 16]),
    "filter_value": (PRICES, lambda s: op.filter_value("cheap", s, lambda p: p < 5), PRICES[:2]),
    "filter_map": (
        ["7", "x", "12", ""],
        lambda s: op.filter_map("parse", s, lambda t: int(t) if t.isdigit() else None),
        [7, 12],
    ),
    "filter_map_value": (
        PRICES,
        lambda s: op.filter_map_value("odd_label", s, lambda p: f"#{p}" if p % 2 else None),
        [("tea", "#3"), ("tea", "#5")],
    ),
    "flat_map": (
        ["a b", "", "c d e"],
        lambda s: op.flat_map("words", s, str.split),
        ["a", "b", "c", "d", "e"],
    ),
    "flat_map_value": (
        [("x", "ab"), ("y", "")],
        lambda s: op.flat_map_value("chars", s, list),
        [("x", "a"), ("x", "b")],
    ),
    "flatten": ([(1,), [], [2, 3]], lambda s: op.flatten("flat", s), [1, 2, 3]),
    "key_on": (
        ["ox", "yak"],
        lambda s: op.key_on("by_len", s, lambda w: str(len(w))),
        [("2", "ox"), ("3", "yak")],
    ),
    "key_rm": (PRICES, lambda s: op.key_rm("drop", s), [3, 4, 5, 8]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_operator_output(name: str) -> None:
    items, step, expected = CASES[name]
    assert through(items, step) == expected


def test_flat_map_batch_flattens_what_the_mapper_returns_per_batch() -> None:
    def pairs(batch: list[int]) -> Iterable[tuple[int, int]]:
        return [(x, x * x) for x in batch]

    got = through(range(1, 6), lambda s: op.flat_map_batch("sq", s, pairs), batch_size=4)
    assert got == [(1, 1), (2, 4), (3, 9), (4, 16), (5, 25)]


@pytest.mark.in_process("driver-side side effect (the mapper appends to the test's list)")
def test_flat_map_batch_gets_the_sources_batches() -> None:
    batches: list[list[str]] = []

    def record(batch: list[str]) -> list[str]:
        batches.append(list(batch))
        return batch

    assert through("abcdefg", lambda s: op.flat_map_batch("rec", s, record), batch_size=3) == list("abcdefg")
    assert batches == [["a", "b", "c"], ["d", "e", "f"], ["g"]]


def test_branch_splits_by_predicate() -> None:
    small: list[int] = []
    large: list[int] = []
    flow = Dataflow("shop")
    split = op.branch("size", op.input("src", flow, TestingSource([40, 2, 17, 99, 5])), lambda x: x < 10)
    op.output("small", split.trues, TestingSink(small))
    op.output("large", split.falses, TestingSink(large))
    run_main(flow)
    assert (small, large) == ([2, 5], [40, 17, 99])


def test_merge_interleaves_its_inputs_item_by_item() -> None:
    out: list[str] = []
    flow = Dataflow("shop")
    left = op.input("left", flow, TestingSource(["l1", "l2", "l3"]))
    right = op.input("right", flow, TestingSource(["r1", "r2"]))
    op.output("sink", op.merge("both", left, right), TestingSink(out))
    run_main(flow)
    assert out == ["l1", "r1", "l2", "r2", "l3"]


# Inspecting. ------------------------------------------------------------------------------------


def test_inspect_calls_the_inspector_with_the_steps_full_id() -> None:
    seen: list[tuple[str, str]] = []
    got = through(["x", "y"], lambda s: op.inspect("look", s, lambda sid, item: seen.append((sid, item))))
    assert got == ["x", "y"]
    assert seen == [("shop.look", "x"), ("shop.look", "y")]


def test_inspect_debug_also_passes_epoch_and_worker() -> None:
    seen: list[tuple[str, int, int, int]] = []

    def inspector(sid: str, item: int, epoch: int, worker: int) -> None:
        seen.append((sid, item, epoch, worker))

    assert through([8], lambda s: op.inspect_debug("dbg", s, inspector)) == [8]
    assert seen == [("shop.dbg", 8, 1, 0)]


def test_inspect_as_the_last_step_sees_every_item() -> None:
    # Bytewax's own inspect tests end the flow with the inspect step; nothing follows it.
    seen: list[tuple[str, int]] = []
    flow = Dataflow("shop")
    s = op.map("dbl", op.input("src", flow, TestingSource([1, 2, 3])), lambda x: 2 * x)
    op.inspect("look", s, lambda sid, item: seen.append((sid, item)))
    run_main(flow)
    assert seen == [("shop.look", 2), ("shop.look", 4), ("shop.look", 6)]


def test_inspect_debug_as_the_last_step_sees_every_item() -> None:
    seen: list[tuple[str, str, int, int]] = []
    flow = Dataflow("shop")
    op.inspect_debug(
        "dbg",
        op.input("src", flow, TestingSource(["p", "q"])),
        lambda sid, item, epoch, worker: seen.append((sid, item, epoch, worker)),
    )
    run_main(flow)
    assert seen == [("shop.dbg", "p", 1, 0), ("shop.dbg", "q", 1, 0)]


def test_inspect_prints_by_default_also_as_the_last_step(capsys: pytest.CaptureFixture[str]) -> None:
    flow = Dataflow("shop")
    op.inspect("show", op.input("src", flow, TestingSource(["a", 7])))
    run_main(flow)
    assert capsys.readouterr().out == "shop.show: 'a'\nshop.show: 7\n"


# Errors. ----------------------------------------------------------------------------------------


def test_branch_predicate_must_return_a_bool() -> None:
    flow = Dataflow("shop")
    split = op.branch("size", op.input("src", flow, TestingSource([1])), lambda x: "yes")  # type: ignore[arg-type,return-value]
    op.output("t", split.trues, TestingSink([]))
    op.output("f", split.falses, TestingSink([]))
    with pytest.raises(BytewaxRuntimeError, match=re.escape("must be a `bool`")):
        run_main(flow)


@pytest.mark.parametrize(
    ("items", "step", "message"),
    [
        ([3], lambda s: op.filter("keep", s, lambda x: x), "must be a `bool`"),
        ([3], lambda s: op.key_on("key", s, lambda x: x), "must be a `str`"),
        ([3], lambda s: op.flatten("flat", s), "to be iterables"),
    ],
    ids=["filter", "key_on", "flatten"],
)
def test_a_function_returning_the_wrong_type_fails_the_run(
    items: list[Any], step: Callable[[Stream[Any]], Stream[Any]], message: str
) -> None:
    with pytest.raises(RuntimeError) as info:
        through(items, step)
    assert message in chain_text(info.value)


def test_raises_fails_on_its_first_item() -> None:
    flow = Dataflow("shop")
    op.raises("never", op.input("src", flow, TestingSource(["boom", "later"])))
    with pytest.raises(RuntimeError) as info:
        run_main(flow)
    assert "`raises` step 'shop.never' got an item: 'boom'" in chain_text(info.value)


SM_STEP = "shop.avg.stateful_flat_map.stateful.stateful_batch"
#: The step's id in a message: Bytewax quotes it, fs-compat does not.
SM_STEP_RE = f'"?{re.escape(SM_STEP)}"?'


def test_a_stateful_step_needs_key_value_pairs() -> None:
    with pytest.raises(TypeError, match=f"step {SM_STEP_RE} requires {re.escape('`(key, value)` 2-tuple')}"):
        through([5], lambda s: op.stateful_map("avg", s, lambda st, v: (st, v)))


def test_a_stateful_step_needs_str_keys() -> None:
    expected = "requires `str` keys in `(key, value)` from upstream; got a `float`"
    with pytest.raises(TypeError, match=re.escape(expected)):
        through([(1.5, "v")], lambda s: op.stateful_map("avg", s, lambda st, v: (st, v)))


@pytest.mark.in_process("exception chain (the user's ValueError, the __cause__, stays in the Spark worker)")
def test_a_user_function_error_is_a_bytewax_runtime_error_caused_by_it() -> None:
    def broken(_state: Any, value: int) -> tuple[Any, int]:
        raise ValueError(f"bad {value}")

    with pytest.raises(BytewaxRuntimeError, match=f"in step {SM_STEP_RE}") as info:
        through([("k", 41)], lambda s: op.stateful_map("avg", s, broken))
    assert isinstance(info.value.__cause__, ValueError)
    assert str(info.value.__cause__) == "bad 41"


def test_step_and_flow_ids_are_checked_when_the_flow_is_built() -> None:
    flow = Dataflow("shop")
    s = op.input("src", flow, TestingSource([1]))
    op.map("m", s, str)
    with pytest.raises(ValueError, match=re.escape("step 'shop.m' already exists")):
        op.filter("m", s, bool)
    with pytest.raises(ValueError, match="can't contain any periods"):
        op.map("v.2", s, str)
    with pytest.raises(TypeError, match="'step_id' must be a `str`"):
        op.map(7, s, str)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="flow ID can't contain a period"):
        Dataflow("shop.v2")


def test_an_operator_takes_only_streams_where_it_declares_streams() -> None:
    with pytest.raises(
        TypeError, match=re.escape("'up' argument must be a `Stream`; got a <class 'list'> instead")
    ):
        op.map("m", [1, 2], str)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=re.escape("'ups' *args all must be a `Stream`; got a <class 'int'>")):
        op.merge("m", 1, 2)  # type: ignore[arg-type]
