"""Fixtures of Bytewax's ``pytests/conftest.py`` (0.21) for the in-process target."""

from datetime import UTC, datetime

from pytest import fixture

from fs_compat.bytewax.recovery import RecoveryConfig, init_db_dir


@fixture
def recovery_config(tmp_path):
    init_db_dir(tmp_path, 1)
    yield RecoveryConfig(str(tmp_path))


@fixture
def now():
    yield datetime.now(UTC)
