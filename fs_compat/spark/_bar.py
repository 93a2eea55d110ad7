"""A batch job's progress while it runs: a one-line bar on stderr (Spark's tasks done, and the
records each step has received so far), drawn only when stderr is a terminal and only once the
job has run for ``afterSeconds`` (3 s by default), then cleared when the job ends (its summary
follows).

What the driver sees while a job runs:

- on a classic session, Spark's status tracker (tasks of the active stages) and the job's
  accumulator, which takes each finished task's record counts (``_counters``);
- over Spark Connect (no SparkContext on this side), the progress the server streams to the
  client with the results (``SparkSession.registerProgressHandler``: tasks per stage); the
  records per step arrive with the results only, so the bar shows tasks.

Settings (Spark configuration, e.g. ``fs-compat run --conf``): ``spark.fs_compat.progress``
(``true``: the default; ``false``: never a bar) and ``spark.fs_compat.progress.afterSeconds``.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TextIO

import attrs

PROGRESS_CONF = "spark.fs_compat.progress"
AFTER_CONF = "spark.fs_compat.progress.afterSeconds"
DEFAULT_AFTER_S = 3.0
#: How often the bar is redrawn, in seconds.
INTERVAL_S = 0.5


@attrs.frozen
class Snapshot:
    """What a running job has done so far: Spark tasks done and known, and records received
    per step (by name, in the plan's order; empty when not known while running)."""

    tasks_done: int = 0
    tasks_total: int = 0
    records: tuple[tuple[str, int], ...] = ()


class ProgressBar:
    """Draws snapshots on ``stream`` as one line, rewritten in place, when ``stream`` is a
    terminal and ``clock()`` (seconds) says at least ``after`` seconds passed since it was made."""

    def __init__(
        self,
        stream: TextIO,
        *,
        clock: Callable[[], float] = time.monotonic,
        after: float = DEFAULT_AFTER_S,
        width: int | None = None,
    ) -> None:
        self.stream = stream
        self.clock = clock
        self.after = after
        self.start = clock()
        self.width = width if width is not None else shutil.get_terminal_size((100, 20)).columns
        self.enabled = _isatty(stream)
        self.drawn = 0

    def update(self, snapshot: Snapshot) -> None:
        """Draw ``snapshot`` (when enabled and late enough)."""
        elapsed = self.clock() - self.start
        if not self.enabled or elapsed < self.after:
            return
        line = render(snapshot, elapsed)[: self.width - 1]
        self.stream.write("\r" + line.ljust(self.drawn))
        self.stream.flush()
        self.drawn = len(line)

    def close(self) -> None:
        """Clear the line drawn, if any."""
        if self.drawn:
            self.stream.write("\r" + " " * self.drawn + "\r")
            self.stream.flush()
            self.drawn = 0


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def render(snapshot: Snapshot, elapsed: float, bar_width: int = 20) -> str:
    """One line for ``snapshot``.

    >>> render(Snapshot(3, 12, (("numbers", 0), ("count", 1500))), 4.25)
    '[#####...............] 3/12 tasks | numbers 0 | count 1,500 | 4.2 s'
    >>> render(Snapshot(), 0.5)
    '[....................] 0/? tasks | 0.5 s'
    """
    done, total = snapshot.tasks_done, snapshot.tasks_total
    filled = bar_width * done // total if total else 0
    parts = ["[" + "#" * filled + "." * (bar_width - filled) + f"] {done}/{total or '?'} tasks"]
    parts += [f"{name} {n:,}" for name, n in snapshot.records]
    parts.append(f"{elapsed:.1f} s")
    return " | ".join(parts)


def records_so_far(
    updates: Mapping[tuple[str, int, int], Any], names: Mapping[int, str]
) -> tuple[tuple[str, int], ...]:
    """Records received per step so far, from the counts of the tasks that finished."""
    received: dict[int, int] = {}
    for (kind, step, _part), value in list(updates.items()):
        if kind == "in":
            received[step] = received.get(step, 0) + sum(value)
    return tuple((name, received[step]) for step, name in names.items() if step in received)


class _ConnectTasks:
    """A Spark Connect progress handler keeping the tasks of the current operation's stages."""

    def __init__(self) -> None:
        self.stages: dict[int, tuple[int, int]] = {}

    def __call__(self, stages: Any, inflight_tasks: int, operation_id: Any, done: bool) -> None:
        for stage in stages or ():
            self.stages[stage.stage_id] = (stage.num_completed_tasks, stage.num_tasks)

    def snapshot(self) -> Snapshot:
        found = list(self.stages.values())
        return Snapshot(sum(d for d, _ in found), sum(t for _, t in found))


@contextlib.contextmanager
def watching(
    spark: Any, accumulator: Any, names: Mapping[int, str], stream: TextIO | None = None
) -> Iterator[None]:
    """While the block runs Spark jobs of ``spark``: a bar on ``stream`` (default stderr) when it
    is a terminal (``ProgressBar``). ``accumulator`` is the job's (None over Connect); ``names``
    the steps to show, by node id."""
    import sys

    from ._session import is_connect

    out = stream if stream is not None else sys.stderr
    if not _isatty(out) or str(spark.conf.get(PROGRESS_CONF, "true")).lower() == "false":
        yield
        return
    bar = ProgressBar(out, after=float(spark.conf.get(AFTER_CONF, str(DEFAULT_AFTER_S))))
    handler: _ConnectTasks | None = None
    source: Callable[[], Snapshot]
    if is_connect(spark):
        handler = _ConnectTasks()
        spark.registerProgressHandler(handler)
        source = handler.snapshot
    else:
        tracker = spark.sparkContext.statusTracker()
        seen: dict[int, tuple[int, int]] = {}

        def source() -> Snapshot:
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    seen[stage_id] = (info.numCompletedTasks, info.numTasks)
            records = records_so_far(accumulator.value, names) if accumulator is not None else ()
            return Snapshot(sum(d for d, _ in seen.values()), sum(t for _, t in seen.values()), records)

    stop = threading.Event()

    def draw() -> None:
        while True:  # drawn at least once (when late enough), then every INTERVAL_S
            bar.update(source())
            if stop.wait(INTERVAL_S):
                return

    thread = threading.Thread(target=draw, name="fs-compat-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        bar.close()
        if handler is not None:
            spark.removeProgressHandler(handler)
