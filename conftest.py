"""Docstring examples of the three packages run as tests (``--doctest-modules`` in pyproject.toml).

They run in-process, whatever ``FS_COMPAT_TARGET`` the suite runs with: an example that builds a
job shows what it computes, quickly, not where it runs. Only the packages' modules are searched
for examples; the test tree is code, not documentation (and its ``tests/typing/fail`` snippets
are mistakes on purpose).
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest
from _pytest.doctest import DoctestItem, DoctestModule

ROOT = Path(__file__).resolve().parent
PACKAGES = ("fs_api", "fs_api_advanced", "fs_compat")


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(
    file_path: Path, parent: pytest.Collector
) -> Generator[None, list[pytest.Collector], list[pytest.Collector]]:
    collected = yield
    path = file_path.resolve()
    if path.is_relative_to(ROOT) and path.relative_to(ROOT).parts[0] in PACKAGES:
        return collected
    return [c for c in collected if not isinstance(c, DoctestModule)]


@pytest.fixture(autouse=True)
def _doctests_run_in_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if isinstance(request.node, DoctestItem):
        monkeypatch.setenv("FS_COMPAT_TARGET", "local")
