"""Keyed list, map and priority-queue state: a sessionizer that remembers pages per user."""

from __future__ import annotations

from collections.abc import Iterator
from typing import assert_type

from fs_api import Context, FSProcessorDriver, KvStore, SqliteKvStore
from fs_api.testing import LocalContext
from fs_api_advanced import (
    FloatCodec,
    IntCodec,
    KeyedListState,
    KeyedListStateFactory,
    KeyedMapState,
    KeyedMapStateFactory,
    KeyedPriorityQueueState,
    KeyedPriorityQueueStateFactory,
    StringCodec,
)


class PageTracker(FSProcessorDriver):
    """Records ``user:page`` events: the pages in order, a count per page, pending deadlines."""

    def init(self, ctx: Context, config: dict[str, str]) -> None:
        self.pages = KeyedListStateFactory.from_context_auto_codec(ctx, "pages", b"", str)
        self.counts = KeyedMapStateFactory.from_context_auto_codec(ctx, "counts", b"", str, int)
        self.deadlines = KeyedPriorityQueueStateFactory.from_context_auto_codec(ctx, "deadlines", b"")
        assert_type(self.pages, KeyedListStateFactory[str])
        assert_type(self.counts, KeyedMapStateFactory[str, int])
        assert_type(self.deadlines, KeyedPriorityQueueStateFactory[int])

    def process(self, ctx: Context, source_id: int, data: bytes) -> None:
        user, _, page = data.decode().partition(":")
        pk = user.encode()
        seen = self.pages.new_keyed_list(pk, b"seen")
        assert_type(seen, KeyedListState[str])
        seen.add(page)
        counts = self.counts.new_keyed_map(pk, "per_page")
        assert_type(counts, KeyedMapState[str, int])
        n, found = counts.get(page)
        assert_type(n, int | None)
        counts.put(page, (n or 0) + 1 if found else 1)
        queue = self.deadlines.new_keyed_priority_queue(pk, b"timers")
        queue.add(len(seen.get()) * 100)
        ctx.emit(f"{user}:{len(seen.get())}".encode())


def typed_views(store: KvStore) -> None:
    """Factories built from explicit codecs keep their type arguments."""
    lists = KeyedListStateFactory(store, b"", StringCodec())
    assert_type(lists, KeyedListStateFactory[str])
    items = lists.new_keyed_list(b"k", b"items")
    items.add("a")
    items.add_all(["b", "c"])
    items.update(x for x in ("x", "y"))
    assert_type(items.get(), list[str])
    assert items.get() == ["x", "y"]

    prices = KeyedMapStateFactory(store, b"", StringCodec(), FloatCodec())
    assert_type(prices, KeyedMapStateFactory[str, float])
    m = prices.new_keyed_map(b"k", "prices")
    m.put("apple", 1.5)
    m.put("pear", 2)  # an int is a float to a type checker
    assert_type(m.get("apple"), tuple[float | None, bool])
    assert_type(m.all(), Iterator[tuple[str, float]])
    assert_type(m.keys(), Iterator[str])
    assert_type(m.values(), Iterator[float])
    assert_type(m.contains("apple"), bool)
    assert dict(m.all()) == {"apple": 1.5, "pear": 2.0}

    queue_factory = KeyedPriorityQueueStateFactory(store, b"", IntCodec())
    q = KeyedPriorityQueueState(queue_factory, b"k", b"q")
    assert_type(q, KeyedPriorityQueueState[int])
    for v in (3, 1, 2):
        q.add(v)
    assert_type(q.peek(), tuple[int | None, bool])
    smallest, found = q.poll()
    assert found and smallest == 1
    assert_type(list(q.all()), list[int])


def main() -> None:
    ctx = LocalContext()
    proc = PageTracker()
    proc.init(ctx, {})
    for data in (b"u1:home", b"u2:home", b"u1:cart", b"u1:home"):
        proc.process(ctx, 0, data)
    assert [d for d, _ in ctx.emitted] == [b"u1:1", b"u2:1", b"u1:2", b"u1:3"]
    counts = proc.counts.new_keyed_map(b"u1", "per_page")
    assert list(counts.all()) == [("cart", 1), ("home", 2)]

    store = SqliteKvStore()
    try:
        typed_views(store)
    finally:
        store.close()


if __name__ == "__main__":
    main()
