"""Fixtures of the Bytewax suite: a one-partition recovery store for ``run_main(recovery_config=...)``."""

from pytest import fixture

from fs_compat.bytewax.recovery import RecoveryConfig, init_db_dir


@fixture
def recovery_config(tmp_path):
    init_db_dir(tmp_path, 1)
    yield RecoveryConfig(str(tmp_path))
