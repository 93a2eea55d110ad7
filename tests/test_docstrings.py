"""Every public class, function and method of the PyFlink and Bytewax mirrors has a docstring.

The modules are listed explicitly: they are what users port to. A method counts when the class
(or a base class of the package) defines it, so an override documented by its base passes, and
methods a class only inherits from Python (``Enum``, ``Iterator`` ...) are not asked about.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator

import pytest

MODULES = [
    # The PyFlink mirror.
    "fs_compat.datastream",
    "fs_compat.datastream.data_stream",
    "fs_compat.datastream.functions",
    "fs_compat.datastream.output_tag",
    "fs_compat.datastream.state",
    "fs_compat.datastream.stream_execution_environment",
    "fs_compat.datastream.timerservice",
    "fs_compat.datastream.window",
    "fs_compat.datastream.slot_sharing_group",
    "fs_compat.datastream.checkpoint_config",
    "fs_compat.datastream.checkpoint_storage",
    "fs_compat.datastream.state_backend",
    "fs_compat.datastream.connectors",
    "fs_compat.datastream.connectors.file_system",
    "fs_compat.datastream.connectors.kafka",
    "fs_compat.datastream.connectors.number_seq",
    "fs_compat.datastream.formats.csv",
    "fs_compat.datastream.formats.json",
    "fs_compat.common.serialization",
    "fs_compat.common",
    "fs_compat.common.configuration",
    "fs_compat.common.time",
    "fs_compat.common.typeinfo",
    "fs_compat.common.types",
    "fs_compat.common.watermark_strategy",
    "fs_compat.common.restart_strategy",
    "fs_compat.datastream.checkpointing_mode",
    "fs_compat.datastream.execution_mode",
    "fs_compat.datastream.externalized_checkpoint_retention",
    "fs_compat.datastream.time_characteristic",
    "fs_compat.datastream.tests.test_util",
    # The Bytewax mirror.
    "fs_compat.bytewax.dataflow",
    "fs_compat.bytewax.inputs",
    "fs_compat.bytewax.operators",
    "fs_compat.bytewax.operators.windowing",
    "fs_compat.bytewax.outputs",
    "fs_compat.bytewax.testing",
    "fs_compat.bytewax.recovery",
    "fs_compat.bytewax.errors",
    "fs_compat.bytewax.run",
    "fs_compat.bytewax.tracing",
    "fs_compat.bytewax.visualize",
    "fs_compat.bytewax.connectors.demo",
    "fs_compat.bytewax.connectors.files",
    "fs_compat.bytewax.connectors.stdio",
    "fs_compat.bytewax.connectors.kafka",
    "fs_compat.bytewax.connectors.kafka.operators",
    "fs_compat.bytewax.spark",
]

_OURS = ("fs_compat", "fs_api", "fs_api_advanced")
#: The state and timer-service classes the mirrors re-export from the engine-neutral runtime.
_RUNTIME = "fs_compat.runtime"


def _ours(obj: object) -> bool:
    return getattr(obj, "__module__", "").split(".")[0] in _OURS


def _undocumented(module_name: str, *, runtime: bool) -> Iterator[str]:
    """The public names of ``module_name`` without a docstring: of the classes defined in
    ``fs_compat.runtime`` when ``runtime``, else of the others."""
    module = importlib.import_module(module_name)
    for name in module.__all__:
        value = getattr(module, name)
        if not _ours(value) or getattr(value, "__module__", "").startswith(_RUNTIME) != runtime:
            continue
        if inspect.isfunction(value):
            if not inspect.getdoc(value):
                yield name
        elif inspect.isclass(value):
            if not inspect.getdoc(value):
                yield name
            for attr, member in vars(value).items():
                if attr.startswith("_"):
                    continue
                func = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
                if isinstance(func, property):
                    func = func.fget
                # Methods written in the class body (not, e.g., a dataclass field's default).
                if not inspect.isfunction(func) or func.__qualname__ != f"{value.__qualname__}.{attr}":
                    continue
                # inspect.getdoc also finds the docstring of the method this one overrides.
                if not inspect.getdoc(getattr(value, attr)):
                    yield f"{name}.{attr}"


def test_modules_are_listed() -> None:
    assert len(MODULES) >= 10
    for name in MODULES:
        assert importlib.import_module(name).__all__, name


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_method_has_a_docstring(module_name: str) -> None:
    missing = sorted(set(_undocumented(module_name, runtime=False)))
    assert not missing, f"{module_name}: no docstring on {missing}"


@pytest.mark.parametrize("module_name", ["fs_compat.datastream.state", "fs_compat.datastream.timerservice"])
def test_runtime_classes_of_the_mirror_have_docstrings(module_name: str) -> None:
    missing = sorted(set(_undocumented(module_name, runtime=True)))
    assert not missing, f"{module_name}: no docstring on {missing}"
