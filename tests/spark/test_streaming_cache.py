"""The key groups a Spark Python worker keeps between micro-batches (``fs_compat.spark._stream``):
a cached operator instance is used only when it holds the state row's version, so a re-run
micro-batch, a query restarted from an older checkpoint, or a changed job restarted from the same
checkpoint get the checkpoint's state and the job's code; key groups a micro-batch has nothing for
are neither restored nor rewritten.

The first tests call the key-group function in this process as Spark's worker does (a copy
unpickled per call, as per task, PySpark's own ``GroupState`` for the state row, and a versioned
copy of the buckets' ``MapState`` per call, as a micro-batch sees the state store's version), so
which version the cache holds is known; the last one runs the queries on Spark."""

from __future__ import annotations

import pickle
import shutil
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pyspark import cloudpickle
from pyspark.sql import Row
from pyspark.sql.streaming.state import GroupState
from stream_query import MapStateDict, run_to_parquet

from fs_compat.common import Configuration, Types
from fs_compat.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from fs_compat.datastream.state import ValueStateDescriptor
from fs_compat.runtime import KeyEncoder, LocalConfig, OperatorNode, StateAccessError
from fs_compat.spark import spark_session
from fs_compat.spark._convert import OutputColumns
from fs_compat.spark._stream import _CACHE, _STATE_FIELDS, _KeyGroups, _spark_schema

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.classic_only]  # Connect slice: README

OUT = Types.TUPLE([Types.STRING(), Types.LONG()])


class Count(KeyedProcessFunction):  # type: ignore[type-arg]
    """Counts records per key (``step`` per record) and emits ``(key, count)``. A record
    ``(key, "read")`` only reads; ``(key, "ptimer")`` sets a processing-time timer 100 ms on,
    ``(key, "etimer")`` an event-time timer 100 ms after its timestamp; a timer emits
    ``(key, -timestamp)``; ``(key, "clear")`` clears the count and emits ``(key, 0)``."""

    def __init__(self, step: int = 1) -> None:
        self.step = step

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        key, what = value
        if what == "read":
            yield (key, self.count.value() or 0)
            return
        if what == "clear":
            self.count.clear()
            yield (key, 0)
            return
        count = (self.count.value() or 0) + self.step
        self.count.update(count)
        if what == "ptimer":
            ctx.timer_service().register_processing_time_timer(
                ctx.timer_service().current_processing_time() + 100
            )
        if what == "etimer":
            ctx.timer_service().register_event_time_timer(ctx.timestamp() + 100)
        yield (key, count)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
        yield (ctx.get_current_key(), -timestamp)


def _key_groups(step: int = 1) -> tuple[_KeyGroups, int]:
    """A job's applyInPandasWithState function as the driver makes it, and key "a"'s key group."""
    env = StreamExecutionEnvironment.get_execution_environment()
    ds = env.from_collection([("a", "x")]).key_by(lambda v: v[0]).process(Count(step), output_type=OUT)
    node = ds._node
    assert isinstance(node, OperatorNode)
    edge = node.inputs[0]
    kg = KeyEncoder(edge.key_codec, 128).locate("a")[1]
    return _KeyGroups(node, (), LocalConfig(), OutputColumns(OUT), None), kg


#: A key group's state as a micro-batch sees it: its state row, and its buckets.
Stored = tuple[tuple[Any, ...], dict[tuple[Any, ...], tuple[Any, ...]]]


def _call(
    fn: _KeyGroups,
    kg: int,
    records: list[tuple[str, str]],
    stored: Stored | None,
    now: int = 1000,
    ts: int | None = None,
) -> tuple[list[tuple[Any, ...]], Stored | None]:
    """One call as in a Spark task: ``records`` (timestamp ``ts``) and one marker (watermark
    ``ts``) for key group ``kg`` whose stored state is ``stored``; the outputs and the stored
    state after the call (None: no state row)."""
    row = None if stored is None else stored[0]
    task_copy = pickle.loads(cloudpickle.dumps(fn))  # Spark unpickles the function per task
    pdf = pd.DataFrame(
        {
            "kg": [kg] * (len(records) + 1),
            "seq": [*range(len(records)), -1],
            "v": [*(pickle.dumps(r) for r in records), None],
            "ts": [ts] * (len(records) + 1),
        }
    )
    state = GroupState(
        None if row is None else Row(*row),
        now,
        -1,
        "NoTimeout",
        False,
        False,
        row is not None,
        False,
        False,
        -1,
        b"",
        _spark_schema(_STATE_FIELDS),
    )
    buckets = state.buckets = MapStateDict({} if stored is None else stored[1])  # type: ignore[attr-defined]
    frames = list(task_copy((kg,), iter([pdf]), state))
    outs = [tuple(r) for frame in frames for r in frame.itertuples(index=False)]
    after = state.getOption
    return outs, None if after is None else (tuple(after), buckets.entries)


def _kept(fn: _KeyGroups, kg: int) -> Any:
    """The operator instance this worker (process) keeps for ``fn``'s key group ``kg``, or None.
    A call that used its cached instance leaves the same object; a restore leaves a new one."""
    group = _CACHE.groups.get((fn.plan_id, "", kg))
    return None if group is None else group.runner


def test_a_cached_key_group_is_used_only_for_the_state_version_it_holds() -> None:
    fn, kg = _key_groups()
    outs, row1 = _call(fn, kg, [("a", "x")], None)
    first = _kept(fn, kg)
    assert outs == [("a", 1)] and row1 is not None and first is not None
    outs, row2 = _call(fn, kg, [("a", "x")], row1)
    assert outs == [("a", 2)]
    assert _kept(fn, kg) is first  # the worker's cached instance, no restore

    # Micro-batch 2 again (a retried task, a restart from the checkpoint before it): the state
    # row is row1 while the cache holds row2's version.
    outs, row2_again = _call(fn, kg, [("a", "x")], row1)
    assert outs == [("a", 2)]
    restored = _kept(fn, kg)
    assert restored is not None and restored is not first  # restored from row1
    assert row2_again is not None and row2 is not None
    assert row2_again[0][1] != row1[0][1] and row2_again[0][1] != row2[0][1]  # new token
    # A restart from the checkpoint after the first run of micro-batch 2 (row2, whose version the
    # cache no longer holds) gets row2's state.
    outs, row3 = _call(fn, kg, [("a", "x")], row2)
    assert outs == [("a", 3)] and _kept(fn, kg) not in (None, first, restored)

    # The same checkpoint under a changed job (a new DataFrame, counting by 10): the new code runs
    # on the checkpoint's state, although this worker caches that very version for the old job.
    tens, _ = _key_groups(step=10)
    outs, _ = _call(tens, kg, [("a", "x")], row3)
    assert outs == [("a", 13)]


def test_a_key_group_without_records_or_due_timers_is_not_restored_or_rewritten() -> None:
    fn, kg = _key_groups()
    _, row = _call(fn, kg, [("a", "ptimer")], None, now=1000)
    assert row is not None and row[0][4] == 1100  # the header: the earliest processing-time timer
    # A new task (cold cache for this plan) with only the marker, before the timer is due.
    cold, _ = _key_groups()
    outs, after = _call(cold, kg, [], row, now=1050)
    assert (outs, after, _kept(cold, kg)) == ([], row, None)  # not restored, not rewritten
    outs, after = _call(cold, kg, [], row, now=1100)  # due: restored, fired, rewritten
    assert outs == [("a", -1100)] and _kept(cold, kg) is not None
    assert after is not None and after[0][4] is None and after[0][1] != row[0][1]

    # Read only, after a restore in another plan (a cold cache): the blob is written again only
    # if the state changed, and re-snapshotting restored state gives the same bytes.
    other, _ = _key_groups()
    outs, again = _call(other, kg, [("a", "read")], after, now=1200)
    assert outs == [("a", 1)] and _kept(other, kg) is not None
    assert again == after


def test_an_idle_key_group_learns_the_watermark_without_being_restored() -> None:
    fn, kg = _key_groups()
    _, row = _call(fn, kg, [("a", "etimer")], None, ts=100)  # an event-time timer at 200
    assert row is not None and (row[0][2], row[0][3]) == ([100], 200)  # watermarks, next_event
    kept = _kept(fn, kg)
    cold, _ = _key_groups()
    outs, after = _call(cold, kg, [], row, ts=150)  # the watermark moves to 150: not due
    assert outs == [] and _kept(cold, kg) is None
    header = row[0]
    assert after == ((header[0], header[1], [150], 200, None, False), row[1])  # only the watermark changed
    outs, fired = _call(cold, kg, [], after, ts=200)
    assert outs == [("a", -200)] and _kept(cold, kg) is not None
    assert fired is not None and (fired[0][2], fired[0][3]) == ([200], None)
    # The original plan's worker cache holds the version of ``row`` (the same token), but it has
    # not seen watermark 150: it catches up from the row before the record.
    outs, _ = _call(fn, kg, [("a", "x")], after, ts=160)
    assert outs == [("a", 2)] and _kept(fn, kg) is kept


def test_a_call_reads_and_rewrites_only_the_buckets_of_the_keys_it_touches() -> None:
    """A key group of more than ``INLINE_KEYS`` keys has its keyed state cut into buckets of its
    keys (``PER_BUCKET`` keys each on average): a call with few records reads just their keys'
    buckets and writes back the ones that changed; one with about as many records as buckets
    reads them all in one scan. A smaller group is held in its state row: no bucket at all."""
    fn, kg = _key_groups()
    encoder = KeyEncoder(fn.keyed.inputs[0].key_codec, 128)
    keys = [k for k in (f"k{i}" for i in range(200_000)) if encoder.locate(k)[1] == kg][:400]
    MapStateDict.calls.clear()
    outs, small = _call(fn, kg, [(k, "x") for k in keys[:200]], None)
    assert sorted(outs) == sorted((k, 1) for k in keys[:200]) and small is not None
    assert isinstance(pickle.loads(small[0][0])[0], bytes)  # the group's snapshot, in its row
    assert small[1] == {} and MapStateDict.calls == Counter()

    MapStateDict.calls.clear()
    outs, stored = _call(fn, kg, [(k, "x") for k in keys[200:]], small)
    assert sorted(outs) == sorted((k, 1) for k in keys[200:]) and stored is not None
    head = pickle.loads(stored[0][0])[0]  # ("buckets", depth, keys, signatures)
    assert (head[1], head[2]) == (4, 400)  # 400 keys: 16 buckets of ~25
    assert len(stored[1]) == 16 and sum(n for _blob, n in stored[1].values()) == 400
    assert MapStateDict.calls == Counter({"updateValue": 16})  # out of the row: all written

    # Another worker (a cold cache), one record: one bucket read, that bucket written.
    cold, _ = _key_groups()
    MapStateDict.calls.clear()
    outs, after = _call(cold, kg, [(keys[7], "x")], stored)
    assert outs == [(keys[7], 2)] and after is not None
    assert MapStateDict.calls == Counter({"getValue": 1, "updateValue": 1})
    changed = {b for b in stored[1] if after[1][b] != stored[1][b]}
    assert len(changed) == 1 and after[0][1] != stored[0][1]  # one bucket, and a new token

    # A read: its bucket is read, nothing is written (the same bytes), the row stays.
    other, _ = _key_groups()
    MapStateDict.calls.clear()
    outs, again = _call(other, kg, [(keys[7], "read")], after)
    assert outs == [(keys[7], 2)] and again == after
    assert MapStateDict.calls == Counter({"getValue": 1})

    # Sixteen records: about every bucket is touched, so one scan reads them all.
    dense, _ = _key_groups()
    MapStateDict.calls.clear()
    outs, last = _call(dense, kg, [(k, "x") for k in keys[:16]], after)
    assert sorted(outs) == sorted((k, 3 if k == keys[7] else 2) for k in keys[:16])
    assert MapStateDict.calls["iterator"] == 1 and MapStateDict.calls["getValue"] == 0
    assert last is not None and _kept(dense, kg) is not None  # it holds every bucket: cached


def _keys_of(fn: _KeyGroups, kg: int, n: int) -> list[str]:
    """``n`` keys of key group ``kg``."""
    encoder = KeyEncoder(fn.keyed.inputs[0].key_codec, 128)
    return [k for k in (f"k{i}" for i in range(200_000)) if encoder.locate(k)[1] == kg][:n]


def _bucketed(fn: _KeyGroups, kg: int, keys: list[str]) -> Stored:
    """Key group ``kg`` after counting each of ``keys`` once (more than ``INLINE_KEYS``: in
    buckets)."""
    _, small = _call(fn, kg, [(k, "x") for k in keys[:200]], None)
    _, stored = _call(fn, kg, [(k, "x") for k in keys[200:]], small)
    assert stored is not None and stored[1]
    return stored


def test_a_call_over_few_keys_keeps_the_other_keys_of_the_buckets_it_rewrites() -> None:
    """A call with fewer records than buckets adds to the operator only the keys that become
    current; the buckets it rewrites keep the other keys' entries as they were read."""
    fn, kg = _key_groups()
    keys = _keys_of(fn, kg, 401)
    stored = _bucketed(fn, kg, keys[:400])
    cold, _ = _key_groups()
    MapStateDict.calls.clear()
    # One key counted again, one cleared, one new; and a read of a key cleared in the same call.
    records = [(keys[7], "x"), (keys[8], "clear"), (keys[400], "x"), (keys[8], "read")]
    outs, after = _call(cold, kg, records, stored)
    assert outs == [(keys[7], 2), (keys[8], 0), (keys[400], 1), (keys[8], 0)] and after is not None
    assert MapStateDict.calls["updateValue"] <= 3 and MapStateDict.calls["iterator"] == 0
    assert pickle.loads(after[0][0])[0][2] == 400  # one key cleared, one new: 400 keys
    assert sum(n for _blob, n in after[1].values()) == 400
    # Every key read back: the untouched ones, in the buckets rewritten too, kept their counts.
    reader, _ = _key_groups()
    outs, again = _call(reader, kg, [(k, "read") for k in keys], after)
    assert dict(outs) == {**dict.fromkeys(keys, 1), keys[7]: 2, keys[8]: 0}
    assert again == after  # reads write nothing


def test_a_call_over_few_keys_that_grows_the_group_past_its_depth_rewrites_it_whole() -> None:
    """The new keys of a call with few records take the group above what its depth holds
    (``_depth_for``): every bucket is read, and the group is written anew one level deeper."""
    fn, kg = _key_groups()
    keys = _keys_of(fn, kg, 515)
    stored = _bucketed(fn, kg, keys[:510])
    assert pickle.loads(stored[0][0])[0][1:3] == (4, 510)
    cold, _ = _key_groups()
    outs, grown = _call(cold, kg, [(k, "x") for k in keys[508:]], stored)  # 2 known, 5 new
    assert sorted(outs) == sorted([(keys[508], 2), (keys[509], 2), *((k, 1) for k in keys[510:])])
    assert grown is not None and pickle.loads(grown[0][0])[0][1:3] == (5, 515)
    assert len(grown[1]) == 32 and sum(n for _blob, n in grown[1].values()) == 515
    reader, _ = _key_groups()
    outs, _ = _call(reader, kg, [(k, "read") for k in keys], grown)
    assert dict(outs) == {**dict.fromkeys(keys, 1), keys[508]: 2, keys[509]: 2}


COUNTS = Types.ROW_NAMED(["key", "count"], [Types.STRING(), Types.LONG()])


class CountPerKey(KeyedProcessFunction):  # type: ignore[type-arg]
    def __init__(self, step: int) -> None:
        self.step = step

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        count = (self.count.value() or 0) + self.step
        self.count.update(count)
        yield (value.key, count)


def test_a_bucketed_group_written_with_crc32_key_groups_is_refused_when_restored() -> None:
    """A bucketed group's header names its layout with the snapshot format: "buckets" was
    format 1's, whose keys are in other key groups (crc32). Restoring it fails naming the
    format, instead of reading its keys as absent."""
    fn, kg = _key_groups()
    keys = _keys_of(fn, kg, 400)
    row, buckets = _bucketed(fn, kg, keys)
    head, *rest = pickle.loads(row[0])
    assert head[0] == "buckets-2"
    old_row = (pickle.dumps((("buckets", *head[1:]), *rest)), *row[1:])
    cold, _ = _key_groups()
    with pytest.raises(StateAccessError, match=r"snapshot format 1, expected 2: .*by crc32"):
        _call(cold, kg, [(keys[0], "x")], (old_row, buckets))


def test_restarting_from_an_older_checkpoint_copy_in_the_same_session(tmp_path: Path) -> None:
    """Micro-batch 2 runs, then the same streaming DataFrame restarts from a copy of the checkpoint
    taken before it (same plan, same query id): the counts follow the copy, not the workers'
    caches. A second job (another plan) on the same keys runs in between."""
    spark = spark_session()
    source = tmp_path / "in"
    keys = [f"k{i}" for i in range(24)]

    def write(name: str) -> None:
        spark.createDataFrame([(k, 1) for k in keys], "key STRING, n LONG").coalesce(1).write.parquet(
            str(source / name)
        )

    def job(step: int) -> Any:
        env = StreamExecutionEnvironment.get_execution_environment()
        env.configure(Configuration().set_string("execution.target", "spark"))
        df = (
            spark.readStream.schema("key STRING, n LONG")
            .option("maxFilesPerTrigger", 1)
            .parquet(str(source / "*"))
        )
        return (
            env.from_dataframe(df)
            .key_by(lambda r: r.key)
            .process(CountPerKey(step), output_type=COUNTS)
            .to_dataframe()
        )

    def run(out: Any, checkpoint: Path, sink: Path) -> Counter[tuple[Any, ...]]:
        run_to_parquet(out, checkpoint, sink)
        # The part files (a sink started from the copied checkpoint has no metadata of batch 1).
        return Counter(tuple(r) for r in spark.read.parquet(str(sink / "part-*")).collect())

    counts, tens = job(1), job(10)
    write("1")
    assert run(counts, tmp_path / "ck", tmp_path / "out") == Counter({(k, 1): 1 for k in keys})
    shutil.copytree(tmp_path / "ck", tmp_path / "ck-before-2")
    assert run(tens, tmp_path / "ck-tens", tmp_path / "out-tens") == Counter({(k, 10): 1 for k in keys})
    write("2")
    after_2 = Counter({(k, 1): 1 for k in keys}) + Counter({(k, 2): 1 for k in keys})
    assert run(counts, tmp_path / "ck", tmp_path / "out") == after_2
    # Micro-batch 2 again, from the copy: counts of 2, not 3.
    assert run(counts, tmp_path / "ck-before-2", tmp_path / "out-again") == Counter({(k, 2): 1 for k in keys})
