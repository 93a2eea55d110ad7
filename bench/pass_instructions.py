"""Machine instructions per event of one Spark pass of a ``bench/w1.py`` shape, counted by
callgrind: an A/B measure for a busy or noisy machine, where timings spread more than a change
to the record path moves them (on 2026-12-06 rounds of one shape spread up to 40 %).

The pass is the ``mapInArrow`` function fs-compat plans for the shape (``--pass route``: the
route pass before the shuffle; ``--pass run``: the run pass after it), with its input: the Arrow
batches Spark would hand it (the events for a route pass; the routed events of each subtask,
sorted as the plan sorts them, for a run pass). A child process with a local Spark session
captures both and pickles them; two more children replay the pass under ``valgrind
--tool=callgrind`` in plain Python, once and twice; the difference over the events is one steady
run (the keys' memo and the state warm, as on a Spark worker after its first batches). The
counts do not depend on the machine's load; they do on the interpreter and the libraries.

    .venv/bin/python bench/pass_instructions.py --shape bytewax --pass route
    .venv/bin/python bench/pass_instructions.py --shape w1 --pass run --events 40000

For a before/after, run it on each tree (``PYTHONPATH=/path/to/other/checkout``). Needs
valgrind (Debian's ``valgrind``); each replay under callgrind takes a minute or two.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import w1


def capture(shape_name: str, n: int, keys: int, path: str) -> None:
    """Pickle to ``path`` the shape's route pass (None when Spark routes the records itself),
    its run pass, the route pass's input batches and the run pass's, one list per subtask."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import cloudpickle
    import pyarrow as pa
    import pyarrow.compute as pc
    import w1_bytewax
    from pyspark.sql.classic.dataframe import DataFrame

    from fs_compat.spark import spark_session
    from fs_compat.spark._events import FrameSource
    from fs_compat.spark._routing import direct_route, subtask_partition

    cloudpickle.register_pickle_by_value(w1_bytewax)
    cloudpickle.register_pickle_by_value(w1)
    spark = spark_session({"spark.master": "local[2]", "spark.ui.enabled": "false"})
    shape = w1.SHAPE_NAMES[shape_name]
    passes: list[Any] = []
    plain = DataFrame.mapInArrow

    def recorded(self: Any, fn: Any, schema: Any, *args: Any, **kwargs: Any) -> Any:
        passes.append(fn)
        return plain(self, fn, schema, *args, **kwargs)

    DataFrame.mapInArrow = recorded  # type: ignore[method-assign]
    try:
        w1.spark_ours_frame(spark, n, keys, shape, "tuple")
    finally:
        DataFrame.mapInArrow = plain  # type: ignore[method-assign]
    events_df = w1.events_frame(spark, n, keys, shape.key)
    events = events_df.toArrow().to_batches(max_chunksize=10_000)
    if len(passes) == 1:  # Spark routes the records by their key columns (``direct_route``)
        route = None
        names = events_df.columns
        fields = tuple(names.index(c) for c in shape.key_columns)
        routed = direct_route(events_df, FrameSource(events_df, 0, 1), fields, 2)
        table = routed.repartition(2, subtask_partition(2)).sortWithinPartitions("seq").toArrow()
    else:
        route = passes[0]
        table = pa.Table.from_batches(list(route(iter(events))))
        order = [k for k in ("part", "seq", "ch", "inp") if k in table.column_names]
        table = table.take(pc.sort_indices(table, sort_keys=[(k, "ascending") for k in order]))
    subtasks = [
        table.filter(pc.equal(table.column("part"), part)).to_batches(max_chunksize=10_000)
        for part in sorted(set(table.column("part").to_pylist()))
    ]
    with open(path, "wb") as f:
        cloudpickle.dump((route, passes[-1], events, subtasks), f)


def replay(path: str, which: str, runs: int) -> None:
    """Run the captured pass ``which`` over its input ``runs`` times."""
    with open(path, "rb") as f:
        route, run, events, subtasks = pickle.load(f)
    if which == "route" and route is None:
        raise SystemExit("this shape has no route pass: Spark routes its records by their key columns")
    for _ in range(runs):
        if which == "route":
            for _batch in route(iter(events)):
                pass
        else:
            for batches in subtasks:
                for _batch in run(iter(batches)):
                    pass


def instructions(path: str, which: str, runs: int) -> int:
    """The instructions callgrind counts for a replay of ``runs`` runs."""
    return callgrind([__file__, "--replay", path, "--pass", which, "--runs", str(runs)])


def callgrind(arguments: list[str]) -> int:
    """The instructions callgrind counts for a child ``python *arguments``."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, *arguments]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    found = re.search(r"refs:\s*([\d,]+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"callgrind replay failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--shape", default="w1", choices=sorted(w1.SHAPE_NAMES), help="a bench/w1.py shape")
    parser.add_argument("--pass", dest="which", default="run", choices=("route", "run"))
    parser.add_argument("--events", type=int, default=40_000, help="events (default 40,000)")
    parser.add_argument("--keys", type=int, default=10_000, help="distinct keys (default 10,000)")
    parser.add_argument("--capture", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--replay", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.capture:
        capture(args.shape, args.events, args.keys, args.capture)
        return
    if args.replay:
        replay(args.replay, args.which, args.runs)
        return
    with tempfile.TemporaryDirectory() as work:
        path = str(Path(work) / "pass.pkl")
        sizes = ["--shape", args.shape, "--events", str(args.events), "--keys", str(args.keys)]
        subprocess.run([sys.executable, __file__, "--capture", path, *sizes], check=True)
        one, two = instructions(path, args.which, 1), instructions(path, args.which, 2)
    print(
        f"{args.shape} {args.which} pass: {(two - one) / args.events:,.0f} instructions per event "
        f"({args.events:,} events, {args.keys:,} keys; callgrind, the second run of two minus one)"
    )


if __name__ == "__main__":
    main()
