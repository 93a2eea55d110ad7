"""Keyed state operations per second, on both KvStore backends, against a plain dict.

Each operation is what a processor does per record: take the view of the record's primary key
(``factory.new_keyed_*(key, namespace)``) and touch it. Primary keys cycle over ``--keys``
distinct values. The plain-dict reference does the same work with Python objects and no
encoding, measured in the same run, and every backend is reported as a multiple of it.

    .venv/bin/python bench/state_ops.py            # the full run (about 30-40 s)
    .venv/bin/python bench/state_ops.py --ops 20000 --repeat 1   # a quick look
"""

from __future__ import annotations

import argparse
import datetime
import gc
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from fs_api import KvStore, MemoryKvStore, SqliteKvStore
from fs_api_advanced import (
    IntCodec,
    KeyedListStateFactory,
    KeyedMapStateFactory,
    KeyedValueStateFactory,
    StringCodec,
)

#: A benchmark body: performs ``n`` operations starting at operation number ``start``.
Body = Callable[[int, int], None]

MAP_KEYS = [f"field-{i}" for i in range(16)]


def primary_keys(n: int) -> list[bytes]:
    return [f"user-{i:08d}".encode() for i in range(n)]


# The four operations over fs_api_advanced keyed state.
def state_value_update(store: KvStore, keys: list[bytes]) -> Body:
    factory = KeyedValueStateFactory(store, b"", IntCodec())
    nkeys = len(keys)

    def body(start: int, n: int) -> None:
        new = factory.new_keyed_value
        for i in range(start, start + n):
            state = new(keys[i % nkeys], b"count")
            cur, _found = state.value()
            state.update((cur or 0) + 1)

    return body


def state_list_add(store: KvStore, keys: list[bytes]) -> Body:
    factory = KeyedListStateFactory(store, b"", StringCodec())
    nkeys = len(keys)

    def body(start: int, n: int) -> None:
        new = factory.new_keyed_list
        for i in range(start, start + n):
            new(keys[i % nkeys], b"pages").add("page")

    return body


def _map_factory(store: KvStore) -> KeyedMapStateFactory[str, int]:
    return KeyedMapStateFactory(store, b"", StringCodec(), IntCodec())


def state_map_put(store: KvStore, keys: list[bytes]) -> Body:
    factory = _map_factory(store)
    nkeys = len(keys)

    def body(start: int, n: int) -> None:
        new = factory.new_keyed_map
        for i in range(start, start + n):
            new(keys[i % nkeys], b"fields").put(MAP_KEYS[(i // nkeys) % 16], i)

    return body


def state_map_get(store: KvStore, keys: list[bytes]) -> Body:
    factory = _map_factory(store)
    nkeys = len(keys)
    put = state_map_put(store, keys)
    put(0, nkeys * len(MAP_KEYS))  # every (key, field) present

    def body(start: int, n: int) -> None:
        new = factory.new_keyed_map
        for i in range(start, start + n):
            _value, found = new(keys[i % nkeys], b"fields").get(MAP_KEYS[(i // nkeys) % 16])
            if not found:
                raise AssertionError("map entry missing")

    return body


# The same four operations on plain dicts (the reference).
def dict_value_update(d: dict[Any, Any], keys: list[bytes]) -> Body:
    nkeys = len(keys)

    def body(start: int, n: int) -> None:
        for i in range(start, start + n):
            k = (keys[i % nkeys], b"count")
            cur = d.get(k)
            d[k] = (cur or 0) + 1

    return body


def dict_list_add(d: dict[Any, Any], keys: list[bytes]) -> Body:
    nkeys = len(keys)

    def body(start: int, n: int) -> None:
        for i in range(start, start + n):
            k = (keys[i % nkeys], b"pages")
            items = d.get(k)
            if items is None:
                items = d[k] = []
            items.append("page")

    return body


def dict_map_put(d: dict[Any, Any], keys: list[bytes]) -> Body:
    nkeys = len(keys)

    def body(start: int, n: int) -> None:
        for i in range(start, start + n):
            k = (keys[i % nkeys], b"fields")
            m = d.get(k)
            if m is None:
                m = d[k] = {}
            m[MAP_KEYS[(i // nkeys) % 16]] = i

    return body


def dict_map_get(d: dict[Any, Any], keys: list[bytes]) -> Body:
    nkeys = len(keys)
    dict_map_put(d, keys)(0, nkeys * len(MAP_KEYS))

    def body(start: int, n: int) -> None:
        for i in range(start, start + n):
            m = d.get((keys[i % nkeys], b"fields"))
            if m is None or MAP_KEYS[(i // nkeys) % 16] not in m:
                raise AssertionError("map entry missing")

    return body


OPERATIONS: list[
    tuple[str, Callable[[KvStore, list[bytes]], Body], Callable[[dict[Any, Any], list[bytes]], Body]]
] = [
    ("ValueState value+update", state_value_update, dict_value_update),
    ("ListState add", state_list_add, dict_list_add),
    ("MapState put", state_map_put, dict_map_put),
    ("MapState get", state_map_get, dict_map_get),
]


def measure(body: Body, ops: int, repeat: int, warmup: int) -> float:
    """Median ops/s of ``repeat`` timed runs of ``ops`` operations, after ``warmup`` untimed ones."""
    body(0, warmup)
    rates = []
    start = warmup
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        body(start, ops)
        elapsed = time.perf_counter() - t0
        rates.append(ops / elapsed)
        start += ops
    return statistics.median(rates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--keys", type=int, default=10_000, help="distinct primary keys (default 10000)")
    parser.add_argument("--ops", type=int, default=100_000, help="operations per timed run (default 100000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the median is shown (default 3)")
    args = parser.parse_args(argv)
    keys = primary_keys(args.keys)
    warmup = args.keys  # one full cycle: every primary key has state before timing starts

    print(
        f"state_ops: {datetime.date.today()}  Python {platform.python_version()}  "
        f"{platform.system()} {platform.machine()}  {os.cpu_count()} CPUs"
    )
    print(f"{args.keys} primary keys cycling, {args.ops} ops per run, median of {args.repeat} runs\n")
    header = f"{'operation':<26}{'backend':<10}{'ops/s':>12}{'us/op':>9}{'x dict':>9}"
    print(header)
    print("-" * len(header))
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fs-bench-") as tmp:
        for index, (name, state_bench, dict_bench) in enumerate(OPERATIONS):
            reference = measure(dict_bench({}, keys), args.ops, args.repeat, warmup)
            rows = [("dict", reference)]
            memory = MemoryKvStore()
            rows.append(("memory", measure(state_bench(memory, keys), args.ops, args.repeat, warmup)))
            del memory
            sqlite = SqliteKvStore(os.path.join(tmp, f"state-{index}.sqlite"))
            try:
                rows.append(("sqlite", measure(state_bench(sqlite, keys), args.ops, args.repeat, warmup)))
            finally:
                sqlite.close()
            for backend, rate in rows:
                print(f"{name:<26}{backend:<10}{rate:>12,.0f}{1e6 / rate:>9.2f}{reference / rate:>8.1f}x")
            sys.stdout.flush()
    total = time.perf_counter() - began
    print(f"\n'x dict': how many times slower than the plain dict.  Total {total:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
