# Ported from bytewax/bytewax pytests/operators/: test_branch, test_count_final, test_filter,
# test_filter_map, test_filter_value, test_flat_map, test_flat_map_batch, test_flatten,
# test_fold_final, test_inspect, test_key_on, test_map, test_map_value, test_max_min_final,
# test_merge, test_reduce_final, test_raises. Older stored versions use the pre-0.19 fluent API
# (`flow.input(...)`); they are written here with the 0.21 `op.` functions, same data and
# assertions. Errors from Python operator code, and branch's check of its predicate's return
# type (as Bytewax 0.21.1), surface as BytewaxRuntimeError (a RuntimeError).
import re

import pytest
from pytest import raises

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.errors import BytewaxRuntimeError
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main


def test_branch():
    out_odds, out_evens = [], []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource([1, 2, 3]))
    b_out = op.branch("branch", s, lambda x: x % 2 != 0)
    op.output("out_odds", b_out.trues, TestingSink(out_odds))
    op.output("out_evens", b_out.falses, TestingSink(out_evens))
    run_main(flow)
    assert out_odds == [1, 3]
    assert out_evens == [2]


def test_branch_raises_on_non_bool_key():
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource([1, 2, 3]))
    b_out = op.branch("branch", s, lambda x: "not a bool")  # type: ignore
    op.output("out_odds", b_out.trues, TestingSink([]))
    op.output("out_evens", b_out.falses, TestingSink([]))
    # Bytewax 0.21.1 raises BytewaxRuntimeError (caused by a TypeError in-process).
    with raises(BytewaxRuntimeError, match=re.escape("must be a `bool`")):
        run_main(flow)


def test_count_final():
    out = []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(["a", "a", "b", "c", "b", "a"]))
    s = op.count_final("count", s, lambda x: x)
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [("a", 3), ("b", 2), ("c", 1)]


def test_filter():
    out = []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource([1, 2, 3]))
    s = op.filter("is_odd", s, lambda item: item % 2 != 0)
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [1, 3]


def test_filter_raises_on_non_bool():
    flow = Dataflow("test_df")
    s = op.filter("f", op.input("inp", flow, TestingSource([1])), lambda x: x)  # type: ignore
    op.output("out", s, TestingSink([]))
    with raises(RuntimeError):
        with raises(TypeError, match=re.escape("must be a `bool`")):
            run_main(flow)


def test_filter_value():
    out = []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource([("a", 1), ("b", 2), ("c", 3)]))
    s = op.filter_value("is_odd", s, lambda v: v % 2 != 0)
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [("a", 1), ("c", 3)]


def test_filter_map():
    out = []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource([0, 1, 2, 3, 4, 5]))
    s = op.filter_map("validate", s, lambda x: None if x % 2 else x * 10)
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [0, 20, 40]


def test_filter_map_value():
    out = []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource([("a", 1), ("b", 2)]))
    s = op.filter_map_value("fmv", s, lambda v: None if v % 2 else str(v))
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [("b", "2")]


def test_flat_map():
    out = []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(["split this", "and this"]))
    s = op.flat_map("split_into_words", s, str.split)
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == ["split", "this", "and", "this"]


def test_flat_map_value():
    out = []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource([("k1", "hello world"), ("k2", "hi")]))
    s = op.flat_map_value("split", s, str.split)
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [("k1", "hello"), ("k1", "world"), ("k2", "hi")]


def test_flat_map_batch():
    out = []

    def split_into_words(sentences):
        for sentence in sentences:
            yield from sentence.split()

    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(["split this", "and this"], batch_size=10))
    s = op.flat_map_batch("split_into_words", s, split_into_words)
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == ["split", "this", "and", "this"]


@pytest.mark.in_process("driver-side side effect (the mapper appends to the test's list)")
def test_flat_map_batch_sees_batches():
    seen = []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(range(5), batch_size=2))
    s = op.flat_map_batch("b", s, lambda xs: seen.append(list(xs)) or xs)
    op.output("out", s, TestingSink([]))
    run_main(flow)
    assert seen == [[0, 1], [2, 3], [4]]


def test_flatten():
    out = []
    flow = Dataflow("test_df")
    s = op.flatten("flatten", op.input("inp", flow, TestingSource([[1, 2], [], [3]])))
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [1, 2, 3]


def test_flatten_raises():
    flow = Dataflow("test_df")
    s = op.flatten("flatten", op.input("inp", flow, TestingSource([666])))
    op.output("out", s, TestingSink([]))
    with raises(RuntimeError):
        with raises(TypeError, match=re.escape("to be iterables")):
            run_main(flow)


def test_fold_final():
    out = []
    flow = Dataflow("test_df")
    inp = [("b", 1), ("a", 2), ("b", 3), ("a", 4)]
    s = op.fold_final("fold", op.input("inp", flow, TestingSource(inp)), list, lambda acc, x: [*acc, x])
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [("a", [2, 4]), ("b", [1, 3])]


def test_inspect():
    seen = []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(["a"]))
    s = op.inspect("insp", s, lambda step_id, item: seen.append((step_id, item)))
    op.output("out", s, TestingSink([]))
    run_main(flow)
    assert seen == [("test_df.insp", "a")]


def test_inspect_debug():
    seen = []
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource(["a"]))
    s = op.inspect_debug(
        "insp", s, lambda step_id, item, epoch, worker: seen.append((step_id, item, epoch, worker))
    )
    op.output("out", s, TestingSink([]))
    run_main(flow)
    assert seen == [("test_df.insp", "a", 1, 0)]


def test_key_on():
    out = []
    flow = Dataflow("test_df")
    s = op.key_on("key", op.input("inp", flow, TestingSource([1, 2, 3])), str)
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [("1", 1), ("2", 2), ("3", 3)]


def test_key_on_raises_on_non_str_key():
    flow = Dataflow("test_df")
    s = op.key_on("key", op.input("inp", flow, TestingSource([1, 2, 3])), lambda x: x)  # type: ignore
    op.output("out", s, TestingSink([]))
    with raises(RuntimeError):
        with raises(TypeError, match=re.escape("must be a `str`")):
            run_main(flow)


def test_key_rm():
    out = []
    flow = Dataflow("test_df")
    s = op.key_rm("rm", op.input("inp", flow, TestingSource([("a", 1)])))
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [1]


def test_map():
    out = []
    flow = Dataflow("test_df")
    s = op.map("add_one", op.input("inp", flow, TestingSource([0, 1, 2])), lambda x: x + 1)
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [1, 2, 3]


def test_map_value():
    out = []
    flow = Dataflow("test_df")
    s = op.map_value("add_one", op.input("inp", flow, TestingSource([("a", 0), ("b", 1)])), lambda x: x + 1)
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [("a", 1), ("b", 2)]


def _user_events():
    return [{"user": "a", "val": 1}, {"user": "a", "val": 9}, {"user": "a", "val": 3}]


def test_max_final():
    out = []
    flow = Dataflow("test_df")
    s = op.key_on("key_on_user", op.input("inp", flow, TestingSource(_user_events())), lambda e: e["user"])
    s = op.max_final("max", s, by=lambda e: e["val"])
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [("a", {"user": "a", "val": 9})]


def test_min_final():
    out = []
    flow = Dataflow("test_df")
    s = op.key_on("key_on_user", op.input("inp", flow, TestingSource(_user_events())), lambda e: e["user"])
    s = op.min_final("min", s, by=lambda e: e["val"])
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [("a", {"user": "a", "val": 1})]


def test_merge():
    out = []
    flow = Dataflow("test_df")
    s1 = op.input("inp1", flow, TestingSource([1, 2]))
    s2 = op.input("inp2", flow, TestingSource([3, 4]))
    op.output("out", op.merge("merge", s1, s2), TestingSink(out))
    run_main(flow)
    assert out == [1, 3, 2, 4]


def test_reduce_final():
    out = []
    flow = Dataflow("test_df")
    inp = [("a", 1), ("b", 2), ("a", 3), ("b", 4)]
    s = op.reduce_final("sum", op.input("inp", flow, TestingSource(inp, batch_size=3)), lambda a, b: a + b)
    op.output("out", s, TestingSink(out))
    run_main(flow)
    assert out == [("a", 4), ("b", 6)]


def test_raises():
    flow = Dataflow("test_df")
    op.raises("raises", op.input("inp", flow, TestingSource([1])))
    with raises(RuntimeError, match=re.escape("`raises` step 'test_df.raises' got an item: 1")):
        run_main(flow)


def test_stateful_requires_key_value_tuple():
    flow = Dataflow("test_df")
    s = op.stateful_map("sm", op.input("inp", flow, TestingSource([1])), lambda s, v: (s, v))
    op.output("out", s, TestingSink([]))
    expect = "step test_df.sm.stateful_flat_map.stateful.stateful_batch requires `(key, value)` 2-tuple"
    with raises(TypeError, match=re.escape(expect)):
        run_main(flow)


def test_stateful_requires_str_keys():
    flow = Dataflow("test_df")
    s = op.stateful_map("sm", op.input("inp", flow, TestingSource([(1, 1)])), lambda s, v: (s, v))
    op.output("out", s, TestingSink([]))
    with raises(
        TypeError, match=re.escape("requires `str` keys in `(key, value)` from upstream; got a `int`")
    ):
        run_main(flow)


@pytest.mark.in_process("exception chain (the user's ValueError, the __cause__, stays in the Spark worker)")
def test_user_error_is_bytewax_runtime_error():
    from fs_compat.bytewax.errors import BytewaxRuntimeError

    def boom(_s, _v):
        raise ValueError("boom")

    flow = Dataflow("test_df")
    s = op.stateful_map("sm", op.input("inp", flow, TestingSource([("k", 1)])), boom)
    op.output("out", s, TestingSink([]))
    with raises(
        BytewaxRuntimeError, match=re.escape("in step test_df.sm.stateful_flat_map.stateful.stateful_batch")
    ) as info:
        run_main(flow)
    assert isinstance(info.value.__cause__, ValueError)


def test_duplicate_and_bad_step_ids():
    flow = Dataflow("test_df")
    s = op.input("inp", flow, TestingSource([1]))
    with raises(ValueError, match=re.escape("step 'test_df.inp' already exists")):
        op.map("inp", s, str)
    with raises(ValueError, match="can't contain any periods"):
        op.map("a.b", s, str)
    with raises(TypeError, match="'step_id' must be a `str`"):
        op.map(1, s, str)  # type: ignore
    with raises(ValueError, match="flow ID can't contain a period"):
        Dataflow("a.b")
