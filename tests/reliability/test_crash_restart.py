"""Crash and restart: streaming jobs killed with SIGKILL at random points and started again from
their checkpoints lose nothing and duplicate nothing; a micro-batch that failed half-way runs
again from the checkpoint's state; a restart with a changed state descriptor fails before any
record is processed, and leaves the sink and the state as they were.

The jobs (``crash_job.py``): a DataStream ``KeyedProcessFunction`` with ValueStates, a ListState
and event-time timers, and a Bytewax ``stateful_map`` flow, each a Structured Streaming query
from JSON files (one file per micro-batch) to a parquet sink, with a ``checkpointLocation``.

They run as two concurrent queries in a child process (its own session and JVM: one JVM start
per run for both jobs), started in a new session; a kill is ``os.killpg(SIGKILL)`` of the child's
process group, which holds the JVM (checked before every kill; PySpark's worker daemon, in a
process group of its own, must exit by itself, and no process of a child may be left at the
end). Three kills, one of each kind in an order drawn from a seeded ``random.Random``:

- ``gate``: both jobs block (``crash_job.Gate``) on a random record of one of their next three
  micro-batches; the kill comes when both are blocked, in the middle of a micro-batch (checked:
  the checkpoint's ``offsets/`` has one entry more than its ``commits/``);
- ``commit``: right after one job's checkpoint commits a random micro-batch (one of its next
  three);
- ``sink-log``: as soon as the other job's sink log (``_spark_metadata``) holds a random
  micro-batch, which is, when the kill wins the race, before the checkpoint commits it (the
  restart then re-runs the micro-batch, and the sink skips it).

In the ``commit`` and ``sink-log`` runs the job the kill does not wait for is gated as in
``gate`` runs, so that it cannot run far ahead: it is killed blocked, or wherever it got to. The
test prints where each kill found each job (``CRASH-RESTART {...}``).

After the last, uninterrupted run, each sink (read with ``spark.read.parquet``, which honours
the sink log) must equal the sink of an uninterrupted reference run of the same job in this
process, row for row with multiplicities, and hold each key's final state as computed without
Spark. The other two tests run their queries in this process's session.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import crash_job
import pytest
from pyspark.errors import StreamingQueryException

from fs_compat.spark import spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SEED = 20240607
JOBS = ("datastream", "bytewax")
CHILD = Path(__file__).with_name("crash_job.py")
POLL_S = 0.005
RUN_DEADLINE_S = 420.0
EXIT_DEADLINE_S = 60.0


# Processes. ------------------------------------------------------------------------------------


def _session_members(sid: int) -> list[tuple[int, int, str]]:
    """``(pid, process group, command line)`` of the live processes of session ``sid``."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()  # state ppid pgrp session ...
        if fields[0] != "Z" and int(fields[3]) == sid:
            members.append((int(entry), int(fields[2]), cmd))
    return members


class Children:
    """Child processes of a test, each started in its own session; at teardown, none of their
    processes may be left (any that are get killed, by pid, and fail the test)."""

    def __init__(self, tmp: Path, child: Path = CHILD) -> None:
        self.tmp = tmp
        self.child = child
        self.sessions: list[int] = []

    def start(self, name: str, args: list[str]) -> tuple[subprocess.Popen[bytes], Path]:
        log = self.tmp / f"{name}.log"
        env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONUNBUFFERED": "1"}
        for inherited in ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET"):  # the child's own JVM
            env.pop(inherited, None)
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, str(self.child), *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        self.sessions.append(proc.pid)
        return proc, log

    def leftovers(self) -> list[tuple[int, int, str]]:
        return [m for sid in self.sessions for m in _session_members(sid)]


@pytest.fixture
def children(tmp_path: Path) -> Iterator[Children]:
    found = Children(tmp_path)
    yield found
    left = found.leftovers()
    for pid, _, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"processes of the killed children were left running: {left}"


def _tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def _wait_for(condition: Callable[[], bool], proc: subprocess.Popen[bytes], log: Path, what: str) -> None:
    """Poll ``condition`` until it holds; fail if the child exits first or the deadline passes."""
    deadline = time.monotonic() + RUN_DEADLINE_S
    while not condition():
        if proc.poll() is not None:
            pytest.fail(f"the child exited ({proc.returncode}) before {what}:\n{_tail(log)}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {RUN_DEADLINE_S} s:\n{_tail(log)}")
        time.sleep(POLL_S)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's process group, which must hold its JVM; then wait until every
    process of its session is gone (PySpark's worker daemon, in a process group of its own,
    exits when the JVM's pipe closes)."""
    members = _session_members(proc.pid)
    jvms = [(pid, group) for pid, group, cmd in members if "java" in cmd.split(" ", 1)[0]]
    assert jvms, f"no JVM among the child's processes: {members}"
    assert all(group == proc.pid for _, group in jvms), f"a JVM outside the process group: {members}"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=EXIT_DEADLINE_S)
    _wait_until_gone(proc.pid)


def _wait_until_gone(sid: int) -> None:
    """Wait until no process of session ``sid`` (an ended child's) is left."""
    deadline = time.monotonic() + EXIT_DEADLINE_S
    while left := _session_members(sid):
        assert time.monotonic() < deadline, f"still running {EXIT_DEADLINE_S} s after the child ended: {left}"
        time.sleep(POLL_S * 10)


# Progress, read from the checkpoint and the sink log. --------------------------------------------


def _source_offset(checkpoint: Path) -> int:
    """The file source's log offset (the index of the last file read) of the checkpoint's last
    planned micro-batch."""
    offsets = checkpoint / "offsets"
    last = offsets / str(max(_ids(offsets)))
    return int(json.loads(last.read_text().splitlines()[-1])["logOffset"])


def _ids(folder: Path) -> set[int]:
    """The batch ids of a metadata log folder (``offsets``, ``commits``, ``_spark_metadata``)."""
    if not folder.is_dir():
        return set()
    return {int(name) for name in os.listdir(folder) if name.isdigit()}


class Progress:
    """Where job ``mode`` stands: batches planned (offsets), committed, in the sink log."""

    def __init__(self, workdir: Path, mode: str) -> None:
        self.checkpoint, self.sink, self.gate = crash_job.job_paths(workdir, mode)

    def offsets(self) -> int:
        return len(_ids(self.checkpoint / "offsets"))

    def commits(self) -> int:
        return len(_ids(self.checkpoint / "commits"))

    def sink_log(self) -> int:
        return len(_ids(self.sink / "_spark_metadata"))

    def snapshot(self) -> dict[str, int]:
        return {"offsets": self.offsets(), "commits": self.commits(), "sink_log": self.sink_log()}


def _start(spark: Any, out: Any, checkpoint: Path, sink: Path) -> Any:
    """``crash_job.start`` in this process's shared session, with as few shuffle partitions as
    the child uses (a query copies the session's settings when it starts)."""
    key = "spark.sql.shuffle.partitions"
    saved = spark.conf.get(key)
    spark.conf.set(key, crash_job.CHILD_SETTINGS[key])
    try:
        return crash_job.start(out, checkpoint, sink)
    finally:
        spark.conf.set(key, saved)


# Results. ----------------------------------------------------------------------------------------


def _freeze(value: Any) -> Any:
    return tuple(_freeze(v) for v in value) if isinstance(value, (list, tuple)) else value


def _sink_rows(spark: Any, sink: Path) -> Counter[Any]:
    return Counter(_freeze(r) for r in spark.read.parquet(str(sink)).collect())


def _final_states(mode: str, rows: Counter[Any]) -> dict[str, tuple[int, int, tuple[int, ...]]]:
    """Each key's (count, sum, last values) after its last record, from the sink's rows."""
    final: dict[str, tuple[int, int, tuple[int, ...]]] = {}
    for row in rows:
        if mode == "datastream":
            key, _n, count, total, last, kind = row
            if kind != "element":
                continue
        else:
            key, (_n, count, total, last) = row
        if key not in final or count > final[key][0]:
            final[key] = (count, total, last)
    return final


def _elements(mode: str, rows: Counter[Any]) -> Counter[Any]:
    """The sink's per-record rows as ``(key, n, count, sum, last values)``."""
    if mode == "datastream":
        return Counter(
            {(k, n, c, s, last): m for (k, n, c, s, last, kind), m in rows.items() if kind == "element"}
        )
    return Counter({(k, n, c, s, last): m for (k, (n, c, s, last)), m in rows.items()})


# The test. -------------------------------------------------------------------------------------


def _kill_condition(
    kind: str, progress: dict[str, Progress], blocks: dict[str, int], job: str | None, target: int
) -> tuple[Callable[[], bool], str]:
    """When to kill a run of kind ``kind``, and what that waits for."""
    if job is None:
        return lambda: all((progress[m].gate / "blocked").exists() for m in blocks), f"gates {blocks}"
    if kind == "commit":
        return lambda: progress[job].commits() >= target, f"{job}'s commit of batch {target - 1}"
    return lambda: progress[job].sink_log() >= target, f"{job}'s sink log of batch {target - 1}"


def _plan(rng: random.Random) -> list[tuple[str, str | None]]:
    """Three kills, one of each kind, in random order; the ``commit`` and ``sink-log`` kills
    wait for one job each (a random one for the first, the other for the second)."""
    kinds = ["gate", "commit", "sink-log"]
    rng.shuffle(kinds)
    jobs = iter(rng.sample(JOBS, len(JOBS)))
    return [(kind, None if kind == "gate" else next(jobs)) for kind in kinds]


@pytest.mark.classic_only  # Connect slice: README
def test_jobs_killed_at_three_random_points_lose_and_duplicate_nothing(
    tmp_path: Path, children: Children
) -> None:
    spark = spark_session()
    files = crash_job.events()
    source, workdir = tmp_path / "events", tmp_path / "crashed"
    crash_job.write_events(source, files)
    started = time.monotonic()

    # The reference: an uninterrupted run of each job in this process, alongside the child's.
    reference = {
        mode: _start(
            spark,
            crash_job.output(mode, spark, source, crash_job.Gate(None, None)),
            tmp_path / "reference" / mode / "checkpoint",
            tmp_path / "reference" / mode / "sink",
        )
        for mode in JOBS
    }

    rng = random.Random(SEED)
    progress = {mode: Progress(workdir, mode) for mode in JOBS}
    kills: list[dict[str, Any]] = []
    for run, (kind, job) in enumerate(_plan(rng)):
        committed = {mode: progress[mode].commits() for mode in JOBS}
        args = [str(source), str(workdir)]
        # Every job but the one the kill waits for blocks on a random record of one of its next
        # three micro-batches (so that no job runs far ahead of the kill).
        blocks: dict[str, int] = {}
        for mode in JOBS:
            if mode != job:
                assert committed[mode] < len(files), f"{mode} has no input left to block in"
                batch = rng.randint(committed[mode], min(committed[mode] + 2, len(files) - 1))
                blocks[mode] = files[batch][rng.randrange(len(files[batch]))][1]
                args += ["--block", f"{mode}:{blocks[mode]}"]
        target = 0
        if job is not None:
            target = min(committed[job] + rng.randint(1, 3), len(files) - 1)
            assert target > committed[job], f"no input left for a {kind} kill of {job}: {committed}"
        proc, log = children.start(f"run-{run}", args)
        condition, what = _kill_condition(kind, progress, blocks, job, target)
        _wait_for(condition, proc, log, what)
        blocked = [mode for mode in blocks if (progress[mode].gate / "blocked").exists()]
        at_kill = {mode: progress[mode].snapshot() for mode in JOBS}  # a blocked job stays put
        _kill(proc)
        for mode in blocked:
            (progress[mode].gate / "blocked").unlink()
            # Killed in the middle of a micro-batch: planned, not committed.
            assert at_kill[mode]["offsets"] == at_kill[mode]["commits"] + 1, at_kill
        if kind == "gate":
            assert blocked == list(blocks)
        kills.append(
            {
                "kind": kind,
                "job": job,
                "target": target,
                "blocks": blocks,
                "blocked": blocked,
                "at_kill": at_kill,
                "mid_batch": [m for m in JOBS if at_kill[m]["offsets"] > at_kill[m]["commits"]],
                "sink_ahead": [m for m in JOBS if at_kill[m]["sink_log"] > at_kill[m]["commits"]],
            }
        )

    proc, log = children.start("final", [str(source), str(workdir)])
    deadline = time.monotonic() + RUN_DEADLINE_S
    while proc.poll() is None:
        assert time.monotonic() < deadline, f"the last run did not finish:\n{_tail(log)}"
        time.sleep(POLL_S * 10)
    assert proc.returncode == 0, _tail(log)
    assert "DONE" in log.read_text()
    _wait_until_gone(proc.pid)
    for query in reference.values():
        query.awaitTermination()
        assert query.exception() is None
    elapsed = time.monotonic() - started
    report = json.dumps({"kills": kills, "elapsed_s": round(elapsed, 1)}, default=str)
    print(f"\nCRASH-RESTART {report}")

    expected_elements = Counter((k, n, c, s, last) for k, n, c, s, last in crash_job.expected_elements(files))
    for mode in JOBS:
        crashed = _sink_rows(spark, progress[mode].sink)
        uninterrupted = _sink_rows(spark, tmp_path / "reference" / mode / "sink")
        assert crashed == uninterrupted, f"{mode}: {report}"
        assert max(crashed.values()) == 1, f"{mode}: duplicated rows"
        assert _elements(mode, crashed) == expected_elements, mode
        assert _final_states(mode, crashed) == crash_job.expected_final_state(files), mode
        # Every planned micro-batch was committed, and the last one read up to the last file. (A
        # kill between Spark's file-source log and its offset log makes the next micro-batch take
        # two files despite maxFilesPerTrigger=1, so the count of batches is not the count of files.)
        assert progress[mode].commits() == progress[mode].offsets(), mode
        assert _source_offset(progress[mode].checkpoint) == len(files) - 1, mode
    timers = [r for r in _sink_rows(spark, progress["datastream"].sink) if r[-1] == "timer"]
    assert len(timers) > len(files), "the event-time timers fired"


# A changed state descriptor. -------------------------------------------------------------------


def _run(
    spark: Any, source: Path, checkpoint: Path, sink: Path, gate: crash_job.Gate, count_type: str
) -> None:
    """One run of the DataStream job until its input is used up (raises if the query fails)."""
    query = _start(spark, crash_job.output("datastream", spark, source, gate, count_type), checkpoint, sink)
    query.awaitTermination()


def _state_rows(spark: Any, checkpoint: Path) -> list[Any]:
    """The query's state store as of its last committed micro-batch (Spark's state reader; the
    key-group rows are the ``ValueState`` named "kg" of the keyed step's stateful operator)."""
    reader = spark.read.format("statestore").option("stateVarName", "kg")
    return sorted(reader.load(str(checkpoint)).collect())


@pytest.mark.classic_only  # Connect slice: README
def test_restart_with_a_changed_state_descriptor_fails_before_any_record_is_processed(
    tmp_path: Path,
) -> None:
    spark = spark_session()
    source, checkpoint, sink, witness = (tmp_path / n for n in ("events", "checkpoint", "sink", "seen"))
    files = crash_job.events(n_files=2, per_file=6)
    crash_job.write_events(source, files)
    _run(spark, source, checkpoint, sink, crash_job.Gate(None, None), "long")
    before, state_before = _sink_rows(spark, sink), _state_rows(spark, checkpoint)
    committed = _ids(checkpoint / "commits")
    # Two micro-batches with input, and maybe one without after them for Spark's watermark
    # (transformWithState's stateful operator asks for it).
    assert len(committed) in (2, 3) and state_before

    # More input, for keys with state and for a new key, and the job now declares "count" as a
    # STRING: the restored key groups refuse it.
    last_ms = max(ms for rows in files for _, _, ms in rows)
    more = [[("ka", 100, last_ms + 100), ("new", 101, last_ms + 200), ("kb", 102, last_ms + 300)]]
    crash_job.write_events(source, more, first=len(files))
    witness.mkdir()
    changed = crash_job.Gate(None, str(witness), witness=True)
    with pytest.raises(StreamingQueryException) as info:
        _run(spark, source, checkpoint, sink, changed, "string")
    message = str(info.value)
    # The state, then its old type (the codec Types.LONG() gives), then the new one.
    assert re.search(r"state 'count'.*IntCodec\(\).*StringCodec\(\)", message), message
    # Nothing of the failed micro-batch is visible: no rows in the sink, no commit, the state
    # as it was; and no record of a key with state reached the job (a record of the new key may
    # have, in a key group without state, before the task failed: its output was never committed).
    assert _sink_rows(spark, sink) == before
    assert _ids(checkpoint / "commits") == committed
    assert _ids(checkpoint / "offsets") == committed | {max(committed) + 1}  # the one that failed
    assert _state_rows(spark, checkpoint) == state_before
    seen = {int(name.split("-")[1]) for name in os.listdir(witness)}
    assert seen <= {101}, seen
    print(f"\nCHANGED-DESCRIPTOR records the failed run's job saw: {sorted(seen)}")

    # Back to the original descriptor: the micro-batch runs as if the failed run never happened.
    _run(spark, source, checkpoint, sink, crash_job.Gate(None, None), "long")
    after = _sink_rows(spark, sink)
    assert max(after.values()) == 1
    elements = _elements("datastream", after)
    assert elements == Counter(crash_job.expected_elements([*files, *more]))
    assert _final_states("datastream", after) == crash_job.expected_final_state([*files, *more])


# A task that fails half-way. -------------------------------------------------------------------


def test_a_failed_micro_batch_rerun_in_the_same_process_counts_every_record_once(tmp_path: Path) -> None:
    """A micro-batch whose task fails on a record, after other tasks of it have written their key
    groups' state, and the same queries started again from their checkpoints in this process:
    Python workers that ran the micro-batch's other tasks are reused and may hold those key
    groups as the failed attempt left them; the re-run must start from the checkpoint's state."""
    spark = spark_session()
    files = crash_job.events(n_files=2, per_file=8)
    source = tmp_path / "events"
    crash_job.write_events(source, files)
    failing = files[1][5][1]  # a record of the second micro-batch (the first is committed)
    outputs, paths = {}, {}
    for mode in JOBS:
        checkpoint, sink, gate = crash_job.job_paths(tmp_path, mode)
        gate.mkdir(parents=True)
        (gate / "armed").touch()
        outputs[mode] = crash_job.output(
            mode, spark, source, crash_job.Gate(None, str(gate), fail_at=failing)
        )
        paths[mode] = (checkpoint, sink, gate)
    first = {mode: _start(spark, outputs[mode], *paths[mode][:2]) for mode in JOBS}
    for mode, query in first.items():
        with pytest.raises(StreamingQueryException, match=f"planned failure at record n={failing}"):
            query.awaitTermination()
        assert not (paths[mode][2] / "armed").exists()
        assert _ids(paths[mode][0] / "commits") == {0}, mode
    # The same DataFrames (the same plan, the same query ids: what the workers' caches are keyed by).
    again = {mode: _start(spark, outputs[mode], *paths[mode][:2]) for mode in JOBS}
    for query in again.values():
        query.awaitTermination()
    for mode in JOBS:
        rows = _sink_rows(spark, paths[mode][1])
        assert max(rows.values()) == 1, mode
        assert _elements(mode, rows) == Counter(crash_job.expected_elements(files)), mode
        assert _final_states(mode, rows) == crash_job.expected_final_state(files), mode


# A bigger job: two keyed steps, a connect and a broadcast. ----------------------------------------


@pytest.mark.classic_only  # Connect slice: README
def test_a_job_with_two_keyed_steps_a_connect_and_a_broadcast_killed_twice_gives_the_batch_output(
    tmp_path: Path, children: Children
) -> None:
    """``crash_job.whole_job`` from a file source, killed in the middle of a micro-batch (at a
    gate) and again right after a commit, then run to the end: its output is the batch target's
    on the same events, nothing lost, nothing duplicated, and the timers of both keyed steps
    (registered before a kill, fired after it) are in it."""
    spark = spark_session()
    files = crash_job.events()
    files = [*files, crash_job.whole_end(files)]
    source, workdir = tmp_path / "events", tmp_path / "crashed"
    crash_job.write_events(source, files)
    progress = Progress(workdir, "whole")
    args = [str(source), str(workdir), "--jobs", "whole"]

    blocked_at = files[2][3][1]  # a record of the third file: two micro-batches are committed
    proc, log = children.start("gate", [*args, "--block", f"whole:{blocked_at}"])
    _wait_for(lambda: (progress.gate / "blocked").exists(), proc, log, f"the gate at n={blocked_at}")
    at_gate = progress.snapshot()
    _kill(proc)
    (progress.gate / "blocked").unlink()
    assert at_gate["offsets"] == at_gate["commits"] + 1, at_gate  # killed mid-batch

    target = at_gate["commits"] + 2
    proc, log = children.start("commit", args)
    _wait_for(lambda: progress.commits() >= target, proc, log, f"the commit of batch {target - 1}")
    _kill(proc)

    proc, log = children.start("final", args)
    deadline = time.monotonic() + RUN_DEADLINE_S
    while proc.poll() is None:
        assert time.monotonic() < deadline, f"the last run did not finish:\n{_tail(log)}"
        time.sleep(POLL_S * 10)
    assert proc.returncode == 0, _tail(log)
    _wait_until_gone(proc.pid)

    crashed = _sink_rows(spark, progress.sink)
    expected = Counter(tuple(r) for r in crash_job.whole_batch_output(spark, source).collect())
    assert max(crashed.values()) == 1, "duplicated rows"
    assert crashed == expected
    assert sum(1 for r in expected if r[-1] == "element") == sum(len(f) for f in files)
    timers = [r for r in expected if r[-1] == "timer"]
    assert len(timers) > len(files)  # the second step's timers, one per timer of the first
    assert any(r[4] > 0 for r in timers) and any(r[3] > 0 for r in timers)  # limits and marks
    assert progress.commits() == progress.offsets()
