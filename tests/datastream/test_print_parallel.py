"""``print()`` of a sink that runs in parallel names the printing instance, as Flink's print sink
does: ``N> `` or ``identifier:N> `` (N from 1) when the sink's parallelism (the job's, or the
sink's ``set_parallelism``) is above 1; ``identifier> `` or nothing at parallelism 1. The instance
is its input's when both have the same parallelism (Flink chains them), the key's on a keyed
stream, else round-robin from the first (Flink's rebalance starts at a random one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streaming_words import running_word_counts

from fs_compat.common import Configuration, Duration, WatermarkStrategy
from fs_compat.datastream import (
    KeyedProcessFunction,
    RuntimeContext,
    SinkFunction,
    StreamExecutionEnvironment,
)
from fs_compat.datastream.connectors.file_system import FileSource, StreamFormat
from fs_compat.runtime import KeyEncoder, subtask_of

_SPARK = [pytest.mark.spark, pytest.mark.slow]
_TARGETS = [
    "local",
    pytest.param("spark", marks=_SPARK),
    pytest.param("spark-streaming", marks=[*_SPARK, pytest.mark.streaming_target], id="streaming-target"),
]
EVENTS = [("a", 1), ("b", 2), ("c", 3), ("a", 4), ("d", 5), ("e", 6)]


def _env(target: str, parallelism: int) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", target)
    )
    env.set_parallelism(parallelism)
    return env


def _run(capsys: Any, env: StreamExecutionEnvironment) -> list[str]:
    capsys.readouterr()
    env.execute()
    return capsys.readouterr().out.splitlines()


def _instance(key: str, parallelism: int) -> int:
    """The parallel instance fs-compat gives ``key`` (pickled keys, default key groups)."""
    _kb, kg = KeyEncoder().locate(key)
    return subtask_of(kg, parallelism)


class _Nothing(SinkFunction):  # type: ignore[type-arg]
    def invoke(self, value: Any, context: Any) -> None:
        pass


class _Tagged(KeyedProcessFunction):  # type: ignore[type-arg]
    """Emits each value with the index of the instance that processed it."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.index = runtime_context.get_index_of_this_subtask()

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
        yield value[0], value[1], self.index


@pytest.mark.parametrize("target", _TARGETS)
def test_a_keyed_steps_lines_name_the_instance_that_processed_them(capsys: Any, target: str) -> None:
    env = _env(target, 2)
    env.from_collection(EVENTS).key_by(lambda v: v[0]).process(_Tagged()).print()
    lines = _run(capsys, env)
    assert sorted(lines) == sorted(
        f"{i + 1}> ('{k}', {v}, {i})" for k, v in EVENTS for i in [_instance(k, 2)]
    )
    assert {line[:3] for line in lines} == {"1> ", "2> "}  # these keys reach both instances


@pytest.mark.parametrize("target", _TARGETS)
def test_the_identifier_comes_before_the_instance(capsys: Any, target: str) -> None:
    env = _env(target, 2)
    env.from_collection(EVENTS).key_by(lambda v: v[0]).map(lambda v: v[1]).print("out")
    lines = _run(capsys, env)
    assert sorted(lines) == sorted(f"out:{_instance(k, 2) + 1}> {v}" for k, v in EVENTS)


@pytest.mark.parametrize("target", ["local", pytest.param("spark", marks=_SPARK)])
def test_a_keyed_stream_printed_goes_to_its_keys_instances(capsys: Any, target: str) -> None:
    env = _env(target, 2)
    env.from_collection(EVENTS).key_by(lambda v: v[0]).print()
    lines = _run(capsys, env)
    assert sorted(lines) == sorted(f"{_instance(k, 2) + 1}> ('{k}', {v})" for k, v in EVENTS)


@pytest.mark.parametrize("target", ["local", pytest.param("spark", marks=_SPARK)])
def test_a_source_printed_in_parallel_is_spread_round_robin(capsys: Any, target: str) -> None:
    env = _env(target, 2)
    env.from_collection(EVENTS).print()
    assert _run(capsys, env) == [f"{i % 2 + 1}> {e}" for i, e in enumerate(EVENTS)]


@pytest.mark.parametrize("target", ["local", pytest.param("spark", marks=_SPARK)])
def test_a_sink_at_parallelism_one_prints_no_instance(capsys: Any, target: str) -> None:
    env = _env(target, 2)
    stream = env.from_collection(EVENTS).key_by(lambda v: v[0]).map(lambda v: v[1])
    stream.print().set_parallelism(1)
    stream.print("one").set_parallelism(1)
    lines = _run(capsys, env)
    assert sorted(lines) == sorted([*(str(v) for _k, v in EVENTS), *(f"one> {v}" for _k, v in EVENTS)])


def test_a_sink_wider_than_its_input_takes_its_values_round_robin(capsys: Any) -> None:
    env = _env("local", 1)
    env.from_collection(EVENTS).map(lambda v: v[1]).print().set_parallelism(3)
    assert _run(capsys, env) == [f"{i % 3 + 1}> {v}" for i, (_k, v) in enumerate(EVENTS)]


def test_sink_parallelism_must_be_positive() -> None:
    env = _env("local", 1)
    sink = env.from_collection(EVENTS).print()
    with pytest.raises(ValueError, match="parallelism must be >= 1, got 0"):
        sink.set_parallelism(0)


def test_the_job_summary_counts_what_a_parallel_print_printed(capsys: Any) -> None:
    env = _env("local", 2)
    env.from_collection(EVENTS).key_by(lambda v: v[0]).map(lambda v: v[1]).print()
    summary = env.execute().get_job_summary()
    assert summary is not None
    assert summary.step("Print").records_in == len(EVENTS)
    assert len(capsys.readouterr().out.splitlines()) == len(EVENTS)


def _streaming_word_count(inputs: Path, checkpoints: Path, parallelism: int) -> None:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration()
        .set_string("execution.target", "spark")
        .set_string("fs_compat.streaming.trigger", "available-now")
        .set_string("execution.checkpointing.dir", str(checkpoints))
    )
    env.set_parallelism(parallelism)
    running_word_counts(env, inputs).print()
    env.execute()


# foreachBatch runs in the Connect server's Python over Connect: its lines are printed there.
@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.classic_only
def test_a_streaming_job_prints_each_micro_batch_and_a_restart_continues_its_state(
    capsys: Any, tmp_path: Path
) -> None:
    inputs, checkpoints = tmp_path / "in", tmp_path / "ck"
    inputs.mkdir()
    (inputs / "1.txt").write_text("a b a\nc a\n", encoding="utf-8")
    capsys.readouterr()
    _streaming_word_count(inputs, checkpoints, 2)
    first = capsys.readouterr().out.splitlines()
    expected = ["(a,1)", "(a,2)", "(a,3)", "(b,1)", "(c,1)"]
    assert sorted(line.split("> ", 1)[1] for line in first) == expected
    assert all(line.startswith(f"{_instance(line[4], 2) + 1}> ") for line in first)  # "N> (k,n)"
    assert [line for line in first if "(a," in line] == [
        f"{_instance('a', 2) + 1}> (a,{n})" for n in (1, 2, 3)
    ]

    (inputs / "2.txt").write_text("b a\n", encoding="utf-8")
    _streaming_word_count(inputs, checkpoints, 2)  # the same job again: only the new file
    second = capsys.readouterr().out.splitlines()
    assert sorted(second) == sorted([f"{_instance('b', 2) + 1}> (b,2)", f"{_instance('a', 2) + 1}> (a,4)"])


@pytest.mark.spark
@pytest.mark.slow
def test_a_streaming_job_still_refuses_a_sink_that_needs_the_job_to_end(tmp_path: Path) -> None:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", "spark")
    )
    source = (
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(tmp_path))
        .monitor_continuously(Duration.of_seconds(1))
        .build()
    )
    env.from_source(source, WatermarkStrategy.no_watermarks(), "lines").add_sink(_Nothing())
    with pytest.raises(ValueError, match=r"sink 'Sink' needs the job to end: .* or print\(\)"):
        env.execute()
