"""``fs_compat.bytewax.connectors``: stdio, files and demo, as Bytewax 0.21.1 has them.

Checked against Bytewax 0.21.1 itself (outside the repository): the same flows give the same
items, files and errors there.
"""

from __future__ import annotations

import re
import zlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.connectors.demo import RandomMetricSource
from fs_compat.bytewax.connectors.files import CSVSource, DirSink, DirSource, FileSink, FileSource
from fs_compat.bytewax.connectors.stdio import StdOutSink
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.recovery import RecoveryConfig, init_db_dir
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main

ZERO = timedelta(0)


def _read(source: Any, **run: Any) -> list[Any]:
    out: list[Any] = []
    flow = Dataflow("read")
    op.output("out", op.input("inp", flow, source), TestingSink(out))
    run_main(flow, **run)
    return out


def _recovery(path: Path) -> RecoveryConfig:
    path.mkdir()
    init_db_dir(path, 1)
    return RecoveryConfig(str(path))


# stdio. ----------------------------------------------------------------------------------------


def test_stdout_sink_prints_str_of_each_item_on_its_own_line(capsys: pytest.CaptureFixture[str]) -> None:
    flow = Dataflow("print")
    op.output("out", op.input("inp", flow, TestingSource(["a", 1, ("k", 2.5)])), StdOutSink())
    run_main(flow)
    assert capsys.readouterr().out == "a\n1\n('k', 2.5)\n"


# Sources. --------------------------------------------------------------------------------------


def test_file_source_emits_lines_without_line_ends(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("one\ntwo\r\n\nlast")  # universal newlines; an empty line is an item
    assert _read(FileSource(path)) == ["one", "two", "", "last"]
    assert _read(FileSource(str(path), batch_size=2)) == ["one", "two", "", "last"]


@pytest.mark.in_process("recovery (run_main recovery_config)")
def test_file_source_resumes_after_the_last_line_read(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("l1\nl2\n")
    recovery = _recovery(tmp_path / "rec")
    seen = []
    for run in range(3):
        seen.append(_read(FileSource(path, batch_size=1), epoch_interval=ZERO, recovery_config=recovery))
        with path.open("a") as f:
            f.write(f"new{run}\n")
    # Each run continues at the offset the last one snapshotted: appended lines only.
    assert seen == [["l1", "l2"], ["new0"], ["new1"]]


def test_file_source_partition_snapshot_is_the_byte_offset(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("ab\ncd\nef\n")
    source = FileSource(path, batch_size=2, get_fs_id=lambda _dir: "SHARED")
    [part_name] = source.list_parts()
    assert part_name == f"SHARED::{path}"
    part = source.build_part("s", part_name, None)
    assert part.next_batch() == ["ab", "cd"]
    assert part.snapshot() == 6
    part.close()
    resumed = source.build_part("s", part_name, 6)
    assert resumed.next_batch() == ["ef"]
    with pytest.raises(StopIteration):
        resumed.next_batch()
    resumed.close()


def test_file_source_checks_its_file_system_id_and_file(tmp_path: Path) -> None:
    bad_id = "result of `get_fs_id` must not contain `::`; got 'a::b'"
    with pytest.raises(ValueError, match=re.escape(bad_id)):
        FileSource(tmp_path / "x", get_fs_id=lambda _dir: "a::b")
    # A file that does not exist has no partition: nothing to read.
    assert FileSource(tmp_path / "missing.txt").list_parts() == []
    assert _read(FileSource(tmp_path / "missing.txt")) == []
    source = FileSource(tmp_path / "x", get_fs_id=lambda _dir: "fs")
    with pytest.raises(ValueError, match="another file"):
        source.build_part("s", f"fs::{tmp_path / 'y'}", None)


def test_csv_source_emits_rows_as_dicts_and_resumes_past_the_header(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("name;n\nada;1\nbob;2\n")
    source = CSVSource(path, batch_size=1, delimiter=";")
    assert _read(source) == [{"name": "ada", "n": "1"}, {"name": "bob", "n": "2"}]
    [part_name] = source.list_parts()
    part = source.build_part("s", part_name, None)
    assert part.next_batch() == [{"name": "ada", "n": "1"}]
    offset = part.snapshot()
    part.close()
    resumed = source.build_part("s", part_name, offset)
    assert resumed.next_batch() == [{"name": "bob", "n": "2"}]  # the header still names the fields
    resumed.close()


def test_dir_source_reads_every_matching_file_as_a_partition(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a1\na2\n")
    (tmp_path / "b.txt").write_text("b1\n")
    (tmp_path / "c.log").write_text("c1\n")
    source = DirSource(tmp_path, glob_pat="*.txt", get_fs_id=lambda _dir: "fs")
    assert source.list_parts() == ["fs::a.txt", "fs::b.txt"]
    assert sorted(_read(source)) == ["a1", "a2", "b1"]
    assert sorted(_read(DirSource(tmp_path))) == ["a1", "a2", "b1", "c1"]


def test_dir_source_needs_an_existing_directory(tmp_path: Path) -> None:
    missing, file = tmp_path / "nope", tmp_path / "f.txt"
    file.write_text("")
    with pytest.raises(ValueError, match=re.escape(f"input directory `{missing}` does not exist")):
        DirSource(missing)
    with pytest.raises(ValueError, match=re.escape(f"input directory `{file}` is not a directory")):
        DirSource(file)


def test_random_metric_source_emits_count_values_at_its_interval() -> None:
    values = iter([3.0, 1.0, 4.0])
    source = RandomMetricSource("temp", interval=ZERO, count=3, next_random=lambda: next(values))
    assert source.list_parts() == ["temp"]
    assert _read(source) == [("temp", 3.0), ("temp", 1.0), ("temp", 4.0)]
    digits = _read(RandomMetricSource("d", interval=ZERO, count=20))
    assert len(digits) == 20 and all(name == "d" and 0 <= v < 10 for name, v in digits)


# Sinks. ----------------------------------------------------------------------------------------


def _write(sink: Any, items: list[Any], **run: Any) -> None:
    flow = Dataflow("write")
    op.output("out", op.input("inp", flow, TestingSource(items)), sink)
    run_main(flow, **run)


def test_file_sink_writes_values_and_a_fresh_run_starts_the_file_empty(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old content\n")
    _write(FileSink(path), [("k", "a"), ("j", "b")])
    assert path.read_text() == "a\nb\n"
    _write(FileSink(path, end=";"), [("k", "c")])
    assert path.read_text() == "c;"


@pytest.mark.in_process("recovery (run_main recovery_config)")
def test_file_sink_resumes_at_its_snapshot_without_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    recovery = _recovery(tmp_path / "rec")
    items = [("k", "a"), ("k", "b"), TestingSource.EOF(), ("k", "c")]
    _write(FileSink(path), items, epoch_interval=ZERO, recovery_config=recovery)
    assert path.read_text() == "a\nb\n"
    _write(FileSink(path), items, epoch_interval=ZERO, recovery_config=recovery)
    assert path.read_text() == "a\nb\nc\n"


def test_dir_sink_routes_keys_by_assign_file_into_the_sorted_file_names(tmp_path: Path) -> None:
    # Files named so that creation order and name order differ: index i of assign_file's result
    # (wrapped) is the i-th name in sorted order, as in Bytewax.
    sink = DirSink(tmp_path, 3, file_namer=lambda i, n: f"zz{n - i}")
    items = [(k, k.upper()) for k in "abcde"]
    _write(sink, items)
    names = sorted(f"zz{3 - i}" for i in range(3))
    expected: dict[str, str] = dict.fromkeys(names, "")
    for key, value in items:
        expected[names[zlib.adler32(key.encode()) % 3]] += value + "\n"
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == expected
    assert expected == {"zz1": "B\nE\n", "zz2": "A\nD\n", "zz3": "C\n"}


def test_dir_sink_custom_assignment_and_default_names(tmp_path: Path) -> None:
    _write(DirSink(tmp_path, 2, assign_file=lambda k: int(k)), [("0", "x"), ("1", "y"), ("2", "z")])
    assert (tmp_path / "part_0").read_text() == "x\nz\n"
    assert (tmp_path / "part_1").read_text() == "y\n"


def test_partitioned_sinks_need_key_value_items(tmp_path: Path) -> None:
    expected = "step write.out requires `(key, value)` 2-tuple from upstream for routing; got a `str` instead"
    with pytest.raises(TypeError, match=re.escape(expected)):
        _write(FileSink(tmp_path / "out.txt"), ["not keyed"])


# On Spark. -------------------------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.classic_only  # Connect slice: README
def test_files_in_and_out_on_spark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "in.csv").write_text("user,n\na,1\nb,2\na,3\n")

    def count(total: int | None, row: dict[str, str]) -> tuple[int, str]:
        total = (total or 0) + int(row["n"])
        return total, f"{row['user']}={total}"

    files = {}
    for target in ("local", "spark"):
        out_dir = tmp_path / target
        out_dir.mkdir()
        flow = Dataflow("files")
        s = op.input("inp", flow, CSVSource(tmp_path / "in.csv", batch_size=1))
        s = op.stateful_map("sum", op.key_on("key", s, lambda row: row["user"]), count)
        op.output("out", s, DirSink(out_dir, 2))
        op.output("print", op.map("fmt", s, str), StdOutSink())
        run_main(flow, _target=target)
        files[target] = {p.name: p.read_text() for p in out_dir.iterdir()}
        assert capsys.readouterr().out == "('a', 'a=1')\n('b', 'b=2')\n('a', 'a=4')\n"
    assert files["spark"] == files["local"]
    assert sorted("".join(files["local"].values()).split()) == ["a=1", "a=4", "b=2"]
