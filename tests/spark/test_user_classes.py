"""A record of a class from the job's own code (a dataclass in the job file, or in a module of the
job's that is not installed) is, on Spark's workers, the class the job's functions see: its
``isinstance`` and ``==`` hold after a shuffle, in keyed state and from a source, as in-process,
on ``spark`` and on ``spark-streaming`` (whose query restarts from its checkpoint halfway, in the
same driver process).

PySpark ships the functions (and, by value, the classes they name) with its own copy of
cloudpickle; fs-compat pickles records and state values with ``cloudpickle``. Each keeps a
registry that gives a class shipped by value one id, so that every copy unpickled in a process is
one class; two registries gave the class two ids, so a worker held two classes of one name and
``isinstance(record, Order)`` was False (a filter dropped every record, a Bytewax flow counted
wrong).
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fs_compat.cli import main

pytestmark = [pytest.mark.spark, pytest.mark.slow]

PYFLINK_JOB = """\
from dataclasses import dataclass

from fs_compat.common import Types
from fs_compat.datastream import MapFunction, RuntimeContext, StreamExecutionEnvironment
from fs_compat.datastream.state import ValueStateDescriptor


@dataclass(frozen=True)
class Order:
    user: str
    amount: int


class Last(MapFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.last = runtime_context.get_state(ValueStateDescriptor("last", Types.PICKLED_BYTE_ARRAY()))

    def map(self, order):
        prev = self.last.value()
        self.last.update(order)
        kind = "none" if prev is None else isinstance(prev, Order)
        return Order(order.user, order.amount + 100), kind


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
orders = [Order(u, n) for n, u in enumerate("abcabcaab")]
(
    env.from_collection(orders)
    .filter(lambda o: isinstance(o, Order))
    .key_by(lambda o: o.user)
    .map(Last())
    .filter(lambda pair: isinstance(pair[0], Order) and pair[0] == Order(pair[0].user, pair[0].amount))
    .map(lambda pair: f"{pair[0].user} {pair[0].amount} prev={pair[1]}")
    .print()
)
env.execute("orders")
"""


def _printed(out: str) -> list[str]:
    return sorted(re.sub(r"^\d+> ", "", line) for line in out.splitlines() if " prev=" in line)


def test_a_dataclass_of_the_job_file_is_one_class_on_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("orders_job.py").write_text(PYFLINK_JOB)
    printed = {}
    for target in ("local", "spark", "spark-streaming"):
        assert main(["run", "--target", target, "orders_job.py"]) == 0
        printed[target] = _printed(capsys.readouterr().out)
    users = "abcabcaab"
    expected = sorted(
        f"{u} {n + 100} prev={'none' if users.index(u) == n else True}" for n, u in enumerate(users)
    )
    assert printed["local"] == expected
    assert printed["spark"] == expected
    assert printed["spark-streaming"] == expected


BYTEWAX_MODULE = """\
from dataclasses import astuple, dataclass

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.testing import TestingSink, TestingSource


@dataclass(frozen=True)
class Event:
    user: str
    n: int


@dataclass
class Tally:
    count: int = 0
    total: int = 0


def tally(state, event):
    if state is not None and not isinstance(state, Tally):
        raise TypeError(f"state is a {type(state)!r}, not Tally")
    state = state or Tally()
    state = Tally(state.count + 1, state.total + event.n)
    return state, (event.user, state)


def build(events, out):
    flow = Dataflow("tally")
    inp = op.input("inp", flow, TestingSource(events))
    kept = op.filter("events", inp, lambda e: isinstance(e, Event))
    keyed = op.key_on("key", kept, lambda e: e.user)
    tallies = op.stateful_map("tally", keyed, tally)
    pairs = op.map("pair", tallies, lambda kv: kv[1])
    whole = op.filter("whole", pairs, lambda p: isinstance(p[1], Tally) and p[1] == Tally(*astuple(p[1])))
    op.output("out", whole, TestingSink(out))
    return flow
"""


@pytest.fixture
def job_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A module of the job's own, importable from the job's folder but not installed (so
    fs-compat ships it by value, as PySpark ships ``__main__``)."""
    name = f"tally_flow_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(BYTEWAX_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    yield module
    sys.modules.pop(name, None)


def _tally(module: Any, target: str, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    from fs_compat.bytewax.testing import run_main

    monkeypatch.setenv("FS_COMPAT_TARGET", target)
    events = [module.Event(u, n) for n, u in enumerate("abcabcaab")]
    out: list[Any] = []
    run_main(module.build(events, out))
    # what comes back to the driver is the module's own class too
    assert all(isinstance(t, module.Tally) for _, t in out), [type(t) for _, t in out]
    return sorted((user, t.count, t.total) for user, t in out)


def test_a_dataclass_of_a_job_module_is_one_class_on_the_workers(
    job_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = [("a", 1, 0), ("a", 2, 3), ("a", 3, 9), ("a", 4, 16)]
    b = [("b", 1, 1), ("b", 2, 5), ("b", 3, 13)]
    expected = sorted([*a, *b, ("c", 1, 2), ("c", 2, 7)])
    assert _tally(job_module, "local", monkeypatch) == expected
    assert _tally(job_module, "spark", monkeypatch) == expected
    assert _tally(job_module, "spark-streaming", monkeypatch) == expected


RESTART_JOB = """\
import sys
from dataclasses import dataclass
from pathlib import Path

from fs_compat.common import Types
from fs_compat.datastream import MapFunction, RuntimeContext, StreamExecutionEnvironment
from fs_compat.datastream.state import ValueStateDescriptor
from fs_compat.spark import await_query, spark_session


class Ledger:
    @dataclass(frozen=True)
    class Entry:  # a class in a class: Ledger.Entry
        n: int


@dataclass(frozen=True)
class Tally:
    count: int
    total: int
    last: Ledger.Entry


class Count(MapFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.tally = runtime_context.get_state(ValueStateDescriptor("tally", Types.PICKLED_BYTE_ARRAY()))

    def map(self, row):
        prev = self.tally.value()
        same = prev is None or (
            isinstance(prev, Tally)
            and isinstance(prev.last, Ledger.Entry)
            and prev == Tally(prev.count, prev.total, Ledger.Entry(prev.last.n))
        )
        prev = prev or Tally(0, 0, Ledger.Entry(-1))
        self.tally.update(Tally(prev.count + 1, prev.total + row.n, Ledger.Entry(row.n)))
        return row.user, prev.count + 1, same


here = Path(sys.argv[1])
spark = spark_session()
rows = [(user, n) for n, user in enumerate("abcab")]
spark.createDataFrame(rows, "user STRING, n LONG").coalesce(1).write.parquet(str(here / "in" / sys.argv[2]))
reader = spark.readStream.schema("user STRING, n LONG").option("maxFilesPerTrigger", 1)
events = reader.parquet(str(here / "in" / "*"))
env = StreamExecutionEnvironment.get_execution_environment()
out_type = Types.ROW_NAMED(["user", "count", "same"], [Types.STRING(), Types.LONG(), Types.BOOLEAN()])
counts = env.from_dataframe(events).key_by(lambda r: r.user).map(Count(), output_type=out_type)
query = (
    counts.to_dataframe().writeStream.format("parquet")
    .option("checkpointLocation", str(here / "checkpoint"))
    .trigger(availableNow=True)
    .start(str(here / "out"))
)
await_query(query)
"""


def test_state_of_a_job_class_restored_by_a_new_driver_process_is_of_the_jobs_class(tmp_path: Path) -> None:
    """The job runs twice, each time in a driver process of its own, from one checkpoint: the
    second reads back the first's state values (instances of the job file's dataclasses, one
    defined in another class) as those classes (cloudpickle's ids for by-value classes are random
    per process; fs-compat pins them)."""
    job = tmp_path / "restart_job.py"
    job.write_text(RESTART_JOB)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": str(Path.cwd())}
    for run in ("run1", "run2"):
        done = subprocess.run(
            [sys.executable, str(job), str(tmp_path), run],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
    from fs_compat.spark import spark_session

    rows = sorted(tuple(r) for r in spark_session().read.parquet(str(tmp_path / "out")).collect())
    users = "abcab"  # each run's events: the second run's counts go on from the first's
    expected = sorted(
        (u, users[: n + 1].count(u) + run * users.count(u), True)
        for run in (0, 1)
        for n, u in enumerate(users)
    )
    assert rows == expected
