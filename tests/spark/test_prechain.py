"""Stateless steps before a keyed step run in that step's route pass on Spark
(``_chain.prechained``): Bytewax's ``map``, ``filter``, ``flat_map`` (and what is built on them)
are marked ``stateless``; a chain of them between a source or a step and the keyed step they
feed costs no Spark stage of its own. Outputs, errors and job summaries are those of the
in-process target; a user's own ``flat_map_batch`` is not marked and keeps its stage."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from plans import optimized_plan

import fs_compat.bytewax.operators as op
from fs_compat.bytewax._on_spark import _clone
from fs_compat.bytewax.dataflow import Dataflow, Stream
from fs_compat.bytewax.errors import BytewaxRuntimeError
from fs_compat.bytewax.spark import DataFrameSource, to_dataframe
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main
from fs_compat.common import Types
from fs_compat.runtime import Edge, LocalConfig, OperatorNode, SinkNode, run_local_summarized, upstream_of
from fs_compat.spark import run_batch, spark_session
from fs_compat.spark._batch import _build_frames

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROWS = [(i, i) for i in range(60)]
OUT = Types.TUPLE([Types.STRING(), Types.LONG()])


def _add(total: int | None, x: tuple[int, int]) -> tuple[int | None, int]:
    total = (total or 0) + x[1]
    return total, total


def _twice_if_odd(kv: tuple[str, tuple[int, int]]) -> Iterable[tuple[str, tuple[int, int]]]:
    return [kv, kv] if kv[1][1] % 2 else [kv]


def _flow(source: Any) -> tuple[Dataflow, Stream[Any]]:
    """map -> filter -> key_on -> flat_map (two items for odd ones) -> stateful_map."""
    flow = Dataflow("df")
    s = op.input("inp", flow, source)
    s = op.map("pair", s, lambda r: (r[0] % 4, r[1]))
    s = op.filter("some", s, lambda p: p[1] % 5 != 0)
    s = op.key_on("key", s, lambda p: str(p[0]))
    s = op.flat_map("twice", s, _twice_if_odd)
    return flow, op.stateful_map("sum", s, _add)


def _run(flow: Dataflow, s: Stream[Any], target: str) -> list[Any]:
    out: list[Any] = []
    op.output("out", s, TestingSink(out))
    run_main(flow, _target=target)
    return out


def _per_key(items: Iterable[tuple[str, Any]]) -> dict[str, list[Any]]:
    keyed: dict[str, list[Any]] = {}
    for k, v in items:
        keyed.setdefault(k, []).append(v)
    return keyed


def test_leading_stateless_steps_give_what_the_in_process_target_gives() -> None:
    expected = _run(*_flow(TestingSource(ROWS)), "local")
    assert len(expected) == 60 - 12 + 24  # 12 dropped, 24 odd ones twice
    assert _run(*_flow(TestingSource(ROWS)), "spark") == expected

    # A DataFrame source over 3 partitions, 2 subtasks: each key's items in the source's order.
    df = spark_session().createDataFrame(ROWS, "k LONG, n LONG").repartition(3)
    local = _run(*_flow(DataFrameSource(df)), "local")
    got = [tuple(r) for r in to_dataframe(_flow(DataFrameSource(df))[1], OUT, parallelism=2).collect()]
    assert _per_key(got) == _per_key(local)
    assert {k: v[-1] for k, v in _per_key(got).items()} == {k: v[-1] for k, v in _per_key(expected).items()}


def _shuffles(stream: Stream[Any]) -> int:
    plan = optimized_plan(to_dataframe(stream, OUT, parallelism=2))
    return int(plan.count("RepartitionByExpression"))


def test_the_stateless_steps_have_no_stage_of_their_own() -> None:
    df = spark_session().createDataFrame(ROWS, "k LONG, n LONG")

    def flow(user_batch: bool) -> Stream[Any]:
        s: Stream[Any] = op.input("inp", Dataflow("df"), DataFrameSource(df))
        if user_batch:  # the user's flat_map_batch may keep something per worker: not moved
            s = op.flat_map_batch("pair", s, lambda rows: [(str(r[0] % 4), (r[0], r[1])) for r in rows])
        else:
            s = op.map("pair", s, lambda r: (str(r[0] % 4), (r[0], r[1])))
        return op.map("row", op.stateful_map("sum", s, _add), lambda kv: kv)

    assert _shuffles(flow(user_batch=False)) == 1  # the keyed step's; "row" runs in its pass
    assert _shuffles(flow(user_batch=True)) == 2
    assert _shuffles(_flow(DataFrameSource(df))[1]) == 1  # four stateless steps, one stage

    stream = flow(user_batch=False)
    nodes = _clone(stream.flow(), [stream._node])
    node = nodes[stream._node.id]
    frames, _ = _build_frames(spark_session(), upstream_of([node]), LocalConfig(parallelism=2))
    steps = [n for n in upstream_of([node]) if isinstance(n, OperatorNode)]
    # One frame, the stage of sum: "pair" runs in its route pass, "row" after it in its run pass.
    assert [(n.name, n.stateless, n.id in frames) for n in steps] == [
        ("df.pair.flat_map_batch", True, False),
        ("df.sum.stateful_flat_map.stateful.stateful_batch", False, False),
        ("df.row.flat_map_batch", True, True),
    ]


def test_after_a_step_with_watermarks_and_side_outputs() -> None:
    """The stateless steps read a step's output (two subtasks, a side output, the end-of-input
    watermarks): each key's items are the in-process target's."""

    def flow() -> tuple[Dataflow, Stream[Any]]:
        flow = Dataflow("df")
        s = op.key_on("key", op.input("inp", flow, TestingSource(ROWS)), lambda r: str(r[0] % 3))
        counted = op.stateful_map("sum", s, _add)
        split = op.branch("even", counted, lambda kv: kv[1] % 2 == 0)
        evens: Stream[Any] = op.map("e", split.trues, lambda kv: (kv[0] + "e", (0, kv[1])))
        evens = op.stateful_map("evens", evens, _add)
        odds = op.flat_map("o", split.falses, lambda kv: [(kv[0] + "o", (1, kv[1])), ("x", (1, 1))])
        return flow, op.merge("both", evens, op.stateful_map("odds", odds, _add))

    expected = _run(*flow(), "local")
    assert len(expected) == 60 + 2 * 30 - 30
    # (``merge`` interleaves its inputs differently on Spark: compare per key, each key coming
    # through one input.)
    assert _per_key(_run(*flow(), "spark")) == _per_key(expected)
    got = [tuple(r) for r in to_dataframe(flow()[1], OUT, parallelism=2).collect()]
    assert _per_key(got) == _per_key(expected)


def test_a_failing_stateless_step_names_itself_and_the_record() -> None:
    def fails_on_7(r: tuple[int, int]) -> tuple[str, int]:
        if r[0] == 7:
            raise ValueError("seven")
        return str(r[0] % 2), r[1]

    errors = []
    for target in ("local", "spark"):
        flow = Dataflow("df")
        s = op.map("pair", op.input("inp", flow, TestingSource(ROWS)), fails_on_7)
        with pytest.raises(BytewaxRuntimeError) as info:
            _run(flow, op.stateful_map("sum", s, lambda t, x: (x, x)), target)
        errors.append(str(info.value))
    assert errors[0] == "error calling `mapper` in step df.pair.flat_map_batch: ValueError: seven"
    assert errors[1] == f"{errors[0]} (record (7, 7))"  # the Spark task names the record too


def test_job_summary_counts_the_stateless_steps() -> None:
    flow, s = _flow(TestingSource(ROWS))
    nodes = _clone(flow, [s._node])
    sink = SinkNode("out", [Edge(nodes[s._node.id])], consume=lambda _v: None)
    config = LocalConfig(parallelism=2)
    local = run_local_summarized([sink], config)
    spark = run_batch(spark_session(), [sink], config)

    def counts(summary: Any) -> list[tuple[str, int | None, int | None]]:
        return [(step.name, step.records_in, step.records_out) for step in summary.steps]

    assert counts(spark) == counts(local)
    assert ("df.some.flat_map.flat_map_batch", 60, 48) in counts(spark)
    assert ("df.twice.flat_map_batch", 48, 72) in counts(spark)


def test_a_keyed_steps_only_input_crosses_the_shuffle_in_chunks() -> None:
    """A source and the stateless steps before the keyed step that reads only them: the route
    pass (``RoutePass.packed``) writes one row per subtask and source batch, ``n`` records each,
    holding what it would write as one row per record: the same records, subtasks, keys and
    order; an item emitted twice (``_twice_if_odd``) reaches the step as two objects, as with a
    pickle per record. (The tests above run such plans end to end.)"""
    import pickle

    from fs_compat.spark._chain import Prechain
    from fs_compat.spark._events import FrameSource
    from fs_compat.spark._routing import RoutePass, read_chunk

    df = spark_session().createDataFrame(ROWS, "k LONG, n LONG").coalesce(1)
    flow, s = _flow(DataFrameSource(df))
    nodes = _clone(flow, [s._node])
    step = nodes[s._node.id]
    before = [n for n in upstream_of([step]) if isinstance(n, OperatorNode) and n.stateless]
    assert len(before) == 4  # map, filter, key_on, flat_map
    config = LocalConfig(parallelism=2)
    batches = df.toArrow().to_batches(max_chunksize=25)  # three source batches

    def routed(packed: bool) -> list[Any]:
        route = RoutePass(
            step.name,
            0,
            step.inputs[0],
            2,
            128,
            1,
            FrameSource(df, 0, 1),
            False,
            Prechain(before, config, None),
            packed,
        )
        return [row for out in route.mapper()(iter(batches)) for row in out.to_pylist()]

    rows = routed(packed=False)
    chunks = routed(packed=True)
    assert len(rows) == 72 and all(row["n"] is None for row in rows)
    assert len(chunks) == 6 and sum(row["n"] for row in chunks) == 72  # 2 subtasks x 3 batches
    for part in (0, 1):
        mine = [row for row in rows if row["part"] == part]
        expanded: list[tuple[Any, Any]] = []
        firsts = []  # each chunk's seq, and where its records start among the subtask's
        for row in (row for row in chunks if row["part"] == part):
            places, values, stamps, keys = read_chunk(row["v"])
            # Its records in input order: the run pass needs no places (``chunks``' ``placed``).
            assert len(values) == row["n"] and places is None and stamps == [None] * row["n"]
            firsts.append((row["seq"], len(expanded)))
            expanded += zip(values, keys, strict=True)
        assert expanded == [(pickle.loads(row["v"]), row["ks"]) for row in mine]
        assert [seq for seq, _at in firsts] == [mine[at]["seq"] for _seq, at in firsts]  # one source
        twice = [value for value, _key in expanded if value[1][1] % 2]
        assert twice[0] == twice[1] and twice[0] is not twice[1]
