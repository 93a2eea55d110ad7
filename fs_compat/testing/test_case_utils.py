"""PyFlink's ``pyflink.testing.test_case_utils`` base classes, for ported PyFlink tests."""

from __future__ import annotations

import shutil
import tempfile
import unittest
from typing import Any, ClassVar

from fs_compat.datastream import RuntimeExecutionMode as _Mode
from fs_compat.datastream import StreamExecutionEnvironment as _Env


class PyFlinkTestCase(unittest.TestCase):
    """Base of PyFlink tests: a temporary directory per test class."""

    tempdir: ClassVar[str]

    @classmethod
    def setUpClass(cls) -> None:
        cls.tempdir = tempfile.mkdtemp()

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tempdir, ignore_errors=True)

    @classmethod
    def assert_equals(cls, actual: Any, expected: Any) -> None:
        assert sorted(map(str, actual)) == sorted(map(str, expected)), f"{actual} != {expected}"


class _EnvTestCase(PyFlinkTestCase):
    """An environment in ``mode`` with parallelism 2, shared by the class (as in PyFlink)."""

    env: ClassVar[_Env]
    mode: ClassVar[_Mode]

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.env = _Env.get_execution_environment()
        cls.env.set_parallelism(2)
        cls.env.set_runtime_mode(cls.mode)


class PyFlinkStreamingTestCase(_EnvTestCase):
    """A STREAMING environment with parallelism 2, shared by the class (as in PyFlink)."""

    mode = _Mode.STREAMING


class PyFlinkBatchTestCase(_EnvTestCase):
    """A BATCH environment with parallelism 2, shared by the class (as in PyFlink)."""

    mode = _Mode.BATCH


__all__ = ["PyFlinkBatchTestCase", "PyFlinkStreamingTestCase", "PyFlinkTestCase"]
