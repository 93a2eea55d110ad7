"""A keyed counter processor on KeyedValueStateFactory[int], as a user would write it."""

from __future__ import annotations

from typing import assert_type

from fs_api import Context, FSProcessorDriver, MemoryKvStore
from fs_api.testing import LocalContext
from fs_api_advanced import (
    IntCodec,
    KeyedValueState,
    KeyedValueStateFactory,
    TtlConfig,
    TtlUpdate,
)


class KeyedCounter(FSProcessorDriver):
    """Counts records per 8-byte key and emits the running count."""

    def init(self, ctx: Context, config: dict[str, str]) -> None:
        self._factory = KeyedValueStateFactory.from_context_auto_codec(ctx, "counters", b"by_key", int)
        assert_type(self._factory, KeyedValueStateFactory[int])

    def process(self, ctx: Context, source_id: int, data: bytes) -> None:
        state = self._factory.new_keyed_value(data[:8], b"count")
        assert_type(state, KeyedValueState[int])
        cur, found = state.value()
        assert_type(cur, int | None)
        assert_type(found, bool)
        nxt = (cur or 0) + 1
        state.update(nxt)
        ctx.emit(str(nxt).encode())


def explicit_codec_and_ttl() -> int:
    """A factory built from a store and a codec, with TTL and an injected clock."""
    now = [0]
    factory = KeyedValueStateFactory(
        MemoryKvStore(),
        b"g",
        IntCodec(),
        ttl=TtlConfig(ttl_ms=1_000, update=TtlUpdate.ON_READ_AND_WRITE),
        clock=lambda: now[0],
    )
    assert_type(factory, KeyedValueStateFactory[int])
    assert_type(factory.new_keyed_value(b"k", b"ns"), KeyedValueState[int])
    state = KeyedValueState(factory, b"k", "ns")
    assert_type(state, KeyedValueState[int])
    assert_type(state.value(), tuple[int | None, bool])
    state.update(41)
    value, found = state.value()
    assert found and value is not None
    assert_type(value, int)
    now[0] = 5_000
    assert state.value() == (None, False)
    return value + 1


def main() -> None:
    ctx = LocalContext()
    proc = KeyedCounter()
    proc.init(ctx, ctx.getConfig())
    for data in (b"user-001a", b"user-002b", b"user-001c"):
        proc.process(ctx, 0, data)
    assert [d for d, _ in ctx.emitted] == [b"1", b"1", b"2"]
    assert explicit_codec_and_ttl() == 42


if __name__ == "__main__":
    main()
