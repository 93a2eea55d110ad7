"""A user function failing in a job: ``execute()`` / ``execute_and_collect()`` raise fs-compat's
``StepError`` (step, function, key, record; the user's exception as the cause), which is also
py4j's ``Py4JJavaError``, the type PyFlink raises, so ported ``except Py4JJavaError`` code and
``pytest.raises(Py4JJavaError, match=...)`` tests catch it."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from py4j.protocol import Py4JJavaError

from fs_compat.common import Configuration, Types
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.runtime import StepError


def _env(target: str = "local") -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", target))
    return env


def _failing_job(env: StreamExecutionEnvironment) -> None:
    ds = env.from_collection(
        [("a", 0), ("b", 0), ("c", 1)], type_info=Types.ROW([Types.STRING(), Types.INT()])
    )

    def flat_map_func(x: Any) -> Any:
        raise ValueError("flat_map_func error")
        yield x

    ds.key_by(lambda r: r[1], key_type=Types.INT()).flat_map(flat_map_func).print()
    env.execute("failing")


def _check(error: BaseException) -> None:
    assert isinstance(error, StepError)
    assert isinstance(error, Py4JJavaError)
    assert type(error).__name__ == "StepError"
    text = str(error)
    assert text.startswith(
        "step 'Keyed FlatMap': function _failing_job.<locals>.flat_map_func (test_job_failure.py:"
    )
    assert "raised ValueError: flat_map_func error (key 0, record Row(f0='a', f1=0))" in text
    assert error.java_exception is None  # type: ignore[attr-defined]
    assert error.errmsg == text  # type: ignore[attr-defined]


def test_a_failing_function_fails_execute_with_a_step_error_that_is_also_pyflinks_py4j_error() -> None:
    with pytest.raises(Py4JJavaError, match="flat_map_func error") as info:
        _failing_job(_env())
    _check(info.value)
    assert isinstance(info.value.__cause__, ValueError)
    # Pickled (sent to another process), it is a plain StepError with the same message.
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is StepError
    assert str(copy) == str(info.value)


def test_execute_and_collect_raises_it_too_and_other_errors_stay_as_they_are() -> None:
    env = _env()
    with pytest.raises(Py4JJavaError, match="raised ZeroDivisionError"):
        env.from_collection([1, 0]).map(lambda v: 1 // v).execute_and_collect(limit=2)
    with pytest.raises(RuntimeError, match="No operators defined") as info:
        env.execute()
    assert not isinstance(info.value, Py4JJavaError)


@pytest.mark.spark
def test_on_spark_it_is_the_same_error() -> None:
    with pytest.raises(Py4JJavaError, match="flat_map_func error") as info:
        _failing_job(_env("spark"))
    _check(info.value)


@pytest.mark.parametrize("target", ["local", pytest.param("spark", marks=pytest.mark.spark)])
def test_a_map_after_a_keyed_step_that_fails_names_the_map_and_its_record(target: str) -> None:
    # The map is chained after the keyed step: its failure names the map, not the keyed step,
    # and the record the map was given.
    env = _env(target)
    env.set_parallelism(1)
    counts = (
        env.from_collection([("a", 1), ("b", 2), ("a", 3)])
        .key_by(lambda v: v[0])
        .reduce(lambda x, y: (x[0], x[1] + y[1]))
    )
    counts.map(lambda v: 10 // (v[1] - 4)).name("divide").print()
    with pytest.raises(StepError) as info:
        env.execute()
    text = str(info.value)
    assert text.startswith("step 'divide': function "), text
    assert "raised ZeroDivisionError" in text and "record ('a', 4)" in text, text
    if target == "local":  # from Spark's workers the error comes back as its message
        assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_a_sink_after_a_chained_map_that_fails_names_the_map_and_its_record() -> None:
    from fs_compat.datastream.functions import SinkFunction

    class Refusing(SinkFunction[int]):
        def invoke(self, value: int) -> None:
            if value == 30:
                raise KeyError(f"sink refused {value!r}")

    env = _env()
    env.set_parallelism(1)
    sums = (
        env.from_collection([("a", 1), ("a", 2)])
        .key_by(lambda v: v[0])
        .reduce(lambda x, y: (x[0], x[1] + y[1]))
    )
    sums.map(lambda v: v[1] * 10).name("tenfold").add_sink(Refusing())
    with pytest.raises(StepError) as info:
        env.execute()
    text = str(info.value)
    assert text.startswith("step 'tenfold'"), text
    assert "raised KeyError: 'sink refused 30' (record ('a', 3))" in text, text
    assert isinstance(info.value.__cause__, KeyError)
