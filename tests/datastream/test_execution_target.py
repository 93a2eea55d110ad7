"""Where a job runs: ``execution.target`` set through ``configure``, else the ``FS_COMPAT_TARGET``
environment variable, else ``spark``. Only the resolution is tested here; no job runs."""

from __future__ import annotations

import pytest

from fs_compat.common import Configuration
from fs_compat.datastream import StreamExecutionEnvironment


def _target(env: StreamExecutionEnvironment) -> str:
    return env._target()


def test_default_target_is_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FS_COMPAT_TARGET", raising=False)
    assert _target(StreamExecutionEnvironment.get_execution_environment()) == "spark"


def test_env_var_applies_when_nothing_is_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FS_COMPAT_TARGET", "local")
    assert _target(StreamExecutionEnvironment.get_execution_environment()) == "local"


@pytest.mark.parametrize(("env_var", "configured"), [("local", "spark"), ("spark", "local")])
def test_configured_target_beats_env_var(
    monkeypatch: pytest.MonkeyPatch, env_var: str, configured: str
) -> None:
    monkeypatch.setenv("FS_COMPAT_TARGET", env_var)
    config = Configuration().set_string("execution.target", configured)
    assert _target(StreamExecutionEnvironment.get_execution_environment(config)) == configured
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(config)
    assert _target(env) == configured


def test_unknown_target_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FS_COMPAT_TARGET", raising=False)
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", "flink")
    )
    env.from_collection([1]).print()
    with pytest.raises(
        ValueError, match=r"execution.target must be 'local', 'spark' or 'spark-streaming', got 'flink'"
    ):
        env.execute()


_SHARED = [0]


class _Bump:
    def __call__(self, value: int) -> int:
        _SHARED[0] += 1
        return value


def test_local_copies_share_module_globals_after_a_spark_run_shipped_the_module() -> None:
    """A Spark run registers the job's own modules to travel by value; in-process copies of
    their functions must still see the module's globals (a test's fake clock, a counter)."""
    from fs_compat.datastream._adapters import copy_function
    from fs_compat.spark._ship import ship_user_code

    ship_user_code()
    bump = copy_function(_Bump(), "step 'bump'")
    before = _SHARED[0]
    bump(1)
    assert _SHARED[0] == before + 1
