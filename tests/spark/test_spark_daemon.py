"""``fs_compat._spark_daemon``: PySpark's worker daemon, silent only about workers of cancelled
tasks (the error view's test runs a failing job at parallelism 2 through it:
``test_error_view.py``)."""

from __future__ import annotations

import pytest

from fs_compat._spark_daemon import print_exc


@pytest.mark.parametrize(
    "cancelled", [BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset")]
)
def test_a_worker_of_a_cancelled_task_ends_without_a_traceback(
    cancelled: OSError, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        raise cancelled
    except OSError:
        print_exc()
    assert capsys.readouterr().err == ""


def test_any_other_failure_of_a_worker_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        raise ValueError("the worker broke")
    except ValueError:
        print_exc()
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "ValueError: the worker broke" in err
