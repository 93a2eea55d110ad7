"""``env.execute()`` returns a JobExecutionResult with the job's summary: records in and out
per step (side outputs included), keyed state at the end, wall time; the same figures on both
targets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fs_compat.common import Configuration, Types
from fs_compat.datastream import (
    KeyedProcessFunction,
    OutputTag,
    ProcessFunction,
    RuntimeContext,
    SinkFunction,
    StreamExecutionEnvironment,
)
from fs_compat.datastream.state import ValueState, ValueStateDescriptor
from fs_compat.runtime import JobSummary, StepSummary, collect_summaries

ODD = OutputTag("odd", Types.LONG())
NUMBERS = list(range(1, 21))


class Split(ProcessFunction):
    def process_element(self, value: int, ctx: ProcessFunction.Context) -> Iterator[Any]:
        if value % 2:
            yield ODD, value
        else:
            yield value


class Count(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.seen: ValueState[int] = runtime_context.get_state(ValueStateDescriptor("seen", Types.LONG()))

    def process_element(self, value: int, ctx: KeyedProcessFunction.Context) -> Iterator[int]:
        seen = (self.seen.value() or 0) + 1
        self.seen.update(seen)
        yield seen


class Into(SinkFunction):
    def __init__(self, into: list[Any]) -> None:
        self.into = into

    def invoke(self, value: Any) -> None:
        self.into.append(value)


def _env(target: str) -> StreamExecutionEnvironment:
    return StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", target)
    )


def _run(target: str) -> JobSummary:
    env = _env(target)
    numbers = env.from_collection(NUMBERS, Types.LONG()).name("numbers")
    split = numbers.process(Split(), Types.LONG()).name("split")
    evens: list[int] = []
    odds: list[int] = []
    counted = split.key_by(lambda n: n % 3).process(Count()).uid("count-uid")
    # On Spark, "times ten" runs in the keyed step's pass (chained): it counts what it gets.
    counted.map(lambda n: n * 10).name("times ten").add_sink(Into(evens)).name("evens")
    split.get_side_output(ODD).map(lambda n: -n).name("negate").add_sink(Into(odds)).name("odds")
    result = env.execute("split job")
    seen: dict[int, int] = {}
    expected = []
    for n in NUMBERS[1::2]:  # the even numbers: a running count per n % 3, times ten
        seen[n % 3] = seen.get(n % 3, 0) + 1
        expected.append(10 * seen[n % 3])
    assert sorted(evens) == sorted(expected)
    assert sorted(odds) == [-n for n in reversed(NUMBERS) if n % 2]
    assert result.get_job_name() == "split job"
    assert len(str(result.get_job_id())) == 32
    assert result.get_all_accumulator_results() == {}
    assert result.get_accumulator_result("anything") is None
    summary = result.get_job_summary()
    assert summary is not None
    assert result.get_net_runtime() == round(summary.wall_time_s * 1000)
    return summary


def _check(summary: JobSummary) -> None:
    by_name = {s.name: s for s in summary.steps}
    assert list(by_name) == ["numbers", "split", "Keyed Process", "times ten", "evens", "negate", "odds"]
    count = by_name["Keyed Process"]
    assert count.uid == "count-uid" and summary.step("count-uid") is count
    n_keys = len({n % 3 for n in NUMBERS if n % 2 == 0})
    assert [(s.kind, s.records_in, s.records_out, s.state_keys) for s in summary.steps] == [
        ("source", None, 20, None),
        ("step", 20, 20, None),  # 10 on the main output, 10 on the consumed side output
        ("step", 10, 10, n_keys),
        ("step", 10, 10, None),
        ("sink", 10, None, None),
        ("step", 10, 10, None),
        ("sink", 10, None, None),
    ]
    assert count.state_bytes is not None and count.state_bytes > 0
    assert summary.wall_time_s > 0
    with pytest.raises(KeyError, match="no step named 'nope' in job 'split job'; its steps: 'numbers'"):
        summary.step("nope")


def test_summary_in_process() -> None:
    summary = _run("local")
    assert summary.target == "local"
    _check(summary)
    lines = summary.render().splitlines()
    assert lines[0].startswith("Job 'split job' on local: 7 steps in ")
    assert lines[1].split() == ["step", "records", "in", "records", "out", "state", "keys", "state", "bytes"]
    assert lines[4].split()[:6] == ["Keyed", "Process", "[count-uid]", "10", "10", "3"]


@pytest.mark.spark
@pytest.mark.slow
def test_summary_on_spark_matches() -> None:
    summary = _run("spark")
    assert summary.target.startswith("spark (")
    _check(summary)
    local = _run("local")
    assert [_figures(s) for s in summary.steps] == [_figures(s) for s in local.steps]


def _figures(step: StepSummary) -> tuple[Any, ...]:
    return (step.name, step.records_in, step.records_out, step.state_keys, step.state_bytes)


def test_execute_and_collect_publishes_a_summary() -> None:
    env = _env("local")
    with collect_summaries() as found:
        values = list(env.from_collection([1, 2, 3]).filter(lambda n: n != 2).execute_and_collect())
    assert values == [1, 3]
    assert [s.job_name for s in found] == ["collect"]
    assert [(s.name, s.records_in, s.records_out) for s in found[0].steps] == [
        ("Collection Source", None, 3),
        ("Filter", 3, 2),
        ("Collect", 2, None),
    ]


@pytest.mark.spark
@pytest.mark.slow
def test_summary_of_a_dataframe_source_on_spark() -> None:
    from fs_compat.spark import spark_session

    df = spark_session().createDataFrame([(i, i * 1.5) for i in range(7)], "id LONG, amount DOUBLE")
    env = _env("spark")
    with collect_summaries() as found:
        kept = env.from_dataframe(df).filter(lambda row: row.id % 3 != 0).execute_and_collect()
        assert sorted(row.id for row in kept) == [1, 2, 4, 5]
    assert [(s.name, s.records_in, s.records_out) for s in found[0].steps] == [
        ("DataFrame Source", None, 7),
        ("Filter", 7, 4),
        ("Collect", 4, None),
    ]
