"""User-written Bytewax sources and sinks on Spark, through Spark's Python data source API
(``fs_compat.bytewax._datasource``): a batch read per source partition, a streaming read whose
offset is every partition's resume state, and sinks written by Spark's tasks.

The stream reader's offsets, EOF, ``next_awake`` and replays are checked first without Spark
(the reader is a plain object that Spark's driver-side Python process calls); then on Spark:
``run_main`` on the ``spark`` target, ``to_dataframe(stream, streaming=True)`` restarted from its
checkpoint, ``to_sink`` in batch and streaming, and the errors. The kill-and-restart test is
``tests/reliability/test_bw_source_restart.py``.
"""

from __future__ import annotations

import json
import pickle
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stream_query import run_to_parquet

import fs_compat.bytewax.operators as op
from fs_compat.bytewax._datasource import SourceData, _StreamReader, decode, encode
from fs_compat.bytewax.connectors.files import DirSink
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.errors import BytewaxRuntimeError
from fs_compat.bytewax.inputs import (
    DynamicSource,
    FixedPartitionedSource,
    SimplePollingSource,
    StatefulSourcePartition,
    StatelessSourcePartition,
)
from fs_compat.bytewax.outputs import DynamicSink, StatelessSinkPartition
from fs_compat.bytewax.spark import to_dataframe, to_sink
from fs_compat.bytewax.testing import TestingSink, run_main
from fs_compat.common import Types


class LinesPartition(StatefulSourcePartition[str, int]):
    """The lines of a text file, ``size`` per batch; resume state: lines read. An empty batch
    when no new line is there yet; ``StopIteration`` at a line ``END``."""

    def __init__(self, path: str, at: int | None, size: int) -> None:
        self.path = path
        self.at = at or 0
        self.size = size

    def next_batch(self) -> list[str]:
        with open(self.path) as f:
            lines = f.read().splitlines()[self.at : self.at + self.size]
        if lines and lines[0] == "END":
            raise StopIteration()
        lines = lines[: lines.index("END")] if "END" in lines else lines
        self.at += len(lines)
        return lines

    def snapshot(self) -> int:
        return self.at


class Lines(FixedPartitionedSource[str, int]):
    """One partition per file of ``folder`` (named by the file)."""

    def __init__(self, folder: Path, names: list[str], size: int = 2) -> None:
        self.folder = str(folder)
        self.names = names
        self.size = size

    def list_parts(self) -> list[str]:
        return list(self.names)

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> LinesPartition:
        return LinesPartition(f"{self.folder}/{for_part}", resume_state, self.size)


def _files(folder: Path, contents: dict[str, list[str]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, lines in contents.items():
        with open(folder / name, "a") as f:
            f.writelines(f"{line}\n" for line in lines)


def _items(rows: Any) -> list[Any]:
    return [pickle.loads(row[0]) for row in rows]


# The stream reader, without Spark. --------------------------------------------------------------


def _reader(source: Any, limit: int = 2) -> _StreamReader:
    return _StreamReader("flow.inp", source, limit)


def test_offsets_are_json_holding_each_partition_snapshot(tmp_path: Path) -> None:
    _files(tmp_path, {"a": ["a1", "a2", "a3", "a4", "a5"], "b": ["b1"]})
    reader = _reader(Lines(tmp_path, ["a", "b"]))
    start = reader.initialOffset()
    assert start == {
        "a": {"state": None, "seq": 0, "eof": False},
        "b": {"state": None, "seq": 0, "eof": False},
    }
    rows, end = reader.read(start)
    # Two next_batch calls per partition (the limit), a batch of each partition in turn.
    assert _items(rows) == ["a1", "a2", "b1", "a3", "a4"]
    assert json.loads(json.dumps(end)) == end
    assert {name: decode(entry["state"]) for name, entry in end.items()} == {"a": 4, "b": 1}
    assert {name: entry["seq"] for name, entry in end.items()} == {"a": 2, "b": 2}


def test_a_read_continues_where_the_last_ended_and_a_restart_resumes_from_the_offset(tmp_path: Path) -> None:
    _files(tmp_path, {"a": [f"a{i}" for i in range(6)]})
    reader = _reader(Lines(tmp_path, ["a"]), limit=1)
    first_rows, first = reader.read(reader.initialOffset())
    second_rows, second = reader.read(first)
    assert (_items(first_rows), _items(second_rows)) == (["a0", "a1"], ["a2", "a3"])
    # A new reader (a restarted query) given the checkpoint's offset: the same next items.
    again = _reader(Lines(tmp_path, ["a"]), limit=1)
    rows, third = again.read(first)
    assert _items(rows) == ["a2", "a3"] and third == second


def test_nothing_new_gives_the_start_offset_and_eof_is_recorded(tmp_path: Path) -> None:
    _files(tmp_path, {"a": ["a1"], "b": []})
    reader = _reader(Lines(tmp_path, ["a", "b"]))
    rows, end = reader.read(reader.initialOffset())
    assert _items(rows) == ["a1"]
    rows, same = reader.read(end)
    assert (_items(rows), same) == ([], end)  # no micro-batch: under availableNow the query ends
    _files(tmp_path, {"a": ["END"], "b": ["b1"]})
    rows, after = reader.read(end)
    assert _items(rows) == ["b1"]
    assert (after["a"]["eof"], after["b"]["eof"]) == (True, False)
    _files(tmp_path, {"b": ["END"]})
    rows, done = reader.read(after)
    assert _items(rows) == [] and done["b"]["eof"]  # an empty micro-batch records the end
    assert reader.read(done)[1] == done


def test_a_replay_reads_the_same_items_and_checks_the_snapshot(tmp_path: Path) -> None:
    _files(tmp_path, {"a": [f"a{i}" for i in range(5)], "b": ["b0", "b1", "b2"]})
    reader = _reader(Lines(tmp_path, ["a", "b"]))
    start = reader.initialOffset()
    rows, end = reader.read(start)
    assert sorted(_items(reader.readBetweenOffsets(start, end))) == sorted(_items(rows))

    # A source that gives other items when built again from a snapshot cannot be replayed.
    (tmp_path / "a").write_text("x0\nx1\nx2\n")
    with pytest.raises(BytewaxRuntimeError, match=r"step flow.inp: partition 'a' did not replay"):
        list(reader.readBetweenOffsets(start, end))


class Sleepy(StatefulSourcePartition[int, int]):
    """One item per batch; after each batch, asleep until ``wake``."""

    def __init__(self, at: int | None, wake: datetime) -> None:
        self.at = at or 0
        self.wake = wake

    def next_batch(self) -> list[int]:
        self.at += 1
        return [self.at]

    def next_awake(self) -> datetime | None:
        return self.wake

    def snapshot(self) -> int:
        return self.at


class SleepySource(FixedPartitionedSource[int, int]):
    def __init__(self, wake: datetime) -> None:
        self.wake = wake

    def list_parts(self) -> list[str]:
        return ["s"]

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> Sleepy:
        return Sleepy(resume_state, self.wake)


def test_a_partition_is_not_called_before_its_next_awake() -> None:
    reader = _reader(SleepySource(datetime.now(UTC) + timedelta(hours=1)), limit=5)
    rows, end = reader.read(reader.initialOffset())
    assert _items(rows) == [1]  # then asleep: no more calls in this micro-batch
    rows, same = reader.read(end)
    assert (_items(rows), same) == ([], end)
    awake = _reader(SleepySource(datetime.now(UTC) - timedelta(seconds=1)), limit=3)
    assert _items(awake.read(awake.initialOffset())[0]) == [1, 2, 3]


class Polled(SimplePollingSource[int, int]):
    """Polls 0, 1, ... up to ``stop``; resumes from its count."""

    def __init__(self, stop: int) -> None:
        super().__init__(interval=timedelta(0))
        self.n = 0
        self.stop = stop

    def next_item(self) -> int:
        if self.n >= self.stop:
            raise StopIteration()
        self.n += 1
        return self.n - 1

    def snapshot(self) -> int:
        return self.n

    def resume(self, resume_state: int) -> None:
        self.n = resume_state


def test_a_simple_polling_source_streams_and_resumes_from_its_snapshot() -> None:
    reader = _reader(Polled(stop=5), limit=3)
    rows, end = reader.read(reader.initialOffset())
    assert _items(rows) == [0, 1, 2]
    assert decode(end["singleton"]["state"]) == 3
    again = _reader(Polled(stop=5), limit=3)  # a restarted query
    rows, done = again.read(end)
    assert _items(rows) == [3, 4] and done["singleton"]["eof"]


class Counting(DynamicSource[int]):
    def build(self, step_id: str, worker_index: int, worker_count: int) -> StatelessSourcePartition[int]:
        class Part(StatelessSourcePartition[int]):
            def __init__(self) -> None:
                self.batches = [[1, 2], [3]]

            def next_batch(self) -> list[int]:
                if not self.batches:
                    raise StopIteration()
                return self.batches.pop(0)

        return Part()


def test_a_dynamic_source_has_no_resume_state_and_no_replay() -> None:
    reader = _reader(Counting(), limit=5)
    start = reader.initialOffset()
    rows, end = reader.read(start)
    assert _items(rows) == [1, 2, 3]
    assert end == {"0": {"state": None, "seq": 3, "eof": True}}
    assert list(reader.readBetweenOffsets(start, end)) == []  # at-most-once across a restart


class Locked(StatefulSourcePartition[int, Any]):
    def next_batch(self) -> list[int]:
        return [1]

    def snapshot(self) -> Any:
        return threading.Lock()


class LockedSource(FixedPartitionedSource[int, Any]):
    def list_parts(self) -> list[str]:
        return ["p0"]

    def build_part(self, step_id: str, for_part: str, resume_state: Any) -> Locked:
        return Locked()


def test_an_unpicklable_snapshot_names_the_step_and_the_partition() -> None:
    reader = _reader(LockedSource())
    with pytest.raises(
        TypeError, match=r"step 'flow.inp': partition 'p0': the snapshot .* cannot be pickled"
    ):
        reader.read(reader.initialOffset())


class LockItems(LockedSource):
    def build_part(self, step_id: str, for_part: str, resume_state: Any) -> Any:
        class Part(Locked):
            def next_batch(self) -> list[Any]:
                return [threading.Lock()]

        return Part()


def test_an_unpicklable_item_names_the_step_and_the_partition() -> None:
    reader = _reader(LockItems())
    with pytest.raises(TypeError, match=r"step 'flow.inp': partition 'p0': an item .* cannot be pickled"):
        reader.read(reader.initialOffset())


def test_encode_is_base64_of_a_pickle() -> None:
    assert decode(encode(("a", 1, {"b": [2]}), "x")) == ("a", 1, {"b": [2]})
    with pytest.raises(TypeError, match=r"the source .* cannot be pickled"):
        encode(threading.Lock(), "step 'f.inp': the source")
    assert SourceData.name() == "fs_compat_bytewax_source"


# On Spark. ------------------------------------------------------------------------------------


class Fixed(FixedPartitionedSource[str, int]):
    """Partitions x and y, three items each, one per batch."""

    def list_parts(self) -> list[str]:
        return ["x", "y"]

    def build_part(
        self, step_id: str, for_part: str, resume_state: int | None
    ) -> StatefulSourcePartition[str, int]:
        class Part(StatefulSourcePartition[str, int]):
            def __init__(self) -> None:
                self.at = resume_state or 0

            def next_batch(self) -> list[str]:
                if self.at >= 3:
                    raise StopIteration()
                self.at += 1
                return [f"{for_part}{self.at - 1}"]

            def snapshot(self) -> int:
                return self.at

        return Part()


class Failing(FixedPartitionedSource[int, int]):
    def list_parts(self) -> list[str]:
        return ["p"]

    def build_part(
        self, step_id: str, for_part: str, resume_state: int | None
    ) -> StatefulSourcePartition[int, int]:
        class Part(StatefulSourcePartition[int, int]):
            def next_batch(self) -> list[int]:
                raise ValueError("no input")

            def snapshot(self) -> int:
                return 0

        return Part()


@pytest.mark.spark
@pytest.mark.slow
def test_a_failing_source_on_spark_is_a_bytewax_runtime_error_naming_the_step() -> None:
    flow = Dataflow("f")
    op.output("out", op.input("inp", flow, Failing()), TestingSink([]))
    with pytest.raises(
        BytewaxRuntimeError, match=r"error calling `next_batch` in step f.inp: ValueError: no input"
    ):
        run_main(flow, _target="spark")


@pytest.mark.spark
def test_an_unpicklable_source_names_its_step() -> None:
    class Holding(Fixed):
        def __init__(self) -> None:
            self.lock = threading.Lock()

    flow = Dataflow("f")
    s = op.input("inp", flow, Holding())
    with pytest.raises(TypeError, match=r"step 'f.inp': the source .* cannot be pickled"):
        to_dataframe(s, streaming=True)


def _lines_query(folder: Path) -> Any:
    flow = Dataflow("lines")
    s = op.input("inp", flow, Lines(folder, ["a", "b"]))
    return to_dataframe(s, Types.STRING(), streaming=True, max_batches_per_trigger=1)


@pytest.mark.spark
@pytest.mark.slow
def test_a_streaming_query_restarted_from_its_checkpoint_resumes_every_partition(tmp_path: Path) -> None:
    from fs_compat.spark import spark_session

    spark = spark_session()
    data, checkpoint, sink = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    _files(data, {"a": ["a0", "a1", "a2"], "b": ["b0"]})
    out = _lines_query(data)
    assert out.isStreaming
    assert len(run_to_parquet(out, checkpoint, sink)) == 2  # one next_batch per partition per micro-batch
    first = Counter(r[0] for r in spark.read.parquet(str(sink)).collect())
    assert first == Counter(["a0", "a1", "a2", "b0"])

    # New lines, and a new query from the same checkpoint: only the new lines.
    _files(data, {"a": ["a3", "END"], "b": ["b1", "b2"]})
    run_to_parquet(_lines_query(data), checkpoint, sink)
    assert Counter(r[0] for r in spark.read.parquet(str(sink)).collect()) == first + Counter(
        ["a3", "b1", "b2"]
    )


class Printer(DynamicSink[str]):
    """Appends each batch, a line per item, to ``<folder>/<worker>``."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)

    def build(self, step_id: str, worker_index: int, worker_count: int) -> StatelessSinkPartition[str]:
        path = f"{self.folder}/{worker_index}-of-{worker_count}"

        class Part(StatelessSinkPartition[str]):
            def write_batch(self, items: list[str]) -> None:
                with open(path, "a") as f:
                    f.writelines(f"{item}\n" for item in items)

        return Part()


def _written(folder: Path) -> dict[str, list[str]]:
    return {p.name: p.read_text().splitlines() for p in sorted(folder.iterdir())}


@pytest.mark.spark
@pytest.mark.slow
def test_sinks_are_written_by_spark_tasks_in_a_batch(tmp_path: Path) -> None:
    flow = Dataflow("f")
    s = op.input("inp", flow, Fixed())
    items = to_dataframe(s)
    assert not items.isStreaming
    (tmp_path / "dyn").mkdir()
    to_sink(items, "out", Printer(tmp_path / "dyn"), parallelism=2).save()
    dyn = _written(tmp_path / "dyn")
    assert set(dyn) <= {"0-of-2", "1-of-2"}
    assert sorted(line for lines in dyn.values() for line in lines) == ["x0", "x1", "x2", "y0", "y1", "y2"]

    # A FixedPartitionedSink: each item to the partition part_fn picks, in order per partition.
    keyed = to_dataframe(op.map("kv", s, lambda x: (x[0], x)))
    (tmp_path / "fixed").mkdir()
    to_sink(keyed, "out", DirSink(tmp_path / "fixed", 2)).save()
    fixed = _written(tmp_path / "fixed")
    assert sorted(fixed.values()) == [["x0", "x1", "x2"], ["y0", "y1", "y2"]]

    with pytest.raises(ValueError, match="one binary column `value`"):
        to_sink(to_dataframe(s, Types.STRING()), "out", Printer(tmp_path))


class FailingDirSink(DirSink):
    """A ``DirSink`` whose partition fails once, after writing a batch holding ``item``, while
    ``<armed>`` exists."""

    def __init__(self, folder: Path, armed: Path, item: str) -> None:
        super().__init__(folder, 2)
        self.armed = str(armed)
        self.item = item

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> Any:
        part = super().build_part(step_id, for_part, resume_state)
        armed, item = Path(self.armed), self.item
        write = part.write_batch

        def write_then_fail(values: list[str]) -> None:
            write(values)
            if item in values and armed.exists():
                armed.unlink()
                raise RuntimeError("planned failure")

        part.write_batch = write_then_fail
        return part


@pytest.mark.spark
@pytest.mark.slow
def test_a_streaming_fixed_partitioned_sink_resumes_each_partition_after_a_failure(tmp_path: Path) -> None:
    data, checkpoint, out = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    _files(data, {"a": ["a0", "a1", "a2", "a3"], "b": ["b0", "b1", "b2", "b3"]})
    out.mkdir()
    armed = tmp_path / "armed"
    armed.touch()

    def start() -> Any:
        flow = Dataflow("lines")
        s = op.map("kv", op.input("inp", flow, Lines(data, ["a", "b"])), lambda x: (x[0], x))
        items = to_dataframe(s, streaming=True, max_batches_per_trigger=1)
        sink = FailingDirSink(out, armed, "a2")
        return (
            to_sink(items, "out", sink, checkpoint_location=str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )

    failed = start()
    with pytest.raises(Exception, match="planned failure"):
        failed.awaitTermination()
    # The second micro-batch failed after partition a wrote a2, a3; the restart writes the
    # micro-batch again, each sink partition resumed from the snapshot the first micro-batch left
    # (a DirSink truncates its file there): nothing lost, nothing twice.
    query = start()
    query.awaitTermination()
    assert query.exception() is None
    assert sorted(_written(out).values()) == [["a0", "a1", "a2", "a3"], ["b0", "b1", "b2", "b3"]]
