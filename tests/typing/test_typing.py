"""Static typing of the public state API, checked with ``mypy --strict``.

``pass/`` holds user code that must type-check cleanly (with ``typing.assert_type`` pinning the
inferred types) and must also run. ``fail/`` holds user mistakes; every line that mypy must reject
carries ``# E: <message>  [<code>]`` (several on one line when mypy reports several), and the
errors mypy reports must equal those annotations exactly: a missing or an extra error fails.
Notes (``note:`` lines) are not compared.
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest
from mypy import api as mypy_api

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PASS_FILES = sorted((HERE / "pass").glob("*.py"))
FAIL_FILES = sorted((HERE / "fail").glob("*.py"))

_ERROR_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): error: (?P<message>.*)$")
_ANNOTATION = re.compile(r"#\s*E:\s*(.+?)\s*(?=#\s*E:|$)")

Error = tuple[Path, int, str]


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for both mypy runs, so the second one reuses the stdlib and package analysis."""
    return tmp_path_factory.mktemp("mypy-cache")


def run_mypy(files: list[Path], cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    # The package is installed in editable mode through an import hook, which mypy cannot
    # follow; point it at the source tree instead.
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MYPYPATH", str(ROOT))
    stdout, stderr, status = mypy_api.run(
        [
            "--strict",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(cache_dir),
            "--show-absolute-path",
            "--show-error-codes",
            "--no-pretty",
            "--no-color-output",
            "--no-error-summary",
            "--hide-error-context",
            *map(str, files),
        ]
    )
    assert not stderr, f"mypy wrote to stderr:\n{stderr}"
    return stdout, status


def reported_errors(stdout: str) -> set[Error]:
    errors = set()
    for line in stdout.splitlines():
        m = _ERROR_LINE.match(line)
        if m:
            errors.add((Path(m["path"]).resolve(), int(m["line"]), m["message"].strip()))
    return errors


def expected_errors(path: Path) -> set[Error]:
    errors = set()
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        for message in _ANNOTATION.findall(line):
            errors.add((path.resolve(), lineno, message.strip()))
    return errors


def test_annotation_parser_reads_several_errors_on_one_line(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('x = 1\ny: str = f(1)  # E: first  [a]  # E: Name "f" is not defined  [name-defined]\n')
    assert expected_errors(sample) == {
        (sample.resolve(), 2, "first  [a]"),
        (sample.resolve(), 2, 'Name "f" is not defined  [name-defined]'),
    }
    out = f'{sample}:2: error: Name "f" is not defined  [name-defined]\n{sample}:2: note: ignored\n'
    assert reported_errors(out) == {(sample.resolve(), 2, 'Name "f" is not defined  [name-defined]')}


def test_cases_are_present() -> None:
    assert len(PASS_FILES) >= 4
    assert len(FAIL_FILES) >= 4
    assert not any(p.name.startswith("test_") for p in PASS_FILES + FAIL_FILES)
    for path in FAIL_FILES:
        assert expected_errors(path), f"{path.name} has no '# E:' annotation"
    assert sum(len(expected_errors(p)) for p in FAIL_FILES) >= 5


def test_user_code_type_checks_under_strict(mypy_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stdout, status = run_mypy(PASS_FILES, mypy_cache, monkeypatch)
    assert reported_errors(stdout) == set(), stdout
    assert status == 0, stdout


def test_user_mistakes_are_reported_exactly(mypy_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stdout, status = run_mypy(FAIL_FILES, mypy_cache, monkeypatch)
    assert status == 1, stdout
    expected = set().union(*(expected_errors(p) for p in FAIL_FILES))
    reported = reported_errors(stdout)
    missing = sorted(expected - reported)
    unexpected = sorted(reported - expected)
    assert not missing and not unexpected, (
        "mypy errors differ from the '# E:' annotations\n"
        + "".join(f"  missing    {p.name}:{n}: {m}\n" for p, n, m in missing)
        + "".join(f"  unexpected {p.name}:{n}: {m}\n" for p, n, m in unexpected)
    )


@pytest.mark.parametrize("path", PASS_FILES, ids=lambda p: p.stem)
def test_user_code_runs(path: Path) -> None:
    """The type-checked examples are real code: they run and their own asserts hold."""
    runpy.run_path(str(path), run_name="__main__")
