"""Metrics of a job's functions (PyFlink's metric group; prometheus_client metrics in a Bytewax
flow) are collected from wherever the functions ran (Spark's workers too), shown in the job's
summary and exported in Prometheus' text format."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.parser import text_string_to_metric_families

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.inputs import DynamicSource, StatelessSourcePartition
from fs_compat.bytewax.outputs import DynamicSink, StatelessSinkPartition
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main
from fs_compat.common import Configuration, Types
from fs_compat.datastream import KeyedProcessFunction, RuntimeContext, StreamExecutionEnvironment
from fs_compat.monitoring import prometheus_text
from fs_compat.runtime import JobSummary, MetricValue, collect_summaries

AMOUNTS = [3, 1, 4, 1, 5, 9, 2, 6]


class Tally(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        group = runtime_context.get_metrics_group().add_group("orders")
        self.seen = group.counter("seen")
        self.amount = group.distribution("amount")
        self.events = group.meter("events")
        group.gauge("subtasks", lambda: 1)

    def process_element(self, value: int, ctx: KeyedProcessFunction.Context) -> Iterator[int]:
        self.seen.inc()
        self.amount.update(value)
        self.events.mark_event(2)
        yield value


def _run(target: str, job: str) -> JobSummary:
    """A keyed step counting into its metric group, on ``target``, in two subtasks."""
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", target)
    )
    env.set_parallelism(2)
    # Keys 2 and 3: one on each subtask (Flink's key groups put 0 and 1 both on the first).
    tallied = env.from_collection(AMOUNTS, Types.LONG()).key_by(lambda n: n % 2 + 2).process(Tally())
    with collect_summaries() as found:
        values = tallied.name("tally").execute_and_collect(job, limit=100)
    assert sorted(values) == sorted(AMOUNTS)
    return found[0]


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _check_pyflink(summary: JobSummary, job: str) -> None:
    step = summary.step("tally")
    assert step.metrics == {
        "orders.amount": MetricValue(
            "distribution", count=len(AMOUNTS), total=sum(AMOUNTS), low=min(AMOUNTS), high=max(AMOUNTS)
        ),
        "orders.events": MetricValue("meter", 2 * len(AMOUNTS)),
        "orders.seen": MetricValue("counter", len(AMOUNTS)),
        "orders.subtasks": MetricValue("gauge", 2),  # one per subtask, summed
    }
    lines = [line.split() for line in summary.render().splitlines()]
    assert [
        "tally",
        "orders.amount",
        "distribution",
        "count",
        "8,",
        "min",
        "1,",
        "mean",
        "3.88,",
        "max",
        "9",
    ] in lines
    samples = _samples(prometheus_text())
    at = (("job_name", job), ("operator_name", "tally"))
    prefix = "flink_taskmanager_job_task_operator_orders_"
    assert samples[(prefix + "seen", at)] == len(AMOUNTS)
    assert samples[(prefix + "events", at)] == 2 * len(AMOUNTS)
    assert samples[(prefix + "amount_count", at)] == len(AMOUNTS)
    assert samples[(prefix + "amount_sum", at)] == sum(AMOUNTS)
    assert samples[(prefix + "amount_max", at)] == max(AMOUNTS)
    assert samples[("fs_compat_records_in", at)] == len(AMOUNTS)
    assert samples[("fs_compat_state_keys", at)] == 0


def test_pyflink_metrics_in_process() -> None:
    _check_pyflink(_run("local", "metrics local"), "metrics local")


@pytest.mark.spark
@pytest.mark.slow
def test_pyflink_metrics_from_spark_workers() -> None:
    summary = _run("spark", "metrics spark")
    assert summary.target.startswith("spark")
    _check_pyflink(summary, "metrics spark")


WORDS_SEEN = Counter("fs_test_words_seen", "Words seen, by first letter", ["first"])
WORD_LENGTH = Histogram("fs_test_word_length", "Word lengths", buckets=(2, 5, 10))


def _see(word: str) -> str:
    WORDS_SEEN.labels(word[0]).inc()
    WORD_LENGTH.observe(len(word))
    return word


def _flow() -> tuple[Dataflow, list[Any]]:
    out: list[Any] = []
    flow = Dataflow("words")
    words = op.input("inp", flow, TestingSource(["apple", "avocado", "kiwi", "banana"]))
    op.output("out", op.map("see", words, _see), TestingSink(out))
    return flow, out


@pytest.mark.spark
@pytest.mark.slow
def test_bytewax_prometheus_metrics_from_spark_workers() -> None:
    before = _samples(prometheus_text())

    def added(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return _samples(prometheus_text())[key] - before.get(key, 0.0)

    flow, out = _flow()
    with collect_summaries() as found:
        run_main(flow, _target="spark")
    assert sorted(out) == ["apple", "avocado", "banana", "kiwi"]
    # The job's summary shows what the workers added, under the pass's first step.
    (summary,) = found
    assert summary.job_name == "words"
    shown = {name: m for step in summary.steps for name, m in step.metrics.items()}
    assert shown["fs_test_words_seen{a}"] == MetricValue("counter", 2)
    assert shown["fs_test_word_length"] == MetricValue("distribution", count=4, total=22)
    assert added("fs_test_words_seen_total", first="a") == 2
    assert added("fs_test_words_seen_total", first="k") == 1
    assert added("fs_test_word_length_count") == 4
    assert added("fs_test_word_length_sum") == 22
    assert added("fs_test_word_length_bucket", le="5.0") == 2


def test_serve_metrics_over_http() -> None:
    import urllib.request

    from fs_compat.monitoring import serve_metrics

    _run("local", "served")
    server = serve_metrics(0, "127.0.0.1")
    try:
        url = f"http://127.0.0.1:{server.server_port}/metrics"
        with urllib.request.urlopen(url, timeout=30) as response:
            text = response.read().decode()
    finally:
        server.shutdown()
    at = (("job_name", "served"), ("operator_name", "tally"))
    assert _samples(text)[("flink_taskmanager_job_task_operator_orders_seen", at)] == len(AMOUNTS)


READ = Counter("fs_test_items_read", "Items a source partition read")
LAST = Gauge("fs_test_last_batch", "The size of a partition's last batch", ["partition"])


class _MeteredSource(DynamicSource[int]):
    """A source that holds metrics (as Bytewax's Kafka source does): on Spark they travel to the
    data source's planning worker and on to the tasks by reference, as functions' metrics do."""

    def __init__(self) -> None:
        self.read = READ
        self.last = LAST

    def build(self, step_id: str, worker_index: int, worker_count: int) -> StatelessSourcePartition[int]:
        read, last = self.read, self.last.labels(str(worker_index))

        class Part(StatelessSourcePartition[int]):
            def __init__(self) -> None:
                self.left = [[1, 2], [3]]

            def next_batch(self) -> list[int]:
                if not self.left:
                    raise StopIteration()
                batch = self.left.pop(0)
                read.inc(len(batch))
                last.set(len(batch))
                return batch

        return Part()


@pytest.mark.slow
@pytest.mark.parametrize("target", ["local", pytest.param("spark", marks=pytest.mark.spark)])
def test_what_a_source_adds_to_its_prometheus_metrics_reaches_the_driver(target: str) -> None:
    out: list[int] = []
    flow = Dataflow("metered")
    op.output(
        "out", op.map("double", op.input("inp", flow, _MeteredSource()), lambda n: 2 * n), TestingSink(out)
    )
    LAST.labels("0").set(0)
    before = READ._value.get()
    with collect_summaries() as found:
        run_main(flow, _target=target)
    assert out == [2, 4, 6]
    # On Spark the source's reads come with its rows to the task that makes them items, and on
    # to the driver with that task's counts.
    assert READ._value.get() - before == 3
    assert LAST.labels("0")._value.get() == 1
    if target == "spark":
        (summary,) = found
        shown = {name: m for step in summary.steps for name, m in step.metrics.items()}
        assert shown["fs_test_items_read"] == MetricValue("counter", 3)
        assert shown["fs_test_last_batch{0}"] == MetricValue("gauge", 1)


WRITTEN = Counter("fs_test_items_written", "Items a sink partition wrote")


class _MeteredSink(DynamicSink[int]):
    """A sink that holds a metric (as Bytewax's Kafka sink does) and appends to a file: under
    ``run_main`` on Spark it runs on the driver, with ``to_sink`` in Spark's tasks (its metric
    travels there by reference)."""

    def __init__(self, path: Path) -> None:
        self.written = WRITTEN
        self.path = path

    def build(self, step_id: str, worker_index: int, worker_count: int) -> StatelessSinkPartition[int]:
        written, path = self.written, self.path

        class Part(StatelessSinkPartition[int]):
            def write_batch(self, items: list[int]) -> None:
                with path.open("a") as f:
                    f.writelines(f"{item}\n" for item in items)
                written.inc(len(items))

        return Part()


@pytest.mark.spark
@pytest.mark.slow
def test_a_sink_holding_a_prometheus_metric_runs_on_spark(tmp_path: Path) -> None:
    from fs_compat.bytewax.spark import to_dataframe, to_sink

    def flow_to(path: Path) -> Dataflow:
        flow = Dataflow("metered_out")
        op.output("out", op.input("inp", flow, TestingSource([1, 2, 3])), _MeteredSink(path))
        return flow

    # run_main: the sink is called on the driver, so the driver's metric counts the writes.
    before = WRITTEN._value.get()
    run_main(flow_to(tmp_path / "driver.txt"), _target="spark")
    assert (tmp_path / "driver.txt").read_text().split() == ["1", "2", "3"]
    assert WRITTEN._value.get() - before == 3
    # to_sink: Spark's tasks write, each with its own copy of the metric (not collected).
    flow = Dataflow("metered_tasks")
    items = to_dataframe(op.input("inp", flow, TestingSource([1, 2, 3])))
    to_sink(items, "out", _MeteredSink(tmp_path / "tasks.txt"), parallelism=2).save()
    assert sorted((tmp_path / "tasks.txt").read_text().split()) == ["1", "2", "3"]
