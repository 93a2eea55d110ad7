"""``bench/w1_stream.py``'s job, its Python passes replayed in this process without Spark: an A/B
measure of fs-compat's own work per streaming micro-batch, for a machine too noisy for
``w1_stream.py`` (whose micro-batches spread 30 % and more between runs of one tree).

A local Spark session builds the streaming DataFrame of each job and the passes it plans are
caught as they are planned (the functions ``mapInArrow`` is given, the processors
``transformWithStateInPandas`` is given); nothing is started. The replay then runs every
micro-batch (200,000 events, ``key = i % 10,000``, Arrow batches of 10,000 as Spark reads them)
through the passes in order, in one process: each ``mapInArrow`` function over its input's Arrow
batches, then, per key group, Arrow -> pandas as PySpark's worker converts a group, the processor's
``handleInputRows`` (its ``ValueState`` and ``MapState`` in memory, for the group's key), and the
frames it yields -> Arrow. It times each part and prints, per job, ms per micro-batch (the median
over the batches after the first), split into:

- ``map``: the ``mapInArrow`` passes (fs-compat's source pre-pass; the floor's chunk pre-pass);
- ``to pandas`` / ``to arrow``: what PySpark's worker does around a call, with PySpark 4.3's own
  conversion code as its ``transformWithStateInPandas`` worker calls it (Arrow batch -> pandas,
  rows by ``itertuples``, a frame per group; ``PandasToArrowConversion`` of each frame yielded);
- ``calls``: ``handleInputRows`` (for fs-compat: its runtime, the user's functions, the state
  rows, the output frames);

for ``fs-compat`` (one keyed step), ``fs-chained`` (two) and the ``tws`` floor (the chunk
pre-pass and a bare ``transformWithStateInPandas`` processor, no user functions). No shuffle, no
JVM, no state server round trips: what is left is each job's Python, on one core.

``--callgrind`` counts instead the machine instructions of one steady micro-batch per event
(valgrind's callgrind, the replay of three micro-batches minus that of two, in child processes
that load the passes this one caught): a measure that does not move with the machine's load.

    .venv/bin/python bench/stream_passes.py                    # 4 micro-batches, every job
    .venv/bin/python bench/stream_passes.py --only fs-compat --profile 15
    .venv/bin/python bench/stream_passes.py --callgrind --events 50000   # a few minutes a job
    .venv/bin/python bench/stream_passes.py --only fs-compat --cold

The replay's key-group calls find their key group in the worker cache (``_WorkerCache``) after
the first micro-batch: one process makes every call. On Spark two Python workers take the
micro-batch's two tasks in whatever order Spark hands out its idle workers, and a worker that
gets the other partition than last time finds the groups it holds stale (the other worker wrote
them since): measured in the thirty-second session, 2 of 3 calls missed (384 hits, 768 misses
over nine micro-batches). ``--cold`` replays every call as a miss: each restores its group from
the state row (a new operator instance, ``open()``, the row's entries), as those calls do.

For a before/after, run it on each tree (``PYTHONPATH=/path/to/other/checkout:bench``, from
outside the repository).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pickle
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

import w1_stream
from pass_instructions import callgrind

JOBS = ("fs-compat", "fs-chained", "tws")


class _Value:
    """A ``ValueState`` in memory: one value per grouping key (what fs-compat's processor calls)."""

    def __init__(self, owner: _Handle) -> None:
        self.owner = owner
        self.held: dict[Any, Any] = {}

    def get(self) -> Any:
        return self.held.get(self.owner.key)

    def update(self, value: Any) -> None:
        self.held[self.owner.key] = tuple(value)

    def clear(self) -> None:
        self.held.pop(self.owner.key, None)


class _Map:
    """A ``MapState`` in memory: one dict per grouping key (what fs-compat's processor calls)."""

    def __init__(self, owner: _Handle) -> None:
        self.owner = owner
        self.held: dict[Any, dict[Any, Any]] = {}

    def _mine(self) -> dict[Any, Any]:
        return self.held.setdefault(self.owner.key, {})

    def getValue(self, key: Any) -> Any:  # noqa: N802 - Spark's name
        return self._mine().get(tuple(key))

    def updateValue(self, key: Any, value: Any) -> None:  # noqa: N802
        self._mine()[tuple(key)] = tuple(value)

    def iterator(self) -> Iterator[tuple[Any, Any]]:
        return iter(list(self._mine().items()))

    def removeKey(self, key: Any) -> None:  # noqa: N802
        self._mine().pop(tuple(key), None)

    def clear(self) -> None:
        self.held.pop(self.owner.key, None)


class _Handle:
    """A ``StatefulProcessorHandle`` in memory; ``key`` is the grouping key of the current call."""

    def __init__(self) -> None:
        self.key: Any = None

    def getValueState(self, name: str, schema: Any, *args: Any) -> _Value:  # noqa: N802
        return _Value(self)

    def getMapState(self, name: str, key_schema: Any, value_schema: Any, *args: Any) -> _Map:  # noqa: N802
        return _Map(self)


def capture(build: Callable[[], Any]) -> list[tuple[str, Any, Any]]:
    """The passes ``build()`` plans, in order: ``("map", fn, None)`` for a ``mapInArrow`` and
    ``("tws", processor, output schema)`` for a ``transformWithStateInPandas``."""
    from pyspark.sql.classic.dataframe import DataFrame
    from pyspark.sql.pandas.group_ops import PandasGroupedOpsMixin

    passes: list[tuple[str, Any, Any]] = []
    plain_map = DataFrame.mapInArrow
    plain_tws = PandasGroupedOpsMixin.transformWithStateInPandas

    def mapped(self: Any, fn: Any, schema: Any, *args: Any, **kwargs: Any) -> Any:
        passes.append(("map", fn, None))
        return plain_map(self, fn, schema, *args, **kwargs)

    def stateful(self: Any, processor: Any, *args: Any, **kwargs: Any) -> Any:
        passes.append(("tws", processor, kwargs.get("outputStructType", args[0] if args else None)))
        return plain_tws(self, processor, *args, **kwargs)

    DataFrame.mapInArrow = mapped  # type: ignore[method-assign]
    PandasGroupedOpsMixin.transformWithStateInPandas = stateful  # type: ignore[method-assign]
    try:
        build()
    finally:
        DataFrame.mapInArrow = plain_map  # type: ignore[method-assign]
        PandasGroupedOpsMixin.transformWithStateInPandas = plain_tws  # type: ignore[method-assign]
    kinds = [kind for kind, _fn, _schema in passes]
    if kinds[::2] != ["map"] * len(kinds[::2]) or kinds[1::2] != ["tws"] * len(kinds[1::2]):
        raise AssertionError(f"a chain of mapInArrow, transformWithStateInPandas expected: {kinds}")
    return passes


def _parsed(schema: Any) -> Any:
    """A ``StructType`` of ``schema`` (given as one, or as a DDL string)."""
    from pyspark.sql.types import _parse_datatype_string

    return _parse_datatype_string(schema) if isinstance(schema, str) else schema


def micro_batch(b: int, events: int) -> list[Any]:
    """Micro-batch ``b``'s events (``events`` of them) as Spark's parquet reader hands them to a
    Python pass."""
    import pyarrow as pa

    start = b * events
    ids = range(start, start + events)
    table = pa.table(
        {"key": pa.array([str(i % w1_stream.KEYS) for i in ids]), "value": pa.array(ids, pa.int64())}
    )
    return table.to_batches(max_chunksize=10_000)


class Replay:
    """One job's passes over micro-batches, timed by part (see the module docstring)."""

    def __init__(self, passes: list[tuple[str, Any, Any]]) -> None:
        import pyarrow as pa
        from pyspark.sql.types import StructField, StructType

        self.passes = passes
        self.handles = []
        for kind, processor, _schema in passes:
            if kind == "tws":
                handle = _Handle()
                processor.init(handle)
                self.handles.append(handle)
        #: Each ``tws`` pass's output as PySpark's worker wraps it (one struct column).
        self.schemas = [
            StructType([StructField("_0", _parsed(schema))]) if kind == "tws" else None
            for kind, _p, schema in passes
        ]
        self.pa = pa

    def run(self, batches: list[Any], now: int) -> dict[str, float]:
        import pyarrow.compute as pc

        pa = self.pa
        took = {"map": 0.0, "to pandas": 0.0, "calls": 0.0, "to arrow": 0.0}
        handles = iter(self.handles)
        for (kind, fn, _schema), schema in zip(self.passes, self.schemas, strict=True):
            started = time.perf_counter()
            if kind == "map":
                batches = list(fn(iter(batches)))
                took["map"] += time.perf_counter() - started
                continue
            handle = next(handles)
            table = pa.Table.from_batches(batches)
            table = table.append_column("now", pa.array([now] * table.num_rows, pa.int64()))
            table = table.take(pc.sort_indices(table.column("kg")))  # Spark sorts by the group
            started = time.perf_counter()
            groups = _pandas_groups(table, table.schema.get_field_index("kg"))
            took["to pandas"] += time.perf_counter() - started
            out: list[Any] = []
            for kg, pdf in groups:
                key = (grouped(kg) if type(fn).__name__ == "_KeyGroupProcessor" else kg,)
                handle.key = key
                started = time.perf_counter()
                frames = list(fn.handleInputRows(key, iter([pdf]), None))
                took["calls"] += time.perf_counter() - started
                started = time.perf_counter()
                out += [_to_arrow(f, schema) for f in frames]
                took["to arrow"] += time.perf_counter() - started
            batches = [b for b in out if b.num_rows]
        return {part: 1000 * s for part, s in took.items()}


def _pandas_groups(table: Any, key_index: int) -> list[tuple[int, Any]]:
    """The frame of each group of ``table`` (sorted by the group's column, at ``key_index``), made
    as PySpark 4.3's ``transformWithStateInPandas`` worker makes them (``worker.py``): each Arrow
    batch (at most 10,000 rows, ``maxRecordsPerBatch``) to pandas by Spark's converter, its rows
    by ``itertuples``, a group's rows into a ``DataFrame``."""
    import itertools

    import pandas as pd
    from pyspark.sql.conversion import ArrowBatchTransformer

    def rows() -> Iterator[Any]:
        for batch in table.to_batches(max_chunksize=10_000):
            series = ArrowBatchTransformer.to_pandas(batch, timezone="UTC")
            yield from pd.concat(series, axis=1).itertuples(index=False)

    every = list(range(table.num_columns))
    return [
        (int(kg), pd.DataFrame(list(group)).iloc[:, every])
        for kg, group in itertools.groupby(rows(), key=lambda row: row[key_index])
    ]


def _to_arrow(frame: Any, schema: Any) -> Any:
    """A frame a call yields as Arrow, as PySpark 4.3's worker converts it (``schema``: the
    processor's output, wrapped as the worker wraps it; Spark's default settings), then
    unwrapped (as the JVM reads it: the next pass's input)."""
    import pyarrow as pa
    from pyspark.sql.conversion import PandasToArrowConversion

    wrapped = PandasToArrowConversion.convert(
        [frame], schema, timezone="UTC", safecheck=False, arrow_cast=True, assign_cols_by_name=True
    )
    return pa.RecordBatch.from_struct_array(wrapped.column(0))


def grouped(group: int) -> int:
    """The grouping key Spark hands the key-group pass for ``group`` (the ``kg`` the passes
    write): fs-compat's ``grouping_key`` (the group itself in trees before it; the floors
    group by ``kg`` itself)."""
    from fs_compat.spark import _routing

    to_key = getattr(_routing, "grouping_key", None)
    return group if to_key is None else to_key(group)


def replay(
    passes: list[tuple[str, Any, Any]], batches: int, events: int, profile: int = 0
) -> list[dict[str, float]]:
    """Run ``batches`` micro-batches through ``passes``: each one's ms by part."""
    job = Replay(passes)
    rounds = []
    for b in range(batches):
        profiler = cProfile.Profile() if profile and b == batches - 1 else None
        if profiler is not None:
            profiler.enable()
        rounds.append(job.run(micro_batch(b, events), now=1_000 * (b + 1)))
        if profiler is not None:
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(profile)
    return rounds


def instructions(path: str, batches: int, events: int) -> int:
    """The instructions callgrind counts for a child's replay of the passes in ``path``."""
    return callgrind([__file__, "--replay", path, "--batches", str(batches), "--events", str(events)])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batches", type=int, default=4, help="micro-batches (default 4)")
    parser.add_argument("--events", type=int, default=w1_stream.PER_BATCH, help="events a micro-batch")
    parser.add_argument("--only", default=",".join(JOBS), help=f"jobs to replay ({','.join(JOBS)})")
    parser.add_argument(
        "--profile", type=int, default=0, help="cProfile the last micro-batch, print this many lines"
    )
    parser.add_argument("--callgrind", action="store_true", help="count instructions instead")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="every key-group call misses the worker cache (as on Spark, where two Python workers "
        "swap partitions between micro-batches)",
    )
    parser.add_argument("--replay", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.replay:  # a child of --callgrind
        with open(args.replay, "rb") as f:
            replay(pickle.load(f), args.batches, args.events)
        return
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = w1_stream.session()
    if args.cold:  # no group fits a cache of 0 bytes: each call restores from its state row
        spark.conf.set("spark.fs_compat.streaming.workerCacheBytes", "0")
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "no-input")  # never read
    builders = {
        "fs-compat": lambda: w1_stream.fs_compat_frame(spark, folder),
        "fs-chained": lambda: w1_stream.fs_compat_frame(spark, folder, chained=True),
        "tws": lambda: w1_stream.floor_frame(spark, folder, "tws"),
    }
    jobs = {job: capture(builders[job]) for job in args.only.split(",")}
    if args.callgrind:
        import cloudpickle

        for job, passes in jobs.items():
            with tempfile.TemporaryDirectory() as work:
                path = os.path.join(work, "passes.pkl")
                with open(path, "wb") as f:
                    cloudpickle.dump(passes, f)
                two, three = instructions(path, 2, args.events), instructions(path, 3, args.events)
            print(
                f"{job:11s} {(three - two) / args.events:8,.0f} instructions per event "
                f"(a micro-batch of {args.events:,}; callgrind, three micro-batches minus two)",
                flush=True,
            )
        spark.stop()
        return
    spark.stop()
    results: dict[str, float] = {}
    for job, passes in jobs.items():
        rounds = replay(passes, args.batches, args.events, args.profile)
        steady = rounds[1:] or rounds
        parts = {part: statistics.median(r[part] for r in steady) for part in steady[0]}
        total = statistics.median(sum(r.values()) for r in steady)
        results[job] = total
        shown = ", ".join(f"{part} {ms:.0f}" for part, ms in parts.items())
        every = [round(sum(r.values())) for r in rounds]
        print(f"{job:11s} ms/batch median {total:7.0f}  ({shown}; all {every})")
    if "tws" in results:
        for job, ms in results.items():
            if job != "tws":
                print(f"ratio {job} / tws floor: {ms / results['tws']:.2f}x")


if __name__ == "__main__":
    main()
