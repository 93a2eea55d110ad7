"""The rest of Bytewax 0.21.1's surface: ``bytewax.inputs``' batching helpers and
``SimplePollingSource``, ``bytewax.testing.cluster_main`` / ``poll_next_batch``,
``bytewax.operators.helpers``, and the checks Bytewax makes before and while running a flow."""

from __future__ import annotations

import asyncio
import queue
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.errors import BytewaxRuntimeError
from fs_compat.bytewax.inputs import (
    SimplePollingSource,
    batch,
    batch_async,
    batch_getter,
    batch_getter_ex,
)
from fs_compat.bytewax.operators.helpers import map_dict_value
from fs_compat.bytewax.recovery import RecoveryConfig, init_db_dir
from fs_compat.bytewax.testing import (
    TestingSink,
    TestingSource,
    cluster_main,
    poll_next_batch,
    run_main,
)

# Batching helpers. -----------------------------------------------------------------------------


def test_batch_splits_an_iterable() -> None:
    assert list(batch(iter(range(7)), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(batch([], 3)) == []


def test_batch_getter_ends_a_batch_on_the_sentinel_and_stops_on_stop_iteration() -> None:
    items = iter([1, 2, 3, None, 4, "wait", 5])

    def getter() -> Any:
        return next(items)

    assert list(batch_getter(getter, 2)) == [[1, 2], [3], [4, "wait"], [5]]
    items = iter([1, "wait", 2])
    assert list(batch_getter(getter, 5, yield_on="wait")) == [[1], [2]]


def test_batch_getter_ex_ends_a_batch_on_the_exception() -> None:
    q: queue.Queue[int] = queue.Queue()
    for i in range(5):
        q.put(i)
    batches = batch_getter_ex(q.get_nowait, 2)
    assert [next(batches) for _ in range(4)] == [[0, 1], [2, 3], [4], []]
    ended = iter([1, 2])
    assert list(batch_getter_ex(lambda: next(ended), 5, yield_ex=KeyError)) == [[1, 2]]


def test_batch_async_gives_what_arrived_within_the_timeout() -> None:
    async def slow() -> AsyncIterator[int]:
        yield 1
        yield 2
        await asyncio.sleep(0.3)
        yield 3

    batches = batch_async(slow(), timedelta(seconds=0.05), 10)
    assert next(batches) == [1, 2]  # 3 is not there before the timeout
    got = []
    for chunk in batches:
        got += chunk
    assert got == [3]  # the pending read is kept, not lost, and the iterator ends


# SimplePollingSource. --------------------------------------------------------------------------


class _Counter(SimplePollingSource[int, int]):
    """Polls 0, 1, ... with a skipped None and one retry; stops after ``stop``; resumes."""

    def __init__(self, stop: int) -> None:
        super().__init__(interval=timedelta(0))
        self.n = 0
        self.stop = stop
        self.retried = False

    def next_item(self) -> int | None:
        if self.n == 2 and not self.retried:
            self.retried = True
            raise SimplePollingSource.Retry(timedelta(0))
        if self.n >= self.stop:
            raise StopIteration()
        self.n += 1
        return None if self.n == 3 else self.n - 1

    def snapshot(self) -> int:
        return self.n

    def resume(self, resume_state: int) -> None:
        self.n = resume_state


def test_simple_polling_source_polls_skips_none_retries_and_ends() -> None:
    out: list[int] = []
    flow = Dataflow("poll")
    op.output("out", op.input("inp", flow, _Counter(stop=5)), TestingSink(out))
    run_main(flow)
    assert out == [0, 1, 3, 4]


@pytest.mark.in_process("recovery (run_main recovery_config)")
def test_simple_polling_source_resumes_from_its_snapshot(tmp_path: Any) -> None:
    init_db_dir(tmp_path, 1)
    recovery = RecoveryConfig(str(tmp_path))
    runs = []
    for stop in (3, 6):
        out: list[int] = []
        flow = Dataflow("poll")
        op.output("out", op.input("inp", flow, _Counter(stop=stop)), TestingSink(out))
        run_main(flow, epoch_interval=timedelta(0), recovery_config=recovery)
        runs.append(out)
    assert runs == [[0, 1], [3, 4, 5]]  # the second run resumes at n == 3 (2 was the None)


def test_simple_polling_source_waits_for_its_interval_aligned_to_align_to() -> None:
    class Once(SimplePollingSource[str, None]):
        def next_item(self) -> str:
            return "x"

    now = datetime.now(UTC)
    part = Once(timedelta(hours=1), align_to=now - timedelta(minutes=15)).build_part("s", "singleton", None)
    wake = part.next_awake()
    assert wake is not None and timedelta(minutes=44) < wake - now <= timedelta(minutes=45)
    assert part.next_batch() == ["x"]
    assert part.next_awake() == wake + timedelta(hours=1)
    assert Once(timedelta(hours=1)).list_parts() == ["singleton"]


def test_poll_next_batch_skips_empty_batches_and_times_out() -> None:
    class Part:
        def __init__(self, batches: list[list[int]]) -> None:
            self.batches = iter(batches)

        def next_batch(self) -> list[int]:
            return next(self.batches, [])

    assert poll_next_batch(Part([[], [], [7]])) == [7]
    with pytest.raises(TimeoutError):
        poll_next_batch(Part([]), timeout=timedelta(milliseconds=20))


# cluster_main. ---------------------------------------------------------------------------------


def _summing_flow(out: list[Any]) -> Dataflow:
    flow = Dataflow("sum")
    s = op.input("inp", flow, TestingSource([("a", 1), ("b", 2), ("a", 3), ("b", 4)]))
    s = op.reduce_final("sum", s, lambda x, y: x + y)
    op.output("out", s, TestingSink(out))
    return flow


def test_cluster_main_runs_the_flow_in_this_process() -> None:
    for addresses, workers in [([], 1), ([], 3), (["localhost:2101"], 2)]:
        out: list[Any] = []
        cluster_main(_summing_flow(out), addresses, 0, worker_count_per_proc=workers)
        assert sorted(out) == [("a", 4), ("b", 6)]


def test_cluster_main_checks_its_arguments() -> None:
    flow = _summing_flow([])
    with pytest.raises(NotImplementedError, match="fs-compat runs a dataflow in one process"):
        cluster_main(flow, ["localhost:2101", "localhost:2102"], 0)
    with pytest.raises(ValueError, match="proc_id"):
        cluster_main(flow, [], 1)
    with pytest.raises(ValueError, match="worker_count_per_proc"):
        cluster_main(flow, [], 0, worker_count_per_proc=0)


# operators.helpers. ----------------------------------------------------------------------------


def test_map_dict_value_maps_one_value_of_each_dict() -> None:
    out: list[Any] = []
    flow = Dataflow("lens")
    s = op.input("inp", flow, TestingSource([{"name": "ada", "n": 1}, {"name": "bob", "n": 2}]))
    op.output("out", op.map("upper", s, map_dict_value("name", str.upper)), TestingSink(out))
    run_main(flow)
    assert out == [{"name": "ADA", "n": 1}, {"name": "BOB", "n": 2}]


# Bytewax's checks. -----------------------------------------------------------------------------


def test_a_flow_needs_an_input_step() -> None:
    with pytest.raises(BytewaxRuntimeError, match="error building production dataflow") as info:
        run_main(Dataflow("empty"))
    assert isinstance(info.value.__cause__, ValueError)
    assert str(info.value.__cause__).startswith("Dataflow needs to contain at least one input step")


def test_a_flow_needs_an_output_or_inspect_step(capsys: pytest.CaptureFixture[str]) -> None:
    flow = Dataflow("no_out")
    s = op.map("m", op.input("inp", flow, TestingSource([1, 2])), lambda x: x + 1)
    with pytest.raises(BytewaxRuntimeError, match="error building production dataflow") as info:
        run_main(flow)
    assert isinstance(info.value.__cause__, ValueError)
    assert "at least one output or inspect step" in str(info.value.__cause__)
    op.inspect("look", s)  # an inspect step is enough
    run_main(flow)
    assert capsys.readouterr().out == "no_out.look: 2\nno_out.look: 3\n"


@pytest.mark.in_process("exception chain (the TypeError cause stays in the Spark worker)")
def test_a_non_bool_branch_predicate_is_a_runtime_error_caused_by_a_type_error() -> None:
    flow = Dataflow("br")
    b = op.branch("branch", op.input("inp", flow, TestingSource([1])), lambda x: x)  # type: ignore[arg-type,return-value]
    op.output("t", b.trues, TestingSink([]))
    expected = "return value of `predicate` in step br.branch must be a `bool`; got a `int` instead"
    with pytest.raises(BytewaxRuntimeError, match=re.escape(expected)) as info:
        run_main(flow)
    assert isinstance(info.value.__cause__, TypeError)


# On Spark. -------------------------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.slow
def test_on_spark_checks_inspect_alone_and_cluster_workers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(BytewaxRuntimeError, match="error building production dataflow") as info:
        run_main(Dataflow("empty"), _target="spark")
    assert "at least one input step" in str(info.value.__cause__)
    # An inspect step with nothing after it prints on Spark too.
    flow = Dataflow("look")
    op.inspect("i", op.map("m", op.input("inp", flow, TestingSource([1, 2])), lambda x: x * 10))
    run_main(flow, _target="spark")
    assert capsys.readouterr().out == "look.i: 10\nlook.i: 20\n"
    # cluster_main's workers are Spark tasks: the same sums, in any order.
    out: list[Any] = []
    cluster_main(_summing_flow(out), [], 0, worker_count_per_proc=2, _target="spark")
    assert sorted(out) == [("a", 4), ("b", 6)]
