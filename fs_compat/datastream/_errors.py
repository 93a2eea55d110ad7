"""A failed job as PyFlink code catches it. PyFlink's ``env.execute()`` (and
``execute_and_collect()``) raises py4j's ``Py4JJavaError`` when a user function fails, so ported
code and tests say ``except Py4JJavaError`` / ``pytest.raises(Py4JJavaError, match=...)``. Here
the error is fs-compat's ``StepError`` (naming the step, the function, the key and the record, with
the user's exception as its cause); ``job_failure`` makes it *also* a ``Py4JJavaError`` when py4j is
installed (it comes with pyspark), without changing its message, its cause or its traceback. There
is no Java exception behind it: ``java_exception`` is None.

>>> from fs_compat.runtime import StepError
>>> error = job_failure(StepError("step 'm': function f (job.py:3) raised ValueError: bad (record 3)"))
>>> from py4j.protocol import Py4JJavaError
>>> isinstance(error, StepError), isinstance(error, Py4JJavaError), error.java_exception
(True, True, None)
>>> str(error)
"step 'm': function f (job.py:3) raised ValueError: bad (record 3)"
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from fs_compat.runtime import StepError


@functools.cache
def _step_error_class() -> type[StepError] | None:
    """``StepError`` that is also py4j's ``Py4JJavaError``; None without py4j."""
    try:
        protocol = importlib.import_module("py4j.protocol")
    except ImportError:
        return None

    def __str__(self: StepError) -> str:  # noqa: N807 - the method, defined outside its class
        return BaseException.__str__(self)  # Py4JJavaError's asks the JVM

    def __reduce__(self: StepError) -> Any:  # noqa: N807
        return (StepError, self.args, self.__dict__ or None)  # unpickles as a plain StepError

    namespace = {
        "__doc__": StepError.__doc__,
        "__module__": __name__,
        "__str__": __str__,
        "__reduce__": __reduce__,
        # Py4JJavaError's attributes, with no JVM behind them.
        "java_exception": None,
        "errmsg": property(lambda self: str(self)),
    }
    return type("StepError", (StepError, protocol.Py4JJavaError), namespace)


def job_failure(error: BaseException) -> BaseException:
    """``error``, a ``StepError`` (a user function failed), made also a ``Py4JJavaError``, as
    PyFlink raises it from ``execute()``; any other error as it is."""
    cls = _step_error_class()
    if cls is not None and type(error) is StepError:
        error.__class__ = cls
    return error
