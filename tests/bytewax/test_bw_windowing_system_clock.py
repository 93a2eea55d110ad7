# Ported from bytewax/bytewax pytests/operators/windowing/test_system_clock.py (imports changed;
# the stored upstream version imports the later `bytewax.windowing` path).
# Checked against bytewax==0.21.1 itself; ruff then respelled `timezone.utc` and `typing` generics.
from datetime import UTC, datetime

from fs_compat.bytewax.operators.windowing import UTC_MAX, _SystemClockLogic
from fs_compat.bytewax.testing import TimeTestingGetter


def test_watermark_is_end_of_time_on_eof():
    source = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=UTC))

    logic = _SystemClockLogic(source.get)
    logic.on_eof()
    assert logic.on_eof() == UTC_MAX
