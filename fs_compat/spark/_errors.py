"""Failures read the same on every target: an fs-compat error raised inside a Spark task (a
``StepError`` naming the step, the function with its file:line, the key and the record; a
``StateAccessError`` ...) reaches the driver wrapped in Spark's exception (``PythonException``,
``StreamingQueryException``, over Spark Connect their ``pyspark.errors.exceptions.connect``
twins), whose text starts with Spark's wrapper and holds the task's Python traceback.
``user_error`` finds the fs-compat error in that text and gives it back as the exception it was,
with Spark's exception chained to it (nothing is lost); ``await_query`` waits on a streaming
query and raises a failure that way.
"""

from __future__ import annotations

import builtins
import importlib
import re
from typing import Any

from fs_compat.runtime import StepError

from ._session import LOGGING_ENV, VERBOSE, current_logging_mode

__all__ = ["await_query", "user_error"]

#: The packages whose exceptions are "the user's error" when a task raised them.
_PACKAGES = ("fs_compat", "fs_api", "fs_api_advanced")

#: The last line of a Python traceback that raised an exception of ``_PACKAGES``:
#: ``fs_compat.runtime._local.StepError: step 'm': ...``.
_RAISED = re.compile(
    r"^\s*(?P<module>(?:" + "|".join(_PACKAGES) + r")(?:\.\w+)*)\.(?P<name>\w+): (?P<text>.+?)\s*$",
    re.MULTILINE,
)

#: A built-in exception (``NotImplementedError: step 'src': ...``) raised by a frame of
#: ``_PACKAGES``' own code (the traceback's last ``File`` line is in one of them): fs-compat's
#: refusal of what a task cannot do, not an error in the user's code (which fs-compat wraps in a
#: ``StepError``).
_RAISED_BUILTIN = re.compile(
    r'^\s*File "[^"\n]*[/\\](?:' + "|".join(_PACKAGES) + r')[/\\][^"\n]*", line \d+, in [^\n]*\n'
    r'(?:(?![ \t]*File ")[ \t]+[^\n]*\n)*?'  # the source line, and 3.11's ^^^ markers
    r"(?P<name>[A-Z]\w*): (?P<text>.+?)\s*$",
    re.MULTILINE,
)


def user_error(exc: BaseException) -> BaseException:
    """The fs-compat error ``exc`` carries: ``exc`` itself when it is one (or carries none),
    else a new exception of the class the task raised (``StepError`` when that class cannot be
    remade from its text) whose message is the task's message. When a traceback holds several
    (one raised while handling another), the last one, the error the task ended with, is the one.

    Spark's exception stays with it: as its ``__context__``, which Python does not print (the
    terminal shows the user's error, not Spark's wrapper around it; a note says where the rest
    is), or, with verbose logging (``fs_compat.spark.logging=verbose``), as its ``__cause__``,
    printed in full before it. Raise it with ``raise error`` (not ``from``) to keep that.

    >>> spark_text = (
    ...     "[PYTHON_EXCEPTION] An exception was thrown from the Python worker: Traceback (most recent "
    ...     "call last):\\n  File \\"x.py\\", line 3, in f\\nValueError: bad\\n\\n"
    ...     "fs_compat.runtime._local.StepError: step 'm': function f (job.py:3) raised ValueError: bad "
    ...     "(key 1, record 3)\\n SQLSTATE: 38000"
    ... )
    >>> error = user_error(RuntimeError(spark_text))
    >>> type(error).__name__, str(error)
    ('StepError', "step 'm': function f (job.py:3) raised ValueError: bad (key 1, record 3)")
    >>> type(error.__context__).__name__
    'RuntimeError'
    >>> plain = KeyError("amount")
    >>> user_error(plain) is plain
    True
    """
    if type(exc).__module__.split(".")[0] in _PACKAGES:
        return exc
    text = str(exc)
    found = [(m.start("name"), m["module"], m["name"], m["text"]) for m in _RAISED.finditer(text)]
    found += [
        (m.start("name"), "builtins", m["name"], m["text"])
        for m in _RAISED_BUILTIN.finditer(text)
        if isinstance(getattr(builtins, m["name"], None), type)
    ]
    if not found:
        return exc
    _, module, name, message = max(found)
    error = _remade(module, name, message)
    error.__context__ = exc
    if current_logging_mode() == VERBOSE:
        error.__cause__ = exc
    else:
        error.__suppress_context__ = True
        error.add_note(
            f"(raised in a Spark task; Spark's {type(exc).__name__} is this exception's __context__, "
            f"shown in full with {LOGGING_ENV}={VERBOSE})"
        )
    return error


def _remade(module: str, name: str, text: str) -> BaseException:
    """An exception of class ``module.name`` whose message is ``text``; a ``StepError`` when
    that class cannot be imported or its instances do not print as their message."""
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        cls = None
    if isinstance(cls, type) and issubclass(cls, Exception):
        error: BaseException = cls.__new__(cls)
        Exception.__init__(error, text)  # its own __init__ may take other arguments
        try:
            if str(error) == text:
                return error
        except Exception:  # a __str__ that needs attributes __init__ would set
            pass
    return StepError(text)


def await_query(query: Any, timeout: float | None = None) -> bool:
    """Wait for the streaming query ``query`` (``df.writeStream...start()``) to end, as
    ``query.awaitTermination(timeout)`` does (``timeout`` in seconds; None: until it ends), and
    return whether it ended. When it failed, raise the fs-compat error that ended it (a
    ``StepError`` naming the step, the function, the key and the record) with Spark's
    ``StreamingQueryException`` chained to it (``user_error``); a failure that is not
    fs-compat's is raised as Spark raised it."""
    try:
        if timeout is None:
            query.awaitTermination()
            return True
        return bool(query.awaitTermination(timeout))
    except Exception as exc:
        error = user_error(exc)
        if error is exc:
            raise
        raise error  # noqa: B904 - user_error chose how Spark's exception is chained
