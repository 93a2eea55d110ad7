"""The three packages: flat public APIs with sorted, complete ``__all__``, py.typed. (Docstring
examples run as pytest doctests: ``--doctest-modules`` and the root ``conftest.py``.)"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

PACKAGES = ["fs_api", "fs_api_advanced", "fs_compat"]


def _public_modules() -> list[str]:
    """Every module of the three packages whose ``__all__`` is its public surface."""
    names = []
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        names.append(pkg_name)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg_name}."):
            last = info.name.rsplit(".", 1)[-1]
            if last.startswith("_"):
                continue
            if hasattr(importlib.import_module(info.name), "__all__"):
                names.append(info.name)
    return names


@pytest.mark.parametrize("name", _public_modules())
def test_all_is_sorted_and_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported), f"{name}.__all__ is not sorted"
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"
    for attr in exported:
        assert hasattr(module, attr), f"{name}.__all__ names missing {attr}"
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and not isinstance(value, ModuleType)
        and attr not in {"annotations"}
        and (inspect.isclass(value) or inspect.isfunction(value) or not callable(value))
        and getattr(value, "__module__", name).split(".")[0] in PACKAGES
    }
    missing = public - set(exported)
    assert not missing, f"{name} exposes {sorted(missing)} without listing them in __all__"


@pytest.mark.parametrize("pkg_name", PACKAGES)
def test_packages_ship_py_typed(pkg_name: str) -> None:
    pkg = importlib.import_module(pkg_name)
    assert pkg.__file__ is not None
    assert (Path(pkg.__file__).parent / "py.typed").is_file()
