"""PyFlink's ``pyflink.java_gateway``, importable so PyFlink code and tests port by imports alone.

fs-compat runs without a JVM: ``get_gateway()`` raises ``NotImplementedError`` naming what needed
it, when it is called (importing this module is fine).
"""

from __future__ import annotations

from typing import Any, NoReturn


def get_gateway() -> NoReturn:
    """PyFlink's entry to the JVM (``get_gateway().jvm...``): there is no JVM here.

    >>> get_gateway()
    Traceback (most recent call last):
    ...
    NotImplementedError: get_gateway(): fs_compat runs without a JVM (no py4j gateway, no Java classes); ...
    """
    raise NotImplementedError(
        "get_gateway(): fs_compat runs without a JVM (no py4j gateway, no Java classes); Java "
        "functions, Java watermark strategies and the JVM's job graph have no counterpart here: "
        "write the function in Python (see migration_guide/pyflink.md)"
    )


class _JvmStandIn:
    """Base of the objects that stand where PyFlink holds one of the JVM's: a public attribute
    the class does not define (a Java method PyFlink code calls) raises ``NotImplementedError``
    with ``_missing(name)``'s message, which names the JVM; a private or dunder one raises
    ``AttributeError``, so that pickle, copy and ``hasattr`` see a plain object.

    >>> class Handle(_JvmStandIn):
    ...     def _missing(self, name: str) -> str:
    ...         return f"Handle.{name}: no JVM"
    >>> Handle().getFoo()
    Traceback (most recent call last):
    ...
    NotImplementedError: Handle.getFoo: no JVM
    >>> hasattr(Handle(), "__getstate_ex__")
    False
    """

    def _missing(self, name: str) -> str:
        """The message for ``name``, a Java member fs-compat does not offer."""
        return f"{type(self).__name__}.{name}: fs_compat runs without a JVM"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise NotImplementedError(self._missing(name))


class JavaObjectStandIn(_JvmStandIn):
    """Stands where PyFlink holds a py4j ``JavaObject`` (``env._j_stream_execution_environment``):
    ``attributes`` are what fs-compat offers there; any Java method raises
    ``NotImplementedError`` naming the JVM.

    >>> JavaObjectStandIn("StreamExecutionEnvironment").getStreamGraph(True)
    Traceback (most recent call last):
    ...
    NotImplementedError: StreamExecutionEnvironment (Java object).getStreamGraph: fs_compat runs ...
    """

    def __init__(self, java_class: str, **attributes: Any) -> None:
        self._java_class = java_class
        self.__dict__.update(attributes)

    def _missing(self, name: str) -> str:
        return (
            f"{self._java_class} (Java object).{name}: fs_compat runs without a JVM (no Java job "
            "graph, no Java methods); see migration_guide/pyflink.md for what replaces it"
        )


def launch_gateway() -> NoReturn:
    """PyFlink starts its JVM here; there is none to start."""
    get_gateway()


__all__ = ["JavaObjectStandIn", "get_gateway", "launch_gateway"]
