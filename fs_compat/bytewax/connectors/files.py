"""Local text files (``bytewax.connectors.files``): read lines or CSV rows, write lines.

Sources are :class:`~fs_compat.bytewax.inputs.FixedPartitionedSource` s with one partition per
file, whose resume state is the byte offset after the last line read; sinks are
:class:`~fs_compat.bytewax.outputs.FixedPartitionedSink` s with one partition per file, whose
resume state is the offset after the last line written (a resumed run truncates the file there,
so nothing is written twice). Both run in-process and on Spark (``FS_COMPAT_TARGET=spark``: files
are read by Spark's tasks, a task per file, and written by the driver; with
``fs_compat.bytewax.spark.to_dataframe(stream, streaming=True)`` a source is a stream whose offset
holds each file's offset, and ``to_sink`` writes a sink in Spark's tasks).

>>> import tempfile
>>> from pathlib import Path
>>> import fs_compat.bytewax.operators as op
>>> from fs_compat.bytewax.dataflow import Dataflow
>>> from fs_compat.bytewax.testing import run_main
>>> tmp = Path(tempfile.mkdtemp())
>>> _ = (tmp / "in.txt").write_text("one\\ntwo\\n")
>>> flow = Dataflow("eg")
>>> s = op.input("inp", flow, FileSource(tmp / "in.txt"))
>>> s = op.key_on("key", op.map("upper", s, str.upper), lambda _line: "all")
>>> op.output("out", s, FileSink(tmp / "out.txt"))
>>> run_main(flow)
>>> (tmp / "out.txt").read_text()
'ONE\\nTWO\\n'
"""

from __future__ import annotations

import abc
import csv
import os
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from ..inputs import FixedPartitionedSource as _FixedPartitionedSource
from ..inputs import StatefulSourcePartition as _StatefulSourcePartition
from ..inputs import batch as _batch
from ..outputs import FixedPartitionedSink as _FixedPartitionedSink
from ..outputs import StatefulSinkPartition as _StatefulSinkPartition

__all__ = ["CSVSource", "DirSink", "DirSource", "FileSink", "FileSource"]


def _get_path_dev(path: Path) -> str:
    """The default ``get_fs_id``: the device of ``path`` (the same file on a shared mount is
    read once)."""
    return hex(path.stat().st_dev)


def _fs_id(get_fs_id: Callable[[Path], str], path: Path) -> str:
    fs_id = get_fs_id(path)
    if "::" in fs_id:
        raise ValueError(f"result of `get_fs_id` must not contain `::`; got {fs_id!r}")
    return fs_id


def _lines(f: IO[str]) -> Iterator[str]:
    """The lines of ``f`` read with ``readline``, so that ``f.tell()`` stays usable (a text file
    iterated with ``next`` refuses ``tell``)."""
    return iter(f.readline, "")


class _OffsetPartition(_StatefulSourcePartition[Any, int]):
    """One file, read in batches of items; the resume state is the offset after the last batch."""

    def __init__(self, f: IO[str], items: Iterator[Any], batch_size: int) -> None:
        self._f = f
        self._batches = _batch(items, batch_size)

    def next_batch(self) -> list[Any]:
        return next(self._batches)  # StopIteration at the end of the file

    def snapshot(self) -> int:
        return self._f.tell()

    def close(self) -> None:
        self._f.close()


def _line_partition(path: Path, batch_size: int, resume_state: int | None) -> _OffsetPartition:
    f = open(
        path,
    )
    if resume_state is not None:
        f.seek(resume_state)
    return _OffsetPartition(f, (line.rstrip("\n") for line in _lines(f)), batch_size)


class _OneFileSource(_FixedPartitionedSource[Any, int]):
    """A source of one file: the partition is ``"<fs id>::<path>"``, listed when the file exists."""

    def __init__(
        self,
        path: Path | str,
        batch_size: int = 1000,
        get_fs_id: Callable[[Path], str] = _get_path_dev,
    ) -> None:
        self._path = path if isinstance(path, Path) else Path(path)
        self._batch_size = batch_size
        self._fs_id = _fs_id(get_fs_id, self._path.parent)

    def list_parts(self) -> list[str]:
        return [f"{self._fs_id}::{self._path}"] if self._path.exists() else []

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> _OffsetPartition:
        _fs_id, path = for_part.split("::", 1)
        if path != str(self._path):
            raise ValueError(
                f"step {step_id}: cannot resume reading {self._path} from the state of another file ({path})"
            )
        return self._open(resume_state)

    @abc.abstractmethod
    def _open(self, resume_state: int | None) -> _OffsetPartition: ...


class FileSource(_OneFileSource):
    """The lines of one file, without their line ends, ``batch_size`` lines per batch.

    The file is the unit of parallelism: one worker reads it. ``get_fs_id(parent_dir)`` names
    the file system the file is on (default: its device), so that a file on a shared mount is
    read once; return a constant when every worker sees the same files. A file that does not
    exist has no partition: the source is empty. Resumes at the byte offset after the last line
    read, so it can support exactly-once processing.
    """

    def _open(self, resume_state: int | None) -> _OffsetPartition:
        return _line_partition(self._path, self._batch_size, resume_state)


class CSVSource(_OneFileSource):
    """The rows of one CSV file as dicts keyed by the header's column names (values are
    ``str``), ``batch_size`` rows per batch. ``**fmtparams`` go to :class:`csv.DictReader`
    (``delimiter=";"``, ...). Partitioning and resume as :class:`FileSource`."""

    def __init__(
        self,
        path: Path | str,
        batch_size: int = 1000,
        get_fs_id: Callable[[Path], str] = _get_path_dev,
        **fmtparams: Any,
    ) -> None:
        super().__init__(path, batch_size, get_fs_id)
        self._fmtparams = fmtparams

    def _open(self, resume_state: int | None) -> _OffsetPartition:
        f = open(self._path, newline="")
        reader = csv.DictReader(_lines(f), **self._fmtparams)
        _ = reader.fieldnames  # the header is read first, also when resuming past it
        if resume_state is not None:
            f.seek(resume_state)
        return _OffsetPartition(f, reader, self._batch_size)


class DirSource(_FixedPartitionedSource[str, int]):
    """The lines of every file in a directory that matches ``glob_pat``, one partition per file
    (``"<fs id>::<relative path>"``), so lines of different files interleave. Batching, resume
    and ``get_fs_id`` (called with the directory) as :class:`FileSource`.

    Raises ``ValueError`` when ``dir_path`` does not exist or is not a directory.
    """

    def __init__(
        self,
        dir_path: Path,
        glob_pat: str = "*",
        batch_size: int = 1000,
        get_fs_id: Callable[[Path], str] = _get_path_dev,
    ) -> None:
        if not dir_path.exists():
            raise ValueError(f"input directory `{dir_path}` does not exist")
        if not dir_path.is_dir():
            raise ValueError(f"input directory `{dir_path}` is not a directory")
        self._dir_path = dir_path
        self._glob_pat = glob_pat
        self._batch_size = batch_size
        self._fs_id = _fs_id(get_fs_id, dir_path)

    def list_parts(self) -> list[str]:
        if not self._dir_path.exists():
            return []
        found = sorted(self._dir_path.glob(self._glob_pat))
        return [f"{self._fs_id}::{p.relative_to(self._dir_path)}" for p in found]

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> _OffsetPartition:
        _fs_id, relative = for_part.split("::", 1)
        return _line_partition(self._dir_path / relative, self._batch_size, resume_state)


class _LinePartition(_StatefulSinkPartition[str, int]):
    """One output file: truncated at the resume offset (0 on a fresh run), then appended to."""

    def __init__(self, path: Path, resume_state: int | None, end: str) -> None:
        self._f = open(
            path,
            "a",
        )
        self._f.seek(0 if resume_state is None else resume_state)
        self._f.truncate()
        self._end = end

    def write_batch(self, values: list[str]) -> None:
        for value in values:
            self._f.write(value)
            self._f.write(self._end)
        self._f.flush()
        os.fsync(self._f.fileno())

    def snapshot(self) -> int:
        return self._f.tell()

    def close(self) -> None:
        self._f.close()


def _default_file_namer(index: int, _count: int) -> str:
    return f"part_{index}"


def _default_assign_file(key: str) -> int:
    return zlib.adler32(key.encode())


class DirSink(_FixedPartitionedSink[str, int]):
    """Writes the values of ``(key, value)`` items (values must be ``str``) to ``file_count``
    files in ``dir_path``, each followed by ``end``.

    File ``i`` is named ``file_namer(i, file_count)`` (default ``part_{i}``); a key's values go
    to the file at index ``assign_file(key)`` (wrapped to the file count; default
    :func:`zlib.adler32`) of the file names in sorted order, as in Bytewax. Each file is a
    partition; its resume state is its length after the last write, and a fresh run starts the
    files empty. Exactly-once in a batch context (a resumed run truncates each file to its
    snapshot); tailing the files while a run resumes sees the truncation.
    """

    def __init__(
        self,
        dir_path: Path,
        file_count: int,
        file_namer: Callable[[int, int], str] = _default_file_namer,
        assign_file: Callable[[str], int] = _default_assign_file,
        end: str = "\n",
    ) -> None:
        self._dir_path = dir_path
        self._file_count = file_count
        self._file_namer = file_namer
        self._assign_file = assign_file
        self._end = end

    def list_parts(self) -> list[str]:
        return [self._file_namer(i, self._file_count) for i in range(self._file_count)]

    def part_fn(self, item_key: str) -> int:
        return self._assign_file(item_key)

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> _LinePartition:
        return _LinePartition(self._dir_path / for_part, resume_state, self._end)


class FileSink(_FixedPartitionedSink[str, int]):
    """Writes the values of ``(key, value)`` items (values must be ``str``) to one file, each
    followed by ``end``. One partition: no parallelism. Resume and truncation as
    :class:`DirSink`; a fresh run starts the file empty."""

    def __init__(self, path: Path, end: str = "\n") -> None:
        self._path = path
        self._end = end

    def list_parts(self) -> list[str]:
        return [str(self._path)]

    def part_fn(self, item_key: str) -> int:
        return 0

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> _LinePartition:
        if for_part != str(self._path):
            raise ValueError(
                f"step {step_id}: cannot resume writing {self._path} "
                f"from the state of another file ({for_part})"
            )
        return _LinePartition(self._path, resume_state, self._end)
