"""Every fenced code block of README.md and migration_guide/*.md runs as written.

What a page's author writes, by the block's language (the word after the opening fence):

- ``python``: runs, each block on its own (a fresh namespace, a temporary working directory), as
  a user runs it: PyFlink jobs and Bytewax flows in-process (the suite's ``FS_COMPAT_TARGET=local``;
  the default target, Spark, is tested by the examples of ``test_guide_examples.py``). A block that
  imports ``pyspark`` or ``fs_compat.spark`` gets its session itself (``spark_session()``): it runs
  on Spark, on the suite's session (marked ``spark``: also over Spark Connect), with
  ``FS_COMPAT_TARGET`` unset. Such a block reads and writes under a folder of its own
  (``tempfile.mkdtemp()``): Spark resolves a relative path against its JVM's working directory (a
  Connect server's, or wherever the session started), not the block's. Comment lines (``# ...``)
  that end a block right after a ``print(...)`` line show what it prints: its last lines of output.
- A PyFlink or Bytewax original cannot run here (neither is installed). It is marked
  ``<!-- before: NAME -->`` on the line above its fence, and its port ``<!-- after: NAME -->``: the
  port must be exactly what ``fs-compat migrate`` makes of the original (only the imports
  differ), and the port runs. A ``text`` block marked ``<!-- output: NAME -->`` right after the
  port is what the port prints (in README.md; in migration_guide/ that marker documents the
  examples' outputs, ``test_guide_examples.py``); README.md's ports print it on Spark too.
- ``sh``, ``bash``, ``shell``: run with ``bash -e`` from the repository root, with this
  interpreter's ``python`` and ``fs-compat`` first on ``PATH`` and ``FS_COMPAT_TARGET`` unset
  (marked ``spark``: such blocks run jobs on Spark in child processes).
- ``text``, ``console``: not run. Output, and commands the suite cannot run: ``make test`` itself,
  a job over a remote server (``--remote sc://host:15002``).

A fence without a language fails: say which of these it is.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from fs_compat.cli._migrate import migrate_source

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "migration_guide").glob("*.md"))]
RUN = ("python",)
SHELL = ("sh", "bash", "shell")
NOT_RUN = ("text", "console")
SHELL_TIMEOUT_S = 900

_FENCE = re.compile(r"^```(?P<lang>[^\n`]*)\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL)
_MARK = re.compile(r"<!-- (?P<kind>before|after|output): (?P<name>[a-z0-9_]+) -->\n$")


@attrs.frozen
class Block:
    page: str
    line: int
    lang: str
    code: str
    mark: tuple[str, str] | None  # (before|after|output, name)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def spark(self) -> bool:
        return (
            self.lang in SHELL
            or re.search(r"^\s*(from|import) (pyspark|fs_compat\.spark)\b", self.code, re.M) is not None
        )


def _blocks() -> list[Block]:
    blocks = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for fence in _FENCE.finditer(text):
            before = text[: fence.start()]
            mark = _MARK.search(before[-80:])
            blocks.append(
                Block(
                    page=page.relative_to(REPO).as_posix(),
                    line=before.count("\n") + 1,
                    lang=fence["lang"].strip(),
                    code=fence["code"],
                    mark=(mark["kind"], mark["name"]) if mark else None,
                )
            )
    return blocks


BLOCKS = _blocks()


def _marked(kind: str) -> dict[str, Block]:
    found: dict[str, Block] = {}
    for block in BLOCKS:
        if block.mark is not None and block.mark[0] == kind:
            assert block.mark[1] not in found, f"{block.id}: a second <!-- {kind}: {block.mark[1]} -->"
            found[block.mark[1]] = block
    return found


def _params(blocks: list[Block]) -> list[object]:
    return [
        pytest.param(b, id=b.id, marks=[pytest.mark.spark, pytest.mark.slow] if b.spark else [])
        for b in blocks
    ]


def test_every_block_says_what_it_is() -> None:
    assert len(BLOCKS) >= 30, [b.id for b in BLOCKS]
    unknown = [b.id for b in BLOCKS if b.lang not in RUN + SHELL + NOT_RUN]
    assert unknown == [], f"fences without a known language (python, sh, text, console, ...): {unknown}"


def test_every_original_has_its_port_and_ports_only_by_imports() -> None:
    befores, afters = _marked("before"), _marked("after")
    assert sorted(befores) == sorted(afters)
    assert {"pyflink_job", "bytewax_flow"} <= set(befores), (
        "README.md opens with a PyFlink job and a Bytewax flow"
    )
    for name, before in befores.items():
        result = migrate_source(before.code, before.id)
        assert result.findings == (), f"{before.id}: uses of unsupported APIs: {result.findings}"
        assert result.changed, f"{before.id}: no pyflink. or bytewax. import to rewrite"
        assert result.code == afters[name].code, (
            f"{afters[name].id} is not fs-compat migrate's port of {before.id}"
        )


def _shown_output(code: str) -> list[str] | None:
    """The comment lines that end ``code`` right after a ``print(...)`` line, without ``# ``."""
    lines = code.rstrip("\n").splitlines()
    shown: list[str] = []
    while lines and lines[-1].startswith("# "):
        shown.insert(0, lines.pop()[2:])
    return shown if shown and lines and lines[-1].startswith("print(") else None


def _run(block: Block, monkeypatch: pytest.MonkeyPatch, target: str | None) -> str:
    """Run the python ``block`` in a fresh namespace with ``FS_COMPAT_TARGET=target`` (None:
    unset, the default target); a Spark block gets the suite's session as the active one (its
    ``spark_session()`` finds it). Returns what it printed."""
    if block.spark or target != "local":
        from fs_compat.spark import spark_session

        spark_session()
    if target is None:
        monkeypatch.delenv("FS_COMPAT_TARGET", raising=False)
    else:
        monkeypatch.setenv("FS_COMPAT_TARGET", target)
    # Line numbers in tracebacks are the page's.
    code = compile("\n" * block.line + block.code, f"{REPO / block.page}", "exec")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, {"__name__": "__main__"})
    return out.getvalue()


@pytest.mark.parametrize(
    "block", _params([b for b in BLOCKS if b.lang in RUN and (b.mark is None or b.mark[0] != "before")])
)
@pytest.mark.classic_only  # Connect slice: README
def test_python_block_runs(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    printed = _run(block, monkeypatch, None if block.spark else "local")
    shown = _shown_output(block.code)
    if shown is not None:
        assert printed.splitlines()[-len(shown) :] == shown, f"{block.id} prints something else"
    if block.mark is not None and block.mark[0] == "after" and block.page == "README.md":
        expected = _marked("output").get(block.mark[1])
        assert expected is not None, f"{block.id}: README's ports show what they print (<!-- output: ... -->)"
        assert printed == expected.code


def _readme_ports() -> list[Block]:
    return [b for name, b in _marked("after").items() if b.page == "README.md" and name in _marked("output")]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("block", _readme_ports(), ids=lambda b: b.id)
@pytest.mark.classic_only  # Connect slice: README
def test_readme_port_prints_the_same_on_spark(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's ports as a user runs them on Spark: the PyFlink job on the default target,
    the Bytewax flow with ``FS_COMPAT_TARGET=spark``."""
    assert block.mark is not None
    monkeypatch.chdir(tmp_path)
    assert _run(block, monkeypatch, "spark") == _marked("output")[block.mark[1]].code


@pytest.mark.parametrize("block", _params([b for b in BLOCKS if b.lang in SHELL]))
@pytest.mark.classic_only  # Connect slice: README
def test_shell_block_runs(block: Block) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FS_COMPAT_TARGET"}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = subprocess.run(
        ["bash", "-e", "-c", block.code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=SHELL_TIMEOUT_S,
    )
    assert done.returncode == 0, f"{block.id}: exit status {done.returncode}\n{done.stderr[-3000:]}"
