"""Bytewax dataflows over streaming DataFrames: each key's logic ``snapshot()`` lives in Spark's
checkpointed state store, so a query stopped and restarted from its ``checkpointLocation``
continues where it was: running counts go on, and a ``collect`` timeout set before the restart
fires after it."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stream_query import run_to_parquet

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.spark import DataFrameSource, to_dataframe
from fs_compat.common import Types
from fs_compat.spark import spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "user STRING, n LONG"


def _write(spark: Any, folder: Path, name: str, rows: list[tuple[str, int]]) -> None:
    spark.createDataFrame(rows, SCHEMA).coalesce(1).write.parquet(str(folder / name))


def _events(spark: Any, source: Path) -> Any:
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(source / "*"))


def _run(out: Any, checkpoint: Path, sink: Path) -> int:
    """One run of the query until its input is used up; the number of micro-batches."""
    return len(run_to_parquet(out, checkpoint, sink))


def _freeze(value: Any) -> Any:
    return tuple(_freeze(v) for v in value) if isinstance(value, (list, tuple)) else value


def _sink(spark: Any, sink: Path) -> Counter[Any]:
    return Counter(_freeze(r) for r in spark.read.parquet(str(sink)).collect())


def running_total(state: tuple[int, int] | None, row: Any) -> tuple[tuple[int, int], tuple[int, int]]:
    count, total = state or (0, 0)
    state = (count + 1, total + row.n)
    return state, state


OUT = Types.ROW_NAMED(["user", "totals"], [Types.STRING(), Types.TUPLE([Types.LONG(), Types.LONG()])])


def _count_query(spark: Any, source: Path) -> Any:
    flow = Dataflow("counts")
    s: Any = op.input("inp", flow, DataFrameSource(_events(spark, source)))
    s = op.key_on("user", s, lambda row: row.user)
    s = op.stateful_map("running", s, running_total)
    return to_dataframe(s, OUT)


def test_stateful_map_state_survives_a_restart_from_the_checkpoint(tmp_path: Path) -> None:
    spark = spark_session()
    source, checkpoint, sink = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    _write(spark, source, "1", [("a", 1), ("b", 10)])
    _write(spark, source, "2", [("a", 2)])
    out = _count_query(spark, source)
    assert out.isStreaming
    assert out.columns == ["user", "totals"]
    assert _run(out, checkpoint, sink) >= 2
    first = Counter({("a", (1, 1)): 1, ("b", (1, 10)): 1, ("a", (2, 3)): 1})
    assert _sink(spark, sink) == first

    # A new query (as after a restart) from the same checkpoint: the counts continue.
    _write(spark, source, "3", [("a", 4), ("c", 100), ("b", 20)])
    _run(_count_query(spark, source), checkpoint, sink)
    assert _sink(spark, sink) == first + Counter({("a", (3, 7)): 1, ("c", (1, 100)): 1, ("b", (2, 30)): 1})


class FileClock:
    """A clock the test moves without sleeping: an ISO datetime read from a file."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def set(self, now: datetime) -> None:
        with open(self.path, "w") as f:
            f.write(now.isoformat())

    def __call__(self) -> datetime:
        with open(self.path) as f:
            return datetime.fromisoformat(f.read())


@pytest.mark.classic_only  # Connect slice: README
def test_collect_timeout_set_before_a_restart_fires_after_it(tmp_path: Path) -> None:
    spark = spark_session()
    source, checkpoint, sink = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    clock = FileClock(tmp_path / "now")
    start = datetime(2024, 1, 1, tzinfo=UTC)

    def query() -> Any:
        flow = Dataflow("batches")
        s: Any = op.input("inp", flow, DataFrameSource(_events(spark, source)))
        s = op.key_on("user", s, lambda row: row.user)
        s = op.map_value("n", s, lambda row: row.n)
        s = op.collect("collect", s, timedelta(seconds=10), 3, _now_getter=clock)
        return to_dataframe(s, Types.TUPLE([Types.STRING(), Types.LIST(Types.LONG())]), now_getter=clock)

    clock.set(start)
    _write(spark, source, "1", [("a", 1), ("a", 2), ("a", 3), ("a", 4), ("b", 5)])
    _run(query(), checkpoint, sink)
    first = Counter({("a", (1, 2, 3)): 1})  # max_size; "a" [4] and "b" [5] wait for their timeout
    assert _sink(spark, sink) == first

    clock.set(start + timedelta(seconds=11))  # past both timeouts (start + 10 s)
    _write(spark, source, "2", [("c", 6)])
    _run(query(), checkpoint, sink)
    second = first + Counter({("a", (4,)): 1, ("b", (5,)): 1})  # "c" waits for its own timeout
    assert _sink(spark, sink) == second


def _restarted(spark: Any, tmp_path: Path, query: Any) -> tuple[Counter[Any], Counter[Any]]:
    """What ``query(spark, source)`` wrote over two files, then, restarted from its checkpoint
    with a third file, over all three (``a``: 1, 2, 4; ``b``: 10; ``c``: 100)."""
    source, checkpoint, sink = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    _write(spark, source, "1", [("a", 1), ("b", 10)])
    _write(spark, source, "2", [("a", 2)])
    assert _run(query(spark, source), checkpoint, sink) >= 2
    first = _sink(spark, sink)
    _write(spark, source, "3", [("a", 4), ("c", 100)])
    _run(query(spark, source), checkpoint, sink)  # restarted: the steps' state goes on
    return first, _sink(spark, sink)


def _two_step_query(spark: Any, source: Path) -> Any:
    """Per user, a running total; then, per parity of the running count, how many updates it saw
    (a count: records of different users reach it in no set order within a micro-batch): two
    stateful steps keyed differently, in one query."""
    flow = Dataflow("two_steps")
    s: Any = op.input("inp", flow, DataFrameSource(_events(spark, source)))
    s = op.key_on("user", s, lambda row: row.user)
    s = op.stateful_map("running", s, running_total)
    s = op.key_on("parity", s, lambda kv: "odd" if kv[1][0] % 2 else "even")
    s = op.stateful_map("updates", s, lambda seen, kv: ((seen or 0) + 1, (seen or 0) + 1))
    out = Types.ROW_NAMED(["parity", "updates"], [Types.STRING(), Types.LONG()])
    return to_dataframe(s, out)


@pytest.mark.classic_only  # Connect slice: README
def test_two_stateful_steps_keyed_differently_survive_a_restart_from_the_checkpoint(tmp_path: Path) -> None:
    first, both = _restarted(spark_session(), tmp_path, _two_step_query)
    # a's first update and b's are odd counts, a's second even.
    assert first == Counter({("odd", 1): 1, ("odd", 2): 1, ("even", 1): 1})
    assert both == first + Counter({("odd", 3): 1, ("odd", 4): 1})


def _branches_query(spark: Any, source: Path) -> Any:
    """Per user, a running total read by two stateful steps keyed differently (a diamond): per
    user, the largest running total so far; per parity of the running count, how many updates it
    saw. Their outputs merge into one stream."""
    flow = Dataflow("branches")
    s: Any = op.input("inp", flow, DataFrameSource(_events(spark, source)))
    s = op.stateful_map("running", op.key_on("user", s, lambda row: row.user), running_total)
    top = op.stateful_map("top", s, lambda seen, kv: (max(seen or 0, kv[1]),) * 2)
    by_parity = op.key_on("parity", s, lambda kv: "odd" if kv[1][0] % 2 else "even")
    updates = op.stateful_map("updates", by_parity, lambda seen, kv: ((seen or 0) + 1,) * 2)
    both = op.merge("both", op.map("tops", top, lambda kv: ("top:" + kv[0], kv[1])), updates)
    return to_dataframe(both, Types.ROW_NAMED(["k", "v"], [Types.STRING(), Types.LONG()]))


@pytest.mark.classic_only  # Connect slice: README
def test_a_stateful_step_read_by_two_stateful_steps_survives_a_restart_from_the_checkpoint(
    tmp_path: Path,
) -> None:
    first, all_three = _restarted(spark_session(), tmp_path, _branches_query)
    tops = Counter({("top:a", 1): 1, ("top:b", 10): 1, ("top:a", 3): 1})
    assert first == tops + Counter({("odd", 1): 1, ("odd", 2): 1, ("even", 1): 1})
    more = Counter({("top:a", 7): 1, ("top:c", 100): 1, ("odd", 3): 1, ("odd", 4): 1})
    assert all_three == first + more  # all three steps' state went on


def _past_a_step_query(spark: Any, source: Path) -> Any:
    """Per user, the running totals (``running``), how many there were so far (``seen``, which
    reads ``running``), and a join of the two (a step that reads both a stateful step and one that
    reads it): each user's running total meets its count, emitted once both sides have a value
    (Bytewax's default ``join``). ``running``'s items for the join cross ``seen``'s stage in a lane."""
    flow = Dataflow("lanes")
    s: Any = op.input("inp", flow, DataFrameSource(_events(spark, source)))
    s = op.stateful_map("running", op.key_on("user", s, lambda row: row.user), running_total)
    seen = op.stateful_map("seen", s, lambda n, _totals: ((n or 0) + 1,) * 2)
    both = op.map("flat", op.join("both", s, seen), lambda kv: (kv[0], *kv[1][0], kv[1][1]))
    out = Types.ROW_NAMED(["user", "count", "total", "seen"], [Types.STRING(), *[Types.LONG()] * 3])
    return to_dataframe(both, out)


@pytest.mark.classic_only  # Connect slice: README
def test_a_join_of_a_stateful_step_and_one_that_reads_it_survives_a_restart_from_the_checkpoint(
    tmp_path: Path,
) -> None:
    first, both = _restarted(spark_session(), tmp_path, _past_a_step_query)
    assert first == Counter({("a", 1, 1, 1): 1, ("b", 1, 10, 1): 1, ("a", 2, 3, 2): 1})
    assert both == first + Counter({("a", 3, 7, 3): 1, ("c", 1, 100, 1): 1})


@pytest.mark.classic_only  # Connect slice: README
def test_join_of_two_streaming_sources_waits_for_both_sides_across_a_restart(tmp_path: Path) -> None:
    """``op.join`` of two streaming DataFrames (a ``stateful_batch`` over both inputs): a side that
    arrived before the restart is in the checkpoint, and the join emits once the other side
    arrives after it, as Bytewax's join does (emit when every side has a value, then forget)."""
    spark = spark_session()
    left, right = tmp_path / "left", tmp_path / "right"
    checkpoint, sink = tmp_path / "ck", tmp_path / "out"

    def query() -> Any:
        flow = Dataflow("join")
        a: Any = op.input("a", flow, DataFrameSource(_events(spark, left)))
        b: Any = op.input("b", flow, DataFrameSource(_events(spark, right)))
        a = op.map_value("an", op.key_on("ka", a, lambda row: row.user), lambda row: row.n)
        b = op.map_value("bn", op.key_on("kb", b, lambda row: row.user), lambda row: row.n)
        joined = op.join("j", a, b)
        return to_dataframe(joined, Types.TUPLE([Types.STRING(), Types.TUPLE([Types.LONG(), Types.LONG()])]))

    _write(spark, left, "1", [("a", 1), ("b", 2)])
    _write(spark, right, "1", [("b", 20)])
    _run(query(), checkpoint, sink)
    first = Counter({("b", (2, 20)): 1})  # "a" waits for its right side
    assert _sink(spark, sink) == first

    _write(spark, right, "2", [("a", 10)])
    _write(spark, left, "2", [("b", 3)])  # "b" was emitted and forgotten: it waits again
    _run(query(), checkpoint, sink)
    assert _sink(spark, sink) == first + Counter({("a", (1, 10)): 1})


@pytest.mark.classic_only  # Connect slice: README
def test_a_tumbling_window_over_a_streaming_source_closes_across_a_restart(tmp_path: Path) -> None:
    """An event-time tumbling ``count_window``: a window opened before the restart is in the
    checkpoint and closes when a later micro-batch's events move the key's watermark past its end
    (Bytewax's ``EventClock`` keeps a watermark per key, moved by the key's events and by system
    time: here a fixed clock, so only events move it)."""
    from fs_compat.bytewax.operators import windowing as win

    spark = spark_session()
    source, checkpoint, sink = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    start = datetime(2024, 1, 1, tzinfo=UTC)
    now = FileClock(tmp_path / "now")
    now.set(start)

    def query() -> Any:
        flow = Dataflow("windows")
        s: Any = op.input("inp", flow, DataFrameSource(_events(spark, source)))
        clock = win.EventClock(
            lambda row: start + timedelta(seconds=row.n),
            wait_for_system_duration=timedelta(0),
            now_getter=now,
        )
        windower = win.TumblingWindower(length=timedelta(seconds=10), align_to=start)
        counted = win.count_window("count", s, clock, windower, lambda row: row.user)
        out = Types.TUPLE([Types.STRING(), Types.TUPLE([Types.LONG(), Types.LONG()])])
        return to_dataframe(counted.down, out)

    _write(spark, source, "1", [("a", 1), ("a", 2), ("b", 5)])
    _run(query(), checkpoint, sink)
    assert _sink(spark, sink) == Counter()  # window [0 s, 10 s) is open

    # a's watermark passes 10 s (its window [10 s, 20 s) opens), b's passes 10 s and 20 s.
    _write(spark, source, "2", [("a", 12), ("b", 25)])
    _run(query(), checkpoint, sink)
    second = Counter({("a", (0, 2)): 1, ("b", (0, 1)): 1})
    assert _sink(spark, sink) == second

    _write(spark, source, "3", [("a", 31)])  # a's window [10 s, 20 s) closes; b's [20 s, 30 s) waits
    _run(query(), checkpoint, sink)
    assert _sink(spark, sink) == second + Counter({("a", (1, 1)): 1})
