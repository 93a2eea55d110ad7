"""Flink's BATCH execution mode sorts each key's records by timestamp before processing them
(``FixedLengthByteKeyComparator``: key bytes, then timestamp; a record without one counts as the
smallest), on both targets."""

from __future__ import annotations

from typing import Any

import pytest

from fs_compat.common import Configuration, Duration, Types, WatermarkStrategy
from fs_compat.common.watermark_strategy import TimestampAssigner
from fs_compat.datastream import KeyedProcessFunction, RuntimeExecutionMode, StreamExecutionEnvironment
from fs_compat.datastream.state import ListStateDescriptor


class Seen(KeyedProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.INT()))

    def process_element(self, value: Any, ctx: Any) -> Any:
        self.seen.add(value[1])
        yield (value[0], tuple(self.seen.get()))


class ThirdField(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[2])


@pytest.mark.parametrize(
    "target", ["local", pytest.param("spark", marks=[pytest.mark.spark, pytest.mark.slow])]
)
def test_batch_mode_processes_a_keys_records_in_timestamp_order(target: str) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", target))
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0)).with_timestamp_assigner(
        ThirdField()
    )
    ds = env.from_collection([("a", 1, 5), ("a", 2, 3), ("a", 3, 3), ("b", 4, 1)])
    out = ds.assign_timestamps_and_watermarks(strategy).key_by(lambda v: v[0]).process(Seen())
    assert sorted(out.execute_and_collect()) == [
        ("a", (2,)),
        ("a", (2, 3)),
        ("a", (2, 3, 1)),
        ("b", (4,)),
    ]
