"""Suite-wide settings, applied at import time (before any test module is collected)."""

import os

import pytest

# Jobs run on Spark by default (``execution.target``; ``fs_compat.execution``). Tests choose their target
# explicitly: the Spark tests set ``execution.target=spark`` through ``env.configure(...)``, which
# wins over this variable; everything else runs in-process, which keeps the suite fast.
os.environ.setdefault("FS_COMPAT_TARGET", "local")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``@pytest.mark.in_process(reason)``: a test that can only pass in-process (recovery,
    side effects on the test's own objects, ...). With ``FS_COMPAT_TARGET=spark`` (``run_main``
    on Spark) it is skipped as "in-process only: <reason>"; otherwise the marker does nothing."""
    spark = os.environ.get("FS_COMPAT_TARGET") == "spark"
    for item in items:
        marker = item.get_closest_marker("in_process")
        if marker is None:
            continue
        reason = marker.args[0] if len(marker.args) == 1 and not marker.kwargs else None
        if not isinstance(reason, str) or not reason:
            raise pytest.UsageError(f"{item.nodeid}: in_process takes one reason string")
        if spark:
            item.add_marker(pytest.mark.skip(reason=f"in-process only: {reason}"))
