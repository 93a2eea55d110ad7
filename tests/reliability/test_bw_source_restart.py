"""A user-written Bytewax ``FixedPartitionedSource`` with resume state, read as a streaming
query (issue 18, acceptance 2): the driver is killed (SIGKILL of the child's process group) twice
and the query restarted from its checkpoint each time; the sink then holds every item of every
partition exactly once, neither skipped nor repeated.

The kills (``bw_source_job.py``):

- in the middle of a micro-batch: the map step blocks (in a Spark task) on an item of partition
  ``b``; the kill comes when the checkpoint has planned the micro-batch (its offset, holding every
  partition's snapshot after the micro-batch, is in ``offsets/``) but not committed it. The restart
  reads that micro-batch again from the snapshots it started from (``readBetweenOffsets``);
- while the source reads: ``next_batch`` of partition ``c`` blocks in the driver's Python data
  source process, before the micro-batch is planned. The restart continues from the last
  planned offset.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import bw_source_job
import pytest
from test_crash_restart import Children, _kill, _tail, _wait_for, _wait_until_gone

from fs_compat.spark import spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.classic_only]  # Connect slice: README

CHILD = Path(__file__).with_name("bw_source_job.py")
DEADLINE_S = 420.0


@pytest.fixture
def children(tmp_path: Path) -> Iterator[Children]:
    found = Children(tmp_path, CHILD)
    yield found
    assert not found.leftovers(), f"processes of the killed children were left running: {found.leftovers()}"


def _ids(folder: Path) -> set[int]:
    return {int(p.name) for p in folder.iterdir() if p.name.isdigit()} if folder.is_dir() else set()


def _run_until_blocked(children: Children, workdir: Path, name: str, args: list[str]) -> tuple[int, int]:
    """Start the job with a gate, wait until it blocks, kill it; the checkpoint's planned and
    committed micro-batches at the kill."""
    checkpoint, _sink, gate = bw_source_job.paths(workdir)
    blocked = gate / "blocked"
    blocked.unlink(missing_ok=True)
    proc, log = children.start(name, [str(workdir), *args])
    _wait_for(blocked.exists, proc, log, "the gate")
    planned, committed = len(_ids(checkpoint / "offsets")), len(_ids(checkpoint / "commits"))
    _kill(proc)
    return planned, committed


def test_a_custom_source_killed_and_restarted_neither_skips_nor_repeats(
    tmp_path: Path, children: Children
) -> None:
    workdir = tmp_path / "job"
    # Partition b's 5th batch (items 1012..1014) is in the 3rd micro-batch (two batches a time).
    planned, committed = _run_until_blocked(children, workdir, "map", ["--block-map", "1013"])
    assert planned == committed + 1, "killed in the middle of a micro-batch"
    assert committed >= 1
    _run_until_blocked(children, workdir, "read", ["--block-read", "2025"])

    proc, log = children.start("last", [str(workdir)])
    try:
        proc.wait(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        _kill(proc)
        pytest.fail(f"the last run did not end within {DEADLINE_S} s:\n{_tail(log)}")
    assert proc.returncode == 0, _tail(log)
    assert "DONE" in log.read_text()
    _wait_until_gone(proc.pid)  # its JVM may still be shutting down

    _checkpoint, sink, _gate = bw_source_job.paths(workdir)
    rows = spark_session().read.parquet(str(sink)).collect()  # honours the sink log
    got = Counter(row[0] for row in rows)
    assert got == Counter(bw_source_job.expected()), {
        "repeated": sorted(n for n, c in got.items() if c > 1),
        "missing": sorted(set(bw_source_job.expected()) - set(got)),
    }


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
