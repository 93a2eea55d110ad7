"""Codecs (built-in and user-written) and the non-keyed states, incl. the Context conveniences."""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Iterator
from typing import Any, assert_type

from fs_api import Context, FSProcessorDriver, MemoryKvStore
from fs_api_advanced import (
    BoolCodec,
    BytesCodec,
    Codec,
    FloatCodec,
    IntCodec,
    KeyedValueStateFactory,
    ListState,
    MapState,
    PriorityQueueState,
    StringCodec,
    ValueState,
    default_codec_for,
    infer_ordered_key_codec,
)
from fs_api_advanced.testing import LocalContext


@dataclasses.dataclass(frozen=True)
class Point:
    x: float
    y: float


class PointCodec(Codec[Point]):
    """A user codec: two doubles."""

    _FMT = struct.Struct(">dd")

    def encode(self, value: Point) -> bytes:
        return self._FMT.pack(value.x, value.y)

    def decode(self, data: bytes) -> Point:
        x, y = self._FMT.unpack(data)
        return Point(x, y)

    def encoded_size(self) -> int:
        return self._FMT.size


def codecs() -> None:
    assert_type(IntCodec().decode(IntCodec().encode(7)), int)
    assert_type(FloatCodec().decode(b"\x80" + bytes(7)), float)
    assert_type(BoolCodec().encode(True), bytes)
    assert_type(StringCodec().decode(b"x"), str)
    assert_type(BytesCodec().decode(b"x"), bytes)
    assert_type(default_codec_for(int), Codec[int])
    assert_type(default_codec_for(str), Codec[str])
    assert_type(default_codec_for(Point), Codec[Point])
    assert_type(infer_ordered_key_codec(float), Codec[float])
    codec: Codec[Point] = PointCodec()
    assert codec.decode(codec.encode(Point(1.0, 2.0))) == Point(1.0, 2.0)
    points = KeyedValueStateFactory(MemoryKvStore(), b"", PointCodec())
    assert_type(points, KeyedValueStateFactory[Point])
    where = points.new_keyed_value(b"robot", b"pos")
    where.update(Point(0.5, 0.25))
    assert_type(where.value(), tuple[Point | None, bool])


def plain_states() -> None:
    store = MemoryKvStore()
    value = ValueState(store, IntCodec())
    assert_type(value, ValueState[int])
    value.update(3)
    assert_type(value.value(), int | None)
    names = ListState(MemoryKvStore(), StringCodec())  # one non-keyed state per store
    names.add("a")
    assert_type(names.get(), list[str])
    scores = MapState(MemoryKvStore(), StringCodec(), FloatCodec())
    assert_type(scores, MapState[str, float])
    scores.put("a", 1.0)
    assert_type(scores.get("a"), float | None)
    assert_type(scores.all(), Iterator[tuple[str, float]])
    queue = PriorityQueueState(MemoryKvStore(), IntCodec())
    queue.add(4)
    assert_type(queue.poll(), tuple[int | None, bool])


class Dedup(FSProcessorDriver):
    """Emits each distinct record once, using the advanced Context's conveniences."""

    def init(self, ctx: Context, config: dict[str, str]) -> None:
        assert isinstance(ctx, LocalContext)
        self.seen = ctx.getOrCreateMapStateAutoKeyCodec("seen", BoolCodec())
        assert_type(self.seen, MapState[bytes, Any])
        self.total = ctx.getOrCreateValueStateAutoCodec("total")
        assert_type(self.total, ValueState[Any])
        self.queue = ctx.getOrCreatePriorityQueueStateAutoCodec("q")
        assert_type(self.queue, PriorityQueueState[int])

    def process(self, ctx: Context, source_id: int, data: bytes) -> None:
        if self.seen.get(data) is None:
            self.seen.put(data, True)
            self.total.update((self.total.value() or 0) + 1)
            ctx.emit(data)


def main() -> None:
    codecs()
    plain_states()
    ctx = LocalContext()
    proc = Dedup()
    proc.init(ctx, {})
    for data in (b"a", b"b", b"a"):
        proc.process(ctx, 0, data)
    assert ctx.emitted == [(b"a", 0), (b"b", 0)]
    assert proc.total.value() == 2


if __name__ == "__main__":
    main()
