"""W1 as a Bytewax user writes it, once, for real Bytewax and for fs-compat's mirror.

The flow: events ``(key, amount)`` -> ``op.map`` to ``(str(key), amount)`` -> ``op.stateful_map``
keeping ``(count, sum)`` per key -> ``op.map`` to the row ``(key, count, sum)``. Every function
here takes the package (``bytewax`` or ``fs_compat.bytewax``, see :func:`load`), so both run the
very same code; this module imports neither itself, and nothing else of fs-compat, so that the
interpreter of a scratch venv with Bytewax 0.21.1 can run it as a script::

    /path/to/bytewax-venv/bin/python bench/w1_bytewax.py --events 4000000 --repeat 3

prints one JSON object: the rate of each timed ``run_main`` (events/s, measured here around
``run_main`` only: building the events and the flow, and the interpreter's start, are not timed).
``--outputs N`` prints the output items of the first N events instead (a ``TestingSink``'s list),
for checking one package against the other. ``bench/w1.py --bytewax-python`` runs it.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.metadata
import json
import platform
import time
import types
from typing import Any

PACKAGES = ("bytewax", "fs_compat.bytewax")


def load(package: str) -> types.SimpleNamespace:
    """The names the flow uses, from ``package`` (``bytewax`` or ``fs_compat.bytewax``)."""
    if package not in PACKAGES:
        raise ValueError(f"package must be one of {PACKAGES}; got {package!r}")
    dataflow = importlib.import_module(f"{package}.dataflow")
    outputs = importlib.import_module(f"{package}.outputs")
    testing = importlib.import_module(f"{package}.testing")
    return types.SimpleNamespace(
        op=importlib.import_module(f"{package}.operators"),
        Dataflow=dataflow.Dataflow,
        DynamicSink=outputs.DynamicSink,
        StatelessSinkPartition=outputs.StatelessSinkPartition,
        TestingSource=testing.TestingSource,
        TestingSink=testing.TestingSink,
        run_main=testing.run_main,
    )


# The user's flow. ------------------------------------------------------------------------------


def key_value(e: Any) -> tuple[str, int]:
    """The first ``map``: a keyed stream's ``(str key, value)``."""
    return (str(e[0]), e[1])


def count_sum(state: tuple[int, int] | None, amount: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The ``stateful_map`` mapper: ``(state, value) -> (state, emit)``."""
    count, total = state or (0, 0)
    state = (count + 1, total + amount)
    return state, state


def as_row(kv: tuple[str, tuple[int, int]]) -> tuple[int, int, int]:
    """The last ``map``: ``(key, (count, sum))`` as the output row."""
    return (int(kv[0]), kv[1][0], kv[1][1])


def w1_steps(bw: types.SimpleNamespace, flow: Any, source: Any) -> Any:
    """The flow's steps from ``source`` to its output stream of ``(key, count, sum)``."""
    op = bw.op
    events = op.input("events", flow, source)
    keyed = op.map("key", events, key_value)
    counted = op.stateful_map("count_sum", keyed, count_sum)
    return op.map("row", counted, as_row)


def counting_sink(bw: types.SimpleNamespace) -> Any:
    """A sink that counts the items it is given (``.partition.count``)."""

    class CountingPartition(bw.StatelessSinkPartition):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            self.count = 0

        def write_batch(self, items: list[Any]) -> None:
            self.count += len(items)

    class CountingSink(bw.DynamicSink):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            self.partition = CountingPartition()

        def build(self, step_id: str, worker_index: int, worker_count: int) -> Any:
            return self.partition

    return CountingSink()


def events(n: int, keys: int) -> list[tuple[int, int]]:
    """W1's events: ``(i % keys, i)``, the values of ``bench/w1.py``'s DataFrame."""
    return [(i % keys, i) for i in range(n)]


def timed_run(bw: types.SimpleNamespace, items: list[Any], batch_size: int) -> float:
    """Seconds of one ``run_main`` of the flow over ``items`` (a ``TestingSource`` of
    ``batch_size``) into a counting sink; only ``run_main`` is timed."""
    flow = bw.Dataflow("w1")
    sink = counting_sink(bw)
    bw.op.output("out", w1_steps(bw, flow, bw.TestingSource(items, batch_size)), sink)
    gc.collect()
    start = time.perf_counter()
    bw.run_main(flow)
    seconds = time.perf_counter() - start
    if sink.partition.count != len(items):
        raise SystemExit(f"W1 ({bw.op.__name__}): {sink.partition.count} outputs for {len(items)} events")
    return seconds


def outputs(bw: types.SimpleNamespace, items: list[Any], batch_size: int, **run_options: Any) -> list[Any]:
    """The flow's output items over ``items``, in the order its ``TestingSink`` got them;
    ``run_options`` go to ``run_main`` (fs-compat's: ``_target="spark"``)."""
    flow = bw.Dataflow("w1")
    got: list[Any] = []
    bw.op.output("out", w1_steps(bw, flow, bw.TestingSource(items, batch_size)), bw.TestingSink(got))
    bw.run_main(flow, **run_options)
    return got


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--package", choices=PACKAGES, default="bytewax", help="whose Bytewax (default bytewax)"
    )
    parser.add_argument("--events", type=int, default=4_000_000, help="events per run (default 4,000,000)")
    parser.add_argument("--keys", type=int, default=10_000, help="distinct keys (default 10,000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (default 3)")
    parser.add_argument("--warmup-events", type=int, default=400_000, help="events of an untimed first run")
    parser.add_argument(
        "--batch-size", type=int, default=1000, help="TestingSource batch_size (default 1000)"
    )
    parser.add_argument(
        "--outputs", type=int, metavar="N", help="print the outputs of the first N events instead"
    )
    args = parser.parse_args()
    bw = load(args.package)
    version = importlib.metadata.version("bytewax") if args.package == "bytewax" else None
    if args.outputs is not None:
        print(json.dumps(outputs(bw, events(args.outputs, args.keys), args.batch_size)))
        return
    items = events(args.events, args.keys)
    timed_run(bw, items[: args.warmup_events], args.batch_size)
    rates = [args.events / timed_run(bw, items, args.batch_size) for _ in range(args.repeat)]
    info = {"package": args.package, "version": version, "python": platform.python_version()}
    print(json.dumps({"rates": rates, **info}))


if __name__ == "__main__":
    main()
