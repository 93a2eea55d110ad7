# Ported from bytewax/bytewax pytests/operators/test_join.py (0.21 API: `insert_mode` /
# `emit_mode` instead of the older `mode`; `join_named` was removed in 0.21).
import re

from pytest import raises

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.operators import _JoinState
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main


def test_join_state_astuples() -> None:
    state = _JoinState.for_side_count(3)
    state.add_val(0, 1)
    state.add_val(0, 2)
    state.add_val(2, 3)
    state.add_val(2, 4)

    assert list(state.astuples()) == [
        (1, None, 3),
        (1, None, 4),
        (2, None, 3),
        (2, None, 4),
    ]


def build_join_dataflow(inp_l, inp_r, out, insert_mode, emit_mode) -> Dataflow:
    flow = Dataflow("test_df")
    lefts = op.input("inp_l", flow, TestingSource(inp_l))
    keyed_lefts = op.key_on("key_l", lefts, lambda _x: "ALL")
    rights = op.input("inp_r", flow, TestingSource(inp_r))
    keyed_rights = op.key_on("key_r", rights, lambda _x: "ALL")
    joined = op.join("join", keyed_lefts, keyed_rights, insert_mode=insert_mode, emit_mode=emit_mode)
    cleaned = op.map("clean", joined, lambda x: x[1])
    op.output("out", cleaned, TestingSink(out))
    return flow


def test_join_complete() -> None:
    out: list[tuple[int, int]] = []
    run_main(build_join_dataflow([1], [2], out, "last", "complete"))
    assert out == [(1, 2)]


def test_join_final() -> None:
    out: list[tuple[int, int]] = []
    run_main(build_join_dataflow([1], [2, 3], out, "last", "final"))
    assert out == [(1, 3)]


def test_join_running() -> None:
    out: list[tuple[int, int]] = []
    run_main(build_join_dataflow([1], [2, 3], out, "last", "running"))
    assert out == [(1, None), (1, 2), (1, 3)]


def test_join_product_final() -> None:
    out: list[tuple[int, int]] = []
    run_main(build_join_dataflow([1, 2], [3, 4], out, "product", "final"))
    assert out == [(1, 3), (1, 4), (2, 3), (2, 4)]


def test_join_first_final() -> None:
    out: list[tuple[int, int]] = []
    run_main(build_join_dataflow([1, 2], [3, 4], out, "first", "final"))
    assert out == [(1, 3)]


def test_join_unknown_mode_at_build_time() -> None:
    flow = Dataflow("test_df")
    s = op.key_on("key", op.input("inp", flow, TestingSource([1])), str)
    with raises(ValueError, match=re.escape("unknown join insert mode 'x'")):
        op.join("join", s, s, insert_mode="x")  # type: ignore
    with raises(ValueError, match=re.escape("unknown join emit mode 'y'")):
        op.join("join", s, s, emit_mode="y")  # type: ignore
