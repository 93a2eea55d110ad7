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
        """Equal as multisets: both lists sorted in place, then compared item by item (PyFlink's
        check; items must be mutually orderable)."""
        actual.sort()
        expected.sort()
        assert len(actual) == len(expected), f"{actual} != {expected}"
        assert all(x == y for x, y in zip(actual, expected, strict=True)), f"{actual} != {expected}"


class PyFlinkITTestCase(PyFlinkTestCase):
    """Base of PyFlink's integration tests: ``cls.env``, one environment shared by the tests of
    the class (PyFlink's runs on a MiniCluster; here it runs on the configured target)."""

    env: ClassVar[_Env]

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.env = _Env.get_execution_environment()


class _EnvTestCase(PyFlinkITTestCase):
    """The shared environment in ``mode`` with parallelism 2 (as in PyFlink)."""

    mode: ClassVar[_Mode]

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.env.set_parallelism(2)
        cls.env.set_runtime_mode(cls.mode)


class PyFlinkStreamingTestCase(_EnvTestCase):
    """A STREAMING environment with parallelism 2, shared by the class (as in PyFlink)."""

    mode = _Mode.STREAMING


class PyFlinkBatchTestCase(_EnvTestCase):
    """A BATCH environment with parallelism 2, shared by the class (as in PyFlink)."""

    mode = _Mode.BATCH


__all__ = ["PyFlinkBatchTestCase", "PyFlinkITTestCase", "PyFlinkStreamingTestCase", "PyFlinkTestCase"]
