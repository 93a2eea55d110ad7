"""FSProcessorDrivers as runtime Operators, in-process: the seed processors give the emits they give
on FunctionStream's LocalContext, hooks are called when the runtime says, and state survives a
snapshot and restore of its key group (what a Spark streaming micro-batch does)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from fs_api import Context, FSProcessorDriver
from fs_api.testing import LocalContext
from fs_api_advanced import BytesCodec, StringCodec, ValueState
from fs_compat.common import Row
from fs_compat.functionstream import NO_KEY, ProcessorOperator, processor_factory, run_processor_local
from fs_compat.runtime import (
    MAX_TIMESTAMP,
    Edge,
    LocalConfig,
    Operator,
    OperatorNode,
    OperatorRuntime,
    SourceNode,
    StepError,
    SubtaskRunner,
)


def _seed() -> Any:
    """The seed's processors (tests/seed), as a module."""
    name = "fs_seed_processors"
    if name not in sys.modules:
        path = Path(__file__).parents[1] / "seed" / "test_seed_processors.py"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


SEED = _seed()
EVENTS = [b"key-0001x", b"key-0002y", b"key-0001z", b"key-0001", b"key-0002", b"key-0003", b"key-0002"]


def _on_local_context(processor: FSProcessorDriver, events: list[bytes]) -> list[tuple[bytes, int]]:
    ctx = LocalContext()
    processor.init(ctx, {})
    for data in events:
        processor.process(ctx, 0, data)
    processor.close(ctx)
    return ctx.emitted


@pytest.mark.parametrize("cls", [SEED.CounterProcessor, SEED.KeyedCounterProcessor])
def test_seed_processors_without_a_key_give_the_local_context_emits_in_order(cls: Any) -> None:
    assert run_processor_local(EVENTS, cls) == _on_local_context(cls(), EVENTS)


@pytest.mark.parametrize("parallelism", [1, 3])
def test_keyed_counter_keyed_by_its_own_key_gives_the_same_emits_per_key(parallelism: int) -> None:
    records = [{"data": e, "key": e[:8]} for e in EVENTS]
    out = run_processor_local(records, SEED.KeyedCounterProcessor, parallelism=parallelism)
    expected = _on_local_context(SEED.KeyedCounterProcessor(), EVENTS)
    assert sorted(out) == sorted(expected)
    if parallelism == 1:
        assert out == expected


def test_counter_with_a_key_column_counts_per_key() -> None:
    records = [{"data": e, "key": e[:8].decode()} for e in EVENTS]
    out = run_processor_local(records, SEED.CounterProcessor)
    assert [d for d, _ in out] == [b"1", b"1", b"2", b"3", b"2", b"1", b"3"]
    # key_column=None: one global count, as in FunctionStream.
    out = run_processor_local(records, SEED.CounterProcessor, key_column=None)
    assert [d for d, _ in out] == [str(i).encode() for i in range(1, 8)]


class Probe(FSProcessorDriver):
    """Emits what the runtime calls, and keeps a count in a plain-keyspace entry."""

    def init(self, ctx: Context, config: dict[str, str]) -> None:
        self.tag = config.get("tag", "").encode()
        self.count = ValueState.from_context_auto_codec(ctx, "count")
        ctx.emit(b"init:" + self.tag, 9)

    def process(self, ctx: Context, source_id: int, data: bytes) -> None:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        ctx.emit(b"%s:%d:%d" % (data, source_id, n), source_id)

    def process_watermark(self, ctx: Context, source_id: int, watermark: int) -> None:
        ctx.emit(b"wm:%d:%d:%d" % (source_id, watermark, self.count.value() or 0), 7)

    def take_checkpoint(self, ctx: Context, checkpoint_id: int) -> None:
        ctx.emit(b"ck:%d:%d" % (checkpoint_id, self.count.value() or 0), 8)

    def close(self, ctx: Context) -> None:
        ctx.emit(b"close:" + self.tag + b":%d" % (self.count.value() or 0), 9)


def test_hooks_in_order_config_and_source_ids() -> None:
    records = [b"a", {"data": b"b", "source_id": 2}, {"data": b"c", "source_id": None}]
    out = run_processor_local(records, Probe, config={"tag": "t"})
    assert out == [
        (b"init:t", 9),  # emits of init come out with the first hook's
        (b"a:0:1", 0),
        (b"b:2:2", 2),
        (b"c:0:3", 0),
        (b"wm:0:%d:3" % MAX_TIMESTAMP, 7),  # end of bounded input: the final watermark
        (b"close:t:3", 9),
    ]


class InitTag(FSProcessorDriver):
    def init(self, ctx: Context, config: dict[str, str]) -> None:
        self.tag = config["tag"].encode()

    def process(self, ctx: Context, source_id: int, data: bytes) -> None:
        ctx.emit(self.tag + data)


def test_a_driver_instance_is_copied_per_task() -> None:
    driver = InitTag()
    records = [{"data": b"x", "key": k} for k in ("a", "b", "c", "d")]
    out = run_processor_local(records, driver, parallelism=2, config={"tag": "i"})
    assert out == [(b"ix", 0)] * 4
    assert not hasattr(driver, "tag"), "the instance passed in was not used itself"


def test_keyed_stores_outside_process_are_an_error_naming_the_hook() -> None:
    records = [{"data": b"x", "key": "a"}]
    with pytest.raises(StepError, match=r"no current key \(in process_watermark: with a key column"):
        run_processor_local(records, Probe)


def test_emitted_watermarks_need_watermarks_true() -> None:
    class Forward(FSProcessorDriver):
        def process(self, ctx: Context, source_id: int, data: bytes) -> None:
            ctx.emit(data)

        def process_watermark(self, ctx: Context, source_id: int, watermark: int) -> None:
            ctx.emit_watermark(watermark, 3)

    with pytest.raises(StepError, match=r"emit_watermark is not supported by default.*watermarks=True"):
        run_processor_local([b"a"], Forward)
    assert run_processor_local([b"a"], Forward, watermarks=True) == [
        (b"a", 0, None),
        (None, 3, MAX_TIMESTAMP),
    ]


@pytest.mark.parametrize(
    ("data", "channel", "message"),
    [
        ("text", 0, "data must be bytes, got str"),
        (b"x", "1", "channel must be an int"),
        (b"x", 2**31, "32-bit"),
    ],
)
def test_bad_emits_are_errors_naming_the_step_and_record(data: Any, channel: Any, message: str) -> None:
    class Bad(FSProcessorDriver):
        def process(self, ctx: Context, source_id: int, d: bytes) -> None:
            ctx.emit(data, channel)

    with pytest.raises(StepError, match=f"step 'FSProcessorDriver .*Bad'.*{message}"):
        run_processor_local([b"rec"], Bad)


def test_bad_records_and_arguments() -> None:
    with pytest.raises(ValueError, match="needs 'data'"):
        run_processor_local([{"value": b"x"}], Probe)
    with pytest.raises(TypeError, match="bytes or a mapping"):
        run_processor_local([42], Probe)
    with pytest.raises(ValueError, match="key_column 'user' is not a column of the records"):
        run_processor_local([b"x"], Probe, key_column="user")
    with pytest.raises(StepError, match="'data' must be bytes, got str"):
        run_processor_local([{"data": "text"}], SEED.CounterProcessor)
    with pytest.raises(StepError, match="key selector returned None"):
        run_processor_local([{"data": b"x", "key": "a"}, {"data": b"y", "key": None}], SEED.CounterProcessor)
    with pytest.raises(TypeError, match="FSProcessorDriver"):
        processor_factory(42)
    with pytest.raises(StepError, match="returned 'nope', not an FSProcessorDriver"):
        run_processor_local([b"x"], lambda: "nope")
    with pytest.raises(TypeError, match="config maps str to str"):
        run_processor_local([b"x"], Probe, config={"n": 1})  # type: ignore[dict-item]


def _keyed_step(factory: Any) -> OperatorNode:
    source = SourceNode("Records")
    return OperatorNode(
        "probe",
        [Edge(source, key_selector=lambda row: NO_KEY, key_codec=BytesCodec())],
        operator_factory=lambda: ProcessorOperator(
            processor_factory(factory), {"tag": "s"}, data_index=0, keyed_by_column=False
        ),
        keyed=True,
    )


def test_checkpoint_hook_and_state_across_a_key_group_snapshot() -> None:
    """What one Spark streaming key-group call does: records, checkpoint, snapshot; then a new
    instance restores the snapshot and continues."""
    node = _keyed_step(Probe)
    row = Row("data", "key")
    first = SubtaskRunner(node, 0, LocalConfig(), [1])
    for data in (b"a", b"b"):
        first.record(0, row(data, "k"), None)
    first.checkpoint(5)
    assert [v for _tag, v, _ts, wm in first.drain() if wm is None] == [
        (b"init:s", 9),
        (b"a:0:1", 0),
        (b"b:0:2", 0),
        (b"ck:5:2", 8),
    ]
    backend = first.runtime.backend
    kg = backend.key_encoder.key_group(b"")  # no key column: every record has the key b""
    blob = backend.snapshot_key_group(kg)

    second = SubtaskRunner(node, 0, LocalConfig(), [1])
    second.runtime.backend.restore_key_group(kg, blob)
    second.record(0, row(b"c", "k"), None)
    second.watermark(0, 0, 1000)
    second.checkpoint(6)
    assert [v for _tag, v, _ts, wm in second.drain() if wm is None] == [
        (b"init:s", 9),
        (b"c:0:3", 0),
        (b"wm:0:1000:3", 7),
        (b"ck:6:3", 8),
    ]


def test_operators_without_hooks_ignore_checkpoints_and_watermarks() -> None:
    node = OperatorNode(
        "plain",
        [Edge(SourceNode("Records"), key_selector=lambda v: v, key_codec=StringCodec())],
        operator_factory=lambda: _Echo(),
        keyed=True,
    )
    runner = SubtaskRunner(node, 0, LocalConfig(), [1])
    runner.record(0, "x", None)
    runner.watermark(0, 0, 5)
    runner.checkpoint(1)
    assert [v for _tag, v, _ts, wm in runner.drain() if wm is None] == ["x"]


class _Echo(Operator):
    """A runtime Operator with no hooks of its own."""

    def process(self, value: Any, runtime: OperatorRuntime) -> Iterable[Any]:
        return (value,)
