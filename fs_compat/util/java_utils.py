"""PyFlink's ``pyflink.util.java_utils``: the helper tests call on the environment's "JVM" side.

``get_j_env_configuration(env._j_stream_execution_environment)`` gives the environment's
configuration with the Java method names PyFlink's tests use (``setString``, ``setInteger``...);
wrap it as PyFlink does with ``Configuration(j_configuration=...)``. The other helpers of that
module talk to the JVM and raise ``NotImplementedError`` naming it.
"""

from __future__ import annotations

from typing import Any, NoReturn

from fs_compat.common.internal import JavaConfiguration as _JavaConfiguration
from fs_compat.java_gateway import get_gateway as _get_gateway


def get_j_env_configuration(j_env: Any) -> _JavaConfiguration:
    """The configuration behind ``env._j_stream_execution_environment``; settings written to it
    reach the environment as ``env.configure(Configuration)`` passes them.

    >>> from fs_compat.datastream import StreamExecutionEnvironment
    >>> env = StreamExecutionEnvironment.get_execution_environment()
    >>> get_j_env_configuration(env._j_stream_execution_environment).setInteger("parallelism.default", 3)
    >>> env.get_parallelism()
    3
    """
    configuration = getattr(j_env, "_fs_compat_configuration", None)
    if not isinstance(configuration, _JavaConfiguration):
        raise TypeError(
            f"get_j_env_configuration expects env._j_stream_execution_environment of a "
            f"fs_compat StreamExecutionEnvironment, got {type(j_env).__name__}"
        )
    return configuration


def _jvm_only(name: str) -> NoReturn:
    try:
        _get_gateway()
    except NotImplementedError as e:
        raise NotImplementedError(f"{name}: {e}") from None


def add_jars_to_context_class_loader(jar_urls: Any) -> NoReturn:
    """Adds jars to the JVM's class loader: there is no JVM (``NotImplementedError``)."""
    _jvm_only("add_jars_to_context_class_loader")


def to_jarray(j_type: Any, arr: Any) -> NoReturn:
    """Builds a Java array: there is no JVM (``NotImplementedError``)."""
    _jvm_only("to_jarray")


def invoke_method(
    obj: Any, object_type: Any, method_name: str, args: Any = None, arg_types: Any = None
) -> NoReturn:
    """Invokes a Java method by reflection: there is no JVM (``NotImplementedError``)."""
    _jvm_only("invoke_method")


__all__ = ["add_jars_to_context_class_loader", "get_j_env_configuration", "invoke_method", "to_jarray"]
