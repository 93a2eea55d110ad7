"""The migration guide's examples (``migration_guide/examples/``) are what the guide says they are.

Each example is a pair: an original program (``NAME_pyflink.py`` or ``NAME_bytewax.py``) and its
port (``NAME_fscompat.py``), which must be exactly what ``fs-compat migrate`` makes of the
original. Each port's output is documented in the guide, in a fenced ``text`` block right after an
``<!-- output: NAME -->`` marker, and running the port as a script (``python NAME_fscompat.py``)
must print exactly that. The ports run in child processes, as users run them: with
``FS_COMPAT_TARGET`` unset, so PyFlink jobs run on Spark (the default target), each in its own
embedded Spark session. A Bytewax ``run_main`` runs in-process unless ``FS_COMPAT_TARGET=spark``,
so the Bytewax ports run both ways.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fs_compat.cli._migrate import migrate_source

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "migration_guide"
EXAMPLES = GUIDE / "examples"
#: The guide pages that document examples' outputs.
PAGES = ("README.md", "pyflink.md", "bytewax.md")
#: Original framework -> the suffix of its programs.
ORIGINALS = ("pyflink", "bytewax")
#: Seconds a port may take, Spark session start included. Generous: the machine may be loaded;
#: an idle one needs about ten.
RUN_TIMEOUT_S = 600

_OUTPUT_BLOCK = re.compile(r"<!-- output: (?P<name>[a-z0-9_]+) -->\n```text\n(?P<text>.*?)```\n", re.DOTALL)


def _ports() -> list[str]:
    return sorted(p.name.removesuffix("_fscompat.py") for p in EXAMPLES.glob("*_fscompat.py"))


def _original(name: str) -> Path:
    """The one original program of example ``name``."""
    found = [p for fw in ORIGINALS if (p := EXAMPLES / f"{name}_{fw}.py").exists()]
    assert len(found) == 1, f"example {name!r}: expected one original (_pyflink.py, _bytewax.py): {found}"
    return found[0]


def _documented_outputs() -> dict[str, list[tuple[str, str]]]:
    """Example name -> (page, documented output) for every output block of the guide."""
    outputs: dict[str, list[tuple[str, str]]] = {}
    for page in PAGES:
        for match in _OUTPUT_BLOCK.finditer((GUIDE / page).read_text(encoding="utf-8")):
            outputs.setdefault(match["name"], []).append((page, match["text"]))
    return outputs


def _documented_output(name: str) -> str:
    found = _documented_outputs().get(name, [])
    assert len(found) == 1, f"example {name!r}: expected one documented output, found {len(found)}"
    return found[0][1]


def _run(script: Path, target: str | None) -> str:
    """Run ``python script`` from the repository root with ``FS_COMPAT_TARGET=target`` (unset when
    None) and return its stdout; fails with the tail of stderr when it exits non-zero."""
    env = {k: v for k, v in os.environ.items() if k != "FS_COMPAT_TARGET"}
    if target is not None:
        env["FS_COMPAT_TARGET"] = target
    # A session of its own, so that a run that times out is killed with its JVM.
    child = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = child.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        pytest.fail(f"{script.name} (FS_COMPAT_TARGET={target}) did not finish within {RUN_TIMEOUT_S} s")
    assert child.returncode == 0, (
        f"{script.name} (FS_COMPAT_TARGET={target}) exited with {child.returncode}; "
        f"stderr ends:\n{err[-3000:]}"
    )
    return out


def test_the_guide_documents_the_output_of_every_example_once() -> None:
    ports = _ports()
    assert len(ports) >= 6, f"expected at least the six examples of issue 6, found {ports}"
    outputs = _documented_outputs()
    assert sorted(outputs) == ports, "documented outputs and examples differ"
    assert {name: len(found) for name, found in outputs.items()} == dict.fromkeys(ports, 1)
    for name, [(page, text)] in outputs.items():
        assert text.strip(), f"{page}: the documented output of {name!r} is empty"


def test_every_original_has_a_port() -> None:
    for fw in ORIGINALS:
        for original in EXAMPLES.glob(f"*_{fw}.py"):
            port = EXAMPLES / f"{original.name.removesuffix(f'_{fw}.py')}_fscompat.py"
            assert port.exists(), f"{original.name} has no port {port.name}"


def test_the_fraud_detection_example_is_the_flagship_demos_job() -> None:
    # A copy, so that the example runs next to its data like any other; the two must not drift.
    demo = REPO / "fs_compat" / "demo"
    for example, original in [
        ("fraud_detection_fscompat.py", "fraud_detection.py"),
        ("transactions.csv", "transactions.csv"),
    ]:
        assert (EXAMPLES / example).read_bytes() == (demo / original).read_bytes(), (
            f"migration_guide/examples/{example} differs from fs_compat/demo/{original}"
        )


@pytest.mark.parametrize("name", _ports())
def test_the_port_is_what_the_codemod_makes_of_the_original(name: str) -> None:
    original = _original(name)
    result = migrate_source(original.read_text(encoding="utf-8"), str(original))
    assert result.findings == ()
    assert result.changed
    assert result.code == (EXAMPLES / f"{name}_fscompat.py").read_text(encoding="utf-8")


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("name", _ports())
@pytest.mark.classic_only  # Connect slice: README
def test_the_port_prints_the_documented_output(name: str) -> None:
    expected = _documented_output(name)
    port = EXAMPLES / f"{name}_fscompat.py"
    # As a user runs it: PyFlink jobs on Spark (the default target), Bytewax flows in-process.
    assert _run(port, None) == expected
    if _original(name).name.endswith("_bytewax.py"):
        # And a Bytewax flow on Spark.
        assert _run(port, "spark") == expected
