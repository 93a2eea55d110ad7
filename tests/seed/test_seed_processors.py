"""The seed's FunctionStream examples, run against the in-process Context."""

from __future__ import annotations

import pytest

from fs_api import ComplexKey, Context, FSProcessorDriver, KvStore, MemoryKvStore, SqliteKvStore
from fs_api.testing import LocalContext
from fs_api_advanced import IntCodec, KeyedValueState, KeyedValueStateFactory, PickleCodec, ValueState
from fs_compat.demo import keyed_counter as demo


class CounterProcessor(FSProcessorDriver):
    """The seed's non-keyed counter, verbatim but for annotations."""

    def process(self, ctx: Context, source_id: int, data: bytes) -> None:
        state = ValueState.from_context_auto_codec(ctx, "my-store")
        cur = state.value()
        if cur is None:
            cur = 0
        state.update(cur + 1)
        ctx.emit(str(cur + 1).encode(), 0)


class KeyedCounterProcessor(FSProcessorDriver):
    """The seed's keyed counter, verbatim but for annotations."""

    def init(self, ctx: Context, config: dict[str, str]) -> None:
        self._factory = KeyedValueStateFactory.from_context_auto_codec(
            ctx, "counters", b"by_key", value_type=int
        )

    def process(self, ctx: Context, source_id: int, data: bytes) -> None:
        primary_key = data[:8]
        state = KeyedValueState(self._factory, primary_key, "count".encode("utf-8"))  # noqa: UP012 - the seed verbatim
        cur, found = state.value()
        if not found or cur is None:
            cur = 0
        state.update(cur + 1)
        ctx.emit(str(cur + 1).encode(), 0)


def test_counter_processor_counts_every_record() -> None:
    ctx = LocalContext()
    proc = CounterProcessor()
    for data in (b"a", b"b", b"c", b"a"):
        proc.process(ctx, 0, data)
    assert ctx.emitted == [(b"1", 0), (b"2", 0), (b"3", 0), (b"4", 0)]


def test_keyed_counter_processor_counts_per_key() -> None:
    ctx = LocalContext()
    proc = KeyedCounterProcessor()
    proc.init(ctx, {})
    events = [b"key-0001x", b"key-0002y", b"key-0001z", b"key-0001", b"key-0002"]
    for data in events:
        proc.process(ctx, 0, data)
    proc.close(ctx)
    assert [d for d, _ in ctx.emitted] == [b"1", b"1", b"2", b"3", b"2"]
    assert {c for _, c in ctx.emitted} == {0}


def test_keyed_counter_state_is_isolated_per_key_and_store() -> None:
    ctx = LocalContext()
    proc = KeyedCounterProcessor()
    proc.init(ctx, {})
    proc.process(ctx, 0, b"aaaaaaaa")
    other = KeyedValueStateFactory.from_context_auto_codec(ctx, "counters", b"by_key", int)
    assert other.new_keyed_value(b"aaaaaaaa", b"count").value() == (1, True)
    assert other.new_keyed_value(b"bbbbbbbb", b"count").value() == (None, False)
    elsewhere = KeyedValueStateFactory.from_context_auto_codec(ctx, "other-store", b"by_key", int)
    assert elsewhere.new_keyed_value(b"aaaaaaaa", b"count").value() == (None, False)


def test_counter_state_lives_in_the_store_not_the_processor() -> None:
    ctx = LocalContext()
    for data in (b"x", b"y", b"z"):
        CounterProcessor().process(ctx, 0, data)  # a new instance per record
    assert ctx.emitted == [(b"1", 0), (b"2", 0), (b"3", 0)]
    assert ValueState.from_context_auto_codec(ctx, "my-store").value() == 3
    raw = ctx.getOrCreateKVStore("my-store").get(ComplexKey(b"", b"", b"", b""))
    assert raw is not None and PickleCodec().decode(raw) == 3


def test_keyed_counter_physical_layout() -> None:
    ctx = LocalContext()
    proc = KeyedCounterProcessor()
    proc.init(ctx, {})
    for data in (b"abcdefgh-1", b"abcdefgh-2", b"zz"):
        proc.process(ctx, 0, data)
    assert ctx.emitted == [(b"1", 0), (b"2", 0), (b"1", 0)]
    store = ctx.getOrCreateKVStore("counters")
    assert store.get(ComplexKey(b"by_key", b"abcdefgh", b"count", b"")) == IntCodec().encode(2)
    assert store.get(ComplexKey(b"by_key", b"zz", b"count", b"")) == IntCodec().encode(1)


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_seed_processors_give_the_same_output_on_every_backend(backend: str) -> None:
    def make_store(_name: str) -> KvStore:
        return MemoryKvStore() if backend == "memory" else SqliteKvStore()

    ctx = LocalContext(store_factory=make_store)
    counter, keyed = CounterProcessor(), KeyedCounterProcessor()
    keyed.init(ctx, {})
    for data in (b"key-0001", b"key-0002", b"key-0001", b"key-0001"):
        counter.process(ctx, 0, data)
        keyed.process(ctx, 0, data)
    ctx.close()
    assert [d for d, _ in ctx.emitted] == [b"1", b"1", b"2", b"1", b"3", b"2", b"4", b"3"]


def test_demo_counts_bundled_events() -> None:
    events = demo.bundled_events()
    result = demo.run(events)
    assert len(result) == len(events) == 10
    last: dict[bytes, int] = {}
    for key, count in result:
        assert int(count) == last.get(key, 0) + 1
        last[key] = int(count)
    assert last == {b"user-001": 4, b"user-002": 3, b"user-003": 3}


def test_demo_main_prints_counts(capsys: pytest.CaptureFixture[str]) -> None:
    demo.main()
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "user-001  count=1"
    assert out[5] == "user-001  count=3"
    assert out[-1] == "10 events processed, 3 keys"
