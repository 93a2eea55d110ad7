"""PyFlink's test harness under fs_compat names: the base test cases, the collecting sink, and the
JVM helpers a PyFlink test's ``setUp`` calls (configuration through the "JVM" environment,
``get_gateway`` refusing when used)."""

from __future__ import annotations

import importlib
import os
import unittest
from unittest.mock import patch

import pytest

from fs_compat.common import Configuration
from fs_compat.common.typeinfo import Types
from fs_compat.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from fs_compat.datastream.tests.test_util import DataStreamTestSinkFunction
from fs_compat.testing.test_case_utils import (
    PyFlinkBatchTestCase,
    PyFlinkITTestCase,
    PyFlinkStreamingTestCase,
    PyFlinkTestCase,
)
from fs_compat.util.java_utils import get_j_env_configuration


def _run_case(case: type[unittest.TestCase]) -> unittest.TestResult:
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(case).run(result)
    return result


def test_streaming_and_batch_cases_share_one_environment_per_class() -> None:
    seen: dict[str, list[tuple[int, RuntimeExecutionMode, str]]] = {}

    def make(base: type[PyFlinkITTestCase]) -> type[unittest.TestCase]:
        class Case(base):  # type: ignore[misc, valid-type]
            def test_a(self) -> None:
                seen.setdefault(base.__name__, []).append(
                    (self.env.get_parallelism(), self.env._mode, self.tempdir)
                )
                assert os.path.isdir(self.tempdir)
                self.env.set_parallelism(5)  # shared: the next test of the class sees it

            def test_b(self) -> None:
                seen.setdefault(base.__name__, []).append(
                    (self.env.get_parallelism(), self.env._mode, self.tempdir)
                )

        return Case

    for base in (PyFlinkStreamingTestCase, PyFlinkBatchTestCase):
        result = _run_case(make(base))
        assert result.wasSuccessful(), result.errors + result.failures
    mode = {
        "PyFlinkStreamingTestCase": RuntimeExecutionMode.STREAMING,
        "PyFlinkBatchTestCase": RuntimeExecutionMode.BATCH,
    }
    for name, runs in seen.items():
        assert [(p, m) for p, m, _ in runs] == [(2, mode[name]), (5, mode[name])]
        assert len({d for _, _, d in runs}) == 1
        assert not os.path.exists(runs[0][2]), "tearDownClass removes the temporary directory"


def test_assert_equals_compares_as_multisets_and_sorts_in_place() -> None:
    actual, expected = [3, 1, 2], [2, 3, 1]
    PyFlinkTestCase.assert_equals(actual, expected)
    assert actual == expected == [1, 2, 3]
    with pytest.raises(AssertionError):
        PyFlinkTestCase.assert_equals([1, 1], [1, 2])
    with pytest.raises(AssertionError):
        PyFlinkTestCase.assert_equals([1], [1, 1])


def test_collecting_sink_formats_and_clears() -> None:
    env = StreamExecutionEnvironment.get_execution_environment().set_parallelism(1)
    env.configure(Configuration().set_string("execution.target", "local"))
    sink = DataStreamTestSinkFunction()
    rows = env.from_collection([("x", 7), ("y", 8)], Types.ROW([Types.STRING(), Types.INT()]))
    rows.add_sink(sink)
    env.execute("rows")
    assert sorted(sink.get_results()) == ["+I[x, 7]", "+I[y, 8]"]  # Flink's Java text
    assert sink.get_results() == []  # get_results hands the values over

    pairs = env.from_collection([("x", 7)], Types.TUPLE([Types.STRING(), Types.INT()]))
    pairs.add_sink(sink)
    env.execute("pairs")
    assert sink.get_results(True, stringify=False) == [("x", 7)]
    pairs.add_sink(sink)
    env.execute("pairs again")
    sink.clear()
    assert sink.get_results(True) == []

    rows.add_sink(sink)
    env.execute("rows as Python objects")
    assert sorted(sink.get_results(True)) == ["Row(f0='x', f1=7)", "Row(f0='y', f1=8)"]


def test_env_configuration_through_the_jvm_handle_reaches_the_environment() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    j_conf = get_j_env_configuration(env._j_stream_execution_environment)
    assert get_j_env_configuration(env._j_stream_execution_environment) is j_conf
    j_conf.setString("pekko.ask.timeout", "20 s")  # a JVM setting: kept, no effect
    j_conf.setInteger("parallelism.default", 3)
    j_conf.setString("execution.runtime-mode", "batch")
    assert env.get_parallelism() == 3
    assert env._mode is RuntimeExecutionMode.BATCH
    assert j_conf.getString("pekko.ask.timeout", None) == "20 s"
    assert j_conf.getInteger("parallelism.default", 1) == 3
    assert j_conf.containsKey("pekko.ask.timeout") and not j_conf.containsKey("nope")

    # PyFlink's wrapper: Configuration(j_configuration=...) writes through as well
    config = Configuration(j_configuration=j_conf)
    config.set_integer("python.fn-execution.bundle.size", 1).set_integer("parallelism.default", 4)
    assert env.get_parallelism() == 4
    assert j_conf.toMap()["python.fn-execution.bundle.size"] == "1"
    with pytest.raises(NotImplementedError, match="JVM"):
        j_conf.set(object(), 1)


def test_java_methods_on_the_environment_handle_name_the_jvm() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    with pytest.raises(NotImplementedError, match=r"getStreamGraph.*without a JVM"):
        env._j_stream_execution_environment.getStreamGraph(True)
    with pytest.raises(TypeError, match="fs_compat StreamExecutionEnvironment"):
        get_j_env_configuration(object())


def test_gateway_imports_and_refuses_when_used() -> None:
    gateway = importlib.import_module("fs_compat.java_gateway")  # importing is fine
    with pytest.raises(NotImplementedError, match="without a JVM"):
        gateway.get_gateway().jvm.org.apache.flink.Foo()
    java_utils = importlib.import_module("fs_compat.util.java_utils")
    with pytest.raises(NotImplementedError, match=r"to_jarray.*JVM"):
        java_utils.to_jarray(None, [])


def test_gateway_is_patchable_where_pyflinks_tests_patch_it() -> None:
    with patch("fs_compat.common.time.get_gateway", side_effect=AssertionError("Gateway requested")):
        from fs_compat.common.time import Time
        from fs_compat.datastream.state import StateTtlConfig

        config = StateTtlConfig.new_builder(Time.days(1)).cleanup_in_rocksdb_compact_filter(17).build()
        strategy = config.get_cleanup_strategies().get_rocksdb_compact_filter_cleanup_strategy()
        assert strategy.get_query_time_after_num_entries() == 17


def test_an_environment_with_its_jvm_configuration_ships_with_a_job() -> None:
    import cloudpickle

    env = StreamExecutionEnvironment.get_execution_environment()
    get_j_env_configuration(env._j_stream_execution_environment).setString("pekko.ask.timeout", "20 s")

    def uses_env(value: int) -> int:  # a function that refers to the environment ships it too
        return value + env.get_parallelism()

    p = env.get_parallelism()
    copy = cloudpickle.loads(cloudpickle.dumps(uses_env))
    assert copy(1) == 1 + p
    shipped = cloudpickle.loads(cloudpickle.dumps(env))
    j_conf = get_j_env_configuration(shipped._j_stream_execution_environment)
    assert j_conf.getString("pekko.ask.timeout", None) == "20 s"
    j_conf.setInteger("parallelism.default", p + 5)  # the copy has no environment to write to
    assert shipped.get_parallelism() == p
