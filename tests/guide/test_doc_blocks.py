"""Every fenced code block of README.md and migration_guide/*.md runs as written.

What a page's author writes, by the block's language (the word after the opening fence):

- ``python``: runs, each block on its own (a fresh namespace, a temporary working directory), as
  a user runs it: PyFlink jobs and Bytewax flows in-process (the suite's ``FS_COMPAT_TARGET=local``;
  the default target, Spark, is tested by the examples of ``test_guide_examples.py``). A block that
  imports ``pyspark`` or ``fs_compat.spark`` gets its session itself (``spark_session()``): it runs
  on Spark, on the suite's session (marked ``spark``: also over Spark Connect), with
  ``FS_COMPAT_TARGET`` unset. Comment lines (``# ...``) that end a block right after a
  ``print(...)`` line show what it prints: the block's last lines of output.
- A PyFlink or Bytewax original cannot run here (neither is installed). It is marked
  ``<!-- before: NAME -->`` on the line above its fence, and its port ``<!-- after: NAME -->``: the
  port must be exactly what ``fs-compat migrate`` makes of the original (only the imports
  differ), and the port runs. A ``text`` block marked ``<!-- output: NAME -->`` right after the
  port is what the port prints (in README.md; in migration_guide/ that marker documents the
  examples' outputs, ``test_guide_examples.py``).
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
from collections.abc import Iterator
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


@contextlib.contextmanager
def _spark_as_a_user_has_it(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The suite's session is the active one (a block's ``getOrCreate()`` finds it), and jobs
    run on the default target, Spark."""
    from fs_compat.spark import spark_session

    spark_session()
    monkeypatch.delenv("FS_COMPAT_TARGET", raising=False)
    yield


@pytest.mark.parametrize(
    "block", _params([b for b in BLOCKS if b.lang in RUN and (b.mark is None or b.mark[0] != "before")])
)
def test_python_block_runs(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # Line numbers in tracebacks are the page's.
    code = compile("\n" * block.line + block.code, f"{REPO / block.page}", "exec")
    out = io.StringIO()
    with contextlib.ExitStack() as stack:
        if block.spark:
            stack.enter_context(_spark_as_a_user_has_it(monkeypatch))
        stack.enter_context(contextlib.redirect_stdout(out))
        exec(code, {"__name__": "__main__"})
    shown = _shown_output(block.code)
    if shown is not None:
        assert out.getvalue().splitlines()[-len(shown) :] == shown, f"{block.id} prints something else"
    outputs = _marked("output")
    if block.mark is not None and block.mark[0] == "after" and block.page == "README.md":
        expected = outputs.get(block.mark[1])
        assert expected is not None, f"{block.id}: README's ports show what they print (<!-- output: ... -->)"
        assert out.getvalue() == expected.code


@pytest.mark.parametrize("block", _params([b for b in BLOCKS if b.lang in SHELL]))
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
