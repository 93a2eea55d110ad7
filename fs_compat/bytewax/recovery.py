"""Failure recovery (``bytewax.recovery``).

Create the recovery partitions once with :func:`init_db_dir`, then pass a :class:`RecoveryConfig`
to ``run_main``. At the end of every epoch each stateful step writes the pickled ``snapshot()`` of
every key it touched (or a tombstone when the logic was discarded), and every source its
position; a later run resumes from the last epoch committed in all partitions.

>>> import tempfile
>>> from pathlib import Path
>>> d = Path(tempfile.mkdtemp())
>>> init_db_dir(d, 2)
>>> sorted(p.name for p in d.iterdir())
['part-0.sqlite3', 'part-1.sqlite3']
>>> RecoveryConfig(str(d)).db_dir == d
True
"""

from __future__ import annotations

import pickle
import sqlite3
import zlib
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = [
    "InconsistentPartitionsError",
    "MissingPartitionsError",
    "NoPartitionsError",
    "RecoveryConfig",
    "init_db_dir",
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS parts (part_index INTEGER PRIMARY KEY, part_count INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS snaps (
    step_id TEXT NOT NULL, state_key TEXT NOT NULL, snap_epoch INTEGER NOT NULL, ser_change BLOB,
    PRIMARY KEY (step_id, state_key, snap_epoch));
CREATE TABLE IF NOT EXISTS commits (commit_epoch INTEGER PRIMARY KEY, committed_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS gc (id INTEGER PRIMARY KEY CHECK (id = 0), min_resume_epoch INTEGER NOT NULL);
"""


class NoPartitionsError(FileNotFoundError):
    """No recovery partitions were found: probably the wrong recovery directory."""


class MissingPartitionsError(FileNotFoundError):
    """Some of the recovery partitions are missing."""


class InconsistentPartitionsError(ValueError):
    """The recovery partitions do not belong together (different counts, or some too old to
    resume from the epoch the others are at without data loss)."""


class RecoveryConfig:
    """Where recovery partitions live, and how long superseded snapshots are kept.

    ``backup_interval`` (default zero) is how long a snapshot is kept after a newer one replaced
    it: set it to the interval at which you back the partitions up elsewhere.
    """

    def __init__(self, db_dir: str | Path, backup_interval: timedelta | None = None) -> None:
        if backup_interval is not None and not isinstance(backup_interval, timedelta):
            raise TypeError("backup interval must be a `datetime.timedelta`")
        self._db_dir = Path(db_dir)
        self._backup_interval = backup_interval if backup_interval is not None else timedelta(0)

    @property
    def db_dir(self) -> Path:
        """The directory of the recovery partitions, as a ``Path``."""
        return self._db_dir

    @property
    def backup_interval(self) -> timedelta:
        """How long a superseded snapshot is kept (``timedelta(0)`` when none was given)."""
        return self._backup_interval

    def __repr__(self) -> str:
        return f"RecoveryConfig(db_dir={str(self._db_dir)!r}, backup_interval={self._backup_interval!r})"


def _part_path(db_dir: Path, index: int) -> Path:
    return db_dir / f"part-{index}.sqlite3"


@contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    with closing(sqlite3.connect(path)) as conn:
        with conn:
            yield conn


def init_db_dir(db_dir: str | Path, count: int) -> None:
    """Create and initialise ``count`` empty recovery partitions in the existing ``db_dir``."""
    path = Path(db_dir)
    if not path.is_dir():
        raise FileNotFoundError(f"{path} does not exist; please create it with `mkdir`")
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"partition count must be a positive `int`; got {count!r}")
    for index in range(count):
        with _connect(_part_path(path, index)) as conn:
            conn.executescript(_SCHEMA)
            conn.execute("INSERT OR REPLACE INTO parts VALUES (?, ?)", (index, count))
            conn.execute("INSERT OR IGNORE INTO gc VALUES (0, 0)")


class _Store:
    """The recovery partitions of one execution."""

    def __init__(self, config: RecoveryConfig) -> None:
        self.config = config
        db_dir = config.db_dir
        if not db_dir.is_dir():
            raise FileNotFoundError(
                f"recovery directory {db_dir} does not exist; see the `bytewax.recovery` module "
                "docstring for more info"
            )
        files = sorted(db_dir.glob("part-*.sqlite3"))
        if not files:
            raise NoPartitionsError("No recovery partitions found on any worker; can't resume")
        counts: set[int] = set()
        indexes: set[int] = set()
        for file in files:
            with _connect(file) as conn:
                for index, count in conn.execute("SELECT part_index, part_count FROM parts"):
                    indexes.add(index)
                    counts.add(count)
        if len(counts) != 1:
            raise InconsistentPartitionsError(
                "Inconsistent partition counts in recovery partitions; can't resume"
            )
        self.count = counts.pop()
        missing = sorted(set(range(self.count)) - indexes)
        if missing:
            raise MissingPartitionsError(f"Missing recovery partitions {missing}; can't resume")
        self.paths = [_part_path(db_dir, i) for i in range(self.count)]

    def _part_of(self, step_id: str, key: str) -> int:
        return zlib.crc32(f"{step_id}\x00{key}".encode()) % self.count

    def resume(self) -> tuple[int, dict[str, dict[str, Any]]]:
        """The epoch to resume from and, per step id, each key's snapshot as of that epoch."""
        latest: list[int] = []
        floors: list[int] = []
        for path in self.paths:
            with _connect(path) as conn:
                latest.append(
                    conn.execute("SELECT COALESCE(MAX(commit_epoch), 0) FROM commits").fetchone()[0]
                )
                floors.append(conn.execute("SELECT min_resume_epoch FROM gc").fetchone()[0])
        epoch = min(latest)
        too_old = [i for i, floor in enumerate(floors) if floor > epoch]
        if too_old:
            raise InconsistentPartitionsError(
                f"Recovery partitions {too_old} are too old to resume from epoch {epoch + 1} without data "
                "loss; do you have a newer backup of these partitions?"
            )
        states: dict[str, dict[str, Any]] = {}
        for path in self.paths:
            with _connect(path) as conn:
                # Forget what was written after the resume epoch: it will be written again.
                conn.execute("DELETE FROM snaps WHERE snap_epoch > ?", (epoch,))
                conn.execute("DELETE FROM commits WHERE commit_epoch > ?", (epoch,))
                rows = conn.execute(
                    "SELECT step_id, state_key, ser_change FROM snaps "
                    "WHERE snap_epoch <= ? ORDER BY snap_epoch",
                    (epoch,),
                ).fetchall()
            for step_id, key, blob in rows:
                step = states.setdefault(step_id, {})
                if blob is None:
                    step.pop(key, None)
                else:
                    step[key] = pickle.loads(blob)
        return epoch, states

    def write_epoch(self, epoch: int, changes: list[tuple[str, str, Any, bool]], now: datetime) -> None:
        """Write one epoch's snapshots (``(step_id, key, snapshot, present)``) and commit it."""
        by_part: dict[int, list[tuple[str, str, int, bytes | None]]] = {}
        for step_id, key, snap, present in changes:
            blob = pickle.dumps(snap) if present else None
            by_part.setdefault(self._part_of(step_id, key), []).append((step_id, key, epoch, blob))
        stamp = now.timestamp()
        cutoff = stamp - self.config.backup_interval.total_seconds()
        for index, path in enumerate(self.paths):
            with _connect(path) as conn:
                conn.executemany("INSERT OR REPLACE INTO snaps VALUES (?, ?, ?, ?)", by_part.get(index, []))
                conn.execute("INSERT OR REPLACE INTO commits VALUES (?, ?)", (epoch, stamp))
                row = conn.execute(
                    "SELECT MAX(commit_epoch) FROM commits WHERE committed_at <= ?", (cutoff,)
                ).fetchone()
                if row[0] is None:
                    continue
                floor = row[0]
                # Snapshots superseded by a newer one at or before ``floor`` can no longer be
                # needed: no resume goes back before ``floor``.
                conn.execute(
                    "DELETE FROM snaps WHERE snap_epoch < (SELECT MAX(s.snap_epoch) FROM snaps s "
                    "WHERE s.step_id = snaps.step_id AND s.state_key = snaps.state_key "
                    "AND s.snap_epoch <= ?)",
                    (floor,),
                )
                conn.execute("DELETE FROM commits WHERE commit_epoch < ?", (floor,))
                conn.execute("UPDATE gc SET min_resume_epoch = MAX(min_resume_epoch, ?)", (floor,))
