"""The streaming job of ``test_bw_source_restart.py``: a user-written Bytewax
``FixedPartitionedSource`` with resume state, read as a Structured Streaming query (its offset
holds every partition's snapshot), run in its own process so that the test can kill it (SIGKILL)
and start it again from its checkpoint.

The source (:class:`Numbers`) has partitions ``a``, ``b``, ``c``; partition ``k`` gives the
numbers ``k_index * 1000 + i`` for ``i < PER_PART``, ``BATCH`` per ``next_batch``, and its
resume state is the next ``i``. The flow maps each number through a :class:`crash_job.Gate`
and writes it to a parquet sink (Spark's file sink commits each micro-batch once), two
``next_batch`` calls per partition per micro-batch.

Run as a script::

    python bw_source_job.py WORKDIR [--block-map N] [--block-read N]

``--block-map N`` blocks the map step (in a Spark task) on number ``N``; ``--block-read N``
blocks the source's ``next_batch`` (in the driver's Python data source process) before it
returns the batch holding ``N``. Prints ``STARTED <pid>``, then ``DONE`` once every partition
has ended and the query stopped.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import crash_job
from crash_job import Gate

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.inputs import FixedPartitionedSource, StatefulSourcePartition
from fs_compat.bytewax.spark import to_dataframe
from fs_compat.common import Types

PARTS = ("a", "b", "c")
PER_PART = 30
BATCH = 3


class NumbersPartition(StatefulSourcePartition[int, int]):
    def __init__(self, base: int, at: int, gate: Gate) -> None:
        self.base = base
        self.at = at
        self.gate = gate

    def next_batch(self) -> list[int]:
        if self.at >= PER_PART:
            raise StopIteration()
        batch = [self.base + i for i in range(self.at, min(self.at + BATCH, PER_PART))]
        for n in batch:
            self.gate.check(n)
        self.at += len(batch)
        return batch

    def snapshot(self) -> int:
        return self.at


class Numbers(FixedPartitionedSource[int, int]):
    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    def list_parts(self) -> list[str]:
        return list(PARTS)

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> NumbersPartition:
        return NumbersPartition(PARTS.index(for_part) * 1000, resume_state or 0, self.gate)


def expected() -> list[int]:
    """Every number the source gives, once."""
    return [k * 1000 + i for k in range(len(PARTS)) for i in range(PER_PART)]


class Passing:
    """The map step's function: the number, after the gate."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    def __call__(self, n: int) -> int:
        self.gate.check(n)
        return n


def output(read_gate: Gate, map_gate: Gate) -> Any:
    flow = Dataflow("numbers")
    s = op.input("inp", flow, Numbers(read_gate))
    s = op.map("pass", s, Passing(map_gate))
    return to_dataframe(s, Types.LONG(), streaming=True, max_batches_per_trigger=2)


def paths(workdir: Path) -> tuple[Path, Path, Path]:
    """The checkpoint, sink and gate folder under ``workdir``."""
    return workdir / "checkpoint", workdir / "sink", workdir / "gate"


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--block-map", type=int, default=None)
    parser.add_argument("--block-read", type=int, default=None)
    args = parser.parse_args(argv)
    from fs_compat.spark import spark_session

    server = None
    if os.environ.get("FS_COMPAT_TEST_CONNECT", "") not in ("", "0"):
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: connect_server
        from connect_server import ConnectServer

        settings = crash_job.CHILD_SETTINGS
        conf = {k: v for k, v in settings.items() if k != "spark.master"}
        server = ConnectServer(settings["spark.master"], args.workdir / "connect", conf)
        server.start()
        os.environ["SPARK_REMOTE"] = server.url
    spark = spark_session(crash_job.CHILD_SETTINGS)
    print(f"STARTED {os.getpid()}", flush=True)
    checkpoint, sink, gate = paths(args.workdir)
    gate.mkdir(parents=True, exist_ok=True)
    out = output(Gate(args.block_read, str(gate)), Gate(args.block_map, str(gate)))
    query = crash_job.start(out, checkpoint, sink)
    query.awaitTermination()
    failed = query.exception()
    spark.stop()
    if server is not None:
        server.stop()
    if failed is not None:
        print(f"FAILED {failed}", flush=True)
        return 1
    print("DONE", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
