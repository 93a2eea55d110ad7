# Ported from bytewax/bytewax pytests/operators/windowing/test_event_clock.py (0.21; imports
# changed).
# Checked against bytewax==0.21.1 itself; ruff then respelled `timezone.utc` and `typing` generics.
from datetime import UTC, datetime, timedelta

from fs_compat.bytewax.operators.windowing import (
    UTC_MAX,
    UTC_MIN,
    _EventClockLogic,
)
from fs_compat.bytewax.testing import TimeTestingGetter


def test_watermark_starts_at_beginning_of_time():
    source = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=UTC))

    logic = _EventClockLogic(
        source.get,
        lambda x: x,
        lambda x: x,
        timedelta(seconds=5),
    )
    assert logic.on_notify() == UTC_MIN


def test_watermark_is_item_timestamp_minus_wait():
    source = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=UTC))

    logic = _EventClockLogic(
        source.get,
        lambda x: x,
        lambda x: x,
        timedelta(seconds=5),
    )
    item_timestamp = datetime(2024, 1, 1, 0, 0, 7, tzinfo=UTC)
    logic.before_batch()
    _, found_watermark = logic.on_item(item_timestamp)
    assert found_watermark == datetime(2024, 1, 1, 0, 0, 2, tzinfo=UTC)


def test_watermark_forwards_by_system_time():
    source = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=UTC))

    logic = _EventClockLogic(
        source.get,
        lambda x: x,
        lambda x: x,
        timedelta(seconds=5),
    )
    item_timestamp = datetime(2024, 1, 1, 0, 0, 7, tzinfo=UTC)
    logic.before_batch()
    logic.on_item(item_timestamp)
    source.advance(timedelta(seconds=2))
    assert logic.on_notify() == datetime(2024, 1, 1, 0, 0, 4, tzinfo=UTC)


def test_watermark_advances_in_batch():
    source = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=UTC))

    logic = _EventClockLogic(
        source.get,
        lambda x: x,
        lambda x: x,
        timedelta(seconds=5),
    )
    logic.before_batch()
    logic.on_item(datetime(2024, 1, 1, 0, 0, 7, tzinfo=UTC))
    _, found_watermark = logic.on_item(datetime(2024, 1, 1, 0, 0, 10, tzinfo=UTC))
    assert found_watermark == datetime(2024, 1, 1, 0, 0, 5, tzinfo=UTC)


def test_watermark_does_not_reverse_in_batch():
    source = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=UTC))

    logic = _EventClockLogic(
        source.get,
        lambda x: x,
        lambda x: x,
        timedelta(seconds=5),
    )
    logic.before_batch()
    logic.on_item(datetime(2024, 1, 1, 0, 0, 7, tzinfo=UTC))
    _, found_watermark = logic.on_item(datetime(2024, 1, 1, 0, 0, 3, tzinfo=UTC))
    assert found_watermark == datetime(2024, 1, 1, 0, 0, 2, tzinfo=UTC)


def test_watermark_does_not_reverse_and_forwards_by_system_time_next_batch():
    source = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=UTC))

    logic = _EventClockLogic(
        source.get,
        lambda x: x,
        lambda x: x,
        timedelta(seconds=5),
    )
    logic.before_batch()
    logic.on_item(datetime(2024, 1, 1, 0, 0, 7, tzinfo=UTC))
    source.advance(timedelta(seconds=2))
    logic.before_batch()
    _, found_watermark = logic.on_item(datetime(2024, 1, 1, 0, 0, 3, tzinfo=UTC))
    assert found_watermark == datetime(2024, 1, 1, 0, 0, 4, tzinfo=UTC)


def test_watermark_does_not_reverse_advancing_item_is_slower_than_system_time_gap():
    source = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=UTC))

    logic = _EventClockLogic(
        source.get,
        lambda x: x,
        lambda x: x,
        timedelta(seconds=5),
    )
    logic.before_batch()
    # Watermark should be 7 - 5 = 2
    logic.on_item(datetime(2024, 1, 1, 0, 0, 7, tzinfo=UTC))
    # Watermark should be 2 + 2 = 4
    source.advance(timedelta(seconds=2))
    logic.before_batch()
    # Watermark from just this item would be 3.
    _, found_watermark = logic.on_item(datetime(2024, 1, 1, 0, 0, 8, tzinfo=UTC))
    # But must stay as 4.
    assert found_watermark == datetime(2024, 1, 1, 0, 0, 4, tzinfo=UTC)


def test_watermark_is_end_of_time_on_eof():
    source = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=UTC))

    logic = _EventClockLogic(
        source.get,
        lambda x: x,
        lambda x: x,
        timedelta(seconds=5),
    )
    logic.on_eof()
    assert logic.on_eof() == UTC_MAX


def test_watermark_doesnt_overflow_after_eof():
    source = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=UTC))

    logic = _EventClockLogic(
        source.get,
        lambda x: x,
        lambda x: x,
        timedelta(seconds=5),
    )
    logic.on_eof()
    source.advance(timedelta(seconds=2))
    assert logic.on_eof() == UTC_MAX


def test_allows_max_wait_for_system_duration_init():
    source = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=UTC))

    logic = _EventClockLogic(
        source.get,
        lambda x: x,
        lambda x: x,
        timedelta.max,
    )
    item_timestamp = datetime(2024, 1, 1, 0, 0, 7, tzinfo=UTC)
    logic.before_batch()
    _, found_watermark = logic.on_item(item_timestamp)
    assert found_watermark == UTC_MIN


def test_allows_max_wait_for_system_duration_update_does_not_regress():
    source = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=UTC))

    logic = _EventClockLogic(
        source.get,
        lambda x: x,
        lambda x: x,
        timedelta.max,
    )
    logic.before_batch()
    logic.on_item(datetime(2024, 1, 1, 0, 0, 7, tzinfo=UTC))
    source.advance(timedelta(seconds=2))
    logic.before_batch()
    _, found_watermark = logic.on_item(datetime(2024, 1, 1, 0, 0, 10, tzinfo=UTC))
    assert found_watermark == UTC_MIN + timedelta(seconds=2)
